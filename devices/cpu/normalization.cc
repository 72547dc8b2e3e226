// CPU kernels of the normalization family (eager/ops/normalization.cc): BiasAdd, BiasAddGrad,
// FusedBatchNormV3, LRN and LRNGrad, whose shapes and attributes the shape functions validated;
// and the graph executor's _FusedBiasActivation, which is no op and checks its bias itself.
//
// A tensor with a channel dim is read as [outer, C, inner]: NHWC (channels last) has inner = 1,
// NCHW has outer = N and inner = H * W (the dims after the channels).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

struct Layout {
  int64_t outer, c, inner;
};

Layout layout(const Shape& s, bool nchw) {
  const int axis = nchw ? 1 : s.rank() - 1;
  Layout l{1, s.dim(axis), 1};
  for (int d = 0; d < axis; ++d) l.outer *= s.dim(d);
  for (int d = axis + 1; d < s.rank(); ++d) l.inner *= s.dim(d);
  return l;
}

// Integer sums wrap (two's complement) as TensorFlow's do, without signed-overflow UB.
template <typename T>
inline T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

bool is_nchw(const KernelContext& ctx) { return ctx.attrs.get<std::string>("data_format") == "NCHW"; }

// BiasAdd: value [outer, C, inner] + bias [C].
template <typename T>
absl::Status bias_add_kernel(KernelContext& ctx) {
  const DeviceTensor& v = ctx.input(0);
  const T* x = v.data<T>();
  const T* b = ctx.input(1).data<T>();
  T* y = ctx.output(0).data<T>();
  if (v.num_elements() == 0) return absl::OkStatus();
  const Layout l = layout(v.shape, is_nchw(ctx));
  parallel_for(l.outer * l.c, l.inner, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T bias = b[r % l.c];
      for (int64_t k = 0; k < l.inner; ++k) y[r * l.inner + k] = wrap_add(x[r * l.inner + k], bias);
    }
  });
  return absl::OkStatus();
}

// _FusedBiasActivation (Note [Bias and activation epilogue], graph/bias_activation_fusion.cc):
// value [rows, C] + bias [C], then the activation, row by row; the output may be the value's
// own buffer. The same functors as Add (or BiasAdd) then Relu, so the results are bit-identical
// to the unfused steps'. One exception, as between any two compiled adds: where the product and
// the bias are both NaN, which of their payloads comes out is unspecified (IEEE 754 leaves it
// open; the eager Add itself returns the second operand's, as its compiler ordered the operands).
template <typename T, typename Act, int Cost = 1>
void bias_activation_rows(const T* x, const T* b, T* y, int64_t rows, int64_t c, Act act = {}) {
  const functors::Add add;
  parallel_for(rows, Cost * c, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * c;
      T* yr = y + r * c;
      for (int64_t k = 0; k < c; ++k) yr[k] = act(add(xr[k], b[k]));
    }
  });
}

struct NoActivation {
  template <typename T> T operator()(T x) const { return x; }
};

template <typename T>
absl::Status bias_activation_kernel(KernelContext& ctx) {
  const DeviceTensor& v = ctx.input(0);
  const DeviceTensor& bias = ctx.input(1);
  const int64_t c = v.shape.rank() > 0 ? v.shape.dim(v.shape.rank() - 1) : 0;
  if (bias.num_elements() != c)
    return absl::InvalidArgumentError(absl::StrCat("bias of shape ", bias.shape.to_string(),
                                                   " does not match the last dim of ", v.shape.to_string()));
  if (v.num_elements() == 0) return absl::OkStatus();
  const int64_t rows = v.num_elements() / c;
  const T* x = v.data<T>();
  const T* b = bias.data<T>();
  T* y = ctx.output(0).data<T>();
  const std::string& activation = ctx.attrs.get<std::string>("activation");
  if (activation == "Relu") bias_activation_rows<T, functors::Relu>(x, b, y, rows, c);
  else if (activation == "Relu6") bias_activation_rows<T, functors::Relu6>(x, b, y, rows, c);
  else if (activation == "Elu") bias_activation_rows<T, functors::Elu, 20>(x, b, y, rows, c);
  else if (activation == "LeakyRelu")
    bias_activation_rows<T, functors::LeakyRelu>(x, b, y, rows, c, functors::LeakyRelu{ctx.attrs.get<double>("alpha")});
  else if (activation.empty()) bias_activation_rows<T, NoActivation>(x, b, y, rows, c);
  else return absl::InvalidArgumentError(absl::StrCat("unknown activation '", activation, "'"));
  return absl::OkStatus();
}

