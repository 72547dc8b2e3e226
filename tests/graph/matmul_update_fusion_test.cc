// Note [MatMul update]: MatMul -> Mul by a scalar -> AssignSub/AssignAdd runs as one kernel in
// a Session, with the values of the unfused ops; anything else about the pattern keeps it apart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

// The op types of the steps a traced run executed (a fused member records no step of its own).
std::multiset<std::string> executed_ops(Session& sess, const std::vector<Fetch>& fetches, const FeedList& feeds) {
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata md;
  sess.run(fetches, feeds, {}, &options, &md);
  std::multiset<std::string> ops;
  for (const NodeExecStats& n : md.step_stats.nodes) ops.insert(n.op);
  return ops;
}

struct DenseStep {
  Graph g;
  std::optional<Variable> w;
  Tensor x, dy, product, updated;
  Operation init;
  const Tensor w0 = random_normal({5, 3}, 0.0, 1.0, DType::kFloat32, 7);
  const Tensor xv = random_normal({8, 5}, 0.0, 1.0, DType::kFloat32, 8);
  const Tensor dyv = random_normal({8, 3}, 0.0, 1.0, DType::kFloat32, 9);

  // w -= lr x^T dy (subtract) or w += lr x^T dy, with lr on either side of the Mul.
  explicit DenseStep(bool subtract, bool scale_first = false) {
    auto scope = g.as_default();
    w.emplace(w0, "w");
    x = placeholder(DType::kFloat32, {8, 5}, "x");
    dy = placeholder(DType::kFloat32, {8, 3}, "dy");
    product = matmul(x, dy, /*transpose_a=*/true, false);
    const Tensor scaled = scale_first ? 0.1f * product : product * 0.1f;
    updated = subtract ? w->assign_sub(scaled) : w->assign_add(scaled);
    init = g.global_variables_initializer();
  }
  FeedList feeds() const {
    FeedList f;
    f.emplace_back(x, xv);
    f.emplace_back(dy, dyv);
    return f;
  }
};

TEST(MatMulUpdateFusionTest, ASgdStepOnDenseWeightsRunsAsOneKernel) {
  DenseStep step(/*subtract=*/true);
  Session sess(step.g);
  sess.run(step.init);
  const std::multiset<std::string> ops = executed_ops(sess, {step.updated}, step.feeds());
  EXPECT_EQ(ops.count("MatMul"), 0u);
  EXPECT_EQ(ops.count("Mul"), 0u);
  EXPECT_EQ(ops.count("AssignSubVariableOp"), 1u);
  // Two steps so far (the traced run updated w too): each reads the value the previous left.
  const Tensor delta = matmul(step.xv, step.dyv, true, false) * 0.1f;
  expect_close(sess.run(step.updated, step.feeds()), step.w0 - delta - delta, 1e-5);
  expect_close(sess.run(Fetch(*step.w)), step.w0 - delta - delta, 1e-5);
}

// Run as a target (nobody reads its result), the update waits for the commit and accumulates
// into the variable's own storage: no new buffer, the same values.
TEST(MatMulUpdateFusionTest, ATargetUpdateWritesTheVariableInPlaceAtTheCommit) {
  DenseStep step(/*subtract=*/true);
  Session sess(step.g);
  sess.run(step.init);
  const Operation update = producer(step.updated);
  // The initializer's value is the graph constant's, shared: the first update makes a new one.
  sess.run({}, step.feeds(), {update});
  const void* storage = sess.run(Fetch(*step.w)).device_tensor().data<float>();  // the fetch is let go
  sess.run({}, step.feeds(), {update});
  const Tensor after = sess.run(Fetch(*step.w));
  const Tensor delta = matmul(step.xv, step.dyv, true, false) * 0.1f;
  expect_close(after, step.w0 - delta - delta, 1e-5);
  EXPECT_EQ(after.device_tensor().data<float>(), storage);
}

