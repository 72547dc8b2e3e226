// 2-D max and average pooling over NHWC images, and the primitives their gradients use.
//
//   Tensor x = random_normal({64, 28, 28, 32});
//   max_pool(x, {2, 2}, {2, 2}, "SAME");               // [64, 14, 14, 32]
//   avg_pool(x, {1, 3, 3, 1}, {1, 1, 1, 1}, "VALID");  // TF's 4-element form: [64, 26, 26, 32]
//
//   // The gradients of sum(pool(x) * g) with respect to x:
//   max_pool_grad(x, max_pool(x, {2, 2}, {2, 2}, "SAME"), g, {2, 2}, {2, 2}, "SAME");
//   avg_pool_grad({64, 28, 28, 32}, g, {2, 2}, {2, 2}, "SAME");
//
// Semantics are TensorFlow's (tf.nn.max_pool2d, tf.nn.avg_pool2d). ksize and strides are
// {h, w} or {1, h, w, 1}; padding is "SAME" or "VALID"; output sizes as for conv2d
// (eager/ops/conv.h): VALID ceil((H - KH + 1) / s), SAME ceil(H / s). Padded positions never
// count: max_pool ignores them and avg_pool divides by the number of real (non-padded) elements
// in each window, as TensorFlow does. float32 and float64. Errors (rank, ksize, strides,
// padding, a VALID window larger than the input) throw InvalidArgumentError "[max_pool] ...".
#pragma once

#include <cstdint>
#include <source_location>
#include <string_view>
#include <vector>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()

// The maximum of each window of input [N, H, W, C]: [N, OH, OW, C].
Tensor max_pool(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                std::string_view padding, TF_SL);
// The mean of each window's real (non-padded) elements: [N, OH, OW, C].
Tensor avg_pool(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                std::string_view padding, TF_SL);

// d/d orig_input of sum(max_pool(orig_input) * grad): each grad element goes to its window's
// maximum (the first in row-major window order on ties), summed where windows overlap.
// orig_output is max_pool(orig_input, ...) (checked for shape only); grad has its shape.
// Primitive (its own kernel).
Tensor max_pool_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                     std::vector<int64_t> ksize, std::vector<int64_t> strides, std::string_view padding, TF_SL);
// max_pool_grad's adjoint in its grad input (TensorFlow's MaxPoolGradGrad): each window's
// result is `grad` at the window's maximum, the element max_pool_grad routes to (the first on
// ties). grad has orig_input's shape; the result has orig_output's, and
// sum(max_pool_grad(x, y, g) * h) == sum(g * max_pool_grad_grad(x, y, h)). Second-order
// gradients through max_pool use it. Primitive (its own kernel).
Tensor max_pool_grad_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                          std::vector<int64_t> ksize, std::vector<int64_t> strides, std::string_view padding, TF_SL);
// d/d input of sum(avg_pool(input) * grad) for an input of shape orig_input_shape (4 known
// dims): each grad element is spread evenly over its window's real elements. Primitive.
Tensor avg_pool_grad(std::vector<int64_t> orig_input_shape, const Tensor& grad, std::vector<int64_t> ksize,
                     std::vector<int64_t> strides, std::string_view padding, TF_SL);

// The same with TensorFlow's data_format: "NHWC" (the default above) or "NCHW", where input
// is [N, C, H, W], the outputs follow it, and 4-element ksize / strides are {1, 1, h, w}.
// NCHW runs the NHWC kernels between transposes inside one MaxPool / AvgPool / ... node.
Tensor max_pool(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                std::string_view padding, std::string_view data_format, TF_SL);
Tensor avg_pool(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                std::string_view padding, std::string_view data_format, TF_SL);
Tensor max_pool_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                     std::vector<int64_t> ksize, std::vector<int64_t> strides, std::string_view padding,
                     std::string_view data_format, TF_SL);
Tensor max_pool_grad_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad,
                          std::vector<int64_t> ksize, std::vector<int64_t> strides, std::string_view padding,
                          std::string_view data_format, TF_SL);
Tensor avg_pool_grad(std::vector<int64_t> orig_input_shape, const Tensor& grad, std::vector<int64_t> ksize,
                     std::vector<int64_t> strides, std::string_view padding, std::string_view data_format, TF_SL);

#undef TF_SL

}  // namespace tapeflow
