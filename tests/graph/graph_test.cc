// Graph building: names and name scopes (the guide's example), device and control scopes,
// symbolic tensors, lookups, collections and graph variables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GraphTest, NamesFollowTheGuideExample) {
  Graph g;
  auto scope = g.as_default();
  Tensor c_0 = constant(Tensor(0), "c");
  Tensor c_1 = constant(Tensor(2), "c");
  Tensor c_2, c_3, c_4, c_5;
  {
    auto outer = name_scope("outer");
    c_2 = constant(Tensor(2), "c");
    {
      auto inner = name_scope("inner");
      c_3 = constant(Tensor(3), "c");
    }
    c_4 = constant(Tensor(4), "c");
    {
      auto inner = name_scope("inner");
      c_5 = constant(Tensor(5), "c");
    }
  }
  EXPECT_EQ(c_0.name(), "c:0");
  EXPECT_EQ(c_1.name(), "c_1:0");
  EXPECT_EQ(c_2.name(), "outer/c:0");
  EXPECT_EQ(c_3.name(), "outer/inner/c:0");
  EXPECT_EQ(c_4.name(), "outer/c_1:0");
  EXPECT_EQ(c_5.name(), "outer/inner_1/c:0");
}

TEST(GraphTest, OpsAddNodesWithInferredDtypesAndPartialShapes) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {-1, 3}, "x");
  Tensor w = constant(Tensor({{1.f}, {2.f}, {3.f}}), "w");
  Tensor y = matmul(x, w);
  Tensor z = relu(y) * 2;
  EXPECT_TRUE(z.is_symbolic());
  EXPECT_EQ(y.name(), "MatMul:0");
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(y.shape(), Shape({-1, 1}));
  EXPECT_EQ(z.dtype(), DType::kFloat32);
  EXPECT_EQ(producer(z).type(), "Mul");
  EXPECT_EQ(producer(y).inputs().size(), 2u);
  EXPECT_EQ(producer(y).inputs()[0].name(), "x:0");
  EXPECT_EQ(g.get_operation_by_name("MatMul").type(), "MatMul");
  EXPECT_EQ(g.get_tensor_by_name("x:0").shape(), Shape({-1, 3}));
  EXPECT_EQ(x.to_string(), "tapeflow.Tensor(\"x:0\", shape=(None, 3), dtype=float32)");
  // A bad op adds nothing.
  const int before = g.num_nodes();
  EXPECT_THAT(error_of([&] { matmul(w, w); }), HasSubstr("[matmul]"));
  EXPECT_EQ(g.num_nodes(), before);
}

TEST(GraphTest, OpNameScopeNamesTheNextOps) {
  Graph g;
  auto scope = g.as_default();
  Tensor a = constant(Tensor(1.f));
  Tensor b;
  {
    auto n = op_name("answer");
    b = a + a;
  }
  Tensor c;
  {
    auto n = op_name("answer");
    c = a * a;
  }
  EXPECT_EQ(b.name(), "answer:0");
  EXPECT_EQ(c.name(), "answer_1:0");
}

TEST(GraphTest, DeviceScopesAreRecordedAndMerged) {
  Graph g;
  auto scope = g.as_default();
  Tensor a, b, c;
  {
    auto ps = device("/job:ps/task:0");
    a = constant(Tensor(1.f));
    {
      auto gpu = device("/device:GPU:0");
      b = a + 1.f;
    }
  }
  c = a * 2.f;
  EXPECT_EQ(producer(a).device(), "/job:ps/task:0");
  EXPECT_EQ(producer(b).device(), "/job:ps/task:0/device:GPU:0");
  EXPECT_EQ(producer(c).device(), "");
}

TEST(GraphTest, ToStringShowsAttrsOutputsDeviceControlInputsAndLines) {
  Graph g;
  auto scope = g.as_default();
  const int line = __LINE__ + 1;
  Tensor x = placeholder(DType::kFloat32, {-1, 3}, "x");
  Tensor w = constant(Tensor{{1.f}, {2.f}, {3.f}}, "w");
  Tensor init = constant(Tensor(0.f), "init");
  Tensor y;
  {
    auto on_cpu = device("/device:CPU:0");
    auto deps = control_dependencies({init});
    y = matmul(x, w, /*transpose_a=*/false, /*transpose_b=*/false);
  }
  const std::string text = g.to_string();
  EXPECT_THAT(text, HasSubstr("x = Placeholder() -> float32[?,3] {dtype=float32, shape=[?,3]}  # graph_test.cc:" +
                              std::to_string(line)));
  EXPECT_THAT(text, HasSubstr("w = Const() -> float32[3,1]"));
  EXPECT_THAT(text, HasSubstr("MatMul = MatMul(x:0, w:0, ^init) -> float32[?,1] {transpose_a=false, transpose_b=false} "
                              "on /device:CPU:0  # graph_test.cc:"));
}

