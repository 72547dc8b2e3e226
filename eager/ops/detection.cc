// The detection family (eager/ops/detection.h): NonMaxSuppressionV3's and
// CombinedNonMaxSuppression's OpDefs and shape functions.
// Kernel: devices/cpu/detection.cc.
#include "eager/ops/detection.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/checked_size.h"
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

// Boxes [n, 4] and scores [n] (float32, inputs 0 and 1) and the float32 scalar thresholds
// iou_threshold and score_threshold at `thresholds`: int32 [?], the kept indices.
absl::StatusOr<OutputSpecs> nms_shape_of(const InferenceContext& ctx, std::pair<int, int> thresholds) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "boxes", {DType::kFloat32}));
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 1, "scores", {DType::kFloat32}));
  const Shape& boxes = ctx.inputs[0].shape;
  const Shape& scores = ctx.inputs[1].shape;
  if (boxes.rank() != 2 || (boxes.dim(1) >= 0 && boxes.dim(1) != 4))
    return invalid(ctx, "input 'boxes' must have shape [num_boxes, 4], got ", boxes.to_string());
  if (scores.rank() != 1 || (scores.dim(0) >= 0 && boxes.dim(0) >= 0 && scores.dim(0) != boxes.dim(0)))
    return invalid(ctx, "input 'scores' must have shape [num_boxes] = [", boxes.dim(0), "], got ", scores.to_string());
  TF_RETURN_IF_ERROR(check_scalar(ctx, thresholds.first, "iou_threshold", DType::kFloat32));
  TF_RETURN_IF_ERROR(check_scalar(ctx, thresholds.second, "score_threshold", DType::kFloat32));
  return single_output(DType::kInt32, Shape{kUnknownDim});
}

// NonMaxSuppressionV3. Inputs boxes, scores, max_output_size (int32), iou_threshold,
// score_threshold.
absl::StatusOr<OutputSpecs> nms_shape(const InferenceContext& ctx) {
  TF_ASSIGN_OR_RETURN(OutputSpecs kept, nms_shape_of(ctx, {3, 4}));
  TF_RETURN_IF_ERROR(check_scalar(ctx, 2, "max_output_size", DType::kInt32));
  return kept;
}

// NonMaxSuppressionV5. Inputs boxes, scores, iou_threshold, score_threshold, soft_nms_sigma;
// attributes max_output_size and pad_to_max_output_size. Outputs int32 and float32 [?] (or
// [max_output_size] when padded) and an int32 scalar.
absl::StatusOr<OutputSpecs> nms_with_scores_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(nms_shape_of(ctx, {2, 3}).status());
  TF_RETURN_IF_ERROR(check_scalar(ctx, 4, "soft_nms_sigma", DType::kFloat32));
  const int64_t limit = ctx.attrs.get<int64_t>("max_output_size");
  if (limit < 0 || limit > std::numeric_limits<int32_t>::max())
    return invalid(ctx, "max_output_size must be in [0, 2^31), got ", limit);
  const int64_t rows = ctx.attrs.get<bool>("pad_to_max_output_size") ? limit : kUnknownDim;
  OutputSpecs specs(3);  // the third, valid_outputs, an int32 scalar
  specs[0] = TensorSpec{DType::kInt32, Shape{rows}};
  specs[1] = TensorSpec{DType::kFloat32, Shape{rows}};
  specs[2].dtype = DType::kInt32;
  return specs;
}

