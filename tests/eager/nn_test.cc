#include "eager/ops/nn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"
#include "eager/ops/creation.h"
#include "eager/random_seed.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

// softmax([1, 2, 3]) and log_softmax([1, 2, 3]), from NumPy in double precision.
const std::vector<double> kSoftmax123 = {0.09003057317038046, 0.24472847105479764, 0.6652409557748218};
const std::vector<double> kLogSoftmax123 = {-2.4076059644443806, -1.4076059644443804, -0.4076059644443804};

TEST(NNTest, SoftmaxValues) {
  Tensor s = softmax(Tensor{1.0, 2.0, 3.0});
  EXPECT_EQ(s.dtype(), DType::kFloat64);
  const std::vector<double> got = s.to_vector<double>();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], kSoftmax123[i], 1e-15);
  const std::vector<double> lg = log_softmax(Tensor{1.0, 2.0, 3.0}).to_vector<double>();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(lg[i], kLogSoftmax123[i], 1e-15);
}

TEST(NNTest, LargeLogitsDoNotOverflow) {
  // exp(1000) overflows float and double; the shifted form does not.
  Tensor x = {{1000.f, 1001.f, 1002.f}, {-1000.f, -999.f, -998.f}};
  Tensor s = softmax(x);
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  const std::vector<float> got = s.to_vector<float>();
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[r * 3 + i], kSoftmax123[i], 1e-6) << r << "," << i;
  const std::vector<float> lg = log_softmax(x).to_vector<float>();
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(lg[r * 3 + i], kLogSoftmax123[i], 1e-5) << r << "," << i;
  // log_softmax stays finite where softmax underflows to 0.
  const std::vector<float> far = log_softmax(Tensor{1000.f, 0.f}).to_vector<float>();
  EXPECT_EQ(far, (std::vector<float>{0.f, -1000.f}));
  EXPECT_EQ(softmax(Tensor{1000.f, 0.f}).to_vector<float>(), (std::vector<float>{1.f, 0.f}));
}

TEST(NNTest, AlongAxisZeroAndRowsSumToOne) {
  // Each column of [[1,2],[3,4]] is a shifted [1,3]: softmax = [0.11920292, 0.88079708].
  const std::vector<float> got = softmax(Tensor{{1.f, 2.f}, {3.f, 4.f}}, 0).to_vector<float>();
  const std::vector<float> want = {0.11920292f, 0.11920292f, 0.88079708f, 0.88079708f};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], want[i], 1e-6);
  Tensor x = {{{0.5, -1.0, 2.0, 0.0}, {3.0, 3.0, 3.0, 3.0}}, {{-5.0, 5.0, 0.0, 1.0}, {10.0, 0.0, -10.0, 2.0}}};
  const std::vector<double> s = softmax(x, 2).to_vector<double>();
  for (int row = 0; row < 4; ++row) {
    double sum = 0;
    for (int i = 0; i < 4; ++i) sum += s[row * 4 + i];
    EXPECT_NEAR(sum, 1.0, 1e-12) << row;
  }
  EXPECT_NEAR(s[4], 0.25, 1e-15);  // equal logits
  const std::vector<double> ls = log_softmax(x, -2).to_vector<double>();
  EXPECT_NEAR(std::exp(ls[0]) + std::exp(ls[4]), 1.0, 1e-12);
}

TEST(NNTest, Errors) {
  std::string msg = error_of([] { softmax(Tensor{1, 2, 3}); });
  EXPECT_THAT(msg, HasSubstr("[softmax] input 'logits' has dtype int32"));
  msg = error_of([] { log_softmax(Tensor{{1.f, 2.f}}, 2); });
  EXPECT_THAT(msg, HasSubstr("[log_softmax]"));
  EXPECT_THAT(msg, HasSubstr("axis 2"));
  EXPECT_THAT(msg, HasSubstr("rank 2"));
  EXPECT_THAT(error_of([] { softmax(Tensor(1.f)); }), HasSubstr("[softmax]"));
}

