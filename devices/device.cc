#include "devices/device.h"

#include "absl/strings/str_cat.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "core/small_object_pool.h"

namespace tapeflow {

const char* device_type_name(DeviceType t) { return t == DeviceType::kCPU ? "CPU" : "GPU"; }

Buffer::~Buffer() { device_->allocator()->deallocate(data_, bytes_); }

Device::Device(DeviceSpec spec, DeviceType type, int index, std::unique_ptr<Allocator> allocator)
    : spec_(std::move(spec)), type_(type), index_(index), allocator_(std::move(allocator)) {
  name_ = spec_.to_string();
}

absl::Status Device::allocate_buffer(DeviceTensor& t) {
  if (!t.shape.is_fully_defined())
    return absl::InvalidArgumentError(absl::StrCat("cannot allocate a tensor of partially known shape ",
                                                   t.shape.to_string()));
  absl::StatusOr<int64_t> checked = checked_tensor_bytes(t.shape.dims(), t.dtype);  // Note [Checked sizes]
  if (!checked.ok()) return checked.status();
  const size_t bytes = static_cast<size_t>(*checked);
  void* p = allocator_->allocate(bytes);
  if (p == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat("out of memory allocating ", bytes, " bytes for a ",
                                                     dtype_name(t.dtype), " tensor of shape ",
                                                     t.shape.to_string(), " on ", name_));
  t.buffer = std::allocate_shared<Buffer>(PoolAllocator<Buffer>(), this, p, bytes);
  t.offset = 0;
  return absl::OkStatus();
}

absl::StatusOr<DeviceTensor> Device::allocate(DType dtype, const Shape& shape) {
  DeviceTensor t;
  t.dtype = dtype;
  t.shape = shape;
  TF_RETURN_IF_ERROR(allocate_buffer(t));
  return t;
}

}  // namespace tapeflow
