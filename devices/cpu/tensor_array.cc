// CPU kernels of the TensorArray buffer ops (Note [TensorArrays as buffers],
// eager/ops/tensor_array.cc). Elements are copied as bytes, so one kernel serves every dtype.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cpu/register.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

Shape element_shape(const Shape& buffer) { return Shape(buffer.dims().subspan(1)); }  // rank >= 1: the shape functions

absl::Status check_index(const KernelContext& ctx, int64_t index, int64_t size) {
  if (index < 0 || index >= size)
    return absl::InvalidArgumentError(
        absl::StrCat("[", ctx.op, "] index ", index, " is outside the TensorArray of size ", size));
  return absl::OkStatus();
}

// Whether the array may grow past its size (a dynamic_size TensorArray: attr "grow").
bool grows(const KernelContext& ctx) { return ctx.attrs.get_or<bool>("grow", false); }

// The size a write up to index `last` needs: the buffer's, or last + 1 where the array grows;
// an index outside it is an error.
absl::StatusOr<int64_t> size_for(const KernelContext& ctx, int64_t last) {
  const int64_t size = ctx.input(0).shape.dim(0);
  if (last >= size && grows(ctx)) return last + 1;
  TF_RETURN_IF_ERROR(check_index(ctx, last, size));
  return size;
}

// A buffer of `size` elements of shape `element`: the input buffer's bytes when its elements
// have that shape (zeros after them when it grew); zeros when it is still empty (a new array
// whose element_shape left dims unknown, Note [TensorArrays as buffers]); else an error naming
// both shapes.
absl::Status written_buffer(KernelContext& ctx, int64_t size, const Shape& element) {
  const DeviceTensor& in = ctx.input(0);
  const Shape had = element_shape(in.shape);
  const bool fits = had == element;
  if (!fits && in.num_elements() != 0)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] a value of element shape ", element.to_string(),
                                                   " does not fit the TensorArray's elements of shape ", had.to_string(),
                                                   " (its elements must all have one shape)"));
  DeviceTensor& out = ctx.output(0);
  out.dtype = in.dtype;
  out.shape = Shape{size};
  for (int64_t d : element.dims()) out.shape.push_back(d);
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));
  const size_t kept = fits ? in.bytes() : 0;
  if (kept > 0) std::memcpy(out.raw(), in.raw(), kept);
  std::memset(out.data<char>() + kept, 0, out.bytes() - kept);
  return absl::OkStatus();
}

absl::Status buffer_kernel(KernelContext& ctx) {
  const int64_t size = *ctx.input(0).data<int32_t>();
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] size must be non-negative, got ", size));
  DeviceTensor& out = ctx.output(0);
  out.dtype = ctx.attrs.get<DType>("dtype");
  out.shape = Shape{size};
  for (int64_t d : ctx.attrs.get<Shape>("element_shape").dims()) out.shape.push_back(d < 0 ? 0 : d);
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));
  std::memset(out.raw(), 0, out.bytes());
  return absl::OkStatus();
}

absl::Status write_kernel(KernelContext& ctx) {
  const int64_t index = *ctx.input(1).data<int32_t>();
  if (index < 0) return check_index(ctx, index, ctx.input(0).shape.dim(0));
  TF_ASSIGN_OR_RETURN(const int64_t size, size_for(ctx, index));
  const DeviceTensor& value = ctx.input(2);
  TF_RETURN_IF_ERROR(written_buffer(ctx, size, value.shape));
  DeviceTensor& out = ctx.output(0);
  std::memcpy(out.data<char>() + static_cast<size_t>(index) * value.bytes(), value.raw(), value.bytes());
  return absl::OkStatus();
}

