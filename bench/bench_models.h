// The tapeflow workloads the benchmarks time, in one place so that tape_bench and
// libtorch_compare run the very same code:
//   - chain100: 100 scalar ops recorded on a tape, then the gradient;
//   - Mlp: one SGD training step of a 784-256-10 relu MLP with softmax cross-entropy;
//   - Cnn: one Adam training step of the CNN of tutorial 04 on a fixed random batch.
//
//   tapeflow_bench::Mlp mlp(/*batch=*/64, /*in=*/784, /*hidden=*/256, /*classes=*/10);
//   for (int i = 0; i < 100; ++i) mlp.step();   // SGD steps
#pragma once

#include <cstdint>
#include <vector>

#include "tapeflow.h"

namespace tapeflow_bench {

namespace tf = tapeflow;

// y = x, then y = y * 0.999; y = y + 0.001 fifty times (100 ops) under a tape; returns dy/dx.
inline tf::Tensor chain100(const tf::Tensor& x) {
  tf::GradientTape tape;
  tape.watch(x);
  tf::Tensor y = x;
  for (int i = 0; i < 50; ++i) {  // 2 ops per iteration: 100 ops
    y = y * 0.999f;
    y = y + 0.001f;
  }
  return tape.gradient(y, x);
}

// relu(x w1 + b1) w2 + b2, mean softmax cross-entropy against one-hot labels, plain SGD
// (lr 0.01) through apply_gradient_descent. Weights, inputs and labels are seeded: the same every run.
struct Mlp {
  Mlp(int64_t batch, int64_t in, int64_t hidden, int64_t classes)
      : w1(tf::random_normal({in, hidden}, 0.0, 0.05, tf::DType::kFloat32, 1), "w1"),
        b1(tf::zeros({hidden}), "b1"),
        w2(tf::random_normal({hidden, classes}, 0.0, 0.05, tf::DType::kFloat32, 2), "w2"),
        b2(tf::zeros({classes}), "b2"),
        x(tf::random_uniform({batch, in}, 0.0, 1.0, tf::DType::kFloat32, 3)),
        labels(tf::one_hot(tf::random_uniform({batch}, 0, classes, tf::DType::kInt32, 4), classes)) {}
  tf::Variable w1, b1, w2, b2;
  tf::Tensor x, labels;

  tf::Tensor loss() const { return loss(x, labels); }
  tf::Tensor loss(const tf::Tensor& images, const tf::Tensor& onehot) const {
    tf::Tensor h = tf::relu(tf::matmul(images, w1) + b1);
    tf::Tensor logits = tf::matmul(h, w2) + b2;
    return tf::neg(tf::reduce_mean(tf::reduce_sum(onehot * tf::log_softmax(logits), {1})));
  }
  std::vector<tf::Variable> variables() const { return {w1, b1, w2, b2}; }
  static void update(const std::vector<tf::Tensor>& grads, const std::vector<tf::Variable>& vars) {
    for (size_t i = 0; i < vars.size(); ++i) {
      tf::Variable var = vars[i];
      tf::apply_gradient_descent(var, 0.01f, grads[i]);  // var -= 0.01 grad, as torch's p.add_(grad, -0.01)
    }
  }
  void step() { step(x, labels); }
  // One step on a given batch (traceable: graph_bench replays it through tf::function); the loss.
  tf::Tensor step(const tf::Tensor& images, const tf::Tensor& onehot) {
    tf::GradientTape tape;
    tf::Tensor l = loss(images, onehot);
    const std::vector<tf::Variable> vars = variables();
    update(tape.gradient(l, vars), vars);
    return l;
  }
};

// Tutorial 04's network (NHWC) and optimizer on a fixed random batch of 28x28x1 images:
// Conv2D 32 5x5 relu, MaxPool, Conv2D 64 5x5 relu, MaxPool, Flatten, Dense 1024 relu,
// Dropout 0.4, Dense 10; Adam 1e-3; mean sparse softmax cross-entropy. Global seed 2024.
struct Cnn {
  explicit Cnn(int64_t batch = 64)
      : model(make_model()),
        optimizer(1e-3),
        images(tf::random_uniform({batch, 28, 28, 1}, 0.0, 1.0, tf::DType::kFloat32, 5)),
        labels(tf::random_uniform({batch}, 0, 10, tf::DType::kInt32, 6)) {
    model.set_training(true);
    tf::Tensor first = loss();  // builds the layers' variables
    (void)first;
    vars = model.trainable_variables();
  }
  tf::nn::Sequential model;
  tf::nn::Adam optimizer;
  tf::Tensor images, labels;
  std::vector<tf::Variable> vars;

  tf::Tensor loss() { return tf::reduce_mean(tf::sparse_softmax_cross_entropy_with_logits(labels, model(images))); }
  void step() {
    tf::GradientTape tape;
    const tf::Tensor l = loss();
    optimizer.apply_gradients(tape.gradient(l, vars), vars);
  }

 private:
  static tf::nn::Sequential make_model() {
    namespace nn = tf::nn;
    tf::set_seed(2024);
    return nn::Sequential({nn::Conv2D(32, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(),
                           nn::Conv2D(64, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(), nn::Flatten(),
                           nn::Dense(1024, nn::Activation::kRelu), nn::Dropout(0.4), nn::Dense(10)});
  }
};

// The CNN in inference mode (dropout off) on a batch of `batch`, for benchmarks that keep one
// for the whole process (never destroyed: its variables outlive the traces that capture them).
inline Cnn* new_inference_cnn(int64_t batch) {
  auto* c = new Cnn(batch);
  c->model.set_training(false);
  return c;
}

}  // namespace tapeflow_bench
