#include "nn/optimizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <thread>

#include "core/errors.h"
#include "devices/device_manager.h"
#include "eager/context.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"
#include "nn/adam.h"
#include "nn/rmsprop.h"
#include "nn/sgd.h"
#include "tests/support/test_util.h"

namespace tapeflow::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;

using tapeflow::error_of;

// The gradients of the three-step tests: g1 = 0.5, g2 = 2, g3 = -1, applied to a float64 scalar
// variable starting at 1 with learning rate 0.1.
const double kGrads[] = {0.5, 2.0, -1.0};

// Runs three steps on w = 1.0 and returns w after each.
std::vector<double> three_steps(Optimizer& opt) {
  Variable w(Tensor(1.0), "w");
  std::vector<double> out;
  for (double g : kGrads) {
    opt.apply_gradients({{Tensor(g), w}});
    out.push_back(w.read().item<double>());
  }
  return out;
}

void expect_steps(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "after step " << i + 1;
}

// ---- SGD ----

TEST(SGDTest, PlainStepsFloat32) {
  SGD opt(0.1);
  Variable w(Tensor{1.f, 2.f}, "w");
  opt.apply_gradients({{Tensor{0.5f, -1.f}, w}});
  // w - lr * g, in float32 as Keras casts lr to the variable's dtype.
  EXPECT_THAT(w.read().to_vector<float>(), ElementsAre(1.f - 0.5f * 0.1f, 2.f - (-1.f * 0.1f)));
  opt.apply_gradients({{Tensor{1.f, 1.f}, w}});
  EXPECT_THAT(w.read().to_vector<float>(), ElementsAre((1.f - 0.5f * 0.1f) - 0.1f, (2.f + 0.1f) - 0.1f));
  EXPECT_EQ(opt.iterations(), 2);
  EXPECT_TRUE(opt.variables().empty());  // no momentum, no slots
  EXPECT_EQ(w.dtype(), DType::kFloat32);
}

TEST(SGDTest, MomentumSteps) {
  SGD opt(0.1, 0.9);
  // velocity = 0.9 v - 0.1 g; w += velocity
  // v1 = -0.05                   w1 = 1 - 0.05 = 0.95
  // v2 = -0.045 - 0.2 = -0.245   w2 = 0.95 - 0.245 = 0.705
  // v3 = -0.2205 + 0.1 = -0.1205 w3 = 0.705 - 0.1205 = 0.5845
  expect_steps(three_steps(opt), {0.95, 0.705, 0.5845});
}

TEST(SGDTest, NesterovSteps) {
  SGD opt(0.1, 0.9, /*nesterov=*/true);
  // velocity as above; w += 0.9 v_new - 0.1 g
  // w1 = 1 + (0.9 * -0.05 - 0.05)       = 1 - 0.095     = 0.905
  // w2 = 0.905 + (0.9 * -0.245 - 0.2)   = 0.905 - 0.4205 = 0.4845
  // w3 = 0.4845 + (0.9 * -0.1205 + 0.1) = 0.4845 - 0.00845 = 0.47605
  expect_steps(three_steps(opt), {0.905, 0.4845, 0.47605});
}

TEST(SGDTest, MomentumSlotIsNamedNonTrainableAndOnTheVariable) {
  SGD opt(0.1, 0.9);
  Variable w(Tensor{1.0, 2.0}, "w");
  EXPECT_FALSE(opt.get_slot(w, "momentum").has_value());  // lazy
  opt.apply_gradients({{Tensor{1.0, -1.0}, w}});
  auto m = opt.get_slot(w, "momentum");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->name(), "w/momentum");
  EXPECT_FALSE(m->trainable());
  EXPECT_EQ(m->shape(), (Shape{2}));
  EXPECT_THAT(m->read().to_vector<double>(), ElementsAre(-0.1, 0.1));
  EXPECT_FALSE(opt.get_slot(w, "m").has_value());
  ASSERT_EQ(opt.variables().size(), 1u);
  EXPECT_EQ(opt.variables()[0].id(), m->id());
  // The second step reuses the slot.
  opt.apply_gradients({{Tensor{1.0, -1.0}, w}});
  EXPECT_EQ(opt.variables().size(), 1u);
}

