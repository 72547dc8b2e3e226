#include "eager/ops/shape_fns.h"

#include "absl/strings/str_cat.h"

namespace tapeflow::shape_fns {

absl::StatusOr<OutputSpecs> like_input(const InferenceContext& ctx, const char* input_name,
                                       std::initializer_list<DType> dtypes) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, input_name, dtypes));
  return single_output(ctx.inputs[0].dtype, ctx.inputs[0].shape);
}

absl::StatusOr<Shape> broadcast_inputs(const InferenceContext& ctx, int a, const char* a_name, int b,
                                       const char* b_name) {
  const TensorSpec& x = ctx.inputs[a];
  const TensorSpec& y = ctx.inputs[b];
  if (x.dtype != y.dtype)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] inputs '", a_name, "' and '", b_name,
                                                   "' must have the same dtype, got ", dtype_name(x.dtype),
                                                   " and ", dtype_name(y.dtype)));
  auto shape = broadcast_shapes(x.shape, y.shape);
  if (!shape.ok())
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] inputs '", a_name, "' ", x.shape.to_string(),
                                                   " and '", b_name, "' ", y.shape.to_string(),
                                                   " cannot be broadcast together: ", shape.status().message()));
  return shape;
}

}  // namespace tapeflow::shape_fns
