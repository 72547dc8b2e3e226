#include "eager/ops/training.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "devices/device_manager.h"
#include "eager/ops/binary.h"
#include "eager/ops/matmul.h"
#include "eager/ops/random.h"
#include "eager/ops/unary.h"
#include "eager/variable.h"
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

TEST(MatMulUpdateTest, ByHand) {
  const Tensor w = {{1.0, 2.0}, {3.0, 4.0}};
  const Tensor x = {{1.0, 0.0, 2.0}, {0.0, 1.0, 1.0}};  // [2, 3]
  const Tensor y = {{1.0, 1.0}, {2.0, 0.0}, {0.0, 3.0}};  // [3, 2]; x y = [[1, 7], [2, 3]]
  const Tensor out = matmul_update(w, x, y, Tensor(0.5), false, false, /*subtract=*/true);
  EXPECT_EQ(out.dtype(), DType::kFloat64);
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{0.5, -1.5, 2.0, 2.5}));
  const Tensor added = matmul_update(w, x, y, Tensor(2.0), false, false, /*subtract=*/false);
  EXPECT_EQ(added.to_vector<double>(), (std::vector<double>{3.0, 16.0, 7.0, 10.0}));
  // The variable's value is an input, not an output: it is unchanged.
  EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{1.0, 2.0, 3.0, 4.0}));
}

// Every transpose combination, at a size OpenBLAS takes, against the unfused update.
TEST(MatMulUpdateTest, EqualsTheUnfusedUpdate) {
  const int64_t m = 70, n = 90, k = 40;
  const Tensor w = random_normal({m, n}, 0.0, 1.0, DType::kFloat32, 11);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Tensor a = random_normal(ta ? Shape{k, m} : Shape{m, k}, 0.0, 1.0, DType::kFloat32, 12);
      const Tensor b = random_normal(tb ? Shape{n, k} : Shape{k, n}, 0.0, 1.0, DType::kFloat32, 13);
      const std::vector<float> fused = matmul_update(w, a, b, Tensor(0.01f), ta, tb, true).to_vector<float>();
      const std::vector<float> unfused = (w - matmul(a, b, ta, tb) * 0.01f).to_vector<float>();
      ASSERT_EQ(fused.size(), unfused.size());
      for (size_t i = 0; i < fused.size(); ++i)
        ASSERT_NEAR(fused[i], unfused[i], 1e-5f) << "ta=" << ta << " tb=" << tb << " at " << i;
    }
  }
}

TEST(MatMulUpdateTest, BadInputsAreTypedErrors) {
  const Tensor w = {{1.f, 2.f}, {3.f, 4.f}}, s = 0.1f;
  EXPECT_THAT(error_of([&] { matmul_update(w, w, Tensor{{1.0, 2.0}, {3.0, 4.0}}, s, false, false, true); }),
              HasSubstr("[matmul_update] input 'b' has dtype float64; 'var' has float32"));
  EXPECT_THAT(error_of([&] { matmul_update(w, w, w, Tensor{0.1f, 0.2f}, false, false, true); }),
              HasSubstr("[matmul_update] input 'scale' has shape [2]; it must be a scalar"));
  EXPECT_THAT(error_of([&] { matmul_update(w, Tensor{1.f, 2.f}, w, s, false, false, true); }),
              HasSubstr("[matmul_update] input 'a' has shape [2]; it must be a matrix"));
  const Tensor wide = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};  // [2, 3]
  EXPECT_THAT(error_of([&] { matmul_update(w, wide, w, s, false, false, true); }),
              HasSubstr("[matmul_update] op(a) op(b) of 'a' [2,3] (transpose_a=false) and 'b' [2,2] "
                        "(transpose_b=false) does not give var's shape [2,2]"));
  EXPECT_THAT(error_of([&] { matmul_update(w, wide, wide, s, false, false, true); }), HasSubstr("training_test.cc:"));
  const Tensor ints = {{1, 2}, {3, 4}};
  EXPECT_THAT(error_of([&] { matmul_update(ints, ints, ints, Tensor(1), false, false, true); }),
              HasSubstr("[matmul_update] input 'var' has dtype int32"));
}

