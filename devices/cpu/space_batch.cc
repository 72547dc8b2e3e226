// CPU kernels of SpaceToBatchND and BatchToSpaceND (eager/ops/space_batch.h). Both walk the
// batch side's rows, [batch * prod(block)] + blocked spatial dims, each a run of the remaining
// dims' elements: the row's padded spatial position comes from its block position and index;
// SpaceToBatchND copies that row of the input there or zeros where it falls in the padding,
// BatchToSpaceND copies it to the output unless it falls in the crops. One memcpy (or memset)
// per row; elements are moved as bytes (CarrierOf).
#include <cstring>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "devices/cpu/kernel_util.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

using Ints = std::vector<int64_t>;

template <typename U, bool kToBatch>
absl::Status space_batch_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  if (y.num_elements() == 0) return absl::OkStatus();
  const Ints& block = ctx.attrs.get<Ints>("block_shape");
  const Ints& margins = ctx.attrs.get<Ints>(kToBatch ? "paddings" : "crops");  // (first, second) pairs
  const Shape& space = kToBatch ? x.shape : y.shape;  // [batch, s_0 .. s_{M-1}, rest]
  const Shape& blocked = kToBatch ? y.shape : x.shape;  // [batch * P, t_0 .. t_{M-1}, rest]
  const int m = static_cast<int>(block.size());
  int64_t rest = 1, cells = 1;  // elements per row; blocked spatial positions per batch entry
  for (int d = m + 1; d < space.rank(); ++d) rest *= space.dim(d);
  for (int i = 0; i < m; ++i) cells *= blocked.dim(i + 1);
  const int64_t batch = space.dim(0), rows = blocked.dim(0) * cells;
  const size_t row_bytes = static_cast<size_t>(rest) * sizeof(U);
  const U* src = x.data<U>();
  U* dst = y.data<U>();
  parallel_for(rows, rest + 16, [&](int64_t r0, int64_t r1) {
    absl::InlinedVector<int64_t, 4> at(static_cast<size_t>(m));
    for (int64_t r = r0; r < r1; ++r) {
      // r = (block position * batch + b) * cells + cell; the block position's digits are
      // row-major over block_shape, as the cell's are over the blocked spatial dims.
      int64_t cell = r % cells, outer = r / cells;
      const int64_t b = outer % batch;
      int64_t position = outer / batch, space_row = b;
      bool inside = true;
      for (int i = m - 1; i >= 0; --i) {
        const int64_t t = cell % blocked.dim(i + 1), o = position % block[i];
        cell /= blocked.dim(i + 1), position /= block[i];
        at[static_cast<size_t>(i)] = t * block[i] + o - margins[2 * i];
        inside = inside && at[static_cast<size_t>(i)] >= 0 && at[static_cast<size_t>(i)] < space.dim(i + 1);
      }
      if (inside)
        for (int i = 0; i < m; ++i) space_row = space_row * space.dim(i + 1) + at[static_cast<size_t>(i)];
      if constexpr (kToBatch) {
        if (inside) std::memcpy(dst + r * rest, src + space_row * rest, row_bytes);
        else std::memset(dst + r * rest, 0, row_bytes);
      } else {
        if (inside) std::memcpy(dst + space_row * rest, src + r * rest, row_bytes);
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace

void register_space_batch_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "SpaceToBatchND", DeviceType::kCPU, []<typename T>() -> KernelFn { return space_batch_kernel<CarrierOf<T>, true>; });
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "BatchToSpaceND", DeviceType::kCPU, []<typename T>() -> KernelFn { return space_batch_kernel<CarrierOf<T>, false>; });
}

}  // namespace tapeflow::cpu
