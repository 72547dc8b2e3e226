// CPU kernels of the resize family (eager/ops/resize.cc): ResizeBilinear,
// ResizeNearestNeighbor and their gradients, with TensorFlow's arithmetic: scales and source
// coordinates in float32 (so the chosen pixels and weights are TensorFlow's bit for bit), NHWC,
// channels innermost.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "devices/cpu/resize.h"

#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

// TensorFlow's CalculateResizeScale.
float resize_scale(int64_t in, int64_t out, bool align_corners) {
  return (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
}

// One output coordinate's two source pixels and the weight of the second.
struct Interp {
  int64_t lower, upper;
  float lerp;
};

// TensorFlow's compute_interpolation_weights: HalfPixelScaler or LegacyScaler, then
// lower = max(floor(in), 0), upper = min(ceil(in), in_size - 1), lerp = in - floor(in).
std::vector<Interp> interpolation(int64_t out, int64_t in, float scale, bool half_pixel) {
  std::vector<Interp> w(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float src = half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const float f = std::floor(src);
    w[i] = {std::max<int64_t>(static_cast<int64_t>(f), 0), std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1),
            src - f};
  }
  return w;
}

// TensorFlow's nearest-neighbour source index: round (half away from zero) with align_corners,
// floor otherwise, of x * scale (legacy) or (x + 0.5) * scale (half-pixel, then at least 0);
// at most in - 1.
std::vector<int64_t> nearest(int64_t out, int64_t in, float scale, bool align_corners, bool half_pixel) {
  std::vector<int64_t> idx(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    const float src = half_pixel ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
    int64_t k = std::min<int64_t>(align_corners ? static_cast<int64_t>(std::round(src)) : static_cast<int64_t>(std::floor(src)),
                                  in - 1);
    if (half_pixel) k = std::max<int64_t>(k, 0);
    idx[i] = k;
  }
  return idx;
}

struct Flags {
  bool align_corners, half_pixel;
};
Flags flags(const KernelContext& ctx) {
  return {ctx.attrs.get<bool>("align_corners"), ctx.attrs.get<bool>("half_pixel_centers")};
}

// The forward image geometry: small [n, h, w, c] and the resized [n, oh, ow, c].
struct Dims {
  int64_t n, h, w, c, oh, ow;
};

// The geometry and, per output row (ys) and column (xs), where it samples the small image:
// Interp for bilinear, the source index for nearest, under the call's flags. The forward and
// gradient kernels of one method sample alike.
template <bool kBilinear>
struct Sampling {
  using Axis = std::vector<std::conditional_t<kBilinear, Interp, int64_t>>;
  Dims d;
  Axis ys, xs;
};

template <bool kBilinear>
Sampling<kBilinear> sampling(const KernelContext& ctx, const Shape& small, const Shape& resized) {
  const Dims d{small.dim(0), small.dim(1), small.dim(2), small.dim(3), resized.dim(1), resized.dim(2)};
  const Flags f = flags(ctx);
  auto axis = [&](int64_t out, int64_t in) {
    if constexpr (kBilinear) {
      return interpolation(out, in, resize_scale(in, out, f.align_corners), f.half_pixel);
    } else {
      return nearest(out, in, resize_scale(in, out, f.align_corners), f.align_corners, f.half_pixel);
    }
  };
  return {d, axis(d.oh, d.h), axis(d.ow, d.w)};
}

// A gradient kernel's output, zero-filled: each grads pixel adds into it.
template <typename T>
T* zeroed_output(KernelContext& ctx) {
  DeviceTensor& out = ctx.output(0);
  T* dx = out.data<T>();
  std::fill(dx, dx + out.num_elements(), T(0));
  return dx;
}

// In: the image's element type. Integer images interpolate in float32 and give float32, as in
// TensorFlow (float64 images stay float64: eager/ops/resize.h).
template <typename In>
absl::Status resize_bilinear_kernel(KernelContext& ctx) {
  using T = std::conditional_t<std::is_same_v<In, double>, double, float>;
  const DeviceTensor& in = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  if (out.num_elements() == 0) return absl::OkStatus();
  const auto [d, ys, xs] = sampling<true>(ctx, in.shape, out.shape);
  const In* x = in.data<In>();
  T* y = out.data<T>();
  parallel_for(d.n * d.oh, d.ow * d.c * 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / d.oh, oy = r % d.oh;
      const In* top = x + (b * d.h + ys[oy].lower) * d.w * d.c;
      const In* bottom = x + (b * d.h + ys[oy].upper) * d.w * d.c;
      const T yl = static_cast<T>(ys[oy].lerp);
      for (int64_t ox = 0; ox < d.ow; ++ox) {
        const T xl = static_cast<T>(xs[ox].lerp);
        const int64_t l = xs[ox].lower * d.c, u = xs[ox].upper * d.c;
        T* o = y + (r * d.ow + ox) * d.c;
        for (int64_t ch = 0; ch < d.c; ++ch) {
          const T tl = static_cast<T>(top[l + ch]), bl = static_cast<T>(bottom[l + ch]);
          const T t = tl + (static_cast<T>(top[u + ch]) - tl) * xl;
          const T bt = bl + (static_cast<T>(bottom[u + ch]) - bl) * xl;
          o[ch] = t + (bt - t) * yl;
        }
      }
    }
  });
  return absl::OkStatus();
}

