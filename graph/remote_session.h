// The hook through which Session reaches a remote target ("grpc://host:port"). The graph layer
// cannot include the distributed layer (Note [Layers]); the distributed layer's library
// (tapeflow_cluster, distributed/cluster/) registers a factory for its prefix when it is loaded.
// Without it linked, Session("grpc://...") is an UnimplementedError that says to link it.
//
//   register_remote_session_factory("grpc://", &make_grpc_session, &reset_grpc_containers);
//   Session s(graph, {.target = "grpc://127.0.0.1:4000"});   // calls make_grpc_session
//
// Session validates a run's feeds, fetches and targets exactly as for a local run and hands the
// validated request to the RemoteSession, which owns everything after that.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/session_types.h"

namespace tapeflow {

// One fetch of a remote run, already checked to belong to the session's graph.
struct RemoteFetch {
  enum class Kind { kTensor, kOperation, kVariable };
  Kind kind = Kind::kTensor;
  TensorRef ref;                      // kTensor
  int node = -1;                      // kOperation: the node; kVariable: the variable's VarHandleOp
};

struct RemoteRunRequest {
  std::vector<TensorRef> feeds;
  std::vector<Tensor> feed_values;    // one per feed: concrete, dtype and shape checked
  std::vector<RemoteFetch> fetches;
  std::vector<int> targets;
  const RunOptions* options = nullptr;
  RunMetadata* metadata = nullptr;
  std::source_location loc;
};

// A Session's remote half. run() is called from many threads at once; close() once.
class RemoteSession {
 public:
  virtual ~RemoteSession() = default;
  // One tensor per fetch (an empty Tensor for an operation); throws a typed Error.
  virtual std::vector<Tensor> run(const RemoteRunRequest& request) = 0;
  virtual void close() = 0;
};

using RemoteSessionFactory =
    std::function<std::unique_ptr<RemoteSession>(const Graph& graph, const SessionOptions& options)>;
// Session::reset(target, containers): clears the named resource containers (all when empty).
using RemoteResetFn = std::function<void(const std::string& target, const std::vector<std::string>& containers)>;

// Registers the factory for targets that start with `prefix` (replacing an earlier one).
// Thread-safe.
void register_remote_session_factory(const std::string& prefix, RemoteSessionFactory factory, RemoteResetFn reset);

// The RemoteSession for `options.target`; UnimplementedError when no factory matches.
std::unique_ptr<RemoteSession> make_remote_session(const Graph& graph, const SessionOptions& options,
                                                   std::source_location loc);
void reset_remote_containers(const std::string& target, const std::vector<std::string>& containers,
                             std::source_location loc);

}  // namespace tapeflow
