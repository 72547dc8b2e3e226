// Neural-network helpers. softmax and log_softmax are TensorFlow's Softmax and LogSoftmax nodes;
// the others are composites of public ops (so they differentiate and trace with no code of
// their own).
//
//   Tensor logits = {{1.f, 2.f, 3.f}, {1000.f, 1000.f, 1000.f}};
//   softmax(logits);          // each row sums to 1; large logits do not overflow
//   log_softmax(logits, 0);   // along axis 0
//   bias_add(x, b);           // x [..., C] + b [C]
//   dropout(h, 0.5, /*training=*/true, /*seed=*/7);  // zeroes about half, scales the rest by 2
//   l2_loss(w);               // sum(w^2) / 2, a scalar (TensorFlow's L2Loss node)
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <string_view>

#include "eager/tensor.h"

namespace tapeflow {

// exp(x) / sum(exp(x)) along `axis`, computed as exp(x - max) / sum(exp(x - max)) so large
// logits do not overflow. float32 or float64.
Tensor softmax(const Tensor& logits, int64_t axis = -1,
               std::source_location loc = std::source_location::current());
// x - log(sum(exp(x))) along `axis`, computed from the shifted x - max (stable, and exact
// where softmax would underflow to 0). float32 or float64.
Tensor log_softmax(const Tensor& logits, int64_t axis = -1,
                   std::source_location loc = std::source_location::current());

// value + bias along value's last dim (tf.nn.bias_add, NHWC): value has rank >= 2 and shape
// [..., C], bias has shape [C] and value's dtype. One BiasAdd node (eager/ops/normalization.cc).
Tensor bias_add(const Tensor& value, const Tensor& bias,
                std::source_location loc = std::source_location::current());
// The same with TensorFlow's data_format: "NHWC" (channels last) or "NCHW" (channels in dim 1;
// value has rank >= 3, [N, C, ...]).
Tensor bias_add(const Tensor& value, const Tensor& bias, std::string_view data_format,
                std::source_location loc = std::source_location::current());
// BiasAdd's gradient for its bias (TensorFlow's BiasAddGrad): out_backprop summed over every
// dim but the channel dim of data_format: shape [C].
Tensor bias_add_grad(const Tensor& out_backprop, std::string_view data_format = "NHWC",
                     std::source_location loc = std::source_location::current());

// Inverted dropout (tf.nn.dropout). With training == false, or rate == 0, x itself is returned.
// Otherwise each element is kept with probability 1 - rate and scaled by 1 / (1 - rate), the
// rest are zeroed: x * (u >= rate) / (1 - rate) with u = random_uniform(x.shape, seed) (see
// eager/ops/random.h for seeds). x is float32 or float64; rate must be in [0, 1).
Tensor dropout(const Tensor& x, double rate, bool training, std::optional<int64_t> seed = std::nullopt,
               std::source_location loc = std::source_location::current());

// sum(t^2) / 2 over every element (tf.nn.l2_loss): a scalar of t's dtype, float32 or float64.
Tensor l2_loss(const Tensor& t, std::source_location loc = std::source_location::current());

}  // namespace tapeflow
