// TensorFlow's rules for what a tape differentiates: only watched tensors (and trainable
// variables read under it) are sources, and a tape belongs to its thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

TEST(TapeSemanticsTest, AnUnwatchedConstantSourceGetsNoGradient) {
  const Tensor x = {1.0, 2.0};  // never watched
  const Tensor w = {3.0, 4.0};
  GradientTape tape(/*persistent=*/true);
  tape.watch(w);
  Tensor y = reduce_sum(x * w);
  std::vector<Tensor> g = tape.gradient(y, {x, w});
  EXPECT_FALSE(g[0].defined());  // TensorFlow: None
  EXPECT_EQ(g[1].to_vector<double>(), (std::vector<double>{1.0, 2.0}));
  std::vector<Tensor> z = tape.gradient(y, {x, w}, Tensor(), Unconnected::kZero);
  EXPECT_EQ(z[0].to_vector<double>(), (std::vector<double>{0.0, 0.0}));
}

TEST(TapeSemanticsTest, ATapeAskedFromAnotherThreadSaysSo) {
  const Tensor x = {1.0};
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  std::string message;
  std::thread other([&] { message = error_of<FailedPreconditionError>([&] { tape.gradient(y, x); }); });
  other.join();
  EXPECT_THAT(message, HasSubstr("belongs to another thread"));
  EXPECT_THAT(message, HasSubstr("tape_semantics_test.cc:"));
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 2.0);  // still usable on its own thread
}

TEST(TapeSemanticsTest, ATargetReachedOnlyThroughNonDifferentiableOpsHasNoGradient) {
  const Tensor x = {1.5f, 2.5f};
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  const Tensor y = cast(cast(x, DType::kInt32), DType::kFloat32) * 2.f;  // a path with no gradient
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_FALSE(tape.gradient(y, x).defined());  // TensorFlow: None
  EXPECT_EQ(tape.gradient(y, x, Tensor(), Unconnected::kZero).to_vector<float>(), (std::vector<float>{0.f, 0.f}));
  EXPECT_THAT(error_of([&] { tape.gradient(y, x, Tensor(), Unconnected::kError); }),
              HasSubstr("only through ops that have no gradient"));
  // stop_gradient and a comparison are such paths too.
  EXPECT_FALSE(tape.gradient(reduce_sum(stop_gradient(x) * 3.f), x).defined());
  EXPECT_FALSE(tape.gradient(cast(greater(x, 2.f), DType::kFloat32), x).defined());
}

TEST(TapeSemanticsTest, AWatchedIntegerTensorLeadsToNoGradientNotAnError) {
  const Tensor ids = {1, 2};
  GradientTape tape;
  tape.watch(ids);  // integers have no gradient; the tape notes what they reach
  const Tensor y = cast(ids, DType::kFloat32) * 2.f;
  EXPECT_FALSE(tape.gradient(y, ids).defined());
}

TEST(TapeSemanticsTest, ATargetOfAnotherTapeNamesThatTape) {
  const Tensor x = {1.0};
  GradientTape first;
  first.watch(x);
  const int line = __LINE__; GradientTape second;
  const Tensor y = x * 3.0;  // recorded by first (which watches x); second watches nothing
  const std::string message = error_of([&] { second.gradient(y, x); });
  EXPECT_THAT(message, HasSubstr("was recorded by another tape"));
  EXPECT_THAT(message, HasSubstr("not by this one (created at tape_semantics_test.cc:" + std::to_string(line)));
  EXPECT_EQ(first.gradient(y, x).item<double>(), 3.0);
}

TEST(TapeSemanticsTest, ATargetComputedBeforeTheTapeStartedIsStillAnError) {
  const Tensor x = {1.0};
  const Tensor before = x * 2.0;
  GradientTape tape;
  tape.watch(x);
  EXPECT_THAT(error_of([&] { tape.gradient(before, x); }),
              HasSubstr("it was computed before the tape started, or from no tensor the tape watches"));
}

}  // namespace
}  // namespace tapeflow
