#include "eager/ops/nn.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/random.h"
#include "eager/ops/reduction.h"
#include "eager/ops/shape_fns.h"
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

// The permutation of [0, last] that swaps `last` and `axis`.
std::vector<int64_t> swapped(int last, int64_t axis) {
  std::vector<int64_t> perm(static_cast<size_t>(last) + 1);
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[static_cast<size_t>(last)], perm[static_cast<size_t>(axis)]);
  return perm;
}

// TensorFlow's Softmax and LogSoftmax: one node each, over the last axis (kernels in
// devices/cpu/nn.cc, gradients in tape/gradients/nn.cc). Another axis is moved last and back,
// as tf.nn.softmax does.
absl::StatusOr<OutputSpecs> softmax_shape(const InferenceContext& ctx) {
  TF_ASSIGN_OR_RETURN(OutputSpecs out, shape_fns::like_input(ctx, "logits", shape_fns::kFloating));
  if (ctx.inputs[0].shape.rank() < 1)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input 'logits' must have rank >= 1, got a scalar"));
  return out;
}

// L2Loss: one input 't' of any shape, a scalar of its dtype.
absl::StatusOr<OutputSpecs> l2_loss_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "t", shape_fns::kFloating));
  return single_output(ctx.inputs[0].dtype, Shape{});
}

}  // namespace

OpDef kSoftmax{.type = "Softmax", .api_name = "softmax", .num_inputs = 1, .infer = softmax_shape};
OpDef kLogSoftmax{.type = "LogSoftmax", .api_name = "log_softmax", .num_inputs = 1, .infer = softmax_shape};
OpDef kL2Loss{.type = "L2Loss", .api_name = "l2_loss", .num_inputs = 1, .infer = l2_loss_shape};

void register_nn_ops(OpRegistry& r) {
  r.add(kSoftmax);
  r.add(kLogSoftmax);
  r.add(kL2Loss);
}

namespace {

Tensor along_axis(const OpDef& op, const Tensor& logits, int64_t axis, std::source_location loc) {
  const int last = logits.rank() - 1;
  const Tensor inputs[1] = {axis == last ? logits : transpose(logits, swapped(last, axis), loc)};
  const Tensor y = execute_single(op, inputs, AttrMap(), loc);
  return axis == last ? y : transpose(y, swapped(last, axis), loc);
}

}  // namespace

Tensor softmax(const Tensor& logits, int64_t axis, std::source_location loc) {
  return along_axis(kSoftmax, logits, check_logits("softmax", logits, axis, loc), loc);
}

Tensor log_softmax(const Tensor& logits, int64_t axis, std::source_location loc) {
  return along_axis(kLogSoftmax, logits, check_logits("log_softmax", logits, axis, loc), loc);
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
  const Tensor inputs[1] = {t};
  return execute_single(kL2Loss, inputs, AttrMap(), loc);
}

}  // namespace tapeflow
