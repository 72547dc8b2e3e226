#include "devices/device.h"

#include "absl/strings/str_cat.h"
#include "core/small_object_pool.h"

namespace tapeflow {

const char* device_type_name(DeviceType t) { return t == DeviceType::kCPU ? "CPU" : "GPU"; }

Buffer::~Buffer() { device_->allocator()->deallocate(data_, bytes_); }

Device::Device(DeviceSpec spec, DeviceType type, int index, std::unique_ptr<Allocator> allocator)
    : spec_(std::move(spec)), type_(type), index_(index), allocator_(std::move(allocator)) {
  name_ = spec_.to_string();
}

absl::StatusOr<DeviceTensor> Device::allocate(DType dtype, const Shape& shape) {
  const int64_t n = shape.num_elements();
  if (n < 0)
    return absl::InvalidArgumentError(absl::StrCat("cannot allocate a tensor of partially known shape ",
                                                   shape.to_string()));
  const size_t bytes = static_cast<size_t>(n) * dtype_size(dtype);
  void* p = allocator_->allocate(bytes);
  if (p == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat("out of memory allocating ", bytes, " bytes for a ",
                                                     dtype_name(dtype), " tensor of shape ",
                                                     shape.to_string(), " on ", name_));
  DeviceTensor t;
  t.buffer = std::allocate_shared<Buffer>(PoolAllocator<Buffer>(), this, p, bytes);
  t.dtype = dtype;
  t.shape = shape;
  return t;
}

}  // namespace tapeflow
