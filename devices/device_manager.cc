#include "devices/device_manager.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/cpu/cpu_device.h"
#include "devices/cpu/intra_op_pool.h"
#include "devices/cpu/thread_pool.h"
#if TAPEFLOW_WITH_CUDA
#include "devices/cuda/cuda_device.h"
#endif

namespace tapeflow {

namespace {
DeviceSpec local_spec(std::string_view type, int index) {
  DeviceSpec s;
  s.job = "localhost";
  s.replica = 0;
  s.task = 0;
  s.device_type = std::string(type);
  s.device_index = index;
  return s;
}
}  // namespace

DeviceManager& DeviceManager::global() {
  // Never destroyed: buffers held by static tensors may outlive any destruction order.
  static DeviceManager* manager = new DeviceManager();
  return *manager;
}

DeviceManager::DeviceManager() {
  cpus_.push_back(std::make_unique<CpuDevice>(local_spec("CPU", 0), 0));
  cpu_pools_.push_back(nullptr);
#if TAPEFLOW_WITH_CUDA
  const int gpus = cuda_device_count();
  for (int i = 0; i < gpus; ++i) gpus_.push_back(make_cuda_device(local_spec("GPU", i), i));
#endif
}

void DeviceManager::set_num_cpu_devices(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  while (static_cast<int>(cpus_.size()) < n) {
    const int i = static_cast<int>(cpus_.size());
    cpus_.push_back(std::make_unique<CpuDevice>(local_spec("CPU", i), i));
    cpu_pools_.push_back(make_intra_op_pool(intra_op_threads()));
  }
}

IntraOpPool* DeviceManager::intra_op_pool(const Device* device) const {
  if (device == nullptr || device->type() != DeviceType::kCPU) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  const int i = device->index();
  return i >= 0 && i < static_cast<int>(cpu_pools_.size()) ? cpu_pools_[i].get() : nullptr;
}

int DeviceManager::num_devices(DeviceType type) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(type == DeviceType::kCPU ? cpus_.size() : gpus_.size());
}

Device* DeviceManager::cpu(int index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return cpus_.at(index).get();
}

std::vector<Device*> DeviceManager::devices() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Device*> out;
  for (const auto& d : cpus_) out.push_back(d.get());
  for (const auto& d : gpus_) out.push_back(d.get());
  return out;
}

absl::StatusOr<Device*> DeviceManager::find(const DeviceSpec& spec) const {
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string type = spec.device_type.value_or("CPU");
    const int index = spec.device_index.value_or(0);
    const auto* list = type == "CPU" ? &cpus_ : type == "GPU" ? &gpus_ : nullptr;
    if ((spec.job && *spec.job != "localhost") || (spec.replica && *spec.replica != 0) ||
        (spec.task && *spec.task != 0)) {
      why = "it names a remote job, replica or task";
    } else if (list == nullptr) {
      why = absl::StrCat("unknown device type ", type);
    } else if (index >= static_cast<int>(list->size())) {
      why = absl::StrCat("there are ", list->size(), " ", type, " devices");
    } else {
      return (*list)[index].get();
    }
  }
  // devices() takes the lock again, so the message is built after releasing it.
  std::vector<std::string> names;
  for (Device* d : devices()) names.push_back(d->name());
  return absl::NotFoundError(absl::StrCat("No device matches '", spec.to_string(), "': ", why,
                                          ". Devices in this process: ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<Device*> DeviceManager::find(std::string_view spec) const {
  auto parsed = DeviceSpec::parse(spec);
  if (!parsed.ok()) return parsed.status();
  return find(*parsed);
}

absl::StatusOr<DeviceTensor> DeviceManager::copy_to(const DeviceTensor& src, Device* dst) {
  Device* from = src.device();
  if (from == dst) return src;
  auto out = dst->allocate(src.dtype, src.shape);
  if (!out.ok()) return out.status();
  const size_t bytes = src.bytes();
  absl::Status st;
  if (from->host_accessible() && dst->host_accessible()) {
    st = dst->copy_within(src.raw(), out->raw(), bytes);
  } else if (from->host_accessible()) {
    st = dst->copy_from_host(src.raw(), out->raw(), bytes);
  } else if (dst->host_accessible()) {
    st = from->copy_to_host(src.raw(), out->raw(), bytes);
  } else {
    // Device to device through the host; peer copies can replace this when measured.
    std::unique_ptr<char[]> staging(new char[bytes ? bytes : 1]);
    st = from->copy_to_host(src.raw(), staging.get(), bytes);
    if (st.ok()) st = dst->copy_from_host(staging.get(), out->raw(), bytes);
  }
  if (!st.ok()) return st;
  copies_.fetch_add(1, std::memory_order_relaxed);
  copy_bytes_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  return out;
}

CopyStats DeviceManager::copy_stats() const { return {copies_.load(), copy_bytes_.load()}; }
void DeviceManager::reset_copy_stats() { copies_ = 0; copy_bytes_ = 0; }

}  // namespace tapeflow
