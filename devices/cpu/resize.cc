// CPU kernels of the resize family (eager/ops/resize.cc): ResizeBilinear,
// ResizeNearestNeighbor, CropAndResize and their gradients, with TensorFlow's arithmetic: scales
// and source coordinates in float32 (so the chosen pixels and weights are TensorFlow's bit for
// bit), NHWC, channels innermost.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "devices/cpu/resize.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"

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

// ---- CropAndResize (eager/ops/resize.h) ----
// C: the arithmetic's type, float32 as TensorFlow's kernels (bit for bit) or float64.

// d coordinate / d a and d coordinate / d b of crop position i (CropAndResizeGradBoxes), with
// TensorFlow's ratio (size - 1) / (crop - 1).
template <typename C>
std::pair<C, C> crop_coordinate_slopes(int64_t size, int64_t crop, int64_t i) {
  if (crop > 1) {
    const C moved = static_cast<C>(i) * (static_cast<C>(size - 1) / static_cast<C>(crop - 1));
    return {static_cast<C>(size - 1) - moved, moved};
  }
  const C half = static_cast<C>(0.5 * static_cast<double>(size - 1));
  return {half, half};
}

// Where one crop position reads the image: outside it (the extrapolation value; NaN and
// infinite coordinates too), or between pixels lower and upper with the upper's weight, and the
// nearest pixel (rounded half away from zero, as roundf).
template <typename C>
struct CropSample {
  bool inside = false;
  int64_t lower = 0, upper = 0, nearest = 0;
  C lerp = 0;
};

// One box's samples along an axis of `size` pixels: box edges a, b (normalized), `crop`
// positions, in TensorFlow's order of operations. Computed per position, as TensorFlow does:
// a table per box would take more memory than the crop itself when it is one pixel deep.
template <typename C>
struct CropAxis {
  C a, b, scale;
  int64_t size, crop;
  CropAxis(C a_, C b_, int64_t size_, int64_t crop_)
      : a(a_), b(b_), scale(crop_ > 1 ? (b_ - a_) * static_cast<C>(size_ - 1) / static_cast<C>(crop_ - 1) : C(0)),
        size(size_), crop(crop_) {}
  C coordinate(int64_t i) const {
    if (crop > 1) return a * static_cast<C>(size - 1) + static_cast<C>(i) * scale;
    return static_cast<C>(0.5 * static_cast<double>(a + b) * static_cast<double>(size - 1));
  }
  // TensorFlow compares in C; past 2^24 pixels a float32 coordinate can round to `size`, which it
  // would read: here the pixels are clamped to size - 1.
  CropSample<C> operator[](int64_t i) const {
    const C v = coordinate(i);
    if (!(v >= 0 && v <= static_cast<C>(size - 1))) return {};
    const C f = std::floor(v);
    const int64_t last = size - 1;
    return {true, std::min(static_cast<int64_t>(f), last), std::min(static_cast<int64_t>(std::ceil(v)), last),
            std::min(static_cast<int64_t>(std::round(v)), last), v - f};
  }
};

// The boxes (input `at`, float32 or float64, read as C) and their images (input at + 1), each
// checked against the images' batch.
template <typename C>
struct CropBoxes {
  std::vector<C> coords;  // 4 per box: y1, x1, y2, x2
  const int32_t* image = nullptr;
  int64_t n = 0;
  const C* box(int64_t b) const { return coords.data() + 4 * b; }
};

template <typename C>
absl::StatusOr<CropBoxes<C>> crop_boxes(const KernelContext& ctx, int at, int64_t batch, int64_t rows) {
  const DeviceTensor& boxes = ctx.input(at);
  const DeviceTensor& index = ctx.input(at + 1);
  CropBoxes<C> r;
  r.n = boxes.shape.dim(0);
  if (index.shape.dim(0) != r.n || rows != r.n)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] 'boxes' ", boxes.shape.to_string(), ", 'box_indices' ",
                                                   index.shape.to_string(), " and the crops' ", rows,
                                                   " rows must agree in num_boxes"));
  r.image = index.data<int32_t>();
  for (int64_t b = 0; b < r.n; ++b)
    if (r.image[b] < 0 || r.image[b] >= batch)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] box_indices[", b, "] = ", r.image[b],
                                                     " is outside [0, ", batch, "), the images' batch"));
  r.coords.resize(static_cast<size_t>(4 * r.n));
  if (boxes.dtype == DType::kFloat64) {
    std::copy_n(boxes.data<double>(), 4 * r.n, r.coords.begin());
  } else {
    std::copy_n(boxes.data<float>(), 4 * r.n, r.coords.begin());
  }
  return r;
}

bool bilinear_method(const KernelContext& ctx) { return ctx.attrs.get<std::string>("method") == "bilinear"; }

