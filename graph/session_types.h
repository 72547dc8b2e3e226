// The value types of Session: options, run options and run metadata (TensorFlow's
// ConfigProto, RunOptions and RunMetadata, as plain structs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/shape.h"

namespace tapeflow {

struct GPUOptions {
  // Grow GPU memory on demand instead of reserving it up front. Stored; honoured by the CUDA
  // device's allocator when a GPU exists (none has been available to test it).
  bool allow_growth = false;
  // The fraction of each GPU's memory this process may use (0 < f <= 1). Stored likewise.
  double per_process_gpu_memory_fraction = 1.0;
};

struct SessionOptions {
  // "" runs in this process; "grpc://host:port" runs on the cluster that server belongs to
  // (distributed/cluster/, library tapeflow_cluster).
  std::string target;
  // Place ops whose requested device does not exist (or lacks a kernel) on an available one
  // (graph/placer.h, rule 4).
  bool allow_soft_placement = false;
  // Print each node's device to stderr when a run's plan is built, one line per node:
  // "name: (Type): /job:localhost/replica:0/task:0/device:CPU:1".
  bool log_device_placement = false;
  // The most devices of each type ("CPU", "GPU") the Session uses (ConfigProto.device_count).
  // "CPU" defaults to 1; N > 1 gives the Session /device:CPU:0 .. CPU:N-1 (made on first use,
  // each further one with its own intra-op pool). "GPU" defaults to every GPU present.
  std::map<std::string, int> device_count;
  // Threads that run independent nodes at once; 0 picks the number of cores, 1 runs nodes
  // one after another on the caller's thread.
  int inter_op_parallelism_threads = 0;
  // Threads of the process-wide CPU kernel pool; 0 leaves it as it is. Applied when the
  // Session is created (it is shared by every Session and by eager execution).
  int intra_op_parallelism_threads = 0;
  GPUOptions gpu_options;
};

struct RunOptions {
  enum class TraceLevel { kNoTrace, kSoftwareTrace, kHardwareTrace, kFullTrace };
  TraceLevel trace_level = TraceLevel::kNoTrace;
  bool output_partition_graphs = false;
  // A remote run (target "grpc://...") fails with DeadlineExceededError, naming the task and
  // what it was doing, when it takes longer than this; 0: no limit. A local run checks it
  // before each iteration of a While loop (Note [Functional control flow]).
  int64_t timeout_in_ms = 0;
};

// One executed node's statistics (a full trace).
struct NodeExecStats {
  std::string node_name;
  std::string op;
  std::string device;
  int64_t start_micros = 0;    // since the start of the run
  int64_t duration_nanos = 0;
  size_t thread_id = 0;        // which thread ran it (std::hash of its std::thread::id)
  std::vector<Shape> output_shapes;
  std::vector<int64_t> output_bytes;
  // Set when this entry ran a fused chain of elementwise nodes (Note [Fusion]) as one pass: the
  // members' names in order, this node last. They have no entries of their own.
  std::vector<std::string> fused_nodes;
};

struct StepStats {
  std::vector<NodeExecStats> nodes;  // in completion order
  std::string to_string() const;
};

// The part of the graph one device executed, in the plan's order: "name = Op(inputs)" lines.
// Each edge that crosses devices is a _Send in the producer's partition and a _Recv in the
// consumer's, which its consumers read (Note [Partitions] in graph/executor.h):
//   a/_0 = _Send(a:0) {tensor_name="a:0", recv_device="/job:localhost/replica:0/task:0/device:CPU:1"}
//   a/_1 = _Recv() {tensor_name="a:0", send_device="/job:localhost/replica:0/task:0/device:CPU:0"}
//   Mul = Mul(a/_1:0, Mul/y:0)
struct PartitionGraph {
  std::string device;
  std::vector<std::string> nodes;
  std::string to_string() const;
};

struct RunMetadata {
  StepStats step_stats;
  std::vector<PartitionGraph> partition_graphs;
};

}  // namespace tapeflow
