// Helpers for placement and partition tests: the local CPU device names, devices of other jobs
// or types, and placing a whole graph.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "devices/allocator.h"
#include "graph/placer.h"
#include "tapeflow.h"

namespace tapeflow {

// The two local CPU devices of placement and partition tests.
inline constexpr const char* kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
inline constexpr const char* kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

// A device of another job or type for placement only (nothing runs on it): the placer sees
// specs and kernels, never memory.
class FakeDevice : public Device {
 public:
  FakeDevice(std::string_view spec, DeviceType type)
      : Device(DeviceSpec::parse(spec).value(), type, DeviceSpec::parse(spec).value().device_index.value_or(0),
               std::make_unique<CachingAllocator>("fake")) {}
  bool host_accessible() const override { return true; }
  absl::Status copy_from_host(const void*, void*, size_t) override { return absl::UnimplementedError("fake"); }
  absl::Status copy_to_host(const void*, void*, size_t) override { return absl::UnimplementedError("fake"); }
  absl::Status copy_within(const void*, void*, size_t) override { return absl::UnimplementedError("fake"); }
  absl::Status synchronize() override { return absl::OkStatus(); }
};

// Every node of g placed on `devices`: node name -> device name.
inline std::map<std::string, std::string> place_all(const Graph& g, const std::vector<Device*>& devices, bool soft = false) {
  const std::vector<const Node*> nodes = g.state()->snapshot();
  const std::vector<char> needed(nodes.size(), 1);
  const std::vector<Device*> placed = place_nodes(nodes, needed, devices, soft);
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < nodes.size(); ++i) out[nodes[i]->name] = placed[i]->name();
  return out;
}

}  // namespace tapeflow
