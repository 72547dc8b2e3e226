// CPU kernels of the random family (eager/ops/random.cc). The generator and distributions
// are in devices/philox.h; see Note [Random element layout] there. Work is split over
// Philox blocks, so the thread count never changes the values.
#include <algorithm>
#include <cmath>

#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"
#include "devices/philox.h"

namespace tapeflow::cpu {

namespace {

philox::Stream stream_of(const KernelContext& ctx) {
  return philox::Stream(static_cast<uint64_t>(ctx.attrs.get<int64_t>("seed")),
                        static_cast<uint64_t>(ctx.attrs.get<int64_t>("seed2")));
}

// Calls gen(block, out, count) for every block, where out points at the block's first
// element and count (<= K) is how many of its elements exist.
template <int K, int kCostPerBlock, typename T, typename Gen>
void for_each_block(const philox::Stream& s, T* y, int64_t n, Gen gen) {
  const int64_t blocks = (n + K - 1) / K;
  parallel_for(blocks, kCostPerBlock, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t first = b * K;
      gen(s.block(static_cast<uint64_t>(b)), y + first, std::min<int64_t>(K, n - first));
    }
  });
}

template <typename T> absl::Status uniform_float_kernel(KernelContext& ctx) {
  DeviceTensor& out = ctx.output(0);
  const T lo = static_cast<T>(ctx.attrs.get_or<double>("minval", 0.0));  // absent: TensorFlow's [0, 1)
  const T hi = static_cast<T>(ctx.attrs.get_or<double>("maxval", 1.0));
  const T scale = hi - lo;
  // lo + u * scale can round up to hi; keep the interval half-open. (minval > maxval is
  // allowed, as in TensorFlow, and gives values in (maxval, minval]: no clamp then.)
  const bool clamp = lo < hi;
  const T below_hi = clamp ? std::nextafter(hi, lo) : hi;
  constexpr int K = sizeof(T) == 4 ? 4 : 2;
  for_each_block<K, 40>(stream_of(ctx), out.data<T>(), out.num_elements(),
                        [&](const philox::Block& r, T* y, int64_t m) {
    for (int64_t j = 0; j < m; ++j) {
      T u;
      if constexpr (K == 4) u = philox::uniform01<T>(r.v[j]);
      else u = philox::uniform01<T>(r.v[2 * j], r.v[2 * j + 1]);
      const T v = lo + u * scale;
      y[j] = clamp && v > below_hi ? below_hi : v;
    }
  });
  return absl::OkStatus();
}

template <typename T> absl::Status uniform_int_kernel(KernelContext& ctx) {
  DeviceTensor& out = ctx.output(0);
  const int64_t lo64 = ctx.attrs.get<int64_t>("minval");
  const uint64_t span = static_cast<uint64_t>(ctx.attrs.get<int64_t>("maxval")) - static_cast<uint64_t>(lo64);
  const T lo = static_cast<T>(lo64);
  constexpr int K = sizeof(T) == 4 ? 4 : 2;
  for_each_block<K, 40>(stream_of(ctx), out.data<T>(), out.num_elements(),
                        [&](const philox::Block& r, T* y, int64_t m) {
    for (int64_t j = 0; j < m; ++j) {
      if constexpr (K == 4) y[j] = philox::uniform_int<T>(lo, span, r.v[j], 0);
      else y[j] = philox::uniform_int<T>(lo, span, r.v[2 * j], r.v[2 * j + 1]);
    }
  });
  return absl::OkStatus();
}

template <typename T> absl::Status normal_kernel(KernelContext& ctx) {
  DeviceTensor& out = ctx.output(0);
  const T mean = static_cast<T>(ctx.attrs.get<double>("mean"));
  const T stddev = static_cast<T>(ctx.attrs.get<double>("stddev"));
  constexpr int K = philox::kNormalsPerBlock<T>;
  for_each_block<K, 200>(stream_of(ctx), out.data<T>(), out.num_elements(),
                        [&](const philox::Block& r, T* y, int64_t m) {
    T z[4];
    philox::normals<T>(r, z);
    for (int64_t j = 0; j < m; ++j) y[j] = mean + stddev * z[j];
  });
  return absl::OkStatus();
}

template <typename T> absl::Status truncated_normal_kernel(KernelContext& ctx) {
  DeviceTensor& out = ctx.output(0);
  const T mean = static_cast<T>(ctx.attrs.get<double>("mean"));
  const T stddev = static_cast<T>(ctx.attrs.get<double>("stddev"));
  const philox::Stream s = stream_of(ctx);
  T* y = out.data<T>();
  parallel_for(out.num_elements(), 200, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = mean + stddev * philox::truncated_normal<T>(s, static_cast<uint64_t>(i));
  });
  return absl::OkStatus();
}

}  // namespace

void register_random_kernels(KernelRegistry& r) {
  constexpr DeviceType kCPU = DeviceType::kCPU;
  register_each<float, double>(r, "RandomUniform", kCPU,
                               []<typename T>() -> KernelFn { return uniform_float_kernel<T>; });
  register_each<int32_t, int64_t>(r, "RandomUniform", kCPU,
                                  []<typename T>() -> KernelFn { return uniform_int_kernel<T>; });
  register_each<float, double>(r, "RandomNormal", kCPU, []<typename T>() -> KernelFn { return normal_kernel<T>; });
  register_each<float, double>(r, "TruncatedNormal", kCPU,
                               []<typename T>() -> KernelFn { return truncated_normal_kernel<T>; });
}

}  // namespace tapeflow::cpu
