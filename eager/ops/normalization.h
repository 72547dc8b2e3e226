// Normalization ops with TensorFlow's names: FusedBatchNormV3 and LRN (BiasAdd's definition
// lives here too; its API is bias_add in eager/ops/nn.h).
//
//   Tensor x = random_normal({8, 16, 16, 32});                 // NHWC
//   Tensor scale = ones({32}), offset = zeros({32});
//   auto t = fused_batch_norm(x, scale, offset, zeros({0}), zeros({0}));   // training mode
//   t.y;                 // (x - mean) / sqrt(var + eps) * scale + offset, per channel
//   t.batch_mean;        // the batch's mean (for a moving average)
//   t.batch_variance;    // the batch's variance, unbiased (n / (n - 1))
//   auto i = fused_batch_norm(x, scale, offset, t.batch_mean, t.batch_variance, 0.001, 1.0,
//                             "NHWC", /*is_training=*/false);               // inference mode
//   local_response_normalization(x, 2, 1.0, 1e-4, 0.75);       // tf.nn.lrn
#pragma once

#include <cstdint>
#include <source_location>
#include <string_view>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()

// FusedBatchNormV3's six outputs, in TensorFlow's order.
struct FusedBatchNormOutputs {
  Tensor y;                // x's shape
  Tensor batch_mean;       // [C]
  Tensor batch_variance;   // [C]
  Tensor reserve_space_1;  // [C]: the mean y was normalized with
  Tensor reserve_space_2;  // [C]: the (biased) variance y was normalized with
  Tensor reserve_space_3;  // a scalar 0: a placeholder, as on TensorFlow's CPU
};

// tf.compat.v1.nn.fused_batch_norm (FusedBatchNormV3). x is 4-D, [N, H, W, C] ("NHWC") or
// [N, C, H, W] ("NCHW"); scale, offset, mean and variance are [C]; all of one dtype, float32 or
// float64 (TensorFlow: x may also be half with float32 parameters; tapeflow has no half).
// Training (is_training): y normalizes with the batch's mean m and biased variance v over
// N, H, W; batch_mean = (1 - f) * mean + f * m and batch_variance = (1 - f) * variance
// + f * v * n / (n - 1) with f = exponential_avg_factor and n = N*H*W; with f == 1 mean and
// variance are not read and may be empty ([0]), as in TensorFlow. Inference: y normalizes with
// the given mean and variance, which batch_mean / batch_variance return unchanged.
// Differentiable in x, scale, offset, mean and variance through y, batch_mean and
// batch_variance (a composition of public ops: tape/gradients/normalization.cc); the reserve
// spaces carry no gradient.
FusedBatchNormOutputs fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                                       const Tensor& variance, double epsilon = 0.001,
                                       double exponential_avg_factor = 1.0, std::string_view data_format = "NHWC",
                                       bool is_training = true, TF_SL);

// tf.nn.local_response_normalization (LRN) over the last dim of a 4-D input:
//   sqr_sum[..., d] = sum(input[..., d - depth_radius : d + depth_radius + 1] ** 2)
//   output = input / (bias + alpha * sqr_sum) ** beta
// float32 and float64; depth_radius >= 0.
Tensor local_response_normalization(const Tensor& input, int64_t depth_radius = 5, double bias = 1.0,
                                    double alpha = 1.0, double beta = 0.5, TF_SL);
// LRN's gradient (TensorFlow's LRNGrad): d/d input_image of sum(lrn(input_image) * input_grads);
// output_image is lrn(input_image) (checked for shape). Primitive, not differentiable (as in TF).
Tensor lrn_grad(const Tensor& input_grads, const Tensor& input_image, const Tensor& output_image,
                int64_t depth_radius = 5, double bias = 1.0, double alpha = 1.0, double beta = 0.5, TF_SL);

#undef TF_SL

}  // namespace tapeflow
