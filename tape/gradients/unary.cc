// Gradients of the unary elementwise family (eager/ops/unary.cc), written with public ops.
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/unary.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

Grads neg_grad(const GradInputs&, Span g) { return {neg(g[0])}; }
Grads abs_grad(const GradInputs& op, Span g) { return {g[0] * sign(op.inputs[0])}; }
Grads zero_grad(const GradInputs& op, Span) { return {zeros_like(op.inputs[0])}; }
Grads square_grad(const GradInputs& op, Span g) { return {g[0] * (2 * op.inputs[0])}; }
Grads sqrt_grad(const GradInputs& op, Span g) { return {g[0] * 0.5 / op.outputs[0]}; }
Grads rsqrt_grad(const GradInputs& op, Span g) {
  const Tensor& y = op.outputs[0];
  return {g[0] * (-0.5 * y * y * y)};
}
Grads exp_grad(const GradInputs& op, Span g) { return {g[0] * op.outputs[0]}; }
Grads log_grad(const GradInputs& op, Span g) { return {g[0] / op.inputs[0]}; }
Grads log1p_grad(const GradInputs& op, Span g) { return {g[0] / (op.inputs[0] + 1)}; }
}  // namespace

void register_unary_gradients(GradientRegistry& r) {
  r.add("Neg", neg_grad);
  r.add("Abs", abs_grad);
  r.add("Sign", zero_grad);
  r.add("Square", square_grad);
  r.add("Sqrt", sqrt_grad);
  r.add("Rsqrt", rsqrt_grad);
  r.add("Exp", exp_grad);
  r.add("Log", log_grad);
  r.add("Log1p", log1p_grad);
}

}  // namespace tapeflow
