// Training in a graph: optimizer.minimize(loss) returns a train op; running it N times in a
// Session must leave the variables (and slots) where N eager steps of the same optimizer do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "graph/function.h"
#include "graph/gradients.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

// |a - b| <= tol * max(|b|, 1e-3), elementwise: relative, with a floor for values near 0.
void expect_rel_close(const Tensor& actual, const Tensor& expected, double tol = 1e-5) {
  ASSERT_EQ(actual.shape(), expected.shape());
  const std::vector<float> a = actual.to_vector<float>();
  const std::vector<float> e = expected.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], e[i], tol * std::max(std::abs(double(e[i])), 1e-3)) << "element " << i;
}

// y = x [2, -1, 0.5] + 0.3 on 8 fixed points.
const Tensor& data_x() {
  static const Tensor x = {{1.f, 0.f, 2.f},  {0.5f, 1.f, -1.f}, {-1.f, 2.f, 0.f},  {0.f, 0.f, 1.f},
                           {2.f, 1.f, 1.f},  {-0.5f, -1.f, 3.f}, {1.f, 1.f, -2.f}, {0.f, -2.f, 0.5f}};
  return x;
}
const Tensor& data_y() {
  static const Tensor y = [] {
    ContextGuard eager(&eager_context());  // concrete, even when first asked inside a graph
    return add(matmul(data_x(), Tensor({{2.f}, {-1.f}, {0.5f}})), 0.3f);
  }();
  return y;
}

Tensor loss_of(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b) {
  return reduce_mean(square(matmul(x, w) + b - y));
}

using MakeOptimizer = std::function<std::unique_ptr<nn::Optimizer>()>;

struct Trained {
  Tensor w, b;
};

Trained train_eagerly(const MakeOptimizer& make, int steps) {
  auto opt = make();
  Variable w(zeros({3, 1}), "w"), b(zeros({1}), "b");
  for (int i = 0; i < steps; ++i) opt->minimize([&] { return loss_of(data_x(), data_y(), w, b); }, {w, b});
  return {w.read(), b.read()};
}

struct GraphRun {
  Trained trained;
  int64_t iterations = 0;
};

GraphRun train_in_graph(const MakeOptimizer& make, int steps) {
  auto opt = make();
  Graph g;
  Tensor x, y;
  Operation train, init;
  std::optional<Variable> w, b;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {8, 3}, "x");
    y = placeholder(DType::kFloat32, {8, 1}, "y");
    w.emplace(zeros({3, 1}), "w");
    b.emplace(zeros({1}), "b");
    train = opt->minimize(loss_of(x, y, *w, *b));
    init = global_variables_initializer();
  }
  Session sess(g);
  sess.run(init);
  for (int i = 0; i < steps; ++i) sess.run(train, {{x, data_x()}, {y, data_y()}});
  GraphRun run;
  run.trained = {sess.run(*w), sess.run(*b)};
  run.iterations = sess.run(*opt->iterations_variable(g)).item<int64_t>();
  EXPECT_EQ(opt->iterations(), 0);  // the eager counter does not count graph steps
  return run;
}

void expect_same_training(const MakeOptimizer& make, int steps) {
  const Trained eager = train_eagerly(make, steps);
  const GraphRun graph = train_in_graph(make, steps);
  expect_rel_close(graph.trained.w, eager.w);
  expect_rel_close(graph.trained.b, eager.b);
  EXPECT_EQ(graph.iterations, steps);
}

TEST(TrainGraphTest, SgdMatchesEagerTraining) {
  expect_same_training([] { return std::make_unique<nn::SGD>(0.05); }, 25);
}

TEST(TrainGraphTest, MomentumAndNesterovMatchEagerTraining) {
  expect_same_training([] { return std::make_unique<nn::SGD>(0.02, 0.9); }, 25);
  expect_same_training([] { return std::make_unique<nn::SGD>(0.02, 0.9, /*nesterov=*/true); }, 25);
}

TEST(TrainGraphTest, AdamMatchesEagerTrainingWithItsBiasCorrection) {
  expect_same_training([] { return std::make_unique<nn::Adam>(0.1); }, 30);
}

