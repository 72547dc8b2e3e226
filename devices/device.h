// Device: where tensor memory lives and kernels run. A narrow interface: allocate (through
// its allocator), copy in, out and within, synchronize. CPU devices run kernels inline on the
// calling thread (using the intra-op pool for large work); a GPU device enqueues on its stream.
//
// Buffer is the reference-counted block a tensor's data lives in; DeviceTensor is what a
// kernel sees: a buffer with a dtype and a shape.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "devices/allocator.h"
#include "devices/device_spec.h"

namespace tapeflow {

enum class DeviceType : uint8_t { kCPU = 0, kGPU = 1 };
inline constexpr int kNumDeviceTypes = 2;
const char* device_type_name(DeviceType t);  // "CPU", "GPU"

class Device;

// A block of device memory, freed to its allocator when the last reference goes.
class Buffer {
 public:
  Buffer(Device* device, void* data, size_t bytes) : device_(device), data_(data), bytes_(bytes) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device* device() const { return device_; }

 private:
  Device* device_;
  void* data_;
  size_t bytes_;
};

// The kernel's view of a tensor: contiguous row-major data in `buffer` from `offset` bytes.
struct DeviceTensor {
  std::shared_ptr<Buffer> buffer;
  size_t offset = 0;
  DType dtype = DType::kFloat32;
  Shape shape;

  void* raw() const { return static_cast<char*>(buffer->data()) + offset; }
  template <typename T> T* data() const { return static_cast<T*>(raw()); }
  int64_t num_elements() const { return shape.num_elements(); }
  size_t bytes() const { return static_cast<size_t>(num_elements()) * dtype_size(dtype); }
  Device* device() const { return buffer->device(); }
};

class Device {
 public:
  Device(DeviceSpec spec, DeviceType type, int index, std::unique_ptr<Allocator> allocator);
  virtual ~Device() = default;

  // Full name: "/job:localhost/replica:0/task:0/device:CPU:0".
  const std::string& name() const { return name_; }
  const DeviceSpec& spec() const { return spec_; }
  DeviceType type() const { return type_; }
  int index() const { return index_; }
  Allocator* allocator() const { return allocator_.get(); }
  // True when the host can read the memory directly (CPU devices).
  virtual bool host_accessible() const = 0;

  // Allocates an uninitialised tensor; ResourceExhausted when memory runs out.
  absl::StatusOr<DeviceTensor> allocate(DType dtype, const Shape& shape);
  // Gives `t` a fresh buffer for its dtype and shape (the eager hot path: no DeviceTensor to
  // build, copy and destroy). On error `t` is unchanged.
  absl::Status allocate_buffer(DeviceTensor& t);

  virtual absl::Status copy_from_host(const void* src, void* dst, size_t bytes) = 0;
  virtual absl::Status copy_to_host(const void* src, void* dst, size_t bytes) = 0;
  virtual absl::Status copy_within(const void* src, void* dst, size_t bytes) = 0;
  // Waits for all work enqueued on this device.
  virtual absl::Status synchronize() = 0;

 private:
  DeviceSpec spec_;
  DeviceType type_;
  int index_;
  std::string name_;
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace tapeflow