// ---- Adam ----

TEST(AdamTest, Steps) {
  Adam opt(0.1);
  // lr_t = 0.1 * sqrt(1 - 0.999^t) / (1 - 0.9^t); m = 0.9 m + 0.1 g; v = 0.999 v + 0.001 g^2
  // t=1: m = 0.05, v = 0.00025, lr_t = 0.1 * sqrt(0.001) / 0.1 = 0.0316227766
  //      w1 = 1 - 0.0316227766 * 0.05 / (0.0158113883 + 1e-7) = 0.900000632451532
  // t=2: m = 0.045 + 0.2 = 0.245, v = 0.00024975 + 0.004 = 0.00424975,
  //      lr_t = 0.1 * sqrt(0.001999) / 0.19,  w2 = 0.811563119054876
  // t=3: m = 0.2205 - 0.1 = 0.1205, v = 0.00424550025 + 0.001 = 0.00524550025,
  //      lr_t = 0.1 * sqrt(0.002997001) / 0.271,  w3 = 0.7779532249377652
  const std::vector<double> got = three_steps(opt);
  expect_steps(got, {0.900000632451532, 0.811563119054876, 0.7779532249377652});
  // The same arithmetic, written out for step 2.
  const double lr2 = 0.1 * std::sqrt(1 - 0.999 * 0.999) / (1 - 0.9 * 0.9);
  EXPECT_NEAR(got[1], got[0] - lr2 * 0.245 / (std::sqrt(0.00424975) + 1e-7), 1e-12);
}

TEST(AdamTest, SlotsAndFloat32) {
  Adam opt(0.01);
  Variable w(Tensor{{1.f, -1.f}}, "layer/w");
  opt.apply_gradients({{Tensor{{2.f, -3.f}}, w}});
  auto m = opt.get_slot(w, "m");
  auto v = opt.get_slot(w, "v");
  ASSERT_TRUE(m && v);
  EXPECT_EQ(m->name(), "layer/w/m");
  EXPECT_EQ(v->name(), "layer/w/v");
  EXPECT_EQ(m->dtype(), DType::kFloat32);
  // m = 0.1 g, v = 0.001 g^2, and the first step moves each weight by about lr * sign(g).
  const auto mv = m->read().to_vector<float>();
  EXPECT_FLOAT_EQ(mv[0], 0.2f);
  EXPECT_FLOAT_EQ(mv[1], -0.3f);
  const auto vv = v->read().to_vector<float>();
  EXPECT_FLOAT_EQ(vv[0], 0.004f);
  EXPECT_FLOAT_EQ(vv[1], 0.009f);
  const auto wv = w.read().to_vector<float>();
  EXPECT_NEAR(wv[0], 1.f - 0.01f, 1e-6);
  EXPECT_NEAR(wv[1], -1.f + 0.01f, 1e-6);
}

// ---- RMSprop ----

TEST(RMSpropTest, Steps) {
  RMSprop opt(0.1);
  // velocity = 0.9 vel + 0.1 g^2; w -= 0.1 g / sqrt(vel + 1e-7)
  // t=1: vel = 0.025                         w1 = 1 - 0.05 / sqrt(0.0250001)    = 0.6837728664367967
  // t=2: vel = 0.0225 + 0.4 = 0.4225         w2 = w1 - 0.2 / sqrt(0.4225001)    = 0.37608059515777337
  // t=3: vel = 0.38025 + 0.1 = 0.48025       w3 = w2 + 0.1 / sqrt(0.48025 + 1e-7) = 0.5203805742000138
  const std::vector<double> got = three_steps(opt);
  expect_steps(got, {0.6837728664367967, 0.37608059515777337, 0.5203805742000138});
  EXPECT_NEAR(got[0], 1 - 0.1 * 0.5 / std::sqrt(0.025 + 1e-7), 1e-15);
}