TEST(TrainGraphTest, RmspropMatchesEagerTraining) {
  expect_same_training([] { return std::make_unique<nn::RMSprop>(0.01, 0.9, 0.5, 1e-7, /*centered=*/true); }, 25);
}

TEST(TrainGraphTest, SchedulesAreEvaluatedAtTheGraphStep) {
  expect_same_training(
      [] { return std::make_unique<nn::SGD>(nn::ExponentialDecay(0.08, 5, 0.5, /*staircase=*/true)); }, 17);
  expect_same_training([] { return std::make_unique<nn::SGD>(nn::ExponentialDecay(0.08, 4, 0.7)); }, 13);
  expect_same_training(
      [] { return std::make_unique<nn::Adam>(nn::PiecewiseConstantDecay({3, 8}, {0.2, 0.05, 0.01})); }, 12);
}

TEST(TrainGraphTest, TheTrainOpAndSlotsAreNamedAndInitializedAfterMinimize) {
  nn::Adam opt(0.1);
  Graph g;
  Tensor loss;
  Operation train, early_init, init;
  std::optional<Variable> w, b;
  {
    auto scope = g.as_default();
    w.emplace(zeros({3, 1}), "w");
    b.emplace(zeros({1}), "b");
    loss = loss_of(constant(data_x(), "x"), constant(data_y(), "y"), *w, *b);
    early_init = global_variables_initializer();
    train = opt.minimize(loss);
    init = global_variables_initializer();
  }
  EXPECT_EQ(train.name(), "Adam/train");
  EXPECT_EQ(opt.iterations_variable(g)->name(), "Adam/iterations");
  ASSERT_TRUE(opt.get_slot(*w, "m").has_value());
  EXPECT_EQ(opt.get_slot(*w, "m")->name(), "w/m");
  EXPECT_EQ(opt.get_slot(*b, "v")->name(), "b/v");
  EXPECT_EQ(opt.variables().size(), 4u);
  std::vector<std::string> globals;
  for (const Variable& v : g.global_variables()) globals.push_back(v.name());
  EXPECT_THAT(globals, ElementsAre("w", "b", "Adam/iterations", "w/m", "w/v", "b/m", "b/v"));
  EXPECT_EQ(g.trainable_variables().size(), 2u);
  // Only the weight's product: the constant input needs no gradient.
  EXPECT_EQ(g.get_operation_by_name("gradients/MatMul_grad/MatMul").inputs()[0].name(), "x:0");
  EXPECT_THROW(g.get_operation_by_name("gradients/MatMul_grad/MatMul_1"), NotFoundError);

  Session sess(g);
  sess.run(early_init);  // made before minimize: no slots
  try {
    sess.run(train);
    FAIL() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'w/m'"));
  }
  sess.run(init);
  const float before = sess.run(loss).item<float>();
  for (int i = 0; i < 20; ++i) sess.run(train);
  EXPECT_LT(sess.run(loss).item<float>(), before / 4);
  // The slots follow the eager optimizer's slots too.
  nn::Adam eager_opt(0.1);
  Variable ew(zeros({3, 1}), "w"), eb(zeros({1}), "b");
  for (int i = 0; i < 20; ++i) eager_opt.minimize([&] { return loss_of(data_x(), data_y(), ew, eb); }, {ew, eb});
  expect_rel_close(sess.run(*opt.get_slot(*w, "m")), eager_opt.get_slot(ew, "m")->read());
  expect_rel_close(sess.run(*opt.get_slot(*w, "v")), eager_opt.get_slot(ew, "v")->read());

  // Each Session trains its own copy; a second train op in the same graph shares the counter.
  Session other(g);
  other.run(init);
  other.run(train);
  EXPECT_EQ(other.run(*opt.iterations_variable(g)).item<int64_t>(), 1);
  EXPECT_EQ(sess.run(*opt.iterations_variable(g)).item<int64_t>(), 20);
}

