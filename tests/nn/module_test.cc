#include "nn/module.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/matmul.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"
#include "eager/random_seed.h"
#include "nn/initializers.h"
#include "nn/sgd.h"
#include "tests/support/test_util.h"

namespace tapeflow::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using tapeflow::error_of;

std::vector<std::string> names_of(const std::vector<Variable>& vars) {
  std::vector<std::string> out;
  for (const Variable& v : vars) out.push_back(v.name());
  return out;
}

// ---- Dense ----

TEST(DenseTest, BuildsLazilyFromTheInputsLastDim) {
  Dense layer(3, {}, true, initializers::glorot_uniform, std::nullopt, "fc");
  EXPECT_FALSE(layer.built());
  EXPECT_TRUE(layer.variables().empty());
  EXPECT_THROW(layer.kernel(), FailedPreconditionError);
  Tensor y = layer(ones({2, 4}));
  EXPECT_TRUE(layer.built());
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(layer.kernel().shape(), (Shape{4, 3}));
  EXPECT_EQ(layer.bias().shape(), (Shape{3}));
  EXPECT_THAT(layer.bias().read().to_vector<float>(), ElementsAre(0.f, 0.f, 0.f));
  EXPECT_THAT(names_of(layer.trainable_variables()), ElementsAre("fc/kernel", "fc/bias"));
  EXPECT_TRUE(layer.non_trainable_variables().empty());
  // A second call reuses the variables.
  layer(ones({5, 4}));
  EXPECT_EQ(layer.variables().size(), 2u);
}

