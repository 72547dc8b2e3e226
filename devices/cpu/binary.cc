// CPU kernels of the binary elementwise family (eager/ops/binary.cc): arithmetic,
// comparisons and logic, with NumPy broadcasting. The math is in devices/functors.h.
#include <limits>

#include "absl/strings/str_cat.h"
#include "devices/cpu/broadcast.h"
#include "devices/cpu/register.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

template <typename T, typename Out, typename F>
absl::Status binary_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& y = ctx.input(1);
  DeviceTensor& z = ctx.output(0);
  const T* xp = x.data<T>();
  const T* yp = y.data<T>();
  Out* zp = z.data<Out>();
  const F f{};
  // Fast paths: equal shapes or a scalar operand need no broadcast plan.
  const int64_t n = z.num_elements(), nx = x.num_elements(), ny = y.num_elements();
  if (n == 1) {  // scalars (eager loops of scalar math): skip the vectorised loops' set-up
    *zp = f(*xp, *yp);
    return absl::OkStatus();
  }
  if ((nx == n && ny == n) || (nx == n && ny == 1) || (nx == 1 && ny == n)) {
    parallel_for(n, 1, [&](int64_t begin, int64_t end) {
      if (nx == n && ny == n) {
        for (int64_t i = begin; i < end; ++i) zp[i] = f(xp[i], yp[i]);
      } else if (ny == 1) {
        const T bv = *yp;
        for (int64_t i = begin; i < end; ++i) zp[i] = f(xp[i], bv);
      } else {
        const T av = *xp;
        for (int64_t i = begin; i < end; ++i) zp[i] = f(av, yp[i]);
      }
    });
    return absl::OkStatus();
  }
  auto plan = make_broadcast_plan<2>(z.shape, {&x.shape, &y.shape});
  for_each_row<2>(plan, 1, [&](int64_t o, const std::array<int64_t, 2>& off,
                               const std::array<int64_t, 2>& st, int64_t n) {
    const T* a = xp + off[0];
    const T* b = yp + off[1];
    Out* c = zp + o;
    // Specialised loops for the common stride patterns so each vectorises.
    if (st[0] == 1 && st[1] == 1) {
      for (int64_t i = 0; i < n; ++i) c[i] = f(a[i], b[i]);
    } else if (st[0] == 1 && st[1] == 0) {
      const T bv = *b;
      for (int64_t i = 0; i < n; ++i) c[i] = f(a[i], bv);
    } else if (st[0] == 0 && st[1] == 1) {
      const T av = *a;
      for (int64_t i = 0; i < n; ++i) c[i] = f(av, b[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) c[i] = f(a[i * st[0]], b[i * st[1]]);
    }
  });
  return absl::OkStatus();
}

// Integer division and modulo by zero is an error, not a crash (SIGFPE).
template <typename T, typename F>
absl::Status int_division_kernel(KernelContext& ctx) {
  const DeviceTensor& y = ctx.input(1);
  const T* yp = y.data<T>();
  for (int64_t i = 0, n = y.num_elements(); i < n; ++i) {
    if (yp[i] == 0) return absl::InvalidArgumentError("Integer division by zero");
  }
  return binary_kernel<T, T, F>(ctx);
}

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
