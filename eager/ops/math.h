// The math family: TensorFlow's elementwise math ops beyond the basic unary and binary ones,
// each one primitive op under TensorFlow's op type name (Reciprocal, Expm1, Sin, Cos, Tan, Asin,
// Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Erf,
// Erfc, Ceil, Round, Rint, IsNan, IsInf, IsFinite, SquaredDifference, DivNoNan, Atan2, Xlogy,
// Xdivy, TruncateDiv,
// TruncateMod, AddN, ClipByValue).
//
//   Tensor r = tapeflow::round(Tensor{0.5f, 1.5f, 2.5f});   // [0, 2, 2]: halves to even
//   Tensor d = squared_difference(pred, label);              // (pred - label)^2, broadcasting
//   Tensor q = div_no_nan(x, count);                         // 0 where count is 0
//   Tensor s = add_n({a, b, c});                             // a + b + c, one op
//   Tensor c = clip_by_value(x, -1.f, 1.f);
#pragma once

#include <source_location>
#include <string_view>
#include <vector>

#include "eager/operand.h"
#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()
// Floating-point inputs (float32, float64).
Tensor reciprocal(const Tensor& x, TF_SL);  // 1 / x
Tensor expm1(const Tensor& x, TF_SL);       // exp(x) - 1, accurate near 0
Tensor sin(const Tensor& x, TF_SL);
Tensor cos(const Tensor& x, TF_SL);
Tensor tan(const Tensor& x, TF_SL);
// Inverse and hyperbolic: NaN outside the domain (asin, acos: [-1, 1]; acosh: [1, inf);
// atanh: (-1, 1), +-inf at +-1), as std:: and TensorFlow give it.
Tensor asin(const Tensor& x, TF_SL);
Tensor acos(const Tensor& x, TF_SL);
Tensor atan(const Tensor& x, TF_SL);
Tensor sinh(const Tensor& x, TF_SL);
Tensor cosh(const Tensor& x, TF_SL);
Tensor asinh(const Tensor& x, TF_SL);
Tensor acosh(const Tensor& x, TF_SL);
Tensor atanh(const Tensor& x, TF_SL);
Tensor erf(const Tensor& x, TF_SL);
Tensor erfc(const Tensor& x, TF_SL);  // 1 - erf(x), accurate for large x
Tensor ceil(const Tensor& x, TF_SL);
Tensor rint(const Tensor& x, TF_SL);  // nearest integer, halves to even
// float32, float64, int32, int64 (integers are returned as they are).
Tensor round(const Tensor& x, TF_SL);  // nearest integer, halves to even (TensorFlow's Round, not std::round)
// Floating-point inputs, bool results.
Tensor is_nan(const Tensor& x, TF_SL);
Tensor is_inf(const Tensor& x, TF_SL);
Tensor is_finite(const Tensor& x, TF_SL);

// tf.debugging.check_numerics: x (float32, float64) itself, or an InvalidArgumentError
// "<message> : Tensor has NaN at element [1,2] of a [2,3] float32 tensor" (the first NaN or
// infinity found), wherever it runs: eagerly, or as a node of a graph when a Session reaches it.
// The gradient is checked too. (enable_check_numerics, eager/check_numerics.h, checks every op.)
Tensor check_numerics(const Tensor& x, std::string_view message, TF_SL);

// Binary, with NumPy broadcasting; a plain scalar takes the other side's dtype (eager/operand.h).
// float32, float64, int32, int64.
Tensor squared_difference(const Operand& x, const Operand& y, TF_SL);  // (x - y)^2
// float32, float64: x / y, and 0 where y is 0 (even 0 / 0).
Tensor div_no_nan(const Operand& x, const Operand& y, TF_SL);
// float32, float64: the angle of the point (x, y) in (-pi, pi], std::atan2(y, x) (note the order,
// as TensorFlow's tf.math.atan2(y, x)); atan2(0, 0) is 0.
Tensor atan2(const Operand& y, const Operand& x, TF_SL);
// float32, float64: x * log(y) and x / y, each 0 where x is 0 (even where y is 0: an entropy's
// 0 * log(0) term), as TensorFlow's tf.math.xlogy / xdivy.
Tensor xlogy(const Operand& x, const Operand& y, TF_SL);
Tensor xdivy(const Operand& x, const Operand& y, TF_SL);
// int32, int64, uint8: x / y rounded toward zero; a zero divisor is an InvalidArgumentError.
Tensor truncate_div(const Operand& x, const Operand& y, TF_SL);
// int32, int64, float32, float64: the remainder with the dividend's sign (C's %, fmod), so
// truncate_div(x, y) * y + truncate_mod(x, y) == x. A zero integer divisor is an error.
Tensor truncate_mod(const Operand& x, const Operand& y, TF_SL);

// The elementwise sum of one or more tensors of one dtype and one shape (no broadcasting, as
// TensorFlow's AddN). Numeric dtypes.
Tensor add_n(const std::vector<Tensor>& inputs, TF_SL);

// min(max(x, lo), hi), elementwise; NaN in x passes through. Known scalar bounds with
// lo > hi are an InvalidArgumentError. Bounds that are scalars or have x's shape make one
// ClipByValue op (TensorFlow's rule for it); other bounds broadcast against x as in
// tf.clip_by_value, through maximum and minimum.
Tensor clip_by_value(const Operand& x, const Operand& lo, const Operand& hi, TF_SL);
#undef TF_SL

}  // namespace tapeflow
