// CPU kernels of the conv variants (eager/ops/conv_variants.cc): DepthwiseConv2dNative and its
// two backprops, plus the dilated passes of Conv2D (called from devices/cpu/conv.cc).
//
// Direct loops over (output pixel, tap, channel), channels innermost (contiguous in NHWC):
//   forward          y[b, oy, ox, o]   += x[b, y, x, c] * f[i, j, c, m]
//   backprop input   dx[b, y, x, c]    += f[i, j, c, m] * dy[b, oy, ox, o]
//   backprop filter  df[i, j, c, m]    += x[b, y, x, c] * dy[b, oy, ox, o]
// with y = oy * sh - pad_top + i * dh (likewise x), o = m (Conv2D, summing over c) or c * M + m
// (depthwise). Work is split so that no two threads write one element: output rows for the
// forward pass, images for the input gradient, filter taps (i, j) for the filter gradient; each
// element is summed in a fixed order, so results do not depend on the thread count.
#include "devices/cpu/conv_variants.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "devices/cpu/nchw.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"

namespace tapeflow::cpu {

namespace {

struct Geometry {
  int64_t n, h, w, c;        // input
  int64_t kh, kw, m;         // filter [kh, kw, c, m]
  int64_t oh, ow, oc;        // output; oc = m (conv) or c * m (depthwise)
  int64_t sh, sw, dh, dw;
  int64_t pad_top, pad_left;
  bool depthwise;
};

std::pair<int64_t, int64_t> spatial(const KernelContext& ctx, const char* name) {
  const AttrValue* a = ctx.attrs.find(name);
  if (a == nullptr) return {1, 1};
  const auto& v = std::get<std::vector<int64_t>>(*a);
  return v.size() == 4 ? std::pair{v[1], v[2]} : std::pair{v[0], v[1]};
}

int64_t pad_before(int64_t in, int64_t out, int64_t k, int64_t s, bool same) {
  return same ? std::max<int64_t>((out - 1) * s + k - in, 0) / 2 : 0;
}

Geometry geometry(const KernelContext& ctx, const Shape& x, const Shape& f, const Shape& y, bool depthwise) {
  Geometry g{};
  g.n = x.dim(0), g.h = x.dim(1), g.w = x.dim(2), g.c = x.dim(3);
  g.kh = f.dim(0), g.kw = f.dim(1), g.m = f.dim(3);
  g.oh = y.dim(1), g.ow = y.dim(2), g.oc = y.dim(3);
  g.depthwise = depthwise;
  std::tie(g.sh, g.sw) = spatial(ctx, "strides");
  std::tie(g.dh, g.dw) = spatial(ctx, "dilations");
  const bool same = ctx.attrs.get<std::string>("padding") == "SAME";
  g.pad_top = g.kh > 0 ? pad_before(g.h, g.oh, (g.kh - 1) * g.dh + 1, g.sh, same) : 0;
  g.pad_left = g.kw > 0 ? pad_before(g.w, g.ow, (g.kw - 1) * g.dw + 1, g.sw, same) : 0;
  return g;
}

// Calls fn(x offset, f offset, y offset) for the taps of output pixel (b, oy, ox) at filter
// row i, column j that fall inside the image; the offsets point at channel 0 / tap (i, j, 0, 0).
template <typename Fn>
inline void for_tap(const Geometry& g, int64_t b, int64_t oy, int64_t ox, int64_t i, int64_t j, Fn fn) {
  const int64_t y = oy * g.sh - g.pad_top + i * g.dh, x = ox * g.sw - g.pad_left + j * g.dw;
  if (y < 0 || y >= g.h || x < 0 || x >= g.w) return;
  fn(((b * g.h + y) * g.w + x) * g.c, (i * g.kw + j) * g.c * g.m, ((b * g.oh + oy) * g.ow + ox) * g.oc);
}

// for_tap over every tap (i, j) of output pixel (b, oy, ox), row-major.
template <typename Fn>
inline void for_pixel_taps(const Geometry& g, int64_t b, int64_t oy, int64_t ox, Fn fn) {
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) for_tap(g, b, oy, ox, i, j, fn);
}

// One tap over every channel: kind 0 forward, 1 input gradient, 2 filter gradient.
template <int kKind, typename T>
inline void tap_channels(const Geometry& g, const T* xs, const T* fs, const T* ys, T* out) {
  // Each kind reads only its own two operands; the others are null (no arithmetic on them).
  for (int64_t c = 0; c < g.c; ++c) {
    const int64_t o0 = g.depthwise ? c * g.m : 0;
    if constexpr (kKind == 0) {  // out = y row
      const T* f = fs + c * g.m;
      const T xv = xs[c];
      for (int64_t q = 0; q < g.m; ++q) out[o0 + q] += xv * f[q];
    } else if constexpr (kKind == 1) {  // out = dx row
      const T* f = fs + c * g.m;
      T sum = T(0);
      for (int64_t q = 0; q < g.m; ++q) sum += f[q] * ys[o0 + q];
      out[c] += sum;
    } else {  // out = df tap
      const T xv = xs[c];
      for (int64_t q = 0; q < g.m; ++q) out[c * g.m + q] += xv * ys[o0 + q];
    }
  }
}

template <typename T>
void forward(const Geometry& g, const T* x, const T* f, T* y) {
  std::fill(y, y + g.n * g.oh * g.ow * g.oc, T(0));
  parallel_for(g.n * g.oh, g.ow * g.kh * g.kw * g.c * g.m, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / g.oh, oy = r % g.oh;
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for_pixel_taps(g, b, oy, ox, [&](int64_t xo, int64_t fo, int64_t yo) {
          tap_channels<0, T>(g, x + xo, f + fo, nullptr, y + yo);
        });
    }
  });
}

