// The master: how a Session on a cluster target runs its graph (the client-side half; it runs in
// the client's process, not in the server the target names as TensorFlow's does: the target
// only tells it the cluster). Pure functions over the graph and the run request, so tests
// check partitions and rounds without sockets; remote_session.cc sends what they plan.
//
// Note [Cluster placement]: each node goes to one task. A node bound to a variable (a read,
// assign or initializer of it: a node with the VarHandleOp as its input) goes where the
// VarHandleOp goes; any other node to the job and task its requested device names (task 0 when
// the task is left out), or to the target's own task when it names no job. A job or task the
// cluster lacks is an InvalidArgumentError naming the node and the cluster's jobs. Within a
// task, the task's own Session places the node (its device type and index are not sent).
//
// Note [Rounds]: an edge whose producer and consumer are on different tasks raises the
// consumer's level by one: level(n) = max over inputs p of level(p) + (task(p) != task(n)).
// A step runs level by level: round r sends one RunGraph to each task with needed nodes at
// level r (concurrently), and each such call runs just those nodes, fed with what it needs from
// lower levels, pulled from the producing task's step table (RecvTensor), and keeping what
// higher levels need. So a task never waits inside a kernel for another task: no deadlock,
// whatever the graph, and each call is an ordinary local Session::run. The price: a step costs
// one round trip per level (3 for a training step with variables on a ps: read, compute,
// update), and a task's work at one level does not overlap another task's at another.
// Control edges from a lower level are satisfied by the round order and dropped from the
// partition; data edges across tasks become Placeholders ("cluster_recv/<node>/<index>").
//
// Limits: a graph that calls traced functions (PartitionedCall) cannot be written as a GraphDef
// and so cannot run on a cluster (UnimplementedError); a variable's ops always run on its task.
//
// Note [Recovery]: a run that fails for a transport reason (a task unreachable, a deadline,
// an unknown graph handle after a restart) makes the next run ask the target for the cluster
// and register the partitions again; a task that is back serves that next step (its variables,
// like TensorFlow's, are gone with the process and must be initialised again).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/cluster/cluster.pb.h"
#include "distributed/cluster/cluster_spec.h"
#include "graph/graph.h"
#include "graph/graph_def.h"
#include "graph/remote_session.h"

namespace tapeflow::cluster {

struct TaskInfo {
  std::string job;
  int task = 0;
  std::string address;
  std::string name() const { return task_name(job, task); }
};

struct ClusterPartition {
  std::vector<TaskInfo> tasks;       // every task of the cluster
  GraphDef def;                      // the whole graph
  std::vector<int> task_of;          // per node of def
  std::vector<int> level_of;         // per node of def (Note [Rounds])
  std::map<std::string, int> index;  // node name -> position in def
  std::vector<GraphDef> partitions;  // per task; no nodes: nothing to register
  std::map<std::pair<int, std::string>, std::string> recv_names;  // (task, "node:i") -> Placeholder
  int num_levels = 0;
};

// Places and partitions `graph` for `cluster` (Note [Cluster placement], Note [Rounds]);
// default_job / default_task: the target's task.
absl::StatusOr<ClusterPartition> partition_for_cluster(const Graph& graph, const ClusterSpec& cluster,
                                                       const std::string& default_job, int default_task);

// One RunGraph of a step (no graph handle or step id yet).
struct StepCall {
  int task = 0;
  int level = 0;
  RunGraphRequest request;
};
struct FetchSource {
  enum class Kind { kFed, kCall, kNone };
  Kind kind = Kind::kNone;
  int feed = -1;               // kFed: the request's feed
  int round = -1, call = -1;   // kCall: rounds[round][call]
  int position = -1;           //        its fetch list's position
};
struct StepPlan {
  std::vector<std::vector<StepCall>> rounds;  // in order; calls of one round run at once
  std::vector<FetchSource> fetches;           // per request fetch
  std::vector<int> tasks_with_keeps;          // CleanupStep goes to these
};

// The calls one run makes (Note [Rounds]).
absl::StatusOr<StepPlan> plan_step(const ClusterPartition& partition, const Graph& graph,
                                   const RemoteRunRequest& request);

}  // namespace tapeflow::cluster