// The four pixels around a sample, depth channel apart, read as C.
template <typename C, typename In>
struct Corners {
  C tl, tr, bl, br;
  Corners(const In* img, int64_t w, int64_t depth, const CropSample<C>& y, const CropSample<C>& x, int64_t ch)
      : tl(static_cast<C>(img[(y.lower * w + x.lower) * depth + ch])),
        tr(static_cast<C>(img[(y.lower * w + x.upper) * depth + ch])),
        bl(static_cast<C>(img[(y.upper * w + x.lower) * depth + ch])),
        br(static_cast<C>(img[(y.upper * w + x.upper) * depth + ch])) {}
};

// CropAndResize: In, the images' type; the crops are float64 for float64 images, else float32.
template <typename In>
absl::Status crop_and_resize_kernel(KernelContext& ctx) {
  using C = std::conditional_t<std::is_same_v<In, double>, double, float>;
  const DeviceTensor& images = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  const int64_t h = images.shape.dim(1), w = images.shape.dim(2), depth = images.shape.dim(3);
  const int64_t ch = out.shape.dim(1), cw = out.shape.dim(2);
  TF_ASSIGN_OR_RETURN(const CropBoxes<C> boxes, crop_boxes<C>(ctx, 1, images.shape.dim(0), out.shape.dim(0)));
  if (out.num_elements() == 0) return absl::OkStatus();  // depth 0: nothing to sample, however large the crop
  const bool bilinear = bilinear_method(ctx);
  const C fill = static_cast<C>(static_cast<float>(ctx.attrs.get<double>("extrapolation_value")));
  const In* x = images.data<In>();
  C* y = out.data<C>();
  parallel_for(boxes.n, ch * cw * depth * 8, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const C* box = boxes.box(b);
      const CropAxis<C> ys(box[0], box[2], h, ch), xs(box[1], box[3], w, cw);
      const In* img = x + boxes.image[b] * h * w * depth;
      for (int64_t i = 0; i < ch; ++i) {
        const CropSample<C> sy = ys[i];
        for (int64_t j = 0; j < cw; ++j) {
          C* o = y + ((b * ch + i) * cw + j) * depth;
          const CropSample<C> sx = sy.inside ? xs[j] : CropSample<C>{};
          if (!sx.inside) {
            std::fill_n(o, depth, fill);
          } else if (bilinear) {
            for (int64_t c = 0; c < depth; ++c) {
              const Corners<C, In> p(img, w, depth, sy, sx, c);
              const C top = p.tl + (p.tr - p.tl) * sx.lerp, bottom = p.bl + (p.br - p.bl) * sx.lerp;
              o[c] = top + (bottom - top) * sy.lerp;
            }
          } else {
            const In* p = img + (sy.nearest * w + sx.nearest) * depth;
            for (int64_t c = 0; c < depth; ++c) o[c] = static_cast<C>(p[c]);
          }
        }
      }
    }
  });
  return absl::OkStatus();
}

