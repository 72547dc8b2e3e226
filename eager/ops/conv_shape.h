// Shape-function pieces shared by the convolution families (conv2d in eager/ops/conv.cc,
// depthwise_conv2d in eager/ops/conv_variants.cc) and pooling (eager/ops/pool.cc). Internal.
//
// A conv family's three shape functions (forward, backprop_input, backprop_filter) differ only in
// the family's output shape and in how a message describes the forward call, so they are written
// once here, parameterised by those two functions:
//
//   using Fns = internal::ConvShapeFns<conv_output_shape, forward_desc>;
//   OpDef kConv2D{..., .infer = Fns::forward};
//
// Definitions are in eager/ops/conv.cc. Every error is an InvalidArgumentError "[op] ...".
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/shape.h"
#include "eager/op_def.h"

namespace tapeflow::internal {

// s has rank 4; `layout` names its dims in the message ("[batch, height, width, channels]").
absl::Status check_rank4(const InferenceContext& ctx, const Shape& s, const char* name, const char* layout);
// Input i is float32 or float64.
absl::Status check_float(const InferenceContext& ctx, int i, const char* name);
// Inputs i and j (named a and b) have one dtype.
absl::Status check_same_dtype(const InferenceContext& ctx, int i, const char* a, int j, const char* b);
// A shape attribute of a backprop op: 4 known, non-negative dims.
absl::StatusOr<Shape> shape_attr(const InferenceContext& ctx, const char* name);
// An NHWC input and a [KH, KW, in_channels, ...] filter (`filter_layout` names its dims): ranks,
// matching channels and a non-empty window. The names say where each shape came from.
absl::Status check_conv_operands(const InferenceContext& ctx, const Shape& input, const char* input_name,
                                 const Shape& filter, const char* filter_name, const char* filter_layout);
// The output {height, width} of the filter's window, dilated, sliding over the NHWC input (see
// window_output_hw). Messages call it "filter window 3x3 (5x5 dilated) of 'filter' [3,3,1,8]",
// naming the dilated size where a dilation is not 1, or always with always_name_dilated.
absl::StatusOr<std::array<int64_t, 2>> filter_output_hw(const InferenceContext& ctx, const Shape& input,
                                                         const char* input_name, const Shape& filter,
                                                         const char* filter_name, std::array<int64_t, 2> strides,
                                                         std::array<int64_t, 2> dilations, bool same,
                                                         bool always_name_dilated);

// A conv family's output shape for input and filter, after checking them and the window attributes.
using ConvOutputShapeFn = absl::StatusOr<Shape> (*)(const InferenceContext& ctx, const Shape& input,
                                                    const char* input_name, const Shape& filter,
                                                    const char* filter_name);
// The forward call for out_backprop's message: "conv2d of input [..] with filter [..], strides [..]
// and SAME padding".
using ConvForwardDescFn = std::string (*)(const InferenceContext& ctx, const Shape& input, const Shape& filter);

// Inputs: input, filter. Attributes: strides, padding (, dilations).
absl::StatusOr<OutputSpecs> conv_forward_shape(const InferenceContext& ctx, ConvOutputShapeFn output);
// Inputs: filter, out_backprop. Attributes: input_shape and the forward op's.
absl::StatusOr<OutputSpecs> conv_backprop_input_shape(const InferenceContext& ctx, ConvOutputShapeFn output,
                                                      ConvForwardDescFn desc);
// Inputs: input, out_backprop. Attributes: filter_shape and the forward op's.
absl::StatusOr<OutputSpecs> conv_backprop_filter_shape(const InferenceContext& ctx, ConvOutputShapeFn output,
                                                       ConvForwardDescFn desc);

// The three ShapeFns of a conv family.
template <ConvOutputShapeFn kOutput, ConvForwardDescFn kDesc>
struct ConvShapeFns {
  static absl::StatusOr<OutputSpecs> forward(const InferenceContext& ctx) { return conv_forward_shape(ctx, kOutput); }
  static absl::StatusOr<OutputSpecs> backprop_input(const InferenceContext& ctx) {
    return conv_backprop_input_shape(ctx, kOutput, kDesc);
  }
  static absl::StatusOr<OutputSpecs> backprop_filter(const InferenceContext& ctx) {
    return conv_backprop_filter_shape(ctx, kOutput, kDesc);
  }
};

}  // namespace tapeflow::internal
