#include "eager/ops/activation.h"
#include "eager/ops/unary.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(UnaryTest, NumericOpsOnIntegersAndFloats) {
  EXPECT_THAT(neg(Tensor{1, -2, 3}).to_vector<int32_t>(), ElementsAre(-1, 2, -3));
  EXPECT_THAT(abs(Tensor{-1.5f, 2.f}).to_vector<float>(), ElementsAre(1.5f, 2.f));
  EXPECT_THAT(sign(Tensor{int64_t{-4}, int64_t{0}, int64_t{9}}).to_vector<int64_t>(), ElementsAre(-1, 0, 1));
  EXPECT_THAT(square(Tensor{-3.0, 0.5}).to_vector<double>(), ElementsAre(9.0, 0.25));
  EXPECT_THAT((-Tensor{2.f}).to_vector<float>(), ElementsAre(-2.f));
}

TEST(UnaryTest, FloatingMathMatchesLibm) {
  const std::vector<double> x = {0.25, 1.0, 2.5};
  Tensor t(x, Shape{3});
  expect_near_all(sqrt(t).to_vector<double>(), {0.5, 1.0, std::sqrt(2.5)});
  expect_near_all(rsqrt(t).to_vector<double>(), {2.0, 1.0, 1.0 / std::sqrt(2.5)});
  expect_near_all(exp(t).to_vector<double>(), {std::exp(0.25), std::exp(1.0), std::exp(2.5)});
  expect_near_all(log(t).to_vector<double>(), {std::log(0.25), 0.0, std::log(2.5)});
  expect_near_all(log1p(t).to_vector<double>(), {std::log1p(0.25), std::log(2.0), std::log1p(2.5)});
  expect_near_all(tanh(t).to_vector<double>(), {std::tanh(0.25), std::tanh(1.0), std::tanh(2.5)});
  expect_near_all(floor(Tensor{-1.5, 1.5}).to_vector<double>(), {-2.0, 1.0});
}

TEST(UnaryTest, SigmoidIsStableOnBothTails) {
  const auto y = sigmoid(Tensor{-1000.0, 0.0, 1000.0, 2.0}).to_vector<double>();
  EXPECT_EQ(y[0], 0.0);
  EXPECT_EQ(y[1], 0.5);
  EXPECT_EQ(y[2], 1.0);
  EXPECT_NEAR(y[3], 1.0 / (1.0 + std::exp(-2.0)), 1e-15);
}

TEST(UnaryTest, Activations) {
  Tensor x = {-2.f, -0.5f, 0.f, 3.f, 7.f};
  EXPECT_THAT(relu(x).to_vector<float>(), ElementsAre(0.f, 0.f, 0.f, 3.f, 7.f));
  EXPECT_THAT(relu6(x).to_vector<float>(), ElementsAre(0.f, 0.f, 0.f, 3.f, 6.f));
  const auto e = elu(x).to_vector<float>();
  EXPECT_NEAR(e[0], std::expm1(-2.f), 1e-6);
  EXPECT_NEAR(e[1], std::expm1(-0.5f), 1e-6);
  EXPECT_EQ(e[3], 3.f);
  const auto sp = softplus(Tensor{-100.0, 0.0, 1.0, 100.0}).to_vector<double>();
  EXPECT_NEAR(sp[0], std::log1p(std::exp(-100.0)), 1e-50);
  EXPECT_NEAR(sp[1], std::log(2.0), 1e-15);
  EXPECT_NEAR(sp[2], std::log1p(std::exp(1.0)), 1e-15);
  EXPECT_NEAR(sp[3], 100.0, 1e-12);  // naive log(1 + e^100) would still work; e^1000 would not
  EXPECT_NEAR(softplus(Tensor{1000.0}).item<double>(), 1000.0, 1e-9);
  EXPECT_EQ(relu(Tensor{-3, 4}).dtype(), DType::kInt32);
}

TEST(UnaryTest, LogicalNot) {
  EXPECT_THAT(logical_not(Tensor{true, false}).to_vector<bool>(), ElementsAre(false, true));
}

TEST(UnaryTest, WrongDTypeIsInvalidArgumentNamingOpAndInput) {
  try {
    exp(Tensor{1, 2});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[exp] input 'x' has dtype int32; expected one of float32, float64"));
    EXPECT_THAT(e.what(), HasSubstr("unary_test.cc:"));
  }
  EXPECT_THROW(logical_not(Tensor{1.f}), InvalidArgumentError);
  EXPECT_THROW(neg(Tensor{true}), InvalidArgumentError);
  EXPECT_THROW(sqrt(Tensor()), InvalidArgumentError);
}

TEST(UnaryTest, PreservesShapeAndDoesNotTouchInput) {
  Tensor x = {{1.0, 4.0}, {9.0, 16.0}};
  Tensor y = sqrt(x);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_THAT(x.to_vector<double>(), ElementsAre(1.0, 4.0, 9.0, 16.0));
  EXPECT_FALSE(y.shares_buffer_with(x));
}

TEST(UnaryTest, LargeInputsUseThePoolAndStayCorrect) {
  std::vector<float> v(1 << 20);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 97) - 48.f;
  const auto y = abs(Tensor(v, Shape{int64_t(v.size())})).to_vector<float>();
  for (size_t i = 0; i < v.size(); i += 4099) ASSERT_EQ(y[i], std::fabs(v[i]));
  EXPECT_EQ(y.back(), std::fabs(v.back()));
}

}  // namespace
}  // namespace tapeflow
