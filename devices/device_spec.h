// DeviceSpec: a (possibly partial) device name in TensorFlow's form
//   /job:<name>/replica:<r>/task:<t>/device:<TYPE>:<index>
// plus the legacy short forms "/cpu:0" and "/gpu:1". Unset fields stay unset, so a partial
// spec can be merged with an outer scope's spec:
//
//   auto outer = DeviceSpec::parse("/job:ps/task:0").value();
//   auto inner = DeviceSpec::parse("/device:GPU:1").value();
//   outer.merged_with(inner).to_string();   // "/job:ps/task:0/device:GPU:1"
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tapeflow {

struct DeviceSpec {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> device_type;  // "CPU", "GPU" (legacy lower case is upper-cased)
  std::optional<int> device_index;         // unset also for "device:GPU:*"

  // Parses every form above; an empty string is an empty spec. Errors say what is wrong.
  static absl::StatusOr<DeviceSpec> parse(std::string_view spec);

  // The canonical string, omitting unset fields ("" for an empty spec).
  std::string to_string() const;
  // Fields set in `inner` override this spec's (TensorFlow's nested device scopes).
  DeviceSpec merged_with(const DeviceSpec& inner) const;
  // True when every field set in both specs agrees.
  bool is_compatible_with(const DeviceSpec& other) const;
  bool empty() const { return !job && !replica && !task && !device_type && !device_index; }

  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

// A DeviceSpec kept by pointer and shared by its copies: 16 bytes where a DeviceSpec is 104,
// and nothing allocated for the usual empty one. A graph node holds its requested device so
// (a 100k-node graph is 10 MB smaller, and imports that much faster). Reads as a DeviceSpec;
// assigning a DeviceSpec replaces it.
class SharedDeviceSpec {
 public:
  SharedDeviceSpec() = default;
  SharedDeviceSpec(DeviceSpec spec)  // NOLINT: implicit, as node.requested_device = spec
      : spec_(spec.empty() ? nullptr : std::make_shared<const DeviceSpec>(std::move(spec))) {}

  const DeviceSpec& get() const;
  operator const DeviceSpec&() const { return get(); }  // NOLINT: reads as the spec
  bool empty() const { return spec_ == nullptr; }
  std::string to_string() const { return spec_ ? spec_->to_string() : std::string(); }

  friend bool operator==(const SharedDeviceSpec& a, const SharedDeviceSpec& b) {
    return a.spec_ == b.spec_ || a.get() == b.get();
  }

 private:
  std::shared_ptr<const DeviceSpec> spec_;
};

}  // namespace tapeflow
