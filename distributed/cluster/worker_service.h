// The worker: what a task does for the cluster's masters, as pure functions of the request
// messages (distributed/cluster/cluster.proto), so tests and the fuzzer drive it without sockets;
// server.cc is the gRPC edge that calls it.
//
// Note [Cluster protocol]
// - A master registers one partition (a GraphDef) per task and graph version
//   (RegisterGraph -> a handle); the worker imports it into a Graph of its own with a local
//   Session, and drops it at DeregisterGraph (a Session's close) or when the process ends.
// - A step runs in rounds (Note [Rounds] in distributed/cluster/master.h): each RunGraph runs
//   one part of the partition with feeds (sent by the client, or pulled first from a task's
//   step table with RecvTensor), fetches (returned) and kept tensors (left in this task's step
//   table under (step_id, "node:index") for later rounds and other tasks). CleanupStep drops a
//   step's table; a table left behind (its master died) is dropped after kStepTtl.
// - Note [Resource container]: variables live in the worker, not in a graph, keyed by their
//   VarHandleOp's container attr (TensorFlow's; "" is the default container, tf.container /
//   tapeflow::container set another) and shared name. Each run copies the values of its
//   graph's variables in and the new values out under the containers' lock, so graphs
//   registered by different clients (between-graph replication) share the ps's variables, each
//   run's updates are atomic, and the values outlive a client's Session. Reset clears the
//   containers it names (all when it names none, as TensorFlow's Session.reset(containers=None));
//   a graph's next run then starts from a fresh Session that gets back only the values still
//   held. Runs of graphs with variables are serialised per task; that is the price of this
//   simple scheme (the ps does little work per run).
// - Bad requests (unknown handles, names, malformed tensors, a GraphDef that does not import)
//   are answered with a status, never a crash; sizes are checked before allocation.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/cluster/cluster.pb.h"
#include "eager/tensor.h"

namespace tapeflow::cluster {

// Pulls tensor `key` of step `step_id` from the task at `address` (the gRPC edge provides it).
using PullFn = std::function<absl::StatusOr<Tensor>(const std::string& address, int64_t step_id,
                                                    const std::string& key, int64_t timeout_ms)>;

class Worker {
 public:
  // `name`: this task's name for messages ("/job:ps/replica:0/task:0").
  explicit Worker(std::string name);
  ~Worker();
  const std::string& name() const { return name_; }

  absl::Status register_graph(const RegisterGraphRequest& request, RegisterGraphResponse* response);
  absl::Status deregister_graph(const DeregisterGraphRequest& request);
  // `pull` serves RemoteInputs with another address; "" (or `self_address`) reads this task's table.
  absl::Status run_graph(const RunGraphRequest& request, RunGraphResponse* response, const PullFn& pull,
                         const std::string& self_address);
  // A kept tensor of a step (RecvTensor's source). NotFound naming the step and key.
  absl::StatusOr<Tensor> step_tensor(int64_t step_id, const std::string& key) const;
  absl::Status cleanup_step(const CleanupStepRequest& request);
  absl::Status reset(const ResetRequest& request);

  int num_graphs() const;
  int num_steps() const;
  // Variables held, in every container or in `container`.
  int num_container_variables() const;
  int num_container_variables(const std::string& container) const;

  static constexpr std::chrono::minutes kStepTtl{10};

 private:
  struct GraphEntry;
  absl::Status run_graph_impl(const RunGraphRequest& request, RunGraphResponse* response, const PullFn& pull,
                              const std::string& self_address);
  std::string name_;
  mutable std::mutex mu_;  // graphs_, steps_, next_handle_
  std::map<std::string, std::shared_ptr<GraphEntry>> graphs_;
  int64_t next_handle_ = 1;
  struct StepTable {
    std::chrono::steady_clock::time_point created;
    std::map<std::string, Tensor> tensors;
  };
  std::map<int64_t, StepTable> steps_;
  mutable std::mutex container_mu_;  // held for a whole run of a graph with variables
  std::map<std::pair<std::string, std::string>, Tensor> container_;  // (container, shared name) -> value
  int64_t reset_epoch_ = 0;  // guarded by container_mu_: bumped by reset
};

// Tensor <-> wire (TensorProto), with the sizes checked (a tensor over kMaxTensorBytes or with
// inconsistent content is InvalidArgument before anything is allocated).
absl::Status tensor_to_wire(const Tensor& tensor, tapeflow::proto::TensorProto* out);
absl::StatusOr<Tensor> tensor_from_wire(const tapeflow::proto::TensorProto& proto);
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 32;

}  // namespace tapeflow::cluster
