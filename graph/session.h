// Session: runs parts of a Graph. run() executes only the subgraph its fetches and targets
// need, replacing fed tensors by the values given; variables keep their values per Session.
//
//   Graph g;
//   Tensor x, y;
//   {
//     auto scope = g.as_default();
//     x = placeholder(DType::kFloat32, {3}, "x");
//     y = square(x);
//   }
//   Session sess(g);
//   sess.run(y, {{x, {1.f, 2.f, 3.f}}});   // [1 4 9]
//   sess.run(y);                           // InvalidArgumentError: feed placeholder 'x'
//
// Fetches may be tensors, operations (run for their effect; the result is an empty Tensor)
// or variables (their value after the run). Feeds may replace any feedable tensor; a plain C++
// number takes the fed tensor's dtype. The compiled plan for each (feeds, fetches, targets)
// signature is cached; run() may be called from many threads at once.
#pragma once

#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "eager/operand.h"
#include "graph/graph.h"
#include "graph/session_types.h"

namespace tapeflow {

class Plan;
class InterOpPool;
class RemoteSession;
class Device;
struct SessionState;

// What run() can fetch.
class Fetch {
 public:
  Fetch(const Tensor& t) : tensor_(t) {}
  Fetch(const Operation& op) : op_(op) {}
  Fetch(const Variable& v) : variable_(v) {}
  const Tensor& tensor() const { return tensor_; }
  const Operation& operation() const { return op_; }
  const std::optional<Variable>& variable() const { return variable_; }

 private:
  Tensor tensor_;
  Operation op_;
  std::optional<Variable> variable_;
};

// One feed: the graph tensor to replace and its value (a tensor, a nested list, or a C++ scalar,
// which takes the fed tensor's dtype). A Feed owns its value even when made from a named tensor
// (an Operand parameter only refers to one: Note [Operand refers] in eager/operand.h).
struct Feed {
  Feed(Tensor fed, Operand v) : tensor(std::move(fed)), value(v) {}
  Tensor tensor;
  Operand value;
};
using FeedList = std::vector<Feed>;

class Session {
 public:
  // A session on the default graph (get_default_graph()).
  explicit Session(SessionOptions options = {});
  explicit Session(const Graph& graph, SessionOptions options = {});
  // TensorFlow's tf.Session(target, graph): options.target = target ("" runs here,
  // "grpc://host:port" on a cluster: link tapeflow_cluster, README "Running on a cluster").
  Session(std::string target, const Graph& graph, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs what `fetches` and `targets` need; returns one tensor per fetch.
  std::vector<Tensor> run(const std::vector<Fetch>& fetches, const FeedList& feeds = {},
                          const std::vector<Operation>& targets = {}, const RunOptions* options = nullptr,
                          RunMetadata* metadata = nullptr, std::source_location loc = std::source_location::current());
  // One fetch.
  Tensor run(const Fetch& fetch, const FeedList& feeds = {},
             std::source_location loc = std::source_location::current());
  Tensor run(const Fetch& fetch, const FeedList& feeds, const RunOptions& options, RunMetadata* metadata,
             std::source_location loc = std::source_location::current());

  // The session's values of graph variables (the variables' state lives per Session), read or
  // written directly, without adding read or assign nodes to the graph: what a Saver needs.
  // Each variable must be a variable of this session's graph (InvalidArgumentError otherwise);
  // reading an uninitialized one, or using a closed session, is a FailedPreconditionError.
  // set_variable_values checks every pair first (each value concrete, with its variable's dtype
  // and shape) and then sets them all under one lock: all change or none, and a concurrent run
  // sees all the old values or all the new ones.
  std::vector<Tensor> variable_values(const std::vector<Variable>& variables,
                                      std::source_location loc = std::source_location::current()) const;
  void set_variable_values(const std::vector<std::pair<Variable, Tensor>>& values,
                           std::source_location loc = std::source_location::current());

  // Releases variable values and plans; later runs throw FailedPreconditionError. On a remote
  // target the variables the cluster's tasks hold stay there (as in TensorFlow): see reset.
  void close();

  // Clears the resource containers (variables) of every task of the cluster that `target`
  // ("grpc://host:port") serves: those named (tapeflow::container in graph/scopes.h; "" is the
  // default container), or all when `containers` is empty (TensorFlow's containers=None).
  // Sessions open on that cluster see those variables uninitialized afterwards (re-run their
  // initializers); the others keep their values. Needs tapeflow_cluster.
  static void reset(const std::string& target, const std::vector<std::string>& containers = {},
                    std::source_location loc = std::source_location::current());
  bool closed() const;

  const Graph& graph() const { return graph_; }
  const SessionOptions& options() const { return options_; }
  // The devices this Session places nodes on (graph/placer.h: session_devices), in order:
  // CPU:0 .. CPU:N-1 for device_count["CPU"] = N, then GPUs. Each has its own inter-op pool.
  const std::vector<Device*>& devices() const { return devices_; }
  // Plans compiled so far (one per distinct signature).
  int num_cached_plans() const;

 protected:
  // An InteractiveSession grows its graph between runs by design (Note [Growing graph]).
  void disable_growth_warning() { warned_growth_ = true; }

 private:
  Graph graph_;
  SessionOptions options_;
  std::unique_ptr<SessionState> state_;
  std::unique_ptr<RemoteSession> remote_;  // a remote target's half (graph/remote_session.h)
  std::vector<Device*> devices_;
  std::vector<std::unique_ptr<InterOpPool>> pools_;  // one per device (Note [Partitions]); none: sequential
  std::vector<InterOpPool*> pool_ptrs_;
  mutable std::mutex mu_;  // guards plans_ and closed_
  absl::flat_hash_map<std::string, std::shared_ptr<const Plan>> plans_;
  bool closed_ = false;
  // Note [Growing graph]: nodes at the first run (-1 before it), and whether the warning that the
  // graph grew since then was printed (once per Session).
  int nodes_at_first_run_ = -1;
  bool warned_growth_ = false;
  void warn_if_graph_grew(std::source_location loc);
};

// For interactive use (a REPL), as tf.InteractiveSession: while alive it is the default
// session (for the eval() and run() shortcuts) and its graph is the thread's default graph, so
// ops typed next are added to it.
//
//   InteractiveSession sess;
//   Tensor c = constant(Tensor(5.f)) * constant(Tensor(6.f));
//   eval(c);   // 30
class InteractiveSession : public Session {
 public:
  explicit InteractiveSession(SessionOptions options = {});
  explicit InteractiveSession(const Graph& graph, SessionOptions options = {});
  ~InteractiveSession();

 private:
  InteractiveSession* previous_;
  std::unique_ptr<GraphDefaultGuard> graph_scope_;
};

// The innermost InteractiveSession of this thread, or null.
Session* default_session();

// tensor.eval() and operation.run() of TensorFlow: run in `session`, or in the default session.
Tensor eval(const Tensor& t, const FeedList& feeds = {}, Session* session = nullptr,
            std::source_location loc = std::source_location::current());
void run(const Operation& op, const FeedList& feeds = {}, Session* session = nullptr,
         std::source_location loc = std::source_location::current());

}  // namespace tapeflow
