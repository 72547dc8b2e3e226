// Tutorial 06: from an eager prototype to a served graph, on Fashion-MNIST.
//
// The story: train the MLP of tutorial 03 eagerly with a GradientTape; trace the very same
// model code with tapeflow::function into a graph; serve the graph through a Session and get
// the same predictions on all 10,000 test images. Then trace the training step itself and
// replay it through a Session: with the same seeds it follows the eager loss curve.
//
// Run: ./build/tutorials/06_trace_and_serve [--epochs N] [--steps N]
#include <cmath>
#include <cstring>
#include <iostream>

#include "absl/strings/str_format.h"
#include "tapeflow.h"

using namespace tapeflow;

namespace {

std::vector<Tensor> preprocess(std::vector<Tensor> batch) {
  return {cast(batch[0], DType::kFloat32) / 255.f, batch[1]};
}

Tensor cross_entropy(const Tensor& logits, const Tensor& labels) {
  return neg(reduce_mean(reduce_sum(one_hot(labels, 10) * log_softmax(logits), {1})));
}

nn::Sequential make_model() {
  return nn::Sequential({nn::Flatten(), nn::Dense(256, nn::Activation::kRelu), nn::Dense(10)});
}

// One training step, written once: run eagerly, or traced into a graph.
Tensor train_step(nn::Sequential& model, nn::SGD& optimizer, const Tensor& images, const Tensor& labels) {
  GradientTape tape;
  Tensor loss = cross_entropy(model(images), labels);
  std::vector<Variable> vars = model.trainable_variables();
  optimizer.apply_gradients(tape.gradient(loss, vars), vars);
  return loss;
}

int64_t count_equal(const Tensor& a, const Tensor& b) {
  return reduce_sum(cast(equal(a, b), DType::kInt64)).item<int64_t>();
}

}  // namespace

int main(int argc, char** argv) {
  int epochs = 2, replay_steps = 100;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--epochs") == 0) epochs = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--steps") == 0) replay_steps = std::atoi(argv[i + 1]);
  }
  const std::string dir = default_fashion_mnist_dir();
  MnistSplit train = load_mnist(dir, "train");
  MnistSplit test = load_mnist(dir, "t10k");
  const std::vector<Tensor> test_set = preprocess({test.images, test.labels});

  // 1. Prototype eagerly.
  std::cout << "== 1. train eagerly\n";
  set_seed(1);
  nn::Sequential model = make_model();
  nn::SGD optimizer(0.1, /*momentum=*/0.9);
  Dataset ds = Dataset::from_tensor_slices({train.images, train.labels}).shuffle(60000, 2).batch(64).map(preprocess);
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    double loss_sum = 0;
    int steps = 0;
    for (const std::vector<Tensor>& batch : ds) {
      loss_sum += train_step(model, optimizer, batch[0], batch[1]).item<float>();
      ++steps;
    }
    std::cout << absl::StrFormat("epoch %d: mean loss %.4f\n", epoch, loss_sum / steps);
  }
  Tensor eager_logits = model(test_set[0]);
  Tensor eager_pred = argmax(eager_logits, 1);
  const int64_t eager_hits = count_equal(eager_pred, cast(test_set[1], DType::kInt64));
  std::cout << absl::StrFormat("eager test accuracy: %.4f\n", eager_hits / 10000.0);

  // 2. Trace the same model code. The model's variables are captured, not copied.
  std::cout << "\n== 2. trace the model into a graph\n";
  auto predict = function([&](const Tensor& images) { return model(images); }, {.name = "predict"});
  ConcreteFunction& serving = predict.get_concrete_function({{DType::kFloat32, {-1, 28, 28}}});
  std::cout << "graph '" << serving.name() << "': " << serving.graph().num_nodes() << " nodes, input "
            << serving.inputs()[0] << ", output " << serving.outputs()[0] << "\n";
  std::cout << "captured variables:";
  for (const Variable& v : serving.captured_variables()) std::cout << " " << v.name() << v.shape().to_string();
  std::cout << "\n";

  // 3. Serve it through a Session.
  std::cout << "\n== 3. serve through a Session\n";
  Session session(serving.graph());
  Tensor served_logits = session.run(serving.outputs()[0], {{serving.inputs()[0], test_set[0]}});
  Tensor served_pred = argmax(served_logits, 1);
  const int64_t served_hits = count_equal(served_pred, cast(test_set[1], DType::kInt64));
  const double max_diff = reduce_max(abs(served_logits - eager_logits)).item<float>();
  std::cout << absl::StrFormat("session test accuracy: %.4f\n", served_hits / 10000.0);
  std::cout << absl::StrFormat("same predictions as eager: %d of 10000 (largest logit difference %.3g)\n",
                               count_equal(served_pred, eager_pred), max_diff);

  // 4. Trace the training step and replay it through a Session; compare with eager steps.
  std::cout << "\n== 4. replay the traced training step\n";
  // Layers create their variables on first use: build each model right after seeding, so both
  // start from the same weights.
  set_seed(7);
  nn::Sequential eager_model = make_model();
  eager_model(test_set[0]);
  nn::SGD eager_opt(0.1, 0.9);
  set_seed(7);
  nn::Sequential graph_model = make_model();
  graph_model(test_set[0]);
  nn::SGD graph_opt(0.1, 0.9);
  auto traced_step = function(
      [&](const Tensor& images, const Tensor& labels) { return train_step(graph_model, graph_opt, images, labels); },
      {.name = "train_step"});
  Dataset replay = Dataset::from_tensor_slices({train.images, train.labels}).shuffle(60000, 5).batch(64).map(preprocess);
  ConcreteFunction& step_fn =
      traced_step.get_concrete_function({{DType::kFloat32, {64, 28, 28}}, {DType::kUInt8, {64}}});
  Session trainer(step_fn.graph());
  double worst = 0;
  int step = 0;
  for (const std::vector<Tensor>& batch : replay) {
    if (step == replay_steps || batch[0].shape().dim(0) != 64) break;
    const float eager_loss = train_step(eager_model, eager_opt, batch[0], batch[1]).item<float>();
    const float graph_loss =
        trainer
            .run({step_fn.outputs()[0]}, {{step_fn.inputs()[0], batch[0]}, {step_fn.inputs()[1], batch[1]}},
                 step_fn.side_effects())[0]
            .item<float>();
    worst = std::max(worst, std::abs(static_cast<double>(graph_loss) - eager_loss) / std::abs(eager_loss));
    if (step % 20 == 0) std::cout << absl::StrFormat("step %3d: eager loss %.6f, session loss %.6f\n", step, eager_loss, graph_loss);
    ++step;
  }
  std::cout << absl::StrFormat("replayed %d steps; largest relative loss difference %.2e (%s 1e-5)\n", step, worst,
                               worst <= 1e-5 ? "within" : "NOT within");
  std::cout << "traces of train_step: " << traced_step.trace_count() << "\n";
  const bool ok = served_hits == eager_hits && count_equal(served_pred, eager_pred) == 10000 && worst <= 1e-5;
  std::cout << (ok ? "eager, traced and served agree\n" : "MISMATCH between eager and graph execution\n");
  return ok ? 0 : 1;
}