TEST(RMSpropTest, MomentumSteps) {
  RMSprop opt(0.1, 0.9, /*momentum=*/0.5);
  // increments as above: inc1 = 0.3162271, inc2 = 0.3076923, inc3 = -0.1442999
  // mom1 = inc1, mom2 = 0.5 mom1 + inc2, mom3 = 0.5 mom2 + inc3; w -= mom
  expect_steps(three_steps(opt), {0.6837728664367967, 0.2179670283761717, 0.12936408838809973});
}

TEST(RMSpropTest, CenteredSteps) {
  RMSprop opt(0.1, 0.9, 0.0, 1e-7, /*centered=*/true);
  // average = 0.9 avg + 0.1 g; denominator = vel - avg^2 + 1e-7
  // t=1: vel = 0.025, avg = 0.05, den = 0.025 - 0.0025 + 1e-7   w1 = 1 - 0.05 / sqrt(0.0225001)
  // t=2: vel = 0.4225, avg = 0.245, den = 0.4225 - 0.060025 + 1e-7
  // t=3: vel = 0.48025, avg = 0.1205, den = 0.48025 - 0.01452025 + 1e-7
  const std::vector<double> got = three_steps(opt);
  expect_steps(got, {0.6666674074049382, 0.3344740786714488, 0.4810062425447348});
  EXPECT_NEAR(got[0], 1 - 0.05 / std::sqrt(0.0225001), 1e-15);
}

TEST(RMSpropTest, CenteredMomentumStepsAndSlots) {
  RMSprop opt(0.1, 0.9, 0.5, 1e-7, true);
  Variable w(Tensor(1.0), "w");
  std::vector<double> got;
  for (double g : kGrads) {
    opt.apply_gradients({{Tensor(g), w}});
    got.push_back(w.read().item<double>());
  }
  expect_steps(got, {0.6666674074049382, 0.1678077823739179, 0.06491013373169374});
  std::vector<std::string> names;
  for (const Variable& v : opt.variables()) names.push_back(v.name());
  EXPECT_THAT(names, ElementsAre("w/velocity", "w/average_gradient", "w/momentum"));
  EXPECT_NEAR(opt.get_slot(w, "average_gradient")->read().item<double>(), 0.1205, 1e-15);
}

// ---- convergence ----

// Minimises sum((w - target)^2), whose gradient is 2 (w - target).
double distance_after(Optimizer& opt, int steps) {
  const Tensor target = {3.f, -2.f, 0.5f};
  Variable w(zeros({3}), "w");
  for (int i = 0; i < steps; ++i) opt.apply_gradients({{(w - target) * 2, w}});
  return reduce_max(abs(w - target)).item<float>();
}

TEST(OptimizerTest, ConvergesOnAQuadratic) {
  SGD sgd(0.1);
  EXPECT_LT(distance_after(sgd, 100), 1e-5);
  SGD momentum(0.05, 0.9);
  EXPECT_LT(distance_after(momentum, 300), 1e-4);
  SGD nesterov(0.05, 0.9, true);
  EXPECT_LT(distance_after(nesterov, 300), 1e-4);
  Adam adam(0.1);
  EXPECT_LT(distance_after(adam, 500), 1e-3);
  RMSprop rms(0.01);
  EXPECT_LT(distance_after(rms, 600), 1e-2);
  RMSprop centered(0.01, 0.9, 0.5, 1e-7, true);
  EXPECT_LT(distance_after(centered, 600), 1e-2);
}

// ---- the base class ----

TEST(OptimizerTest, SkipsUndefinedGradients) {
  SGD opt(0.1, 0.9);
  Variable a(Tensor{1.0}, "a");
  Variable b(Tensor{5.0}, "b");
  opt.apply_gradients({{Tensor(), a}, {Tensor{1.0}, b}});
  EXPECT_EQ(a.read().item<double>(), 1.0);
  EXPECT_NEAR(b.read().item<double>(), 4.9, 1e-15);
  EXPECT_FALSE(opt.get_slot(a, "momentum").has_value());  // no slot for a skipped variable
  EXPECT_TRUE(opt.get_slot(b, "momentum").has_value());
  EXPECT_EQ(opt.iterations(), 1);
}

