// FusedBatchNormV3, BiasAdd / BiasAddGrad with data_format, and LRN: values against
// hand-computed references, shapes, dtypes, error messages, and each op traced and run in a
// Session with unknown dims. Gradients: tests/tape/gradient_check_test.cc.
#include "eager/ops/normalization.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/nn.h"
#include "eager/ops/random.h"
#include "tests/support/contexts.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor rnd(std::vector<int64_t> shape, int64_t seed, double lo = -1, double hi = 1) {
  return random_uniform(Shape(shape), lo, hi, DType::kFloat64, seed);
}

// Per-channel statistics of an NHWC tensor, by the definition.
struct Stats {
  std::vector<double> mean, var;  // var biased
};
Stats stats(const Tensor& x) {
  const int64_t c = x.shape().dim(3);
  const std::vector<double> v = x.to_vector<double>();
  const int64_t n = static_cast<int64_t>(v.size()) / c;
  Stats s{std::vector<double>(c, 0.0), std::vector<double>(c, 0.0)};
  for (size_t i = 0; i < v.size(); ++i) s.mean[i % c] += v[i] / n;
  for (size_t i = 0; i < v.size(); ++i) s.var[i % c] += (v[i] - s.mean[i % c]) * (v[i] - s.mean[i % c]) / n;
  return s;
}

// (x - mean) / sqrt(var + eps) * scale + offset, NHWC.
std::vector<double> normalize(const Tensor& x, const std::vector<double>& mean, const std::vector<double>& var,
                              const std::vector<double>& scale, const std::vector<double>& offset, double eps) {
  const int64_t c = x.shape().dim(3);
  std::vector<double> y = x.to_vector<double>();
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = (y[i] - mean[i % c]) / std::sqrt(var[i % c] + eps) * scale[i % c] + offset[i % c];
  return y;
}

void expect_near(const Tensor& t, const std::vector<double>& expected, double tol = 1e-12) {
  const std::vector<double> v = t.to_vector<double>();
  ASSERT_EQ(v.size(), expected.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], expected[i], tol) << "element " << i;
}

TEST(FusedBatchNormTest, TrainingUsesTheBatchStatistics) {
  const Tensor x = rnd({2, 3, 2, 3}, 1), scale = Tensor{0.5, 1.0, 2.0}, offset = Tensor{0.0, -1.0, 3.0};
  const auto t = fused_batch_norm(x, scale, offset, zeros({0}, DType::kFloat64), zeros({0}, DType::kFloat64), 0.01);
  const Stats s = stats(x);
  expect_near(t.y, normalize(x, s.mean, s.var, {0.5, 1.0, 2.0}, {0.0, -1.0, 3.0}, 0.01));
  EXPECT_EQ(t.y.shape(), x.shape());
  EXPECT_EQ(t.y.dtype(), DType::kFloat64);
  expect_near(t.batch_mean, s.mean);
  std::vector<double> unbiased = s.var;
  for (double& v : unbiased) v *= 12.0 / 11.0;  // n / (n - 1), n = 2 * 3 * 2
  expect_near(t.batch_variance, unbiased);
  expect_near(t.reserve_space_1, s.mean);
  expect_near(t.reserve_space_2, s.var);
  EXPECT_EQ(t.reserve_space_3.shape(), Shape{});
  EXPECT_EQ(t.reserve_space_3.item<double>(), 0.0);
}

TEST(FusedBatchNormTest, ExponentialAverageFactorBlendsTheRunningStatistics) {
  const Tensor x = rnd({4, 2, 2, 2}, 2), old_mean = Tensor{1.0, -1.0}, old_var = Tensor{2.0, 0.5};
  const auto t = fused_batch_norm(x, ones({2}, DType::kFloat64), zeros({2}, DType::kFloat64), old_mean, old_var, 0.001,
                                  0.25);
  const Stats s = stats(x);
  expect_near(t.batch_mean, {0.75 * 1.0 + 0.25 * s.mean[0], 0.75 * -1.0 + 0.25 * s.mean[1]});
  expect_near(t.batch_variance, {0.75 * 2.0 + 0.25 * s.var[0] * 16 / 15, 0.75 * 0.5 + 0.25 * s.var[1] * 16 / 15});
  expect_near(t.y, normalize(x, s.mean, s.var, {1, 1}, {0, 0}, 0.001));  // y still uses the batch's
}

