#include "eager/ops/nn.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/random.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"

namespace tapeflow {

namespace {

// Checks dtype and axis up front so errors name the composite, not the ops inside it.
int64_t check_logits(const char* op, const Tensor& logits, int64_t axis, std::source_location loc) {
  if (!logits.defined()) throw InvalidArgumentError(absl::StrCat("[", op, "] input 'logits' is ", logits.empty_reason()), loc);
  const DType dt = logits.dtype();
  if (dt != DType::kFloat32 && dt != DType::kFloat64)
    throw InvalidArgumentError(absl::StrCat("[", op, "] input 'logits' has dtype ", dtype_name(dt),
                                            "; expected one of float32, float64"), loc);
  auto a = normalize_axis(axis, logits.rank());
  if (!a.ok()) throw_status(with_op_prefix(a.status(), op), loc);
  return *a;
}

// x - max(x) along axis: the largest entry becomes 0, so exp never overflows.
Tensor shifted(const Tensor& logits, int64_t axis, std::source_location loc) {
  const Tensor m = reduce_max(logits, {axis}, /*keepdims=*/true, loc);
  return sub(Operand(logits, loc), Operand(m, loc), loc);
}

}  // namespace

Tensor softmax(const Tensor& logits, int64_t axis, std::source_location loc) {
  axis = check_logits("softmax", logits, axis, loc);
  const Tensor e = exp(shifted(logits, axis, loc), loc);
  return div(Operand(e, loc), Operand(reduce_sum(e, {axis}, true, loc), loc), loc);
}

Tensor log_softmax(const Tensor& logits, int64_t axis, std::source_location loc) {
  axis = check_logits("log_softmax", logits, axis, loc);
  const Tensor s = shifted(logits, axis, loc);
  const Tensor lse = log(reduce_sum(exp(s, loc), {axis}, true, loc), loc);
  return sub(Operand(s, loc), Operand(lse, loc), loc);
}

namespace {

void check_defined(const char* op, const Tensor& t, const char* name, std::source_location loc) {
  if (!t.defined()) throw InvalidArgumentError(absl::StrCat("[", op, "] input '", name, "' is ", t.empty_reason()), loc);
}

void check_float(const char* op, const Tensor& t, const char* name, std::source_location loc) {
  check_defined(op, t, name, loc);
  if (t.dtype() != DType::kFloat32 && t.dtype() != DType::kFloat64)
    throw InvalidArgumentError(absl::StrCat("[", op, "] input '", name, "' has dtype ", dtype_name(t.dtype()),
                                            "; expected one of float32, float64"), loc);
}

}  // namespace

// bias_add is one BiasAdd node: eager/ops/normalization.cc.

Tensor dropout(const Tensor& x, double rate, bool training, std::optional<int64_t> seed, std::source_location loc) {
  check_float("dropout", x, "x", loc);
  if (!(rate >= 0 && rate < 1))
    throw InvalidArgumentError(absl::StrCat("[dropout] rate must be in [0, 1), got ", rate), loc);
  if (!training || rate == 0) return x;
  const Tensor u = random_uniform(x.shape(), 0, 1, x.dtype(), seed, loc);
  const Tensor keep = cast(greater_equal(Operand(u, loc), Operand(rate, loc), loc), x.dtype(), loc);
  return mul(Operand(mul(Operand(x, loc), Operand(keep, loc), loc), loc), Operand(1 / (1 - rate), loc), loc);
}

Tensor l2_loss(const Tensor& t, std::source_location loc) {
  check_float("l2_loss", t, "t", loc);
  return mul(Operand(reduce_sum(square(t, loc), Axes::all(), false, loc), loc), Operand(0.5, loc), loc);
}

}  // namespace tapeflow
