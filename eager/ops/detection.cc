// The detection family (eager/ops/detection.h): NonMaxSuppressionV3's OpDef and shape function.
// Kernel: devices/cpu/detection.cc.
#include "eager/ops/detection.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using shape_fns::invalid;

absl::Status check_scalar(const InferenceContext& ctx, int i, const char* name, DType dtype) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, i, name, {dtype}));
  if (ctx.inputs[i].shape.rank() != 0)
    return invalid(ctx, "input '", name, "' must be a scalar, got shape ", ctx.inputs[i].shape.to_string());
  return absl::OkStatus();
}

// Inputs boxes [n, 4], scores [n] (float32), max_output_size (int32), iou_threshold and
// score_threshold (float32 scalars): int32 [?].
absl::StatusOr<OutputSpecs> nms_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "boxes", {DType::kFloat32}));
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 1, "scores", {DType::kFloat32}));
  const Shape& boxes = ctx.inputs[0].shape;
  const Shape& scores = ctx.inputs[1].shape;
  if (boxes.rank() != 2 || (boxes.dim(1) >= 0 && boxes.dim(1) != 4))
    return invalid(ctx, "input 'boxes' must have shape [num_boxes, 4], got ", boxes.to_string());
  if (scores.rank() != 1 || (scores.dim(0) >= 0 && boxes.dim(0) >= 0 && scores.dim(0) != boxes.dim(0)))
    return invalid(ctx, "input 'scores' must have shape [num_boxes] = [", boxes.dim(0), "], got ", scores.to_string());
  TF_RETURN_IF_ERROR(check_scalar(ctx, 2, "max_output_size", DType::kInt32));
  TF_RETURN_IF_ERROR(check_scalar(ctx, 3, "iou_threshold", DType::kFloat32));
  TF_RETURN_IF_ERROR(check_scalar(ctx, 4, "score_threshold", DType::kFloat32));
  return single_output(DType::kInt32, Shape{kUnknownDim});
}

OpDef kNonMaxSuppressionV3{.type = "NonMaxSuppressionV3", .api_name = "non_max_suppression", .num_inputs = 5,
                           .infer = nms_shape, .differentiable = false, .kernel_allocates_output = true,
                           .tf_form = "T=in0 T_threshold=in3"};

}  // namespace

void register_detection_ops(OpRegistry& r) { r.add(kNonMaxSuppressionV3); }

Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_output_size, float iou_threshold,
                           float score_threshold, std::source_location loc) {
  if (max_output_size < 0 || max_output_size > std::numeric_limits<int32_t>::max())
    throw InvalidArgumentError(absl::StrCat("[non_max_suppression] max_output_size must be in [0, 2^31), got ",
                                            max_output_size), loc);
  const Tensor inputs[5] = {boxes, scores, Tensor(static_cast<int32_t>(max_output_size)), Tensor(iou_threshold),
                            Tensor(score_threshold)};
  return execute_single(kNonMaxSuppressionV3, inputs, AttrMap(), loc);
}

}  // namespace tapeflow
