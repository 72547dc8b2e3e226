// Gradients of the normalization family. BiasAdd's bias gradient is BiasAddGrad, whose own
// gradient broadcasts back along the channels (a BiasAdd onto zeros). LRN's is LRNGrad (which
// TensorFlow does not differentiate; neither do we). FusedBatchNormV3's gradient is a
// composition of public ops, not TensorFlow's FusedBatchNormGradV3 op: it differentiates again
// (second order) and traces with no kernel of its own, and it also carries the gradients of the
// batch_mean / batch_variance outputs and of the mean / variance inputs, which TF's drops.
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/nn.h"
#include "eager/ops/normalization.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

const std::string& data_format(const GradInputs& op) { return op.attrs.get<std::string>("data_format"); }

Grads bias_add_grad_fn(const GradInputs& op, Span g) {
  return {g[0], op.needs(1) ? bias_add_grad(g[0], data_format(op)) : Tensor()};
}

Grads bias_add_grad_grad(const GradInputs& op, Span g) {
  return {bias_add(zeros_like(op.inputs[0]), g[0], data_format(op))};
}

Grads lrn_grad_fn(const GradInputs& op, Span g) {
  return {lrn_grad(g[0], op.inputs[0], op.outputs[0], op.attrs.get<int64_t>("depth_radius"),
                   op.attrs.get<double>("bias"), op.attrs.get<double>("alpha"), op.attrs.get<double>("beta"))};
}

// Note [Batch norm gradient]: with per-channel m, v (the batch's in training, the given mean
// and variance in inference), inv = 1 / sqrt(v + eps) and xhat = (x - m) * inv:
//   y = xhat * scale + offset
// training, n elements per channel, f = exponential_avg_factor:
//   dx = scale * inv * (dy - mean(dy) - xhat * mean(dy * xhat))
//        + f * g_mean / n + f * g_var * 2 (x - m) / max(n - 1, 1)
//   d mean_in = (1 - f) g_mean, d variance_in = (1 - f) g_var (zero when f == 1: unread)
// inference:
//   dx = dy * scale * inv, d mean = g_mean - sum(dy) * scale * inv,
//   d variance = g_var - sum(dy * (x - m)) * scale * inv^3 / 2
// and in both d scale = sum(dy * xhat), d offset = sum(dy).
Grads fused_batch_norm_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& scale = op.inputs[1];
  const bool nchw = data_format(op) == "NCHW";
  const bool training = op.attrs.get<bool>("is_training");
  const double eps = op.attrs.get<double>("epsilon");
  const Axes axes = nchw ? Axes{0, 2, 3} : Axes{0, 1, 2};
  // A per-channel [C] tensor as something that broadcasts against x.
  auto per_channel = [&](const Tensor& t) { return nchw ? reshape(t, {-1, 1, 1}) : t; };
  const Tensor m = training ? op.outputs[3] : op.inputs[3];
  const Tensor v = training ? op.outputs[4] : op.inputs[4];
  const Tensor& dy = g[0];
  const Tensor inv = rsqrt(v + eps);
  const Tensor centered = x - per_channel(m);
  const Tensor xhat = centered * per_channel(inv);
  const Tensor dscale = reduce_sum(dy * xhat, axes);
  const Tensor doffset = reduce_sum(dy, axes);
  Tensor dx, dmean, dvar;
  if (training) {
    const double f = op.attrs.get<double>("exponential_avg_factor");
    const Tensor count = reduce_sum(ones_like(x), axes);
    const Tensor mean_dy = doffset / count, mean_dy_xhat = dscale / count;
    dx = per_channel(scale * inv) * (dy - per_channel(mean_dy) - xhat * per_channel(mean_dy_xhat)) +
         per_channel(g[1] * f / count) + centered * per_channel(g[2] * (2 * f) / maximum(count - 1.0, 1.0));
    dmean = f == 1.0 ? zeros_like(op.inputs[3]) : g[1] * (1 - f);
    dvar = f == 1.0 ? zeros_like(op.inputs[4]) : g[2] * (1 - f);
  } else {
    dx = dy * per_channel(scale * inv);
    dmean = g[1] - doffset * scale * inv;
    dvar = g[2] - reduce_sum(dy * centered, axes) * scale * inv * inv * inv * 0.5;
  }
  return {dx, dscale, doffset, dmean, dvar};
}
}  // namespace

void register_normalization_gradients(GradientRegistry& r) {
  r.add("BiasAdd", bias_add_grad_fn);
  r.add("BiasAddGrad", bias_add_grad_grad);
  r.add("FusedBatchNormV3", fused_batch_norm_grad);
  r.add("LRN", lrn_grad_fn);
}

}  // namespace tapeflow