// ResizeBilinearGrad: inputs grads (resized), original_image; the adjoint of the forward
// interpolation, each image on one task.
template <typename T>
absl::Status resize_bilinear_grad_kernel(KernelContext& ctx) {
  const DeviceTensor& grads = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  T* dx = zeroed_output<T>(ctx);
  if (out.num_elements() == 0 || grads.num_elements() == 0) return absl::OkStatus();
  const auto [d, ys, xs] = sampling<true>(ctx, out.shape, grads.shape);
  const T* g = grads.data<T>();
  parallel_for(d.n, d.oh * d.ow * d.c * 8, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      for (int64_t oy = 0; oy < d.oh; ++oy) {
        T* top = dx + (b * d.h + ys[oy].lower) * d.w * d.c;
        T* bottom = dx + (b * d.h + ys[oy].upper) * d.w * d.c;
        const T yl = static_cast<T>(ys[oy].lerp), iy = T(1) - yl;
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          const T xl = static_cast<T>(xs[ox].lerp), ix = T(1) - xl;
          const int64_t l = xs[ox].lower * d.c, u = xs[ox].upper * d.c;
          const T* gr = g + ((b * d.oh + oy) * d.ow + ox) * d.c;
          for (int64_t ch = 0; ch < d.c; ++ch) {
            top[l + ch] += gr[ch] * iy * ix;
            top[u + ch] += gr[ch] * iy * xl;
            bottom[l + ch] += gr[ch] * yl * ix;
            bottom[u + ch] += gr[ch] * yl * xl;
          }
        }
      }
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status resize_nearest_kernel(KernelContext& ctx) {
  const DeviceTensor& in = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  if (out.num_elements() == 0) return absl::OkStatus();
  const auto [d, ys, xs] = sampling<false>(ctx, in.shape, out.shape);
  const T* x = in.data<T>();
  T* y = out.data<T>();
  parallel_for(d.n * d.oh, d.ow * d.c, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / d.oh, oy = r % d.oh;
      for (int64_t ox = 0; ox < d.ow; ++ox)
        std::copy_n(x + ((b * d.h + ys[oy]) * d.w + xs[ox]) * d.c, d.c, y + (r * d.ow + ox) * d.c);
    }
  });
  return absl::OkStatus();
}

// ResizeNearestNeighborGrad: input grads (resized), size attr; each grads pixel adds into the
// pixel the forward pass read it from.
template <typename T>
absl::Status resize_nearest_grad_kernel(KernelContext& ctx) {
  const DeviceTensor& grads = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  T* dx = zeroed_output<T>(ctx);
  if (out.num_elements() == 0 || grads.num_elements() == 0) return absl::OkStatus();
  const auto [d, ys, xs] = sampling<false>(ctx, out.shape, grads.shape);
  const T* g = grads.data<T>();
  parallel_for(d.n, d.oh * d.ow * d.c, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      for (int64_t oy = 0; oy < d.oh; ++oy)
        for (int64_t ox = 0; ox < d.ow; ++ox) {
          T* p = dx + ((b * d.h + ys[oy]) * d.w + xs[ox]) * d.c;
          const T* gr = g + ((b * d.oh + oy) * d.ow + ox) * d.c;
          for (int64_t ch = 0; ch < d.c; ++ch) p[ch] += gr[ch];
        }
  });
  return absl::OkStatus();
}

}  // namespace

std::vector<int64_t> resize_nearest_sources(int64_t out, int64_t in, bool align_corners, bool half_pixel_centers) {
  return nearest(out, in, resize_scale(in, out, align_corners), align_corners, half_pixel_centers);
}

void register_resize_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t>(r, "ResizeBilinear", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return resize_bilinear_kernel<T>; });
  register_each<float, double>(r, "ResizeBilinearGrad", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return resize_bilinear_grad_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(r, "ResizeNearestNeighbor", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return resize_nearest_kernel<T>; });
  register_each<float, double>(r, "ResizeNearestNeighborGrad", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return resize_nearest_grad_kernel<T>; });
}

}  // namespace tapeflow::cpu
