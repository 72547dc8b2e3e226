#include "core/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tapeflow {

bool Shape::is_fully_defined() const {
  for (int64_t d : dims_) if (d < 0) return false;
  return true;
}

std::string Shape::to_string() const {
  std::string out = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ",";
    out += dims_[i] < 0 ? std::string("?") : std::to_string(dims_[i]);
  }
  return out + "]";
}

bool Shape::is_compatible_with(const Shape& other) const {
  if (rank() != other.rank()) return false;
  for (int i = 0; i < rank(); ++i) {
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) return false;
  }
  return true;
}

absl::StatusOr<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  if (a == b) return a;
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a.dim(ia) : 1, db = ib >= 0 ? b.dim(ib) : 1;
    int64_t d;
    if (da == db) d = da;
    else if (da == 1) d = db;
    else if (db == 1) d = da;
    else if (da < 0) d = db;  // unknown meets known > 1: must equal it at run time
    else if (db < 0) d = da;
    else
      return absl::InvalidArgumentError(absl::StrCat(
          "Incompatible shapes for broadcasting: ", a.to_string(), " and ", b.to_string(),
          " (dimension ", i, ": ", da, " vs ", db, ")"));
    out.push_back(d);
  }
  return out;
}

absl::InlinedVector<int64_t, 4> row_major_strides(const Shape& s) {
  absl::InlinedVector<int64_t, 4> strides(s.rank());
  int64_t st = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    strides[i] = st;
    if (__builtin_mul_overflow(st, s.dim(i), &st)) st = INT64_MAX;  // unvalidated shapes only
  }
  return strides;
}

absl::StatusOr<int> normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank)
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range for a tensor of rank ",
                                                   rank, " (expected [", -rank, ", ", rank, "))"));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace tapeflow