// A captured eager variable, as a traced training step updates it.
TEST(MatMulUpdateFusionTest, ATracedStepUpdatesACapturedVariableInPlace) {
  Variable w(random_normal({6, 4}, 0.0, 1.0, DType::kFloat32, 21), "w");
  const Tensor w0 = w.read() * 1.f;  // a copy: w's own storage stays unshared
  auto train = function([&](const Tensor& x, const Tensor& dy) {
    w.assign_sub(matmul(x, dy, true, false) * 0.5f);
    return reduce_sum(dy);
  });
  const Tensor x = random_normal({3, 6}, 0.0, 1.0, DType::kFloat32, 22);
  const Tensor dy = random_normal({3, 4}, 0.0, 1.0, DType::kFloat32, 23);
  train(x, dy);  // traces and runs
  const void* storage = w.read().device_tensor().data<float>();
  train(x, dy);
  const Tensor delta = matmul(x, dy, true, false) * 0.5f;
  expect_close(w.read(), w0 - delta - delta, 1e-5);
  EXPECT_EQ(w.read().device_tensor().data<float>(), storage);
}

// apply_gradient_descent (nn::SGD's step) builds the same pattern in a graph, so a traced SGD
// step on dense weights still runs as one in-place MatMulUpdate.
TEST(MatMulUpdateFusionTest, ATracedApplyGradientDescentFusesWithItsProduct) {
  Variable w(random_normal({6, 4}, 0.0, 1.0, DType::kFloat32, 24), "w");
  const Tensor w0 = w.read() * 1.f;
  auto train = function([&](const Tensor& x, const Tensor& dy) {
    apply_gradient_descent(w, 0.5f, matmul(x, dy, true, false));
    return reduce_sum(dy);
  });
  const Tensor x = random_normal({3, 6}, 0.0, 1.0, DType::kFloat32, 25);
  const Tensor dy = random_normal({3, 4}, 0.0, 1.0, DType::kFloat32, 26);
  train(x, dy);
  const void* storage = w.read().device_tensor().data<float>();
  train(x, dy);
  const Tensor delta = matmul(x, dy, true, false) * 0.5f;
  expect_close(w.read(), w0 - delta - delta, 1e-5);
  EXPECT_EQ(w.read().device_tensor().data<float>(), storage);
  // While tracing too, a rate that is not a scalar is an error, not a broadcast update.
  auto bad = function([&](const Tensor& g) { return apply_gradient_descent(w, Tensor{0.1f, 0.2f, 0.3f, 0.4f}, g); });
  EXPECT_THAT([&] { bad(ones({6, 4})); },
              ::testing::ThrowsMessage<InvalidArgumentError>(::testing::HasSubstr("alpha's shape is [4]")));
  expect_close(w.read(), w0 - delta - delta, 1e-5);
}

// Another step of the run fails after the update's place in the plan: the variable is unchanged.
TEST(MatMulUpdateFusionTest, AFailedRunLeavesTheVariableAsItWas) {
  DenseStep step(/*subtract=*/true);
  Tensor numerator, denominator, quotient;
  {
    auto scope = step.g.as_default();
    numerator = placeholder(DType::kInt32, {2}, "numerator");
    denominator = placeholder(DType::kInt32, {2}, "denominator");
    quotient = floor_div(numerator, denominator);
  }
  Session sess(step.g);
  sess.run(step.init);
  FeedList feeds = step.feeds();
  feeds.emplace_back(numerator, Tensor{1, 2});
  feeds.emplace_back(denominator, Tensor{1, 0});
  EXPECT_THAT(error_of([&] { sess.run({quotient}, feeds, {producer(step.updated)}); }),
              ::testing::HasSubstr("Integer division by zero"));
  expect_close(sess.run(Fetch(*step.w)), step.w0, 0);
}

TEST(MatMulUpdateFusionTest, AnUninitializedVariableIsAFailedPreconditionAtTheCommit) {
  DenseStep step(/*subtract=*/true);
  Session sess(step.g);  // no initializer run
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { sess.run({}, step.feeds(), {producer(step.updated)}); }),
              ::testing::HasSubstr("Attempting to use uninitialized value w"));
  sess.run(step.init);  // nothing was written: the initial value is still there
  expect_close(sess.run(Fetch(*step.w)), step.w0, 0);
}

TEST(MatMulUpdateFusionTest, AssignAddWithTheScaleFirst) {
  DenseStep step(/*subtract=*/false, /*scale_first=*/true);
  Session sess(step.g);
  sess.run(step.init);
  const std::multiset<std::string> ops = executed_ops(sess, {step.updated}, step.feeds());
  EXPECT_EQ(ops.count("MatMul"), 0u);
  EXPECT_EQ(ops.count("AssignAddVariableOp"), 1u);
  const Tensor delta = 0.1f * matmul(step.xv, step.dyv, true, false);
  expect_close(sess.run(step.updated, step.feeds()), step.w0 + delta + delta, 1e-5);
}

