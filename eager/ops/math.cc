#include "eager/ops/math.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/binary.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using shape_fns::invalid;

constexpr std::initializer_list<DType> kSigned = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
constexpr std::initializer_list<DType> kIntegers = {DType::kInt32, DType::kInt64, DType::kUInt8};

absl::StatusOr<OutputSpecs> floating_shape(const InferenceContext& ctx) {
  return shape_fns::like_input(ctx, "x", shape_fns::kFloating);
}
absl::StatusOr<OutputSpecs> round_shape(const InferenceContext& ctx) {
  return shape_fns::like_input(ctx, "x", kSigned);
}
absl::StatusOr<OutputSpecs> predicate_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", shape_fns::kFloating));
  return single_output(DType::kBool, ctx.inputs[0].shape);
}

// Two inputs of one dtype from `dtypes`, broadcast together.
absl::StatusOr<OutputSpecs> binary_shape(const InferenceContext& ctx, std::initializer_list<DType> dtypes) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", dtypes));
  TF_ASSIGN_OR_RETURN(Shape shape, shape_fns::broadcast_inputs(ctx, 0, "x", 1, "y"));
  return single_output(ctx.inputs[0].dtype, std::move(shape));
}
absl::StatusOr<OutputSpecs> signed_binary_shape(const InferenceContext& ctx) { return binary_shape(ctx, kSigned); }
absl::StatusOr<OutputSpecs> floating_binary_shape(const InferenceContext& ctx) {
  return binary_shape(ctx, shape_fns::kFloating);
}
absl::StatusOr<OutputSpecs> integer_binary_shape(const InferenceContext& ctx) { return binary_shape(ctx, kIntegers); }

// AddN: one or more inputs, one dtype, shapes that agree where known (no broadcasting).
absl::StatusOr<OutputSpecs> add_n_shape(const InferenceContext& ctx) {
  if (ctx.inputs.empty()) return invalid(ctx, "needs at least one input");
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "inputs[0]", shape_fns::kNumeric));
  const TensorSpec& first = ctx.inputs[0];
  Shape out = first.shape;
  for (size_t k = 1; k < ctx.inputs.size(); ++k) {
    const TensorSpec& in = ctx.inputs[k];
    if (in.dtype != first.dtype)
      return invalid(ctx, "input 'inputs[", k, "]' has dtype ", dtype_name(in.dtype), " but 'inputs[0]' has dtype ",
                     dtype_name(first.dtype));
    if (!in.shape.is_compatible_with(out))
      return invalid(ctx, "input 'inputs[", k, "]' has shape ", in.shape.to_string(), " but 'inputs[0]' has shape ",
                     first.shape.to_string(), " (add_n does not broadcast)");
    for (int d = 0; d < out.rank(); ++d)
      if (out.dim(d) < 0) out.set_dim(d, in.shape.dim(d));
  }
  return single_output(first.dtype, std::move(out));
}

// ClipByValue(t, clip_value_min, clip_value_max): each bound a scalar or of t's shape.
absl::StatusOr<OutputSpecs> clip_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "t", shape_fns::kNumeric));
  const TensorSpec& t = ctx.inputs[0];
  const char* names[3] = {"t", "clip_value_min", "clip_value_max"};
  Shape out = t.shape;
  for (int i = 1; i < 3; ++i) {
    const TensorSpec& b = ctx.inputs[i];
    if (b.dtype != t.dtype)
      return invalid(ctx, "input '", names[i], "' has dtype ", dtype_name(b.dtype), " but 't' has dtype ",
                     dtype_name(t.dtype));
    if (b.shape.rank() == 0) continue;
    if (!b.shape.is_compatible_with(out))
      return invalid(ctx, "input '", names[i], "' has shape ", b.shape.to_string(), "; it must be a scalar or have ",
                     "the shape of 't' ", t.shape.to_string());
    for (int d = 0; d < out.rank(); ++d)
      if (out.dim(d) < 0) out.set_dim(d, b.shape.dim(d));
  }
  return single_output(t.dtype, std::move(out));
}

#define TF_MATH_OP(var, op_type, api, n, shape_fn, diff) \
  OpDef var{.type = op_type, .api_name = api, .num_inputs = n, .infer = shape_fn, .elementwise = true, \
            .differentiable = diff};
