#include "eager/ops/segment.h"

#include "absl/strings/str_cat.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

absl::StatusOr<OutputSpecs> segment_sum_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "data", shape_fns::kNumeric));
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 1, "segment_ids", {DType::kInt32, DType::kInt64}));
  const Shape& data = ctx.inputs[0].shape;
  const Shape& ids = ctx.inputs[1].shape;
  const int64_t n = ctx.attrs.get<int64_t>("num_segments");
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] num_segments must be >= 0, got ", n));
  if (data.rank() < 1 || ids.rank() != 1 ||
      (data.dim(0) >= 0 && ids.dim(0) >= 0 && data.dim(0) != ids.dim(0)))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] 'segment_ids' ", ids.to_string(),
                                                   " must be a vector as long as dimension 0 of 'data' ",
                                                   data.to_string()));
  Shape out = data;
  out.set_dim(0, n);
  return single_output(ctx.inputs[0].dtype, std::move(out));
}

OpDef kUnsortedSegmentSum{.type = "UnsortedSegmentSum", .api_name = "unsorted_segment_sum", .num_inputs = 2,
                          .infer = segment_sum_shape,
    .tf_form = "T=in0 Tindices=in1 num_segments@int Tnumsegments=index"};

}  // namespace

void register_segment_ops(OpRegistry& r) { r.add(kUnsortedSegmentSum); }

Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            std::source_location loc) {
  const Tensor inputs[2] = {data, segment_ids};
  return execute_single(kUnsortedSegmentSum, inputs, AttrMap{{"num_segments", num_segments}}, loc);
}

}  // namespace tapeflow
