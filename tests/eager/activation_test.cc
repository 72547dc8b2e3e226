// The activation family as TensorFlow's primitive ops: values, dtypes, errors, graph nodes, and
// gradients that are exact at the kinks (TensorFlow's ReluGrad passes only where x > 0).
#include "eager/ops/activation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<double> grad_of(Tensor (*f)(const Tensor&, std::source_location), const Tensor& x) {
  GradientTape tape;
  tape.watch(x);
  Tensor y = f(x, std::source_location::current());
  return tape.gradient(reduce_sum(y), x).to_vector<double>();
}

TEST(ActivationTest, GradientsAtTheKinksFollowTensorFlow) {
  const Tensor x = {-1.0, 0.0, 0.5, 6.0, 7.0};
  EXPECT_THAT(grad_of(relu, x), ElementsAre(0.0, 0.0, 1.0, 1.0, 1.0));  // relu'(0) = 0
  EXPECT_THAT(grad_of(relu6, x), ElementsAre(0.0, 0.0, 1.0, 0.0, 0.0));  // 0 at 0 and at 6
  EXPECT_THAT(grad_of(softplus, Tensor{0.0}), ElementsAre(0.5));         // sigmoid(0), not 1
  EXPECT_THAT(grad_of(elu, Tensor{0.0, 1.0}), ElementsAre(1.0, 1.0));   // TF's EluGrad: y > 0 ? g : g (y + 1)
}

TEST(ActivationTest, ValuesOfEachActivation) {
  const Tensor x = {-2.0, -0.5, 0.0, 1.5};
  expect_close(selu(x), Tensor{1.0507009873554805 * 1.6732632423543772 * std::expm1(-2.0),
                               1.0507009873554805 * 1.6732632423543772 * std::expm1(-0.5), 0.0, 1.0507009873554805 * 1.5},
               1e-14);
  expect_close(softsign(x), Tensor{-2.0 / 3, -0.5 / 1.5, 0.0, 1.5 / 2.5}, 1e-15);
  expect_close(leaky_relu(x, 0.1), Tensor{-0.2, -0.05, 0.0, 1.5}, 1e-15);
  expect_close(leaky_relu(x), Tensor{-0.4, -0.1, 0.0, 1.5}, 1e-15);  // TensorFlow's default alpha 0.2
  EXPECT_THAT(relu(Tensor{-3, 0, 4}).to_vector<int32_t>(), ElementsAre(0, 0, 4));
  EXPECT_THAT(relu6(Tensor{uint8_t{3}, uint8_t{200}}).to_vector<uint8_t>(), ElementsAre(3, 6));
  EXPECT_TRUE(std::isnan(relu(Tensor{std::nan("")}).item<double>()));  // NaN passes through
}

TEST(ActivationTest, GradientOpsComputeTensorFlowsFormulas) {
  const Tensor g = {1.0, 2.0, 3.0, 4.0};
  EXPECT_THAT(relu_grad(g, Tensor{-1.0, 0.0, 1e-9, 5.0}).to_vector<double>(), ElementsAre(0.0, 0.0, 3.0, 4.0));
  EXPECT_THAT(relu6_grad(g, Tensor{0.0, 3.0, 6.0, 6.5}).to_vector<double>(), ElementsAre(0.0, 2.0, 0.0, 0.0));
  EXPECT_THAT(sigmoid_grad(Tensor{0.5, 0.25}, Tensor{2.0, 1.0}).to_vector<double>(), ElementsAre(0.5, 0.1875));
  EXPECT_THAT(tanh_grad(Tensor{0.5, 0.0}, Tensor{2.0, 1.0}).to_vector<double>(), ElementsAre(1.5, 1.0));
  EXPECT_THAT(elu_grad(Tensor{2.0, 2.0}, Tensor{-0.5, 1.0}).to_vector<double>(), ElementsAre(1.0, 2.0));
  expect_close(softplus_grad(Tensor{2.0}, Tensor{0.0}), Tensor{1.0});
}

TEST(ActivationTest, ErrorsNameTheOpAndTheInput) {
  EXPECT_THAT(error_of([] { relu6(Tensor{true, false}); }),
              AllOf(HasSubstr("[relu6]"), HasSubstr("bool"), HasSubstr("activation_test.cc:")));
  EXPECT_THAT(error_of([] { elu(Tensor{1, 2}); }), HasSubstr("[elu]"));
  EXPECT_THAT(error_of([] { relu_grad(Tensor{1.f, 2.f}, Tensor{1.f, 2.f, 3.f}); }),
              HasSubstr("[relu_grad] inputs 'gradients' [2] and 'features' [3] must have the same shape"));
  EXPECT_THAT(error_of([] { sigmoid_grad(Tensor{1.f}, Tensor{1.0}); }),
              HasSubstr("[sigmoid_grad] input 'dy' has dtype float64 but 'y' has dtype float32"));
}

TEST(ActivationTest, GraphsHoldTensorFlowsOpTypes) {
  Graph g;
  Tensor x, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, 3}, "x");
    Tensor y = relu(x);
    EXPECT_EQ(producer(y).type(), "Relu");
    EXPECT_EQ(y.shape(), (Shape{-1, 3}));
    dx = gradients({reduce_sum(y)}, {x})[0];
  }
  std::vector<std::string> types;
  for (const Operation& op : g.get_operations()) types.push_back(op.type());
  EXPECT_THAT(types, ::testing::Contains("ReluGrad"));
  EXPECT_THAT(types, ::testing::Not(::testing::Contains("Select")));  // no GreaterEqual + Select pair
  Session sess(g);
  EXPECT_THAT(sess.run(dx, {{x, Tensor{{-1.f, 0.f, 2.f}}}}).to_vector<float>(), ElementsAre(0.f, 0.f, 1.f));
}

TEST(ActivationTest, SecondOrderGradientsThroughTheGradientOps) {
  const Tensor x = {-1.0, 0.3, 2.0};
  GradientTape outer;
  outer.watch(x);
  Tensor dx;
  {
    GradientTape inner;
    inner.watch(x);
    Tensor y = reduce_sum(softplus(x) * x);
    dx = inner.gradient(y, x);  // sigmoid(x) x + softplus(x)
  }
  const std::vector<double> d2 = outer.gradient(reduce_sum(dx), x).to_vector<double>();
  const std::vector<double> xs = x.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double s = 1 / (1 + std::exp(-xs[i]));
    EXPECT_NEAR(d2[i], s * (1 - s) * xs[i] + 2 * s, 1e-12);  // d/dx [s x + softplus]
  }
}

}  // namespace
}  // namespace tapeflow
