// TensorFlow 1's tf.cond of a predicate known only when the graph runs (Note [TF1 conds as If],
// graph/graph_def_conds.h), written as TensorFlow 1.15 prints it: the pivot Switch(pred, pred)
// with switch_t / switch_f holding each branch's constants, a Switch on pred_id per outer tensor a
// branch reads, a Merge per result (false side first).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/graph/tf1_graph_text.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using namespace tf1_text;  // NOLINT: the text format's pieces

const std::string kInputs =
    node("x", "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { dim { size: 3 } } } }") +
    node("p", "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_BOOL } } attr { key: \"shape\" value { shape { } } }") +
    node("q", "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_BOOL } } attr { key: \"shape\" value { shape { } } }");

// tf.cond(p, lambda: x * 2, lambda: x + 1).
std::string cond_graph() {
  return kInputs + cond_head("cond", "p") +
         float_const("cond/mul/y", 2, "cond/switch_t") + switch_of("cond/mul/Switch", "x", "cond/pred_id", "DT_FLOAT") +
         node("cond/mul", "Mul", {"cond/mul/Switch:1", "cond/mul/y"}, type_attr("DT_FLOAT")) +
         float_const("cond/add/y", 1, "cond/switch_f") + switch_of("cond/add/Switch", "x", "cond/pred_id", "DT_FLOAT") +
         node("cond/add", "AddV2", {"cond/add/Switch", "cond/add/y"}, type_attr("DT_FLOAT")) +
         merge("cond/Merge", "cond/add", "cond/mul", "DT_FLOAT") +
         node("out", "Identity", {"cond/Merge"}, type_attr("DT_FLOAT"));
}

std::vector<float> run(const Graph& g, const std::string& fetch, bool p, bool q = false, const std::string& prefix = "") {
  Session sess(g);
  return sess.run(g.get_tensor_by_name(prefix + fetch),
                  {{g.get_tensor_by_name(prefix + "x:0"), Tensor(std::vector<float>{1, 2, 3}, Shape{3})},
                   {g.get_tensor_by_name(prefix + "p:0"), Tensor(p)},
                   {g.get_tensor_by_name(prefix + "q:0"), Tensor(q)}})
      .to_vector<float>();
}

