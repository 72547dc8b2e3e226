// Device functions: a device scope that computes each node's device from the node itself, as
// TensorFlow's `with tf.device(fn):`. replica_device_setter is the one TensorFlow users know:
//
//   {
//     auto scope = device(replica_device_setter(3));   // ps_tasks = 3
//     Variable w_0(...), b_0(...), w_1(...), b_1(...);  // /job:ps/task:0, 1, 2, 0
//     Tensor input = placeholder(DType::kFloat32, {-1, 784});   // /job:worker
//     Tensor layer_0 = matmul(input, w_0) + b_0;                // /job:worker
//   }
//
// A device function runs when a node is added to a graph (never eagerly: as in TensorFlow 2,
// eager ops ignore it). It sees the node with the spec its device-string scopes merged to
// (eager/context.h's device(...)) and returns the node's requested device. Nested device
// functions run innermost first, each seeing the previous one's result. The Session's placer
// (graph/placer.h) then maps requests onto devices; this process has no /job:ps or /job:worker
// devices, so such a graph runs here only with allow_soft_placement.
#pragma once

#include <functional>
#include <source_location>
#include <string_view>

#include "devices/device_spec.h"
#include "graph/graph.h"

namespace tapeflow {

using DeviceFunction = std::function<DeviceSpec(const Node& node)>;

class DeviceFunctionScope {
 public:
  explicit DeviceFunctionScope(DeviceFunction fn);
  ~DeviceFunctionScope();
  DeviceFunctionScope(const DeviceFunctionScope&) = delete;
  DeviceFunctionScope& operator=(const DeviceFunctionScope&) = delete;
};

// Nodes built on this thread while the scope lives get fn's device (see above).
[[nodiscard]] DeviceFunctionScope device(DeviceFunction fn);

// Sets node.requested_device through this thread's device functions (innermost first).
// Called by the graph-building context for every node it adds.
void apply_device_functions(Node& node);

// tf.train.replica_device_setter(ps_tasks, ps_device, worker_device): variables (VarHandleOp
// nodes) go round-robin to <ps_device>/task:0 .. task:ps_tasks-1, every other node to
// worker_device. A node's own request wins field by field (a variable already on another job
// keeps its task: TensorFlow's rule). Each returned function keeps its own round-robin counter.
// ps_tasks == 0 gives a function that changes nothing. InvalidArgumentError for a malformed
// device string or ps_tasks < 0.
DeviceFunction replica_device_setter(int ps_tasks, std::string_view ps_device = "/job:ps",
                                     std::string_view worker_device = "/job:worker",
                                     std::source_location loc = std::source_location::current());

}  // namespace tapeflow
