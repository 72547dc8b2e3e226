// DeviceManager: the devices of this process. CPU:0 always exists; more CPU devices can be
// added (so placement and cross-device copies are testable on any machine); GPUs are added
// when the CUDA build finds one. Devices live for the whole process. Thread-safe.
// CPU:0 runs its kernels on the process-wide intra-op pool; every further CPU device has an
// intra-op pool of its own (intra_op_pool), made with the process-wide pool's thread count.
//
//   DeviceManager::global().set_num_cpu_devices(2);
//   Device* d = DeviceManager::global().find("/device:CPU:1").value();
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "devices/device.h"

namespace tapeflow { struct IntraOpPool; }

namespace tapeflow {

struct CopyStats {
  int64_t copies = 0;  // cross-device tensor copies
  int64_t bytes = 0;
};

class DeviceManager {
 public:
  static DeviceManager& global();

  // Grows the number of CPU devices to n (devices are never removed).
  void set_num_cpu_devices(int n);
  int num_devices(DeviceType type) const;
  Device* cpu(int index = 0) const;
  std::vector<Device*> devices() const;
  // The device's own intra-op pool (devices/cpu/intra_op_pool.h); null for CPU:0 (the
  // process-wide pool) and for GPUs.
  IntraOpPool* intra_op_pool(const Device* device) const;

  // The local device a (possibly partial) spec names: job/replica/task must be unset or
  // localhost/0/0, an unset type means CPU and an unset index 0. NotFound lists what exists.
  absl::StatusOr<Device*> find(const DeviceSpec& spec) const;
  absl::StatusOr<Device*> find(std::string_view spec) const;

  // Copies src to dst (no copy when already there) and counts it.
  absl::StatusOr<DeviceTensor> copy_to(const DeviceTensor& src, Device* dst);
  CopyStats copy_stats() const;
  void reset_copy_stats();

 private:
  DeviceManager();
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Device>> cpus_;
  std::vector<std::shared_ptr<IntraOpPool>> cpu_pools_;  // per CPU device; [0] is null
  std::vector<std::unique_ptr<Device>> gpus_;
  std::atomic<int64_t> copies_{0}, copy_bytes_{0};
};

}  // namespace tapeflow
