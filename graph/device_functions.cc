#include "graph/device_functions.h"

#include <atomic>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_ops.h"

namespace tapeflow {

namespace {
thread_local std::vector<DeviceFunction>* device_functions = nullptr;  // innermost last
}  // namespace

DeviceFunctionScope::DeviceFunctionScope(DeviceFunction fn) {
  if (device_functions == nullptr) device_functions = new std::vector<DeviceFunction>();  // one per thread
  device_functions->push_back(std::move(fn));
}

DeviceFunctionScope::~DeviceFunctionScope() { device_functions->pop_back(); }

DeviceFunctionScope device(DeviceFunction fn) { return DeviceFunctionScope(std::move(fn)); }

void apply_device_functions(Node& node) {
  if (device_functions == nullptr) return;
  for (auto it = device_functions->rbegin(); it != device_functions->rend(); ++it)
    if (*it) node.requested_device = (*it)(node);
}

DeviceFunction replica_device_setter(int ps_tasks, std::string_view ps_device, std::string_view worker_device,
                                     std::source_location loc) {
  if (ps_tasks < 0)
    throw InvalidArgumentError(absl::StrCat("[replica_device_setter] ps_tasks must be >= 0, got ", ps_tasks), loc);
  auto parse = [&](std::string_view s, const char* what) {
    absl::StatusOr<DeviceSpec> spec = DeviceSpec::parse(s);
    if (!spec.ok())
      throw InvalidArgumentError(absl::StrCat("[replica_device_setter] ", what, " '", std::string(s), "': ", spec.status().message()),
                                 loc);
    return *spec;
  };
  const DeviceSpec ps = parse(ps_device, "ps_device"), worker = parse(worker_device, "worker_device");
  if (ps_tasks == 0) return [](const Node& node) { return node.requested_device; };
  auto next_task = std::make_shared<std::atomic<int>>(0);
  return [ps, worker, ps_tasks, next_task](const Node& node) {
    const DeviceSpec& current = node.requested_device;
    if (node.op == &kVarHandleOp) {
      DeviceSpec out = ps;
      // TensorFlow's _ReplicaDeviceChooser: a task is chosen only when the node's job is unset
      // or is the ps job; then the node's own fields override.
      if (ps.job && (!current.job || *current.job == *ps.job)) out.task = next_task->fetch_add(1) % ps_tasks;
      return out.merged_with(current);
    }
    return worker.merged_with(current);
  };
}

}  // namespace tapeflow
