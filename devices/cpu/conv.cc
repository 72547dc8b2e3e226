// CPU kernels of the conv family (eager/ops/conv.cc): Conv2D, Conv2DBackpropInput and
// Conv2DBackpropFilter on NHWC float32 / float64 tensors (NCHW ones: Note [NCHW kernels],
// devices/cpu/nchw.h). Shapes and attributes were validated by the shape functions.
//
// Note [Conv2D kernels] (see eager/ops/conv.h): the image patches of every output pixel form a
// "column" matrix cols[N*OH*OW, KH*KW*Cin] whose row order (kh, kw, cin) matches the filter's
// row-major layout [KH*KW*Cin, Cout], so
//   forward:          out[M, Cout]   = cols[M, K] * filter[K, Cout]        (im2col + GEMM)
//   backprop input:   dcols[M, K]    = dout[M, Cout] * filter^T            (GEMM + col2im)
//   backprop filter:  dfilter[K, Cout] = cols^T * dout[M, Cout]            (im2col + GEMM)
// with M = N*OH*OW, K = KH*KW*Cin. The column matrix is built in chunks of output rows (at most
// kColumnBudget elements) so memory stays bounded while each GEMM is still large enough for
// OpenBLAS to run at full speed on all its threads. When the image already is the column matrix
// (1x1 filter at stride 1; or a filter covering the whole unpadded image, giving one output
// pixel) the GEMM reads the input directly.

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cpu/blas.h"
#include "devices/cpu/conv_direct.h"
#include "devices/cpu/conv_variants.h"
#include "devices/cpu/nchw.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

// 1M elements (4 MB of float): on the tutorial CNN's shapes a chunk this size stays in cache
// between im2col and the GEMM, which then runs as fast as one GEMM over the whole batch (and
// faster than im2col + GEMM over 16 MB chunks); much smaller chunks add thread hand-offs.
constexpr int64_t kColumnBudget = int64_t{1} << 20;

struct ConvGeometry {
  int64_t n, h, w, cin;  // input
  int64_t kh, kw, cout;  // filter
  int64_t oh, ow;        // output
  int64_t sh, sw;        // strides
  int64_t pad_top, pad_left;

  int64_t k() const { return kh * kw * cin; }
  int64_t m() const { return n * oh * ow; }
  // The input, read as [M, K], is already the column matrix.
  bool input_is_columns() const {
    const bool pointwise = kh == 1 && kw == 1 && sh == 1 && sw == 1;
    const bool whole_image = kh == h && kw == w && oh == 1 && ow == 1 && pad_top == 0 && pad_left == 0;
    return pointwise || whole_image;
  }
};

// Strides are {sh, sw} or {1, sh, sw, 1} (validated by the shape function).
std::pair<int64_t, int64_t> spatial(const std::vector<int64_t>& v) {
  return v.size() == 4 ? std::pair{v[1], v[2]} : std::pair{v[0], v[1]};
}

// TensorFlow's SAME padding puts the smaller half before.
int64_t pad_before(int64_t in, int64_t out, int64_t k, int64_t s, bool same) {
  return same ? std::max<int64_t>((out - 1) * s + k - in, 0) / 2 : 0;
}

ConvGeometry geometry(const KernelContext& ctx, const Shape& input, const Shape& filter, const Shape& output) {
  ConvGeometry g{};
  g.n = input.dim(0), g.h = input.dim(1), g.w = input.dim(2), g.cin = input.dim(3);
  g.kh = filter.dim(0), g.kw = filter.dim(1), g.cout = filter.dim(3);
  g.oh = output.dim(1), g.ow = output.dim(2);
  std::tie(g.sh, g.sw) = spatial(ctx.attrs.get<std::vector<int64_t>>("strides"));
  const bool same = ctx.attrs.get<std::string>("padding") == "SAME";
  g.pad_top = pad_before(g.h, g.oh, g.kh, g.sh, same);
  g.pad_left = pad_before(g.w, g.ow, g.kw, g.sw, same);
  return g;
}

