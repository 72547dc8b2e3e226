// The normalization family: BiasAdd and BiasAddGrad, FusedBatchNormV3, LRN and LRNGrad (OpDefs
// with their shape functions, and the public API of eager/ops/normalization.h and bias_add of
// eager/ops/nn.h). Kernels are in devices/cpu/normalization.cc.
#include "eager/ops/normalization.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/conv.h"
#include "eager/ops/nn.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using shape_fns::invalid;

absl::Status check_same_dtype(const InferenceContext& ctx, int i, const char* a, int j, const char* b) {
  if (ctx.inputs[i].dtype != ctx.inputs[j].dtype)
    return invalid(ctx, "'", a, "' and '", b, "' must have the same dtype, got ", dtype_name(ctx.inputs[i].dtype),
                   " and ", dtype_name(ctx.inputs[j].dtype));
  return absl::OkStatus();
}

// The channel dim of a value of rank `rank` under data_format (NCHW: 1, else the last).
absl::StatusOr<int> channel_axis(const InferenceContext& ctx, int rank, const char* name) {
  TF_ASSIGN_OR_RETURN(bool nchw, internal::parse_data_format(ctx.op, ctx.attrs.get<std::string>("data_format")));
  if (rank < (nchw ? 3 : 2))
    return invalid(ctx, "'", name, "' must have rank >= ", nchw ? "3 [batch, channels, ...] with data_format NCHW"
                                                                  : "2 [..., channels]",
                   ", got rank ", rank);
  return nchw ? 1 : rank - 1;
}

// ---- BiasAdd, BiasAddGrad ----

// Inputs: value, bias. Attributes: data_format.
absl::StatusOr<OutputSpecs> bias_add_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "value", shape_fns::kNumeric));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "value", 1, "bias"));
  const Shape& value = ctx.inputs[0].shape;
  const Shape& bias = ctx.inputs[1].shape;
  if (value.rank() < 2)
    return invalid(ctx, "'value' must have rank >= 2 [..., channels], got shape ", value.to_string());
  TF_ASSIGN_OR_RETURN(int axis, channel_axis(ctx, value.rank(), "value"));
  const int64_t channels = value.dim(axis);
  if (bias.rank() != 1 || (channels >= 0 && bias.dim(0) >= 0 && bias.dim(0) != channels))
    return invalid(ctx, "'bias' must have shape [", channels, "] to match the ",
                   axis == 1 && ctx.attrs.get<std::string>("data_format") == "NCHW" ? "channel dim (1, NCHW)"
                                                                                    : "last dim",
                   " of 'value' ", value.to_string(), ", got ", bias.to_string());
  Shape out = value;
  if (channels < 0) out.set_dim(axis, bias.dim(0));
  return single_output(ctx.inputs[0].dtype, std::move(out));
}

// Inputs: out_backprop. Attributes: data_format.
absl::StatusOr<OutputSpecs> bias_add_grad_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "out_backprop", shape_fns::kNumeric));
  const Shape& g = ctx.inputs[0].shape;
  if (g.rank() < 2)
    return invalid(ctx, "'out_backprop' must have rank >= 2 [..., channels], got shape ", g.to_string());
  TF_ASSIGN_OR_RETURN(int axis, channel_axis(ctx, g.rank(), "out_backprop"));
  return single_output(ctx.inputs[0].dtype, Shape{g.dim(axis)});
}

OpDef kBiasAdd{.type = "BiasAdd", .api_name = "bias_add", .num_inputs = 2, .infer = bias_add_shape,
               .tf_form = "T=in0 data_format:string=NHWC"};
OpDef kBiasAddGrad{.type = "BiasAddGrad", .api_name = "bias_add_grad", .num_inputs = 1, .infer = bias_add_grad_shape,
                   .tf_form = "T=in0 data_format:string=NHWC"};

// ---- FusedBatchNormV3 ----

