#include "eager/ops/cast.h"

#include "eager/context.h"

namespace tapeflow {

namespace {
absl::StatusOr<OutputSpecs> cast_shape(const InferenceContext& ctx) {
  return single_output(ctx.attrs.get<DType>("dtype"), ctx.inputs[0].shape);
}
OpDef kCast{.type = "Cast", .api_name = "cast", .num_inputs = 1, .infer = cast_shape, .elementwise = true,
    .tf_form = "SrcT=in0 dtype>DstT:type Truncate=false"};
}  // namespace

void register_cast_ops(OpRegistry& r) { r.add(kCast); }

Tensor cast(const Tensor& x, DType dtype, std::source_location loc) {
  const Tensor inputs[1] = {x};
  return execute_single(kCast, inputs, AttrMap{{"dtype", dtype}}, loc);
}

}  // namespace tapeflow
