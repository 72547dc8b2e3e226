// Gradients of the math family (eager/ops/math.cc), written with public ops so they trace into
// graphs and differentiate again (second order). The formulas are TensorFlow's (math_grad).
#include <numbers>

#include "absl/strings/str_cat.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/ops/math.h"
#include "eager/ops/unary.h"
#include "eager/ops/where.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

Grads reciprocal_grad(const GradInputs& op, Span g) {
  const Tensor& y = op.outputs[0];
  return {neg(g[0]) * y * y};
}
Grads expm1_grad(const GradInputs& op, Span g) { return {g[0] * exp(op.inputs[0])}; }
Grads sin_grad(const GradInputs& op, Span g) { return {g[0] * cos(op.inputs[0])}; }
Grads cos_grad(const GradInputs& op, Span g) { return {neg(g[0]) * sin(op.inputs[0])}; }
Grads tan_grad(const GradInputs& op, Span g) { return {g[0] * square(reciprocal(cos(op.inputs[0])))}; }
// TensorFlow's math_grad.py: d asin = 1 / sqrt(1 - x^2), d acos its negation, d atan = 1 / (1 + x^2),
// d asinh = 1 / cosh(y), d acosh = 1 / sinh(y), d atanh = 1 / (1 - x^2).
Grads asin_grad(const GradInputs& op, Span g) { return {g[0] * rsqrt(1 - square(op.inputs[0]))}; }
Grads acos_grad(const GradInputs& op, Span g) { return {neg(g[0]) * rsqrt(1 - square(op.inputs[0]))}; }
Grads atan_grad(const GradInputs& op, Span g) { return {g[0] / (1 + square(op.inputs[0]))}; }
Grads sinh_grad(const GradInputs& op, Span g) { return {g[0] * cosh(op.inputs[0])}; }
Grads cosh_grad(const GradInputs& op, Span g) { return {g[0] * sinh(op.inputs[0])}; }
Grads asinh_grad(const GradInputs& op, Span g) { return {g[0] / cosh(op.outputs[0])}; }
Grads acosh_grad(const GradInputs& op, Span g) { return {g[0] / sinh(op.outputs[0])}; }
Grads atanh_grad(const GradInputs& op, Span g) { return {g[0] / (1 - square(op.inputs[0]))}; }
// d/dx erf(x) = 2/sqrt(pi) exp(-x^2); erfc is its negation.
Tensor erf_slope(const Tensor& x) { return 2 * std::numbers::inv_sqrtpi * exp(neg(square(x))); }
Grads erf_grad(const GradInputs& op, Span g) { return {g[0] * erf_slope(op.inputs[0])}; }
Grads erfc_grad(const GradInputs& op, Span g) { return {neg(g[0]) * erf_slope(op.inputs[0])}; }

// Each input's gradient, summed back over broadcast axes, computed only where the tape needs it.
template <typename Fx, typename Fy>
Grads both(const GradInputs& op, Fx gx, Fy gy) {
  return {op.needs(0) ? unbroadcast(gx(), op.inputs[0].shape()) : Tensor(),
          op.needs(1) ? unbroadcast(gy(), op.inputs[1].shape()) : Tensor()};
}
Grads squared_difference_grad(const GradInputs& op, Span g) {
  const Tensor gx = 2 * g[0] * (op.inputs[0] - op.inputs[1]);
  return both(op, [&] { return gx; }, [&] { return neg(gx); });
}
// TensorFlow's: dx = div_no_nan(g, y), dy = g * div_no_nan(div_no_nan(-x, y), y).
Grads div_no_nan_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& y = op.inputs[1];
  return both(op, [&] { return div_no_nan(g[0], y); }, [&] { return g[0] * div_no_nan(div_no_nan(neg(x), y), y); });
}

// d atan2(y, x) = (x dy - y dx) / (x^2 + y^2), as TensorFlow's _Atan2Grad.
Grads atan2_grad(const GradInputs& op, Span g) {
  const Tensor& y = op.inputs[0];
  const Tensor& x = op.inputs[1];
  const Tensor scale = g[0] / (square(x) + square(y));
  return both(op, [&] { return scale * x; }, [&] { return neg(scale * y); });
}

// As TensorFlow's _XLogyGrad and _XDivyGrad: where x is 0 both partials are 0.
Grads xlogy_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& y = op.inputs[1];
  return both(op, [&] { return g[0] * xlogy(cast(not_equal(x, 0.0), x.dtype()), y); }, [&] { return g[0] * xdivy(x, y); });
}
Grads xdivy_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& y = op.inputs[1];
  return both(op, [&] { return g[0] * xdivy(cast(not_equal(x, 0.0), x.dtype()), y); },
              [&] { return g[0] * xdivy(neg(x), square(y)); });
}

// As TensorFlow's _CheckNumericsGrad: the gradient is checked too.
Grads check_numerics_grad(const GradInputs& op, Span g) {
  return {check_numerics(g[0], absl::StrCat("Not a number (NaN) or infinity (Inf) values detected in gradient. ",
                                            op.attrs.get<std::string>("message")))};
}

Grads add_n_grad(const GradInputs& op, Span g) {
  Grads out;
  for (size_t i = 0; i < op.inputs.size(); ++i) out.push_back(op.needs(i) ? g[0] : Tensor());
  return out;
}

// t's gradient passes inside [lo, hi]; a bound gets it where it clipped (summed when scalar).
Grads clip_by_value_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& lo = op.inputs[1];
  const Tensor& hi = op.inputs[2];
  const Tensor below = less(x, lo), above = greater(x, hi);
  return {op.needs(0) ? where(logical_or(below, above), zeros_like(g[0]), g[0]) : Tensor(),
          op.needs(1) ? unbroadcast(where(below, g[0], 0), lo.shape()) : Tensor(),
          op.needs(2) ? unbroadcast(where(above, g[0], 0), hi.shape()) : Tensor()};
}
}  // namespace

void register_math_gradients(GradientRegistry& r) {
  r.add("Reciprocal", reciprocal_grad);
  r.add("Expm1", expm1_grad);
  r.add("Sin", sin_grad);
  r.add("Cos", cos_grad);
  r.add("Tan", tan_grad);
  r.add("Asin", asin_grad);
  r.add("Acos", acos_grad);
  r.add("Atan", atan_grad);
  r.add("Sinh", sinh_grad);
  r.add("Cosh", cosh_grad);
  r.add("Asinh", asinh_grad);
  r.add("Acosh", acosh_grad);
  r.add("Atanh", atanh_grad);
  r.add("Erf", erf_grad);
  r.add("Erfc", erfc_grad);
  r.add("SquaredDifference", squared_difference_grad);
  r.add("DivNoNan", div_no_nan_grad);
  r.add("Atan2", atan2_grad);
  r.add("CheckNumerics", check_numerics_grad);
  r.add("Xlogy", xlogy_grad);
  r.add("Xdivy", xdivy_grad);
  r.add("AddN", add_n_grad);
  r.add("ClipByValue", clip_by_value_grad);
}

}  // namespace tapeflow
