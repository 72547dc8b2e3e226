// GradientTape semantics, one behaviour per test.
#include "tape/gradient_tape.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TapeTest, WatchedTensorGradient) {
  Tensor x = {1.0, 2.0, 3.0};
  GradientTape tape;
  tape.watch(x);
  Tensor y = reduce_sum(x * x * x);  // dy/dx = 3x^2
  EXPECT_THAT(tape.gradient(y, x).to_vector<double>(), ElementsAre(3.0, 12.0, 27.0));
}

TEST(TapeTest, TrainableVariablesAreWatchedWhenRead) {
  Variable w(Tensor{{2.f}, {3.f}}, "w");
  Variable frozen(Tensor{1.f}, "frozen", /*trainable=*/false);
  Tensor x = {{1.f, 4.f}};
  GradientTape tape;
  Tensor y = reduce_sum(matmul(x, w) * frozen);
  auto g = tape.gradient(y, {w, frozen});
  EXPECT_THAT(g[0].to_vector<float>(), ElementsAre(1.f, 4.f));
  EXPECT_FALSE(g[1].defined());  // not trainable, not watched: no gradient
}

// The header's example: a braced list of one source is a list (one gradient per source), not
// ambiguous with the single-source overload.
TEST(TapeTest, BracedListOfOneSourceGivesAVector) {
  Variable w(Tensor{{2.f}, {3.f}}, "w");
  Tensor x = {{1.f, 4.f}};
  GradientTape tape(/*persistent=*/true);
  Tensor loss = reduce_sum(matmul(x, w));
  std::vector<Tensor> grads = tape.gradient(loss, {w});
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_THAT(grads[0].to_vector<float>(), ElementsAre(1.f, 4.f));
  Tensor t = {1.f, 2.f};
  tape.watch(t);
  Tensor y = reduce_sum(t * t);
  std::vector<Tensor> gt = tape.gradient(y, {t});
  ASSERT_EQ(gt.size(), 1u);
  EXPECT_THAT(gt[0].to_vector<float>(), ElementsAre(2.f, 4.f));
  Tensor single = tape.gradient(loss, w);  // a Source alone still gives one Tensor
  EXPECT_THAT(single.to_vector<float>(), ElementsAre(1.f, 4.f));
}

TEST(TapeTest, ManySourcesAndOutputGradients) {
  Tensor a = {1.0, 2.0};
  Tensor b = {3.0, 4.0};
  GradientTape tape;
  tape.watch(a);
  tape.watch(b);
  Tensor y = a * b;
  auto g = tape.gradient(y, {a, b}, /*output_gradients=*/Tensor{10.0, 100.0});
  EXPECT_THAT(g[0].to_vector<double>(), ElementsAre(30.0, 400.0));
  EXPECT_THAT(g[1].to_vector<double>(), ElementsAre(10.0, 200.0));
}

TEST(TapeTest, UnconnectedSourcesGiveNoneZerosOrAnError) {
  Tensor x = {1.0};
  Tensor z = {5.0, 6.0};
  {
    GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    tape.watch(z);
    Tensor y = x * 2;
    EXPECT_FALSE(tape.gradient(y, z).defined());
    EXPECT_THAT(tape.gradient(y, z, Tensor(), Unconnected::kZero).to_vector<double>(), ElementsAre(0.0, 0.0));
    try {
      tape.gradient(y, z, Tensor(), Unconnected::kError);
      FAIL();
    } catch (const InvalidArgumentError& e) {
      EXPECT_THAT(e.what(), HasSubstr("it was watched, but the target does not depend on it"));
    }
  }
  {
    GradientTape tape;
    tape.watch(x);
    Tensor y = x * 2;
    Tensor never = {1.0};
    try {
      tape.gradient(y, never, Tensor(), Unconnected::kError);
      FAIL();
    } catch (const InvalidArgumentError& e) {
      EXPECT_THAT(e.what(), HasSubstr("was never watched by this tape"));
    }
  }
}

TEST(TapeTest, IntegerPathsCarryNoGradient) {
  Tensor x = {1.5, 2.5};
  GradientTape tape;
  tape.watch(x);
  Tensor i = cast(x, DType::kInt32);
  Tensor back = cast(i, DType::kFloat64);
  Tensor y = reduce_sum(back + x);
  EXPECT_THAT(tape.gradient(y, x).to_vector<double>(), ElementsAre(1.0, 1.0));  // only the direct path
}

TEST(TapeTest, NonPersistentTapeAnswersOnce) {
  Tensor x = {2.0};
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 4.0);
  EXPECT_EQ(tape.stats().recorded_ops, 0);  // records were freed
  try {
    tape.gradient(y, x);
    FAIL();
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("non-persistent GradientTape can only compute one set of gradients"));
    EXPECT_THAT(e.what(), HasSubstr("tape_test.cc:"));
  }
}

TEST(TapeTest, PersistentTapeAnswersManyTimes) {
  Tensor x = {3.0};
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = x * x;
  Tensor z = y * x;
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 6.0);
  EXPECT_EQ(tape.gradient(z, x).item<double>(), 27.0);
  EXPECT_EQ(tape.gradient(z, y).item<double>(), 3.0);
}

