// CPU kernels of the math family (eager/ops/math.cc). The elementwise math is in
// devices/functors.h (shared with the CUDA kernels); the broadcasting loop in binary_kernel.h.
#include <cstring>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cpu/binary_kernel.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/cpu/unary_kernel.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"
#include "devices/numerics.h"

namespace tapeflow::cpu {

namespace {

// Elements per parallel_for grain unit: a compare or rounding, or a transcendental.
constexpr int kCheap = 2, kTranscendental = 20;

template <typename F, int Cost = kTranscendental>
void register_floating(KernelRegistry& r, const char* op) {
  register_each<float, double>(r, op, DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return unary_kernel<T, T, F, Cost>; });
}
template <typename F>
void register_predicate(KernelRegistry& r, const char* op) {
  register_each<float, double>(r, op, DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return unary_kernel<T, bool, F, kCheap>; });
}

// CheckNumerics: the input's bytes, once devices/numerics.h found them all finite.
absl::Status check_numerics_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  TF_RETURN_IF_ERROR(check_finite(x, absl::StrCat(ctx.attrs.get<std::string>("message"), " : Tensor")));
  if (x.bytes() > 0) std::memcpy(ctx.output(0).raw(), x.raw(), x.bytes());
  return absl::OkStatus();
}

// AddN: every input has the output's shape (the shape function checked it). Each element is
// read from every input before it is written: the executor may hand an input's buffer over as
// the output (PlanStep::reuse_input).
template <typename T>
absl::Status add_n_kernel(KernelContext& ctx) {
  T* out = ctx.output(0).data<T>();
  absl::InlinedVector<const T*, 8> in;
  for (const DeviceTensor* t : ctx.inputs) in.push_back(t->data<T>());
  parallel_for(ctx.output(0).num_elements(), static_cast<int>(in.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T acc = in[0][i];
      for (size_t k = 1; k < in.size(); ++k) acc = functors::wrap_add(acc, in[k][i]);
      out[i] = acc;
    }
  });
  return absl::OkStatus();
}

// ClipByValue: each bound a scalar or of t's shape (the shape function checked it). max then
// min, as maximum/minimum would: NaN in t passes through.
template <typename T>
absl::Status clip_kernel(KernelContext& ctx) {
  const T* x = ctx.input(0).data<T>();
  const T* lo = ctx.input(1).data<T>();
  const T* hi = ctx.input(2).data<T>();
  const int64_t lo_step = ctx.input(1).num_elements() == 1 ? 0 : 1;
  const int64_t hi_step = ctx.input(2).num_elements() == 1 ? 0 : 1;
  T* out = ctx.output(0).data<T>();
  const functors::Maximum max_f{};
  const functors::Minimum min_f{};
  parallel_for(ctx.output(0).num_elements(), kCheap, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = min_f(max_f(x[i], lo[i * lo_step]), hi[i * hi_step]);
  });
  return absl::OkStatus();
}

}  // namespace

void register_math_kernels(KernelRegistry& r) {
  register_floating<functors::Reciprocal, kCheap>(r, "Reciprocal");
  register_floating<functors::Expm1>(r, "Expm1");
  register_floating<functors::Sin>(r, "Sin");
  register_floating<functors::Cos>(r, "Cos");
  register_floating<functors::Tan>(r, "Tan");
  register_floating<functors::Asin>(r, "Asin");
  register_floating<functors::Acos>(r, "Acos");
  register_floating<functors::Atan>(r, "Atan");
  register_floating<functors::Sinh>(r, "Sinh");
  register_floating<functors::Cosh>(r, "Cosh");
  register_floating<functors::Asinh>(r, "Asinh");
  register_floating<functors::Acosh>(r, "Acosh");
  register_floating<functors::Atanh>(r, "Atanh");
  register_floating<functors::Erf>(r, "Erf");
  register_floating<functors::Erfc>(r, "Erfc");
  register_floating<functors::Ceil, kCheap>(r, "Ceil");
  register_floating<functors::RoundHalfEven, kCheap>(r, "Rint");
  register_each<float, double, int32_t, int64_t>(r, "Round", DeviceType::kCPU, []<typename T>() -> KernelFn {
    return unary_kernel<T, T, functors::RoundHalfEven, kCheap>;
  });
  register_predicate<functors::IsNan>(r, "IsNan");
  register_predicate<functors::IsInf>(r, "IsInf");
  register_predicate<functors::IsFinite>(r, "IsFinite");

  register_each<float, double, int32_t, int64_t>(r, "SquaredDifference", DeviceType::kCPU, []<typename T>() -> KernelFn {
    return binary_kernel<T, T, functors::SquaredDifference>;
  });
  register_each<float, double>(r, "Atan2", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return binary_kernel<T, T, functors::Atan2>; });
  for (DType dt : {DType::kFloat32, DType::kFloat64}) r.add("CheckNumerics", DeviceType::kCPU, dt, check_numerics_kernel);
  register_each<float, double>(r, "Xlogy", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return binary_kernel<T, T, functors::Xlogy>; });
  register_each<float, double>(r, "Xdivy", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return binary_kernel<T, T, functors::Xdivy>; });
  register_each<float, double>(r, "DivNoNan", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return binary_kernel<T, T, functors::DivNoNan>; });
  register_each<int32_t, int64_t, uint8_t>(r, "TruncateDiv", DeviceType::kCPU, []<typename T>() -> KernelFn {
    return int_division_kernel<T, functors::Div>;  // Div's integer branch truncates
  });
  register_each<int32_t, int64_t>(r, "TruncateMod", DeviceType::kCPU, []<typename T>() -> KernelFn {
    return int_division_kernel<T, functors::TruncateMod>;
  });
  register_each<float, double>(r, "TruncateMod", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return binary_kernel<T, T, functors::TruncateMod>; });

  register_each<float, double, int32_t, int64_t, uint8_t>(r, "AddN", DeviceType::kCPU,
                                                          []<typename T>() -> KernelFn { return add_n_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(r, "ClipByValue", DeviceType::kCPU,
                                                          []<typename T>() -> KernelFn { return clip_kernel<T>; });
}

}  // namespace tapeflow::cpu