TEST(OptimizerTest, NoGradientsAtAllIsAnError) {
  SGD opt(0.1);
  Variable a(Tensor{1.0}, "dense/kernel");
  Variable b(Tensor{5.0}, "dense/bias");
  const std::string msg = error_of([&] { opt.apply_gradients({{Tensor(), a}, {Tensor(), b}}); });
  EXPECT_THAT(msg, HasSubstr("[apply_gradients] No gradients provided for any variable: [dense/kernel, dense/bias]"));
  EXPECT_THAT(error_of([&] { opt.apply_gradients(GradientsAndVariables{}); }), HasSubstr("No gradients provided"));
  EXPECT_EQ(opt.iterations(), 0);
}

TEST(OptimizerTest, MismatchedGradientsAreErrorsAndChangeNothing) {
  Adam opt(0.1);
  Variable a(Tensor{1.0, 2.0}, "a");
  Variable b(Tensor{{1.f, 2.f}}, "bias");
  // a's gradient is fine, b's has the wrong shape: nothing is updated, no slot is made.
  std::string msg = error_of([&] { opt.apply_gradients({{Tensor{1.0, 1.0}, a}, {Tensor{1.f, 2.f}, b}}); });
  EXPECT_THAT(msg, HasSubstr("[apply_gradients]"));
  EXPECT_THAT(msg, HasSubstr("variable 'bias'"));
  EXPECT_THAT(msg, HasSubstr("shape [2]"));
  EXPECT_THAT(msg, HasSubstr("shape [1,2]"));
  EXPECT_THAT(a.read().to_vector<double>(), ElementsAre(1.0, 2.0));
  EXPECT_TRUE(opt.variables().empty());
  EXPECT_EQ(opt.iterations(), 0);

  msg = error_of([&] { opt.apply_gradients({{Tensor{1.f, 1.f}, a}}); });
  EXPECT_THAT(msg, HasSubstr("variable 'a' has dtype float32"));
  EXPECT_THAT(msg, HasSubstr("the variable has dtype float64"));

  Variable count(Tensor{1, 2}, "count");
  msg = error_of([&] { opt.apply_gradients({{Tensor{1, 1}, count}}); });
  EXPECT_THAT(msg, HasSubstr("Variable 'count' has dtype int32"));
  EXPECT_THAT(msg, HasSubstr("floating-point"));

  msg = error_of([&] { opt.apply_gradients({Tensor{1.0, 1.0}}, {a, a}); });
  EXPECT_THAT(msg, HasSubstr("1 gradients for 2 variables"));
  EXPECT_EQ(opt.iterations(), 0);
}

TEST(OptimizerTest, ListFormMatchesPairs) {
  SGD opt(0.5);
  Variable a(Tensor{1.0}, "a");
  Variable b(Tensor{2.0}, "b");
  opt.apply_gradients({Tensor{1.0}, Tensor()}, {a, b});
  EXPECT_EQ(a.read().item<double>(), 0.5);
  EXPECT_EQ(b.read().item<double>(), 2.0);
}

TEST(OptimizerTest, HyperparameterErrors) {
  EXPECT_THAT(error_of([] { SGD(0.1, 1.5); }), HasSubstr("[SGD] momentum must be in [0, 1], got 1.5"));
  EXPECT_THAT(error_of([] { SGD(0.1, -0.1); }), HasSubstr("momentum must be in [0, 1]"));
  EXPECT_THAT(error_of([] { Adam(0.1, 1.0); }), HasSubstr("[Adam] beta_1 must be in [0, 1), got 1"));
  EXPECT_THAT(error_of([] { Adam(0.1, 0.9, -0.5); }), HasSubstr("beta_2 must be in [0, 1)"));
  EXPECT_THAT(error_of([] { Adam(0.1, 0.9, 0.999, -1); }), HasSubstr("epsilon must be in [0, inf)"));
  EXPECT_THAT(error_of([] { RMSprop(0.1, 1.0); }), HasSubstr("[RMSprop] rho must be in [0, 1)"));
  EXPECT_THAT(error_of([] { RMSprop(0.1, 0.9, 2.0); }), HasSubstr("[RMSprop] momentum must be in [0, 1]"));
}

