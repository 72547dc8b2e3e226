// where(condition, x, y): elementwise select with NumPy broadcasting of all three.
// where(condition): the coordinates of condition's true (nonzero) elements (TensorFlow's Where).
//
//   Tensor r = tapeflow::where(x > 0, x, 0.0f);   // a plain scalar takes x's dtype
//   Tensor c = tapeflow::where(Tensor{{true, false}, {false, true}});  // int64 [[0, 0], [1, 1]]
#pragma once

#include <source_location>

#include "eager/operand.h"

namespace tapeflow {

Tensor where(const Tensor& condition, const Operand& x, const Operand& y,
             std::source_location loc = std::source_location::current());
// int64 [n, rank]: one row per true (for numbers: nonzero) element, in row-major order. bool,
// float32, float64, int32, int64, uint8. The row count is known only after the kernel runs
// (Note [Data-dependent output shapes]): in a graph it is an unknown dim.
Tensor where(const Tensor& condition, std::source_location loc = std::source_location::current());

}  // namespace tapeflow
