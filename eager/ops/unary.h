// Unary elementwise ops, one kernel each (activations such as relu: eager/ops/activation.h).
//
//   Tensor y = tapeflow::exp(x);      // float32 or float64
//   Tensor n = tapeflow::neg(x);      // any signed numeric dtype
#pragma once

#include <source_location>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()
// Numeric (float and integer) inputs.
Tensor neg(const Tensor& x, TF_SL);
Tensor abs(const Tensor& x, TF_SL);
Tensor sign(const Tensor& x, TF_SL);
Tensor square(const Tensor& x, TF_SL);
// Floating-point inputs.
Tensor sqrt(const Tensor& x, TF_SL);
Tensor rsqrt(const Tensor& x, TF_SL);
Tensor exp(const Tensor& x, TF_SL);
Tensor log(const Tensor& x, TF_SL);
Tensor log1p(const Tensor& x, TF_SL);
Tensor tanh(const Tensor& x, TF_SL);
Tensor sigmoid(const Tensor& x, TF_SL);
Tensor floor(const Tensor& x, TF_SL);
// Bool input.
Tensor logical_not(const Tensor& x, TF_SL);
#undef TF_SL

// Unary minus: -x.
Tensor operator-(const Tensor& x);

}  // namespace tapeflow