TEST(GraphTest, ControlDependenciesNest) {
  Graph g;
  auto scope = g.as_default();
  Tensor a = constant(Tensor(1.f), "a");
  Tensor b = constant(Tensor(2.f), "b");
  Tensor c;
  {
    auto d1 = control_dependencies({a});
    auto d2 = control_dependencies({producer(b)});
    c = constant(Tensor(3.f), "c");
  }
  Tensor d = constant(Tensor(4.f), "d");
  std::vector<std::string> names;
  for (const Operation& op : producer(c).control_inputs()) names.push_back(op.name());
  EXPECT_THAT(names, ElementsAre("a", "b"));
  EXPECT_TRUE(producer(d).control_inputs().empty());
}

TEST(GraphTest, GraphErrorsNameTheProblem) {
  Graph g1, g2;
  Tensor a;
  {
    auto s = g1.as_default();
    a = constant(Tensor(1.f), "a");
  }
  auto s = g2.as_default();
  EXPECT_THAT(error_of([&] { Tensor b = a + 1.f; }), HasSubstr("of another graph"));
  EXPECT_THROW(g2.get_operation_by_name("a"), NotFoundError);
  EXPECT_THAT(error_of([&] { g1.get_tensor_by_name("a"); }), HasSubstr("op_name:0"));
  EXPECT_THROW(g1.get_tensor_by_name("a:3"), OutOfRangeError);
}

TEST(GraphTest, PlaceholderOutsideAGraphIsAnError) {
  EXPECT_THROW(placeholder(DType::kFloat32, {2}), FailedPreconditionError);
}

TEST(GraphTest, GetOperationsListsNodesInCreationOrder) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {3}, "x");
  Tensor y = square(x);
  std::vector<std::string> names;
  for (const Operation& op : g.get_operations()) names.push_back(op.name());
  EXPECT_THAT(names, ElementsAre("x", "Square"));
  EXPECT_TRUE(g.is_feedable(y));
  g.prevent_feeding(y);
  EXPECT_FALSE(g.is_feedable(y));
  EXPECT_EQ(get_default_graph(), g);
}

TEST(GraphTest, VariablesJoinTheStandardCollections) {
  Graph g;
  auto scope = g.as_default();
  Variable w(random_uniform({2, 2}), "w");
  Variable step(Tensor(0), "step", /*trainable=*/false);
  EXPECT_EQ(w.name(), "w");
  EXPECT_NE(w.graph_info(), nullptr);
  EXPECT_EQ(g.global_variables().size(), 2u);
  ASSERT_EQ(g.trainable_variables().size(), 1u);
  EXPECT_EQ(g.trainable_variables()[0].name(), "w");
  EXPECT_EQ(g.get_operation_by_name("w").type(), "VarHandleOp");
  EXPECT_EQ(g.get_operation_by_name("w/Assign").type(), "AssignVariableOp");
  EXPECT_EQ(g.get_operation_by_name("step/initial_value").type(), "Const");
  Tensor r = w.read();
  EXPECT_TRUE(r.is_symbolic());
  EXPECT_EQ(r.shape(), Shape({2, 2}));
  Variable w2(Tensor(1.f), "w");
  EXPECT_EQ(w2.name(), "w_1");
  g.add_to_collection("my", r);
  g.add_to_collection("my", std::string("note"));
  auto items = g.get_collection("my");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(std::get<Tensor>(items[0]).name(), r.name());
  EXPECT_EQ(std::get<std::string>(items[1]), "note");
  // Assigning a value of another shape is caught while building.
  EXPECT_THAT(error_of([&] { w.assign(Tensor({1.f, 2.f})); }), HasSubstr("cannot assign a value of dtype float32 and shape [2]"));
}