// BiasAddGrad: the sum over outer and inner per channel, in a fixed order.
template <typename T>
absl::Status bias_add_grad_kernel(KernelContext& ctx) {
  const DeviceTensor& g = ctx.input(0);
  const T* dy = g.data<T>();
  T* db = ctx.output(0).data<T>();
  const Layout l = layout(g.shape, is_nchw(ctx));
  std::fill(db, db + l.c, T(0));
  if (g.num_elements() == 0) return absl::OkStatus();
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t c = 0; c < l.c; ++c)
      for (int64_t k = 0; k < l.inner; ++k) db[c] = wrap_add(db[c], dy[(o * l.c + c) * l.inner + k]);
  return absl::OkStatus();
}

// FusedBatchNormV3 (TensorFlow's CPU arithmetic): training normalizes with the batch's mean and
// biased variance (sums in double, two passes), reports the unbiased variance scaled by
// n / max(n - 1, 1), and blends both with the given mean / variance when
// exponential_avg_factor != 1. An empty x gives NaN batch statistics (0 / 0), as in TF.
template <typename T>
absl::Status fused_batch_norm_kernel(KernelContext& ctx) {
  const DeviceTensor& xt = ctx.input(0);
  const T* x = xt.data<T>();
  const T* scale = ctx.input(1).data<T>();
  const T* offset = ctx.input(2).data<T>();
  const double eps = ctx.attrs.get<double>("epsilon");
  const double factor = ctx.attrs.get<double>("exponential_avg_factor");
  const bool training = ctx.attrs.get<bool>("is_training");
  const Layout l = layout(xt.shape, is_nchw(ctx));
  const int64_t n = l.outer * l.inner;
  std::vector<double> mean(static_cast<size_t>(l.c)), var(static_cast<size_t>(l.c));
  T* batch_mean = ctx.output(1).data<T>();
  T* batch_var = ctx.output(2).data<T>();
  T* saved_mean = ctx.output(3).data<T>();
  T* saved_var = ctx.output(4).data<T>();
  ctx.output(5).data<T>()[0] = T(0);  // TensorFlow's CPU placeholder reserve space
  if (training) {
    std::vector<double> sum(static_cast<size_t>(l.c), 0.0), sq(static_cast<size_t>(l.c), 0.0);
    for (int64_t o = 0; o < l.outer; ++o)
      for (int64_t c = 0; c < l.c; ++c)
        for (int64_t k = 0; k < l.inner; ++k) sum[c] += x[(o * l.c + c) * l.inner + k];
    for (int64_t c = 0; c < l.c; ++c) mean[c] = sum[c] / static_cast<double>(n);
    for (int64_t o = 0; o < l.outer; ++o)
      for (int64_t c = 0; c < l.c; ++c)
        for (int64_t k = 0; k < l.inner; ++k) {
          const double d = x[(o * l.c + c) * l.inner + k] - mean[c];
          sq[c] += d * d;
        }
    const double adjust = static_cast<double>(n) / static_cast<double>(std::max<int64_t>(n - 1, 1));
    const T* old_mean = ctx.input(3).data<T>();
    const T* old_var = ctx.input(4).data<T>();
    for (int64_t c = 0; c < l.c; ++c) {
      var[c] = sq[c] / static_cast<double>(n);
      saved_mean[c] = static_cast<T>(mean[c]);
      saved_var[c] = static_cast<T>(var[c]);
      if (factor == 1.0) {
        batch_mean[c] = static_cast<T>(mean[c]);
        batch_var[c] = static_cast<T>(var[c] * adjust);
      } else {
        batch_mean[c] = static_cast<T>((1 - factor) * old_mean[c] + factor * mean[c]);
        batch_var[c] = static_cast<T>((1 - factor) * old_var[c] + factor * var[c] * adjust);
      }
    }
  } else {
    const T* m = ctx.input(3).data<T>();
    const T* v = ctx.input(4).data<T>();
    for (int64_t c = 0; c < l.c; ++c) {
      mean[c] = m[c], var[c] = v[c];
      batch_mean[c] = saved_mean[c] = m[c];
      batch_var[c] = saved_var[c] = v[c];
    }
  }
  // y = x * a + b per channel, a = scale / sqrt(var + eps), b = offset - mean * a.
  std::vector<T> a(static_cast<size_t>(l.c)), b(static_cast<size_t>(l.c));
  for (int64_t c = 0; c < l.c; ++c) {
    a[c] = static_cast<T>(scale[c] / std::sqrt(var[c] + eps));
    b[c] = static_cast<T>(offset[c] - mean[c] * a[c]);
  }
  T* y = ctx.output(0).data<T>();
  if (xt.num_elements() == 0) return absl::OkStatus();
  parallel_for(l.outer * l.c, l.inner * 2, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t c = r % l.c;
      for (int64_t k = 0; k < l.inner; ++k) y[r * l.inner + k] = x[r * l.inner + k] * a[c] + b[c];
    }
  });
  return absl::OkStatus();
}

