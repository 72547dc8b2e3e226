#include "eager/ops/binary.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

// Same dtype and shape, the common case, needs no broadcast (a tenth of a 1-element add).
bool same_spec(const InferenceContext& ctx) {
  return ctx.inputs[0].dtype == ctx.inputs[1].dtype && ctx.inputs[0].shape == ctx.inputs[1].shape;
}

absl::StatusOr<OutputSpecs> arith_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", shape_fns::kNumeric));
  if (same_spec(ctx)) return OutputSpecs{ctx.inputs[0]};
  TF_ASSIGN_OR_RETURN(Shape shape, shape_fns::broadcast_inputs(ctx, 0, "x", 1, "y"));
  return single_output(ctx.inputs[0].dtype, std::move(shape));
}
absl::StatusOr<OutputSpecs> order_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", shape_fns::kNumeric));
  TF_ASSIGN_OR_RETURN(Shape shape, shape_fns::broadcast_inputs(ctx, 0, "x", 1, "y"));
  return single_output(DType::kBool, std::move(shape));
}
absl::StatusOr<OutputSpecs> equality_shape(const InferenceContext& ctx) {
  TF_ASSIGN_OR_RETURN(Shape shape, shape_fns::broadcast_inputs(ctx, 0, "x", 1, "y"));
  return single_output(DType::kBool, std::move(shape));
}
absl::StatusOr<OutputSpecs> logical_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", {DType::kBool}));
  TF_ASSIGN_OR_RETURN(Shape shape, shape_fns::broadcast_inputs(ctx, 0, "x", 1, "y"));
  return single_output(DType::kBool, std::move(shape));
}

#define TF_BINARY_OP(var, op_type, api, shape_fn, diff) \
  OpDef var{.type = op_type, .api_name = api, .num_inputs = 2, .infer = shape_fn, .elementwise = true, \
            .differentiable = diff};
// Ops whose TensorFlow node has no "T" attr (bool-only ops): Note [GraphDef form].
#define TF_BINARY_OP_NO_T(var, op_type, api, shape_fn, diff) \
  OpDef var{.type = op_type, .api_name = api, .num_inputs = 2, .infer = shape_fn, .elementwise = true, \
            .differentiable = diff, .tf_form = ""};
TF_BINARY_OP(kAdd, "Add", "add", arith_shape, true)
TF_BINARY_OP(kSub, "Sub", "sub", arith_shape, true)
TF_BINARY_OP(kMul, "Mul", "mul", arith_shape, true)
TF_BINARY_OP(kDiv, "Div", "div", arith_shape, true)
TF_BINARY_OP(kFloorDiv, "FloorDiv", "floor_div", arith_shape, false)
TF_BINARY_OP(kFloorMod, "FloorMod", "mod", arith_shape, true)
TF_BINARY_OP(kPow, "Pow", "pow", arith_shape, true)
TF_BINARY_OP(kMaximum, "Maximum", "maximum", arith_shape, true)
TF_BINARY_OP(kMinimum, "Minimum", "minimum", arith_shape, true)
TF_BINARY_OP(kEqual, "Equal", "equal", equality_shape, false)
TF_BINARY_OP(kNotEqual, "NotEqual", "not_equal", equality_shape, false)
TF_BINARY_OP(kLess, "Less", "less", order_shape, false)
TF_BINARY_OP(kLessEqual, "LessEqual", "less_equal", order_shape, false)
TF_BINARY_OP(kGreater, "Greater", "greater", order_shape, false)
TF_BINARY_OP(kGreaterEqual, "GreaterEqual", "greater_equal", order_shape, false)
TF_BINARY_OP_NO_T(kLogicalAnd, "LogicalAnd", "logical_and", logical_shape, false)
TF_BINARY_OP_NO_T(kLogicalOr, "LogicalOr", "logical_or", logical_shape, false)
#undef TF_BINARY_OP
#undef TF_BINARY_OP_NO_T

Tensor run_binary(const OpDef& op, const Operand& x, const Operand& y, std::source_location loc) {
  static const AttrMap kNoAttrs;
  if (const Tensor *px = x.tensor(), *py = y.tensor(); px && py) {  // two tensors: nothing to resolve
    const Tensor inputs[2] = {*px, *py};
    return execute_single(op, inputs, kNoAttrs, loc);
  }
  auto [tx, ty] = resolve_pair(op.api_name, x, y);
  const Tensor inputs[2] = {std::move(tx), std::move(ty)};
  return execute_single(op, inputs, kNoAttrs, loc);
}

}  // namespace

void register_binary_ops(OpRegistry& r) {
  for (const OpDef* op : {&kAdd, &kSub, &kMul, &kDiv, &kFloorDiv, &kFloorMod, &kPow, &kMaximum, &kMinimum,
                          &kEqual, &kNotEqual, &kLess, &kLessEqual, &kGreater, &kGreaterEqual, &kLogicalAnd,
                          &kLogicalOr})
    r.add(*op);
}

#define TF_BINARY_API(fn, var) \
  Tensor fn(const Operand& x, const Operand& y, std::source_location loc) { return run_binary(var, x, y, loc); }
TF_BINARY_API(add, kAdd)
TF_BINARY_API(sub, kSub)
TF_BINARY_API(mul, kMul)
TF_BINARY_API(div, kDiv)
TF_BINARY_API(floor_div, kFloorDiv)
TF_BINARY_API(mod, kFloorMod)
TF_BINARY_API(pow, kPow)
TF_BINARY_API(maximum, kMaximum)
TF_BINARY_API(minimum, kMinimum)
TF_BINARY_API(equal, kEqual)
TF_BINARY_API(not_equal, kNotEqual)
TF_BINARY_API(less, kLess)
TF_BINARY_API(less_equal, kLessEqual)
TF_BINARY_API(greater, kGreater)
TF_BINARY_API(greater_equal, kGreaterEqual)
TF_BINARY_API(logical_and, kLogicalAnd)
TF_BINARY_API(logical_or, kLogicalOr)
#undef TF_BINARY_API

Tensor operator+(const Operand& x, const Operand& y) { return add(x, y, x.location()); }
Tensor operator-(const Operand& x, const Operand& y) { return sub(x, y, x.location()); }
Tensor operator*(const Operand& x, const Operand& y) { return mul(x, y, x.location()); }
Tensor operator/(const Operand& x, const Operand& y) { return div(x, y, x.location()); }

}  // namespace tapeflow