TEST(GraphTest, GraphVariableUsedEagerlyIsAFailedPrecondition) {
  Graph g;
  std::optional<Variable> v;
  {
    auto scope = g.as_default();
    v.emplace(Tensor(1.f), "v");
  }
  try {
    v->read();
    FAIL() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Variable 'v' belongs to a graph"));
  }
}

// Note [Implicit reads]: a Variable passed where a Tensor is expected is read by a conversion
// operator, which cannot know the caller's line; the read node takes its consumer's line.
TEST(GraphTest, AnImplicitVariableReadTakesTheLineOfTheOpThatUsesIt) {
  Graph g;
  auto scope = g.as_default();
  Variable w(Tensor{{1.f, 2.f}, {3.f, 4.f}}, "w");
  Tensor x = placeholder(DType::kFloat32, {-1, 2}, "x");
  const int line = __LINE__ + 1;
  Tensor y = matmul(x, w);  // matmul takes Tensors: w converts to one
  const Operation read = g.get_operation_by_name("ReadVariableOp");
  EXPECT_EQ(read.type(), "ReadVariableOp");
  EXPECT_EQ(static_cast<int>(read.location().line()), line);
  EXPECT_THAT(read.location().file_name(), HasSubstr("graph_test.cc"));
  // An explicit read keeps its own line, even when a later op uses it.
  const int explicit_line = __LINE__ + 1;
  Tensor r = w.read();
  Tensor z = r * 2.f;
  EXPECT_EQ(static_cast<int>(producer(r).location().line()), explicit_line);
}

}  // namespace
// TensorFlow's rule: names in use compare lowercased; a lookup by name is exact.
TEST(GraphTest, UniqueNamesCompareWithoutCaseAndLookupsAreExact) {
  Graph g;
  GraphState& state = *g.state();
  EXPECT_EQ(state.unique_name("Conv"), "Conv");
  EXPECT_EQ(state.unique_name("conv"), "conv_1");
  EXPECT_EQ(state.unique_name("CONV_1"), "CONV_1_1");
  EXPECT_EQ(state.unique_name("conv"), "conv_2");
  {
    auto scope = g.as_default();
    constant(Tensor(1.f), "Node");
    constant(Tensor(2.f), "node");
  }
  EXPECT_EQ(state.node(0).name, "Node");
  EXPECT_EQ(state.node(1).name, "node_1");
  EXPECT_EQ(state.find("Node"), 0);
  EXPECT_EQ(state.find("node_1"), 1);
  EXPECT_EQ(state.find("node"), -1);
  EXPECT_EQ(state.find("NODE"), -1);
  EXPECT_EQ(state.find("Conv"), -1);  // a name in use, but no node's
}