// Inputs: x, scale, offset, mean, variance. Attributes: epsilon, exponential_avg_factor,
// data_format, is_training. Outputs: y, batch_mean, batch_variance, reserve_space_1..3.
absl::StatusOr<OutputSpecs> fused_batch_norm_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", shape_fns::kFloating));
  const char* names[5] = {"x", "scale", "offset", "mean", "variance"};
  for (int i = 1; i < 5; ++i) TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "x", i, names[i]));
  const Shape& x = ctx.inputs[0].shape;
  if (x.rank() != 4)
    return invalid(ctx, "'x' must have rank 4 [batch, height, width, channels] (NHWC) or [batch, channels, height, "
                        "width] (NCHW), got shape ", x.to_string());
  TF_ASSIGN_OR_RETURN(bool nchw, internal::parse_data_format(ctx.op, ctx.attrs.get<std::string>("data_format")));
  const bool training = ctx.attrs.get<bool>("is_training");
  const double factor = ctx.attrs.get<double>("exponential_avg_factor");
  int64_t channels = x.dim(nchw ? 1 : 3);
  for (int i = 1; i < 5; ++i) {
    const Shape& s = ctx.inputs[i].shape;
    // Training with factor 1 does not read mean and variance: TensorFlow lets them be empty.
    const bool may_be_empty = i >= 3 && training && factor == 1.0;
    if (s.rank() == 1 && may_be_empty && s.dim(0) == 0) continue;
    if (s.rank() != 1 || (channels >= 0 && s.dim(0) >= 0 && s.dim(0) != channels))
      return invalid(ctx, "'", names[i], "' must have shape [", channels, "] (the channels of 'x' ", x.to_string(),
                     ", ", nchw ? "NCHW" : "NHWC", ")", may_be_empty ? " or [0]" : "", ", got ", s.to_string());
    if (channels < 0) channels = s.dim(0);
  }
  const DType dt = ctx.inputs[0].dtype;
  const Shape c{channels};
  return OutputSpecs{{dt, x}, {dt, c}, {dt, c}, {dt, c}, {dt, c}, {dt, Shape{}}};
}

OpDef kFusedBatchNormV3{.type = "FusedBatchNormV3", .api_name = "fused_batch_norm", .num_inputs = 5,
                        .infer = fused_batch_norm_shape,
    .tf_form = "T=in0 U=in1 epsilon:float=0.0001 exponential_avg_factor:float=1? data_format:string=NHWC "
               "is_training:bool=true"};

// ---- LRN, LRNGrad ----

absl::Status check_lrn_attrs(const InferenceContext& ctx) {
  const int64_t r = ctx.attrs.get<int64_t>("depth_radius");
  if (r < 0 || r > std::numeric_limits<int32_t>::max())
    return invalid(ctx, "depth_radius must be in [0, ", std::numeric_limits<int32_t>::max(), "], got ", r);
  (void)ctx.attrs.get<double>("bias");
  (void)ctx.attrs.get<double>("alpha");
  (void)ctx.attrs.get<double>("beta");
  return absl::OkStatus();
}

absl::Status check_rank4(const InferenceContext& ctx, int i, const char* name) {
  const Shape& s = ctx.inputs[i].shape;
  if (s.rank() != 4)
    return invalid(ctx, "'", name, "' must have rank 4 [batch, height, width, depth], got shape ", s.to_string());
  return absl::OkStatus();
}

// Inputs: input. Attributes: depth_radius, bias, alpha, beta.
absl::StatusOr<OutputSpecs> lrn_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "input", shape_fns::kFloating));
  TF_RETURN_IF_ERROR(check_rank4(ctx, 0, "input"));
  TF_RETURN_IF_ERROR(check_lrn_attrs(ctx));
  return single_output(ctx.inputs[0].dtype, ctx.inputs[0].shape);
}

