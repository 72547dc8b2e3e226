// Cumulative sums and products along one axis (TensorFlow's Cumsum and Cumprod).
//
//   Tensor x = {1, 2, 3, 4};
//   cumsum(x);                          // [1, 3, 6, 10]
//   cumsum(x, 0, /*exclusive=*/true);   // [0, 1, 3, 6]: each element left out of its own sum
//   cumsum(x, 0, false, /*reverse=*/true);  // [10, 9, 7, 4]: summed from the end
//   cumprod(x);                         // [1, 2, 6, 24]
//
// The axis may be negative (counted from the end); the input needs rank >= 1. Integer sums and
// products wrap on overflow, as TensorFlow's do.
#pragma once

#include <cstdint>
#include <source_location>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()
// float32, float64, int32, int64, uint8.
Tensor cumsum(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false, TF_SL);
Tensor cumprod(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false, TF_SL);
#undef TF_SL

}  // namespace tapeflow