struct LrnAttrs {
  int64_t radius;
  double bias, alpha, beta;
};

LrnAttrs lrn_attrs(const KernelContext& ctx) {
  return {ctx.attrs.get<int64_t>("depth_radius"), ctx.attrs.get<double>("bias"), ctx.attrs.get<double>("alpha"),
          ctx.attrs.get<double>("beta")};
}

// Element i's window in its row: the flat indices [lo, hi), and the sum of squares of x over them
// (in double).
struct LrnWindow {
  int64_t lo, hi;
  double sqr;
};

// Calls fn(i, window) for every element i of x, an NHWC tensor of `n` elements normalized over its
// last dim (`depth`); rows are split over threads, cost_per_element as parallel_for's.
template <typename T, typename Fn>
void for_each_lrn_window(const LrnAttrs& p, const T* x, int64_t n, int64_t depth, int64_t cost_per_element, Fn fn) {
  const int64_t rows = depth == 0 ? 0 : n / depth;
  parallel_for(rows, depth * cost_per_element, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t row = r * depth;
      for (int64_t d = 0; d < depth; ++d) {
        const int64_t lo = row + std::max<int64_t>(0, d - p.radius), hi = row + std::min(depth, d + p.radius + 1);
        double sqr = 0;
        for (int64_t k = lo; k < hi; ++k) sqr += static_cast<double>(x[k]) * x[k];
        fn(row + d, LrnWindow{lo, hi, sqr});
      }
    }
  });
}

// LRN over the last dim: rows of depth D, each normalized by its window's sum of squares.
template <typename T>
absl::Status lrn_kernel(KernelContext& ctx) {
  const DeviceTensor& in = ctx.input(0);
  const LrnAttrs p = lrn_attrs(ctx);
  const T* x = in.data<T>();
  T* y = ctx.output(0).data<T>();
  for_each_lrn_window(p, x, in.num_elements(), in.shape.dim(3), 4, [&](int64_t i, const LrnWindow& w) {
    y[i] = static_cast<T>(x[i] * std::pow(p.bias + p.alpha * w.sqr, -p.beta));
  });
  return absl::OkStatus();
}

// LRNGrad, TensorFlow's formula: for each output j of a row, with norm = bias + alpha * sqr_sum(j),
// every k in j's window gets grads[j] * ([k == j] * norm^-beta - 2 alpha beta x[k] out[j] / norm).
template <typename T>
absl::Status lrn_grad_kernel(KernelContext& ctx) {
  const DeviceTensor& grads = ctx.input(0);
  const LrnAttrs p = lrn_attrs(ctx);
  const T* g = grads.data<T>();
  const T* x = ctx.input(1).data<T>();
  const T* out = ctx.input(2).data<T>();
  T* dx = ctx.output(0).data<T>();
  std::fill(dx, dx + ctx.output(0).num_elements(), T(0));
  for_each_lrn_window(p, x, grads.num_elements(), grads.shape.dim(3), 8, [&](int64_t j, const LrnWindow& w) {
    const double norm = p.bias + p.alpha * w.sqr;
    const double gj = g[j], oj = out[j];
    for (int64_t k = w.lo; k < w.hi; ++k) {
      double d = -2 * p.alpha * p.beta * x[k] * oj / norm;
      if (k == j) d += std::pow(norm, -p.beta);
      dx[k] += static_cast<T>(d * gj);
    }
  });
  return absl::OkStatus();
}

}  // namespace

void register_normalization_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t>(r, "BiasAdd", DeviceType::kCPU,
                                                          []<typename T>() -> KernelFn { return bias_add_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "BiasAddGrad", DeviceType::kCPU, []<typename T>() -> KernelFn { return bias_add_grad_kernel<T>; });
  register_each<float, double>(r, "FusedBatchNormV3", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return fused_batch_norm_kernel<T>; });
  register_each<float, double>(r, "LRN", DeviceType::kCPU, []<typename T>() -> KernelFn { return lrn_kernel<T>; });
  register_each<float, double>(r, "LRNGrad", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return lrn_grad_kernel<T>; });
  // Not an op: the graph executor's epilogue kernel (Note [Bias and activation epilogue]).
  register_each<float, double>(r, "_FusedBiasActivation", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return bias_activation_kernel<T>; });
}

}  // namespace tapeflow::cpu