TEST(MatMulUpdateFusionTest, AFetchedProductStaysUnfusedWithTheSameValues) {
  DenseStep step(/*subtract=*/true);
  Session sess(step.g);
  sess.run(step.init);
  const std::multiset<std::string> ops = executed_ops(sess, {step.updated, step.product}, step.feeds());
  EXPECT_EQ(ops.count("MatMul"), 1u);
  EXPECT_EQ(ops.count("Mul"), 1u);
  const Tensor product = matmul(step.xv, step.dyv, true, false);
  std::vector<Tensor> out = sess.run({step.updated, step.product}, step.feeds());
  expect_close(out[0], step.w0 - product * 0.1f - product * 0.1f, 1e-5);
  expect_close(out[1], product, 1e-6);
}

TEST(MatMulUpdateFusionTest, AFedLearningRateIsReadEachRun) {
  Graph g;
  std::optional<Variable> w;
  Tensor a, b, lr, updated;
  Operation init;
  {
    auto scope = g.as_default();
    w.emplace(Tensor({{1.0, 2.0}, {3.0, 4.0}}), "w");
    a = placeholder(DType::kFloat64, {2, 3}, "a");
    b = placeholder(DType::kFloat64, {2, 3}, "b");
    lr = placeholder(DType::kFloat64, {}, "lr");
    updated = w->assign_sub(matmul(a, b, false, /*transpose_b=*/true) * lr);
    init = g.global_variables_initializer();
  }
  const Tensor av = {{1.0, 0.0, 2.0}, {0.0, 1.0, 1.0}}, bv = {{1.0, 1.0, 0.0}, {0.0, 2.0, 1.0}};  // a b^T = [[1, 2], [1, 3]]
  Session sess(g);
  sess.run(init);
  FeedList feeds;
  feeds.emplace_back(a, av);
  feeds.emplace_back(b, bv);
  feeds.emplace_back(lr, Tensor(0.5));
  EXPECT_EQ(executed_ops(sess, {updated}, feeds).count("MatMul"), 0u);  // w = [[0.5, 1], [2.5, 2.5]]
  feeds[2] = Feed{lr, Tensor(2.0)};
  EXPECT_THAT(sess.run(updated, feeds).to_vector<double>(), ::testing::ElementsAre(-1.5, -3.0, 0.5, -3.5));
}

TEST(MatMulUpdateFusionTest, ParallelRunsGiveTheSameValues) {
  DenseStep fused(/*subtract=*/true);
  SessionOptions options;
  options.inter_op_parallelism_threads = 4;
  Session sess(fused.g, options);
  sess.run(fused.init);
  const Tensor delta = matmul(fused.xv, fused.dyv, true, false) * 0.1f;
  Tensor expected = fused.w0;
  for (int i = 0; i < 5; ++i) {
    expected = expected - delta;
    expect_close(sess.run(fused.updated, fused.feeds()), expected, 1e-5);
  }
  // As a target the update waits for the commit; its pinned inputs outlive the parallel steps.
  for (int i = 0; i < 5; ++i) {
    expected = expected - delta;
    sess.run({}, fused.feeds(), {producer(fused.updated)});
    expect_close(sess.run(Fetch(*fused.w)), expected, 1e-5);
  }
}

TEST(MatMulUpdateFusionTest, IntegerVariablesKeepTheUnfusedOps) {
  // MatMulUpdate has float kernels only: an int32 update runs as MatMul, Mul and AssignSub.
  Graph g;
  std::optional<Variable> w;
  Tensor a, updated;
  Operation init;
  {
    auto scope = g.as_default();
    w.emplace(Tensor({{10, 20}, {30, 40}}), "w");
    a = placeholder(DType::kInt32, {2, 2}, "a");
    updated = w->assign_sub(matmul(a, a) * 2);
    init = g.global_variables_initializer();
  }
  Session sess(g);
  sess.run(init);
  FeedList feeds;
  feeds.emplace_back(a, Tensor({{1, 2}, {3, 4}}));  // a a = [[7, 10], [15, 22]]
  EXPECT_EQ(executed_ops(sess, {updated}, feeds).count("MatMul"), 1u);
  EXPECT_THAT(sess.run(Fetch(*w)).to_vector<int32_t>(), ::testing::ElementsAre(-4, 0, 0, -4));
}

}  // namespace
}  // namespace tapeflow