// Note [Names in use]: a node's name counts as used once without a second table, and names no
// node holds (scopes, names handed out) are listed beside them; imported names count the same.
TEST(GraphTest, NamesInUseCountNodesScopesAndImportedNamesAlike) {
  Graph g;
  GraphState& state = *g.state();
  {
    auto scope = g.as_default();
    constant(Tensor(1.f), "Add");
    auto outer = name_scope("block");
  }
  EXPECT_EQ(state.unique_name("add"), "add_1");
  EXPECT_EQ(state.unique_name("ADD"), "ADD_2");
  EXPECT_EQ(state.unique_name("Block"), "Block_1");  // a scope's name, no node's
  const GraphDef def = graph_def_from_text(R"pb(
    node { name: "add_3" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "X" op: "Identity" input: "add_3" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "x" op: "Identity" input: "X" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "block" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  import_graph_def(g, def, {}, {}, "");
  ASSERT_EQ(state.num_nodes(), 5);
  EXPECT_EQ(state.node(1).name, "add_3");
  EXPECT_EQ(state.node(2).name, "X");
  EXPECT_EQ(state.node(3).name, "x_1");      // "X" took it, ignoring case
  EXPECT_EQ(state.node(4).name, "block_2");  // the scope and "Block_1" took the first two
  EXPECT_EQ(g.get_operation_by_name("x_1").node().inputs.at(0), (TensorRef{2, 0}));
  EXPECT_EQ(state.find("x"), -1);
  EXPECT_EQ(state.unique_name("add"), "add_4");  // add_1, ADD_2 handed out, add_3 imported
  EXPECT_EQ(state.unique_name("x"), "x_2");
  EXPECT_EQ(state.unique_name("x_1"), "x_1_1");
  Session sess(g);
  EXPECT_FLOAT_EQ(sess.run(g.get_tensor_by_name("block_2:0")).item<float>(), 2.f);
}

// The import's batch path (GraphState::add_nodes_unique): nodes planned as ids 1, 2, 3 while
// another node was added meanwhile land at 2, 3, 4 with their references renumbered, take
// unique names (against the graph's and under a prefix) and can be found by them.
TEST(GraphTest, AddNodesUniqueRenumbersABatchPlannedBeforeOtherNodes) {
  Graph g;
  {
    auto scope = g.as_default();
    constant(Tensor(1.f), "a");
  }
  GraphState& state = *g.state();
  const int assumed_first = state.num_nodes();  // 1
  Graph model;  // a scalar Const's attrs and outputs, to copy
  Operation scalar = [&] {
    auto scope = model.as_default();
    return producer(constant(Tensor(0.f)));
  }();
  auto batch = [&] {
    std::vector<std::unique_ptr<Node>> nodes;
    for (const char* name : {"b", "a", "c"}) {
      auto n = std::make_unique<Node>();
      n->name = name;
      n->id = assumed_first + static_cast<int>(nodes.size());
      nodes.push_back(std::move(n));
    }
    nodes[0]->op = &kConstOp;  // b
    nodes[0]->value = Tensor(2.f);
    nodes[0]->attrs = scalar.node().attrs;
    nodes[0]->outputs = scalar.node().outputs;
    nodes[1]->op = &kNoOp;  // a: waits on b
    nodes[1]->control_inputs = {assumed_first};
    nodes[2]->op = find_any_op("Identity");  // c = Identity(b)
    nodes[2]->inputs = {TensorRef{assumed_first, 0}};
    nodes[2]->outputs = scalar.node().outputs;
    return nodes;
  };
  {
    auto scope = g.as_default();
    constant(Tensor(3.f), "x");  // id 1: the batch's planned ids are taken
  }
  std::vector<std::unique_ptr<Node>> nodes = batch();
  std::vector<std::string_view> names{"b", "a", "c"};
  EXPECT_EQ(state.add_nodes_unique(std::move(nodes), names, "", assumed_first), 2);
  ASSERT_EQ(state.num_nodes(), 5);
  EXPECT_EQ(state.node(2).name, "b");
  EXPECT_EQ(state.node(3).name, "a_1");  // "a" is the first node's
  EXPECT_EQ(state.node(4).name, "c");
  EXPECT_EQ(state.node(3).id, 3);
  EXPECT_THAT(state.node(3).control_inputs, ElementsAre(2));
  EXPECT_EQ(state.node(4).inputs.at(0), (TensorRef{2, 0}));
  EXPECT_EQ(g.get_operation_by_name("a_1").id(), 3);
  Session sess(g);
  EXPECT_FLOAT_EQ(sess.run(g.get_tensor_by_name("c:0")).item<float>(), 2.f);

  // The batch planned where it lands (no renumbering).
  auto batch_at = [&](int at) {
    std::vector<std::unique_ptr<Node>> planned = batch();
    for (auto& n : planned) {
      n->id += at - assumed_first;
      for (TensorRef& in : n->inputs) in.node += at - assumed_first;
      for (int& c : n->control_inputs) c += at - assumed_first;
    }
    return planned;
  };
  // Under a prefix: "p/b", "p/a", "p/c".
  const int next = state.num_nodes();
  nodes = batch_at(next);
  EXPECT_EQ(state.add_nodes_unique(std::move(nodes), names, "p", next), next);
  EXPECT_EQ(state.node(next + 1).name, "p/a");
  EXPECT_EQ(g.get_operation_by_name("p/c").node().inputs.at(0), (TensorRef{next, 0}));

  // Again without a prefix: every name is taken, and each takes the next free suffix.
  const int last = state.num_nodes();
  nodes = batch_at(last);
  EXPECT_EQ(state.add_nodes_unique(std::move(nodes), names, "", last), last);
  EXPECT_EQ(state.node(last).name, "b_1");
  EXPECT_EQ(state.node(last + 1).name, "a_2");
  EXPECT_EQ(state.node(last + 2).name, "c_1");
  EXPECT_EQ(state.find("a_2"), last + 1);
  EXPECT_EQ(state.find("b"), 2);
}

}  // namespace tapeflow