TEST(NNTest, BiasAdd) {
  const Tensor x = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
  const Tensor y = bias_add(x, Tensor{10.f, 20.f, 30.f});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // NHWC: the bias follows the channels.
  const Tensor img = bias_add(zeros({1, 2, 2, 2}, DType::kFloat64), Tensor{1.0, -1.0});
  EXPECT_EQ(img.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(img.to_vector<double>(), (std::vector<double>{1, -1, 1, -1, 1, -1, 1, -1}));

  std::string msg = error_of([&] { bias_add(x, Tensor{1.f, 2.f}); });
  EXPECT_THAT(msg, HasSubstr("[bias_add] 'bias' must have shape [3] to match the last dim of 'value' [2,3], got [2]"));
  EXPECT_THAT(error_of([&] { bias_add(x, Tensor{{1.f, 2.f, 3.f}}); }), HasSubstr("got [1,3]"));
  EXPECT_THAT(error_of([] { bias_add(Tensor{1.f, 2.f}, Tensor{1.f, 2.f}); }),
              HasSubstr("[bias_add] 'value' must have rank >= 2"));
  EXPECT_THAT(error_of([&] { bias_add(x, Tensor{1.0, 2.0, 3.0}); }),
              HasSubstr("[bias_add] 'value' and 'bias' must have the same dtype, got float32 and float64"));
}

TEST(NNTest, Dropout) {
  const Tensor x = ones({100, 100});
  // Inference, and rate 0, return x itself.
  EXPECT_TRUE(dropout(x, 0.5, /*training=*/false).shares_buffer_with(x));
  EXPECT_TRUE(dropout(x, 0.0, /*training=*/true).shares_buffer_with(x));

  const Tensor y = dropout(x, 0.25, true, /*seed=*/7);
  EXPECT_EQ(y.shape(), x.shape());
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  int kept = 0;
  for (float v : y.to_vector<float>()) {
    ASSERT_TRUE(v == 0.f || std::abs(v - 1.f / 0.75f) < 1e-6f) << v;
    kept += v != 0.f;
  }
  EXPECT_NEAR(kept / 10000.0, 0.75, 0.02);  // 4.6 standard deviations
  // Seeded: the same global and op seeds give the same mask.
  set_seed(3);
  const std::vector<double> a = dropout(ones({50}, DType::kFloat64), 0.5, true, 1).to_vector<double>();
  set_seed(3);
  const std::vector<double> b = dropout(ones({50}, DType::kFloat64), 0.5, true, 1).to_vector<double>();
  EXPECT_EQ(a, b);
  for (double v : a) EXPECT_TRUE(v == 0.0 || v == 2.0) << v;
  set_seed(std::nullopt);

  EXPECT_THAT(error_of([&] { dropout(x, 1.0, true); }), HasSubstr("[dropout] rate must be in [0, 1), got 1"));
  EXPECT_THAT(error_of([&] { dropout(x, -0.1, false); }), HasSubstr("[dropout] rate must be in [0, 1), got -0.1"));
  EXPECT_THAT(error_of([] { dropout(Tensor{1, 2}, 0.5, true); }), HasSubstr("[dropout] input 'x' has dtype int32"));
}

TEST(NNTest, L2Loss) {
  const Tensor l = l2_loss(Tensor{{1.f, 2.f}, {3.f, -4.f}});
  EXPECT_EQ(l.shape(), Shape{});
  EXPECT_EQ(l.dtype(), DType::kFloat32);
  EXPECT_EQ(l.item<float>(), 15.f);  // (1 + 4 + 9 + 16) / 2
  EXPECT_EQ(l2_loss(Tensor{0.5}).item<double>(), 0.125);
  EXPECT_THAT(error_of([] { l2_loss(Tensor{1, 2}); }), HasSubstr("[l2_loss] input 't' has dtype int32"));
  // A large float32 weight: the sum is accumulated in double (a float32 running sum of 3e6
  // terms of 1e-2 would drift in its fourth digit).
  const Tensor big = fill({3'000'000}, 0.1f);
  EXPECT_NEAR(l2_loss(big).item<float>(), 3e6 * 0.01 / 2, 1.0);
  EXPECT_EQ(l2_loss(zeros({0, 3})).item<float>(), 0.f);
}

}  // namespace
}  // namespace tapeflow
