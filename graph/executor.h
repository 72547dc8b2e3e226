// The graph executor: a Plan is the pruned, placed and ordered subgraph that one
// (feeds, fetches, targets) signature needs; Plan::run executes it with the same kernels as
// eager execution. Sessions compile a Plan once per signature and cache it.
//
// Note [Executor]:
// - Order: node ids are a topological order (inputs are always older), so the plan is the
//   needed nodes sorted by id; no sort is needed.
// - Memory: each output gets a slot; a slot is released after its last consumer, and an
//   elementwise op writes into an input buffer that nothing else holds (same dtype and size).
// - Parallelism: when the plan has independent kernels and more than one inter-op thread,
//   ready nodes run concurrently (pending-input counts, a work queue); otherwise in order on
//   the caller's thread.
// - Variables: reads and updates go through a per-run overlay that is committed only when the
//   whole run succeeds, so a failed run leaves every variable as it was.
// - Placement: graph/placer.h (Note [Placement rules]) gives each needed node its device.
//
// Note [Partitions]: a plan is one partition per device it uses. Each edge whose producer and
// consumer are on different devices becomes a kSend step on the producer's device and a kRecv
// step on the consumer's, once per (tensor, consumer device); the consumers read the kRecv's
// slot. The pair meets in the run's Rendezvous (graph/rendezvous.h) under TensorFlow's key
// "src_device;incarnation;dst_device;tensor_name;0:0"; the _Recv copies the tensor onto its
// device. Steps stay in one topological order (a _Send and its _Recv come right before the
// first consumer), so a sequential run (one inter-op thread) is correct as is. In a parallel
// run a _Recv waits for its _Send through the rendezvous (an asynchronous receive, never a
// blocked thread), and each step is scheduled on its own device's inter-op pool (the Session
// has one per device), under its device's intra-op pool (devices/cpu/intra_op_pool.h): the
// partitions run concurrently. A failed step aborts the rendezvous, so waiting receives end.
// Fed tensors and variable values from another device are copied by the consuming step;
// control edges across devices order the steps directly (the gRPC worker will need an empty
// _Send/_Recv pair for them, as TensorFlow sends).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "devices/device.h"
#include "devices/kernel_registry.h"
#include "graph/graph.h"
#include "graph/session_types.h"