TEST(GraphDefCondsTest, ACondOnAPlaceholderImportsAsAnIfThatChoosesWhenItRuns) {
  const Graph g = graph_from_graph_def(graph_def_from_text(cond_graph()));
  EXPECT_EQ(g.get_operation_by_name("cond").type(), "If");
  EXPECT_EQ(g.get_operation_by_name("cond/Merge").type(), "Identity");  // the Merge's name stays
  EXPECT_EQ(g.get_tensor_by_name("out:0").shape(), (Shape{3}));        // both branches' shape
  EXPECT_EQ(run(g, "out:0", true), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(run(g, "out:0", false), (std::vector<float>{2, 3, 4}));
  // The branches are TensorFlow 2's functions when written back, and read again the same.
  const GraphDef def = to_graph_def(g);
  std::vector<std::string> functions;
  for (const auto& f : def.library().function()) functions.push_back(f.signature().name());
  EXPECT_THAT(functions, UnorderedElementsAre("cond_true", "cond_false"));
  const Graph again = graph_from_graph_def(def);
  EXPECT_EQ(run(again, "out:0", true), (std::vector<float>{2, 4, 6}));
}

TEST(GraphDefCondsTest, APredicateMappedToATensorOfTheGraphIsReadWhenItRuns) {
  Graph g;
  Tensor flag;
  {
    auto scope = g.as_default();
    flag = placeholder(DType::kBool, {}, "flag");
  }
  import_graph_def(g, graph_def_from_text(cond_graph()), {{"p:0", flag}}, {}, "imported");
  Session sess(g);
  const Tensor x(std::vector<float>{1, 2, 3}, Shape{3});
  for (bool f : {true, false})
    EXPECT_EQ(sess.run(g.get_tensor_by_name("imported/out:0"), {{g.get_tensor_by_name("imported/x:0"), x}, {flag, Tensor(f)}})
                  .to_vector<float>(),
              f ? (std::vector<float>{2, 4, 6}) : (std::vector<float>{2, 3, 4}));
}

// tf.cond(p, lambda: tf.cond(q, lambda: x * 2, lambda: x * 3), lambda: x + 1): the inner cond's
// predicate and x enter the outer true branch through Switches of their own.
std::string nested_graph() {
  const std::string in = "cond/cond";
  return kInputs + cond_head("cond", "p") +
         switch_of(in + "/Switch/Switch", "q", "cond/pred_id", "DT_BOOL") + cond_head(in, in + "/Switch/Switch:1") +
         switch_of(in + "/mul/Switch/Switch", "x", "cond/pred_id", "DT_FLOAT") +
         switch_of(in + "/mul/Switch", in + "/mul/Switch/Switch:1", in + "/pred_id", "DT_FLOAT") +
         float_const(in + "/mul/y", 2, in + "/switch_t") +
         node(in + "/mul", "Mul", {in + "/mul/Switch:1", in + "/mul/y"}, type_attr("DT_FLOAT")) +
         switch_of(in + "/mul_1/Switch", in + "/mul/Switch/Switch:1", in + "/pred_id", "DT_FLOAT") +
         float_const(in + "/mul_1/y", 3, in + "/switch_f") +
         node(in + "/mul_1", "Mul", {in + "/mul_1/Switch", in + "/mul_1/y"}, type_attr("DT_FLOAT")) +
         merge(in + "/Merge", in + "/mul_1", in + "/mul", "DT_FLOAT") +
         switch_of("cond/add/Switch", "x", "cond/pred_id", "DT_FLOAT") + float_const("cond/add/y", 1, "cond/switch_f") +
         node("cond/add", "AddV2", {"cond/add/Switch", "cond/add/y"}, type_attr("DT_FLOAT")) +
         merge("cond/Merge", "cond/add", in + "/Merge", "DT_FLOAT");
}

TEST(GraphDefCondsTest, NestedCondsBecomeAnIfInsideTheOuterIfsBranch) {
  const Graph g = graph_from_graph_def(graph_def_from_text(nested_graph()));
  EXPECT_EQ(g.get_operation_by_name("cond").type(), "If");
  EXPECT_EQ(run(g, "cond/Merge:0", true, true), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(run(g, "cond/Merge:0", true, false), (std::vector<float>{3, 6, 9}));
  EXPECT_EQ(run(g, "cond/Merge:0", false, true), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(run(g, "cond/Merge:0", false, false), (std::vector<float>{2, 3, 4}));
  const GraphDef def = to_graph_def(g);
  std::vector<std::string> functions;
  for (const auto& f : def.library().function()) functions.push_back(f.signature().name());
  EXPECT_THAT(functions, UnorderedElementsAre("cond_true", "cond_false", "cond_cond_true", "cond_cond_false"));
}

// s = 0; for i in range(5): s += tf.cond(i < 2, lambda: 10, lambda: 1) -- a cond in a loop's body.
TEST(GraphDefCondsTest, ACondInsideAWhileLoopsBodyBecomesAnIfInTheWhilesBody) {
  const std::string frame = "while/while_context", c = "while/cond";
  const std::string text =
      int_const("i0", 0) + int_const("s0", 0) + loop_var("while", "", "i0", "DT_INT32") +
      loop_var("while", "_1", "s0", "DT_INT32") + int_const("while/Less/y", 5, "while/Merge") +
      node("while/Less", "Less", {"while/Merge", "while/Less/y"}, type_attr("DT_INT32")) +
      node("while/LoopCond", "LoopCond", {"while/Less"}) + int_const("while/Less_1/y", 2, "while/Identity") +
      node("while/Less_1", "Less", {"while/Identity", "while/Less_1/y"}, type_attr("DT_INT32")) +
      cond_head(c, "while/Less_1") + switch_of(c + "/add/Switch", "while/Identity_1", c + "/pred_id", "DT_INT32") +
      int_const(c + "/add/y", 10, c + "/switch_t") +
      node(c + "/add", "AddV2", {c + "/add/Switch:1", c + "/add/y"}, type_attr("DT_INT32")) +
      switch_of(c + "/add_1/Switch", "while/Identity_1", c + "/pred_id", "DT_INT32") +
      int_const(c + "/add_1/y", 1, c + "/switch_f") +
      node(c + "/add_1", "AddV2", {c + "/add_1/Switch", c + "/add_1/y"}, type_attr("DT_INT32")) +
      merge(c + "/Merge", c + "/add_1", c + "/add", "DT_INT32") + int_const("while/add/y", 1, "while/Identity") +
      node("while/add", "AddV2", {"while/Identity", "while/add/y"}, type_attr("DT_INT32")) +
      next_iteration("while", "", "while/add", "DT_INT32") + next_iteration("while", "_1", c + "/Merge", "DT_INT32");
  const Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_operation_by_name("while").type(), "While");
  Session sess(g);
  EXPECT_EQ(sess.run(g.get_tensor_by_name("while/Exit_1:0")).to_vector<int32_t>(), std::vector<int32_t>{23});
  const GraphDef def = to_graph_def(g);  // the If runs in the While's body
  std::vector<std::string> body_ops;
  for (const auto& f : def.library().function())
    if (f.signature().name() == "while_body")
      for (const auto& nd : f.node_def()) body_ops.push_back(nd.op());
  EXPECT_THAT(body_ops, ::testing::Contains("If"));
}

// while tf.cond(flag, lambda: i < 3, lambda: i < 6): i += 1 -- a cond in the loop's condition,
// whose Switches switch the loop's Merge itself.
TEST(GraphDefCondsTest, ACondInsideAWhileLoopsConditionBecomesAnIfInTheWhilesCond) {
  const std::string c = "while/cond";
  const std::string text =
      node("flag", "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_BOOL } } attr { key: \"shape\" value { shape { } } }") +
      int_const("i0", 0) + loop_var("while", "", "i0", "DT_INT32") +
      enter("while/cond/Enter", "flag", "DT_BOOL", "while/while_context", true) + cond_head(c, "while/cond/Enter") +
      switch_of(c + "/Less/Switch", "while/Merge", c + "/pred_id", "DT_INT32") + int_const(c + "/Less/y", 3, c + "/switch_t") +
      node(c + "/Less", "Less", {c + "/Less/Switch:1", c + "/Less/y"}, type_attr("DT_INT32")) +
      switch_of(c + "/Less_1/Switch", "while/Merge", c + "/pred_id", "DT_INT32") + int_const(c + "/Less_1/y", 6, c + "/switch_f") +
      node(c + "/Less_1", "Less", {c + "/Less_1/Switch", c + "/Less_1/y"}, type_attr("DT_INT32")) +
      merge(c + "/Merge", c + "/Less_1", c + "/Less", "DT_BOOL") + node("while/LoopCond", "LoopCond", {c + "/Merge"}) +
      int_const("while/add/y", 1, "while/Identity") +
      node("while/add", "AddV2", {"while/Identity", "while/add/y"}, type_attr("DT_INT32")) +
      next_iteration("while", "", "while/add", "DT_INT32");
  const Graph g = graph_from_graph_def(graph_def_from_text(text));
  Session sess(g);
  for (bool flag : {true, false})
    EXPECT_EQ(sess.run(g.get_tensor_by_name("while/Exit:0"), {{g.get_tensor_by_name("flag:0"), Tensor(flag)}}).to_vector<int32_t>(),
              std::vector<int32_t>{flag ? 3 : 6});
}

// tf.cond(p, lambda: tf.while_loop(lambda i: i < 5, lambda i: i + 1, [0]), lambda: 100): the
// loop becomes a While first, then the cond an If with the While in its true branch.
TEST(GraphDefCondsTest, AWhileLoopInsideACondsBranchBecomesAWhileInTheIfsBranch) {
  const std::string w = "cond/while";
  const std::string text =
      kInputs + cond_head("cond", "p") + int_const("cond/Const", 0, "cond/switch_t") + loop_var(w, "", "cond/Const", "DT_INT32") +
      int_const(w + "/Less/y", 5, w + "/Merge") + node(w + "/Less", "Less", {w + "/Merge", w + "/Less/y"}, type_attr("DT_INT32")) +
      node(w + "/LoopCond", "LoopCond", {w + "/Less"}) + int_const(w + "/add/y", 1, w + "/Identity") +
      node(w + "/add", "AddV2", {w + "/Identity", w + "/add/y"}, type_attr("DT_INT32")) +
      next_iteration(w, "", w + "/add", "DT_INT32") + int_const("cond/Const_1", 100, "cond/switch_f") +
      merge("cond/Merge", "cond/Const_1", w + "/Exit", "DT_INT32");
  const Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_operation_by_name("cond").type(), "If");
  Session sess(g);
  for (bool p : {true, false})
    EXPECT_EQ(sess.run(g.get_tensor_by_name("cond/Merge:0"), {{g.get_tensor_by_name("p:0"), Tensor(p)}}).to_vector<int32_t>(),
              std::vector<int32_t>{p ? 5 : 100});
}

// tf.cond(p, lambda: x, lambda: y) frozen without switch_t and switch_f (nothing read them): the
// Merge reads the two Switches; and three such conds in one scope get names of their own.
TEST(GraphDefCondsTest, BranchesThatOnlyPassATensorThroughAndCondsSharingAScope) {
  std::string text = kInputs + node("y", "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: "
                                                             "\"shape\" value { shape { dim { size: 3 } } } }");
  for (const std::string k : {"", "_1", "_2"})
    text += switch_of("c/Switch" + k, "x", "p", "DT_FLOAT") + switch_of("c/Switch_y" + k, "y", "p", "DT_FLOAT") +
            merge("c/Merge" + k, "c/Switch_y" + k, "c/Switch" + k + ":1", "DT_FLOAT");
  const Graph g = graph_from_graph_def(graph_def_from_text(text));
  for (const std::string name : {"c", "c_1", "c_2"}) EXPECT_EQ(g.get_operation_by_name(name).type(), "If") << name;
  Session sess(g);
  const Tensor x(std::vector<float>{1, 2, 3}, Shape{3}), y(std::vector<float>{7, 8, 9}, Shape{3});
  for (bool p : {true, false})
    EXPECT_EQ(sess.run(g.get_tensor_by_name("c/Merge_2:0"),
                       {{g.get_tensor_by_name("x:0"), x}, {g.get_tensor_by_name("y:0"), y}, {g.get_tensor_by_name("p:0"), Tensor(p)}})
                  .to_vector<float>(),
              (p ? x : y).to_vector<float>());
}

TEST(GraphDefCondsTest, WhatAnIfCannotSayIsATypedErrorNamingTheNode) {
  // A branch node reading an outer tensor without a Switch.
  const std::string direct = replaced(cond_graph(), "input: \"cond/mul/Switch:1\"", "input: \"x\"");
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(direct)); }),
              AllOf(HasSubstr("node 'cond/mul' (Mul)"), HasSubstr("reads 'x:0' inside a TensorFlow 1 cond's branch")));
  // Which branch the Merge took (its output 1, value_index).
  const std::string value_index = cond_graph() + node("taken", "Identity", {"cond/Merge:1"}, type_attr("DT_INT32"));
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(value_index)); }),
              AllOf(HasSubstr("node 'taken' (Identity)"), HasSubstr("reads which branch Merge 'cond/Merge' took")));
  // Nesting is bounded: a Switch on each of 33 predicates, each switching the last one's true side.
  std::string deep = kInputs;
  std::string data = "x";
  for (int d = 0; d < 33; ++d) {
    const std::string pred = absl::StrCat("p", d), sw = absl::StrCat("s", d);
    deep += node(pred, "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_BOOL } } attr { key: \"shape\" value { shape { } } }") +
            switch_of(sw, data, pred, "DT_FLOAT");
    data = sw + ":1";
  }
  deep += node("end", "Identity", {data}, type_attr("DT_FLOAT"));
  EXPECT_THAT(error_of<ResourceExhaustedError>([&] { graph_from_graph_def(graph_def_from_text(deep)); }),
              HasSubstr("is inside TensorFlow 1 conds nested more than 32 deep"));
  // Both sides of one predicate read without a Merge.
  const std::string both = cond_graph() + node("both", "AddV2", {"cond/mul", "cond/add"}, type_attr("DT_FLOAT"));
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(both)); }),
              AllOf(HasSubstr("node 'both' (AddV2)"), HasSubstr("both sides of one) without a Merge")));
}

}  // namespace
}  // namespace tapeflow
