// Gradients of the activation family (eager/ops/activation.cc) and of Sigmoid and Tanh: each
// runs TensorFlow's gradient op (ReluGrad, ...), and each gradient op has its own gradient, so
// second-order tapes and graphs work (TensorFlow's _ReluGradGrad and friends).
#include "eager/ops/activation.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/unary.h"
#include "eager/ops/where.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

// Relu and Relu6 pass the gradient where their output is strictly inside the linear piece, so
// the outputs decide as well as the inputs (and let the inputs be freed).
Grads relu_grad_fn(const GradInputs& op, Span g) { return {relu_grad(g[0], op.outputs[0])}; }
Grads relu6_grad_fn(const GradInputs& op, Span g) { return {relu6_grad(g[0], op.outputs[0])}; }
Grads elu_grad_fn(const GradInputs& op, Span g) { return {elu_grad(g[0], op.outputs[0])}; }
Grads selu_grad_fn(const GradInputs& op, Span g) { return {selu_grad(g[0], op.outputs[0])}; }
Grads softplus_grad_fn(const GradInputs& op, Span g) { return {softplus_grad(g[0], op.inputs[0])}; }
Grads softsign_grad_fn(const GradInputs& op, Span g) { return {softsign_grad(g[0], op.inputs[0])}; }
Grads leaky_relu_grad_fn(const GradInputs& op, Span g) {
  return {leaky_relu_grad(g[0], op.inputs[0], op.attrs.get<double>("alpha"))};
}
Grads sigmoid_grad_fn(const GradInputs& op, Span g) { return {sigmoid_grad(op.outputs[0], g[0])}; }
Grads tanh_grad_fn(const GradInputs& op, Span g) { return {tanh_grad(op.outputs[0], g[0])}; }

// ---- gradients of the gradient ops: inputs (gradients, features|outputs) ----
// Piecewise-linear in `gradients` with a mask from `features`: the mask has no gradient.
Grads relu_grad_grad(const GradInputs& op, Span g) { return {relu_grad(g[0], op.inputs[1]), zeros_like(op.inputs[1])}; }
Grads relu6_grad_grad(const GradInputs& op, Span g) {
  return {relu6_grad(g[0], op.inputs[1]), zeros_like(op.inputs[1])};
}
Grads leaky_relu_grad_grad(const GradInputs& op, Span g) {
  return {leaky_relu_grad(g[0], op.inputs[1], op.attrs.get<double>("alpha")), zeros_like(op.inputs[1])};
}
// EluGrad and SeluGrad are g * (y + c) where y <= 0: d/dy there is g.
Grads elu_grad_grad(const GradInputs& op, Span g) {
  const Tensor& y = op.inputs[1];
  return {elu_grad(g[0], y), where(greater(y, 0), zeros_like(y), g[0] * op.inputs[0])};
}
Grads selu_grad_grad(const GradInputs& op, Span g) {
  const Tensor& y = op.inputs[1];
  return {selu_grad(g[0], y), where(greater(y, 0), zeros_like(y), g[0] * op.inputs[0])};
}
// SoftplusGrad = g * s(x) with s = sigmoid: d/dx = g s (1 - s).
Grads softplus_grad_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[1];
  const Tensor s = sigmoid(x);
  return {softplus_grad(g[0], x), g[0] * op.inputs[0] * s * (1 - s)};
}
// SoftsignGrad = g / (1 + |x|)^2: d/dx = -2 g sign(x) / (1 + |x|)^3.
Grads softsign_grad_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[1];
  const Tensor d = 1 + abs(x);
  return {softsign_grad(g[0], x), -2 * g[0] * op.inputs[0] * sign(x) / (d * d * d)};
}
// SigmoidGrad(y, dy) = dy y (1 - y); TanhGrad(y, dy) = dy (1 - y^2).
Grads sigmoid_grad_grad(const GradInputs& op, Span g) {
  const Tensor& y = op.inputs[0];
  return {g[0] * op.inputs[1] * (1 - 2 * y), sigmoid_grad(y, g[0])};
}
Grads tanh_grad_grad(const GradInputs& op, Span g) {
  const Tensor& y = op.inputs[0];
  return {-2 * g[0] * op.inputs[1] * y, tanh_grad(y, g[0])};
}
}  // namespace

void register_activation_gradients(GradientRegistry& r) {
  r.add("Relu", relu_grad_fn);
  r.add("Relu6", relu6_grad_fn);
  r.add("Elu", elu_grad_fn);
  r.add("Selu", selu_grad_fn);
  r.add("Softplus", softplus_grad_fn);
  r.add("Softsign", softsign_grad_fn);
  r.add("LeakyRelu", leaky_relu_grad_fn);
  r.add("Sigmoid", sigmoid_grad_fn);
  r.add("Tanh", tanh_grad_fn);
  r.add("ReluGrad", relu_grad_grad);
  r.add("Relu6Grad", relu6_grad_grad);
  r.add("LeakyReluGrad", leaky_relu_grad_grad);
  r.add("EluGrad", elu_grad_grad);
  r.add("SeluGrad", selu_grad_grad);
  r.add("SoftplusGrad", softplus_grad_grad);
  r.add("SoftsignGrad", softsign_grad_grad);
  r.add("SigmoidGrad", sigmoid_grad_grad);
  r.add("TanhGrad", tanh_grad_grad);
}

}  // namespace tapeflow