namespace tapeflow {

// Per-Session variable values (graph-created variables) and random-op counters.
struct SessionState {
  std::mutex mu;
  absl::flat_hash_map<int64_t, Tensor> variables;    // Variable::id() -> value
  absl::flat_hash_map<int, uint64_t> random_counts;  // random node -> runs so far
  // The state of each function body this Session's If / While / Case nodes run (its random
  // counters: a body's node ids are its own graph's), by FunctionBody; made on first use.
  absl::flat_hash_map<const void*, std::unique_ptr<SessionState>> bodies;
  SessionState& body_state(const void* body) {
    std::lock_guard<std::mutex> lock(mu);
    std::unique_ptr<SessionState>& s = bodies[body];
    if (!s) s = std::make_unique<SessionState>();
    return *s;
  }
};

class InterOpPool;
struct IntraOpPool;

// Note [MatMul update] (graph/matmul_update_fusion.cc): an AssignAdd / AssignSub step that runs
// the MatMul and the Mul by a scalar feeding it as one MatMulUpdate kernel.
struct FusedMatMulUpdate {
  int product = -1;      // the MatMul step
  int scaling = -1;      // the Mul step
  int scale_input = -1;  // the Mul step's scalar input (0 or 1)
  KernelFn kernel = nullptr;
  AttrMap attrs;         // transpose_a, transpose_b, subtract
  // Run in place on the variable's storage after every other step succeeded (Note [MatMul
  // update]); the step itself then does nothing.
  bool at_commit = false;
};

// Note [Bias and activation epilogue] (graph/bias_activation_fusion.cc): the last step of
// Conv2D / DepthwiseConv2dNative / MatMul -> bias add [-> Relu | Relu6 | Elu | LeakyRelu] runs
// the product, then adds the bias and applies the activation in place, in one pass over it.
struct FusedBiasActivation {
  int head = -1;        // the Conv2D / MatMul step
  int add = -1;         // the bias add step
  int bias_input = -1;  // the add step's bias input (0 or 1)
  KernelFn kernel = nullptr;
  AttrMap attrs;        // activation: "", "Relu", "Relu6", "Elu" or "LeakyRelu" (and its alpha)
};

// Note [Atomic variable updates]: a run's writes to one variable, kept until the whole run
// succeeds. `value` is what the run's later reads see. At the commit, under SessionState::mu,
// an entry that assigned installs `value`; one that only added or subtracted installs `value`
// when the committed value is still `base` (no other run committed since this one read it) and
// otherwise re-applies its deltas to the committed value. So each assign_add / assign_sub is
// atomic, as TensorFlow's resource variables' updates are (concurrent runs lose no update), and
// a failed run still changes no variable. A fused MatMul update has no delta tensor of its own:
// on a conflict it is re-applied as (value - base), equal up to rounding.
struct PendingWrite {
  explicit PendingWrite(Variable v) : variable(std::move(v)) {}
  Variable variable;
  Tensor value;
  Tensor base;            // the committed value the first update read; empty once assigned
  bool assigned = false;  // the run assigned a whole value: the commit installs it as is
  std::vector<std::pair<bool, Tensor>> deltas;  // (subtract?, delta) applied since `base`
  bool deltas_exact = true;  // false when an update folded in without its delta (MatMul update)
};
using VariableOverlay = absl::flat_hash_map<int64_t, PendingWrite>;

// Records an update of `variable` computed from `current` (the run's view of it) into `overlay`.
// delta is null for a fused update (deltas_exact becomes false).
void record_variable_update(VariableOverlay& overlay, const Variable& variable, const Tensor& current,
                            const Tensor& next, bool subtract, const Tensor* delta);
// Installs a successful run's writes (Note [Atomic variable updates]). Graph variables' under
// state.mu; eager variables' through Variable::compare_and_set, re-applied when another writer won.
void commit_variable_writes(VariableOverlay& overlay, SessionState& state);

// Note [Functional control flow] (graph/functional_ops.h): the plans of a functional node's
// bodies, compiled with the node's plan (graph/functional_run.cc).
struct FunctionalPlans;
std::shared_ptr<const FunctionalPlans> compile_functional(const Node& node, const SessionOptions& options,
                                                          const std::vector<Device*>& devices, std::source_location loc);
// Runs the node on its inputs; `deadline` ends a While (DeadlineExceededError) when set, in
// this run and in the bodies' own runs.
std::vector<Tensor> run_functional(const FunctionalPlans& plans, const Node& node, std::vector<Tensor> inputs,
                                   SessionState& state, const RunOptions* options,
                                   std::optional<std::chrono::steady_clock::time_point> deadline);

struct PlanStep {
  enum class Kind : uint8_t {
    kKernel, kView, kConst, kNoOp, kPrint, kAssert, kRead, kAssign, kAssignAdd, kAssignSub,
    kSend, kRecv,  // Note [Partitions]
    kFunctional    // If, While, Case: Note [Functional control flow] (graph/functional_ops.h)
  };
  const Node* node = nullptr;  // kSend / kRecv: a node of the plan's own (id -1)
  Kind kind = Kind::kKernel;
  Device* device = nullptr;
  int lane = 0;                      // the device's position in the Session's device list
  IntraOpPool* intra_pool = nullptr;  // the device's own intra-op pool (null: the process-wide one)
  int transfer = -1;                 // kSend / kRecv: index into the plan's transfers
  KernelFn kernel = nullptr;
  bool static_shapes = false;  // outputs' shapes known at plan time
  bool random = false;         // a random op: its seeds advance per run
  bool reuse_input = false;    // elementwise: may write into a dying input buffer
  absl::InlinedVector<int, 3> inputs;  // slots; -1 where direct_inputs has the tensor
  // Kernel inputs read straight from a constant's value (no slot, no per-run copy).
  absl::InlinedVector<const DeviceTensor*, 3> direct_inputs;
  int first_output = 0;                 // slots first_output .. first_output + num_outputs - 1
  int num_outputs = 0;
  absl::InlinedVector<int, 2> release;  // slots whose last use is this step
  // Note [Fusion]: a chain of large elementwise steps runs as one pass over cache-sized tiles;
  // the chain's last step holds the members (in order, itself last); the others are skipped.
  // A variable update that folds in its MatMul and Mul (Note [MatMul update]) lists them too.
  std::vector<int> fused;
  std::shared_ptr<const FusedMatMulUpdate> matmul_update;
  std::shared_ptr<const FusedBiasActivation> bias_activation;
  std::shared_ptr<const FunctionalPlans> functional;  // kFunctional: its bodies' plans
  bool fused_away = false;
  int fused_into = -1;  // for a member: the chain's last step
  int64_t fused_inner = 1;  // elements of the trailing dims that broadcast inputs cover
  std::vector<int> successors;          // steps that wait for this one (parallel mode)
  int num_predecessors = 0;
};

struct PlanFetch {
  enum class Kind : uint8_t { kTensor, kOperation, kVariable };
  Kind kind = Kind::kTensor;
  int slot = -1;                     // kTensor
  std::optional<Variable> variable;  // kVariable
};

class Plan {
 public:
  struct FetchSpec {
    PlanFetch::Kind kind = PlanFetch::Kind::kTensor;
    TensorRef ref;                     // kTensor
    int node = -1;                     // kOperation
    std::optional<Variable> variable;  // kVariable
  };
  struct Request {
    std::vector<TensorRef> feeds;
    std::vector<FetchSpec> fetches;
    std::vector<int> targets;
  };