TF_MATH_OP(kReciprocal, "Reciprocal", "reciprocal", 1, floating_shape, true)
TF_MATH_OP(kExpm1, "Expm1", "expm1", 1, floating_shape, true)
TF_MATH_OP(kSin, "Sin", "sin", 1, floating_shape, true)
TF_MATH_OP(kCos, "Cos", "cos", 1, floating_shape, true)
TF_MATH_OP(kTan, "Tan", "tan", 1, floating_shape, true)
TF_MATH_OP(kAsin, "Asin", "asin", 1, floating_shape, true)
TF_MATH_OP(kAcos, "Acos", "acos", 1, floating_shape, true)
TF_MATH_OP(kAtan, "Atan", "atan", 1, floating_shape, true)
TF_MATH_OP(kSinh, "Sinh", "sinh", 1, floating_shape, true)
TF_MATH_OP(kCosh, "Cosh", "cosh", 1, floating_shape, true)
TF_MATH_OP(kAsinh, "Asinh", "asinh", 1, floating_shape, true)
TF_MATH_OP(kAcosh, "Acosh", "acosh", 1, floating_shape, true)
TF_MATH_OP(kAtanh, "Atanh", "atanh", 1, floating_shape, true)
TF_MATH_OP(kErf, "Erf", "erf", 1, floating_shape, true)
TF_MATH_OP(kErfc, "Erfc", "erfc", 1, floating_shape, true)
// Piecewise constant: TensorFlow's gradients of Ceil, Round and Rint (and Floor) are None, so a
// path through them carries no gradient (Note [Non-differentiable paths] in the tape).
TF_MATH_OP(kCeil, "Ceil", "ceil", 1, floating_shape, false)
TF_MATH_OP(kRound, "Round", "round", 1, round_shape, false)
TF_MATH_OP(kRint, "Rint", "rint", 1, floating_shape, false)
TF_MATH_OP(kIsNan, "IsNan", "is_nan", 1, predicate_shape, false)
TF_MATH_OP(kIsInf, "IsInf", "is_inf", 1, predicate_shape, false)
TF_MATH_OP(kIsFinite, "IsFinite", "is_finite", 1, predicate_shape, false)
TF_MATH_OP(kSquaredDifference, "SquaredDifference", "squared_difference", 2, signed_binary_shape, true)
TF_MATH_OP(kDivNoNan, "DivNoNan", "div_no_nan", 2, floating_binary_shape, true)
TF_MATH_OP(kAtan2, "Atan2", "atan2", 2, floating_binary_shape, true)
// CheckNumerics passes x on, or fails when it holds a NaN or an infinity. Stateful: a check is
// never folded into a constant or merged with another.
OpDef kCheckNumerics{.type = "CheckNumerics", .api_name = "check_numerics", .num_inputs = 1, .infer = floating_shape,
                     .stateful = true, .tf_form = "T=in0 message:string"};
TF_MATH_OP(kXlogy, "Xlogy", "xlogy", 2, floating_binary_shape, true)
TF_MATH_OP(kXdivy, "Xdivy", "xdivy", 2, floating_binary_shape, true)
TF_MATH_OP(kTruncateDiv, "TruncateDiv", "truncate_div", 2, integer_binary_shape, false)
// TensorFlow registers no gradient for TruncateMod (math_grad.py has FloorMod's, TruncateDiv's
// None, and nothing for TruncateMod): here it is non-differentiable, a path through it has none.
TF_MATH_OP(kTruncateMod, "TruncateMod", "truncate_mod", 2, signed_binary_shape, false)
TF_MATH_OP(kClipByValue, "ClipByValue", "clip_by_value", 3, clip_shape, true)
#undef TF_MATH_OP
OpDef kAddN{.type = "AddN", .api_name = "add_n", .num_inputs = -1, .infer = add_n_shape, .elementwise = true,
            .tf_form = "N=count T=in0"};

Tensor run1(const OpDef& op, const Tensor& x, std::source_location loc) {
  const Tensor inputs[1] = {x};
  return execute_single(op, inputs, AttrMap(), loc);
}
Tensor run2(const OpDef& op, const Operand& x, const Operand& y, std::source_location loc) {
  auto [tx, ty] = resolve_pair(op.api_name, x, y);
  const Tensor inputs[2] = {std::move(tx), std::move(ty)};
  return execute_single(op, inputs, AttrMap(), loc);
}

}  // namespace

void register_math_ops(OpRegistry& r) {
  for (const OpDef* op : {&kReciprocal, &kExpm1, &kSin, &kCos, &kTan, &kAsin, &kAcos, &kAtan, &kSinh, &kCosh,
                          &kAsinh, &kAcosh, &kAtanh, &kErf, &kErfc, &kCeil, &kRound, &kRint, &kIsNan, &kIsInf,
                          &kIsFinite, &kSquaredDifference, &kDivNoNan, &kAtan2, &kXlogy, &kXdivy, &kCheckNumerics, &kTruncateDiv, &kTruncateMod, &kClipByValue,
                          &kAddN})
    r.add(*op);
}

