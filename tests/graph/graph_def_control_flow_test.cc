// TensorFlow 1's control flow in a GraphDef (Note [Control flow v1 in a GraphDef]): tf.cond's
// Switch and Merge, and Keras' learning phase in a frozen model, written as TensorFlow 1.x
// prints them (a branch's Switch after the node that reads it, constants held in their branch by
// a control input from switch_t or switch_f).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// tf.cond(pred, lambda: x * 2.0, lambda: x + 1.0) in TensorFlow 1.15.
constexpr char kCond[] = R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 3 } } } } }
node { name: "pred" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } attr { key: "shape" value { shape { } } } }
node { name: "cond/Switch" op: "Switch" input: "pred" input: "pred" attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/switch_t" op: "Identity" input: "cond/Switch:1" attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/switch_f" op: "Identity" input: "cond/Switch" attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/pred_id" op: "Identity" input: "pred" attr { key: "T" value { type: DT_BOOL } } }
node { name: "cond/mul/y" op: "Const" input: "^cond/switch_t" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "cond/mul" op: "Mul" input: "cond/mul/Switch:1" input: "cond/mul/y" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/mul/Switch" op: "Switch" input: "x" input: "cond/pred_id" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "_class" value { list { s: "loc:@x" } } } }
node { name: "cond/add/y" op: "Const" input: "^cond/switch_f" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "cond/add" op: "AddV2" input: "cond/add/Switch" input: "cond/add/y" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "cond/add/Switch" op: "Switch" input: "x" input: "cond/pred_id" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "_class" value { list { s: "loc:@x" } } } }
node { name: "cond/Merge" op: "Merge" input: "cond/add" input: "cond/mul" attr { key: "N" value { i: 2 } }
  attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 134 }
)pb";

std::vector<float> run_cond(const Graph& g, const std::string& output, const std::string& prefix = "") {
  Session sess(g);
  return sess.run(g.get_tensor_by_name(prefix + output), {{g.get_tensor_by_name(prefix + "x:0"), Tensor(std::vector<float>{1, 2, 3}, Shape{3})}})
      .to_vector<float>();
}

TEST(GraphDefControlFlowTest, CondWithAConstantPredicateImportsTheBranchItTakes) {
  const GraphDef def = graph_def_from_text(kCond);
  for (const bool taken : {true, false}) {
    SCOPED_TRACE(taken);
    Graph g;
    auto out = import_graph_def(g, def, {{"pred:0", Tensor(taken)}}, {"cond/Merge:0", "cond/Merge:1"}, "");
    const Tensor merged = std::get<Tensor>(out[0]), value_index = std::get<Tensor>(out[1]);
    EXPECT_EQ(merged.name(), "cond/Merge:0");
    EXPECT_EQ(merged.dtype(), DType::kFloat32);
    EXPECT_EQ(merged.shape(), Shape({3}));
    EXPECT_EQ(run_cond(g, "cond/Merge:0"), taken ? std::vector<float>({2, 4, 6}) : std::vector<float>({2, 3, 4}));
    // Merge's value_index: which input was alive (0: the false branch).
    EXPECT_EQ(value_index.dtype(), DType::kInt32);
    EXPECT_EQ(Session(g).run(value_index).item<int32_t>(), taken ? 1 : 0);
    // The untaken branch is not in the graph; the taken one is, Switches as Identities.
    EXPECT_THROW(g.get_operation_by_name(taken ? "cond/add" : "cond/mul"), Error);
    EXPECT_EQ(g.get_operation_by_name(taken ? "cond/mul/Switch" : "cond/add/Switch").type(), "Identity");
    EXPECT_EQ(g.get_operation_by_name("cond/Merge").type(), "Identity");
  }
}

TEST(GraphDefControlFlowTest, AConstPredicateInTheGraphDefIsFollowedThroughIdentityAndLogicalNot) {
  GraphDef def = graph_def_from_text(kCond);
  // pred = LogicalNot(Identity(Const(true))): false, the x + 1 branch.
  proto::NodeDef* pred = def.mutable_node(1);
  pred->Clear();
  pred->set_name("pred");
  pred->set_op("LogicalNot");
  pred->add_input("pred/Identity");
  const GraphDef extra = graph_def_from_text(R"pb(
    node { name: "pred/value" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
      attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }
    node { name: "pred/Identity" op: "Identity" input: "pred/value" attr { key: "T" value { type: DT_BOOL } } })pb");
  for (const proto::NodeDef& n : extra.node()) *def.add_node() = n;
  const Graph g = graph_from_graph_def(def);
  EXPECT_EQ(run_cond(g, "cond/Merge:0"), std::vector<float>({2, 3, 4}));
}