template <typename T>
void backprop_input(const Geometry& g, const T* f, const T* dy, T* dx) {
  std::fill(dx, dx + g.n * g.h * g.w * g.c, T(0));
  parallel_for(g.n, g.oh * g.ow * g.kh * g.kw * g.c * g.m, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox)
          for_pixel_taps(g, b, oy, ox, [&](int64_t xo, int64_t fo, int64_t yo) {
            tap_channels<1, T>(g, nullptr, f + fo, dy + yo, dx + xo);
          });
  });
}

template <typename T>
void backprop_filter(const Geometry& g, const T* x, const T* dy, T* df) {
  std::fill(df, df + g.kh * g.kw * g.c * g.m, T(0));
  parallel_for(g.kh * g.kw, g.n * g.oh * g.ow * g.c * g.m, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t i = t / g.kw, j = t % g.kw;
      for (int64_t b = 0; b < g.n; ++b)
        for (int64_t oy = 0; oy < g.oh; ++oy)
          for (int64_t ox = 0; ox < g.ow; ++ox)
            for_tap(g, b, oy, ox, i, j, [&](int64_t xo, int64_t fo, int64_t yo) {
              tap_channels<2, T>(g, x + xo, nullptr, dy + yo, df + fo);
            });
    }
  });
}

template <typename T>
absl::Status run(KernelContext& ctx, ConvPass pass, bool depthwise) {
  const DeviceTensor& a = ctx.input(0);
  const DeviceTensor& b = ctx.input(1);
  DeviceTensor& out = ctx.output(0);
  // No channels or no taps: every output element is an empty sum (and the filter's other dims,
  // which may come from a shape attribute, must not be looped over).
  const Shape& f = pass == ConvPass::kForward ? b.shape : pass == ConvPass::kBackpropInput ? a.shape : out.shape;
  const Shape& x = pass == ConvPass::kBackpropInput ? out.shape : a.shape;
  if (f.num_elements() == 0 || x.num_elements() == 0) {
    std::fill(out.data<T>(), out.data<T>() + out.num_elements(), T(0));
    return absl::OkStatus();
  }
  switch (pass) {
    case ConvPass::kForward: {
      const Geometry g = geometry(ctx, a.shape, b.shape, out.shape, depthwise);
      if (out.num_elements() > 0) forward<T>(g, a.data<T>(), b.data<T>(), out.data<T>());
      break;
    }
    case ConvPass::kBackpropInput: {
      const Geometry g = geometry(ctx, out.shape, a.shape, b.shape, depthwise);
      if (out.num_elements() > 0) backprop_input<T>(g, a.data<T>(), b.data<T>(), out.data<T>());
      break;
    }
    case ConvPass::kBackpropFilter: {
      const Geometry g = geometry(ctx, a.shape, out.shape, b.shape, depthwise);
      if (out.num_elements() > 0) backprop_filter<T>(g, a.data<T>(), b.data<T>(), out.data<T>());
      break;
    }
  }
  return absl::OkStatus();
}

template <ConvPass kPass>
absl::Status depthwise_kernel(KernelContext& ctx) {
  return direct_conv2d(ctx, kPass, /*depthwise=*/true);
}

}  // namespace

bool has_dilation(const KernelContext& ctx) {
  const auto [dh, dw] = spatial(ctx, "dilations");
  return dh != 1 || dw != 1;
}

absl::Status direct_conv2d(KernelContext& ctx, ConvPass pass, bool depthwise) {
  if (ctx.input(0).dtype == DType::kFloat64) return run<double>(ctx, pass, depthwise);
  return run<float>(ctx, pass, depthwise);
}

void register_conv_variant_kernels(KernelRegistry& r) {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    // Note [NCHW kernels]: the images are input 0 and the output; out_backprop (input 1) of the
    // backprops; input 0 and out_backprop of the filter's backprop, whose output is a filter.
    r.add("DepthwiseConv2dNative", DeviceType::kCPU, dt, nchw_or_nhwc<depthwise_kernel<ConvPass::kForward>, 0b01>);
    r.add("DepthwiseConv2dNativeBackpropInput", DeviceType::kCPU, dt,
          nchw_or_nhwc<depthwise_kernel<ConvPass::kBackpropInput>, 0b10>);
    r.add("DepthwiseConv2dNativeBackpropFilter", DeviceType::kCPU, dt,
          nchw_or_nhwc<depthwise_kernel<ConvPass::kBackpropFilter>, 0b11, false>);
  }
}

}  // namespace tapeflow::cpu
