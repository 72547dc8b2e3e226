#include "eager/ops/unary.h"

#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

absl::StatusOr<OutputSpecs> numeric_shape(const InferenceContext& ctx) {
  return shape_fns::like_input(ctx, "x", shape_fns::kNumeric);
}
absl::StatusOr<OutputSpecs> signed_shape(const InferenceContext& ctx) {
  return shape_fns::like_input(ctx, "x", {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64});
}
absl::StatusOr<OutputSpecs> floating_shape(const InferenceContext& ctx) {
  return shape_fns::like_input(ctx, "x", shape_fns::kFloating);
}
absl::StatusOr<OutputSpecs> bool_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", {DType::kBool}));
  return single_output(DType::kBool, ctx.inputs[0].shape);
}

#define TF_UNARY_OP(var, op_type, api, shape_fn, diff) \
  OpDef var{.type = op_type, .api_name = api, .num_inputs = 1, .infer = shape_fn, .elementwise = true, \
            .differentiable = diff};
// Ops whose TensorFlow node has no "T" attr (bool-only ops): Note [GraphDef form].
#define TF_UNARY_OP_NO_T(var, op_type, api, shape_fn, diff) \
  OpDef var{.type = op_type, .api_name = api, .num_inputs = 1, .infer = shape_fn, .elementwise = true, \
            .differentiable = diff, .tf_form = ""};
TF_UNARY_OP(kNeg, "Neg", "neg", signed_shape, true)
TF_UNARY_OP(kAbs, "Abs", "abs", numeric_shape, true)
TF_UNARY_OP(kSign, "Sign", "sign", numeric_shape, true)
TF_UNARY_OP(kSquare, "Square", "square", numeric_shape, true)
TF_UNARY_OP(kSqrt, "Sqrt", "sqrt", floating_shape, true)
TF_UNARY_OP(kRsqrt, "Rsqrt", "rsqrt", floating_shape, true)
TF_UNARY_OP(kExp, "Exp", "exp", floating_shape, true)
TF_UNARY_OP(kLog, "Log", "log", floating_shape, true)
TF_UNARY_OP(kLog1p, "Log1p", "log1p", floating_shape, true)
TF_UNARY_OP(kTanh, "Tanh", "tanh", floating_shape, true)
TF_UNARY_OP(kSigmoid, "Sigmoid", "sigmoid", floating_shape, true)
TF_UNARY_OP(kFloor, "Floor", "floor", floating_shape, false)  // TF: None, as Ceil
TF_UNARY_OP_NO_T(kLogicalNot, "LogicalNot", "logical_not", bool_shape, false)
#undef TF_UNARY_OP
#undef TF_UNARY_OP_NO_T

Tensor run_unary(const OpDef& op, const Tensor& x, std::source_location loc) {
  const Tensor inputs[1] = {x};
  return execute_single(op, inputs, AttrMap(), loc);
}

}  // namespace

void register_unary_ops(OpRegistry& r) {
  for (const OpDef* op : {&kNeg, &kAbs, &kSign, &kSquare, &kSqrt, &kRsqrt, &kExp, &kLog, &kLog1p, &kTanh,
                          &kSigmoid, &kFloor, &kLogicalNot})
    r.add(*op);
}

Tensor neg(const Tensor& x, std::source_location loc) { return run_unary(kNeg, x, loc); }
Tensor abs(const Tensor& x, std::source_location loc) { return run_unary(kAbs, x, loc); }
Tensor sign(const Tensor& x, std::source_location loc) { return run_unary(kSign, x, loc); }
Tensor square(const Tensor& x, std::source_location loc) { return run_unary(kSquare, x, loc); }
Tensor sqrt(const Tensor& x, std::source_location loc) { return run_unary(kSqrt, x, loc); }
Tensor rsqrt(const Tensor& x, std::source_location loc) { return run_unary(kRsqrt, x, loc); }
Tensor exp(const Tensor& x, std::source_location loc) { return run_unary(kExp, x, loc); }
Tensor log(const Tensor& x, std::source_location loc) { return run_unary(kLog, x, loc); }
Tensor log1p(const Tensor& x, std::source_location loc) { return run_unary(kLog1p, x, loc); }
Tensor tanh(const Tensor& x, std::source_location loc) { return run_unary(kTanh, x, loc); }
Tensor sigmoid(const Tensor& x, std::source_location loc) { return run_unary(kSigmoid, x, loc); }
Tensor floor(const Tensor& x, std::source_location loc) { return run_unary(kFloor, x, loc); }
Tensor logical_not(const Tensor& x, std::source_location loc) { return run_unary(kLogicalNot, x, loc); }

Tensor operator-(const Tensor& x) { return neg(x); }

}  // namespace tapeflow