TEST(GraphDefControlFlowTest, APredicateKnownOnlyWhenItRunsMakesAnIf) {
  // Note [TF1 conds as If]: what the import cannot choose, the If chooses when the graph runs
  // (tests/graph/graph_def_conds_test.cc); a mapped predicate that is no bool is still an error.
  const GraphDef def = graph_def_from_text(kCond);
  Graph g;
  import_graph_def(g, def, {}, {}, "");
  EXPECT_EQ(g.get_operation_by_name("cond").type(), "If");
  Session sess(g);
  EXPECT_EQ(sess.run(g.get_tensor_by_name("cond/Merge:0"), {{g.get_tensor_by_name("x:0"), Tensor(std::vector<float>{1, 2, 3}, Shape{3})},
                                                           {g.get_tensor_by_name("pred:0"), Tensor(true)}})
                .to_vector<float>(),
            std::vector<float>({2, 4, 6}));
  Graph h;
  EXPECT_THAT(error_of([&] { import_graph_def(h, def, {{"pred:0", Tensor(1.f)}}, {}, ""); }),
              HasSubstr("input_map['pred:0'] must be one bool, not float32 []"));
  EXPECT_EQ(h.num_nodes(), 0);
}

TEST(GraphDefControlFlowTest, AReturnElementOnThePrunedBranchIsAnErrorAndItsInputMapKeysAreDropped) {
  const GraphDef def = graph_def_from_text(kCond);
  Graph g;
  EXPECT_THAT(error_of([&] { import_graph_def(g, def, {{"pred:0", Tensor(true)}}, {"cond/add"}, ""); }),
              AllOf(HasSubstr("return element 'cond/add' is on the branch of Switch 'cond/add/Switch' that its "
                              "predicate (true) does not take"),
                    HasSubstr("Note [Control flow v1 in a GraphDef]")));
  EXPECT_THAT(error_of([&] { import_graph_def(g, def, {{"pred:0", Tensor(true)}}, {"cond/mul/Switch:0"}, ""); }),
              HasSubstr("return element 'cond/mul/Switch:0' is on the branch"));
  // A colocation with a pruned node goes with it; the others stay.
  GraphDef colocated = def;
  for (proto::NodeDef& n : *colocated.mutable_node())
    if (n.name() == "cond/mul") (*n.mutable_attr())["_class"].mutable_list()->add_s("loc:@cond/add");
    else if (n.name() == "cond/add/y") (*n.mutable_attr())["_class"].mutable_list()->add_s("loc:@cond/mul");
  Graph h;
  import_graph_def(h, colocated, {{"pred:0", Tensor(true)}}, {}, "");
  EXPECT_TRUE(h.get_operation_by_name("cond/mul").node().colocate_with().empty());
  EXPECT_EQ(h.get_operation_by_name("cond/mul/Switch").node().colocate_with(), std::vector<std::string>{"x"});
  // The taken output of a Switch is output 0 of its Identity.
  auto out = import_graph_def(g, def, {{"pred:0", Tensor(true)}, {"cond/add/y:0", Tensor(5.f)}}, {"cond/mul/Switch:1"}, "imp");
  EXPECT_EQ(std::get<Tensor>(out[0]).name(), "imp/cond/mul/Switch:0");
  EXPECT_EQ(run_cond(g, "cond/Merge:0", "imp/"), std::vector<float>({2, 4, 6}));
}

