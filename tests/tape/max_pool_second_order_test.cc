// Higher-order gradients through max_pool with nested tapes (MaxPoolGrad and MaxPoolGradGrad
// gradients, tape/gradients/pool.cc), against hand computations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;

// 1..16 in a [1, 4, 4, 1] image: 2x2 VALID windows at stride 2 have maxima 6, 8, 14, 16 at
// flat positions 5, 7, 13, 15.
Tensor ramp16() {
  std::vector<double> v(16);
  std::iota(v.begin(), v.end(), 1.0);
  return Tensor(v, Shape{1, 4, 4, 1});
}

// A [1, 4, 4, 1] image that is zero except at the four window maxima.
std::vector<double> at_maxima(double a, double b, double c, double d) {
  std::vector<double> v(16, 0.0);
  v[5] = a, v[7] = b, v[13] = c, v[15] = d;
  return v;
}

TEST(MaxPoolSecondOrderTest, SecondDerivativeOfCubedPool) {
  // L = sum(max_pool(x)^3): dL/dx = 3 y^2 at each maximum, d(sum(dL/dx))/dx = 6 y there.
  const Tensor x = ramp16();
  GradientTape outer;
  outer.watch(x);
  Tensor g;
  {
    GradientTape inner;
    inner.watch(x);
    const Tensor y = max_pool(x, {2, 2}, {2, 2}, "VALID");
    g = inner.gradient(reduce_sum(y * y * y), x);
  }
  EXPECT_EQ(g.to_vector<double>(), at_maxima(108, 192, 588, 768));
  const Tensor h = outer.gradient(reduce_sum(g), x);
  EXPECT_EQ(h.to_vector<double>(), at_maxima(36, 48, 84, 96));
}

TEST(MaxPoolSecondOrderTest, ThirdDerivativeUsesBothPrimitivesGradients) {
  // L = sum(max_pool(x)^4): 4 y^3, then 12 y^2, then 24 y at each maximum. The second step
  // differentiates MaxPoolGrad (giving MaxPoolGradGrad), the third differentiates that.
  const Tensor x = ramp16();
  GradientTape t3;
  t3.watch(x);
  Tensor g2;
  {
    GradientTape t2;
    t2.watch(x);
    Tensor g1;
    {
      GradientTape t1;
      t1.watch(x);
      const Tensor y = max_pool(x, {2, 2}, {2, 2}, "VALID");
      g1 = t1.gradient(reduce_sum(square(square(y))), x);
    }
    EXPECT_EQ(g1.to_vector<double>(), at_maxima(4 * 216, 4 * 512, 4 * 2744, 4 * 4096));
    g2 = t2.gradient(reduce_sum(g1), x);
  }
  EXPECT_EQ(g2.to_vector<double>(), at_maxima(12 * 36, 12 * 64, 12 * 196, 12 * 256));
  EXPECT_EQ(t3.gradient(reduce_sum(g2), x).to_vector<double>(), at_maxima(144, 192, 336, 384));
}

TEST(MaxPoolSecondOrderTest, MaxPoolGradIsLinearInGradAndFlatInItsOtherInputs) {
  // SAME 2x2 windows at stride 2 on 1..9 (3x3): maxima 5, 6, 8, 9 at positions 4, 5, 7, 8.
  const Tensor x = Tensor(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{1, 3, 3, 1});
  const Tensor y = max_pool(x, {2, 2}, {2, 2}, "SAME");
  const Tensor dy = Tensor(std::vector<double>{1, 2, 3, 4}, Shape{1, 2, 2, 1});
  GradientTape tape;
  tape.watch(x);
  tape.watch(y);
  tape.watch(dy);
  const Tensor dx = max_pool_grad(x, y, dy, {2, 2}, {2, 2}, "SAME");
  const Tensor w = Tensor(std::vector<double>{10, 20, 30, 40, 50, 60, 70, 80, 90}, Shape{1, 3, 3, 1});
  const std::vector<Tensor> grads = tape.gradient(dx, {x, y, dy}, /*output_gradients=*/w);
  EXPECT_THAT(grads[0].to_vector<double>(), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(grads[1].to_vector<double>(), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(grads[2].to_vector<double>(), ElementsAre(50, 60, 80, 90));  // w at the maxima
}

}  // namespace
}  // namespace tapeflow
