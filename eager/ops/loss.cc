// Composite losses (eager/ops/loss.h). Checks run up front so errors name the loss, not an op
// inside it.
#include "eager/ops/loss.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/nn.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"

namespace tapeflow {

namespace {

template <typename... Args>
[[noreturn]] void fail(const char* op, std::source_location loc, const Args&... args) {
  throw InvalidArgumentError(absl::StrCat("[", op, "] ", args...), loc);
}

void check_logits(const char* op, const Tensor& logits, std::source_location loc) {
  if (!logits.defined()) fail(op, loc, "input 'logits' is ", logits.empty_reason());
  const DType dt = logits.dtype();
  if (dt != DType::kFloat32 && dt != DType::kFloat64)
    fail(op, loc, "input 'logits' has dtype ", dtype_name(dt), "; expected one of float32, float64");
  if (logits.rank() < 1) fail(op, loc, "input 'logits' must have rank >= 1, got a scalar");
}

// "labels[1,2]" for a multi-dimensional labels tensor, "labels[5]" otherwise.
std::string label_name(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.rank());
  for (int i = shape.rank() - 1; i >= 0; --i) {
    index[i] = flat % shape.dim(i);
    flat /= shape.dim(i);
  }
  return absl::StrCat("labels[", absl::StrJoin(index, ","), "]");
}

template <typename T>
void check_label_range(const Tensor& labels, int64_t classes, std::source_location loc) {
  const std::vector<T> v = labels.to_vector<T>();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] >= classes)
      fail("sparse_softmax_cross_entropy_with_logits", loc, label_name(static_cast<int64_t>(i), labels.shape()),
           " = ", v[i], " is not in [0, ", classes, "): a label must be a class index below the number of classes");
  }
}

}  // namespace

Tensor softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, int64_t axis,
                                         std::source_location loc) {
  constexpr const char* kOp = "softmax_cross_entropy_with_logits";
  check_logits(kOp, logits, loc);
  if (!labels.defined()) fail(kOp, loc, "input 'labels' is ", labels.empty_reason());
  if (labels.dtype() != logits.dtype())
    fail(kOp, loc, "'labels' and 'logits' must have the same dtype, got ", dtype_name(labels.dtype()), " and ",
         dtype_name(logits.dtype()));
  if (labels.shape() != logits.shape())
    fail(kOp, loc, "'labels' ", labels.shape().to_string(), " and 'logits' ", logits.shape().to_string(),
         " must have the same shape");
  auto a = normalize_axis(axis, logits.rank());
  if (!a.ok()) throw_status(with_op_prefix(a.status(), kOp), loc);
  const Tensor log_p = log_softmax(logits, *a, loc);
  return neg(reduce_sum(mul(Operand(labels, loc), Operand(log_p, loc), loc), {*a}, false, loc), loc);
}

Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, std::source_location loc) {
  constexpr const char* kOp = "sparse_softmax_cross_entropy_with_logits";
  check_logits(kOp, logits, loc);
  if (!labels.defined()) fail(kOp, loc, "input 'labels' is ", labels.empty_reason());
  if (labels.dtype() != DType::kInt32 && labels.dtype() != DType::kInt64)
    fail(kOp, loc, "input 'labels' has dtype ", dtype_name(labels.dtype()), "; expected one of int32, int64");
  const Shape& ls = logits.shape();
  const Shape expected(ls.dims().subspan(0, ls.rank() - 1));
  if (labels.shape() != expected)
    fail(kOp, loc, "'labels' ", labels.shape().to_string(), " must have the shape of 'logits' ", ls.to_string(),
         " without its last dim, ", expected.to_string());
  const int64_t classes = ls.dim(ls.rank() - 1);
  if (labels.device_tensor().buffer) {  // concrete values: check them (a graph's labels have none yet)
    if (labels.dtype() == DType::kInt32) check_label_range<int32_t>(labels, classes, loc);
    else check_label_range<int64_t>(labels, classes, loc);
  }
  const Tensor log_p = log_softmax(logits, -1, loc);
  const Tensor picked = one_hot(labels, classes, 1, 0, -1, logits.dtype(), loc);
  return neg(reduce_sum(mul(Operand(picked, loc), Operand(log_p, loc), loc), {-1}, false, loc), loc);
}

}  // namespace tapeflow
