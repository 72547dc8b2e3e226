// The value types of Session: options, run options and run metadata (TensorFlow's
// ConfigProto, RunOptions and RunMetadata, as plain structs).
#pragma once

#include <cstdint>
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
  // "" runs in this process. Remote targets ("grpc://host:port") are not implemented yet.
  std::string target;
  // Place ops whose requested device does not exist (or lacks a kernel) on an available one.
  bool allow_soft_placement = false;
  // Print each node's device to stderr when a run's plan is built.
  bool log_device_placement = false;
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

// The part of the graph one device executed, in the plan's order: "name = Op(inputs)" lines;
// edges that cross devices appear as _Send / _Recv pairs.
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
