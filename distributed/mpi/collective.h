// Collectives over MPI for data-parallel training: every process (rank) runs the same program
// on its share of each batch and averages its gradients with the others'.
//
//   int main(int argc, char** argv) {
//     tapeflow::mpi::Context mpi(&argc, &argv);        // MPI_Init_thread ... MPI_Finalize
//     ...build the model...
//     tapeflow::mpi::broadcast_variables(model.trainable_variables(), /*root=*/0);
//     for (...) {
//       std::vector<Tensor> grads = tape.gradient(loss, vars);
//       for (Tensor& g : grads) g = tapeflow::all_reduce(g, tapeflow::ReduceOp::kMean);
//       optimizer.apply_gradients(grads, vars);
//     }
//   }
//   $ mpirun -np 2 ./train                               # add --allow-run-as-root as root
//
// all_reduce is an ordinary op (Note [CollectiveReduce]): it runs eagerly, is recorded by a
// GradientTape, traces into graphs with function() and runs in a Session. broadcast and
// barrier are eager helpers (start-up, not per-step work).
//
// Every rank must issue the same collectives in the same order with the same dtypes and shapes
// (Note [Collective agreement] in mpi_state.cc: a disagreement is detected and reported as
// InvalidArgumentError on every rank instead of a hang or a silent mix-up). In a graph, each
// all_reduce node runs after the one made before it in the same graph (Note [Collective order
// in graphs] in collective_op.cc), so a Session runs them in program order on every rank.
//
// Thread-safety: MPI is initialised with MPI_THREAD_SERIALIZED; every MPI call tapeflow makes
// holds one process-wide mutex, so collectives may be called from any thread (a Session's
// executor threads too); eager collectives issued from several threads at once run in an order
// that may differ across ranks: order those yourself.
#pragma once

#include <source_location>
#include <vector>

#include "eager/tensor.h"
#include "eager/variable.h"

namespace tapeflow {

// How all_reduce combines the ranks' tensors. kMean is the sum divided by the group's size
// (floating dtypes only); kMin and kMax have no gradient.
enum class ReduceOp { kSum, kMean, kMin, kMax };

// A set of ranks that reduce together: the world (every process mpirun started), or a group
// made by mpi::new_group (torch.distributed.new_group). `key` is recorded on the op as
// TensorFlow's attribute group_key; 0 is the world, groups get 1, 2, ... in the order they are
// made (the same on every rank).
struct Group {
  int64_t key = 0;
  static Group world() { return Group{}; }
};

// The reduction of x over every rank of `group`; each rank gets the same result, of x's dtype
// and shape. Dtypes: float32, float64, int32, int64, uint8 (others: InvalidArgumentError).
// Only the group's members may call it: each gets the reduction over the members (the mean
// divides by the group's size); the other ranks do not take part.
// Errors, each naming all_reduce and the caller's line: FailedPreconditionError when MPI is not
// initialised (no mpi::Context alive) when the op runs; InvalidArgumentError when the ranks
// disagree on dtype, shape, op or instance (no rank hangs), for a group key no group has (when
// the op is made), and when this rank is not a member of the group (when it runs). In a graph the op is stateful: never
// constant-folded or merged with an identical call; it runs after the graph's previous one. instance_key tells apart collectives a
// graph may run in either order (TensorFlow's attribute of that name); ranks must agree on it.
Tensor all_reduce(const Tensor& x, ReduceOp op = ReduceOp::kSum, Group group = Group::world(),
                  int64_t instance_key = 0, std::source_location loc = std::source_location::current());

namespace mpi {

// Initialises MPI (MPI_Init_thread, MPI_THREAD_SERIALIZED) on construction, unless it already
// is, and finalises it when the last Context is destroyed, if it initialised it. Contexts nest
// (a count); MPI cannot start again once finalised: a Context made after that throws
// FailedPreconditionError. argc/argv may be null.
class Context {
 public:
  explicit Context(int* argc = nullptr, char*** argv = nullptr,
                   std::source_location loc = std::source_location::current());
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

// True between the first Context and the finalisation (or when something else initialised MPI).
bool initialized();
// This process's rank in the world and the world's size; FailedPreconditionError when MPI is not
// initialised.
int rank(std::source_location loc = std::source_location::current());
int size(std::source_location loc = std::source_location::current());
// Waits until every rank calls barrier.
void barrier(std::source_location loc = std::source_location::current());

// Makes a group of the given world ranks (any order; kept ascending), as
// torch.distributed.new_group: a collective of the whole world, so every rank calls it, member
// or not, with the same ranks, in the same order as its other collectives. Members then pass it
// to all_reduce and broadcast; others must not. Errors on every rank, nothing made:
// InvalidArgumentError for no ranks, a rank outside the world or a repeated rank, or when the
// ranks pass different lists; FailedPreconditionError without MPI. The group lives until MPI is
// finalised.
//
//   Group pair = mpi::new_group({0, 1});                  // on every rank
//   if (mpi::is_member(pair)) y = all_reduce(x, ReduceOp::kSum, pair);
Group new_group(const std::vector<int>& ranks, std::source_location loc = std::source_location::current());
// The world ranks of `group`, ascending, and whether this rank is one of them.
// InvalidArgumentError for a key no group has; FailedPreconditionError without MPI.
std::vector<int> group_ranks(Group group, std::source_location loc = std::source_location::current());
bool is_member(Group group, std::source_location loc = std::source_location::current());

// Rank `root`'s value of x, on every rank of `group` (x is read on each: same dtype and shape
// required, InvalidArgumentError otherwise). `root` is a world rank, a member of the group.
// Eager only (a symbolic x: InvalidArgumentError). A non-member calling it: InvalidArgumentError.
Tensor broadcast(const Tensor& x, int root = 0, Group group = Group::world(),
                 std::source_location loc = std::source_location::current());
// Assigns rank `root`'s value to each variable on every rank of `group`, so processes start
// identical.
void broadcast_variables(const std::vector<Variable>& variables, int root = 0, Group group = Group::world(),
                         std::source_location loc = std::source_location::current());

// Registers the CollectiveReduce op, its CPU kernels and its gradient with tapeflow's
// registries. Idempotent and thread-safe; called when libtapeflow_mpi loads and by all_reduce.
void register_collective_ops();

}  // namespace mpi
}  // namespace tapeflow