// cblas takes int dimensions; chunking bounds M, so only K and Cout can overflow.
absl::Status check_blas_dims(const KernelContext& ctx, const ConvGeometry& g) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (g.k() > kMax || g.cout > kMax)
    return absl::InvalidArgumentError(
        absl::StrCat("[", ctx.op, "] filter of ", g.k(), " x ", g.cout, " elements is too large for BLAS"));
  return absl::OkStatus();
}

// Output rows ("row" = one (image, output y) pair, ow output pixels) per chunk of columns.
int64_t rows_per_chunk(const ConvGeometry& g) {
  return std::max<int64_t>(1, kColumnBudget / std::max<int64_t>(1, g.ow * g.k()));
}

// Runs of a patch row are as short as the channel count: below ~16 elements a memcpy / memset
// call costs more than an inline loop (measured: im2col for 5x5 taps of 1 channel takes half
// the time with loops; with 32 channels memcpy wins).
constexpr int64_t kShortRun = 16;

template <typename T> inline void copy_run(const T* src, T* dst, int64_t len) {
  if (len >= kShortRun) std::memcpy(dst, src, static_cast<size_t>(len) * sizeof(T));
  else for (int64_t e = 0; e < len; ++e) dst[e] = src[e];
}

template <typename T> inline void zero_run(T* dst, int64_t len) {
  if (len >= kShortRun) std::memset(dst, 0, static_cast<size_t>(len) * sizeof(T));
  else for (int64_t e = 0; e < len; ++e) dst[e] = T(0);
}

// Writes the column-matrix rows of output rows [r0, r1) (r = image * OH + output y) to cols, on
// the calling thread.
template <typename T>
void im2col_serial(const ConvGeometry& g, const T* x, int64_t r0, int64_t r1, T* cols) {
  const int64_t k = g.k(), patch_row = g.kw * g.cin;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / g.oh, oy = r % g.oh;
    const T* image = x + b * g.h * g.w * g.cin;
    T* dst = cols + (r - r0) * g.ow * k;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const int64_t y0 = oy * g.sh - g.pad_top, x0 = ox * g.sw - g.pad_left;
      // Taps [j0, j1) of each filter row fall inside the image: elements [lo, hi) of a patch row.
      const int64_t j0 = std::max<int64_t>(0, -x0), j1 = std::max(j0, std::min(g.kw, g.w - x0));
      const int64_t lo = j0 * g.cin, hi = j1 * g.cin;
      for (int64_t i = 0; i < g.kh; ++i, dst += patch_row) {
        const int64_t y = y0 + i;
        if (y < 0 || y >= g.h) { zero_run(dst, patch_row); continue; }
        zero_run(dst, lo);
        copy_run(image + (y * g.w + x0) * g.cin + lo, dst + lo, hi - lo);
        zero_run(dst + hi, patch_row - hi);
      }
    }
  }
}

// The same, split over the intra-op pool.
template <typename T>
void im2col(const ConvGeometry& g, const T* x, int64_t r0, int64_t r1, T* cols) {
  parallel_for(r1 - r0, g.ow * g.k(), [&](int64_t begin, int64_t end) {
    im2col_serial(g, x, r0 + begin, r0 + end, cols + begin * g.ow * g.k());
  });
}

// Adds the column-matrix rows of output rows [r0, r1) into dx (col2im), on the calling thread.
template <typename T>
void col2im_serial(const ConvGeometry& g, const T* cols, int64_t r0, int64_t r1, T* dx) {
  const int64_t k = g.k(), patch_row = g.kw * g.cin;
  for (int64_t r = r0; r < r1; ++r) {
    T* image = dx + r / g.oh * g.h * g.w * g.cin;
    const int64_t oy = r % g.oh;
    const T* src = cols + (r - r0) * g.ow * k;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const int64_t y0 = oy * g.sh - g.pad_top, x0 = ox * g.sw - g.pad_left;
      for (int64_t i = 0; i < g.kh; ++i, src += patch_row) {
        const int64_t y = y0 + i;
        if (y < 0 || y >= g.h) continue;
        const int64_t j0 = std::max<int64_t>(0, -x0), j1 = std::min(g.kw, g.w - x0);
        T* d = image + (y * g.w + x0 + j0) * g.cin;
        const T* s = src + j0 * g.cin;
        for (int64_t e = 0, len = std::max<int64_t>(0, j1 - j0) * g.cin; e < len; ++e) d[e] += s[e];
      }
    }
  }
}

