#include "eager/ops/training.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "devices/device_manager.h"
#include "eager/ops/binary.h"
#include "eager/ops/unary.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

TEST(AdamUpdateTest, OneStepByHand) {
  const Tensor var = {1.0, -2.0}, m = {0.5, 0.0}, v = {0.25, 1.0}, g = {2.0, -1.0}, lr = 0.1;
  auto [var_t, m_t, v_t] = adam_update(var, m, v, g, lr, 0.9, 0.99, 1e-8);
  // m_t = 0.9 m + 0.1 g; v_t = 0.99 v + 0.01 g^2; var_t = var - 0.1 m_t / (sqrt(v_t) + 1e-8)
  const double m0 = 0.9 * 0.5 + 0.1 * 2.0, m1 = 0.9 * 0.0 + 0.1 * -1.0;
  const double v0 = 0.99 * 0.25 + 0.01 * 4.0, v1 = 0.99 * 1.0 + 0.01 * 1.0;
  EXPECT_THAT(m_t.to_vector<double>(), ::testing::ElementsAre(::testing::DoubleNear(m0, 1e-15), ::testing::DoubleNear(m1, 1e-15)));
  EXPECT_THAT(v_t.to_vector<double>(), ::testing::ElementsAre(::testing::DoubleNear(v0, 1e-15), ::testing::DoubleNear(v1, 1e-15)));
  EXPECT_NEAR(var_t.to_vector<double>()[0], 1.0 - 0.1 * m0 / (std::sqrt(v0) + 1e-8), 1e-15);
  EXPECT_NEAR(var_t.to_vector<double>()[1], -2.0 - 0.1 * m1 / (std::sqrt(v1) + 1e-8), 1e-15);
  EXPECT_EQ(var_t.dtype(), DType::kFloat64);
  EXPECT_EQ(var_t.shape(), Shape{2});
}

TEST(AdamUpdateTest, EqualsTheElementwiseFormBitForBit) {
  // The optimizer picks either form by device (nn/adam.cc); both must give the same floats.
  std::vector<float> w(1000), mv(1000), vv(1000), gv(1000);
  for (int i = 0; i < 1000; ++i) {
    w[i] = std::sin(0.1f * i);
    mv[i] = 0.01f * std::cos(0.3f * i);
    vv[i] = 0.001f * (1 + std::sin(0.7f * i));
    gv[i] = std::cos(0.05f * i) - 0.3f;
  }
  const Tensor var(w, Shape{10, 100}), m(mv, Shape{10, 100}), v(vv, Shape{10, 100}), g(gv, Shape{10, 100});
  const float lr = 1e-3f;
  auto [var_t, m_t, v_t] = adam_update(var, m, v, g, Tensor(lr), 0.9, 0.999, 1e-7);
  const Tensor m_e = m * 0.9 + g * (1 - 0.9);
  const Tensor v_e = v * 0.999 + square(g) * (1 - 0.999);
  const Tensor var_e = var - m_e * lr / (sqrt(v_e) + 1e-7);
  EXPECT_EQ(m_t.to_vector<float>(), m_e.to_vector<float>());
  EXPECT_EQ(v_t.to_vector<float>(), v_e.to_vector<float>());
  EXPECT_EQ(var_t.to_vector<float>(), var_e.to_vector<float>());
}

TEST(AdamUpdateTest, BadInputsAreTypedErrors) {
  const Tensor var = {1.f, 2.f}, lr = 0.1f;
  EXPECT_THAT(error_of([&] { adam_update(var, var, var, Tensor{1.0, 2.0}, lr, 0.9, 0.999, 1e-7); }),
              HasSubstr("[adam_update] input 'grad' has dtype float64; 'var' has float32"));
  EXPECT_THAT(error_of([&] { adam_update(var, Tensor{1.f, 2.f, 3.f}, var, var, lr, 0.9, 0.999, 1e-7); }),
              HasSubstr("[adam_update] input 'm' has shape [3]; it must be var's [2]"));
  EXPECT_THAT(error_of([&] { adam_update(var, var, var, var, Tensor{0.1f, 0.2f}, 0.9, 0.999, 1e-7); }),
              HasSubstr("[adam_update] input 'lr_t' has shape [2]; it must be a scalar"));
  const Tensor ints = {1, 2};
  EXPECT_THAT(error_of([&] { adam_update(ints, ints, ints, ints, Tensor(1), 0.9, 0.999, 1e-7); }),
              HasSubstr("[adam_update] input 'var' has dtype int32"));
  // The message names the caller's line.
  EXPECT_THAT(error_of([&] { adam_update(var, var, var, Tensor{1.0, 2.0}, lr, 0.9, 0.999, 1e-7); }),
              HasSubstr("training_test.cc:"));
}

TEST(AdamUpdateTest, TheCpuHasTheFusedKernel) {
  Device* cpu = DeviceManager::global().cpu(0);
  EXPECT_TRUE(has_fused_update_kernel(cpu, DType::kFloat32));
  EXPECT_TRUE(has_fused_update_kernel(cpu, DType::kFloat64));
  EXPECT_FALSE(has_fused_update_kernel(cpu, DType::kInt32));
  EXPECT_FALSE(has_fused_update_kernel(nullptr, DType::kFloat32));
}

}  // namespace
}  // namespace tapeflow
