// Behaviours found while writing tutorial 05 (the Graphs and Sessions guide). The 
// tests fail today and document bugs in graph/ for the lead (who owns those files): enable
// them with the fix. The others pin down behaviour the tutorial relies on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

// graph.cc, GraphState::add_to_collection: the "another graph" check calls node(v.id()) on
// this graph, which throws std::out_of_range when the other graph is bigger.
// Fix: `if (v.graph().state().get() != this)` instead of `if (&v.node() != &node(v.id()))`.
TEST(GuideFindingsTest, AddToCollectionRejectsAnOperationOfABiggerGraph) {
  Graph small, big;
  Tensor a;
  {
    auto scope = big.as_default();
    for (int i = 0; i < 5; ++i) a = constant(Tensor(1.f));
  }
  EXPECT_THROW(small.add_to_collection("k", producer(a)), InvalidArgumentError);
}

// session.h says InteractiveSession "makes its graph the default, as tf.InteractiveSession",
// but only the default session is set: ops made next to it run eagerly.
// Fix: hold a std::unique_ptr<GraphDefaultGuard> in InteractiveSession, made in the
// constructor and reset first in the destructor (or correct the comment).
TEST(GuideFindingsTest, InteractiveSessionMakesItsGraphTheDefault) {
  Graph g;
  InteractiveSession sess(g);
  EXPECT_TRUE(building_graph());
  Tensor c = constant(Tensor(5.f)) * constant(Tensor(6.f));
  EXPECT_TRUE(c.is_symbolic());
}

TEST(GuideFindingsTest, FeedValuesMustBeConcreteSoHostDataFeedsAPlaceholder) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {-1, 3}, "x");
  Tensor y = x * 2.f;
  Session sess(g);
  // zeros() adds a node while the graph is the default: it cannot be fed.
  EXPECT_THAT(error_of([&] { sess.run(y, {{x, zeros({2, 3})}}); }), HasSubstr("must be a concrete tensor"));
  const Tensor batch(std::vector<float>(6, 0.5f), Shape{2, 3});
  EXPECT_FLOAT_EQ(sess.run(y, {{x, batch}}).at<float>({1, 2}), 1.f);
}

TEST(GuideFindingsTest, EachUseOfAConcreteTensorIsAConstSharingItsBuffer) {
  Graph g;
  auto scope = g.as_default();
  const Tensor big(std::vector<float>(100, 1.f), Shape{10, 10});
  Tensor a = big + 1.f, b = big * 2.f;
  const Operation ca = producer(producer(a).inputs()[0]);
  const Operation cb = producer(producer(b).inputs()[0]);
  EXPECT_NE(ca.name(), cb.name());
  EXPECT_TRUE(ca.node().value.shares_buffer_with(big));
  EXPECT_TRUE(cb.node().value.shares_buffer_with(big));
}

TEST(GuideFindingsTest, AnyTensorCanBeFedAsInTheNotes) {
  Graph g;
  auto scope = g.as_default();
  Tensor a = add(2, 5);
  Tensor b = mul(a, 3);
  Session sess(g);
  EXPECT_EQ(sess.run(b).item<int32_t>(), 21);
  EXPECT_EQ(sess.run(b, {{a, 15}}).item<int32_t>(), 45);
}

}  // namespace
}  // namespace tapeflow
