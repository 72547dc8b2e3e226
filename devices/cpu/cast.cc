// CPU kernels of cast: one per (source, destination) dtype pair, keyed by the source dtype.
#include <type_traits>

#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {
template <typename From, typename To>
void convert(const From* in, To* out, int64_t n) {
  parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if constexpr (std::is_same_v<To, bool>) out[i] = in[i] != From(0);
      else out[i] = functors::saturate_cast<To>(in[i]);  // Note [Float to integer casts]
    }
  });
}

template <typename From>
absl::Status cast_kernel(KernelContext& ctx) {
  const From* in = ctx.input(0).data<From>();
  const int64_t n = ctx.input(0).num_elements();
  dispatch_dtype(ctx.output(0).dtype, [&]<typename To>() { convert<From, To>(in, ctx.output(0).data<To>(), n); });
  return absl::OkStatus();
}
}  // namespace

void register_cast_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "Cast", DeviceType::kCPU, []<typename T>() -> KernelFn { return cast_kernel<T>; });
}

}  // namespace tapeflow::cpu
