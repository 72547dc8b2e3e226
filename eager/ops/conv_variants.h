// Depthwise 2-D convolution over NHWC images (TensorFlow's DepthwiseConv2dNative), and the two
// primitives its gradient is built from.
//
//   Tensor x = random_normal({8, 32, 32, 16});      // [batch, height, width, channels]
//   Tensor w = random_normal({3, 3, 16, 2});        // [kh, kw, channels, channel_multiplier]
//   Tensor y = depthwise_conv2d(x, w, {1, 1}, "SAME");              // [8, 32, 32, 32]
//   depthwise_conv2d(x, w, {1, 1}, "VALID", {2, 2});                // dilation 2: [8, 28, 28, 32]
//
// Semantics are TensorFlow's (tf.nn.depthwise_conv2d): output channel c * M + m is input
// channel c cross-correlated with filter[:, :, c, m], M = filter.dim(3) the channel multiplier.
// Window geometry (strides, SAME / VALID padding, dilations: {h, w} or {1, h, w, 1}) is
// conv2d's (eager/ops/conv.h). float32 and float64. Bad ranks, channel mismatches, strides,
// dilations and padding throw InvalidArgumentError starting with "[depthwise_conv2d]" (or the
// backprop op's name).
//
// The gradients are ops of their own (DepthwiseConv2dNativeBackpropInput / Filter), not
// compositions: TensorFlow's training graphs contain them, so GraphDefs carry them by name, and
// a composition through conv2d would need a block-diagonal filter C times larger. The CPU
// kernels are direct loops (devices/cpu/conv_variants.cc), which also run dilated conv2d.
#pragma once

#include <cstdint>
#include <source_location>
#include <string_view>
#include <vector>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()

// input [N, H, W, C], filter [KH, KW, C, M]: [N, OH, OW, C * M]. data_format "NCHW": input
// [N, C, H, W] and output [N, C * M, OH, OW], as conv2d's (eager/ops/conv.h).
Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, std::vector<int64_t> strides,
                        std::string_view padding, std::vector<int64_t> dilations = {1, 1},
                        std::string_view data_format = "NHWC", TF_SL);

// d/d input of sum(depthwise_conv2d(input, filter) * out_backprop) for an input of shape
// input_shape (4 known dims). Primitive.
Tensor depthwise_conv2d_backprop_input(std::vector<int64_t> input_shape, const Tensor& filter,
                                       const Tensor& out_backprop, std::vector<int64_t> strides,
                                       std::string_view padding, std::vector<int64_t> dilations = {1, 1},
                                       std::string_view data_format = "NHWC", TF_SL);

// d/d filter of sum(depthwise_conv2d(input, filter) * out_backprop) for a filter of shape
// filter_shape (4 known dims). Primitive.
Tensor depthwise_conv2d_backprop_filter(const Tensor& input, std::vector<int64_t> filter_shape,
                                        const Tensor& out_backprop, std::vector<int64_t> strides,
                                        std::string_view padding, std::vector<int64_t> dilations = {1, 1},
                                       std::string_view data_format = "NHWC", TF_SL);

#undef TF_SL

}  // namespace tapeflow
