// Gradients of the binary elementwise family (eager/ops/binary.cc). Each input's gradient is
// summed back over the axes broadcasting stretched (unbroadcast), and skipped when the tape
// does not need it (y * 0.5 needs no gradient for 0.5).
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/unary.h"
#include "eager/ops/where.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

// Each input's gradient, computed only where the tape needs it (GradInputs::needs).
template <typename Fx, typename Fy>
Grads both(const GradInputs& op, Fx gx, Fy gy) {
  return {op.needs(0) ? unbroadcast(gx(), op.inputs[0].shape()) : Tensor(),
          op.needs(1) ? unbroadcast(gy(), op.inputs[1].shape()) : Tensor()};
}
Grads add_grad(const GradInputs& op, Span g) {
  return both(op, [&] { return g[0]; }, [&] { return g[0]; });
}
Grads sub_grad(const GradInputs& op, Span g) {
  return both(op, [&] { return g[0]; }, [&] { return neg(g[0]); });
}
Grads mul_grad(const GradInputs& op, Span g) {
  return both(op, [&] { return g[0] * op.inputs[1]; }, [&] { return g[0] * op.inputs[0]; });
}
Grads div_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& y = op.inputs[1];
  return both(op, [&] { return g[0] / y; }, [&] { return neg(g[0]) * x / (y * y); });
}
Grads floor_mod_grad(const GradInputs& op, Span g) {
  return both(op, [&] { return g[0]; }, [&] { return neg(g[0]) * floor_div(op.inputs[0], op.inputs[1]); });
}
Grads pow_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& y = op.inputs[1];
  const Tensor& z = op.outputs[0];
  return both(op, [&] { return g[0] * y * pow(x, y - 1); },
              [&] {
                // d/dy x^y = x^y log x, taken as 0 where x <= 0 (as TensorFlow does).
                const Tensor positive = greater(x, 0);
                const Tensor safe_x = where(positive, x, 1);
                return where(positive, g[0] * z * log(safe_x), 0);
              });
}
Grads maximum_grad(const GradInputs& op, Span g) {
  const Tensor pick_x = greater_equal(op.inputs[0], op.inputs[1]);
  return both(op, [&] { return where(pick_x, g[0], 0); }, [&] { return where(pick_x, 0, g[0]); });
}
Grads minimum_grad(const GradInputs& op, Span g) {
  const Tensor pick_x = less_equal(op.inputs[0], op.inputs[1]);
  return both(op, [&] { return where(pick_x, g[0], 0); }, [&] { return where(pick_x, 0, g[0]); });
}
}  // namespace

void register_binary_gradients(GradientRegistry& r) {
  r.add("Add", add_grad);
  r.add("Sub", sub_grad);
  r.add("Mul", mul_grad);
  r.add("Div", div_grad);
  r.add("FloorMod", floor_mod_grad);
  r.add("Pow", pow_grad);
  r.add("Maximum", maximum_grad);
  r.add("Minimum", minimum_grad);
}

}  // namespace tapeflow