// CropAndResizeGradImage: T, the result's type (the dtype attr); C, the grads' type. Boxes may
// share images, so they add in one task, in order.
template <typename T, typename C>
absl::Status crop_grad_image(KernelContext& ctx) {
  const DeviceTensor& grads = ctx.input(0);
  const DeviceTensor& image_size = ctx.input(3);
  const int32_t* s = image_size.data<int32_t>();
  const std::vector<int64_t> size(s, s + image_size.num_elements());
  if (size.size() != 4 || *std::min_element(size.begin(), size.end()) < 1 || size[3] != grads.shape.dim(3))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] image_size ", Shape(size).to_string(),
                                                   " must be 4 positive dims {batch, height, width, depth} with the "
                                                   "depth of 'grads' ", grads.shape.to_string()));
  TF_ASSIGN_OR_RETURN(const CropBoxes<C> boxes, crop_boxes<C>(ctx, 1, size[0], grads.shape.dim(0)));
  DeviceTensor& out = ctx.output(0);  // Note [Data-dependent output shapes]
  out.shape = Shape(size);
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));
  T* dx = zeroed_output<T>(ctx);
  if (grads.num_elements() == 0) return absl::OkStatus();
  const int64_t h = size[1], w = size[2], depth = size[3], ch = grads.shape.dim(1), cw = grads.shape.dim(2);
  const bool bilinear = bilinear_method(ctx);
  const C* g = grads.data<C>();
  for (int64_t b = 0; b < boxes.n; ++b) {
    const C* box = boxes.box(b);
    const CropAxis<C> ys(box[0], box[2], h, ch), xs(box[1], box[3], w, cw);
    T* img = dx + boxes.image[b] * h * w * depth;
    for (int64_t i = 0; i < ch; ++i) {
      const CropSample<C> y = ys[i];
      if (!y.inside) continue;
      for (int64_t j = 0; j < cw; ++j) {
        const CropSample<C> x = xs[j];
        if (!x.inside) continue;
        const C* gr = g + ((b * ch + i) * cw + j) * depth;
        for (int64_t c = 0; c < depth; ++c) {
          if (!bilinear) {
            img[(y.nearest * w + x.nearest) * depth + c] += static_cast<T>(gr[c]);
            continue;
          }
          const C top = (1 - y.lerp) * gr[c], bottom = y.lerp * gr[c];
          img[(y.lower * w + x.lower) * depth + c] += static_cast<T>((1 - x.lerp) * top);
          img[(y.lower * w + x.upper) * depth + c] += static_cast<T>(x.lerp * top);
          img[(y.upper * w + x.lower) * depth + c] += static_cast<T>((1 - x.lerp) * bottom);
          img[(y.upper * w + x.upper) * depth + c] += static_cast<T>(x.lerp * bottom);
        }
      }
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status crop_grad_image_kernel(KernelContext& ctx) {
  return ctx.input(0).dtype == DType::kFloat64 ? crop_grad_image<T, double>(ctx) : crop_grad_image<T, float>(ctx);
}

// CropAndResizeGradBoxes: In, the images' type; C, the grads'. The bilinear sample's
// derivative in its coordinate (the difference of the pixels around it) times the coordinate's
// slope in each box edge; each box on one task.
template <typename In, typename C>
absl::Status crop_grad_boxes(KernelContext& ctx) {
  const DeviceTensor& grads = ctx.input(0);
  const DeviceTensor& images = ctx.input(1);
  const int64_t h = images.shape.dim(1), w = images.shape.dim(2), depth = images.shape.dim(3);
  const int64_t ch = grads.shape.dim(1), cw = grads.shape.dim(2);
  if (grads.shape.dim(3) != depth)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] 'grads' ", grads.shape.to_string(), " and 'images' ",
                                                   images.shape.to_string(), " must agree in depth"));
  TF_ASSIGN_OR_RETURN(const CropBoxes<C> boxes, crop_boxes<C>(ctx, 2, images.shape.dim(0), grads.shape.dim(0)));
  DeviceTensor& out = ctx.output(0);
  if (grads.num_elements() == 0) {
    out.dtype == DType::kFloat64 ? (void)zeroed_output<double>(ctx) : (void)zeroed_output<float>(ctx);
    return absl::OkStatus();
  }
  const C* g = grads.data<C>();
  const In* x = images.data<In>();
  parallel_for(boxes.n, ch * cw * depth * 16, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const C* box = boxes.box(b);
      const CropAxis<C> ys(box[0], box[2], h, ch), xs(box[1], box[3], w, cw);
      const In* img = x + boxes.image[b] * h * w * depth;
      C d[4] = {0, 0, 0, 0};  // d y1, d x1, d y2, d x2
      for (int64_t i = 0; i < ch; ++i) {
        const CropSample<C> sy = ys[i];
        if (!sy.inside) continue;
        const auto [y1_slope, y2_slope] = crop_coordinate_slopes<C>(h, ch, i);
        for (int64_t j = 0; j < cw; ++j) {
          const CropSample<C> sx = xs[j];
          if (!sx.inside) continue;
          const auto [x1_slope, x2_slope] = crop_coordinate_slopes<C>(w, cw, j);
          const C yl = sy.lerp, xl = sx.lerp;
          const C* gr = g + ((b * ch + i) * cw + j) * depth;
          for (int64_t c = 0; c < depth; ++c) {
            const Corners<C, In> p(img, w, depth, sy, sx, c);
            const C along_y = gr[c] * ((1 - xl) * (p.bl - p.tl) + xl * (p.br - p.tr));
            const C along_x = gr[c] * ((1 - yl) * (p.tr - p.tl) + yl * (p.br - p.bl));
            d[0] += along_y * y1_slope;
            d[2] += along_y * y2_slope;
            d[1] += along_x * x1_slope;
            d[3] += along_x * x2_slope;
          }
        }
      }
      for (int k = 0; k < 4; ++k) {
        if (out.dtype == DType::kFloat64) {
          out.data<double>()[4 * b + k] = static_cast<double>(d[k]);
        } else {
          out.data<float>()[4 * b + k] = static_cast<float>(d[k]);
        }
      }
    }
  });
  return absl::OkStatus();
}

template <typename In>
absl::Status crop_grad_boxes_kernel(KernelContext& ctx) {
  return ctx.input(0).dtype == DType::kFloat64 ? crop_grad_boxes<In, double>(ctx) : crop_grad_boxes<In, float>(ctx);
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
  register_each<float, double, int32_t, int64_t, uint8_t>(r, "CropAndResize", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return crop_and_resize_kernel<T>; });
  register_each<float, double>(r, "CropAndResizeGradImage", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return crop_grad_image_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(r, "CropAndResizeGradBoxes", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return crop_grad_boxes_kernel<T>; });
}

}  // namespace tapeflow::cpu