absl::Status scatter_kernel(KernelContext& ctx) {
  const DeviceTensor& indices = ctx.input(1);
  const DeviceTensor& value = ctx.input(2);
  const int64_t n = indices.num_elements();
  if (value.shape.dim(0) != n)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] 'indices' has ", n, " elements and 'value' ",
                                                   value.shape.to_string(), " has ", value.shape.dim(0), " rows"));
  const int32_t* idx = indices.data<int32_t>();
  int64_t last = -1;
  for (int64_t k = 0; k < n; ++k) {
    if (idx[k] < 0) return check_index(ctx, idx[k], ctx.input(0).shape.dim(0));
    last = std::max<int64_t>(last, idx[k]);
  }
  int64_t size = ctx.input(0).shape.dim(0);
  if (last >= 0) {
    TF_ASSIGN_OR_RETURN(size, size_for(ctx, last));
  }
  TF_RETURN_IF_ERROR(written_buffer(ctx, size, element_shape(value.shape)));
  const size_t row = n == 0 ? 0 : value.bytes() / static_cast<size_t>(n);
  char* out = ctx.output(0).data<char>();
  for (int64_t k = 0; k < n; ++k) std::memcpy(out + static_cast<size_t>(idx[k]) * row, value.data<char>() + k * row, row);
  return absl::OkStatus();
}

absl::Status unstack_kernel(KernelContext& ctx) {
  const DeviceTensor& value = ctx.input(1);
  int64_t size = ctx.input(0).shape.dim(0);
  if (value.shape.dim(0) > size && grows(ctx)) size = value.shape.dim(0);
  if (value.shape.dim(0) > size)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] cannot unstack ", value.shape.dim(0),
                                                   " rows into the TensorArray of size ", size));
  TF_RETURN_IF_ERROR(written_buffer(ctx, size, element_shape(value.shape)));
  std::memcpy(ctx.output(0).raw(), value.raw(), value.bytes());
  return absl::OkStatus();
}

// Rows `indices` of the buffer, stacked: [n, *element].
absl::Status gather_rows(KernelContext& ctx, const int32_t* indices, int64_t n, bool one) {
  const DeviceTensor& in = ctx.input(0);
  for (int64_t k = 0; k < n; ++k) TF_RETURN_IF_ERROR(check_index(ctx, indices[k], in.shape.dim(0)));
  DeviceTensor& out = ctx.output(0);
  out.dtype = in.dtype;
  const Shape element = element_shape(in.shape);
  out.shape = one ? element : Shape{n};
  if (!one)
    for (int64_t d : element.dims()) out.shape.push_back(d);
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));
  const size_t row = in.shape.dim(0) == 0 ? 0 : in.bytes() / static_cast<size_t>(in.shape.dim(0));
  for (int64_t k = 0; k < n; ++k)
    std::memcpy(out.data<char>() + k * row, in.data<char>() + static_cast<size_t>(indices[k]) * row, row);
  return absl::OkStatus();
}

absl::Status read_kernel(KernelContext& ctx) { return gather_rows(ctx, ctx.input(1).data<int32_t>(), 1, true); }

absl::Status gather_kernel(KernelContext& ctx) {
  return gather_rows(ctx, ctx.input(1).data<int32_t>(), ctx.input(1).num_elements(), false);
}

absl::Status size_kernel(KernelContext& ctx) {
  *ctx.output(0).data<int32_t>() = static_cast<int32_t>(ctx.input(0).shape.dim(0));
  return absl::OkStatus();
}

}  // namespace

void register_tensor_array_kernels(KernelRegistry& r) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    r.add("TensorArrayBuffer", DeviceType::kCPU, dt, buffer_kernel);
    r.add("TensorArrayBufferWrite", DeviceType::kCPU, dt, write_kernel);
    r.add("TensorArrayBufferScatter", DeviceType::kCPU, dt, scatter_kernel);
    r.add("TensorArrayBufferUnstack", DeviceType::kCPU, dt, unstack_kernel);
    r.add("TensorArrayBufferRead", DeviceType::kCPU, dt, read_kernel);
    r.add("TensorArrayBufferGather", DeviceType::kCPU, dt, gather_kernel);
    r.add("TensorArrayBufferSize", DeviceType::kCPU, dt, size_kernel);
  }
}

}  // namespace tapeflow::cpu
