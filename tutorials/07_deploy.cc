// Tutorial 07, part 1 of 2: deploy a model. Train the CNN of tutorial 04 for a few hundred
// steps, trace its inference (preprocessing included, so the deployed model takes raw uint8
// images) and save it as a bundle with save_model. Part 2, 07_serve.cc, is a separate program
// with no model code and no tracing: it loads the bundle and classifies the 10,000 test images,
// and must get exactly this program's eager predictions, which we write beside the bundle.
//
// Run: ./build/tutorials/07_deploy [--steps N] [--export DIR]    # default: 300, export/fashion_cnn
//      ./build/tutorials/07_serve [--export DIR]
//      ./build/tools/cli/tapeflow show export/fashion_cnn          # what the bundle holds
//
// Output of a run (2-core machine, 35 s of CPU):
//   == 1. train the CNN eagerly (300 steps of 64 images)
//   step 100: loss 0.5753
//   step 200: loss 0.4833
//   step 300: loss 0.4558
//   eager test accuracy: 0.8424
//
//   == 2. trace the inference and save the bundle
//   traced 36 nodes; input tapeflow.Tensor("args_0:0", shape=(None, 28, 28), dtype=uint8)
//   input  args_0: uint8 [?,28,28]
//   output output_0: float32 [?,10]
//   output output_1: int64 [?]
//   saved export/fashion_cnn: 8 variables, 3274634 float32 values
//   eager predictions -> export/fashion_cnn.eager_predictions.npy
//   now run: 07_serve --export export/fashion_cnn
//
// And `tapeflow show export/fashion_cnn` lists the signature, the graph's 42 nodes by op type
// (Conv2D 2, MaxPool 2, MatMul 2, Relu 3, ReadVariableOp 8, ...) and the 13,098,536 bytes of
// variables (dense/kernel float32 [3136,1024]: 12,845,056 bytes).
#include <cstring>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_format.h"
#include "tapeflow.h"

using namespace tapeflow;

namespace {

// Raw uint8 images [n, 28, 28] -> the network's float input [n, 28, 28, 1] in [0, 1]. It is
// part of the traced function, so the deployed model does it too.
Tensor preprocess(const Tensor& images) {
  return expand_dims(cast(images, DType::kFloat32) / 255.f, -1);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t steps = 300;
  std::string export_dir = "export/fashion_cnn";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--export") == 0) export_dir = argv[i + 1];
  }
  const std::string data_dir = default_fashion_mnist_dir();
  MnistSplit train = load_mnist(data_dir, "train");
  MnistSplit test = load_mnist(data_dir, "t10k");

  // 1. Train eagerly, as in tutorial 04 (same network, fewer steps).
  std::cout << "== 1. train the CNN eagerly (" << steps << " steps of 64 images)\n";
  set_seed(2024);
  nn::Sequential model({nn::Conv2D(32, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(),
                        nn::Conv2D(64, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(), nn::Flatten(),
                        nn::Dense(1024, nn::Activation::kRelu), nn::Dropout(0.4), nn::Dense(10)});
  nn::Adam optimizer(1e-3);
  Dataset ds = Dataset::from_tensor_slices({train.images, train.labels}).shuffle(60000, 7).batch(64);
  int64_t step = 0;
  model.set_training(true);
  for (const std::vector<Tensor>& batch : ds) {
    if (step == steps) break;
    GradientTape tape;
    Tensor loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(cast(batch[1], DType::kInt32),
                                                                         model(preprocess(batch[0]))));
    std::vector<Variable> vars = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    if (++step % 100 == 0) std::cout << absl::StrFormat("step %lld: loss %.4f\n", step, loss.item<float>());
  }
  model.set_training(false);  // dropout off from here on: evaluation, and the traced graph

  // The eager predictions on the 10,000 test images, in batches of 500.
  std::vector<Tensor> eager_batches;
  for (const std::vector<Tensor>& batch : Dataset::from_tensor_slices({test.images}).batch(500))
    eager_batches.push_back(argmax(model(preprocess(batch[0])), 1));
  const Tensor eager_pred = concat(eager_batches, 0);
  const double accuracy =
      reduce_mean(cast(equal(eager_pred, cast(test.labels, DType::kInt64)), DType::kFloat64)).item<double>();
  std::cout << absl::StrFormat("eager test accuracy: %.4f\n", accuracy);

  // 2. Trace the inference: raw images in, logits and classes out. Variables are captured.
  std::cout << "\n== 2. trace the inference and save the bundle\n";
  auto classify = function(
      [&](const Tensor& images) {
        Tensor logits = model(preprocess(images));
        return std::vector<Tensor>{logits, argmax(logits, 1)};
      },
      {.name = "classify"});
  ConcreteFunction& serve = classify.get_concrete_function({{DType::kUInt8, {-1, 28, 28}}});
  std::cout << "traced " << serve.graph().num_nodes() << " nodes; input " << serve.inputs()[0] << "\n";

  // 3. Save: graph.pb, variables.safetensors and saved_model.pb, written atomically.
  std::filesystem::create_directories(std::filesystem::path(export_dir).parent_path());
  save_model(export_dir, {{"serve", serve}}, {.overwrite = true});
  const LoadedModel check = load_model(export_dir);  // what the bundle says about itself
  const Signature& sig = check.signature("serve");
  for (const auto& [name, info] : sig.inputs())
    std::cout << "input  " << name << ": " << dtype_name(info.dtype) << " " << info.shape.to_string() << "\n";
  for (const auto& [name, info] : sig.outputs())
    std::cout << "output " << name << ": " << dtype_name(info.dtype) << " " << info.shape.to_string() << "\n";
  int64_t values = 0;
  for (const auto& [name, v] : check.variables()) values += v.shape().num_elements();
  std::cout << "saved " << export_dir << ": " << check.variables().size() << " variables, " << values
            << " float32 values\n";

  // The eager predictions, for 07_serve to compare against (NumPy's .npy format).
  const std::string expected = export_dir + ".eager_predictions.npy";
  write_npy(eager_pred, expected);
  std::cout << "eager predictions -> " << expected << "\nnow run: 07_serve --export " << export_dir << "\n";
  return 0;
}