// The same over the pool. Images are independent, so the work is split by image: no two threads
// add into the same pixel.
template <typename T>
void col2im(const ConvGeometry& g, const T* cols, int64_t r0, int64_t r1, T* dx) {
  const int64_t b0 = r0 / g.oh, b1 = (r1 - 1) / g.oh + 1;
  parallel_for(b1 - b0, (r1 - r0) / (b1 - b0) * g.ow * g.k(), [&](int64_t begin, int64_t end) {
    const int64_t rb = std::max(r0, (b0 + begin) * g.oh), re = std::min(r1, (b0 + end) * g.oh);
    col2im_serial(g, cols + (rb - r0) * g.ow * g.k(), rb, re, dx);
  });
}

// Scratch for one chunk of columns, from the device's caching allocator: repeated calls (a
// training loop) reuse warm pages instead of page-faulting a fresh block each time.
template <typename T>
absl::StatusOr<DeviceTensor> column_buffer(const KernelContext& ctx, const ConvGeometry& g) {
  return ctx.device->allocate(dtype_of<T>(), Shape{std::min(g.n * g.oh, rows_per_chunk(g)) * g.ow * g.k()});
}

// Calls chunk(r, m) over the input's rows [r, r + m) when the input is its own column matrix
// (input_is_columns): chunks of about kColumnBudget elements, which also keeps m within int.
template <typename Chunk>
void for_each_direct_chunk(const ConvGeometry& g, Chunk chunk) {
  const int64_t rows = kColumnBudget / g.k() + 1;
  for (int64_t r = 0; r < g.m(); r += rows) chunk(r, std::min(rows, g.m() - r));
}

// Calls chunk(r0, r1, cols) over output rows [r0, r1) (r = image * OH + output y) in chunks whose
// column matrix fits one scratch buffer, `cols`.
template <typename T, typename Chunk>
absl::Status for_each_column_chunk(const KernelContext& ctx, const ConvGeometry& g, Chunk chunk) {
  const int64_t rows = rows_per_chunk(g), total = g.n * g.oh;
  TF_ASSIGN_OR_RETURN(DeviceTensor scratch, column_buffer<T>(ctx, g));
  for (int64_t r0 = 0; r0 < total; r0 += rows) chunk(r0, std::min(total, r0 + rows), scratch.data<T>());
  return absl::OkStatus();
}

// Note [Small-K convolutions] (devices/cpu/conv_direct.cc): float convolutions with at most
// kSmallK taps per output skip OpenBLAS. Blocks of output rows are turned into columns in a
// cache-sized buffer (kSmallKPixels pixels) and multiplied there by register-blocked loops.
constexpr int64_t kSmallK = 32;
constexpr int64_t kSmallKPixels = 256;

template <typename T>
bool use_small_k(const ConvGeometry& g) {
  return std::is_same_v<T, float> && g.k() <= kSmallK && !g.input_is_columns();
}

int64_t small_k_rows(const ConvGeometry& g) { return std::max<int64_t>(1, kSmallKPixels / std::max<int64_t>(1, g.ow)); }

void conv2d_small_k(const ConvGeometry& g, const float* x, const float* f, float* out) {
  const int64_t rows = small_k_rows(g), chunks = (g.n * g.oh + rows - 1) / rows;
  parallel_for(chunks, rows * g.ow * g.k() * g.cout, [&](int64_t begin, int64_t end) {
    std::vector<float> cols(static_cast<size_t>(rows * g.ow * g.k()));
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * rows, r1 = std::min(g.n * g.oh, r0 + rows);
      im2col_serial(g, x, r0, r1, cols.data());
      small_k_forward(cols.data(), f, out + r0 * g.ow * g.cout, (r1 - r0) * g.ow, g.k(), g.cout);
    }
  });
}