  // Prunes, places (on `devices`; null: session_devices(options)), partitions and orders.
  // Throws InvalidArgumentError for an unfed placeholder the run needs (naming it and its line)
  // and for a device that cannot be assigned (graph/placer.h, rule 6).
  static std::unique_ptr<Plan> compile(const Graph& graph, const Request& request, const SessionOptions& options,
                                       std::source_location loc, const std::vector<Device*>* devices = nullptr);

  // feeds: one value per request feed, already validated. Returns one tensor per fetch.
  // pools: the inter-op pool of each device (by lane; one may serve all, none runs steps in
  // order on this thread).
  std::vector<Tensor> run(const std::vector<Tensor>& feeds, SessionState& state, absl::Span<InterOpPool* const> pools,
                          const RunOptions* options, RunMetadata* metadata, std::source_location loc) const;

  int num_steps() const { return static_cast<int>(steps_.size()); }
  bool parallel() const { return parallel_; }
  const std::vector<PlanStep>& steps() const { return steps_; }

 private:
  struct RunContext;
  void run_step(const PlanStep& step, RunContext& rc) const;
  void run_fused(const PlanStep& step, RunContext& rc) const;
  void run_kernel(const PlanStep& step, RunContext& rc) const;
  void run_bias_activation(const PlanStep& step, RunContext& rc) const;
  // Appends the step's NodeExecStats (a traced run), timed from t0.
  void record_stats(const PlanStep& step, RunContext& rc, std::chrono::steady_clock::time_point t0) const;
  void fuse_elementwise_chains();
  void fuse_matmul_updates();
  void fuse_bias_activations();
  bool can_wait_for_commit(int update_step) const;
  // The variable's next value from its current one, for a step with a fused MatMul update.
  absl::StatusOr<Tensor> run_matmul_update(const PlanStep& step, const Tensor& current,
                                           const std::vector<DeviceTensor>& slots) const;
  // The updates left for the commit (at_commit), once every step has run; on failure returns the
  // error and sets *failed to its node (nothing is written then). With `nanos`, adds each
  // update's (step, duration) for the run's step statistics.
  absl::Status run_commit_updates(const std::vector<DeviceTensor>& slots, VariableOverlay& overlay,
                                  SessionState& state, const Node** failed,
                                  std::vector<std::pair<int, int64_t>>* nanos) const;
  void run_sequential(RunContext& rc) const;
  void run_parallel(RunContext& rc, absl::Span<InterOpPool* const> pools) const;
  // Adds the kSend / kRecv pair that moves `ref` (produced by step `src`) to `dst`; returns
  // the kRecv's slot.
  int add_transfer(const TensorRef& ref, int src, Device* dst, int dst_lane, int src_slot, int& slots);
  std::vector<PartitionGraph> partition_graphs() const;

  Graph graph_;
  std::vector<PlanStep> steps_;
  int num_slots_ = 0;
  std::vector<int> feed_slots_;      // per request feed; -1 when no step reads it
  std::vector<PlanFetch> fetches_;
  std::vector<int> slot_uses_;       // consumers per slot (parallel mode counts down from these)
  std::vector<bool> slot_pinned_;    // fetched or fed: never released or reused
  bool parallel_ = false;
  std::vector<int> roots_;           // steps with no predecessors
  // Const nodes whose values the kernels read directly (no step of their own): still listed in
  // the placement log, the partition graphs and the step statistics (at zero cost).
  std::vector<std::pair<const Node*, Device*>> direct_consts_;
  std::vector<int> commit_updates_;  // steps whose MatMul update runs at the commit
  // Note [Partitions]: the _Send/_Recv nodes (stable addresses) and each transfer's key.
  struct Transfer {
    std::string key;          // the rendezvous key
    std::string tensor_name;  // "a:0"
    Device* src = nullptr;
    Device* dst = nullptr;
  };
  std::deque<Node> transfer_nodes_;
  std::vector<Transfer> transfers_;
  bool device_pools_ = false;  // some step has an intra-op pool of its own
};

// A fixed set of threads that run a plan's ready steps (one pool per Session).
class InterOpPool {
 public:
  explicit InterOpPool(int threads);
  ~InterOpPool();
  int size() const { return static_cast<int>(threads_.size()); }
  void schedule(std::function<void()> fn);
  // Runs one queued task on the caller's thread; false when the queue is empty. A thread
  // waiting for a plan helps with it, so nested runs cannot starve the pool.
  bool try_run_one();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tapeflow
