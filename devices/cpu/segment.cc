// CPU kernel of unsorted_segment_sum: a serial scatter-add over rows (ids may repeat, so rows
// are not split across threads).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "devices/cpu/kernel_util.h"
#include "devices/cpu/register.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {
template <typename T, typename Index>
absl::Status scatter_add(KernelContext& ctx) {
  const DeviceTensor& data = ctx.input(0);
  const Index* ids = ctx.input(1).data<Index>();
  DeviceTensor& out = ctx.output(0);
  const int64_t rows = data.shape.dim(0);
  const int64_t segments = out.shape.dim(0);
  const int64_t inner = rows == 0 ? 0 : data.num_elements() / rows;
  for (int64_t i = 0; i < rows; ++i) {
    if (ids[i] < 0 || ids[i] >= segments)
      return absl::InvalidArgumentError(absl::StrCat("segment_ids[", i, "] = ", ids[i], " is not in [0, ",
                                                     segments, ")"));
  }
  T* o = out.data<T>();
  std::memset(static_cast<void*>(o), 0, out.bytes());
  const T* d = data.data<T>();
  for (int64_t i = 0; i < rows; ++i) {
    T* dst = o + static_cast<int64_t>(ids[i]) * inner;
    const T* src = d + i * inner;
    for (int64_t j = 0; j < inner; ++j) dst[j] = functors::wrap_add(dst[j], src[j]);  // Note [Integer wrap-around]
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status segment_sum_kernel(KernelContext& ctx) {
  return with_index_type(ctx.input(1).dtype, [&]<typename Index>() { return scatter_add<T, Index>(ctx); });
}
}  // namespace

void register_segment_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "UnsortedSegmentSum", DeviceType::kCPU, []<typename T>() -> KernelFn { return segment_sum_kernel<T>; });
}

}  // namespace tapeflow::cpu