TEST(TrainGraphTest, MinimizeTrainsOnlyTheGivenOrTrainableVariables) {
  Graph g;
  std::optional<Variable> w, b, frozen;
  Operation train_w, train_all;
  nn::SGD opt(0.1);
  {
    auto scope = g.as_default();
    w.emplace(Tensor({{1.f}}), "w");
    b.emplace(Tensor({0.f}), "b");
    frozen.emplace(Tensor(2.f), "frozen", /*trainable=*/false);
    // loss = (w + b - frozen)^2; d/dw = d/db = 2 (w + b - frozen).
    Tensor loss = reduce_sum(square(matmul(constant(Tensor({{1.f}})), *w) + *b - *frozen));
    train_w = opt.minimize(loss, {*w});
    train_all = opt.minimize(loss);
  }
  EXPECT_EQ(train_w.name(), "SGD/train");
  EXPECT_EQ(train_all.name(), "SGD_1/train");
  Session sess(g);
  sess.run(g.global_variables_initializer());
  sess.run(train_w);  // grad -2: w = 1.2, b stays
  EXPECT_FLOAT_EQ(sess.run(*w).item<float>(), 1.2f);
  EXPECT_FLOAT_EQ(sess.run(*b).item<float>(), 0.f);
  sess.run(train_all);  // grad -1.6 for both
  EXPECT_FLOAT_EQ(sess.run(*w).item<float>(), 1.36f);
  EXPECT_FLOAT_EQ(sess.run(*b).item<float>(), 0.16f);
  EXPECT_FLOAT_EQ(sess.run(*frozen).item<float>(), 2.f);
  // Both train ops count steps in the optimizer's one iterations variable of this graph.
  EXPECT_EQ(sess.run(*opt.iterations_variable(g)).item<int64_t>(), 2);

  // A variable the loss does not depend on has no gradient and is skipped.
  Graph g2;
  std::optional<Variable> v;
  Operation step;
  {
    auto scope = g2.as_default();
    v.emplace(Tensor({3.f, -1.f}), "v");
    Variable untouched(Tensor(5.f), "untouched");
    step = opt.minimize(reduce_sum(square(v->read())), {*v, untouched});
  }
  Session s2(g2);
  s2.run(g2.global_variables_initializer());
  s2.run(step);
  EXPECT_THAT(s2.run(*v).to_vector<float>(), ElementsAre(FloatNear(2.4f, 1e-6), FloatNear(-0.8f, 1e-6)));
  EXPECT_EQ(s2.run(*opt.iterations_variable(g2)).item<int64_t>(), 1);
}

TEST(TrainGraphTest, MinimizeErrors) {
  nn::SGD opt(0.1);
  EXPECT_THAT(error_of([&] { opt.minimize(Tensor(1.f)); }), HasSubstr("[minimize] the loss is a concrete tensor"));
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {2}, "x");
  EXPECT_THAT(error_of([&] { opt.minimize(reduce_sum(square(x))); }), HasSubstr("there is nothing to train"));
  Variable w(Tensor({1.f, 2.f}), "w");
  EXPECT_THAT(error_of([&] { opt.minimize(reduce_sum(square(x))); }),
              HasSubstr("[apply_gradients] No gradients provided for any variable: [w]"));
  EXPECT_THAT(error_of([&] { opt.minimize(cast(reduce_sum(x * w), DType::kInt32)); }),
              HasSubstr("must be floating point"));
  Tensor g_bad = placeholder(DType::kFloat32, {3}, "g_bad");
  EXPECT_THAT(error_of([&] { opt.apply_gradients({{g_bad, w}}); }),
              HasSubstr("the gradient for variable 'w' has dtype float32 and shape [3]"));
}

