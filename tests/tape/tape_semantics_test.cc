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

}  // namespace
}  // namespace tapeflow
