// The models the ONNX export tests export: the tutorials' MLP and CNN (smaller widths, the same
// layers) one function that uses every other op the export converts, and convolutions over images of
// unknown size. Shared by
// onnx_test.cc (structure) and onnx/onnx_cases.cc (files for onnx's checker and ONNX Runtime).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "tapeflow.h"

namespace tapeflow::onnx_test {

struct ExportedCase {
  std::string name;
  std::vector<Tensor> inputs;    // sample values
  std::vector<Tensor> expected;  // tapeflow's outputs on them (the traced graph, run by a Session)
  std::string bytes;             // the ONNX model
  std::vector<Variable> variables;
};

// Deterministic values in about [-scale, scale].
inline Tensor pattern(const Shape& shape, float scale, int salt = 0) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(0.37f * float(i) + 0.11f * float(salt) + 0.5f);
  return Tensor(v, shape);
}

template <typename F>
ExportedCase export_case(std::string name, F fn, const std::vector<TensorSpec>& specs, std::vector<Tensor> inputs,
                         std::vector<Variable> variables = {}) {
  auto traced = function(std::move(fn), FunctionOptions{.name = name});
  ConcreteFunction& cf = traced.get_concrete_function(specs);
  ExportedCase c{std::move(name), std::move(inputs), {}, onnx_model_bytes(cf), std::move(variables)};
  c.expected = cf(c.inputs);
  return c;
}

// Tutorial 03's MLP (Flatten, Dense relu, Dense) with a softmax, on [batch, 784].
inline ExportedCase mlp_case() {
  set_seed(3);
  auto model = std::make_shared<nn::Sequential>(
      std::initializer_list<nn::LayerRef>{nn::Flatten(), nn::Dense(32, nn::Activation::kRelu), nn::Dense(10)});
  (*model)(pattern({1, 784}, 1.f));  // builds the weights eagerly
  return export_case("mlp", [model](const Tensor& x) { return softmax((*model)(x)); },
                     {{DType::kFloat32, {-1, 784}}}, {pattern({3, 784}, 1.f)}, model->trainable_variables());
}

// Tutorial 04's CNN (Conv 5x5 relu, pool, Conv 5x5 relu, pool, Flatten, Dense relu, Dropout,
// Dense) in inference mode, on [batch, 28, 28, 1].
inline ExportedCase cnn_case() {
  set_seed(4);
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::LayerRef>{
      nn::Conv2D(4, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(), nn::Conv2D(8, {5, 5}, nn::Activation::kRelu),
      nn::MaxPool2D(), nn::Flatten(), nn::Dense(16, nn::Activation::kRelu), nn::Dropout(0.4), nn::Dense(10)});
  model->set_training(false);
  (*model)(pattern({1, 28, 28, 1}, 1.f));
  return export_case("cnn", [model](const Tensor& x) { return (*model)(x); }, {{DType::kFloat32, {-1, 28, 28, 1}}},
                     {pattern({2, 28, 28, 1}, 1.f)}, model->trainable_variables());
}

// Every other converted op, on x [2, 3, 4] and an image [1, 6, 6, 2].
inline ExportedCase ops_case() {
  const Tensor w = pattern({4, 3}, 0.5f, 1), k = pattern({3, 3, 2, 3}, 0.5f, 2);
  auto fn = [w, k](const Tensor& x, const Tensor& img) -> std::vector<Tensor> {
    const Tensor a = rsqrt(abs(x) + 1.f) + log1p(square(x)) - relu6(x * 4.f) + leaky_relu(x, 0.1);
    const Tensor b = elu(x) * selu(x) + softplus(x) / (softsign(x) + 2.f) + sigmoid(x) * tanh(x);
    const Tensor c = maximum(floor(x * 3.f), sign(x)) + minimum(-x, pow(abs(x) + 0.5f, 1.5f));
    const Tensor m = matmul(reshape(a + b + c, {6, 4}), w);                       // [6, 3]
    const Tensor mt = matmul(m, reshape(x, {6, 4}), true, false);                 // [3, 4]
    const Tensor joined = concat({transpose(mt, {1, 0}), tile(slice(m, {1, 0}, {4, -1}), {1, 1})}, 0);  // [8, 3]
    const Tensor g = gather(joined, Tensor(std::vector<int32_t>{7, 0, 3}, Shape{3}), 0);              // [3, 3]
    const Tensor p = pad(squeeze(expand_dims(g, 0), {0}), {{1, 0}, {0, 2}}, 0.25);                   // [4, 5]
    const Tensor r = reduce_sum(p, {1}, true) + reduce_max(p, {0}) - reduce_min(p, {1}, true) +
                     reduce_prod(p * 0.5f + 1.f, {0}, true) + reduce_mean(p);                        // [4, 5]
    const Tensor cmp = cast(logical_and(greater(r, 0.f), logical_not(equal(r, 1.f))), DType::kFloat32) +
                       cast(less_equal(r, 0.5f), DType::kFloat32) * 2.f;
    const Tensor conv = conv2d(img, k, {2, 2}, "SAME");                            // [1, 3, 3, 3]
    const Tensor pooled = avg_pool(conv, {2, 2}, {1, 1}, "SAME") + max_pool(conv, {3, 3}, {1, 1}, "SAME");
    return {where(greater(r, 1.f), r + cmp, -r), argmax(r, 1), argmin(r, 0, DType::kInt32), pooled, cast(r * 10.f, DType::kInt32)};
  };
  return export_case("ops", fn, {{DType::kFloat32, {2, 3, 4}}, {DType::kFloat32, {1, 6, 6, 2}}},
                     {pattern({2, 3, 4}, 1.5f, 3), pattern({1, 6, 6, 2}, 1.f, 4)});
}

// Convolution and pooling over images of unknown size: SAME padding becomes auto_pad.
inline ExportedCase dynamic_conv_case() {
  const Tensor k = pattern({3, 3, 2, 4}, 0.5f, 5);
  auto fn = [k](const Tensor& img) { return max_pool(relu(conv2d(img, k, {2, 2}, "SAME")), {3, 3}, {2, 2}, "SAME"); };
  return export_case("dynamic_conv", fn, {{DType::kFloat32, {-1, -1, -1, 2}}}, {pattern({2, 7, 9, 2}, 1.f, 6)});
}

}  // namespace tapeflow::onnx_test
