// CPU kernels of the creation family (eager/ops/creation.cc): Fill, DynamicFill, ZerosLike,
// OnesLike, Range, DynamicRange and LinSpace. Values arrive as attributes, already validated by
// the shape functions (DynamicFill's and DynamicRange's as tensors).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "core/range_size.h"
#include "devices/cpu/kernel_util.h"
#include "devices/cpu/register.h"
#include "devices/functors.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

// A scalar attr as T: double for floating dtypes, int64 for integers, bool for bool.
// A scalar attribute (double, int64 or bool; fill_shape checked it is one) as T, saturating
// (Note [Float to integer casts]).
template <typename T> T attr_as(const AttrMap& attrs, const char* name) {
  const AttrValue* v = attrs.find(name);
  if (const double* d = std::get_if<double>(v)) return functors::saturate_cast<T>(*d);
  if (const int64_t* i = std::get_if<int64_t>(v)) return static_cast<T>(*i);
  return static_cast<T>(attrs.get<bool>(name));
}

template <typename T> void fill_with(DeviceTensor& out, T value) {
  T* y = out.data<T>();
  parallel_for(out.num_elements(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = value;
  });
}

template <typename T> absl::Status fill_kernel(KernelContext& ctx) {
  fill_with<T>(ctx.output(0), attr_as<T>(ctx.attrs, "value"));
  return absl::OkStatus();
}

// Note [Fills of run-time shape] (eager/ops/creation.cc): the output's dims are input 0's values.
template <typename T> absl::Status dynamic_fill_kernel(KernelContext& ctx) {
  const DeviceTensor& dims = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  out.dtype = ctx.input(1).dtype;
  std::vector<int64_t> shape(static_cast<size_t>(dims.num_elements()));
  with_index_type(dims.dtype, [&]<typename Index>() { std::copy_n(dims.data<Index>(), shape.size(), shape.begin()); });
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] dims must be non-negative, got ", shape[i], " at ", i));
  }
  out.shape = Shape(shape);
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));  // checked against the tensor size limit
  fill_with<T>(out, *ctx.input(1).data<T>());
  return absl::OkStatus();
}

template <typename T, int kValue> absl::Status constant_like_kernel(KernelContext& ctx) {
  fill_with<T>(ctx.output(0), static_cast<T>(kValue));
  return absl::OkStatus();
}

// out[i] = start + i * delta. Integers: int64 bounds in wrapping unsigned arithmetic (every
// value lies between start and limit, but i * delta alone may not fit).
template <typename T, typename Bound> void fill_range(DeviceTensor& out, Bound start, Bound delta) {
  T* y = out.data<T>();
  if constexpr (std::is_integral_v<T>) {
    const uint64_t s = static_cast<uint64_t>(start), d = static_cast<uint64_t>(delta);
    parallel_for(out.num_elements(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = static_cast<T>(s + static_cast<uint64_t>(i) * d);
    });
  } else {
    const T s = static_cast<T>(start), d = static_cast<T>(delta);
    parallel_for(out.num_elements(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = s + static_cast<T>(i) * d;
    });
  }
}

template <typename T> absl::Status range_kernel(KernelContext& ctx) {
  if constexpr (std::is_integral_v<T>) fill_range<T>(ctx.output(0), ctx.attrs.get<int64_t>("start"), ctx.attrs.get<int64_t>("delta"));
  else fill_range<T>(ctx.output(0), ctx.attrs.get<double>("start"), ctx.attrs.get<double>("delta"));
  return absl::OkStatus();
}

// Note [Fills of run-time shape] (eager/ops/creation.cc): the bounds are input tensors; the
// output's length is range_size's (core/range_size.h), as Range's shape function computes it.
template <typename T> absl::Status dynamic_range_kernel(KernelContext& ctx) {
  using Bound = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
  const Bound start = *ctx.input(0).data<T>(), limit = *ctx.input(1).data<T>(), delta = *ctx.input(2).data<T>();
  TF_ASSIGN_OR_RETURN(const int64_t n, range_size<Bound>(ctx.op, start, limit, delta));
  DeviceTensor& out = ctx.output(0);
  out.dtype = ctx.input(0).dtype;
  out.shape = Shape{n};
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));  // checked against the tensor size limit
  fill_range<T>(out, start, delta);
  return absl::OkStatus();
}

// TensorFlow's formula: start + i * step, with the last value exactly stop.
template <typename T> absl::Status linspace_kernel(KernelContext& ctx) {
  DeviceTensor& out = ctx.output(0);
  T* y = out.data<T>();
  const int64_t n = out.num_elements();
  const T start = static_cast<T>(ctx.attrs.get<double>("start"));
  const T stop = static_cast<T>(ctx.attrs.get<double>("stop"));
  if (n == 1) {
    y[0] = start;
    return absl::OkStatus();
  }
  const T step = (stop - start) / static_cast<T>(n - 1);
  parallel_for(n - 1, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = start + step * static_cast<T>(i);
  });
  y[n - 1] = stop;
  return absl::OkStatus();
}

}  // namespace

void register_creation_kernels(KernelRegistry& r) {
  constexpr DeviceType kCPU = DeviceType::kCPU;
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "Fill", kCPU, []<typename T>() -> KernelFn { return fill_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "DynamicFill", kCPU, []<typename T>() -> KernelFn { return dynamic_fill_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "ZerosLike", kCPU, []<typename T>() -> KernelFn { return constant_like_kernel<T, 0>; });
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "OnesLike", kCPU, []<typename T>() -> KernelFn { return constant_like_kernel<T, 1>; });
  register_each<float, double, int32_t, int64_t>(
      r, "Range", kCPU, []<typename T>() -> KernelFn { return range_kernel<T>; });
  register_each<float, double, int32_t, int64_t>(
      r, "DynamicRange", kCPU, []<typename T>() -> KernelFn { return dynamic_range_kernel<T>; });
  register_each<float, double>(r, "LinSpace", kCPU, []<typename T>() -> KernelFn { return linspace_kernel<T>; });
}

}  // namespace tapeflow::cpu