// Inputs boxes [batch, n, q, 4], scores [batch, n, classes] (float32), iou_threshold and
// score_threshold (float32 scalars); attributes max_output_size_per_class, max_total_size,
// pad_per_class, clip_boxes. Outputs [batch, d, 4], [batch, d], [batch, d] (float32) and
// valid_detections int32 [batch], d as eager/ops/detection.h says.
absl::StatusOr<OutputSpecs> combined_nms_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "boxes", {DType::kFloat32}));
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 1, "scores", {DType::kFloat32}));
  const Shape& boxes = ctx.inputs[0].shape;
  const Shape& scores = ctx.inputs[1].shape;
  if (boxes.rank() != 4 || (boxes.dim(3) >= 0 && boxes.dim(3) != 4))
    return invalid(ctx, "input 'boxes' must have shape [batch, num_boxes, q, 4], got ", boxes.to_string());
  if (scores.rank() != 3)
    return invalid(ctx, "input 'scores' must have shape [batch, num_boxes, num_classes], got ", scores.to_string());
  for (int d : {0, 1})
    if (boxes.dim(d) >= 0 && scores.dim(d) >= 0 && boxes.dim(d) != scores.dim(d))
      return invalid(ctx, "'boxes' ", boxes.to_string(), " and 'scores' ", scores.to_string(),
                     " must agree in batch and num_boxes");
  const int64_t q = boxes.dim(2), classes = scores.dim(2);
  if (q >= 0 && q != 1 && classes >= 0 && q != classes)
    return invalid(ctx, "dim 2 of 'boxes' ", boxes.to_string(), " must be 1 or num_classes = ", classes);
  TF_RETURN_IF_ERROR(check_scalar(ctx, 2, "iou_threshold", DType::kFloat32));
  TF_RETURN_IF_ERROR(check_scalar(ctx, 3, "score_threshold", DType::kFloat32));
  const int64_t per_class = ctx.attrs.get<int64_t>("max_output_size_per_class");
  const int64_t total = ctx.attrs.get<int64_t>("max_total_size");
  for (auto [name, v] : {std::pair{"max_output_size_per_class", per_class}, std::pair{"max_total_size", total}})
    if (v <= 0 || v > std::numeric_limits<int32_t>::max())
      return invalid(ctx, name, " must be in [1, 2^31), got ", v);
  int64_t detections = total;
  if (ctx.attrs.get<bool>("pad_per_class")) {
    const std::optional<int64_t> all = checked_mul(per_class, classes);  // classes may be a huge empty dim
    detections = classes < 0 ? kUnknownDim : all ? std::min(total, *all) : total;
  }
  const int64_t batch = boxes.dim(0) >= 0 ? boxes.dim(0) : scores.dim(0);
  OutputSpecs specs;
  specs.push_back(TensorSpec{DType::kFloat32, Shape{batch, detections, 4}});
  specs.push_back(TensorSpec{DType::kFloat32, Shape{batch, detections}});
  specs.push_back(TensorSpec{DType::kFloat32, Shape{batch, detections}});
  specs.push_back(TensorSpec{DType::kInt32, Shape{batch}});
  return specs;
}

OpDef kNonMaxSuppressionV3{.type = "NonMaxSuppressionV3", .api_name = "non_max_suppression", .num_inputs = 5,
                           .infer = nms_shape, .differentiable = false, .kernel_allocates_output = true,
                           .tf_form = "T=in0 T_threshold=in3"};
OpDef kNonMaxSuppressionV5{.type = "NonMaxSuppressionV5", .api_name = "non_max_suppression_with_scores",
                           .num_inputs = 5, .infer = nms_with_scores_shape, .differentiable = false,
                           .kernel_allocates_output = true,
                           .tf_form = "T=in0 max_output_size@int#2 pad_to_max_output_size:bool=false"};
OpDef kCombinedNonMaxSuppression{
    .type = "CombinedNonMaxSuppression", .api_name = "combined_non_max_suppression", .num_inputs = 4,
    .infer = combined_nms_shape, .differentiable = false,
    .tf_form = "max_output_size_per_class@int#2 max_total_size@int#3 pad_per_class:bool=false clip_boxes:bool=true?"};

}  // namespace

void register_detection_ops(OpRegistry& r) {
  r.add(kNonMaxSuppressionV3);
  r.add(kNonMaxSuppressionV5);
  r.add(kCombinedNonMaxSuppression);
}

Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_output_size, float iou_threshold,
                           float score_threshold, std::source_location loc) {
  if (max_output_size < 0 || max_output_size > std::numeric_limits<int32_t>::max())
    throw InvalidArgumentError(absl::StrCat("[non_max_suppression] max_output_size must be in [0, 2^31), got ",
                                            max_output_size), loc);
  const Tensor inputs[5] = {boxes, scores, Tensor(static_cast<int32_t>(max_output_size)), Tensor(iou_threshold),
                            Tensor(score_threshold)};
  return execute_single(kNonMaxSuppressionV3, inputs, AttrMap(), loc);
}

NmsWithScores non_max_suppression_with_scores(const Tensor& boxes, const Tensor& scores, int64_t max_output_size,
                                              float iou_threshold, float score_threshold, float soft_nms_sigma,
                                              bool pad_to_max_output_size, std::source_location loc) {
  const Tensor inputs[5] = {boxes, scores, Tensor(iou_threshold), Tensor(score_threshold), Tensor(soft_nms_sigma)};
  const AttrMap attrs{{"max_output_size", max_output_size}, {"pad_to_max_output_size", pad_to_max_output_size}};
  TensorList out = execute(OpCall{kNonMaxSuppressionV5, inputs, attrs, loc});
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}

CombinedNms combined_non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_output_size_per_class,
                                         int64_t max_total_size, float iou_threshold, float score_threshold,
                                         bool pad_per_class, bool clip_boxes, std::source_location loc) {
  const Tensor inputs[4] = {boxes, scores, Tensor(iou_threshold), Tensor(score_threshold)};
  const AttrMap attrs{{"max_output_size_per_class", max_output_size_per_class},
                      {"max_total_size", max_total_size},
                      {"pad_per_class", pad_per_class},
                      {"clip_boxes", clip_boxes}};
  TensorList out = execute(OpCall{kCombinedNonMaxSuppression, inputs, attrs, loc});
  return {std::move(out[0]), std::move(out[1]), std::move(out[2]), std::move(out[3])};
}

}  // namespace tapeflow
