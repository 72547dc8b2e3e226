// The conv variants family: DepthwiseConv2dNative and its two backprop ops (OpDefs with their
// shape functions, and the public API of eager/ops/conv_variants.h). Kernels are in
// devices/cpu/conv_variants.cc; the window geometry is conv2d's (eager/ops/conv.h, internal::).
#include "eager/ops/conv_variants.h"

#include <array>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/conv.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using Ints = std::vector<int64_t>;
using shape_fns::ints_to_string;
using shape_fns::invalid;

absl::Status check_rank4(const InferenceContext& ctx, const Shape& s, const char* name, const char* layout) {
  if (s.rank() != 4) return invalid(ctx, "'", name, "' must have rank 4 ", layout, ", got shape ", s.to_string());
  return absl::OkStatus();
}

// Checks a depthwise call's input and filter shapes and attributes; returns the output shape.
absl::StatusOr<Shape> depthwise_output_shape(const InferenceContext& ctx, const Shape& input, const char* input_name,
                                             const Shape& filter, const char* filter_name) {
  TF_RETURN_IF_ERROR(check_rank4(ctx, input, input_name, "[batch, height, width, channels]"));
  TF_RETURN_IF_ERROR(check_rank4(ctx, filter, filter_name, "[height, width, in_channels, channel_multiplier]"));
  if (input.dim(3) >= 0 && filter.dim(2) >= 0 && input.dim(3) != filter.dim(2))
    return invalid(ctx, "'", input_name, "' ", input.to_string(), " has ", input.dim(3), " channels but '", filter_name,
                   "' ", filter.to_string(), " expects ", filter.dim(2), " input channels");
  if (filter.dim(0) == 0 || filter.dim(1) == 0)
    return invalid(ctx, "'", filter_name, "' ", filter.to_string(), " has an empty window");
  TF_ASSIGN_OR_RETURN(auto strides, internal::spatial_pair(ctx.op, ctx.attrs.get<Ints>("strides"), "strides"));
  TF_ASSIGN_OR_RETURN(auto dilations, internal::spatial_pair(ctx.op, ctx.attrs.get<Ints>("dilations"), "dilations"));
  TF_ASSIGN_OR_RETURN(bool same, internal::parse_padding(ctx.op, ctx.attrs.get<std::string>("padding")));
  TF_ASSIGN_OR_RETURN(auto window, internal::dilated_window(ctx.op, {filter.dim(0), filter.dim(1)}, dilations));
  TF_ASSIGN_OR_RETURN(auto hw, internal::window_output_hw(
                                   ctx.op, input, input_name, window,
                                   absl::StrCat("filter window ", filter.dim(0), "x", filter.dim(1), " (", window[0],
                                                "x", window[1], " dilated) of '", filter_name, "' ", filter.to_string()),
                                   strides, same));
  int64_t channels = -1;
  const int64_t c = input.dim(3) >= 0 ? input.dim(3) : filter.dim(2);
  if (c >= 0 && filter.dim(3) >= 0) {
    const std::optional<int64_t> product = checked_mul(c, filter.dim(3));  // Note [Checked sizes]
    if (!product) return invalid(ctx, "'", filter_name, "' ", filter.to_string(), " gives too many output channels");
    channels = *product;
  }
  return Shape{input.dim(0), hw[0], hw[1], channels};
}

absl::Status check_float(const InferenceContext& ctx, int i, const char* name) {
  return check_dtype_in(ctx, i, name, {DType::kFloat32, DType::kFloat64});
}

absl::Status check_same_dtype(const InferenceContext& ctx, int i, const char* a, int j, const char* b) {
  if (ctx.inputs[i].dtype != ctx.inputs[j].dtype)
    return invalid(ctx, "'", a, "' and '", b, "' must have the same dtype, got ", dtype_name(ctx.inputs[i].dtype),
                   " and ", dtype_name(ctx.inputs[j].dtype));
  return absl::OkStatus();
}

// A shape attribute of a backprop op: 4 known, non-negative dims.
absl::StatusOr<Shape> shape_attr(const InferenceContext& ctx, const char* name) {
  const Ints& v = ctx.attrs.get<Ints>(name);
  if (v.size() != 4) return invalid(ctx, name, " ", ints_to_string(v), " must have 4 entries, got ", v.size());
  for (int64_t d : v)
    if (d < 0) return invalid(ctx, name, " ", ints_to_string(v), " must have known, non-negative dims");
  return Shape(v);
}

absl::Status check_out_backprop(const InferenceContext& ctx, const Shape& got, const Shape& expected,
                                const Shape& input, const Shape& filter) {
  if (got.rank() != 4 || !got.is_compatible_with(expected))
    return invalid(ctx, "'out_backprop' has shape ", got.to_string(), " but depthwise_conv2d of input ",
                   input.to_string(), " with filter ", filter.to_string(), ", strides ",
                   ints_to_string(ctx.attrs.get<Ints>("strides")), ", dilations ",
                   ints_to_string(ctx.attrs.get<Ints>("dilations")), " and ", ctx.attrs.get<std::string>("padding"),
                   " padding gives ", expected.to_string());
  return absl::OkStatus();
}

