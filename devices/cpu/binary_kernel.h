// The CPU's broadcasting binary elementwise loop, shared by the binary family
// (devices/cpu/binary.cc) and the math family (devices/cpu/math.cc): z = F(x, y) with NumPy
// broadcasting, and the integer-division variant that rejects a zero divisor.
#pragma once

#include "absl/status/status.h"
#include "devices/cpu/broadcast.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

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

}  // namespace tapeflow::cpu