TEST(FusedBatchNormTest, InferenceUsesTheGivenStatistics) {
  const Tensor x(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{1, 1, 3, 2});
  const auto t = fused_batch_norm(x, Tensor{2.f, 1.f}, Tensor{0.f, 10.f}, Tensor{3.f, 4.f}, Tensor{4.f, 1.f}, 0.0, 1.0,
                                  "NHWC", /*is_training=*/false);
  // channel 0: (x - 3) / 2 * 2; channel 1: (x - 4) / 1 + 10.
  EXPECT_THAT(t.y.to_vector<float>(), ElementsAre(-2.f, 8.f, 0.f, 10.f, 2.f, 12.f));
  EXPECT_EQ(t.y.dtype(), DType::kFloat32);
  EXPECT_THAT(t.batch_mean.to_vector<float>(), ElementsAre(3.f, 4.f));
  EXPECT_THAT(t.batch_variance.to_vector<float>(), ElementsAre(4.f, 1.f));
}

TEST(FusedBatchNormTest, NchwEqualsNhwcTransposed) {
  const Tensor x = rnd({2, 3, 4, 2}, 3), scale = rnd({2}, 4, 0.5, 1.5), offset = rnd({2}, 5);
  const Tensor nchw = transpose(x, {0, 3, 1, 2});
  const Tensor none = zeros({0}, DType::kFloat64);
  const auto a = fused_batch_norm(x, scale, offset, none, none);
  const auto b = fused_batch_norm(nchw, scale, offset, none, none, 0.001, 1.0, "NCHW");
  expect_close(transpose(b.y, {0, 2, 3, 1}), a.y, 1e-12);
  expect_close(b.batch_variance, a.batch_variance, 1e-12);
  const Tensor m = rnd({2}, 6), v = rnd({2}, 7, 0.5, 1.5);
  expect_close(transpose(fused_batch_norm(nchw, scale, offset, m, v, 0.001, 1.0, "NCHW", false).y, {0, 2, 3, 1}),
               fused_batch_norm(x, scale, offset, m, v, 0.001, 1.0, "NHWC", false).y, 1e-12);
}

TEST(FusedBatchNormTest, ErrorsNameTheOpAndTheInput) {
  const Tensor x = zeros({2, 2, 2, 3}), c = zeros({3}), e = zeros({0});
  EXPECT_THAT(error_of([&] { fused_batch_norm(x, zeros({2}), c, e, e); }),
              HasSubstr("[fused_batch_norm] 'scale' must have shape [3] (the channels of 'x' [2,2,2,3], NHWC), got [2]"));
  EXPECT_THAT(error_of([&] { fused_batch_norm(x, c, c, e, e, 0.001, 1.0, "NHWC", false); }),
              HasSubstr("[fused_batch_norm] 'mean' must have shape [3] (the channels of 'x' [2,2,2,3], NHWC), got [0]"));
  EXPECT_THAT(error_of([&] { fused_batch_norm(x, c, c, e, e, 0.001, 0.5); }),
              HasSubstr("'mean' must have shape [3]"));
  EXPECT_THAT(error_of([&] { fused_batch_norm(zeros({2, 2, 3}), c, c, e, e); }),
              HasSubstr("[fused_batch_norm] 'x' must have rank 4"));
  EXPECT_THAT(error_of([&] { fused_batch_norm(x, c, c, e, e, 0.001, 1.0, "NWHC"); }),
              HasSubstr("[fused_batch_norm] data_format must be \"NHWC\" or \"NCHW\", got \"NWHC\""));
  EXPECT_THAT(error_of([&] { fused_batch_norm(x, zeros({3}, DType::kFloat64), c, e, e); }),
              HasSubstr("[fused_batch_norm] 'x' and 'scale' must have the same dtype, got float32 and float64"));
  EXPECT_THAT(error_of([&] { fused_batch_norm(zeros({2, 2, 2, 3}, DType::kInt32), c, c, e, e); }),
              HasSubstr("[fused_batch_norm] input 'x' has dtype int32"));
}

TEST(BiasAddTest, NchwAddsAlongDimOneAndItsGradientSumsTheRest) {
  const Tensor v = reshape(range<float>(0, 8), {1, 2, 2, 2});
  const Tensor y = bias_add(v, Tensor{10.f, 20.f}, "NCHW");
  EXPECT_THAT(y.to_vector<float>(), ElementsAre(10.f, 11.f, 12.f, 13.f, 24.f, 25.f, 26.f, 27.f));
  EXPECT_THAT(bias_add(v, Tensor{10.f, 20.f}).to_vector<float>(), ElementsAre(10.f, 21.f, 12.f, 23.f, 14.f, 25.f, 16.f, 27.f));
  EXPECT_THAT(bias_add_grad(v, "NCHW").to_vector<float>(), ElementsAre(6.f, 22.f));
  EXPECT_THAT(bias_add_grad(v).to_vector<float>(), ElementsAre(12.f, 16.f));
  EXPECT_THAT(bias_add(Tensor{{1, 2}, {3, 4}}, Tensor{10, 20}).to_vector<int32_t>(), ElementsAre(11, 22, 13, 24));
  EXPECT_THAT(error_of([&] { bias_add(v, Tensor{1.f, 2.f, 3.f}, "NCHW"); }),
              HasSubstr("[bias_add] 'bias' must have shape [2] to match the channel dim (1, NCHW) of 'value' "
                        "[1,2,2,2], got [3]"));
  EXPECT_THAT(error_of([&] { bias_add(zeros({2, 3}), zeros({3}), "NCHW"); }),
              HasSubstr("[bias_add] 'value' must have rank >= 3 [batch, channels, ...] with data_format NCHW"));
  EXPECT_THAT(error_of([&] { bias_add(v, zeros({2}), "CHWN"); }), HasSubstr("[bias_add] data_format must be"));
  EXPECT_THAT(error_of([&] { bias_add_grad(zeros({3})); }), HasSubstr("[bias_add_grad] 'out_backprop' must have rank >= 2"));
}

