// Reductions: sum, max, min, prod, mean, all and any over axes, and argmax / argmin along one axis.
//
//   Tensor x = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
//   reduce_sum(x);                    // 21, a scalar (no axes given: every axis, axis=None)
//   reduce_sum(x, {0});               // [5, 7, 9]
//   reduce_sum(x, {});                // x itself: an empty list reduces none (axis=[])
//   reduce_sum(x, Axes::all(), true); // [[21]]: every axis, kept
//   reduce_max(x, {-1}, true);        // [[3], [6]]: keepdims leaves size-1 axes
//   reduce_mean(x, {1});              // [2, 5]
//   argmax(x, 1);                     // [2, 2] as int64
//
// Axes may be negative (counted from the end); a repeated or out-of-range axis is an
// InvalidArgumentError naming the axis and the rank. Reducing an empty axis gives 0 for sum,
// 1 for prod, and for float max/min -inf/+inf (as TensorFlow); integer max/min of an empty
// axis has no sensible value and is an InvalidArgumentError. NaN propagates through float
// max/min, and argmax/argmin pick the first NaN (as NumPy); otherwise ties go to the first
// index. Integer sums wrap on overflow, as TensorFlow's do.
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "eager/tensor.h"

namespace tapeflow {

// The axes a reduction reduces, TensorFlow's two spellings kept apart: every axis when left
// out or Axes::all() (axis=None), or exactly the listed ones, where an empty list reduces
// none (axis=[]). Has no default constructor on purpose, so `{}` is the empty list.
class Axes {
 public:
  Axes(std::initializer_list<int64_t> axes) : axes_(axes) {}
  Axes(std::vector<int64_t> axes) : axes_(std::move(axes)) {}
  static Axes all() {
    Axes a{};
    a.all_ = true;
    return a;
  }
  bool is_all() const { return all_; }
  // The explicit list for a tensor of `rank` (0 .. rank-1 for all()).
  std::vector<int64_t> resolve(int rank) const;

 private:
  std::vector<int64_t> axes_;
  bool all_ = false;
};

#define TF_SL std::source_location loc = std::source_location::current()
// float32, float64, int32, int64, uint8. Float32 sums accumulate pairwise (error grows with
// log n, not n).
Tensor reduce_sum(const Tensor& x, const Axes& axes = Axes::all(), bool keepdims = false, TF_SL);
Tensor reduce_max(const Tensor& x, const Axes& axes = Axes::all(), bool keepdims = false, TF_SL);
Tensor reduce_min(const Tensor& x, const Axes& axes = Axes::all(), bool keepdims = false, TF_SL);
// float32, float64, int32, int64.
Tensor reduce_prod(const Tensor& x, const Axes& axes = Axes::all(), bool keepdims = false, TF_SL);
// bool: logical and / or over the axes (TensorFlow's All and Any); an empty axis gives true /
// false.
Tensor reduce_all(const Tensor& x, const Axes& axes = Axes::all(), bool keepdims = false, TF_SL);
Tensor reduce_any(const Tensor& x, const Axes& axes = Axes::all(), bool keepdims = false, TF_SL);
// Composite: reduce_sum / count. Integer inputs divide as integers (truncating), as
// TensorFlow; the integer mean of an empty axis is an InvalidArgumentError.
Tensor reduce_mean(const Tensor& x, const Axes& axes = Axes::all(), bool keepdims = false, TF_SL);

// The index of the largest (smallest) element along `axis`, which is removed from the shape.
// output_type is int32 or int64. The axis must not be empty.
Tensor argmax(const Tensor& x, int64_t axis, DType output_type = DType::kInt64, TF_SL);
Tensor argmin(const Tensor& x, int64_t axis, DType output_type = DType::kInt64, TF_SL);
#undef TF_SL

}  // namespace tapeflow
