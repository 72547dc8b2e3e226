// Binary elementwise ops with NumPy broadcasting, and the C++ operators.
//
//   Tensor c = a + b;                 // add(a, b)
//   Tensor d = a * 2;                 // a plain scalar takes a's dtype (see eager/operand.h)
//   Tensor m = tapeflow::maximum(a, 0.5f);
//   Tensor e = tapeflow::equal(a, b); // bool
//
// Both inputs must have the same dtype (InvalidArgumentError otherwise); integer division or
// modulo by zero is an InvalidArgumentError.
#pragma once

#include <source_location>

#include "eager/operand.h"
#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()
// Arithmetic on float32, float64, int32, int64, uint8.
Tensor add(const Operand& x, const Operand& y, TF_SL);
Tensor sub(const Operand& x, const Operand& y, TF_SL);
Tensor mul(const Operand& x, const Operand& y, TF_SL);
Tensor div(const Operand& x, const Operand& y, TF_SL);        // integers truncate toward zero
Tensor floor_div(const Operand& x, const Operand& y, TF_SL);  // rounds toward -infinity
Tensor mod(const Operand& x, const Operand& y, TF_SL);        // floor modulo: sign of y
Tensor pow(const Operand& x, const Operand& y, TF_SL);
Tensor maximum(const Operand& x, const Operand& y, TF_SL);
Tensor minimum(const Operand& x, const Operand& y, TF_SL);
// clip_by_value, squared_difference, div_no_nan, ...: eager/ops/math.h.
// Comparisons give bool tensors.
Tensor equal(const Operand& x, const Operand& y, TF_SL);
Tensor not_equal(const Operand& x, const Operand& y, TF_SL);
Tensor less(const Operand& x, const Operand& y, TF_SL);
Tensor less_equal(const Operand& x, const Operand& y, TF_SL);
Tensor greater(const Operand& x, const Operand& y, TF_SL);
Tensor greater_equal(const Operand& x, const Operand& y, TF_SL);
// Logic on bool tensors.
Tensor logical_and(const Operand& x, const Operand& y, TF_SL);
Tensor logical_or(const Operand& x, const Operand& y, TF_SL);
#undef TF_SL

// Operators: at least one side must be a Tensor (or Variable); errors name the line of the
// expression.
Tensor operator+(const Operand& x, const Operand& y);
Tensor operator-(const Operand& x, const Operand& y);
Tensor operator*(const Operand& x, const Operand& y);
Tensor operator/(const Operand& x, const Operand& y);

}  // namespace tapeflow
