// Selection by value: the k largest entries of each row (TensorFlow's TopKV2) and the distinct
// values of a vector (TensorFlow's Unique).
//
//   auto [values, indices] = top_k(Tensor{1.f, 5.f, 3.f, 5.f}, 2);  // [5, 5], [1, 3] (int32)
//   auto [y, idx] = unique(Tensor{4, 1, 4, 2});                      // [4, 1, 2], [0, 1, 0, 2]
//
// top_k works along the last dim of x (rank >= 1; float32, float64, int32, int64, uint8). Equal
// values come out lower index first, as TensorFlow's; NaN counts as larger than every number
// (the NaNs of a row come first, in index order). Its gradient flows to x through `values`
// (scattered to the chosen positions); `indices` is not differentiable.
//
// unique takes a vector of any dtype and returns its distinct values in order of first
// occurrence and, for each element, the position of its value in y. 0.0 and -0.0 are one value;
// every NaN is a value of its own (NaN != NaN), as in TensorFlow. y's length depends on the
// data: in a graph it is an unknown dim. unique has no gradient (TensorFlow has none).
#pragma once

#include <cstdint>
#include <source_location>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()

struct TopK {
  Tensor values;   // x's dtype, shape x.shape[:-1] + [k]
  Tensor indices;  // int32, positions along x's last dim
};
// 0 <= k <= x.shape[-1]. sorted = false is accepted (TensorFlow's attr) and still returns the
// values in descending order, which TensorFlow allows.
TopK top_k(const Tensor& x, int64_t k = 1, bool sorted = true, TF_SL);

struct Unique {
  Tensor y;    // x's dtype, [number of distinct values]
  Tensor idx;  // out_idx (int32 or int64), x's shape: x[i] == y[idx[i]]
};
Unique unique(const Tensor& x, DType out_idx = DType::kInt32, TF_SL);

#undef TF_SL

}  // namespace tapeflow