TEST(GraphDefControlFlowTest, WhileLoopsAndMergesOfSeveralLiveInputsAreRefused) {
  const GraphDef loop = graph_def_from_text(R"pb(
    node { name: "i" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "while/Enter" op: "Enter" input: "i" attr { key: "T" value { type: DT_INT32 } }
      attr { key: "frame_name" value { s: "while/while_context" } } }
    node { name: "while/Merge" op: "Merge" input: "while/Enter" input: "while/NextIteration"
      attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } } }
    node { name: "while/NextIteration" op: "NextIteration" input: "while/Merge" attr { key: "T" value { type: DT_INT32 } } })pb");
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_from_graph_def(loop); }),  // Note [TF1 while loops]
              HasSubstr("node 'while/Enter' (Enter): in TensorFlow 1 while loop 'while/while_context': the loop has no "
                        "LoopCond"));
  const GraphDef two_live = graph_def_from_text(R"pb(
    node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
    node { name: "m" op: "Merge" input: "a" input: "a" attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } })pb");
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(two_live); }),
              HasSubstr("node 'm' (Merge): has 2 live inputs"));
  const GraphDef cycle = graph_def_from_text(R"pb(
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
      attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }
    node { name: "s" op: "Switch" input: "m" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "m" op: "Merge" input: "s" input: "s:1" attr { key: "N" value { i: 2 } } })pb");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(cycle); }),
              HasSubstr("the GraphDef has a cycle; these nodes wait on each other: s, m"));
  GraphDef third_output = graph_def_from_text(kCond);
  third_output.mutable_node(7)->set_input(0, "cond/mul/Switch:2");  // cond/mul
  EXPECT_THAT(error_of([&] { graph_from_graph_def(third_output); }),
              HasSubstr("node 'cond/mul' (Mul): input 'cond/mul/Switch:2' names output 2 of node 'cond/mul/Switch', which "
                        "has 2 output(s)"));
}

TEST(GraphDefControlFlowTest, AnInputMapKeyWithoutItsIndexChoosesTheBranchToo) {
  Graph g;
  import_graph_def(g, graph_def_from_text(kCond), {{"pred", Tensor(true)}}, {}, "");
  EXPECT_EQ(run_cond(g, "cond/Merge:0"), std::vector<float>({2, 4, 6}));
}

// Note [Assert guards]: what running both sides would change is not run as a guard; the cond
// becomes an If (Note [TF1 conds as If]), or a typed error where an If cannot say it.
TEST(GraphDefControlFlowTest, OnlyTrueAssertGuardsRunBothSides) {
  const std::string head = R"pb(
    node { name: "c" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } attr { key: "shape" value { shape { } } } }
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "sw" op: "Switch" input: "x" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  // The join's value index is read (by another Merge).
  EXPECT_THAT(error_of<UnimplementedError>([&] {
                graph_from_graph_def(graph_def_from_text(head + R"pb(
                  node { name: "a" op: "Identity" input: "sw" attr { key: "T" value { type: DT_FLOAT } } }
                  node { name: "b" op: "Identity" input: "sw:1" attr { key: "T" value { type: DT_FLOAT } } }
                  node { name: "j" op: "Merge" input: "a" input: "b" attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
                  node { name: "m2" op: "Merge" input: "j:1" attr { key: "N" value { i: 1 } } })pb"));
              }),
              HasSubstr("node 'm2' (Merge): reads which branch Merge 'j' took"));
  // Not guards: each becomes an If whose branch holds what the side held.
  auto ifs = [&](const std::string& rest) {
    const Graph g = graph_from_graph_def(graph_def_from_text(head + rest));
    int n = 0;
    for (const Operation& op : g.get_operations()) n += op.type() == "If" ? 1 : 0;
    return n;
  };
  // A Merge of one side only; of one side twice, it is the branch's own error.
  EXPECT_EQ(ifs(R"pb(node { name: "m" op: "Merge" input: "sw:1" attr { key: "N" value { i: 1 } } attr { key: "T" value { type: DT_FLOAT } } })pb"),
            1);
  EXPECT_THAT(error_of<UnimplementedError>([&] {
                ifs(R"pb(node { name: "t" op: "Identity" input: "sw:1" attr { key: "T" value { type: DT_FLOAT } } }
                         node { name: "j" op: "Merge" input: "t" input: "t" attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } })pb");
              }),
              HasSubstr("function 'sw_true': node 'f/j' (Merge): has 2 live inputs"));
  // An Assert of the negated predicate.
  EXPECT_EQ(ifs(R"pb(node { name: "n" op: "LogicalNot" input: "c" }
                          node { name: "sw_c" op: "Switch" input: "c" input: "n" attr { key: "T" value { type: DT_BOOL } } }
                          node { name: "a" op: "Assert" input: "sw_c" attr { key: "T" value { list { } } } })pb"),
            1);
  // The second Switch reads the predicate itself, not through a Switch of the outer cond as
  // TensorFlow writes it: the outer If's branch would read an outer tensor.
  EXPECT_THAT(error_of<UnimplementedError>([&] {
                ifs(R"pb(node { name: "sw1" op: "Switch" input: "c" input: "c" attr { key: "T" value { type: DT_BOOL } } }
                         node { name: "t" op: "Identity" input: "sw1:1" attr { key: "T" value { type: DT_BOOL } } }
                         node { name: "sw2" op: "Switch" input: "t" input: "c" attr { key: "T" value { type: DT_BOOL } } }
                         node { name: "a" op: "Assert" input: "sw2" attr { key: "T" value { list { } } } })pb");
              }),
              HasSubstr("reads 'c:0' inside a TensorFlow 1 cond's branch, which takes outer tensors through a Switch"));
}

