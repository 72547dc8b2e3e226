#include "eager/ops/where.h"

#include "absl/strings/str_cat.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

absl::StatusOr<OutputSpecs> select_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "condition", {DType::kBool}));
  TF_ASSIGN_OR_RETURN(Shape xy, shape_fns::broadcast_inputs(ctx, 1, "x", 2, "y"));
  auto shape = broadcast_shapes(ctx.inputs[0].shape, xy);
  if (!shape.ok())
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input 'condition' ",
                                                   ctx.inputs[0].shape.to_string(),
                                                   " cannot be broadcast with 'x' and 'y' ", xy.to_string()));
  return single_output(ctx.inputs[1].dtype, *std::move(shape));
}

OpDef kSelect{.type = "Select", .api_name = "where", .num_inputs = 3, .infer = select_shape,
              .kernel_dtype_input = 1, .elementwise = true,
    .tf_form = "T=in1"};

absl::StatusOr<OutputSpecs> coordinates_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "condition", {DType::kBool, DType::kFloat32, DType::kFloat64,
                                                          DType::kInt32, DType::kInt64, DType::kUInt8}));
  const Shape& c = ctx.inputs[0].shape;
  return single_output(DType::kInt64, Shape{kUnknownDim, c.rank()});
}

// TensorFlow's Where(input) -> index; its T attr is the input's dtype.
OpDef kWhere{.type = "Where", .api_name = "where", .num_inputs = 1, .infer = coordinates_shape,
             .differentiable = false, .kernel_allocates_output = true};

}  // namespace

void register_where_ops(OpRegistry& r) {
  r.add(kSelect);
  r.add(kWhere);
}

Tensor where(const Tensor& condition, const Operand& x, const Operand& y, std::source_location loc) {
  auto [tx, ty] = resolve_pair("where", x, y);
  const Tensor inputs[3] = {condition, std::move(tx), std::move(ty)};
  return execute_single(kSelect, inputs, AttrMap(), loc);
}

Tensor where(const Tensor& condition, std::source_location loc) {
  const Tensor inputs[1] = {condition};
  return execute_single(kWhere, inputs, AttrMap(), loc);
}

}  // namespace tapeflow
