// CPU kernels of the pool family (eager/ops/pool.cc): MaxPool, AvgPool, MaxPoolGrad,
// MaxPoolGradGrad and AvgPoolGrad on NHWC float32 / float64 tensors (NCHW ones: Note [NCHW
// kernels], devices/cpu/nchw.h). Shapes and attributes were validated by the shape functions.
// Channels are the innermost loop everywhere (contiguous in NHWC).
//
// Each window is clipped to the image, so padded positions never take part: max ignores them
// and the average divides by the clipped window's size, as TensorFlow does. With TF's SAME
// padding (pad_before <= (k - 1) / 2) every window keeps at least one real element.
#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "devices/cpu/nchw.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

struct PoolGeometry {
  int64_t n, h, w, c;  // input
  int64_t oh, ow;      // output
  int64_t kh, kw, sh, sw;
  int64_t pad_top, pad_left;

  // The window of output pixel (oy, ox), clipped to the image: rows [y0, y1), columns [x0, x1).
  void window(int64_t oy, int64_t ox, int64_t& y0, int64_t& y1, int64_t& x0, int64_t& x1) const {
    const int64_t ys = oy * sh - pad_top, xs = ox * sw - pad_left;
    y0 = std::max<int64_t>(ys, 0), y1 = std::min(ys + kh, h);
    x0 = std::max<int64_t>(xs, 0), x1 = std::min(xs + kw, w);
  }
};

// {h, w} from a 2-element or a 4-element {1, h, w, 1} list (validated by the shape function).
std::pair<int64_t, int64_t> spatial(const std::vector<int64_t>& v) {
  return v.size() == 4 ? std::pair{v[1], v[2]} : std::pair{v[0], v[1]};
}

// TensorFlow's SAME padding puts the smaller half before (as in devices/cpu/conv.cc).
int64_t pad_before(int64_t in, int64_t out, int64_t k, int64_t s, bool same) {
  return same ? std::max<int64_t>((out - 1) * s + k - in, 0) / 2 : 0;
}

PoolGeometry geometry(const KernelContext& ctx, const Shape& input, const Shape& output) {
  PoolGeometry g{};
  g.n = input.dim(0), g.h = input.dim(1), g.w = input.dim(2), g.c = input.dim(3);
  g.oh = output.dim(1), g.ow = output.dim(2);
  std::tie(g.kh, g.kw) = spatial(ctx.attrs.get<std::vector<int64_t>>("ksize"));
  std::tie(g.sh, g.sw) = spatial(ctx.attrs.get<std::vector<int64_t>>("strides"));
  const bool same = ctx.attrs.get<std::string>("padding") == "SAME";
  g.pad_top = pad_before(g.h, g.oh, g.kh, g.sh, same);
  g.pad_left = pad_before(g.w, g.ow, g.kw, g.sw, same);
  return g;
}

// MaxPool (kMax) and AvgPool, parallel over output rows (image, output y).
template <typename T, bool kMax>
absl::Status pool_kernel(KernelContext& ctx) {
  const DeviceTensor& in = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  const PoolGeometry g = geometry(ctx, in.shape, out.shape);
  const T* x = in.data<T>();
  T* y = out.data<T>();
  if (out.num_elements() == 0) return absl::OkStatus();
  parallel_for(g.n * g.oh, g.ow * g.kh * g.kw * g.c, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / g.oh, oy = r % g.oh;
      const T* image = x + b * g.h * g.w * g.c;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        T* o = y + (r * g.ow + ox) * g.c;
        int64_t y0, y1, x0, x1;
        g.window(oy, ox, y0, y1, x0, x1);
        if (y1 <= y0 || x1 <= x0) { std::fill(o, o + g.c, T(0)); continue; }  // unreachable (see top)
        std::copy(image + (y0 * g.w + x0) * g.c, image + (y0 * g.w + x0 + 1) * g.c, o);
        for (int64_t yy = y0; yy < y1; ++yy) {
          for (int64_t xx = (yy == y0 ? x0 + 1 : x0); xx < x1; ++xx) {
            const T* p = image + (yy * g.w + xx) * g.c;
            if constexpr (kMax) {
              for (int64_t ch = 0; ch < g.c; ++ch) o[ch] = p[ch] > o[ch] ? p[ch] : o[ch];
            } else {
              for (int64_t ch = 0; ch < g.c; ++ch) o[ch] += p[ch];
            }
          }
        }
        if constexpr (!kMax) {
          const T scale = T(1) / static_cast<T>((y1 - y0) * (x1 - x0));
          for (int64_t ch = 0; ch < g.c; ++ch) o[ch] *= scale;
        }
      }
    }
  });
  return absl::OkStatus();
}