#define TF_MATH_UNARY_API(fn, var) \
  Tensor fn(const Tensor& x, std::source_location loc) { return run1(var, x, loc); }
TF_MATH_UNARY_API(reciprocal, kReciprocal)
TF_MATH_UNARY_API(expm1, kExpm1)
TF_MATH_UNARY_API(sin, kSin)
TF_MATH_UNARY_API(cos, kCos)
TF_MATH_UNARY_API(tan, kTan)
TF_MATH_UNARY_API(asin, kAsin)
TF_MATH_UNARY_API(acos, kAcos)
TF_MATH_UNARY_API(atan, kAtan)
TF_MATH_UNARY_API(sinh, kSinh)
TF_MATH_UNARY_API(cosh, kCosh)
TF_MATH_UNARY_API(asinh, kAsinh)
TF_MATH_UNARY_API(acosh, kAcosh)
TF_MATH_UNARY_API(atanh, kAtanh)
TF_MATH_UNARY_API(erf, kErf)
TF_MATH_UNARY_API(erfc, kErfc)
TF_MATH_UNARY_API(ceil, kCeil)
TF_MATH_UNARY_API(round, kRound)
TF_MATH_UNARY_API(rint, kRint)
TF_MATH_UNARY_API(is_nan, kIsNan)
TF_MATH_UNARY_API(is_inf, kIsInf)
TF_MATH_UNARY_API(is_finite, kIsFinite)
#undef TF_MATH_UNARY_API

#define TF_MATH_BINARY_API(fn, var) \
  Tensor fn(const Operand& x, const Operand& y, std::source_location loc) { return run2(var, x, y, loc); }
TF_MATH_BINARY_API(squared_difference, kSquaredDifference)
TF_MATH_BINARY_API(div_no_nan, kDivNoNan)
TF_MATH_BINARY_API(atan2, kAtan2)
Tensor check_numerics(const Tensor& x, std::string_view message, std::source_location loc) {
  const Tensor inputs[1] = {x};
  return execute_single(kCheckNumerics, inputs, AttrMap{{"message", std::string(message)}}, loc);
}

TF_MATH_BINARY_API(xlogy, kXlogy)
TF_MATH_BINARY_API(xdivy, kXdivy)
TF_MATH_BINARY_API(truncate_div, kTruncateDiv)
TF_MATH_BINARY_API(truncate_mod, kTruncateMod)
#undef TF_MATH_BINARY_API

Tensor add_n(const std::vector<Tensor>& inputs, std::source_location loc) {
  return execute_single(kAddN, inputs, AttrMap(), loc);
}

Tensor clip_by_value(const Operand& x, const Operand& lo, const Operand& hi, std::source_location loc) {
  const Tensor tx = x.resolve("clip_by_value", nullptr);
  const DType dt = tx.dtype();
  const Tensor tlo = lo.resolve("clip_by_value", &dt), thi = hi.resolve("clip_by_value", &dt);
  if (tlo.defined() && thi.defined() && tlo.num_elements() == 1 && thi.num_elements() == 1 &&
      tlo.device_tensor().buffer && thi.device_tensor().buffer && tlo.dtype() == thi.dtype()) {
    // Known bounds are checked now, eagerly, even while a graph is being built.
    ContextGuard eager(&eager_context());
    if (greater(tlo, thi, loc).to_vector<bool>()[0])
      throw InvalidArgumentError("[clip_by_value] clip_value_min must not exceed clip_value_max", loc);
  }
  auto fits = [&](const Tensor& b) { return b.rank() == 0 || b.shape() == tx.shape(); };
  if (!fits(tlo) || !fits(thi)) {
    // Bounds that broadcast into t's shape, as tf.clip_by_value allows; never beyond it.
    for (const auto& [b, name] : {std::pair{&tlo, "clip_value_min"}, std::pair{&thi, "clip_value_max"}}) {
      auto shape = broadcast_shapes(tx.shape(), b->shape());
      if (!shape.ok() || *shape != tx.shape())
        throw InvalidArgumentError(absl::StrCat("[clip_by_value] input '", name, "' ", b->shape().to_string(),
                                                " does not broadcast to the shape of 't' ", tx.shape().to_string()),
                                   loc);
    }
    return minimum(maximum(tx, tlo, loc), thi, loc);
  }
  const Tensor inputs[3] = {tx, tlo, thi};
  return execute_single(kClipByValue, inputs, AttrMap(), loc);
}

}  // namespace tapeflow