TEST(TapeTest, NestedTapesGiveSecondDerivatives) {
  Tensor x = {0.5, -1.0};
  GradientTape outer;
  outer.watch(x);
  Tensor dy;
  {
    GradientTape inner;
    inner.watch(x);
    Tensor y = tanh(x);
    dy = inner.gradient(y, x);  // 1 - tanh^2
  }
  Tensor d2 = outer.gradient(dy, x);  // -2 tanh (1 - tanh^2)
  const auto v = d2.to_vector<double>();
  for (int i = 0; i < 2; ++i) {
    const double t = std::tanh(i == 0 ? 0.5 : -1.0);
    EXPECT_NEAR(v[i], -2 * t * (1 - t * t), 1e-12);
  }
}

TEST(TapeTest, ThirdDerivativeOfCube) {
  Tensor x = {2.0};
  GradientTape t3, t2, t1;
  t1.watch(x);
  t2.watch(x);
  t3.watch(x);
  Tensor y = x * x * x;
  Tensor d1 = t1.gradient(y, x);   // 3x^2 = 12
  Tensor d2 = t2.gradient(d1, x);  // 6x = 12
  Tensor d3 = t3.gradient(d2, x);  // 6
  EXPECT_EQ(d1.item<double>(), 12.0);
  EXPECT_EQ(d2.item<double>(), 12.0);
  EXPECT_EQ(d3.item<double>(), 6.0);
}

TEST(TapeTest, StopGradientAndStopRecording) {
  Tensor x = {3.0};
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = x * stop_gradient(x);  // d/dx = stop(x) = 3
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 3.0);
  Tensor unrecorded;
  {
    auto pause = tape.stop_recording();
    unrecorded = x * x;
  }
  Tensor z = x * 2 + unrecorded;
  EXPECT_EQ(tape.gradient(z, x).item<double>(), 2.0);
}

TEST(TapeTest, JacobianOfElementwiseAndMatmul) {
  Tensor x = {1.0, 2.0};
  GradientTape tape;
  tape.watch(x);
  Tensor m = {{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}};
  Tensor y = matmul(m, reshape(x, {2, 1}));  // [3,1]
  Tensor j = tape.jacobian(y, x);
  EXPECT_EQ(j.shape(), (Shape{3, 1, 2}));
  EXPECT_THAT(j.to_vector<double>(), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(TapeTest, TargetNeverRecordedSaysSoWithBothLines) {
  Tensor x = {1.0};
  const int made_line = __LINE__; Tensor before = x * 2;  // computed before the tape exists
  GradientTape tape;
  tape.watch(x);
  int ask_line = 0;
  try {
    ask_line = __LINE__; tape.gradient(before, x);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("was not recorded by this tape"));
    EXPECT_THAT(msg, HasSubstr("made at tape_test.cc:" + std::to_string(made_line)));
    EXPECT_THAT(msg, HasSubstr("(at tape_test.cc:" + std::to_string(ask_line) + ")"));
  }
}

TEST(TapeTest, StatsCountRecordsAndSavedBytes) {
  Tensor x = zeros({256}, DType::kFloat32);
  GradientTape tape;
  tape.watch(x);
  Tensor y = exp(x);
  Tensor z = y * 2;
  const TapeStats s = tape.stats();
  EXPECT_EQ(s.recorded_ops, 2);
  EXPECT_GE(s.saved_tensors, 4);          // x, y, the scalar 2, z
  EXPECT_GE(s.saved_bytes, 3 * 256 * 4);  // three 1 KiB buffers at least
}

TEST(TapeTest, NoActiveTapeRecordsNothing) {
  EXPECT_FALSE(has_op_observers());
  Tensor x = {1.0};
  Tensor y = x * 2;
  EXPECT_FALSE(has_op_observers());
}

TEST(TapeTest, VariableUsedTwiceSumsGradients) {
  Variable v(Tensor{2.0}, "v");
  GradientTape tape;
  Tensor y = v * v + v;  // 2v + 1 = 5
  EXPECT_EQ(tape.gradient(y, v).item<double>(), 5.0);
}

TEST(TapeTest, VariableUpdatesAreNotRecorded) {
  Variable v(Tensor{2.0}, "v");
  GradientTape tape;
  v.assign_add(1.0);
  EXPECT_EQ(tape.stats().recorded_ops, 0);
}

TEST(TapeTest, TrainingATinyModelConverges) {
  // y = 2x - 1 with a Dense-like layer written by hand; plain SGD on the tape's gradients.
  set_seed(7);
  Tensor x = reshape(linspace(-1.0, 1.0, 32), {32, 1});
  Tensor y = x * 2 - 1;
  Variable w(Tensor{{0.f}}, "w");
  Variable b(Tensor{0.f}, "b");
  float loss_value = 0;
  for (int step = 0; step < 200; ++step) {
    GradientTape tape;
    Tensor loss = reduce_mean(square(matmul(x, w) + b - y));
    loss_value = loss.item<float>();
    auto g = tape.gradient(loss, {w, b});
    w.assign_sub(0.2f * g[0]);
    b.assign_sub(0.2f * g[1]);
  }
  EXPECT_LT(loss_value, 1e-6);
  EXPECT_NEAR(w.read().item<float>(), 2.f, 1e-3);
  EXPECT_NEAR(b.read().item<float>(), -1.f, 1e-3);
}

}  // namespace
}  // namespace tapeflow
