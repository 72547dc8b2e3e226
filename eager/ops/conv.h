// 2-D convolution over NHWC (or NCHW) images, and the two primitives its gradient is built from.
//
//   Tensor x = random_normal({64, 28, 28, 1});     // [batch, height, width, in_channels]
//   Tensor w = random_normal({5, 5, 1, 32});       // [kh, kw, in_channels, out_channels]
//   Tensor y = conv2d(x, w, {1, 1}, "SAME");       // [64, 28, 28, 32]
//   conv2d(x, w, {1, 2, 2, 1}, "VALID");           // TF's 4-element strides: [64, 12, 12, 32]
//
//   // The gradient of sum(conv2d(x, w) * g) with respect to x and to w:
//   conv2d_backprop_input({64, 28, 28, 1}, w, g, {1, 1}, "SAME");    // shape of x
//   conv2d_backprop_filter(x, {5, 5, 1, 32}, g, {1, 1}, "SAME");     // shape of w
//
// Semantics are TensorFlow's (tf.nn.conv2d, a cross-correlation). Output sizes, with the
// effective filter height KH' = (KH - 1) * dh + 1 (KH without dilation; likewise the width):
//   VALID: ceil((H - KH' + 1) / stride)   (KH' > H is an InvalidArgumentError)
//   SAME:  ceil(H / stride), zero padding pad_total = max((out - 1) * stride + KH' - H, 0) split as
//          pad_top = pad_total / 2 and the rest at the bottom (likewise for the width).
// strides and dilations are {h, w} or {1, h, w, 1} (TF's rule: 1 in the batch and channel
// dims); padding is "SAME" or "VALID". float32 and float64. A dilated convolution equals the
// plain one with dh - 1 zero rows (dw - 1 zero columns) inserted between the filter's taps.
// Bad ranks, channel mismatches (naming both shapes), strides and padding throw
// InvalidArgumentError starting with "[conv2d]" (or the backprop op's name).
//
// Note [Conv2D kernels]: the CPU kernels lower to one large matrix product on OpenBLAS
// (im2col + GEMM forward, GEMM + col2im for the input gradient, im2col + GEMM for the filter
// gradient), with a copy-free path where the image is already the column matrix (1x1 filters
// at stride 1, and filters that cover the whole unpadded image).
#pragma once

#include <array>
#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/attr.h"
#include "core/shape.h"
#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()

// Cross-correlation of input [N, H, W, Cin] with filter [KH, KW, Cin, Cout]: [N, OH, OW, Cout].
Tensor conv2d(const Tensor& input, const Tensor& filter, std::vector<int64_t> strides, std::string_view padding,
              TF_SL);
// The same with TensorFlow's dilations (tf.nn.conv2d's `dilations`): {dh, dw} or {1, dh, dw, 1};
// and its data_format: "NHWC", or "NCHW" for input [N, Cin, H, W] and output [N, Cout, OH, OW]
// (the filter is [KH, KW, Cin, Cout] in both; 4-entry strides and dilations are then
// {1, 1, h, w}). Dilated convolutions run a simple direct kernel (Note [Conv2D kernels] covers
// dilation 1); NCHW runs the NHWC kernels between transposes (Note [NCHW kernels]).
Tensor conv2d(const Tensor& input, const Tensor& filter, std::vector<int64_t> strides, std::string_view padding,
              std::vector<int64_t> dilations, std::string_view data_format = "NHWC", TF_SL);

// d/d input of sum(conv2d(input, filter) * out_backprop), for an input of shape input_shape
// (4 known dims). out_backprop must have conv2d's output shape. Primitive (its own kernel).
Tensor conv2d_backprop_input(std::vector<int64_t> input_shape, const Tensor& filter, const Tensor& out_backprop,
                             std::vector<int64_t> strides, std::string_view padding, TF_SL);
Tensor conv2d_backprop_input(std::vector<int64_t> input_shape, const Tensor& filter, const Tensor& out_backprop,
                             std::vector<int64_t> strides, std::string_view padding, std::vector<int64_t> dilations,
                             std::string_view data_format = "NHWC", TF_SL);