TEST(GradientDescentUpdateTest, ByHand) {
  const Tensor var = {1.0f, -2.0f, 0.5f}, delta = {2.0f, 4.0f, -1.0f};
  const Tensor out = gradient_descent_update(var, Tensor(0.25f), delta);
  EXPECT_THAT(out.to_vector<float>(), ::testing::ElementsAre(0.5f, -3.0f, 0.75f));
  EXPECT_THAT(var.to_vector<float>(), ::testing::ElementsAre(1.0f, -2.0f, 0.5f));  // functional
}

TEST(GradientDescentUpdateTest, BadInputsAreTypedErrors) {
  const Tensor var = {1.0f, 2.0f};
  EXPECT_THAT([&] { gradient_descent_update(var, Tensor{0.1f, 0.1f}, var); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("input 'alpha' has shape [2]; it must be a scalar")));
  EXPECT_THAT([&] { gradient_descent_update(var, Tensor(0.1f), Tensor{1.0f, 2.0f, 3.0f}); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("input 'delta' has shape [3]; it must be var's [2]")));
  EXPECT_THAT([&] { gradient_descent_update(var, Tensor(0.1), var); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("input 'alpha' has dtype float64; 'var' has float32")));
  EXPECT_THROW(gradient_descent_update(Tensor{1, 2}, Tensor(1), Tensor{1, 2}), InvalidArgumentError);  // integers
}

// The eager step writes var's own storage, with the values of var.assign_sub(delta * alpha).
TEST(ApplyGradientDescentTest, UpdatesInPlaceWithTheUnfusedValues) {
  const Tensor w0 = random_normal({64, 32}, 0.0, 1.0, DType::kFloat32, 31);
  const Tensor g = random_normal({64, 32}, 0.0, 1.0, DType::kFloat32, 32);
  Variable fused(w0 * 1.f, "fused"), unfused(w0 * 1.f, "unfused");
  const void* storage = fused.read().device_tensor().data<float>();  // the read is let go
  for (int step = 0; step < 3; ++step) {
    const Tensor returned = apply_gradient_descent(fused, 0.05f, g);
    unfused.assign_sub(g * 0.05f);
    EXPECT_EQ(returned.to_vector<float>(), fused.read().to_vector<float>());
  }
  EXPECT_EQ(fused.read().device_tensor().data<float>(), storage);
  EXPECT_EQ(fused.read().to_vector<float>(), unfused.read().to_vector<float>());
}

TEST(ApplyGradientDescentTest, AReadersTensorNeverChanges) {
  Variable w(Tensor{1.0, 2.0}, "w");
  const Tensor before = w.read();  // shares w's storage: the update must not write into it
  apply_gradient_descent(w, 0.5, Tensor{2.0, 2.0});
  EXPECT_THAT(before.to_vector<double>(), ::testing::ElementsAre(1.0, 2.0));
  EXPECT_THAT(w.read().to_vector<double>(), ::testing::ElementsAre(0.0, 1.0));  // the weak 0.5 became float64
  apply_gradient_descent(w, Tensor(1.0), Tensor{1.0, -1.0});  // a tensor rate
  EXPECT_THAT(w.read().to_vector<double>(), ::testing::ElementsAre(-1.0, 2.0));
}

TEST(ApplyGradientDescentTest, BadInputsNameTheVariableAndChangeNothing) {
  Variable w(Tensor{1.0f, 2.0f}, "w");
  EXPECT_THAT([&] { apply_gradient_descent(w, 0.1f, Tensor{1.0f, 2.0f, 3.0f}); },
              ::testing::ThrowsMessage<InvalidArgumentError>(
                  HasSubstr("[apply_gradient_descent] Variable 'w' (float32 [2]): delta's shape is [3]")));
  EXPECT_THAT([&] { apply_gradient_descent(w, 0.1f, Tensor{1.0, 2.0}); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("delta's dtype is float64")));
  EXPECT_THAT([&] { apply_gradient_descent(w, Tensor{0.1f, 0.2f}, Tensor{1.0f, 2.0f}); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("alpha's shape is [2]")));
  EXPECT_THAT([&] { apply_gradient_descent(w, 0.1f, Tensor()); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("delta is an empty tensor")));
  EXPECT_THAT(w.read().to_vector<float>(), ::testing::ElementsAre(1.0f, 2.0f));
}