TEST(DenseTest, ValuesWithAFixedKernel) {
  Dense layer(2, Activation::kRelu);
  const Tensor x = {{1.f, 1.f, 1.f}, {1.f, 0.f, -1.f}};
  layer(x);
  layer.kernel().assign(Tensor{{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  layer.bias().assign(Tensor{0.5f, -1.f});
  // x @ K = [[1+3+5, 2+4+6], [1-5, 2-6]] = [[9, 12], [-4, -4]]; + b = [[9.5, 11], [-3.5, -5]]; relu.
  EXPECT_THAT(layer(x).to_vector<float>(), ElementsAre(9.5f, 11.f, 0.f, 0.f));

  Dense linear(2, Activation::kLinear, /*use_bias=*/false);
  linear(x);
  linear.kernel().assign(Tensor{{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  EXPECT_THAT(linear(x).to_vector<float>(), ElementsAre(9.f, 12.f, -4.f, -4.f));
  EXPECT_EQ(linear.variables().size(), 1u);
  EXPECT_THROW(linear.bias(), FailedPreconditionError);

  // A callable activation: x * 2 - 1, in float64 (the layer adopts the input's dtype).
  Dense custom(1, [](const Tensor& t) { return t * 2 - 1; });
  EXPECT_EQ(Activation([](const Tensor& t) { return t; }).name(), "custom");
  const Tensor xd = {{1.0, 2.0}};
  custom(xd);
  EXPECT_EQ(custom.kernel().dtype(), DType::kFloat64);
  custom.kernel().assign(Tensor{{0.5}, {0.25}});
  custom.bias().assign(Tensor{1.0});
  // (0.5 + 0.5 + 1) * 2 - 1 = 3
  EXPECT_THAT(custom(xd).to_vector<double>(), ElementsAre(3.0));
}

TEST(DenseTest, ActivationsByName) {
  const Tensor x = {{-1.f, 0.5f}};
  EXPECT_THAT(Activation(Activation::kRelu)(x).to_vector<float>(), ElementsAre(0.f, 0.5f));
  EXPECT_THAT(Activation()(x).to_vector<float>(), ElementsAre(-1.f, 0.5f));
  EXPECT_FLOAT_EQ(Activation(Activation::kSigmoid)(x).to_vector<float>()[1], 1.f / (1.f + std::exp(-0.5f)));
  EXPECT_FLOAT_EQ(Activation(Activation::kTanh)(x).to_vector<float>()[0], std::tanh(-1.f));
  const auto sm = Activation(Activation::kSoftmax)(x).to_vector<float>();
  EXPECT_NEAR(sm[0] + sm[1], 1.f, 1e-6);
  EXPECT_NEAR(sm[1] / sm[0], std::exp(1.5f), 1e-4);
  EXPECT_EQ(Activation(Activation::kElu).name(), "elu");
  EXPECT_EQ(Activation().name(), "linear");
}

TEST(DenseTest, HigherRankInputsMultiplyAlongTheLastAxis) {
  Dense layer(2);
  Tensor x = reshape(range(0.f, 12.f, 1.f), {2, 2, 3});
  Tensor y = layer(x);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(layer.kernel().shape(), (Shape{3, 2}));
  // Row [1, 1, 0] of x (index [0, 1, :] is [3, 4, 5]) matches a rank-2 call on the same row.
  Tensor row = layer(Tensor{{3.f, 4.f, 5.f}});
  const auto yv = y.to_vector<float>();
  const auto rv = row.to_vector<float>();
  EXPECT_FLOAT_EQ(yv[2], rv[0]);
  EXPECT_FLOAT_EQ(yv[3], rv[1]);
}

TEST(DenseTest, Errors) {
  Dense layer(4, {}, true, initializers::glorot_uniform, std::nullopt, "head");
  std::string msg = error_of([&] { layer(Tensor{1.f, 2.f}); });
  EXPECT_THAT(msg, HasSubstr("[head] expected an input of rank >= 2, got shape [2]"));
  EXPECT_FALSE(layer.built());
  msg = error_of([&] { layer(Tensor{{1, 2}}); });
  EXPECT_THAT(msg, HasSubstr("[head] expected a floating-point input, got dtype int32"));
  EXPECT_THAT(error_of([&] { layer(Tensor()); }), HasSubstr("[head] the input is an empty tensor"));
  EXPECT_TRUE(layer.variables().empty());

  layer(ones({1, 3}));
  msg = error_of([&] { layer(ones({2, 5})); });
  EXPECT_THAT(msg, HasSubstr("[head] expected an input whose last dimension is 3"));
  EXPECT_THAT(msg, HasSubstr("got shape [2,5]"));
  msg = error_of([&] { layer(ones({2, 3}, DType::kFloat64)); });
  EXPECT_THAT(msg, HasSubstr("[head] expected an input of dtype float32"));
  EXPECT_THAT(error_of([&] { layer(Tensor{1.f, 2.f, 3.f}); }), HasSubstr("[head] expected an input of rank >= 2"));

  EXPECT_THAT(error_of([] { Dense(0); }), HasSubstr("[Dense] units must be a positive integer, got 0"));
  // A kernel initializer returning the wrong shape is caught, and leaves the layer unbuilt.
  Dense bad(2, {}, true, [](const Shape&, DType dtype, std::optional<int64_t>) { return zeros({1}, dtype); });
  EXPECT_THAT(error_of([&] {
                bad(ones({1, 3}));
              }),
              HasSubstr("kernel_initializer must return a float32 tensor of shape [3,2]"));
  EXPECT_FALSE(bad.built());
  EXPECT_TRUE(bad.variables().empty());
}

TEST(DenseTest, SeededInitializationIsReproducible) {
  auto make = [] {
    set_seed(11);
    Dense layer(5, {}, true, initializers::glorot_uniform, /*seed=*/3);
    layer(ones({1, 4}));
    return layer.kernel().read().to_vector<float>();
  };
  const auto a = make();
  const auto b = make();
  EXPECT_EQ(a, b);
  const float limit = std::sqrt(6.f / (4 + 5));
  for (float v : a) {
    EXPECT_LE(std::abs(v), limit);
  }
  set_seed(std::nullopt);
}

// ---- names ----

TEST(ModuleTest, UniqueNamesAsKeras) {
  reset_unique_names();
  Dense a(1), b(1);
  Flatten f;
  Dense named(1, {}, true, initializers::glorot_uniform, std::nullopt, "logits");
  Dense c(1);
  EXPECT_EQ(a.name(), "dense");
  EXPECT_EQ(b.name(), "dense_1");
  EXPECT_EQ(f.name(), "flatten");
  EXPECT_EQ(named.name(), "logits");
  EXPECT_EQ(c.name(), "dense_2");
  b(ones({1, 2}));
  EXPECT_THAT(names_of(b.variables()), ElementsAre("dense_1/kernel", "dense_1/bias"));
  EXPECT_EQ(unique_name("block"), "block");
  EXPECT_EQ(unique_name("block"), "block_1");
  reset_unique_names();
  EXPECT_EQ(unique_name("dense"), "dense");
}

// ---- Flatten ----

TEST(FlattenTest, KeepsTheBatchDim) {
  Flatten flatten;
  Tensor y = flatten(reshape(range(0, 24), {2, 3, 4}));
  EXPECT_EQ(y.shape(), (Shape{2, 12}));
  EXPECT_EQ(y.to_vector<int32_t>()[13], 13);
  EXPECT_EQ(flatten(Tensor{1.f, 2.f}).shape(), (Shape{2, 1}));
  EXPECT_EQ(flatten(zeros({0, 3, 2})).shape(), (Shape{0, 6}));
  EXPECT_THAT(error_of([&] { flatten(Tensor(1.f)); }), HasSubstr("expected an input of rank >= 1, got shape []"));
  EXPECT_TRUE(flatten.variables().empty());
}

// ---- Sequential ----

TEST(SequentialTest, CallsLayersInOrderAndListsTheirVariables) {
  reset_unique_names();
  Sequential model({Flatten(), Dense(4, Activation::kRelu), Dense(2)});
  EXPECT_EQ(model.name(), "sequential");
  EXPECT_EQ(model.layers().size(), 3u);
  EXPECT_TRUE(model.trainable_variables().empty());  // nothing built yet
  Tensor y = model(ones({3, 2, 3}));
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_THAT(names_of(model.trainable_variables()),
              ElementsAre("dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"));
  EXPECT_EQ(model.variables()[0].shape(), (Shape{6, 4}));
  EXPECT_EQ(model.variables()[2].shape(), (Shape{4, 2}));
}

TEST(SequentialTest, SameValuesAsCallingTheLayersByHand) {
  auto first = std::make_shared<Dense>(3, Activation::kTanh);
  auto second = std::make_shared<Dense>(1);
  Sequential model({first, second});
  const Tensor x = {{0.5f, -1.f}, {2.f, 0.f}};
  const auto got = model(x).to_vector<float>();
  const auto want = (*second)((*first)(x)).to_vector<float>();
  EXPECT_EQ(got, want);
  // By hand: tanh(x W1 + b1) W2 + b2, with the layers' own variables.
  const Tensor h = tanh(matmul(x, first->kernel()) + first->bias());
  const auto manual = (matmul(h, second->kernel()) + second->bias()).to_vector<float>();
  EXPECT_FLOAT_EQ(got[0], manual[0]);
  EXPECT_FLOAT_EQ(got[1], manual[1]);
}

TEST(SequentialTest, NestingSharingAddAndFreezing) {
  auto shared =
      std::make_shared<Dense>(2, Activation::kLinear, true, initializers::glorot_uniform, std::nullopt, "shared");
  Sequential inner({Dense(2, {}, true, initializers::glorot_uniform, std::nullopt, "inner_fc")}, "inner");
  Sequential model({shared, std::move(inner)}, "outer");
  model.add(shared);  // the same layer twice: its variables are listed once
  model(ones({1, 2}));
  EXPECT_THAT(names_of(model.trainable_variables()),
              ElementsAre("shared/kernel", "shared/bias", "inner_fc/kernel", "inner_fc/bias"));
  EXPECT_EQ(model.submodules().size(), 3u);

  // Freezing a submodule drops its (and its children's) variables from the trainable list.
  model.layers()[1]->set_trainable(false);
  EXPECT_THAT(names_of(model.trainable_variables()), ElementsAre("shared/kernel", "shared/bias"));
  EXPECT_THAT(names_of(model.non_trainable_variables()), ElementsAre("inner_fc/kernel", "inner_fc/bias"));
  EXPECT_EQ(model.variables().size(), 4u);
  model.set_trainable(false);
  EXPECT_TRUE(model.trainable_variables().empty());
}

TEST(SequentialTest, EmptyModelAndLayerErrorsNameTheLayer) {
  Sequential empty({}, "empty");
  EXPECT_THAT(error_of([&] { empty(ones({1, 2})); }), HasSubstr("[empty] the model has no layers"));
  Sequential model({Dense(2, {}, true, initializers::glorot_uniform, std::nullopt, "first")});
  model(ones({1, 3}));
  EXPECT_THAT(error_of([&] { model(ones({1, 4})); }), HasSubstr("[first] expected an input whose last dimension is 3"));
}

// A user module holding layers as members.
class TwoLayer : public Module {
 public:
  TwoLayer()
      : Module("two_layer"),
        hidden_(add_module(std::make_shared<Dense>(8, Activation::kRelu, true, initializers::he_normal, 1, "hidden"))),
        out_(add_module(std::make_shared<Dense>(1, Activation::kLinear, true, initializers::glorot_uniform, 2, "out"))),
        scale_(add_variable("scale", Tensor(1.f), /*trainable=*/false)) {}
  Tensor operator()(const Tensor& x) { return (*out_)((*hidden_)(x)) * scale_; }

 private:
  std::shared_ptr<Dense> hidden_, out_;
  Variable scale_;
};

TEST(ModuleTest, CustomModuleTracksItsLayers) {
  TwoLayer m;
  EXPECT_THAT(names_of(m.variables()), ElementsAre("two_layer/scale"));
  m(ones({2, 3}));
  EXPECT_THAT(names_of(m.variables()),
              ElementsAre("two_layer/scale", "hidden/kernel", "hidden/bias", "out/kernel", "out/bias"));
  EXPECT_THAT(names_of(m.trainable_variables()), ElementsAre("hidden/kernel", "hidden/bias", "out/kernel", "out/bias"));
  EXPECT_THAT(names_of(m.non_trainable_variables()), ElementsAre("two_layer/scale"));
}

// ---- training: Dense + SGD with hand-written gradients ----

TEST(ModuleTest, DenseLearnsALinearMapWithSGD) {
  // y = x @ [[2], [-3]] + 0.5; mean squared error; gradients by hand:
  //   dL/dy = 2 (y_pred - y) / N, dL/dK = x^T dL/dy, dL/db = sum over the batch of dL/dy.
  const Tensor x = {{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}, {-1.f, 2.f}};
  const Tensor y = matmul(x, Tensor{{2.f}, {-3.f}}) + 0.5f;
  set_seed(5);
  Dense layer(1);
  SGD opt(0.2);
  for (int step = 0; step < 1000; ++step) {
    const Tensor dy = (layer(x) - y) * (2.f / 4.f);
    opt.apply_gradients({matmul(x, dy, /*transpose_a=*/true), reduce_sum(dy, {0})}, layer.trainable_variables());
  }
  set_seed(std::nullopt);
  const auto k = layer.kernel().read().to_vector<float>();
  EXPECT_NEAR(k[0], 2.f, 1e-3);
  EXPECT_NEAR(k[1], -3.f, 1e-3);
  EXPECT_NEAR(layer.bias().read().to_vector<float>()[0], 0.5f, 1e-3);
}

// ---- initializers ----

TEST(InitializerTest, FansAsKeras) {
  EXPECT_EQ(initializers::compute_fans(Shape{}), std::make_pair(1.0, 1.0));
  EXPECT_EQ(initializers::compute_fans(Shape{7}), std::make_pair(7.0, 7.0));
  EXPECT_EQ(initializers::compute_fans(Shape{4, 3}), std::make_pair(4.0, 3.0));
  // A conv kernel [3, 3, 16, 32]: receptive field 9.
  EXPECT_EQ(initializers::compute_fans(Shape{3, 3, 16, 32}), std::make_pair(144.0, 288.0));
}

TEST(InitializerTest, ValuesRangesAndSeeds) {
  set_seed(1);
  const Tensor g = initializers::glorot_uniform(Shape{200, 100}, DType::kFloat32, 4);
  set_seed(1);
  EXPECT_EQ(initializers::glorot_uniform(Shape{200, 100}, DType::kFloat32, 4).to_vector<float>(), g.to_vector<float>());
  EXPECT_EQ(g.shape(), (Shape{200, 100}));
  const float limit = std::sqrt(6.f / 300.f);
  EXPECT_LE(reduce_max(abs(g)).item<float>(), limit);
  EXPECT_GT(reduce_max(abs(g)).item<float>(), 0.95f * limit);

  // he_normal: truncated at 2 stddev of the underlying normal, and the truncation correction
  // gives the samples stddev sqrt(2 / fan_in).
  const Tensor h = initializers::he_normal(Shape{500, 200}, DType::kFloat64, 9);
  const double want_std = std::sqrt(2.0 / 500);
  const double sample_std = std::sqrt(reduce_mean(square(h)).item<double>());
  EXPECT_NEAR(sample_std, want_std, 0.01 * want_std);
  EXPECT_LE(reduce_max(abs(h)).item<double>(), 2 * want_std / 0.87962566103423978 + 1e-12);
  EXPECT_NEAR(reduce_mean(h).item<double>(), 0.0, 0.01 * want_std);

  const Tensor gn = initializers::glorot_normal(Shape{400, 600}, DType::kFloat64, 2);
  EXPECT_NEAR(std::sqrt(reduce_mean(square(gn)).item<double>()), std::sqrt(2.0 / 1000), 0.01 * std::sqrt(0.002));
  const Tensor hu = initializers::he_uniform(Shape{50, 10}, DType::kFloat32, 3);
  EXPECT_LE(reduce_max(abs(hu)).item<float>(), std::sqrt(6.f / 50.f));
  set_seed(std::nullopt);

  EXPECT_THAT(initializers::zeros(Shape{2}, DType::kFloat64).to_vector<double>(), ElementsAre(0.0, 0.0));
  EXPECT_THAT(initializers::ones(Shape{2}, DType::kInt32).to_vector<int32_t>(), ElementsAre(1, 1));
  const Tensor c = initializers::constant(0.25)(Shape{1, 2}, DType::kFloat32, std::nullopt);
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(0.25f, 0.25f));
}

}  // namespace
}  // namespace tapeflow::nn
