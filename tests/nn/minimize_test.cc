// Optimizer::minimize: the tape, the gradients and apply_gradients in one call (Keras semantics).
// Expected values are one optimizer step computed by hand.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/matmul.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"
#include "nn/adam.h"
#include "nn/sgd.h"
#include "tests/support/test_util.h"
#include "tape/gradient_tape.h"

namespace tapeflow::nn {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

TEST(MinimizeTest, OneSgdStepReturnsTheLoss) {
  Variable w(Tensor{1.f, 2.f}, "w");
  const Tensor x = {3.f, -1.f};
  const Tensor y = {2.f, 1.f};
  SGD opt(0.1);
  int calls = 0;
  // r = w * x - y = [1, -3]; loss = sum(r^2) = 10; dloss/dw = 2 r x = [6, 6].
  const Tensor loss = opt.minimize([&] { ++calls; return reduce_sum(square(w * x - y)); }, {w});
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(loss.dtype(), DType::kFloat32);
  EXPECT_FLOAT_EQ(loss.item<float>(), 10.f);
  // w - 0.1 * [6, 6]
  EXPECT_THAT(w.read().to_vector<float>(), ElementsAre(FloatNear(0.4f, 1e-6f), FloatNear(1.4f, 1e-6f)));
  EXPECT_EQ(opt.iterations(), 1);
}

TEST(MinimizeTest, VariableReadTwiceAndTwoVariables) {
  Variable w(Tensor{{1.0, 2.0}}, "w");  // [1, 2]
  Variable b(Tensor(0.5), "b");
  const Tensor x = {{3.0}, {4.0}};  // [2, 1]
  SGD opt(0.01);
  // loss = (w x + b)^2 + sum(w^2) with w x = 11: (11.5)^2 + 5 = 137.25.
  // dloss/dw = 2 * 11.5 * x^T + 2 w = [69 + 2, 92 + 4] = [71, 96]; dloss/db = 23.
  const Tensor loss = opt.minimize(
      [&] { return reduce_sum(square(matmul(w, x) + b)) + reduce_sum(w * w); }, {w, b});
  EXPECT_DOUBLE_EQ(loss.item<double>(), 137.25);
  EXPECT_THAT(w.read().to_vector<double>(), ElementsAre(DoubleNear(1 - 0.71, 1e-12), DoubleNear(2 - 0.96, 1e-12)));
  EXPECT_NEAR(b.read().item<double>(), 0.5 - 0.23, 1e-12);
}

TEST(MinimizeTest, VariableWithoutGradientIsSkipped) {
  Variable w(Tensor(3.0), "w");
  Variable unused(Tensor(7.0), "unused");
  SGD opt(0.1, /*momentum=*/0.9);
  // loss = w^2: dloss/dw = 6; velocity = -0.6; w = 2.4.
  opt.minimize([&] { return square(w.read()); }, {w, unused});
  EXPECT_NEAR(w.read().item<double>(), 2.4, 1e-12);
  EXPECT_EQ(unused.read().item<double>(), 7.0);
  EXPECT_TRUE(opt.get_slot(w, "momentum").has_value());
  EXPECT_FALSE(opt.get_slot(unused, "momentum").has_value());  // skipped entirely
  EXPECT_EQ(opt.iterations(), 1);
}

TEST(MinimizeTest, NonTrainableVariableInVarListIsUpdated) {
  // var_list is watched explicitly, as Keras's minimize does.
  Variable w(Tensor(2.0), "w", /*trainable=*/false);
  SGD opt(0.25);
  opt.minimize([&] { return w * w; }, {w});  // gradient 4
  EXPECT_DOUBLE_EQ(w.read().item<double>(), 1.0);
}

TEST(MinimizeTest, VariablesOutsideVarListAreNotUpdated) {
  Variable w(Tensor(1.0), "w");
  Variable other(Tensor(5.0), "other");
  SGD opt(0.1);
  opt.minimize([&] { return w * other; }, {w});  // dloss/dw = other = 5
  EXPECT_DOUBLE_EQ(w.read().item<double>(), 0.5);
  EXPECT_DOUBLE_EQ(other.read().item<double>(), 5.0);
}

TEST(MinimizeTest, AdamFirstStep) {
  // Step 1: m = 0.1 g, v = 0.001 g^2, lr_t = lr * sqrt(0.001) / 0.1, so
  // w -= lr * g / (|g| + eps / sqrt(0.001)) ~= lr * sign(g).
  Variable w(Tensor{1.0, -1.0}, "w");
  Adam opt(0.01);
  opt.minimize([&] { return reduce_sum(w * Tensor{2.0, 3.0}); }, {w});
  const double eps_hat = 1e-7 / std::sqrt(0.001);
  EXPECT_THAT(w.read().to_vector<double>(), ElementsAre(DoubleNear(1 - 0.01 * 2 / (2 + eps_hat), 1e-12),
                                                        DoubleNear(-1 - 0.01 * 3 / (3 + eps_hat), 1e-12)));
}

TEST(MinimizeTest, NoGradientAtAllIsTheApplyGradientsError) {
  Variable w(Tensor(1.0), "w");
  Variable other(Tensor(2.0), "other");
  SGD opt(0.1);
  // A loss that does not depend on var_list at all: a constant, and another variable.
  for (auto loss : std::vector<std::function<Tensor()>>{[] { return Tensor(3.0); },
                                                         [&] { return other * 2.0; }}) {
    const std::string msg = error_of([&] { opt.minimize(loss, {w}); });
    EXPECT_THAT(msg, HasSubstr("[apply_gradients] No gradients provided for any variable: [w]"));
  }
  EXPECT_THAT(error_of([&] { opt.minimize([&] { return w * 2.0; }, {}); }),
              HasSubstr("No gradients provided for any variable: []"));
  EXPECT_DOUBLE_EQ(w.read().item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(other.read().item<double>(), 2.0);
  EXPECT_EQ(opt.iterations(), 0);
}

TEST(MinimizeTest, BadLossIsAnError) {
  Variable w(Tensor(1.0), "w");
  SGD opt(0.1);
  EXPECT_THAT(error_of([&] { opt.minimize([] { return Tensor(); }, {w}); }),
              HasSubstr("[minimize] loss() returned an empty tensor"));
  EXPECT_THAT(error_of([&] { opt.minimize([] { return Tensor(int32_t{3}); }, {w}); }),
              HasSubstr("[minimize] loss() returned dtype int32; the loss must be floating point"));
  EXPECT_DOUBLE_EQ(w.read().item<double>(), 1.0);
  EXPECT_EQ(opt.iterations(), 0);
}

TEST(MinimizeTest, ErrorsInsideLossPropagate) {
  Variable w(Tensor{1.0, 2.0}, "w");
  SGD opt(0.1);
  EXPECT_THAT(error_of([&] { opt.minimize([&] { return reduce_sum(w.read(), {3}); }, {w}); }),
              HasSubstr("[reduce_sum]"));
  EXPECT_EQ(opt.iterations(), 0);
}

TEST(MinimizeTest, OuterTapeStillRecords) {
  // minimize's own tape is nested inside the caller's: the caller's tape sees the loss ops.
  Tensor scale = 3.0;
  Variable w(Tensor(2.0), "w");
  SGD opt(0.1);
  GradientTape outer;
  outer.watch(scale);
  const Tensor loss = opt.minimize([&] { return w * scale; }, {w});  // dloss/dw = 3: w = 1.7
  EXPECT_NEAR(w.read().item<double>(), 1.7, 1e-12);
  EXPECT_DOUBLE_EQ(outer.gradient(loss, scale).item<double>(), 2.0);  // w's value when read
}

}  // namespace
}  // namespace tapeflow::nn