// d/d filter of sum(conv2d(input, filter) * out_backprop), for a filter of shape filter_shape
// (4 known dims). Primitive (its own kernel).
Tensor conv2d_backprop_filter(const Tensor& input, std::vector<int64_t> filter_shape, const Tensor& out_backprop,
                              std::vector<int64_t> strides, std::string_view padding, TF_SL);
Tensor conv2d_backprop_filter(const Tensor& input, std::vector<int64_t> filter_shape, const Tensor& out_backprop,
                              std::vector<int64_t> strides, std::string_view padding, std::vector<int64_t> dilations,
                              std::string_view data_format = "NHWC", TF_SL);

// tf.nn.conv2d_transpose: the transpose (adjoint) of conv2d, i.e. Conv2DBackpropInput with
// `input` as the out_backprop. input [N, H, W, Cin]; filter [KH, KW, Cout, Cin] (note the order:
// conv2d's filter read backwards); output_shape [N, OH, OW, Cout] (4 known dims) must be a shape
// that conv2d with these strides, padding and dilations maps to input's shape.
Tensor conv2d_transpose(const Tensor& input, const Tensor& filter, std::vector<int64_t> output_shape,
                        std::vector<int64_t> strides, std::string_view padding,
                        std::vector<int64_t> dilations = {1, 1}, std::string_view data_format = "NHWC", TF_SL);

#undef TF_SL

struct InferenceContext;

namespace internal {
// Window geometry shared by the conv and pool shape functions (eager/ops/pool.cc).
// {h, w} from a 2-element {h, w} or a 4-element TF-style {1, h, w, 1} list; every entry >= 1.
// `what` names the attribute in messages ("strides", "ksize").
absl::StatusOr<std::array<int64_t, 2>> spatial_pair(const char* op, const std::vector<int64_t>& v, const char* what);
// The same for a layout: with nchw a 4-element list is {1, 1, h, w}.
absl::StatusOr<std::array<int64_t, 2>> spatial_pair(const char* op, const std::vector<int64_t>& v, const char* what,
                                                     bool nchw);
// true for "NCHW", false for "NHWC", an InvalidArgumentError otherwise.
absl::StatusOr<bool> parse_data_format(const char* op, const std::string& data_format);
// The call's data_format attr, parsed; absent is NHWC (graphs written before it existed).
absl::StatusOr<bool> nchw_of(const InferenceContext& ctx);
// NCHW windows are kept in TensorFlow's 4-entry form {1, 1, h, w}, which the GraphDef writes as
// it is ("hw" attrs expand a 2-entry {h, w} to NHWC's [1, h, w, 1]).
std::vector<int64_t> layout_window(std::vector<int64_t> v, std::string_view data_format);
// A conv call's attrs: strides and dilations (in data_format's window form), padding, data_format.
AttrMap window_attrs(std::vector<int64_t> strides, std::string_view padding, std::vector<int64_t> dilations,
                     std::string_view data_format);
// true for "SAME", false for "VALID", an InvalidArgumentError otherwise.
absl::StatusOr<bool> parse_padding(const char* op, const std::string& padding);
// Output {height, width} of a window of size `window` sliding over the NHWC `input` (named
// input_name in messages). Unknown input or window dims (-1) give -1. With VALID padding a window
// larger than a known input dim is an InvalidArgumentError; window_desc names it ("filter 'filter'
// [5,5,1,32]", "ksize [3,3]").
// The effective window of a dilated filter: (k - 1) * d + 1 per dim; unknown (-1) stays
// unknown, and an empty filter (k == 0) stays 0. InvalidArgumentError when it overflows.
absl::StatusOr<std::array<int64_t, 2>> dilated_window(const char* op, std::array<int64_t, 2> k,
                                                       std::array<int64_t, 2> dilations);
absl::StatusOr<std::array<int64_t, 2>> window_output_hw(const char* op, const Shape& input, const char* input_name,
                                                         std::array<int64_t, 2> window, const std::string& window_desc,
                                                         std::array<int64_t, 2> strides, bool same);
}  // namespace internal

}  // namespace tapeflow
