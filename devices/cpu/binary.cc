// CPU kernels of the binary elementwise family (eager/ops/binary.cc): arithmetic,
// comparisons and logic, with NumPy broadcasting. The math is in devices/functors.h.
#include <limits>

#include "absl/strings/str_cat.h"
#include "devices/cpu/binary_kernel.h"
#include "devices/cpu/register.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

template <typename T>
absl::Status int_pow_kernel(KernelContext& ctx) {
  if constexpr (std::is_signed_v<T>) {
    const DeviceTensor& y = ctx.input(1);
    const T* yp = y.data<T>();
    for (int64_t i = 0, n = y.num_elements(); i < n; ++i) {
      if (yp[i] < 0) return absl::InvalidArgumentError("Integers to negative integer powers are not allowed");
    }
  }
  return binary_kernel<T, T, functors::Pow>(ctx);
}

template <typename F>
void register_arith(KernelRegistry& r, const char* op) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, op, DeviceType::kCPU, []<typename T>() -> KernelFn { return binary_kernel<T, T, F>; });
}

template <typename F>
void register_floating(KernelRegistry& r, const char* op) {
  register_each<float, double>(r, op, DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return binary_kernel<T, T, F>; });
}

template <typename F>
void register_compare(KernelRegistry& r, const char* op, bool with_bool) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, op, DeviceType::kCPU, []<typename T>() -> KernelFn { return binary_kernel<T, bool, F>; });
  if (with_bool) r.add(op, DeviceType::kCPU, DType::kBool, binary_kernel<bool, bool, F>);
}

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
  register_arith<functors::Add>(r, "Add");
  register_arith<functors::Sub>(r, "Sub");
  register_arith<functors::Mul>(r, "Mul");
  register_arith<functors::Maximum>(r, "Maximum");
  register_arith<functors::Minimum>(r, "Minimum");
  register_floating<functors::Div>(r, "Div");
  register_floating<functors::FloorDiv>(r, "FloorDiv");
  register_floating<functors::FloorMod>(r, "FloorMod");
  register_floating<functors::Pow>(r, "Pow");
  register_each<int32_t, int64_t, uint8_t>(r, "Div", DeviceType::kCPU,
      []<typename T>() -> KernelFn { return int_division_kernel<T, functors::Div>; });
  register_each<int32_t, int64_t, uint8_t>(r, "FloorDiv", DeviceType::kCPU,
      []<typename T>() -> KernelFn { return int_division_kernel<T, functors::FloorDiv>; });
  register_each<int32_t, int64_t, uint8_t>(r, "FloorMod", DeviceType::kCPU,
      []<typename T>() -> KernelFn { return int_division_kernel<T, functors::FloorMod>; });
  register_each<int32_t, int64_t, uint8_t>(r, "Pow", DeviceType::kCPU,
      []<typename T>() -> KernelFn { return int_pow_kernel<T>; });

  register_compare<functors::Equal>(r, "Equal", true);
  register_compare<functors::NotEqual>(r, "NotEqual", true);
  register_compare<functors::Less>(r, "Less", false);
  register_compare<functors::LessEqual>(r, "LessEqual", false);
  register_compare<functors::Greater>(r, "Greater", false);
  register_compare<functors::GreaterEqual>(r, "GreaterEqual", false);
  r.add("LogicalAnd", DeviceType::kCPU, DType::kBool, binary_kernel<bool, bool, functors::LogicalAnd>);
  r.add("LogicalOr", DeviceType::kCPU, DType::kBool, binary_kernel<bool, bool, functors::LogicalOr>);
}

}  // namespace tapeflow::cpu