// Gradient kernels scatter into overlapping windows, so work is split by (image, channel
// block): no two tasks write the same element.
constexpr int64_t kChannelBlock = 32;

template <typename Fn>
void for_image_channel_blocks(const PoolGeometry& g, Fn fn) {
  const int64_t blocks = (g.c + kChannelBlock - 1) / kChannelBlock;
  parallel_for(g.n * blocks, g.oh * g.ow * g.kh * g.kw * std::min(g.c, kChannelBlock) * 2,
               [&](int64_t begin, int64_t end) {
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t c0 = (t % blocks) * kChannelBlock;
                   fn(t / blocks, c0, std::min(g.c, c0 + kChannelBlock));
                 }
               });
}

// One window element of Note [Max pool routing]: channels whose maximum this is (p == best)
// take what is left of their gradient. A NaN maximum (a NaN first element) goes to the first
// element. Written as plain selects into temporaries before the stores: the form GCC 12
// vectorizes (writing `q[ch] += hit ? l : 0` directly leaves a scalar, branchy loop).
template <typename T>
void route_to_max(const T* p, const T* best, T* left, T* q, int64_t nc) {
  for (int64_t ch = 0; ch < nc; ++ch) {
    const T l = left[ch];
    const bool hit = (p[ch] >= best[ch]) | (best[ch] != best[ch]);
    const T take = hit ? l : T(0), keep = hit ? T(0) : l;
    q[ch] += take;
    left[ch] = keep;
  }
}

// MaxPoolGrad: inputs orig_input, orig_output, grad.
template <typename T>
absl::Status max_pool_grad_kernel(KernelContext& ctx) {
  const DeviceTensor& in = ctx.input(0);
  const DeviceTensor& grad = ctx.input(2);
  DeviceTensor& out = ctx.output(0);
  const PoolGeometry g = geometry(ctx, in.shape, grad.shape);
  const T* x = in.data<T>();
  const T* dy = grad.data<T>();
  T* dx = out.data<T>();
  std::fill(dx, dx + out.num_elements(), T(0));
  if (grad.num_elements() == 0) return absl::OkStatus();
  for_image_channel_blocks(g, [&](int64_t b, int64_t c0, int64_t c1) {
    const T* image = x + b * g.h * g.w * g.c + c0;
    T* dimage = dx + b * g.h * g.w * g.c + c0;
    const int64_t nc = c1 - c0;
    T best[kChannelBlock], left[kChannelBlock];
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t y0, y1, x0, x1;
        g.window(oy, ox, y0, y1, x0, x1);
        if (y1 <= y0 || x1 <= x0) continue;
        // Note [Max pool routing]: two vectorizable passes over the window (tracking an argmax
        // index per channel compiles to a scalar, branchy loop and ran 8x slower). Pass 1 finds
        // each channel's maximum; pass 2 walks the window in row-major order and gives the
        // whole gradient to the first element that reaches it, so ties go to the first maximum.
        std::copy(image + (y0 * g.w + x0) * g.c, image + (y0 * g.w + x0) * g.c + nc, best);
        for (int64_t yy = y0; yy < y1; ++yy) {
          for (int64_t xx = x0; xx < x1; ++xx) {
            const T* p = image + (yy * g.w + xx) * g.c;
            for (int64_t ch = 0; ch < nc; ++ch) best[ch] = p[ch] > best[ch] ? p[ch] : best[ch];
          }
        }
        std::copy_n(dy + ((b * g.oh + oy) * g.ow + ox) * g.c + c0, nc, left);
        for (int64_t yy = y0; yy < y1; ++yy) {
          for (int64_t xx = x0; xx < x1; ++xx) {
            route_to_max(image + (yy * g.w + xx) * g.c, best, left, dimage + (yy * g.w + xx) * g.c, nc);
          }
        }
      }
    }
  });
  return absl::OkStatus();
}

// One window element of MaxPoolGradGrad: channels whose maximum this is, and that have not
// found it at an earlier element, take src. The same hit test as route_to_max, so both ops
// pick the same element (they are adjoints); branch-free for the vectorizer.
template <typename T>
void take_first_max(const T* p, const T* best, const T* src, bool* found, T* o, int64_t nc) {
  for (int64_t ch = 0; ch < nc; ++ch) {
    const bool hit = (!found[ch]) & ((p[ch] >= best[ch]) | (best[ch] != best[ch]));
    o[ch] = hit ? src[ch] : o[ch];
    found[ch] = found[ch] | hit;
  }
}

