// Tutorial 04: the convolutional network of TensorFlow's layers tutorial on Fashion-MNIST,
// trained eagerly with the tape: conv 5x5x32 + relu, max_pool 2x2, conv 5x5x64 + relu,
// max_pool 2x2, dense 1024 + relu, dropout 0.4, dense 10. Fashion-MNIST's benchmark table
// lists this network at 0.916 test accuracy.
//
// It shows a progress bar while it trains (loss, accuracy, examples per second, time left)
// and ends with the test accuracy and a confusion matrix of the ten classes.
//
// Run: ./build/tutorials/04_cnn                 # full training (the README's main job)
//      ./build/tutorials/04_cnn --quick         # one epoch, for the impatient (6 by default)
//      ./build/tutorials/04_cnn --max-steps 20  # a smoke run (what the test suite does)
//      ./build/tutorials/04_cnn --seed 7        # another initialisation, shuffle and dropout (2024 by default;
//                                               # bench/main_job_seeds.sh runs several)
#include <chrono>
#include <cstring>
#include <iostream>

#include "absl/strings/str_format.h"
#include "tapeflow.h"

using namespace tapeflow;

namespace {

std::vector<Tensor> preprocess(std::vector<Tensor> batch) {
  const int64_t n = batch[0].shape().dim(0);
  return {reshape(cast(batch[0], DType::kFloat32) / 255.f, {n, 28, 28, 1}), cast(batch[1], DType::kInt32)};
}

void progress(int epoch, int64_t step, int64_t steps, double loss, double acc, double examples_per_s,
              double seconds_left) {
  const int width = 30;
  const int done = static_cast<int>(width * step / std::max<int64_t>(steps, 1));
  std::cout << absl::StrFormat("\repoch %d [%s%s] %lld/%lld loss %.4f acc %.4f %.0f ex/s %4.0fs left", epoch,
                               std::string(done, '='), std::string(width - done, ' '), step, steps, loss, acc,
                               examples_per_s, seconds_left)
            << std::flush;
}

}  // namespace

int main(int argc, char** argv) {
  int epochs = 6;
  int64_t max_steps = -1;
  int64_t seed = 2024;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) epochs = 1;
    if (std::strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) epochs = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--max-steps") == 0 && i + 1 < argc) max_steps = std::atoll(argv[++i]);
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = std::atoll(argv[++i]);
  }
  set_seed(seed);
  const std::string dir = default_fashion_mnist_dir();
  MnistSplit train = load_mnist(dir, "train");
  MnistSplit test = load_mnist(dir, "t10k");

  nn::Sequential model({nn::Conv2D(32, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(),
                        nn::Conv2D(64, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(), nn::Flatten(),
                        nn::Dense(1024, nn::Activation::kRelu), nn::Dropout(0.4), nn::Dense(10)});
  const int64_t batch_size = 64;
  Dataset ds = Dataset::from_tensor_slices({train.images, train.labels})
                   .shuffle(60000, seed)
                   .batch(batch_size)
                   .map(preprocess);
  const int64_t steps_per_epoch = (60000 + batch_size - 1) / batch_size;
  const int64_t total_steps = max_steps > 0 ? std::min<int64_t>(max_steps, steps_per_epoch * epochs)
                                            : steps_per_epoch * epochs;
  // Adam at 1e-3, decayed along half a cosine to 0 by the last step: the constant rate leaves the
  // weights bouncing around a minimum (0.915-0.920 test accuracy across seeds); the decay settles
  // them in it at no extra cost per step.
  nn::Adam optimizer(nn::CosineDecay(1e-3, total_steps));

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int64_t step = 0;
  for (int epoch = 1; epoch <= epochs && step < total_steps; ++epoch) {
    double loss_sum = 0, acc_sum = 0;
    int64_t epoch_steps = 0;
    model.set_training(true);
    for (const std::vector<Tensor>& batch : ds) {
      if (step >= total_steps) break;
      GradientTape tape;
      Tensor logits = model(batch[0]);
      Tensor loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(batch[1], logits));
      std::vector<Variable> vars = model.trainable_variables();
      optimizer.apply_gradients(tape.gradient(loss, vars), vars);
      loss_sum += loss.item<float>();
      acc_sum += reduce_mean(cast(equal(argmax(logits, 1), cast(batch[1], DType::kInt64)), DType::kFloat64))
                     .item<double>();
      ++epoch_steps;
      ++step;
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (epoch_steps % 10 == 0 || step == total_steps)
        progress(epoch, epoch_steps, std::min(steps_per_epoch, total_steps), loss_sum / epoch_steps,
                 acc_sum / epoch_steps, step * batch_size / elapsed, elapsed / step * (total_steps - step));
    }
    std::cout << "\n";
  }

  // Evaluate on the 10,000 test images in batches (dropout off).
  model.set_training(false);
  std::vector<std::vector<int64_t>> confusion(10, std::vector<int64_t>(10, 0));
  int64_t correct = 0, seen = 0;
  for (const std::vector<Tensor>& batch :
       Dataset::from_tensor_slices({test.images, test.labels}).batch(500).map(preprocess)) {
    const std::vector<int64_t> predicted = argmax(model(batch[0]), 1).to_vector<int64_t>();
    const std::vector<int32_t> truth = batch[1].to_vector<int32_t>();
    for (size_t i = 0; i < truth.size(); ++i) {
      ++confusion[truth[i]][static_cast<size_t>(predicted[i])];
      correct += predicted[i] == truth[i];
      ++seen;
    }
  }
  std::cout << "confusion matrix (rows: true class, columns: predicted)\n";
  std::cout << absl::StrFormat("%12s", "");
  for (int c = 0; c < 10; ++c) std::cout << absl::StrFormat("%6d", c);
  std::cout << "\n";
  for (int r = 0; r < 10; ++r) {
    std::cout << absl::StrFormat("%d %-10.10s", r, kFashionMnistClassNames[r]);
    for (int c = 0; c < 10; ++c) std::cout << absl::StrFormat("%6lld", confusion[r][c]);
    std::cout << "\n";
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << absl::StrFormat("trained %lld steps in %.0f s\n", step, seconds);
  std::cout << absl::StrFormat("test accuracy: %.4f (%lld of %lld)\n", double(correct) / seen, correct, seen);
  return 0;
}