// A frozen TensorFlow 1 Keras model: BatchNormalization and Dropout under the learning phase
// (a PlaceholderWithDefault of false), on a fixed-size batch.
std::string keras_frozen_model() {
  auto floats = [](const std::string& name, const std::vector<float>& v, const std::string& control = "") {
    std::string vals;
    for (float x : v) absl::StrAppend(&vals, "float_val: ", x, " ");
    return absl::StrCat("node { name: \"", name, "\" op: \"Const\" ", control.empty() ? "" : absl::StrCat("input: \"^", control, "\" "),
                        "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"value\" value { tensor { dtype: "
                        "DT_FLOAT tensor_shape { ", v.size() == 1 ? "" : absl::StrCat("dim { size: ", v.size(), " } "),
                        "} ", vals, "} } } }\n");
  };
  auto bool_identity = [](const std::string& name, const std::string& input) {
    return absl::StrCat("node { name: \"", name, "\" op: \"Identity\" input: \"", input,
                        "\" attr { key: \"T\" value { type: DT_BOOL } } }\n");
  };
  auto switch_of = [](const std::string& name, const std::string& data, const std::string& pred) {
    return absl::StrCat("node { name: \"", name, "\" op: \"Switch\" input: \"", data, "\" input: \"", pred,
                        "\" attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"_class\" value { list { s: \"loc:@",
                        data, "\" } } } }\n");
  };
  auto cond_head = [&](const std::string& scope) {
    return absl::StrCat(
        "node { name: \"", scope, "/Switch\" op: \"Switch\" input: \"keras_learning_phase\" input: \"keras_learning_phase\" "
        "attr { key: \"T\" value { type: DT_BOOL } } }\n",
        bool_identity(scope + "/switch_t", scope + "/Switch:1"), bool_identity(scope + "/switch_f", scope + "/Switch"),
        bool_identity(scope + "/pred_id", "keras_learning_phase"));
  };
  auto fused = [](const std::string& name, const std::vector<std::string>& in, bool training) {
    std::string inputs;
    for (const std::string& s : in) absl::StrAppend(&inputs, "input: \"", s, "\" ");
    return absl::StrCat("node { name: \"", name, "\" op: \"FusedBatchNormV3\" ", inputs,
                        "attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"U\" value { type: DT_FLOAT } } "
                        "attr { key: \"data_format\" value { s: \"NHWC\" } } attr { key: \"epsilon\" value { f: 0.001 } } "
                        "attr { key: \"is_training\" value { b: ", training ? "true" : "false", " } } }\n");
  };
  auto binary = [](const std::string& name, const std::string& op, const std::string& a, const std::string& b) {
    return absl::StrCat("node { name: \"", name, "\" op: \"", op, "\" input: \"", a, "\" input: \"", b,
                        "\" attr { key: \"T\" value { type: DT_FLOAT } } }\n");
  };
  return absl::StrCat(
      R"pb(node { name: "input_1" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } dim { size: 1 } dim { size: 2 } dim { size: 3 } } } } }
           node { name: "keras_learning_phase/input" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
             attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: false } } } }
           node { name: "keras_learning_phase" op: "PlaceholderWithDefault" input: "keras_learning_phase/input"
             attr { key: "dtype" value { type: DT_BOOL } } attr { key: "shape" value { shape { } } } }
      )pb",
      floats("bn/gamma", {1.5f, 0.5f, 2.f}), floats("bn/beta", {0.1f, -0.2f, 0.3f}),
      floats("bn/moving_mean", {0.2f, -0.1f, 0.4f}), floats("bn/moving_variance", {1.f, 0.5f, 2.f}),
      cond_head("bn/cond"),
      // The training branch: batch statistics (empty mean and variance inputs).
      "node { name: \"bn/cond/Const\" op: \"Const\" input: \"^bn/cond/switch_t\" attr { key: \"dtype\" value { type: "
      "DT_FLOAT } } attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { } } } } } }\n",
      "node { name: \"bn/cond/Const_1\" op: \"Const\" input: \"^bn/cond/switch_t\" attr { key: \"dtype\" value { type: "
      "DT_FLOAT } } attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { } } } } } }\n",
      fused("bn/cond/FusedBatchNormV3",
            {"bn/cond/FusedBatchNormV3/Switch:1", "bn/cond/FusedBatchNormV3/Switch_1:1", "bn/cond/FusedBatchNormV3/Switch_2:1",
             "bn/cond/Const", "bn/cond/Const_1"},
            true),
      switch_of("bn/cond/FusedBatchNormV3/Switch", "input_1", "bn/cond/pred_id"),
      switch_of("bn/cond/FusedBatchNormV3/Switch_1", "bn/gamma", "bn/cond/pred_id"),
      switch_of("bn/cond/FusedBatchNormV3/Switch_2", "bn/beta", "bn/cond/pred_id"),
      // The inference branch: the moving statistics.
      fused("bn/cond/FusedBatchNormV3_1",
            {"bn/cond/FusedBatchNormV3_1/Switch", "bn/cond/FusedBatchNormV3_1/Switch_1", "bn/cond/FusedBatchNormV3_1/Switch_2",
             "bn/cond/FusedBatchNormV3_1/Switch_3", "bn/cond/FusedBatchNormV3_1/Switch_4"},
            false),
      switch_of("bn/cond/FusedBatchNormV3_1/Switch", "input_1", "bn/cond/pred_id"),
      switch_of("bn/cond/FusedBatchNormV3_1/Switch_1", "bn/gamma", "bn/cond/pred_id"),
      switch_of("bn/cond/FusedBatchNormV3_1/Switch_2", "bn/beta", "bn/cond/pred_id"),
      switch_of("bn/cond/FusedBatchNormV3_1/Switch_3", "bn/moving_mean", "bn/cond/pred_id"),
      switch_of("bn/cond/FusedBatchNormV3_1/Switch_4", "bn/moving_variance", "bn/cond/pred_id"),
      "node { name: \"bn/cond/Merge\" op: \"Merge\" input: \"bn/cond/FusedBatchNormV3_1\" input: "
      "\"bn/cond/FusedBatchNormV3\" attr { key: \"N\" value { i: 2 } } attr { key: \"T\" value { type: DT_FLOAT } } }\n",
      // Dropout(0.5): x / (1 - rate) where uniform noise >= rate, in the training branch.
      cond_head("dropout/cond"), floats("dropout/cond/dropout/rate", {0.5f}, "dropout/cond/switch_t"),
      "node { name: \"dropout/cond/dropout/Shape\" op: \"Shape\" input: \"dropout/cond/dropout/Shape/Switch:1\" attr { key: "
      "\"T\" value { type: DT_FLOAT } } attr { key: \"out_type\" value { type: DT_INT32 } } }\n",
      switch_of("dropout/cond/dropout/Shape/Switch", "bn/cond/Merge", "dropout/cond/pred_id"),
      "node { name: \"dropout/cond/dropout/random_uniform/RandomUniform\" op: \"RandomUniform\" input: "
      "\"dropout/cond/dropout/Shape\" attr { key: \"T\" value { type: DT_INT32 } } attr { key: \"dtype\" value { type: "
      "DT_FLOAT } } attr { key: \"seed\" value { i: 87654321 } } attr { key: \"seed2\" value { i: 5 } } }\n",
      floats("dropout/cond/dropout/sub/x", {1.f}, "dropout/cond/switch_t"),
      binary("dropout/cond/dropout/sub", "Sub", "dropout/cond/dropout/sub/x", "dropout/cond/dropout/rate"),
      binary("dropout/cond/dropout/truediv", "RealDiv", "dropout/cond/dropout/Shape/Switch:1", "dropout/cond/dropout/sub"),
      "node { name: \"dropout/cond/dropout/GreaterEqual\" op: \"GreaterEqual\" input: "
      "\"dropout/cond/dropout/random_uniform/RandomUniform\" input: \"dropout/cond/dropout/rate\" attr { key: \"T\" value "
      "{ type: DT_FLOAT } } }\n",
      "node { name: \"dropout/cond/dropout/Cast\" op: \"Cast\" input: \"dropout/cond/dropout/GreaterEqual\" attr { key: "
      "\"SrcT\" value { type: DT_BOOL } } attr { key: \"DstT\" value { type: DT_FLOAT } } attr { key: \"Truncate\" value "
      "{ b: false } } }\n",
      binary("dropout/cond/dropout/mul", "Mul", "dropout/cond/dropout/truediv", "dropout/cond/dropout/Cast"),
      switch_of("dropout/cond/Switch_1", "bn/cond/Merge", "dropout/cond/pred_id"),
      "node { name: \"dropout/cond/Merge\" op: \"Merge\" input: \"dropout/cond/Switch_1\" input: "
      "\"dropout/cond/dropout/mul\" attr { key: \"N\" value { i: 2 } } attr { key: \"T\" value { type: DT_FLOAT } } }\n",
      "node { name: \"output\" op: \"Identity\" input: \"dropout/cond/Merge\" attr { key: \"T\" value { type: DT_FLOAT } } }\n");
}

