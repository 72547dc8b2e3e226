// The conv variants family: DepthwiseConv2dNative and its two backprop ops (OpDefs with their
// shape functions, and the public API of eager/ops/conv_variants.h). Kernels are in
// devices/cpu/conv_variants.cc; the window geometry is conv2d's (eager/ops/conv.h, internal::).
#include "eager/ops/conv_variants.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/conv.h"
#include "eager/ops/conv_shape.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using Ints = std::vector<int64_t>;
using shape_fns::ints_to_string;
using shape_fns::invalid;

// Checks a depthwise call's input and filter shapes and attributes; returns the output shape.
absl::StatusOr<Shape> depthwise_output_shape(const InferenceContext& ctx, const Shape& input, const char* input_name,
                                             const Shape& filter, const char* filter_name) {
  TF_RETURN_IF_ERROR(internal::check_conv_operands(ctx, input, input_name, filter, filter_name,
                                                   "[height, width, in_channels, channel_multiplier]"));
  TF_ASSIGN_OR_RETURN(bool nchw, internal::nchw_of(ctx));
  TF_ASSIGN_OR_RETURN(auto strides, internal::spatial_pair(ctx.op, ctx.attrs.get<Ints>("strides"), "strides", nchw));
  TF_ASSIGN_OR_RETURN(auto dilations,
                      internal::spatial_pair(ctx.op, ctx.attrs.get<Ints>("dilations"), "dilations", nchw));
  TF_ASSIGN_OR_RETURN(bool same, internal::parse_padding(ctx.op, ctx.attrs.get<std::string>("padding")));
  TF_ASSIGN_OR_RETURN(auto hw, internal::filter_output_hw(ctx, input, input_name, filter, filter_name, strides,
                                                          dilations, same, /*always_name_dilated=*/true));
  int64_t channels = -1;
  const int64_t c = input.dim(3) >= 0 ? input.dim(3) : filter.dim(2);
  if (c >= 0 && filter.dim(3) >= 0) {
    const std::optional<int64_t> product = checked_mul(c, filter.dim(3));  // Note [Checked sizes]
    if (!product) return invalid(ctx, "'", filter_name, "' ", filter.to_string(), " gives too many output channels");
    channels = *product;
  }
  return Shape{input.dim(0), hw[0], hw[1], channels};
}

std::string depthwise_desc(const InferenceContext& ctx, const Shape& input, const Shape& filter) {
  return absl::StrCat("depthwise_conv2d of input ", input.to_string(), " with filter ", filter.to_string(),
                      ", strides ", ints_to_string(ctx.attrs.get<Ints>("strides")), ", dilations ",
                      ints_to_string(ctx.attrs.get<Ints>("dilations")), " and ", ctx.attrs.get<std::string>("padding"),
                      " padding");
}

using DepthwiseShapes = internal::ConvShapeFns<depthwise_output_shape, depthwise_desc>;

OpDef kDepthwise{.type = "DepthwiseConv2dNative", .api_name = "depthwise_conv2d", .num_inputs = 2,
                 .infer = DepthwiseShapes::forward,
    .tf_form = "T=in0 strides:hw padding:string data_format:string=NHWC dilations:hw=[1,1,1,1]"};
OpDef kDepthwiseBackpropInput{.type = "DepthwiseConv2dNativeBackpropInput",
                              .api_name = "depthwise_conv2d_backprop_input", .num_inputs = 2,
                              .infer = DepthwiseShapes::backprop_input,
    .tf_form = "T=in0 input_shape@ints#0 strides:hw padding:string data_format:string=NHWC dilations:hw=[1,1,1,1]"};
OpDef kDepthwiseBackpropFilter{.type = "DepthwiseConv2dNativeBackpropFilter",
                               .api_name = "depthwise_conv2d_backprop_filter", .num_inputs = 2,
                               .infer = DepthwiseShapes::backprop_filter,
    .tf_form = "T=in0 filter_shape@ints#1 strides:hw padding:string data_format:string=NHWC dilations:hw=[1,1,1,1]"};

using internal::window_attrs;

}  // namespace

void register_conv_variant_ops(OpRegistry& r) {
  r.add(kDepthwise);
  r.add(kDepthwiseBackpropInput);
  r.add(kDepthwiseBackpropFilter);
}

Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, Ints strides, std::string_view padding,
                        Ints dilations, std::string_view data_format, std::source_location loc) {
  const Tensor inputs[2] = {input, filter};
  return execute_single(kDepthwise, inputs, window_attrs(std::move(strides), padding, std::move(dilations), data_format),
                        loc);
}

Tensor depthwise_conv2d_backprop_input(Ints input_shape, const Tensor& filter, const Tensor& out_backprop, Ints strides,
                                       std::string_view padding, Ints dilations, std::string_view data_format,
                                       std::source_location loc) {
  const Tensor inputs[2] = {filter, out_backprop};
  AttrMap attrs = window_attrs(std::move(strides), padding, std::move(dilations), data_format);
  attrs.set("input_shape", std::move(input_shape));
  return execute_single(kDepthwiseBackpropInput, inputs, attrs, loc);
}

Tensor depthwise_conv2d_backprop_filter(const Tensor& input, Ints filter_shape, const Tensor& out_backprop,
                                        Ints strides, std::string_view padding, Ints dilations,
                                        std::string_view data_format, std::source_location loc) {
  const Tensor inputs[2] = {input, out_backprop};
  AttrMap attrs = window_attrs(std::move(strides), padding, std::move(dilations), data_format);
  attrs.set("filter_shape", std::move(filter_shape));
  return execute_single(kDepthwiseBackpropFilter, inputs, attrs, loc);
}

}  // namespace tapeflow