TEST(OptimizerTest, UpdatesRunOnTheVariablesDevice) {
  DeviceManager::global().set_num_cpu_devices(2);
  std::unique_ptr<Variable> w;
  {
    auto scope = device("/device:CPU:1");
    w = std::make_unique<Variable>(Tensor{1.f, 2.f}, "w");
  }
  Adam opt(0.1);
  opt.apply_gradients({{Tensor{1.f, 1.f}, *w}});  // the gradient lives on CPU:0
  EXPECT_THAT(w->read().device_name(), EndsWith("CPU:1"));
  EXPECT_THAT(opt.get_slot(*w, "m")->device()->name(), EndsWith("CPU:1"));
  EXPECT_THAT(opt.get_slot(*w, "v")->read().device_name(), EndsWith("CPU:1"));
  EXPECT_NEAR(w->read().to_vector<float>()[0], 0.9f, 1e-6);
}

TEST(OptimizerTest, ConcurrentCallsAreSerialised) {
  SGD opt(1.0);
  Variable w(Tensor(0.0), "w");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) opt.apply_gradients({{Tensor(-1.0), w}});
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(opt.iterations(), 100);
  EXPECT_EQ(w.read().item<double>(), 100.0);
}

// For checkpoints: the slots each optimizer keeps, made ahead of the first update, and the step
// counter set from outside (saving/saver.h restores both).
TEST(OptimizerTest, SlotNamesBuildAndSetIterations) {
  EXPECT_THAT(Adam(0.1).slot_names(), ElementsAre("m", "v"));
  EXPECT_TRUE(SGD(0.1).slot_names().empty());
  EXPECT_THAT(SGD(0.1, 0.9).slot_names(), ElementsAre("momentum"));
  EXPECT_THAT(RMSprop(0.1).slot_names(), ElementsAre("velocity"));
  EXPECT_THAT(RMSprop(0.1, 0.9, 0.5, 1e-7, /*centered=*/true).slot_names(),
              ElementsAre("velocity", "average_gradient", "momentum"));

  Adam opt(0.1);
  Variable w(Tensor({1.f, 2.f}), "w");
  opt.build({w});
  ASSERT_TRUE(opt.get_slot(w, "m").has_value());
  EXPECT_EQ(opt.get_slot(w, "v")->read().to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(opt.get_slot(w, "m")->name(), "w/m");
  opt.get_slot(w, "m")->assign(Tensor({3.f, 4.f}));
  opt.build({w});  // existing slots are kept
  EXPECT_EQ(opt.get_slot(w, "m")->read().to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(opt.variables().size(), 2u);

  opt.set_iterations(41);
  EXPECT_EQ(opt.iterations(), 41);
  opt.apply_gradients({{Tensor({1.f, 1.f}), w}});
  EXPECT_EQ(opt.iterations(), 42);
  EXPECT_THAT(error_of([&] { opt.set_iterations(-1); }), HasSubstr("[Adam] iterations must be >= 0, got -1"));
}

// ---- schedules ----

TEST(ScheduleTest, ExponentialDecayValues) {
  ExponentialDecay decay(0.1, 10, 0.5);
  EXPECT_DOUBLE_EQ(decay(0), 0.1);
  EXPECT_DOUBLE_EQ(decay(5), 0.1 * std::sqrt(0.5));  // 0.5^(5/10)
  EXPECT_DOUBLE_EQ(decay(10), 0.05);
  EXPECT_DOUBLE_EQ(decay(25), 0.1 * std::pow(0.5, 2.5));
  ExponentialDecay stairs(0.1, 10, 0.5, /*staircase=*/true);
  EXPECT_DOUBLE_EQ(stairs(0), 0.1);
  EXPECT_DOUBLE_EQ(stairs(9), 0.1);
  EXPECT_DOUBLE_EQ(stairs(10), 0.05);
  EXPECT_DOUBLE_EQ(stairs(25), 0.025);
  EXPECT_THAT(error_of([] { ExponentialDecay(0.1, 0, 0.5); }),
              HasSubstr("[ExponentialDecay] decay_steps must be positive, got 0"));
}

TEST(ScheduleTest, PiecewiseConstantDecayValues) {
  PiecewiseConstantDecay pw({10, 20}, {1.0, 0.5, 0.1});
  EXPECT_EQ(pw(0), 1.0);
  EXPECT_EQ(pw(10), 1.0);  // boundaries belong to the interval on their left
  EXPECT_EQ(pw(11), 0.5);
  EXPECT_EQ(pw(20), 0.5);
  EXPECT_EQ(pw(21), 0.1);
  EXPECT_EQ(pw(1000000), 0.1);
  EXPECT_THAT(error_of([] { PiecewiseConstantDecay({10}, {1.0}); }),
              HasSubstr("values must have one more element than boundaries, got 1 values and 1 boundaries"));
  EXPECT_THAT(error_of([] {
                PiecewiseConstantDecay({10, 10}, {1.0, 0.5, 0.1});
              }),
              HasSubstr("boundaries must be strictly increasing, got [10, 10]"));
}

TEST(ScheduleTest, CosineDecayValues) {
  CosineDecay cosine(0.1, 100);
  EXPECT_DOUBLE_EQ(cosine(0), 0.1);
  EXPECT_NEAR(cosine(50), 0.05, 1e-15);              // half way down the half cosine
  EXPECT_NEAR(cosine(25), 0.1 * (0.5 + 0.5 * std::sqrt(0.5)), 1e-15);
  EXPECT_NEAR(cosine(100), 0.0, 1e-15);
  EXPECT_NEAR(cosine(1000), 0.0, 1e-15);             // stays at the floor after decay_steps
  CosineDecay floored(0.1, 100, /*alpha=*/0.2);
  EXPECT_NEAR(floored(100), 0.02, 1e-15);
  EXPECT_NEAR(floored(50), 0.1 * (0.8 * 0.5 + 0.2), 1e-15);
  // The graph form (float64 ops on the step tensor) gives the host's values.
  for (int64_t step : {0, 1, 25, 50, 99, 100, 250})
    EXPECT_NEAR(floored.at_step(Tensor(step)).item<double>(), floored(step), 1e-15) << "step " << step;
  EXPECT_THAT(error_of([] { CosineDecay(0.1, 0); }), HasSubstr("[CosineDecay] decay_steps must be positive, got 0"));
  EXPECT_THAT(error_of([] { CosineDecay(0.1, 10, 1.5); }), HasSubstr("[CosineDecay] alpha must be in [0, 1], got 1.5"));
}

TEST(ScheduleTest, OptimizerEvaluatesItsScheduleAtItsIteration) {
  // lr = 1 at step 0, 0.5 at steps 1 and 2, 0.25 after.
  SGD opt(PiecewiseConstantDecay({0, 2}, {1.0, 0.5, 0.25}));
  Variable w(Tensor(0.0), "w");
  EXPECT_EQ(opt.learning_rate(), 1.0);
  std::vector<double> got;
  for (int i = 0; i < 4; ++i) {
    opt.apply_gradients({{Tensor(-1.0), w}});
    got.push_back(w.read().item<double>());
  }
  // w = 0 + 1, + 0.5, + 0.5, + 0.25
  EXPECT_THAT(got, ElementsAre(1.0, 1.5, 2.0, 2.25));
  EXPECT_EQ(opt.learning_rate(), 0.25);
  opt.set_learning_rate(0.125);
  EXPECT_EQ(opt.learning_rate(), 0.125);

  // A shared schedule, and Adam with a decaying rate: step 1 uses 0.1, step 2 uses 0.05.
  auto shared = std::make_shared<ExponentialDecay>(0.1, 1, 0.5, true);
  Adam adam(shared);
  Variable v(Tensor(1.0), "v");
  adam.apply_gradients({{Tensor(0.5), v}});
  const double w1 = v.read().item<double>();
  EXPECT_NEAR(w1, 1 - 0.1 * std::sqrt(0.001) / 0.1 * 0.05 / (std::sqrt(0.00025) + 1e-7), 1e-12);
  EXPECT_DOUBLE_EQ(adam.learning_rate(), 0.05);
}

}  // namespace
}  // namespace tapeflow::nn