// Each of up to intra_op_threads() blocks of rows sums into its own partial filter; the partials
// are added in block order, so the result does not depend on which thread finished first.
void conv2d_backprop_filter_small_k(const ConvGeometry& g, const float* x, const float* dy, float* out) {
  const int64_t rows = small_k_rows(g), chunks = (g.n * g.oh + rows - 1) / rows;
  const int64_t blocks = std::min<int64_t>(chunks, intra_op_threads()), size = g.k() * g.cout;
  std::vector<float> partials(static_cast<size_t>(blocks * size), 0.f);
  parallel_for(blocks, chunks / blocks * rows * g.ow * size, [&](int64_t begin, int64_t end) {
    std::vector<float> cols(static_cast<size_t>(rows * g.ow * g.k()));
    for (int64_t block = begin; block < end; ++block) {
      for (int64_t c = block * chunks / blocks; c < (block + 1) * chunks / blocks; ++c) {
        const int64_t r0 = c * rows, r1 = std::min(g.n * g.oh, r0 + rows);
        im2col_serial(g, x, r0, r1, cols.data());
        small_k_filter_grad(cols.data(), dy + r0 * g.ow * g.cout, partials.data() + block * size,
                            (r1 - r0) * g.ow, g.k(), g.cout);
      }
    }
  });
  std::copy(partials.begin(), partials.begin() + size, out);
  for (int64_t block = 1; block < blocks; ++block)
    for (int64_t e = 0; e < size; ++e) out[e] += partials[block * size + e];
}

// Note [Per-image convolutions]: when one image's column matrix is small (at most
// kImageColumnBudget elements: 196 x 800 for the tutorial CNN's second layer), each pool thread
// takes a contiguous block of images and, image by image, builds the columns in its own scratch
// and multiplies them with a single-threaded OpenBLAS call. The columns stay in that core's cache
// and no product waits on a hand-off between our pool and OpenBLAS's threads. Measured on the
// tutorial's second layer (2 cores, Zen 5): forward 12-14 -> ~8 ms, filter gradient 14-17 -> ~8 ms,
// input gradient ~12 -> ~8 ms, where OpenBLAS's own threading of one 1302 x 64 x 800 product
// reaches only 1.2x its single-threaded speed.
constexpr int64_t kImageColumnBudget = int64_t{1} << 20;

bool per_image(const ConvGeometry& g) { return !g.input_is_columns() && g.oh * g.ow * g.k() <= kImageColumnBudget; }