const std::vector<float> kImages = {0.5f, -1.f, 2.f, 1.f, 0.f, -0.5f, 1.5f, 2.f, 1.f, -2.f, 1.f, 0.5f};

// BatchNormalization over the last dim, with given statistics (null: the batch's).
std::vector<float> batch_norm(const float* mean_or_null, const float* var_or_null) {
  const float gamma[] = {1.5f, 0.5f, 2.f}, beta[] = {0.1f, -0.2f, 0.3f};
  std::vector<float> out(kImages.size());
  for (int c = 0; c < 3; ++c) {
    double mean = 0, var = 0;
    for (int i = c; i < 12; i += 3) mean += kImages[i] / 4.0;
    for (int i = c; i < 12; i += 3) var += (kImages[i] - mean) * (kImages[i] - mean) / 4.0;
    if (mean_or_null) mean = mean_or_null[c], var = var_or_null[c];
    for (int i = c; i < 12; i += 3)
      out[i] = static_cast<float>(gamma[c] * (kImages[i] - mean) / std::sqrt(var + 0.001) + beta[c]);
  }
  return out;
}

TEST(GraphDefControlFlowTest, FrozenKerasModelServesItsInferenceBranchAndRefusesAFedLearningPhase) {
  const GraphDef def = graph_def_from_text(keras_frozen_model());
  const Graph g = graph_from_graph_def(def);
  const Tensor images(kImages, Shape{2, 1, 2, 3});
  Session sess(g);
  const float mean[] = {0.2f, -0.1f, 0.4f}, var[] = {1.f, 0.5f, 2.f};
  const std::vector<float> want = batch_norm(mean, var);
  const std::vector<float> got = sess.run(g.get_tensor_by_name("output:0"), {{g.get_tensor_by_name("input_1:0"), images}})
                                     .to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  EXPECT_THROW(g.get_operation_by_name("dropout/cond/dropout/random_uniform/RandomUniform"), Error);  // pruned
  // The learning phase chose the branches while importing: feeding it would change nothing, so
  // it is refused, with the way to import the other branch.
  const Tensor phase = g.get_tensor_by_name("keras_learning_phase:0");
  EXPECT_FALSE(g.is_feedable(phase));
  EXPECT_THAT(g.why_not_feedable(phase), HasSubstr("with its default value"));
  EXPECT_THAT(error_of([&] {
                sess.run(g.get_tensor_by_name("output:0"), {{g.get_tensor_by_name("input_1:0"), images}, {phase, Tensor(true)}});
              }),
              AllOf(HasSubstr("Tensor 'keras_learning_phase:0' may not be fed: import_graph_def chose the branches"),
                    HasSubstr("(Switch 'bn/cond/Switch' and 11 more) with its default value"),
                    HasSubstr("input_map={\"keras_learning_phase:0\": a concrete value}")));
}

TEST(GraphDefControlFlowTest, FrozenKerasModelImportsItsTrainingBranchWhenTheLearningPhaseIsMapped) {
  const GraphDef def = graph_def_from_text(keras_frozen_model());
  Graph g;
  import_graph_def(g, def, {{"keras_learning_phase:0", Tensor(true)}}, {}, "");
  EXPECT_TRUE(g.is_feedable(g.get_tensor_by_name("keras_learning_phase:0")));
  const std::vector<float> normalized = batch_norm(nullptr, nullptr);
  Session sess(g);
  const std::vector<float> got = sess.run(g.get_tensor_by_name("output:0"),
                                          {{g.get_tensor_by_name("input_1:0"), Tensor(kImages, Shape{2, 1, 2, 3})}})
                                     .to_vector<float>();
  // Each value is dropped (0) or kept and scaled by 1 / (1 - 0.5).
  int kept = 0;
  for (size_t i = 0; i < normalized.size(); ++i) {
    if (got[i] == 0.f) continue;
    ++kept;
    EXPECT_NEAR(got[i], 2 * normalized[i], 1e-4) << i;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 12);
}

}  // namespace
}  // namespace tapeflow