TEST(TrainGraphTest, ApplyGradientsInAGraphReturnsTheTrainOp) {
  // Gradient clipping between gradients() and apply_gradients, as TensorFlow 1 programs do.
  nn::SGD opt(0.5);
  Graph g;
  std::optional<Variable> w;
  Operation train;
  {
    auto scope = g.as_default();
    w.emplace(Tensor({4.f, -4.f}), "w");
    Tensor loss = reduce_sum(square(w->read()));
    Tensor grad = gradients({loss}, {*w})[0];
    // (clip_by_value with constant bounds fails in a graph today: see the DISABLED_ test below.)
    train = opt.apply_gradients({{minimum(maximum(grad, -1.f), 1.f), *w}});
  }
  EXPECT_TRUE(train.defined());
  Session sess(g);
  sess.run(g.global_variables_initializer());
  sess.run(train);
  EXPECT_THAT(sess.run(*w).to_vector<float>(), ElementsAre(3.5f, -3.5f));
  // Eagerly nothing is returned.
  Variable e(Tensor(1.f), "e");
  EXPECT_FALSE(opt.apply_gradients({{Tensor(1.f), e}}).defined());
}

TEST(TrainGraphTest, ATracedStepUpdatesOnEveryCallWithThatStepsBiasCorrection) {
  nn::Adam eager_opt(0.1), traced_opt(0.1);
  Variable ew(zeros({3, 1}), "w"), eb(zeros({1}), "b");
  Variable tw(zeros({3, 1}), "w"), tb(zeros({1}), "b");
  auto train_step = function([&](const Tensor& x, const Tensor& y) {
    GradientTape tape;
    Tensor loss = loss_of(x, y, tw, tb);
    traced_opt.apply_gradients(tape.gradient(loss, {tw, tb}), {tw, tb});
    return loss;
  });
  for (int i = 0; i < 15; ++i) {
    const float traced_loss = train_step(data_x(), data_y()).item<float>();
    const float eager_loss = eager_opt.minimize([&] { return loss_of(data_x(), data_y(), ew, eb); }, {ew, eb}).item<float>();
    EXPECT_NEAR(traced_loss, eager_loss, 1e-5 * std::abs(eager_loss)) << "step " << i;
  }
  EXPECT_EQ(train_step.trace_count(), 1);
  expect_rel_close(tw.read(), ew.read());
  expect_rel_close(tb.read(), eb.read());
  // Slots and the step counter are eager variables the trace captured.
  ASSERT_TRUE(traced_opt.get_slot(tw, "m").has_value());
  EXPECT_EQ(traced_opt.get_slot(tw, "m")->graph_info(), nullptr);
  expect_rel_close(traced_opt.get_slot(tw, "v")->read(), eager_opt.get_slot(ew, "v")->read());
  ASSERT_TRUE(traced_opt.traced_iterations().has_value());
  EXPECT_EQ(traced_opt.traced_iterations()->read().item<int64_t>(), 15);
  EXPECT_EQ(traced_opt.iterations(), 0);
}

// Bug (eager/ops/binary.cc, clip_by_value): its lo <= hi check runs greater(lo, hi) and reads
// the result on the host; in a graph greater() builds a node, and to_vector() on the symbolic
// result throws "[tensor] A symbolic (graph) tensor has no value". Fix: run the check eagerly,
//   [&] { ContextGuard eager(&eager_context()); return greater(tlo, thi, loc).to_vector<bool>()[0]; }()
// (or compare cast(tlo, kFloat64).item<double>() > cast(thi, ...) under the same guard).
TEST(TrainGraphTest, ClipByValueWithConstantBoundsBuildsInAGraph) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {2}, "x");
  Tensor clipped = clip_by_value(x, -1.f, 1.f);
  Session sess(g);
  EXPECT_THAT(sess.run(clipped, {{x, {-3.f, 0.5f}}}).to_vector<float>(), ElementsAre(-1.f, 0.5f));
}

TEST(TrainGraphTest, ACustomScheduleWithoutAGraphFormIsReported) {
  struct HostOnly : nn::LearningRateSchedule {
    double operator()(int64_t step) const override { return 0.1 / double(step + 1); }
  };
  nn::SGD opt{HostOnly()};
  Graph g;
  auto scope = g.as_default();
  Variable w(Tensor(1.f), "w");
  try {
    opt.minimize(square(w.read()));
    FAIL() << "no error";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no graph form"));
  }
}

}  // namespace
}  // namespace tapeflow
