#include "eager/ops/scan.h"

#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

// Attributes: axis, exclusive, reverse. Output like x.
absl::StatusOr<OutputSpecs> scan_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", shape_fns::kNumeric));
  const TensorSpec& x = ctx.inputs[0];
  const int64_t axis = ctx.attrs.get<int64_t>("axis");
  if (x.shape.rank() == 0) return shape_fns::invalid(ctx, "input 'x' must have rank >= 1, got a scalar");
  if (auto a = normalize_axis(axis, x.shape.rank()); !a.ok()) return with_op_prefix(a.status(), ctx.op);
  // Present and bools (a typed error otherwise), checked before any kernel runs.
  (void)ctx.attrs.get<bool>("exclusive");
  (void)ctx.attrs.get<bool>("reverse");
  return single_output(x.dtype, x.shape);
}

OpDef kCumsum{.type = "Cumsum", .api_name = "cumsum", .num_inputs = 1, .infer = scan_shape,
              .tf_form = "T=in0 axis@int Tidx=index exclusive:bool=false reverse:bool=false"};
OpDef kCumprod{.type = "Cumprod", .api_name = "cumprod", .num_inputs = 1, .infer = scan_shape,
               .tf_form = "T=in0 axis@int Tidx=index exclusive:bool=false reverse:bool=false"};

Tensor run_scan(const OpDef& op, const Tensor& x, int64_t axis, bool exclusive, bool reverse,
                std::source_location loc) {
  const Tensor inputs[1] = {x};
  return execute_single(op, inputs, AttrMap{{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}}, loc);
}

}  // namespace

void register_scan_ops(OpRegistry& r) {
  r.add(kCumsum);
  r.add(kCumprod);
}

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse, std::source_location loc) {
  return run_scan(kCumsum, x, axis, exclusive, reverse, loc);
}
Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse, std::source_location loc) {
  return run_scan(kCumprod, x, axis, exclusive, reverse, loc);
}

}  // namespace tapeflow
