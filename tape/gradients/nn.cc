// Gradients of the nn family (eager/ops/nn.cc), from the outputs y over the last axis:
//   Softmax:    dx = (g - sum(g * y)) * y
//   LogSoftmax: dx = g - exp(y) * sum(g)
// Public ops only, so second derivatives come from the same code.
#include "eager/ops/binary.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

Grads softmax_grad(const GradInputs& op, Span g) {
  const Tensor& y = op.outputs[0];
  return {(g[0] - reduce_sum(g[0] * y, {-1}, /*keepdims=*/true)) * y};
}

// L2Loss = sum(t^2) / 2: d/dt = t, times the scalar upstream gradient.
Grads l2_loss_grad(const GradInputs& op, Span g) { return {op.inputs[0] * g[0]}; }

Grads log_softmax_grad(const GradInputs& op, Span g) {
  return {g[0] - exp(op.outputs[0]) * reduce_sum(g[0], {-1}, /*keepdims=*/true)};
}
}  // namespace

void register_nn_gradients(GradientRegistry& r) {
  r.add("Softmax", softmax_grad);
  r.add("LogSoftmax", log_softmax_grad);
  r.add("L2Loss", l2_loss_grad);
}

}  // namespace tapeflow