// Inputs: input_grads, input_image, output_image (one shape).
absl::StatusOr<OutputSpecs> lrn_grad_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "input_grads", shape_fns::kFloating));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "input_grads", 1, "input_image"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "input_grads", 2, "output_image"));
  const char* names[3] = {"input_grads", "input_image", "output_image"};
  for (int i = 0; i < 3; ++i) TF_RETURN_IF_ERROR(check_rank4(ctx, i, names[i]));
  Shape shape = ctx.inputs[1].shape;
  for (int i : {0, 2}) {
    if (!ctx.inputs[i].shape.is_compatible_with(shape))
      return invalid(ctx, "'", names[i], "' has shape ", ctx.inputs[i].shape.to_string(),
                     " but 'input_image' has shape ", shape.to_string());
    for (int d = 0; d < 4; ++d)
      if (shape.dim(d) < 0) shape.set_dim(d, ctx.inputs[i].shape.dim(d));
  }
  TF_RETURN_IF_ERROR(check_lrn_attrs(ctx));
  return single_output(ctx.inputs[0].dtype, std::move(shape));
}

OpDef kLRN{.type = "LRN", .api_name = "local_response_normalization", .num_inputs = 1, .infer = lrn_shape,
           .tf_form = "T=in0 depth_radius:int=5 bias:float=1 alpha:float=1 beta:float=0.5"};
OpDef kLRNGrad{.type = "LRNGrad", .api_name = "lrn_grad", .num_inputs = 3, .infer = lrn_grad_shape,
               .differentiable = false,
               .tf_form = "T=in0 depth_radius:int=5 bias:float=1 alpha:float=1 beta:float=0.5"};

AttrMap lrn_attrs(int64_t depth_radius, double bias, double alpha, double beta) {
  return AttrMap{{"depth_radius", depth_radius}, {"bias", bias}, {"alpha", alpha}, {"beta", beta}};
}

}  // namespace

void register_normalization_ops(OpRegistry& r) {
  r.add(kBiasAdd);
  r.add(kBiasAddGrad);
  r.add(kFusedBatchNormV3);
  r.add(kLRN);
  r.add(kLRNGrad);
}

Tensor bias_add(const Tensor& value, const Tensor& bias, std::source_location loc) {
  return bias_add(value, bias, "NHWC", loc);
}

Tensor bias_add(const Tensor& value, const Tensor& bias, std::string_view data_format, std::source_location loc) {
  const Tensor inputs[2] = {value, bias};
  return execute_single(kBiasAdd, inputs, AttrMap{{"data_format", std::string(data_format)}}, loc);
}

Tensor bias_add_grad(const Tensor& out_backprop, std::string_view data_format, std::source_location loc) {
  const Tensor inputs[1] = {out_backprop};
  return execute_single(kBiasAddGrad, inputs, AttrMap{{"data_format", std::string(data_format)}}, loc);
}

FusedBatchNormOutputs fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                                       const Tensor& variance, double epsilon, double exponential_avg_factor,
                                       std::string_view data_format, bool is_training, std::source_location loc) {
  const Tensor inputs[5] = {x, scale, offset, mean, variance};
  const AttrMap attrs{{"epsilon", epsilon},
                      {"exponential_avg_factor", exponential_avg_factor},
                      {"data_format", std::string(data_format)},
                      {"is_training", is_training}};
  TensorList out = execute(OpCall{kFusedBatchNormV3, inputs, attrs, loc});
  return {std::move(out[0]), std::move(out[1]), std::move(out[2]),
          std::move(out[3]), std::move(out[4]), std::move(out[5])};
}

Tensor local_response_normalization(const Tensor& input, int64_t depth_radius, double bias, double alpha, double beta,
                                    std::source_location loc) {
  const Tensor inputs[1] = {input};
  return execute_single(kLRN, inputs, lrn_attrs(depth_radius, bias, alpha, beta), loc);
}

Tensor lrn_grad(const Tensor& input_grads, const Tensor& input_image, const Tensor& output_image,
                int64_t depth_radius, double bias, double alpha, double beta, std::source_location loc) {
  const Tensor inputs[3] = {input_grads, input_image, output_image};
  return execute_single(kLRNGrad, inputs, lrn_attrs(depth_radius, bias, alpha, beta), loc);
}

}  // namespace tapeflow