// Calls body(block, first image, end image, scratch) for min(N, threads) contiguous blocks of
// images, in parallel, each block with a scratch for one image's column matrix.
template <typename T, typename Body>
absl::Status for_each_image_block(const KernelContext& ctx, const ConvGeometry& g, Body body) {
  const int64_t blocks = std::min<int64_t>(g.n, intra_op_threads()), image_cols = g.oh * g.ow * g.k();
  TF_ASSIGN_OR_RETURN(DeviceTensor scratch, ctx.device->allocate(dtype_of<T>(), Shape{blocks * image_cols}));
  T* cols = scratch.data<T>();
  const SingleThreadedBlas single_threaded;
  parallel_for(blocks, g.n / blocks * image_cols * g.cout, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) body(b, b * g.n / blocks, (b + 1) * g.n / blocks, cols + b * image_cols);
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status conv2d_per_image(const KernelContext& ctx, const ConvGeometry& g, const T* x, const T* f, T* out) {
  const int64_t pixels = g.oh * g.ow;
  return for_each_image_block<T>(ctx, g, [&](int64_t, int64_t i0, int64_t i1, T* cols) {
    for (int64_t i = i0; i < i1; ++i) {
      im2col_serial(g, x, i * g.oh, (i + 1) * g.oh, cols);
      gemm_on_this_thread<T>(false, false, pixels, g.cout, g.k(), T(1), cols, f, T(0), out + i * pixels * g.cout);
    }
  });
}

// dx must be zero.
template <typename T>
absl::Status conv2d_backprop_input_per_image(const KernelContext& ctx, const ConvGeometry& g, const T* f, const T* dy,
                                             T* dx) {
  const int64_t pixels = g.oh * g.ow;
  return for_each_image_block<T>(ctx, g, [&](int64_t, int64_t i0, int64_t i1, T* cols) {
    for (int64_t i = i0; i < i1; ++i) {
      gemm_on_this_thread<T>(false, true, pixels, g.k(), g.cout, T(1), dy + i * pixels * g.cout, f, T(0), cols);
      col2im_serial(g, cols, i * g.oh, (i + 1) * g.oh, dx);
    }
  });
}

// Each block sums its images into its own partial filter (block 0 into out); the partials are
// added in block order, so the result does not depend on which thread finished first.
template <typename T>
absl::Status conv2d_backprop_filter_per_image(const KernelContext& ctx, const ConvGeometry& g, const T* x,
                                              const T* dy, T* out) {
  const int64_t pixels = g.oh * g.ow, size = g.k() * g.cout;
  const int64_t blocks = std::min<int64_t>(g.n, intra_op_threads());
  TF_ASSIGN_OR_RETURN(DeviceTensor partials, ctx.device->allocate(dtype_of<T>(), Shape{(blocks - 1) * size}));
  TF_RETURN_IF_ERROR(for_each_image_block<T>(ctx, g, [&](int64_t b, int64_t i0, int64_t i1, T* cols) {
    T* sum = b == 0 ? out : partials.data<T>() + (b - 1) * size;
    for (int64_t i = i0; i < i1; ++i) {
      im2col_serial(g, x, i * g.oh, (i + 1) * g.oh, cols);
      gemm_on_this_thread<T>(true, false, g.k(), g.cout, pixels, T(1), cols, dy + i * pixels * g.cout,
                             i == i0 ? T(0) : T(1), sum);
    }
  }));
  const T* p = partials.data<T>();
  for (int64_t b = 1; b < blocks; ++b)
    for (int64_t e = 0; e < size; ++e) out[e] += p[(b - 1) * size + e];
  return absl::OkStatus();
}

// Conv2D: inputs input, filter.
template <typename T>
absl::Status conv2d_kernel(KernelContext& ctx) {
  if (has_dilation(ctx)) return direct_conv2d(ctx, ConvPass::kForward, /*depthwise=*/false);
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& f = ctx.input(1);
  DeviceTensor& y = ctx.output(0);
  const ConvGeometry g = geometry(ctx, x.shape, f.shape, y.shape);
  TF_RETURN_IF_ERROR(check_blas_dims(ctx, g));
  T* out = y.data<T>();
  if (g.m() == 0 || g.cout == 0) return absl::OkStatus();
  if (g.k() == 0) {  // no input channels: an empty sum
    std::fill(out, out + y.num_elements(), T(0));
    return absl::OkStatus();
  }
  if constexpr (std::is_same_v<T, float>) {
    if (use_small_k<T>(g)) {
      conv2d_small_k(g, x.data<T>(), f.data<T>(), out);
      return absl::OkStatus();
    }
  }
  if (per_image(g)) return conv2d_per_image<T>(ctx, g, x.data<T>(), f.data<T>(), out);
  if (g.input_is_columns()) {  // y[M, Cout] = x[M, K] * filter
    for_each_direct_chunk(g, [&](int64_t r, int64_t m) {
      gemm<T>(false, false, m, g.cout, g.k(), T(1), x.data<T>() + r * g.k(), f.data<T>(), T(0), out + r * g.cout);
    });
    return absl::OkStatus();
  }
  return for_each_column_chunk<T>(ctx, g, [&](int64_t r0, int64_t r1, T* cols) {
    im2col(g, x.data<T>(), r0, r1, cols);
    gemm<T>(false, false, (r1 - r0) * g.ow, g.cout, g.k(), T(1), cols, f.data<T>(), T(0), out + r0 * g.ow * g.cout);
  });
}

// Conv2DBackpropInput: inputs filter, out_backprop; the output has the input's shape.
template <typename T>
absl::Status conv2d_backprop_input_kernel(KernelContext& ctx) {
  if (has_dilation(ctx)) return direct_conv2d(ctx, ConvPass::kBackpropInput, /*depthwise=*/false);
  const DeviceTensor& f = ctx.input(0);
  const DeviceTensor& dy = ctx.input(1);
  DeviceTensor& dx = ctx.output(0);
  const ConvGeometry g = geometry(ctx, dx.shape, f.shape, dy.shape);
  TF_RETURN_IF_ERROR(check_blas_dims(ctx, g));
  T* out = dx.data<T>();
  if (dx.num_elements() == 0) return absl::OkStatus();
  if (g.input_is_columns() && g.cout > 0 && g.m() > 0) {  // dx[M, K] = dy[M, Cout] * filter^T
    for_each_direct_chunk(g, [&](int64_t r, int64_t m) {
      gemm<T>(false, true, m, g.k(), g.cout, T(1), dy.data<T>() + r * g.cout, f.data<T>(), T(0), out + r * g.k());
    });
    return absl::OkStatus();
  }
  std::fill(out, out + dx.num_elements(), T(0));
  if (g.m() == 0 || g.cout == 0) return absl::OkStatus();
  if (per_image(g)) return conv2d_backprop_input_per_image<T>(ctx, g, f.data<T>(), dy.data<T>(), out);
  return for_each_column_chunk<T>(ctx, g, [&](int64_t r0, int64_t r1, T* cols) {
    gemm<T>(false, true, (r1 - r0) * g.ow, g.k(), g.cout, T(1), dy.data<T>() + r0 * g.ow * g.cout, f.data<T>(), T(0),
            cols);
    col2im(g, cols, r0, r1, out);
  });
}

// Conv2DBackpropFilter: inputs input, out_backprop; the output has the filter's shape.
template <typename T>
absl::Status conv2d_backprop_filter_kernel(KernelContext& ctx) {
  if (has_dilation(ctx)) return direct_conv2d(ctx, ConvPass::kBackpropFilter, /*depthwise=*/false);
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& dy = ctx.input(1);
  DeviceTensor& df = ctx.output(0);
  const ConvGeometry g = geometry(ctx, x.shape, df.shape, dy.shape);
  TF_RETURN_IF_ERROR(check_blas_dims(ctx, g));
  T* out = df.data<T>();
  if (df.num_elements() == 0) return absl::OkStatus();
  if (g.m() == 0) {  // no output pixels: an empty sum
    std::fill(out, out + df.num_elements(), T(0));
    return absl::OkStatus();
  }
  if constexpr (std::is_same_v<T, float>) {
    if (use_small_k<T>(g)) {
      conv2d_backprop_filter_small_k(g, x.data<T>(), dy.data<T>(), out);
      return absl::OkStatus();
    }
  }
  if (per_image(g)) return conv2d_backprop_filter_per_image<T>(ctx, g, x.data<T>(), dy.data<T>(), out);
  if (g.input_is_columns()) {  // dfilter[K, Cout] = x[M, K]^T * dy[M, Cout], accumulated over M chunks
    for_each_direct_chunk(g, [&](int64_t r, int64_t m) {
      gemm<T>(true, false, g.k(), g.cout, m, T(1), x.data<T>() + r * g.k(), dy.data<T>() + r * g.cout,
              r == 0 ? T(0) : T(1), out);
    });
    return absl::OkStatus();
  }
  return for_each_column_chunk<T>(ctx, g, [&](int64_t r0, int64_t r1, T* cols) {
    im2col(g, x.data<T>(), r0, r1, cols);
    gemm<T>(true, false, g.k(), g.cout, (r1 - r0) * g.ow, T(1), cols, dy.data<T>() + r0 * g.ow * g.cout,
            r0 == 0 ? T(0) : T(1), out);
  });
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
  // Note [NCHW kernels]: which inputs are images, and whether the output is one.
  register_each<float, double>(r, "Conv2D", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return nchw_or_nhwc<conv2d_kernel<T>, 0b01>; });
  register_each<float, double>(r, "Conv2DBackpropInput", DeviceType::kCPU, []<typename T>() -> KernelFn {
    return nchw_or_nhwc<conv2d_backprop_input_kernel<T>, 0b10>;
  });
  register_each<float, double>(r, "Conv2DBackpropFilter", DeviceType::kCPU, []<typename T>() -> KernelFn {
    return nchw_or_nhwc<conv2d_backprop_filter_kernel<T>, 0b11, false>;
  });
}

}  // namespace tapeflow::cpu
