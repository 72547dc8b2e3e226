// Note [Fusion]: a chain of large elementwise nodes runs as one pass over cache-sized tiles.
// These tests fail when fusion does not happen (the traced step statistics show one entry for
// the chain, naming its members), as well as when it computes something else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tapeflow.h"
#include "tests/support/step_stats_util.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;

TEST(ElementwiseFusionTest, ALargeChainRunsAsOneStepWithTheUnfusedValues) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {256, 512}, "x");
    Tensor a = x * 2.f;
    Tensor b = add(a, 1.f);
    y = relu(b);
  }
  Session sess(g);
  const Tensor xv = random_normal({256, 512}, 0.0, 1.0, DType::kFloat32, 3);
  const StepStats stats = traced_kernel_stats(sess, y, {{x, xv}});
  ASSERT_EQ(stats.nodes.size(), 1u) << stats.to_string();
  EXPECT_EQ(stats.nodes[0].op, "Relu");
  EXPECT_THAT(stats.nodes[0].fused_nodes, ElementsAre("Mul", "Add", "Relu"));
  expect_close(sess.run(y, {{x, xv}}), relu(xv * 2.f + 1.f), 0);
}

TEST(ElementwiseFusionTest, SmallTensorsAndSharedIntermediatesStayUnfused) {
  Graph g;
  Tensor x, small;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {4, 4}, "x");
    small = relu(x * 2.f + 1.f);  // 16 elements: not worth a tiled pass
  }
  Session sess(g);
  const StepStats stats = traced_kernel_stats(sess, small, {{x, ones({4, 4})}});
  EXPECT_EQ(stats.nodes.size(), 3u);
  for (const NodeExecStats& n : stats.nodes) EXPECT_TRUE(n.fused_nodes.empty()) << n.node_name;
}

}  // namespace
}  // namespace tapeflow
