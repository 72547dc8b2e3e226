// all_reduce in graphs: traced with function(), built into a Graph and run by a Session,
// differentiated symbolically, and written to (and read from) a GraphDef. Two ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "distributed/mpi/collective.h"
#include "graph/graph_def.h"
#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

int count_nodes(const Graph& g, std::string_view type) {
  int n = 0;
  for (const Operation& op : g.get_operations()) n += op.node().op != nullptr && type == op.node().op->type;
  return n;
}

TEST(MpiGraphTest, ATracedFunctionRunsTheCollective) {
  const float k = static_cast<float>(mpi::rank() + 1);
  auto f = function([](const Tensor& x) { return all_reduce(x * 2.f, ReduceOp::kMean); });
  EXPECT_THAT(f(Tensor({k, 1.f})).to_vector<float>(), ElementsAre(3.f, 2.f));
  EXPECT_THAT(f(Tensor({k, 2.f})).to_vector<float>(), ElementsAre(3.f, 4.f));  // the cached trace again
  EXPECT_EQ(f.trace_count(), 1);
  EXPECT_EQ(count_nodes(f.get_concrete_function({{DType::kFloat32, {2}}}).graph(), "CollectiveReduce"), 1);
}

TEST(MpiGraphTest, ASessionRunsItAndTwoIdenticalCallsStayTwoCollectives) {
  const float k = static_cast<float>(mpi::rank() + 1);
  Graph g;
  Tensor x, y1, y2, y3;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    // Two identical calls: stateful, so the Session's CSE does not merge them.
    y1 = all_reduce(x);
    y2 = all_reduce(x);
    // A constant input is not folded at optimisation time either (that would run it once per
    // plan, not per run).
    y3 = all_reduce(constant(Tensor({1.f, 2.f})), ReduceOp::kSum, Group::world(), /*instance_key=*/3);
  }
  Session sess(g);
  RunOptions options{.trace_level = RunOptions::TraceLevel::kFullTrace};
  RunMetadata metadata;
  std::vector<Tensor> out = sess.run({y1, y2, y3}, {{x, Tensor({k, 10.f})}}, {}, &options, &metadata);
  EXPECT_THAT(out[0].to_vector<float>(), ElementsAre(3.f, 20.f));
  EXPECT_THAT(out[1].to_vector<float>(), ElementsAre(3.f, 20.f));
  EXPECT_THAT(out[2].to_vector<float>(), ElementsAre(2.f, 4.f));
  std::vector<std::string> executed;
  for (const NodeExecStats& node : metadata.step_stats.nodes)
    if (node.op == "CollectiveReduce") executed.push_back(node.node_name);
  // Three collectives ran, in the order the program made them (Note [Collective order in graphs]).
  EXPECT_THAT(executed, ElementsAre(producer(y1).name(), producer(y2).name(), producer(y3).name()));
  // And again (y3 runs after y1 and y2 now, so x is fed).
  EXPECT_THAT(sess.run(y3, {{x, Tensor({k, 10.f})}}).to_vector<float>(), ElementsAre(2.f, 4.f));
}

TEST(MpiGraphTest, EachCollectiveNodeRunsAfterThePreviousOne) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {2}, "x");
  Tensor a = all_reduce(x);
  Tensor unrelated = x * 2.f;
  Tensor b = all_reduce(unrelated, ReduceOp::kMean);
  EXPECT_TRUE(producer(a).control_inputs().empty());
  EXPECT_THAT(producer(b).control_inputs(), ElementsAre(producer(a)));
  EXPECT_TRUE(producer(unrelated).control_inputs().empty());  // other ops are left alone
}

TEST(MpiGraphTest, SymbolicGradientsAllReduceTheIncomingGradient) {
  const float c = static_cast<float>(mpi::rank() + 1);
  Graph g;
  Tensor x, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    Tensor loss = reduce_sum(c * all_reduce(x * x));
    dx = gradients({loss}, {x})[0];
  }
  Session sess(g);
  // d/dx_r of sum over ranks of c_r * sum(x_0^2 + x_1^2) = (1 + 2) * 2 x_r.
  EXPECT_THAT(sess.run(dx, {{x, Tensor({1.f, -2.f})}}).to_vector<float>(), ElementsAre(6.f, -12.f));
  EXPECT_EQ(count_nodes(g, "CollectiveReduce"), 2);  // forward and backward
}

TEST(MpiGraphTest, ATracedFunctionOnATapeGetsTheGradient) {
  const float c = static_cast<float>(mpi::rank() + 1);
  auto f = function([](const Tensor& x) { return all_reduce(x * x, ReduceOp::kMean); });
  Variable x(Tensor({1.f, 3.f}), "x");
  GradientTape tape;
  Tensor loss = reduce_sum(c * f(x.read()));
  // mean over ranks of c_r is 1.5: 1.5 * 2 x.
  EXPECT_THAT(tape.gradient(loss, {x})[0].to_vector<float>(), ElementsAre(3.f, 9.f));
}

TEST(MpiGraphTest, AnErrorInASessionNamesTheOp) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1}, "x");
    y = all_reduce(x);
  }
  Session sess(g);
  try {
    sess.run(y, {{x, mpi::rank() == 0 ? zeros({2}) : zeros({3})}});
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[all_reduce] the ranks disagree on the number of elements"));
  }
}

TEST(MpiGraphTest, ADtypeMpiCannotReduceFailsWhenTheGraphIsBuilt) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kBool, {2}, "x");
  EXPECT_THROW(all_reduce(x), InvalidArgumentError);
}

TEST(MpiGraphTest, GraphDefCarriesTensorFlowsNameAndAttributes) {
  Graph g;
  {
    auto scope = g.as_default();
    Tensor x = placeholder(DType::kFloat32, {2}, "x");
    all_reduce(x, ReduceOp::kMean, Group::world(), /*instance_key=*/5);
  }
  const std::string text = graph_def_to_text(to_graph_def(g));
  EXPECT_THAT(text, HasSubstr("op: \"CollectiveReduce\""));
  EXPECT_THAT(text, HasSubstr("\"Div\""));
  EXPECT_THAT(text, HasSubstr("instance_key"));
  Graph back = graph_from_graph_def(graph_def_from_text(text));
  ASSERT_EQ(count_nodes(back, "CollectiveReduce"), 1);
}

}  // namespace
}  // namespace tapeflow