// ApplyAdam writes the three variables' own storage, with adam_update's values bit for bit; a
// reader holding any one of the values sends it through the functional form, with the same values.
TEST(ApplyAdamTest, UpdatesInPlaceWithTheFunctionalValues) {
  const Tensor w0 = random_normal({32, 16}, 0.0, 1.0, DType::kFloat32, 41);
  const Tensor g = random_normal({32, 16}, 0.0, 1.0, DType::kFloat32, 42);
  const Tensor lr = 0.01f;
  Variable var(w0 * 1.f, "w"), m(w0 * 0.f, "m"), v(w0 * 0.f, "v");
  Tensor ref_var = w0, ref_m = w0 * 0.f, ref_v = w0 * 0.f;
  const void* storage = var.read().device_tensor().data<float>();
  for (int step = 0; step < 3; ++step) {
    apply_adam(var, m, v, g, lr, 0.9, 0.999, 1e-7);
    auto [var_t, m_t, v_t] = adam_update(ref_var, ref_m, ref_v, g, lr, 0.9, 0.999, 1e-7);
    ref_var = var_t;
    ref_m = m_t;
    ref_v = v_t;
  }
  EXPECT_EQ(var.read().device_tensor().data<float>(), storage);
  EXPECT_EQ(var.read().to_vector<float>(), ref_var.to_vector<float>());
  EXPECT_EQ(m.read().to_vector<float>(), ref_m.to_vector<float>());
  EXPECT_EQ(v.read().to_vector<float>(), ref_v.to_vector<float>());
  const Tensor held_m = m.read();  // a reader: m's storage is shared now
  const std::vector<float> held_values = held_m.to_vector<float>();
  apply_adam(var, m, v, g, lr, 0.9, 0.999, 1e-7);
  auto [var_t, m_t, v_t] = adam_update(ref_var, ref_m, ref_v, g, lr, 0.9, 0.999, 1e-7);
  EXPECT_EQ(held_m.to_vector<float>(), held_values);
  EXPECT_EQ(var.read().to_vector<float>(), var_t.to_vector<float>());
  EXPECT_EQ(m.read().to_vector<float>(), m_t.to_vector<float>());
  EXPECT_EQ(v.read().to_vector<float>(), v_t.to_vector<float>());
}

// The same variable as two of the three: no self-deadlock, the functional form's values.
TEST(ApplyAdamTest, OneVariablePassedTwiceTakesTheFunctionalForm) {
  Variable var(Tensor{1.0f, 2.0f}, "w"), mv(Tensor{0.0f, 0.0f}, "mv");
  const Tensor g = {0.5f, -0.5f}, lr = 0.1f;
  auto [var_t, m_t, v_t] = adam_update(var.read(), mv.read(), mv.read(), g, lr, 0.9, 0.999, 1e-7);
  apply_adam(var, mv, mv, g, lr, 0.9, 0.999, 1e-7);
  EXPECT_EQ(var.read().to_vector<float>(), var_t.to_vector<float>());
  EXPECT_EQ(mv.read().to_vector<float>(), v_t.to_vector<float>());  // assigned m_t, then v_t
}

TEST(ApplyAdamTest, BadInputsAreTypedErrorsAndChangeNothing) {
  Variable var(Tensor{1.0f, 2.0f}, "w"), m(Tensor{0.0f, 0.0f}, "m"), v(Tensor{0.0f, 0.0f}, "v");
  EXPECT_THAT([&] { apply_adam(var, m, v, Tensor{1.0f, 2.0f, 3.0f}, Tensor(0.1f), 0.9, 0.999, 1e-7); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("[adam_update] input 'grad' has shape [3]")));
  EXPECT_THAT([&] { apply_adam(var, m, v, Tensor{1.0, 2.0}, Tensor(0.1f), 0.9, 0.999, 1e-7); },
              ::testing::ThrowsMessage<InvalidArgumentError>(HasSubstr("input 'grad' has dtype float64")));
  EXPECT_THAT(var.read().to_vector<float>(), ::testing::ElementsAre(1.0f, 2.0f));
  EXPECT_THAT(m.read().to_vector<float>(), ::testing::ElementsAre(0.0f, 0.0f));
}

}  // namespace
}  // namespace tapeflow
