// CPU kernels of the scan family (eager/ops/scan.cc): Cumsum and Cumprod along one axis, viewed
// as an (outer, R, inner) block; each task scans a tile of up to kTile adjacent columns of one
// outer slice, so the inner loop runs over contiguous elements.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

constexpr int64_t kTile = 1024;

struct SumScan {
  template <typename T> static T identity() { return T(0); }
  template <typename T> static T apply(T a, T b) { return functors::wrap_add(a, b); }
};
struct ProdScan {
  template <typename T> static T identity() { return T(1); }
  template <typename T> static T apply(T a, T b) { return functors::wrap_mul(a, b); }
};

template <typename T, typename Op>
absl::Status scan_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  const int rank = x.shape.rank();
  int64_t axis = ctx.attrs.get<int64_t>("axis");
  if (rank == 0 || axis < -rank || axis >= rank)  // validated again: a kernel never trusts attrs
    return absl::InvalidArgumentError(absl::StrCat("invalid axis ", axis, " for rank ", rank));
  if (axis < 0) axis += rank;
  const bool exclusive = ctx.attrs.get<bool>("exclusive"), reverse = ctx.attrs.get<bool>("reverse");
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.shape.dim(i);
  for (int i = static_cast<int>(axis) + 1; i < rank; ++i) inner *= x.shape.dim(i);
  const int64_t R = x.shape.dim(static_cast<int>(axis));
  if (x.num_elements() == 0) return absl::OkStatus();
  const T* in = x.data<T>();
  T* out = ctx.output(0).data<T>();
  const int64_t tile = std::min(inner, kTile), ntiles = (inner + tile - 1) / tile;
  parallel_for(outer * ntiles, R * tile, [&](int64_t begin, int64_t end) {
    std::vector<T> acc;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / ntiles, i0 = (t % ntiles) * tile, w = std::min(tile, inner - i0);
      acc.assign(static_cast<size_t>(w), Op::template identity<T>());
      for (int64_t step = 0; step < R; ++step) {
        const int64_t r = reverse ? R - 1 - step : step;
        const T* src = in + (o * R + r) * inner + i0;
        T* dst = out + (o * R + r) * inner + i0;
        for (int64_t i = 0; i < w; ++i) {
          const T next = Op::apply(acc[i], src[i]);
          dst[i] = exclusive ? acc[i] : next;
          acc[i] = next;
        }
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace

void register_scan_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "Cumsum", DeviceType::kCPU, []<typename T>() -> KernelFn { return scan_kernel<T, SumScan>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "Cumprod", DeviceType::kCPU, []<typename T>() -> KernelFn { return scan_kernel<T, ProdScan>; });
}

}  // namespace tapeflow::cpu
