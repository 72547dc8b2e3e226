// max_pool_grad_grad (MaxPoolGradGrad): hand-computed gathers, the adjoint identity with
// max_pool_grad (ties included), shapes and dtypes, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "eager/op_def.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/pool.h"
#include "eager/ops/random.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor image(std::vector<double> values, std::vector<int64_t> dims) { return Tensor(values, Shape(dims)); }

TEST(MaxPoolGradGradTest, GathersAtTheMaximum) {
  // SAME 2x2 windows at stride 2 on 3x3: maxima 5, 6, 8, 9 (clipped windows at the edges).
  const Tensor x = image({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  const Tensor y = max_pool(x, {2, 2}, {2, 2}, "SAME");
  const Tensor g = image({10, 20, 30, 40, 50, 60, 70, 80, 90}, {1, 3, 3, 1});
  const Tensor out = max_pool_grad_grad(x, y, g, {2, 2}, {2, 2}, "SAME");
  EXPECT_EQ(out.shape(), Shape({1, 2, 2, 1}));
  EXPECT_THAT(out.to_vector<double>(), ElementsAre(50, 60, 80, 90));
}

TEST(MaxPoolGradGradTest, TiesOverlapsAndChannels) {
  const Tensor g4 = image({1, 2, 3, 4}, {1, 2, 2, 1});
  // Ties go to the first maximum in row-major window order, as max_pool_grad routes them.
  EXPECT_THAT(max_pool_grad_grad(zeros({1, 2, 2, 1}, DType::kFloat64), zeros({1, 1, 1, 1}, DType::kFloat64), g4,
                                 {2, 2}, {2, 2}, "VALID")
                  .to_vector<double>(),
              ElementsAre(1));
  EXPECT_THAT(max_pool_grad_grad(image({1, 3, 3, 2}, {1, 2, 2, 1}), zeros({1, 1, 1, 1}, DType::kFloat64), g4,
                                 {2, 2}, {2, 2}, "VALID")
                  .to_vector<double>(),
              ElementsAre(2));
  // Overlapping windows that share a maximum both read it.
  const Tensor row = image({1, 3, 2}, {1, 1, 3, 1});
  EXPECT_THAT(max_pool_grad_grad(row, max_pool(row, {1, 2}, {1, 1}, "VALID"), image({7, 8, 9}, {1, 1, 3, 1}),
                                 {1, 2}, {1, 1}, "VALID")
                  .to_vector<double>(),
              ElementsAre(8, 8));
  // Channels choose independently: channel 0's maximum is pixel 3, channel 1's is pixel 0.
  const Tensor xc = Tensor(std::vector<float>{1, 40, 2, 20, 3, 30, 4, 10}, Shape{1, 2, 2, 2});
  const Tensor gc = Tensor(std::vector<float>{100, 101, 102, 103, 104, 105, 106, 107}, Shape{1, 2, 2, 2});
  const Tensor out = max_pool_grad_grad(xc, max_pool(xc, {2, 2}, {1, 1}, "VALID"), gc, {2, 2}, {1, 1}, "VALID");
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_THAT(out.to_vector<float>(), ElementsAre(106.f, 101.f));
}

// sum(max_pool_grad(x, y, g) * h) == sum(g * max_pool_grad_grad(x, y, h)) for any x, even with
// many ties (x takes 3 values), with overlapping and clipped windows and > 32 channels.
TEST(MaxPoolGradGradTest, AdjointOfMaxPoolGrad) {
  struct Config {
    std::vector<int64_t> shape, ksize, strides;
    const char* padding;
  };
  const Config configs[] = {{{2, 5, 5, 3}, {2, 2}, {2, 2}, "SAME"},
                            {{1, 7, 6, 2}, {3, 3}, {1, 1}, "SAME"},
                            {{1, 7, 6, 2}, {3, 3}, {2, 1}, "VALID"},
                            {{2, 3, 3, 40}, {3, 3}, {1, 1}, "SAME"}};
  int64_t seed = 1;
  for (const Config& c : configs) {
    SCOPED_TRACE(Shape(c.shape).to_string());
    const Tensor x = floor(random_uniform(Shape(c.shape), 0, 3, DType::kFloat64, seed++));
    const Tensor y = max_pool(x, c.ksize, c.strides, c.padding);
    const Tensor g = random_uniform(y.shape(), -1, 1, DType::kFloat64, seed++);
    const Tensor h = random_uniform(x.shape(), -1, 1, DType::kFloat64, seed++);
    const double lhs = reduce_sum(max_pool_grad(x, y, g, c.ksize, c.strides, c.padding) * h).item<double>();
    const Tensor gathered = max_pool_grad_grad(x, y, h, c.ksize, c.strides, c.padding);
    ASSERT_EQ(gathered.shape(), y.shape());
    EXPECT_NEAR(lhs, reduce_sum(g * gathered).item<double>(), 1e-12);
  }
}

TEST(MaxPoolGradGradTest, ShapesAndUnknownDims) {
  EXPECT_EQ(max_pool_grad_grad(zeros({0, 4, 4, 1}), zeros({0, 2, 2, 1}), zeros({0, 4, 4, 1}), {2, 2}, {2, 2}, "SAME")
                .shape(),
            Shape({0, 2, 2, 1}));
  const OpDef* op = OpRegistry::global().find("MaxPoolGradGrad");
  ASSERT_NE(op, nullptr);
  EXPECT_TRUE(op->differentiable);
  const TensorSpec specs[3] = {{DType::kFloat32, Shape{-1, 28, -1, 32}},
                               {DType::kFloat32, Shape{-1, 14, -1, 32}},
                               {DType::kFloat32, Shape{-1, 28, -1, 32}}};
  const AttrMap attrs{{"ksize", std::vector<int64_t>{2, 2}},
                      {"strides", std::vector<int64_t>{2, 2}},
                      {"padding", std::string("VALID")}};
  auto out = op->infer(InferenceContext{"max_pool_grad_grad", specs, attrs});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape, (Shape{-1, 14, -1, 32}));
  EXPECT_EQ((*out)[0].dtype, DType::kFloat32);
}

TEST(MaxPoolGradGradTest, Errors) {
  const Tensor x = zeros({1, 4, 4, 2});
  const Tensor y = zeros({1, 2, 2, 2});
  EXPECT_THAT(error_of([&] { max_pool_grad_grad(x, y, y, {2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("[max_pool_grad_grad] 'grad' has shape [1,2,2,2] but must have the shape of 'orig_input' "
                        "[1,4,4,2]"));
  EXPECT_THAT(error_of([&] { max_pool_grad_grad(x, x, x, {2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("[max_pool_grad_grad] 'orig_output' has shape [1,4,4,2]"));
  EXPECT_THAT(error_of([&] { max_pool_grad_grad(x, y, zeros({1, 4, 4, 2}, DType::kFloat64), {2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("[max_pool_grad_grad] 'orig_input' and 'grad' must have the same dtype"));
  EXPECT_THAT(error_of([] {
                max_pool_grad_grad(zeros({1, 4, 4, 2}, DType::kInt32), zeros({1, 2, 2, 2}, DType::kInt32),
                                   zeros({1, 4, 4, 2}, DType::kInt32), {2, 2}, {2, 2}, "SAME");
              }),
              HasSubstr("[max_pool_grad_grad] input 'orig_input' has dtype int32"));
  EXPECT_THAT(error_of([&] { max_pool_grad_grad(x, y, x, {2, 2}, {2, 2}, "FULL"); }),
              HasSubstr("[max_pool_grad_grad] padding must be \"SAME\" or \"VALID\""));
}

}  // namespace
}  // namespace tapeflow
