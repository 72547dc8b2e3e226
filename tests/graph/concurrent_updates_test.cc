// Note [Atomic variable updates]: concurrent Session runs that update one variable lose no
// update (each assign_add / assign_sub is atomic, as TensorFlow's resource variables'), and a
// failed run still changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <thread>
#include <vector>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

// Runs `body` on `threads` threads at once, each `iterations` times.
template <typename Body>
void hammer(int threads, int iterations, Body body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int i = 0; i < iterations; ++i) body();
    });
  for (std::thread& th : pool) th.join();
}

constexpr int kRunsPerThread = 20000;

TEST(ConcurrentUpdatesTest, TwoThreadsCountingOnOneSessionLoseNoUpdate) {
  Graph g;
  std::optional<Variable> counter;
  Tensor increment;
  Operation init;
  {
    auto scope = g.as_default();
    counter.emplace(Tensor(int64_t{0}), "counter", /*trainable=*/false);
    increment = counter->assign_add(1);
    init = g.global_variables_initializer();
  }
  Session sess(g);
  sess.run(init);
  const Operation step = producer(increment);
  hammer(2, kRunsPerThread, [&] { sess.run({}, {}, {step}); });
  EXPECT_EQ(sess.run(Fetch(*counter)).item<int64_t>(), 2 * kRunsPerThread);
}

TEST(ConcurrentUpdatesTest, AnEagerVariableUpdatedByConcurrentRunsLosesNoUpdate) {
  Variable counter(Tensor(0.f), "eager_counter", /*trainable=*/false);
  Graph g;
  Tensor increment, decrement;
  {
    auto scope = g.as_default();
    increment = counter.assign_add(3.f);
    decrement = counter.assign_sub(1.f);
  }
  Session sess(g);
  hammer(2, kRunsPerThread / 4, [&] { sess.run({}, {}, {producer(increment), producer(decrement)}); });
  // Eager updates from a third thread at the same time as the runs interleave with them too.
  std::thread eager([&] {
    for (int i = 0; i < 1000; ++i) counter.assign_add(1.f);
  });
  hammer(2, kRunsPerThread / 4, [&] { sess.run({}, {}, {producer(increment)}); });
  eager.join();
  EXPECT_EQ(counter.read().item<float>(), 2.f * (kRunsPerThread / 4) * 2 + 3.f * 2 * (kRunsPerThread / 4) + 1000);
}

// The fused MatMul update (Note [MatMul update]) folds its delta into one kernel: a conflict is
// re-applied from (value - base). Integer-valued products keep the sums exact.
TEST(ConcurrentUpdatesTest, FusedMatMulUpdatesFromConcurrentRunsAllLand) {
  Graph g;
  std::optional<Variable> w;
  Tensor x, updated;
  Operation init;
  const Tensor a = Tensor({{1.f, 2.f}, {0.f, 1.f}});
  {
    auto scope = g.as_default();
    w.emplace(zeros({2, 2}), "w");
    x = placeholder(DType::kFloat32, {2, 2}, "x");
    updated = w->assign_sub(matmul(x, x) * 1.f);
    init = g.global_variables_initializer();
  }
  Session sess(g);
  sess.run(init);
  // Fetching the result keeps the update inside the run (not at the commit), so the runs race.
  hammer(2, 2000, [&] { sess.run(updated, {{x, a}}); });
  // a @ a = [[1, 4], [0, 1]], subtracted 4,000 times.
  EXPECT_THAT(sess.run(Fetch(*w)).to_vector<float>(), ::testing::ElementsAre(-4000.f, -16000.f, 0.f, -4000.f));
}

TEST(ConcurrentUpdatesTest, AFailedRunStillChangesNoVariable) {
  Graph g;
  std::optional<Variable> v;
  Tensor bump, bad;
  Operation init;
  {
    auto scope = g.as_default();
    v.emplace(Tensor({1.f, 2.f}), "v");
    Tensor x = placeholder(DType::kFloat32, {-1}, "x");
    bump = v->assign_add(Tensor({1.f, 1.f}));
    // Runs after the bump (control dependency), then fails for a feed of the wrong length.
    auto deps = control_dependencies({producer(bump)});
    bad = v->assign_add(x);
    init = g.global_variables_initializer();
  }
  Session sess(g);
  sess.run(init);
  EXPECT_THROW(sess.run(bad, {{g.get_tensor_by_name("x:0"), Tensor({1.f, 2.f, 3.f})}}), InvalidArgumentError);
  EXPECT_THAT(sess.run(Fetch(*v)).to_vector<float>(), ::testing::ElementsAre(1.f, 2.f));
  sess.run(bad, {{g.get_tensor_by_name("x:0"), Tensor({10.f, 20.f})}});
  EXPECT_THAT(sess.run(Fetch(*v)).to_vector<float>(), ::testing::ElementsAre(12.f, 23.f));
}

}  // namespace
}  // namespace tapeflow