TEST(LrnTest, NormalizesByTheWindowSumOfSquares) {
  // depth_radius 1, bias 1, alpha 1, beta 1: {1/(1+1+4), 2/(1+1+4+9), 3/(1+4+9)}.
  const Tensor x(std::vector<double>{1, 2, 3}, Shape{1, 1, 1, 3});
  expect_near(local_response_normalization(x, 1, 1.0, 1.0, 1.0), {1.0 / 6, 2.0 / 15, 3.0 / 14});
  // beta 0.5, alpha 0.5, bias 2, radius 0: x / sqrt(2 + x^2 / 2).
  expect_near(local_response_normalization(x, 0, 2.0, 0.5, 0.5),
              {1 / std::sqrt(2.5), 2 / std::sqrt(4.0), 3 / std::sqrt(6.5)});
  // lrn_grad against the derivative written out for radius 0: d/dx x (b + a x^2)^-beta.
  const Tensor y = local_response_normalization(x, 0, 2.0, 0.5, 0.5);
  std::vector<double> d;
  for (double v : {1.0, 2.0, 3.0}) d.push_back(std::pow(2 + 0.5 * v * v, -0.5) - 0.5 * v * v * std::pow(2 + 0.5 * v * v, -1.5));
  expect_near(lrn_grad(ones({1, 1, 1, 3}, DType::kFloat64), x, y, 0, 2.0, 0.5, 0.5), d);
  EXPECT_EQ(local_response_normalization(zeros({2, 3, 3, 4})).dtype(), DType::kFloat32);
  EXPECT_THAT(error_of([&] { local_response_normalization(x, -1); }),
              HasSubstr("[local_response_normalization] depth_radius must be in [0, 2147483647], got -1"));
  EXPECT_THAT(error_of([&] { local_response_normalization(zeros({3, 4})); }),
              HasSubstr("[local_response_normalization] 'input' must have rank 4"));
  EXPECT_THAT(error_of([&] { lrn_grad(zeros({1, 1, 1, 3}), zeros({1, 1, 1, 4}), zeros({1, 1, 1, 4})); }),
              HasSubstr("[lrn_grad] 'input_grads' has shape [1,1,1,3] but 'input_image' has shape [1,1,1,4]"));
}

TEST(NormalizationContextTest, TracedAndSessionRunsMatchEagerWithUnknownDims) {
  const Tensor x = rnd({2, 3, 2, 3}, 8);
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) {
        const Tensor none = zeros({0}, DType::kFloat64);
        return fused_batch_norm(v[0], v[1], v[2], none, none).y;
      },
      {x, rnd({3}, 9), rnd({3}, 10)}, {Shape{-1, -1, -1, 3}, Shape{3}, Shape{-1}}, Shape{-1, -1, -1, 3}, 1e-12);
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) {
        return fused_batch_norm(v[0], v[1], v[2], v[1], reshape(v[2], {-1}) * v[2] + 1.0, 0.001, 1.0, "NCHW", false)
            .y;
      },
      {x, rnd({3}, 11), rnd({3}, 12)}, {Shape{-1, 3, -1, -1}, Shape{3}, Shape{3}}, Shape{-1, 3, -1, -1}, 1e-12);
  expect_same_in_every_context([](const std::vector<Tensor>& v) { return bias_add(v[0], v[1], "NCHW"); },
                               {x, rnd({3}, 13)}, {Shape{-1, -1, 2, 3}, Shape{3}}, Shape{-1, 3, 2, 3});
  expect_same_in_every_context([](const std::vector<Tensor>& v) { return bias_add_grad(v[0], "NCHW"); }, {x},
                               {Shape{-1, 3, -1, -1}}, Shape{3});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return local_response_normalization(v[0], 1, 1.0, 0.5, 0.75); }, {x},
      {Shape{-1, -1, -1, 3}}, Shape{-1, -1, -1, 3}, 1e-12);
}

}  // namespace
}  // namespace tapeflow
