// Activations and their gradient ops, each one of TensorFlow's primitive ops (Relu, Relu6, Elu,
// Selu, Softplus, Softsign, LeakyRelu; ReluGrad, Relu6Grad, EluGrad, SeluGrad, SoftplusGrad,
// SoftsignGrad, LeakyReluGrad, SigmoidGrad, TanhGrad): one OpDef and one kernel each, so graphs
// and GraphDefs show TensorFlow's nodes, and the gradients are exact at the kinks as
// TensorFlow's are (relu'(0) = 0, relu6'(0) = relu6'(6) = 0, softplus'(0) = 0.5).
//
//   Tensor h = relu(matmul(x, w) + b);
//   Tensor g = relu_grad(dy, h);          // dy where h > 0, else 0 (what relu's gradient runs)
//   Tensor l = leaky_relu(x, 0.1);        // x > 0 ? x : 0.1 x
#pragma once

#include <source_location>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()
// Numeric inputs (float, double, int32, int64, uint8).
Tensor relu(const Tensor& x, TF_SL);   // max(x, 0)
Tensor relu6(const Tensor& x, TF_SL);  // min(max(x, 0), 6)
// Floating-point inputs.
Tensor elu(const Tensor& x, TF_SL);       // x > 0 ? x : exp(x) - 1
Tensor selu(const Tensor& x, TF_SL);      // scale * (x > 0 ? x : alpha (exp(x) - 1)), Klambauer et al.'s constants
Tensor softplus(const Tensor& x, TF_SL);  // log(1 + exp(x)), computed stably
Tensor softsign(const Tensor& x, TF_SL);  // x / (1 + |x|)
Tensor leaky_relu(const Tensor& x, double alpha = 0.2, TF_SL);  // x > 0 ? x : alpha x (TensorFlow's default alpha)

// The gradient ops, with TensorFlow's argument order. Both inputs have one dtype and shape.
Tensor relu_grad(const Tensor& gradients, const Tensor& features, TF_SL);   // features > 0 ? g : 0
Tensor relu6_grad(const Tensor& gradients, const Tensor& features, TF_SL);  // 0 < features < 6 ? g : 0
Tensor elu_grad(const Tensor& gradients, const Tensor& outputs, TF_SL);
Tensor selu_grad(const Tensor& gradients, const Tensor& outputs, TF_SL);
Tensor softplus_grad(const Tensor& gradients, const Tensor& features, TF_SL);
Tensor softsign_grad(const Tensor& gradients, const Tensor& features, TF_SL);
Tensor leaky_relu_grad(const Tensor& gradients, const Tensor& features, double alpha = 0.2, TF_SL);
Tensor sigmoid_grad(const Tensor& y, const Tensor& dy, TF_SL);  // dy * y * (1 - y)
Tensor tanh_grad(const Tensor& y, const Tensor& dy, TF_SL);     // dy * (1 - y^2)
#undef TF_SL

}  // namespace tapeflow
