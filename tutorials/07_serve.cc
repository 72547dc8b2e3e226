// Tutorial 07, part 2 of 2: serve a deployed model. This program has no model code and no
// tracing: it loads the bundle 07_deploy saved, feeds raw test images to its "serve"
// signature and checks that every prediction is the one the eager model made.
//
// Run (after ./build/tutorials/07_deploy):
//      ./build/tutorials/07_serve [--export DIR]          # default: export/fashion_cnn
//
// Output of a run (2-core machine):
//   loaded export/fashion_cnn (written by tapeflow 0.1.0)
//     input  args_0: uint8 [?,28,28]
//     output output_0: float32 [?,10]
//     output output_1: int64 [?]
//   classified 10000 images in 9.02 s: test accuracy 0.8424
//     image 0: Ankle boot  (true: Ankle boot)
//     image 1: Pullover    (true: Pullover)
//     image 2: Trouser     (true: Trouser)
//     image 3: Trouser     (true: Trouser)
//     image 4: Shirt       (true: Shirt)
//   same predictions as the eager model: 10000 of 10000
//   the deployed model agrees with the eager one
//
// The same from the shell, with NumPy arrays: tapeflow run export/fashion_cnn
//   --input args_0=images.npy --output output_1=classes.npy
#include <chrono>
#include <cstring>
#include <iostream>

#include "absl/strings/str_format.h"
#include "tapeflow.h"

using namespace tapeflow;

int serve_main(int argc, char** argv) {
  std::string export_dir = "export/fashion_cnn";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--export") == 0) export_dir = argv[i + 1];

  // 1. Load: the graph, the variables' values in a Session, the signatures.
  const LoadedModel model = load_model(export_dir);
  const Signature& serve = model.signature("serve");
  std::cout << "loaded " << export_dir << " (written by tapeflow " << model.tapeflow_version() << ")\n";
  for (const auto& [name, info] : serve.inputs())
    std::cout << "  input  " << name << ": " << dtype_name(info.dtype) << " " << info.shape.to_string() << "\n";
  for (const auto& [name, info] : serve.outputs())
    std::cout << "  output " << name << ": " << dtype_name(info.dtype) << " " << info.shape.to_string() << "\n";

  // 2. Classify the 10,000 test images, raw uint8 as they come from the files, 500 at a time.
  MnistSplit test = load_mnist(default_fashion_mnist_dir(), "t10k");
  const std::string input = serve.inputs().begin()->first;  // the one input, "args_0"
  std::vector<int64_t> predicted;
  const auto start = std::chrono::steady_clock::now();
  for (const std::vector<Tensor>& batch : Dataset::from_tensor_slices({test.images}).batch(500)) {
    const std::map<std::string, Tensor> out = serve.run({{input, batch[0]}});
    for (int64_t c : out.at("output_1").to_vector<int64_t>()) predicted.push_back(c);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<uint8_t> labels = test.labels.to_vector<uint8_t>();
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) correct += predicted[i] == labels[i];
  std::cout << absl::StrFormat("classified %d images in %.2f s: test accuracy %.4f\n", predicted.size(), seconds,
                               double(correct) / labels.size());
  for (int i = 0; i < 5; ++i)
    std::cout << absl::StrFormat("  image %d: %-11s (true: %s)\n", i, kFashionMnistClassNames[predicted[i]],
                                 kFashionMnistClassNames[labels[i]]);

  // 3. The eager model's predictions, written by 07_deploy: the deployed model must agree on all.
  const std::vector<int64_t> eager = read_npy(export_dir + ".eager_predictions.npy").to_vector<int64_t>();
  int64_t same = 0;
  for (size_t i = 0; i < eager.size() && i < predicted.size(); ++i) same += eager[i] == predicted[i];
  const bool ok = eager.size() == predicted.size() && same == static_cast<int64_t>(eager.size());
  std::cout << absl::StrFormat("same predictions as the eager model: %d of %d\n", same, eager.size());
  std::cout << (ok ? "the deployed model agrees with the eager one\n" : "MISMATCH with the eager model\n");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return serve_main(argc, argv);
  } catch (const Error& e) {  // a missing or damaged bundle: say which file, don't abort
    std::cerr << "07_serve: " << e.message() << "\n";
    return 1;
  }
}
