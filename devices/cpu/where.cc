// CPU kernel of where (Select) with three-way broadcasting.
#include <cstdint>

#include "core/errors.h"
#include "devices/cpu/broadcast.h"
#include "devices/cpu/register.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

// out = c ? x : y over one row with a contiguous condition; x and y step through the row or
// stay on one element (a scalar branch, as relu's gradient where(x >= 0, dy, 0)). The choice is
// a bit mask, so the loop vectorises instead of branching on every element: a branch per
// element measured 20-30 us for 64x256 floats under a random condition (mispredicted half the
// time), against 3-4 us for greater_equal on the same shape; the mask measured 4.5-4.9 us.
// No __restrict: the graph executor may write the output into x's or y's buffer.

// The element's bits, read through a type that may alias T (so the mask works on any dtype).
template <int kSize> struct AliasBits;
template <> struct AliasBits<1> { using type = uint8_t; };
template <> struct AliasBits<4> { typedef uint32_t __attribute__((may_alias)) type; };
template <> struct AliasBits<8> { typedef uint64_t __attribute__((may_alias)) type; };

template <typename T, bool kXSteps, bool kYSteps>
void select_row(const bool* c, const T* xp, const T* yp, T* op, int64_t n) {
  using Bits = typename AliasBits<sizeof(T)>::type;
  const uint8_t* cond = reinterpret_cast<const uint8_t*>(c);
  const Bits* x = reinterpret_cast<const Bits*>(xp);
  const Bits* y = reinterpret_cast<const Bits*>(yp);
  Bits* out = reinterpret_cast<Bits*>(op);
  for (int64_t i = 0; i < n; ++i) {
    const Bits mask = static_cast<Bits>(Bits(0) - static_cast<Bits>(cond[i]));
    out[i] = static_cast<Bits>((x[kXSteps ? i : 0] & mask) | (y[kYSteps ? i : 0] & ~mask));
  }
}

template <typename T>
absl::Status select_kernel(KernelContext& ctx) {
  const bool* c = ctx.input(0).data<bool>();
  const T* x = ctx.input(1).data<T>();
  const T* y = ctx.input(2).data<T>();
  T* out = ctx.output(0).data<T>();
  auto plan = make_broadcast_plan<3>(ctx.output(0).shape, {&ctx.input(0).shape, &ctx.input(1).shape,
                                                           &ctx.input(2).shape});
  for_each_row<3>(plan, 1, [&](int64_t o, const std::array<int64_t, 3>& off, const std::array<int64_t, 3>& st,
                               int64_t n) {
    const bool* cr = c + off[0];
    const T* xr = x + off[1];
    const T* yr = y + off[2];
    if (st[0] == 1 && st[1] == 1 && st[2] == 1) return select_row<T, true, true>(cr, xr, yr, out + o, n);
    if (st[0] == 1 && st[1] == 1 && st[2] == 0) return select_row<T, true, false>(cr, xr, yr, out + o, n);
    if (st[0] == 1 && st[1] == 0 && st[2] == 1) return select_row<T, false, true>(cr, xr, yr, out + o, n);
    for (int64_t i = 0; i < n; ++i) {
      const T xi = xr[i * st[1]], yi = yr[i * st[2]];
      out[o + i] = cr[i * st[0]] ? xi : yi;
    }
  });
  return absl::OkStatus();
}
// Where(condition): counts the true elements, allocates [n, rank] (Note [Data-dependent output
// shapes]), then writes each one's coordinates in row-major order.
template <typename T>
absl::Status coordinates_kernel(KernelContext& ctx) {
  const DeviceTensor& c = ctx.input(0);
  const T* p = c.data<T>();
  const int64_t total = c.num_elements();
  const int rank = c.shape.rank();
  int64_t n = 0;
  for (int64_t i = 0; i < total; ++i) n += p[i] != T(0);
  DeviceTensor& out = ctx.output(0);
  out.dtype = DType::kInt64;
  out.shape = Shape{n, rank};
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0; i < total; ++i) {
    if (!(p[i] != T(0))) continue;
    for (int64_t d = rank - 1, rem = i; d >= 0; --d) {
      const int64_t dim = c.shape.dim(static_cast<int>(d));
      o[d] = rem % dim;
      rem /= dim;
    }
    o += rank;
  }
  return absl::OkStatus();
}

}  // namespace

void register_where_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "Where", DeviceType::kCPU, []<typename T>() -> KernelFn { return coordinates_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "Select", DeviceType::kCPU, []<typename T>() -> KernelFn { return select_kernel<T>; });
}

}  // namespace tapeflow::cpu
