// Determinism: with one seed on one machine, the tutorial CNN's training losses repeat bit for
// bit (initializers, shuffling, dropout, the parallel kernels' partial sums). What may differ on
// another machine is in the README (Determinism).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tapeflow.h"

namespace tapeflow {
namespace {

// 200 steps of tutorial 04's network and optimizer on a fixed synthetic set (the data's source
// does not matter here; the runtime's order of work does). Returns every step's loss.
std::vector<float> train_cnn_losses(int steps) {
  set_seed(2024);
  const int64_t examples = 512, batch = 64;
  const Tensor images = random_uniform({examples, 28, 28, 1}, 0.f, 1.f, DType::kFloat32, 11);
  const Tensor labels = cast(random_uniform({examples}, 0.f, 10.f, DType::kFloat32, 12), DType::kInt32);
  nn::Sequential model({nn::Conv2D(32, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(),
                        nn::Conv2D(64, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(), nn::Flatten(),
                        nn::Dense(1024, nn::Activation::kRelu), nn::Dropout(0.4), nn::Dense(10)});
  nn::Adam optimizer(1e-3);
  Dataset ds = Dataset::from_tensor_slices({images, labels}).shuffle(examples, 7).batch(batch).repeat();
  std::vector<float> losses;
  for (const std::vector<Tensor>& b : ds) {
    if (static_cast<int>(losses.size()) == steps) break;
    GradientTape tape;
    const Tensor loss = reduce_mean(sparse_softmax_cross_entropy_with_logits(b[1], model(b[0])));
    std::vector<Variable> vars = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    losses.push_back(loss.item<float>());
  }
  return losses;
}

TEST(TrainingDeterminismTest, TwoRunsOf200CnnStepsGiveBitIdenticalLosses) {
  const std::vector<float> first = train_cnn_losses(200);
  const std::vector<float> second = train_cnn_losses(200);
  ASSERT_EQ(first.size(), 200u);
  ASSERT_EQ(second.size(), 200u);
  for (size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(std::memcmp(&first[i], &second[i], sizeof(float)), 0)
        << "step " << i << ": " << first[i] << " vs " << second[i];
  }
  EXPECT_LT(first.back(), first.front());  // it trained (random labels: it memorises)
}

}  // namespace
}  // namespace tapeflow
