// switch_case (tf.switch_case): the indexed branch eagerly, a StatelessCase node in a graph or a
// traced function, its gradient a Case of the branches' gradients (Note [If gradient]), and
// TensorFlow's Case in a GraphDef.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

// x * x, x * 3, or sin(x), by index (the last for an index out of range, as TensorFlow runs it).
Tensor three_ways(const Tensor& index, const Tensor& x) {
  return switch_case(index, {[&] { return std::vector<Tensor>{x * x}; }, [&] { return std::vector<Tensor>{x * 3.f}; },
                             [&] { return std::vector<Tensor>{sin(x)}; }})[0];
}

TEST(SwitchCaseTest, EagerAndTracedRunTheIndexedBranchAndTheLastOneOutOfRange) {
  const Tensor x{1.f, 2.f};
  auto traced = function([](const Tensor& i, const Tensor& v) { return three_ways(i, v); });
  for (int32_t i : {0, 1, 2, 7, -1}) {
    const Tensor eager = three_ways(Tensor(i), x);
    const std::vector<float> want = i == 0 ? std::vector<float>{1.f, 4.f}
                                    : i == 1 ? std::vector<float>{3.f, 6.f}
                                             : std::vector<float>{std::sin(1.f), std::sin(2.f)};
    EXPECT_EQ(eager.to_vector<float>(), want) << "index " << i;
    EXPECT_EQ(traced(Tensor(i), x).to_vector<float>(), want) << "index " << i;
  }
  EXPECT_EQ(traced.trace_count(), 1);
  ConcreteFunction& cf = traced.get_concrete_function({{DType::kInt32, {}}, {DType::kFloat32, {2}}});
  std::vector<std::string> types;
  for (const Operation& op : cf.graph().get_operations()) types.push_back(op.type());
  EXPECT_THAT(types, ::testing::Contains("StatelessCase"));
  // Written as TensorFlow's Case with its branches in the library, and read back the same.
  const GraphDef def = to_graph_def(cf.graph());
  const proto::NodeDef* node = nullptr;
  for (const auto& nd : def.node()) if (nd.op() == "StatelessCase") node = &nd;
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->attr().at("branches").list().func_size(), 3);
  EXPECT_EQ(def.library().function_size(), 3);
  const Graph g = graph_from_graph_def(def);
  Session sess(g);
  const Tensor i = g.get_tensor_by_name(cf.inputs()[0].name()), v = g.get_tensor_by_name(cf.inputs()[1].name());
  EXPECT_EQ(sess.run(g.get_tensor_by_name(cf.outputs()[0].name()), {{i, Tensor(int32_t{1})}, {v, x}}).to_vector<float>(),
            (std::vector<float>{3.f, 6.f}));
}

TEST(SwitchCaseTest, GradientsThroughATracedSwitchCaseMatchTheEagerTape) {
  Variable w(Tensor{0.5f, -1.f}, "w");
  auto loss = [&](const Tensor& index, const Tensor& x) {
    return reduce_sum(switch_case(index, {[&] { return std::vector<Tensor>{x * x * w}; },
                                          [&] { return std::vector<Tensor>{x * 3.f}; }})[0]);
  };
  auto traced = function([&](const Tensor& i, const Tensor& x) { return loss(i, x); });
  const Tensor x{1.5f, 2.f};
  // d/dx and d/dw of f(index, x), on a tape.
  auto grads = [&](auto&& f, int32_t i) {
    GradientTape tape;
    tape.watch(x);
    const Tensor y = f(Tensor(i), x);
    return tape.gradient(y, std::vector<Source>{x, w});
  };
  for (int32_t i : {0, 1, 4}) {
    const std::vector<Tensor> eager = grads(loss, i), graph = grads(traced, i);
    const Tensor &eager_dx = eager[0], &eager_dw = eager[1], &traced_dx = graph[0], &traced_dw = graph[1];
    EXPECT_EQ(traced_dx.to_vector<float>(), eager_dx.to_vector<float>()) << "index " << i;
    if (i == 0) {
      EXPECT_EQ(eager_dx.to_vector<float>(), (std::vector<float>{1.5f, -4.f}));  // 2 x w
      EXPECT_EQ(traced_dw.to_vector<float>(), eager_dw.to_vector<float>());
    } else {  // w is not read on these branches
      EXPECT_EQ(eager_dx.to_vector<float>(), (std::vector<float>{3.f, 3.f}));
      EXPECT_FALSE(eager_dw.defined());
      EXPECT_EQ(traced_dw.to_vector<float>(), (std::vector<float>{0.f, 0.f}));
    }
  }
}

TEST(SwitchCaseTest, GradientsInAGraphAndOfACaseReadFromAGraphDefPickTheBranchAtRunTime) {
  Graph g;
  Tensor x, i, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    i = placeholder(DType::kInt32, {}, "i");
    y = three_ways(i, x);
  }
  // The same graph written as TensorFlow's GraphDef and read back: its Case's gradient too.
  Graph h = graph_from_graph_def(to_graph_def(g));
  for (Graph* graph : {&g, &h}) {
    Tensor dx;
    {
      auto scope = graph->as_default();
      dx = gradients({graph->get_tensor_by_name(y.name())}, {graph->get_tensor_by_name("x:0")})[0];
    }
    Session sess(*graph);
    auto run = [&](int32_t index) {
      return sess.run(dx, {{graph->get_tensor_by_name("x:0"), Tensor{1.f, 3.f}}, {graph->get_tensor_by_name("i:0"), Tensor(index)}})
          .to_vector<float>();
    };
    EXPECT_EQ(run(0), (std::vector<float>{2.f, 6.f}));
    EXPECT_EQ(run(1), (std::vector<float>{3.f, 3.f}));
    EXPECT_EQ(run(9), (std::vector<float>{std::cos(1.f), std::cos(3.f)}));
  }
}

TEST(SwitchCaseTest, MistakesAreTypedErrors) {
  const Tensor x{1.f, 2.f};
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { three_ways(Tensor(1.f), x); }),
              HasSubstr("[switch_case] the branch index must be an int32 scalar, not float32 []"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { switch_case(Tensor(int32_t{0}), {}); }),
              HasSubstr("[switch_case] needs at least one branch"));
  auto mixed = function([](const Tensor& i, const Tensor& v) {
    return switch_case(i, {[&] { return std::vector<Tensor>{v}; }, [&] { return std::vector<Tensor>{v, v}; },
                           [&] { return std::vector<Tensor>{cast(v, DType::kInt32)}; }})[0];
  });
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { mixed(Tensor(int32_t{0}), x); }),
              HasSubstr("[switch_case] branch_fns[0] returns [float32 [2]] and branch_fns[1] returns [float32 [2], float32 "
                        "[2]]; all must return as many tensors, of the same dtypes and ranks"));
}

}  // namespace
}  // namespace tapeflow
