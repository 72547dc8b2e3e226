// The gradient of reduce_prod where inputs are zero (Note [Prod gradient] in
// tape/gradients/reduction.cc), against hand-computed products of the other elements.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;

TEST(ProdGradTest, ZerosInReducedRowsFloat64) {
  Tensor x = {{2.0, 0.0, 3.0}, {0.0, 0.0, 5.0}, {1.0, 2.0, 4.0}};
  GradientTape tape;
  tape.watch(x);
  Tensor y = reduce_prod(x, {1});  // [0, 0, 8]
  Tensor g = tape.gradient(y, x);
  // One zero: only the zero gets the product of the others. Two zeros: all zero.
  EXPECT_THAT(g.to_vector<double>(), ElementsAre(0, 6, 0, 0, 0, 0, 8, 4, 2));
  EXPECT_EQ(g.shape(), x.shape());
}

TEST(ProdGradTest, ZerosAlongAxisZeroFloat32WithOutputGradients) {
  Tensor x = {{0.f, 2.f}, {3.f, 0.f}, {4.f, 5.f}};
  GradientTape tape;
  tape.watch(x);
  // Column 0: the zero gets 3 * 4 * 10; column 1: the zero gets 2 * 5 * 100.
  Tensor y = reduce_prod(x, {0}, /*keepdims=*/true);  // [[0, 0]], shape [1, 2]
  Tensor g = tape.gradient(y, x, /*output_gradients=*/Tensor{{10.f, 100.f}});
  EXPECT_THAT(g.to_vector<float>(), ElementsAre(120.f, 0.f, 0.f, 1000.f, 0.f, 0.f));
  EXPECT_EQ(g.dtype(), DType::kFloat32);
}

TEST(ProdGradTest, AllAxesAndTransposedAxes) {
  {
    Tensor x = {2.0, 0.0, 3.0, 4.0};
    GradientTape tape;
    tape.watch(x);
    EXPECT_THAT(tape.gradient(reduce_prod(x), x).to_vector<double>(), ElementsAre(0, 24, 0, 0));
  }
  {
    // [2, 2, 2] reduced over axes {0, 2}: slice j holds x[:, j, :].
    Tensor x = Tensor(std::vector<double>{1, 2, 0, 3, 4, 5, 6, 7}, Shape{2, 2, 2});
    GradientTape tape;
    tape.watch(x);
    Tensor y = reduce_prod(x, {0, 2});  // slice 0: {1, 2, 4, 5} = 40; slice 1: {0, 3, 6, 7} = 0
    EXPECT_THAT(tape.gradient(y, x).to_vector<double>(), ElementsAre(40, 20, 126, 0, 10, 8, 0, 0));
  }
}

TEST(ProdGradTest, OneElementAndEmptySlices) {
  Tensor x = {{0.0}, {4.0}};
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  EXPECT_THAT(tape.gradient(reduce_prod(x, {1}), x).to_vector<double>(), ElementsAre(1, 1));
  Tensor empty = zeros({2, 0});
  tape.watch(empty);
  Tensor g = tape.gradient(reduce_prod(empty, {1}), empty);  // prod of nothing is 1
  EXPECT_EQ(g.shape(), Shape({2, 0}));
}

TEST(ProdGradTest, SecondDerivativeAtAZero) {
  // p = x0 x1 x2 at x = [2, 0, 3]: the Hessian is H_ij = product of the third element.
  Tensor x = {2.0, 0.0, 3.0};
  GradientTape outer;
  outer.watch(x);
  Tensor g;
  {
    GradientTape inner;
    inner.watch(x);
    g = inner.gradient(reduce_prod(x), x);  // [0, 6, 0]
  }
  EXPECT_THAT(g.to_vector<double>(), ElementsAre(0, 6, 0));
  EXPECT_THAT(outer.jacobian(g, x).to_vector<double>(), ElementsAre(0, 3, 0, 3, 0, 2, 0, 2, 0));
}

}  // namespace
}  // namespace tapeflow
