// Shape: the dimensions of a tensor. A dimension of -1 is unknown (graph placeholders);
// an eager tensor always has a fully defined shape.
//
//   Shape s{2, 3};        s.rank() == 2, s.num_elements() == 6, s.to_string() == "[2,3]"
//   Shape p{-1, 784};     p.is_fully_defined() == false
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tapeflow {

inline constexpr int64_t kUnknownDim = -1;

class Shape {
 public:
  using Dims = absl::InlinedVector<int64_t, 4>;

  Shape() = default;  // a scalar
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {}
  explicit Shape(const std::vector<int64_t>& dims) : dims_(dims.begin(), dims.end()) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  void set_dim(int i, int64_t d) { dims_[i] = d; }
  absl::Span<const int64_t> dims() const { return dims_; }
  std::vector<int64_t> as_vector() const { return {dims_.begin(), dims_.end()}; }
  void push_back(int64_t d) { dims_.push_back(d); }
  void insert(int pos, int64_t d) { dims_.insert(dims_.begin() + pos, d); }
  void erase(int pos) { dims_.erase(dims_.begin() + pos); }

  bool is_scalar() const { return dims_.empty(); }
  bool is_fully_defined() const;
  // Product of the dims; -1 when some dimension is unknown. Saturates at INT64_MAX instead of
  // overflowing: shapes of tensors are validated where they are made (core/checked_size.h), so
  // only an unvalidated shape can get there, and no allocation can succeed for it. Inline:
  // every op asks it several times.
  int64_t num_elements() const {
    int64_t n = 1;
    for (int64_t d : dims_) {
      if (d < 0) return kUnknownDim;
      if (__builtin_mul_overflow(n, d, &n)) n = INT64_MAX;
    }
    return n;
  }
  // "[2,3]", "[?,784]", "[]" for a scalar.
  std::string to_string() const;
  // True if every known dimension agrees and ranks agree (unknown matches anything).
  bool is_compatible_with(const Shape& other) const;

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  Dims dims_;
};

// NumPy broadcasting of two shapes; unknown dims broadcast to unknown unless the other is
// a known dim > 1. Error text names both shapes; the caller adds the op name.
absl::StatusOr<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Row-major strides in elements.
absl::InlinedVector<int64_t, 4> row_major_strides(const Shape& s);

// Maps a possibly negative axis into [0, rank); error if out of range.
absl::StatusOr<int> normalize_axis(int64_t axis, int rank);

// The dims of a rank-4 image in the other layout: [N, C, H, W] -> [N, H, W, C], and back.
inline Shape nchw_to_nhwc(const Shape& s) { return Shape{s.dim(0), s.dim(2), s.dim(3), s.dim(1)}; }
inline Shape nhwc_to_nchw(const Shape& s) { return Shape{s.dim(0), s.dim(3), s.dim(1), s.dim(2)}; }

}  // namespace tapeflow