// MaxPoolGradGrad: inputs orig_input, orig_output, grad (orig_input's shape); the output has
// orig_output's shape. Each output element is grad at its window's maximum (Note [Max pool
// routing]). A gather, so it is parallel over output rows like MaxPool.
template <typename T>
absl::Status max_pool_grad_grad_kernel(KernelContext& ctx) {
  const DeviceTensor& in = ctx.input(0);
  const DeviceTensor& grad = ctx.input(2);
  DeviceTensor& out = ctx.output(0);
  const PoolGeometry g = geometry(ctx, in.shape, out.shape);
  const T* x = in.data<T>();
  const T* gx = grad.data<T>();
  T* y = out.data<T>();
  if (out.num_elements() == 0) return absl::OkStatus();
  parallel_for(g.n * g.oh, g.ow * g.kh * g.kw * g.c * 2, [&](int64_t begin, int64_t end) {
    T best[kChannelBlock];
    bool found[kChannelBlock];
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / g.oh, oy = r % g.oh;
      const int64_t image_offset = b * g.h * g.w * g.c;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        T* o = y + (r * g.ow + ox) * g.c;
        std::fill(o, o + g.c, T(0));
        int64_t y0, y1, x0, x1;
        g.window(oy, ox, y0, y1, x0, x1);
        if (y1 <= y0 || x1 <= x0) continue;  // unreachable (see top)
        for (int64_t c0 = 0; c0 < g.c; c0 += kChannelBlock) {
          const int64_t nc = std::min(kChannelBlock, g.c - c0);
          const T* image = x + image_offset + c0;
          const T* gimage = gx + image_offset + c0;
          std::copy_n(image + (y0 * g.w + x0) * g.c, nc, best);
          for (int64_t yy = y0; yy < y1; ++yy) {
            for (int64_t xx = x0; xx < x1; ++xx) {
              const T* p = image + (yy * g.w + xx) * g.c;
              for (int64_t ch = 0; ch < nc; ++ch) best[ch] = p[ch] > best[ch] ? p[ch] : best[ch];
            }
          }
          std::fill_n(found, nc, false);
          for (int64_t yy = y0; yy < y1; ++yy) {
            for (int64_t xx = x0; xx < x1; ++xx) {
              const int64_t at = (yy * g.w + xx) * g.c;
              take_first_max(image + at, best, gimage + at, found, o + c0, nc);
            }
          }
        }
      }
    }
  });
  return absl::OkStatus();
}

// AvgPoolGrad: input grad; the output has orig_input_shape.
template <typename T>
absl::Status avg_pool_grad_kernel(KernelContext& ctx) {
  const DeviceTensor& grad = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  const PoolGeometry g = geometry(ctx, out.shape, grad.shape);
  const T* dy = grad.data<T>();
  T* dx = out.data<T>();
  std::fill(dx, dx + out.num_elements(), T(0));
  if (grad.num_elements() == 0) return absl::OkStatus();
  for_image_channel_blocks(g, [&](int64_t b, int64_t c0, int64_t c1) {
    T* dimage = dx + b * g.h * g.w * g.c;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t y0, y1, x0, x1;
        g.window(oy, ox, y0, y1, x0, x1);
        if (y1 <= y0 || x1 <= x0) continue;
        const T scale = T(1) / static_cast<T>((y1 - y0) * (x1 - x0));
        const T* d = dy + ((b * g.oh + oy) * g.ow + ox) * g.c;
        for (int64_t yy = y0; yy < y1; ++yy) {
          for (int64_t xx = x0; xx < x1; ++xx) {
            T* p = dimage + (yy * g.w + xx) * g.c;
            for (int64_t ch = c0; ch < c1; ++ch) p[ch] += d[ch] * scale;
          }
        }
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
  register_each<float, double>(r, "MaxPool", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return nchw_or_nhwc<pool_kernel<T, true>>; });
  register_each<float, double>(r, "AvgPool", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return nchw_or_nhwc<pool_kernel<T, false>>; });
  register_each<float, double>(r, "MaxPoolGrad", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return nchw_or_nhwc<max_pool_grad_kernel<T>>; });
  register_each<float, double>(r, "MaxPoolGradGrad", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return nchw_or_nhwc<max_pool_grad_grad_kernel<T>>; });
  register_each<float, double>(r, "AvgPoolGrad", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return nchw_or_nhwc<avg_pool_grad_kernel<T>>; });
}

}  // namespace tapeflow::cpu