// Inputs: input, filter. Attributes: strides, padding, dilations.
absl::StatusOr<OutputSpecs> depthwise_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "input"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "input", 1, "filter"));
  TF_ASSIGN_OR_RETURN(Shape out, depthwise_output_shape(ctx, ctx.inputs[0].shape, "input", ctx.inputs[1].shape, "filter"));
  return single_output(ctx.inputs[0].dtype, std::move(out));
}

// Inputs: filter, out_backprop. Attributes: input_shape, strides, padding, dilations.
absl::StatusOr<OutputSpecs> backprop_input_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "filter"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "filter", 1, "out_backprop"));
  TF_ASSIGN_OR_RETURN(Shape input, shape_attr(ctx, "input_shape"));
  const Shape& filter = ctx.inputs[0].shape;
  TF_ASSIGN_OR_RETURN(Shape expected, depthwise_output_shape(ctx, input, "input_shape", filter, "filter"));
  TF_RETURN_IF_ERROR(check_out_backprop(ctx, ctx.inputs[1].shape, expected, input, filter));
  return single_output(ctx.inputs[0].dtype, std::move(input));
}

// Inputs: input, out_backprop. Attributes: filter_shape, strides, padding, dilations.
absl::StatusOr<OutputSpecs> backprop_filter_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "input"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "input", 1, "out_backprop"));
  TF_ASSIGN_OR_RETURN(Shape filter, shape_attr(ctx, "filter_shape"));
  const Shape& input = ctx.inputs[0].shape;
  TF_ASSIGN_OR_RETURN(Shape expected, depthwise_output_shape(ctx, input, "input", filter, "filter_shape"));
  TF_RETURN_IF_ERROR(check_out_backprop(ctx, ctx.inputs[1].shape, expected, input, filter));
  return single_output(ctx.inputs[0].dtype, std::move(filter));
}

OpDef kDepthwise{.type = "DepthwiseConv2dNative", .api_name = "depthwise_conv2d", .num_inputs = 2,
                 .infer = depthwise_shape,
    .tf_form = "T=in0 strides:hw padding:string data_format=NHWC dilations:hw=[1,1,1,1]"};
OpDef kDepthwiseBackpropInput{.type = "DepthwiseConv2dNativeBackpropInput",
                              .api_name = "depthwise_conv2d_backprop_input", .num_inputs = 2,
                              .infer = backprop_input_shape,
    .tf_form = "T=in0 input_shape@ints#0 strides:hw padding:string data_format=NHWC dilations:hw=[1,1,1,1]"};
OpDef kDepthwiseBackpropFilter{.type = "DepthwiseConv2dNativeBackpropFilter",
                               .api_name = "depthwise_conv2d_backprop_filter", .num_inputs = 2,
                               .infer = backprop_filter_shape,
    .tf_form = "T=in0 filter_shape@ints#1 strides:hw padding:string data_format=NHWC dilations:hw=[1,1,1,1]"};

AttrMap window_attrs(Ints strides, std::string_view padding, Ints dilations) {
  return AttrMap{{"strides", std::move(strides)}, {"padding", std::string(padding)}, {"dilations", std::move(dilations)}};
}

}  // namespace

void register_conv_variant_ops(OpRegistry& r) {
  r.add(kDepthwise);
  r.add(kDepthwiseBackpropInput);
  r.add(kDepthwiseBackpropFilter);
}

Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, Ints strides, std::string_view padding,
                        Ints dilations, std::source_location loc) {
  const Tensor inputs[2] = {input, filter};
  return execute_single(kDepthwise, inputs, window_attrs(std::move(strides), padding, std::move(dilations)), loc);
}

Tensor depthwise_conv2d_backprop_input(Ints input_shape, const Tensor& filter, const Tensor& out_backprop, Ints strides,
                                       std::string_view padding, Ints dilations, std::source_location loc) {
  const Tensor inputs[2] = {filter, out_backprop};
  AttrMap attrs = window_attrs(std::move(strides), padding, std::move(dilations));
  attrs.set("input_shape", std::move(input_shape));
  return execute_single(kDepthwiseBackpropInput, inputs, attrs, loc);
}

Tensor depthwise_conv2d_backprop_filter(const Tensor& input, Ints filter_shape, const Tensor& out_backprop,
                                        Ints strides, std::string_view padding, Ints dilations,
                                        std::source_location loc) {
  const Tensor inputs[2] = {input, out_backprop};
  AttrMap attrs = window_attrs(std::move(strides), padding, std::move(dilations));
  attrs.set("filter_shape", std::move(filter_shape));
  return execute_single(kDepthwiseBackpropFilter, inputs, attrs, loc);
}

}  // namespace tapeflow
