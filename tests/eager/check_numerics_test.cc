// enable_check_numerics: the first NaN or infinity an op makes is an error naming the op, its
// inputs and the user's line, in eager code, under a tape and in Session runs (fused or not).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tapeflow.h"
#include "tests/support/step_stats_util.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(CheckNumericsTest, OffByDefaultSoInfinitiesFlowThrough) {
  ASSERT_FALSE(check_numerics_enabled());
  const Tensor y = log(Tensor{1.f, 0.f});
  EXPECT_EQ(y.to_vector<float>()[1], -std::numeric_limits<float>::infinity());
}

TEST(CheckNumericsTest, TheFirstNonFiniteOutputNamesOpElementInputsAndLine) {
  CheckNumericsGuard checks;
  const Tensor x = {{1.f, 4.f}, {-1.f, 9.f}};
  EXPECT_THAT(error_of([&] { sqrt(x); }),
              AllOf(HasSubstr("[sqrt] check_numerics: output 0 has NaN at element [1,0] of a [2,2] float32 tensor"),
                    HasSubstr("inputs: [2,2] float32"), HasSubstr("check_numerics_test.cc:")));
  EXPECT_THAT(error_of([&] { div(x, Tensor{0.f, 1.f}); }),
              AllOf(HasSubstr("[div] check_numerics: output 0 has +Inf at element [0,0]"),
                    HasSubstr("inputs: [2,2] float32, [2] float32")));
  EXPECT_THAT(error_of([] { log(Tensor{2.0, 0.0}); }), HasSubstr("-Inf at element [1] of a [2] float64 tensor"));
  // The input is as it was, and finite results still come back.
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1.f, 4.f, -1.f, 9.f}));
  expect_close(sqrt(Tensor{4.f, 9.f}), Tensor{2.f, 3.f});
}

TEST(CheckNumericsTest, OnlyFloatingPointOutputsAreChecked) {
  CheckNumericsGuard checks;
  const Tensor nan = {std::nanf(""), 1.f};  // made by the constructor, not by an op
  // A NaN may go into an op whose output is bool or an integer: only outputs are checked.
  EXPECT_EQ(is_nan(nan).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(cast(nan, DType::kInt32).to_vector<int32_t>(), (std::vector<int32_t>{0, 1}));  // NaN saturates to 0
  const Tensor big = Tensor{std::numeric_limits<int32_t>::max()} + Tensor{1};  // wraps, documented
  EXPECT_EQ(big.to_vector<int32_t>()[0], std::numeric_limits<int32_t>::min());
  // The same NaN into an op with a float output is caught.
  EXPECT_THAT(error_of([&] { nan * 2.f; }), HasSubstr("[mul] check_numerics: output 0 has NaN at element [0]"));
}

TEST(CheckNumericsTest, TheGuardRestoresWhatWasThere) {
  {
    CheckNumericsGuard checks;
    EXPECT_TRUE(check_numerics_enabled());
    {
      CheckNumericsGuard nested;
      EXPECT_TRUE(check_numerics_enabled());
    }
    EXPECT_TRUE(check_numerics_enabled());
  }
  EXPECT_FALSE(check_numerics_enabled());
  enable_check_numerics();
  EXPECT_THROW(log(Tensor{0.f}), InvalidArgumentError);
  disable_check_numerics();
  EXPECT_NO_THROW(log(Tensor{0.f}));
}

TEST(CheckNumericsTest, AGradientOpThatMakesAnInfinityIsCaughtInTheBackwardPass) {
  const Tensor x = {0.f, 1.f};
  GradientTape tape;
  tape.watch(x);
  const Tensor y = reduce_sum(sqrt(x));  // finite forward; d sqrt(x)/dx = inf at 0
  CheckNumericsGuard checks;
  const std::string error = error_of([&] { tape.gradient(y, x); });
  EXPECT_THAT(error, AllOf(HasSubstr("check_numerics: output 0 has +Inf at element [0]")));
}

TEST(CheckNumericsTest, SessionRunsNameTheNodeAndItsLine) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    y = log(x);
  }
  Session sess(g);
  CheckNumericsGuard checks;
  expect_close(sess.run(y, {{x, Tensor{1.f, 1.f}}}), Tensor{0.f, 0.f});
  EXPECT_THAT(error_of([&] { sess.run(y, {{x, Tensor{1.f, 0.f}}}); }),
              AllOf(HasSubstr("[log] check_numerics: output 0 has -Inf at element [1] of a [2] float32 tensor"),
                    HasSubstr("'Log'"), HasSubstr("check_numerics_test.cc:")));
}

TEST(CheckNumericsTest, ChainsThatWouldRunFusedAreCheckedNodeByNode) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {256, 512}, "x");
    y = relu(log(x) * 2.f);  // large enough to run as one fused pass (elementwise_fusion_test)
  }
  Session sess(g);
  const Tensor zeros_in = zeros({256, 512});
  // Unchecked, the chain is one pass and relu hides log's -inf.
  EXPECT_EQ(traced_kernel_stats(sess, y, {{x, zeros_in}}).nodes.size(), 1u);
  EXPECT_EQ(sess.run(y, {{x, zeros_in}}).to_vector<float>()[0], 0.f);
  CheckNumericsGuard checks;
  EXPECT_EQ(traced_kernel_stats(sess, y, {{x, ones({256, 512})}}).nodes.size(), 3u);
  EXPECT_THAT(error_of([&] { sess.run(y, {{x, zeros_in}}); }),
              AllOf(HasSubstr("[log] check_numerics: output 0 has -Inf at element [0,0] of a [256,512] float32"),
                    HasSubstr("'Log'")));
}

}  // namespace
}  // namespace tapeflow
