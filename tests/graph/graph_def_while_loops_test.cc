// TensorFlow 1's while loops in a GraphDef (Note [TF1 while loops], graph/graph_def_while_loops.h),
// written as TensorFlow 1.15 prints tf.while_loop: Enter / Merge / LoopCond / Switch / Identity /
// NextIteration / Exit per loop variable, constants held in the frame by a control input from
// the Merge (condition) or the Identity (body), outer tensors read through constant Enters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/graph/tf1_graph_text.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace tf1_text;  // NOLINT: the text format's pieces

// i = 0; while i < 10: i += 1, exactly as TensorFlow 1.15 prints it.
constexpr char kCounter[] = R"pb(
node { name: "Const" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "while/Enter" op: "Enter" input: "Const" attr { key: "T" value { type: DT_INT32 } }
  attr { key: "frame_name" value { s: "while/while_context" } } attr { key: "is_constant" value { b: false } }
  attr { key: "parallel_iterations" value { i: 10 } } }
node { name: "while/Merge" op: "Merge" input: "while/Enter" input: "while/NextIteration"
  attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/Less/y" op: "Const" input: "^while/Merge" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 10 } } } }
node { name: "while/Less" op: "Less" input: "while/Merge" input: "while/Less/y" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/LoopCond" op: "LoopCond" input: "while/Less" }
node { name: "while/Switch" op: "Switch" input: "while/Merge" input: "while/LoopCond" attr { key: "T" value { type: DT_INT32 } }
  attr { key: "_class" value { list { s: "loc:@while/Merge" } } } }
node { name: "while/Identity" op: "Identity" input: "while/Switch:1" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/add/y" op: "Const" input: "^while/Identity" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "while/add" op: "AddV2" input: "while/Identity" input: "while/add/y" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/NextIteration" op: "NextIteration" input: "while/add" attr { key: "T" value { type: DT_INT32 } } }
node { name: "while/Exit" op: "Exit" input: "while/Switch" attr { key: "T" value { type: DT_INT32 } } }
node { name: "out" op: "Identity" input: "while/Exit" attr { key: "T" value { type: DT_INT32 } }
  attr { key: "_class" value { list { s: "loc:@while/Exit" } } } }
versions { producer: 134 }
)pb";

// tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * x), [0, ones]): two loop
// variables, n read by the condition and x by the body through constant Enters.
std::string power_graph() {
  const std::string frame = "while/while_context";
  return absl::StrCat(
      node("x", "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { dim { size: 3 } } } }"),
      node("n", "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"shape\" value { shape { } } }"),
      int_const("Const", 0),
      node("ones", "Const", {}, "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"value\" value { tensor { "
                                "dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 1 } } }"),
      loop_var("while", "", "Const", "DT_INT32"), loop_var("while", "_1", "ones", "DT_FLOAT"),
      enter("while/Less/Enter", "n", "DT_INT32", frame, true),
      node("while/Less", "Less", {"while/Merge", "while/Less/Enter"}, type_attr("DT_INT32")),
      node("while/LoopCond", "LoopCond", {"while/Less"}),
      int_const("while/add/y", 1, "while/Identity"),
      node("while/add", "AddV2", {"while/Identity", "while/add/y"}, type_attr("DT_INT32")),
      enter("while/mul/Enter", "x", "DT_FLOAT", frame, true),
      node("while/mul", "Mul", {"while/Identity_1", "while/mul/Enter"}, type_attr("DT_FLOAT")),
      next_iteration("while", "", "while/add", "DT_INT32"), next_iteration("while", "_1", "while/mul", "DT_FLOAT"),
      "versions { producer: 134 }\n");
}

TEST(GraphDefWhileLoopsTest, CounterImportsAsAWhileAndCountsToTen) {
  const Graph g = graph_from_graph_def(graph_def_from_text(kCounter));
  EXPECT_EQ(g.get_operation_by_name("while").type(), "While");
  EXPECT_EQ(g.get_operation_by_name("while/Exit").type(), "Identity");  // the Exit's name stays
  const Tensor out = g.get_tensor_by_name("out:0");
  EXPECT_EQ(out.dtype(), DType::kInt32);
  // A colocation with the Exit names the Identity that keeps its name.
  EXPECT_THAT(g.get_operation_by_name("out").node().colocate_with(), ElementsAre("while/Exit"));
  Session sess(g);
  const Tensor v = sess.run(out);
  EXPECT_EQ(v.shape(), Shape{});
  EXPECT_EQ(v.to_vector<int32_t>(), std::vector<int32_t>{10});
  // The frame's nodes are gone (they live in the functions).
  EXPECT_THAT(error_of([&] { g.get_operation_by_name("while/LoopCond"); }), HasSubstr("while/LoopCond"));
}

TEST(GraphDefWhileLoopsTest, LoopVariablesAndOuterTensorsThroughConstantEnters) {
  const Graph g = graph_from_graph_def(graph_def_from_text(power_graph()));
  Session sess(g);
  const Tensor x(std::vector<float>{1, 2, 3}, Shape{3});
  for (int n : {4, 0, 1}) {
    const auto out = sess.run({g.get_tensor_by_name("while/Exit:0"), g.get_tensor_by_name("while/Exit_1:0")},
                              {{g.get_tensor_by_name("x:0"), x}, {g.get_tensor_by_name("n:0"), Tensor(int32_t{n})}});
    EXPECT_EQ(out[0].to_vector<int32_t>(), std::vector<int32_t>{n});
    std::vector<float> expected;
    for (float b : {1.f, 2.f, 3.f}) {
      float p = 1;
      for (int k = 0; k < n; ++k) p *= b;
      expected.push_back(p);
    }
    EXPECT_EQ(out[1].to_vector<float>(), expected) << "n = " << n;
  }
  // A frozen GraphDef does not hold the shape invariants: the rank is kept, the dims may change.
  EXPECT_EQ(g.get_tensor_by_name("while/Exit_1:0").shape(), (Shape{-1}));
}

TEST(GraphDefWhileLoopsTest, GradientsFlowThroughTheImportedLoop) {
  // acc = x^n elementwise: d acc / dx = n x^(n-1), through the While the TensorFlow 1 loop became
  // (Note [While gradient]).
  Graph g = graph_from_graph_def(graph_def_from_text(power_graph()));
  Tensor dx;
  {
    auto scope = g.as_default();
    dx = gradients({g.get_tensor_by_name("while/Exit_1:0")}, {g.get_tensor_by_name("x:0")})[0];
  }
  Session sess(g);
  const Tensor x(std::vector<float>{1, 2, 3}, Shape{3});
  EXPECT_EQ(sess.run(dx, {{g.get_tensor_by_name("x:0"), x}, {g.get_tensor_by_name("n:0"), Tensor(int32_t{4})}}).to_vector<float>(),
            (std::vector<float>{4, 32, 108}));
  EXPECT_EQ(sess.run(dx, {{g.get_tensor_by_name("x:0"), x}, {g.get_tensor_by_name("n:0"), Tensor(int32_t{0})}}).to_vector<float>(),
            (std::vector<float>{0, 0, 0}));
}

TEST(GraphDefWhileLoopsTest, TheRewrittenGraphWritesTensorFlowTwosWhileAndItsFunctions) {
  const Graph g = graph_from_graph_def(graph_def_from_text(power_graph()));
  const GraphDef def = to_graph_def(g);
  std::vector<std::string> functions;
  for (const auto& f : def.library().function()) functions.push_back(f.signature().name());
  EXPECT_THAT(functions, ::testing::UnorderedElementsAre("while_cond", "while_body"));
  const proto::NodeDef* w = nullptr;
  for (const auto& nd : def.node()) if (nd.name() == "while") w = &nd;
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->op(), "While");
  EXPECT_THAT(std::vector<std::string>(w->input().begin(), w->input().end()), ElementsAre("Const", "ones", "n", "x"));
  const Graph again = graph_from_graph_def(def);
  Session sess(again);
  const Tensor out = sess.run(again.get_tensor_by_name("while/Exit_1:0"),
                              {{again.get_tensor_by_name("x:0"), Tensor(std::vector<float>{1, 2, 3}, Shape{3})},
                               {again.get_tensor_by_name("n:0"), Tensor(int32_t{3})}});
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{1, 8, 27}));
}

// for i in range(3): for j in range(4): s += 1 -- the inner loop's frame inside the outer's body.
std::string nested_graph() {
  const std::string inner = "while/while";
  return absl::StrCat(
      int_const("i0", 0), int_const("s0", 0),
      loop_var("while", "", "i0", "DT_INT32"), loop_var("while", "_1", "s0", "DT_INT32"),
      int_const("while/Less/y", 3, "while/Merge"),
      node("while/Less", "Less", {"while/Merge", "while/Less/y"}, type_attr("DT_INT32")),
      node("while/LoopCond", "LoopCond", {"while/Less"}),
      int_const("while/Const", 0, "while/Identity"),
      loop_var(inner, "", "while/Const", "DT_INT32"), loop_var(inner, "_1", "while/Identity_1", "DT_INT32"),
      int_const(inner + "/Less/y", 4, inner + "/Merge"),
      node(inner + "/Less", "Less", {inner + "/Merge", inner + "/Less/y"}, type_attr("DT_INT32")),
      node(inner + "/LoopCond", "LoopCond", {inner + "/Less"}),
      int_const(inner + "/add/y", 1, inner + "/Identity"),
      node(inner + "/add", "AddV2", {inner + "/Identity", inner + "/add/y"}, type_attr("DT_INT32")),
      node(inner + "/add_1", "AddV2", {inner + "/Identity_1", inner + "/add/y"}, type_attr("DT_INT32")),
      next_iteration(inner, "", inner + "/add", "DT_INT32"), next_iteration(inner, "_1", inner + "/add_1", "DT_INT32"),
      int_const("while/add/y", 1, "while/Identity"),
      node("while/add", "AddV2", {"while/Identity", "while/add/y"}, type_attr("DT_INT32")),
      next_iteration("while", "", "while/add", "DT_INT32"), next_iteration("while", "_1", inner + "/Exit_1", "DT_INT32"));
}

TEST(GraphDefWhileLoopsTest, NestedLoopsBecomeAWhileInsideTheOuterBody) {
  const GraphDef def = graph_def_from_text(nested_graph());
  const Graph g = graph_from_graph_def(def);
  Session sess(g);
  const auto out = sess.run({g.get_tensor_by_name("while/Exit:0"), g.get_tensor_by_name("while/Exit_1:0")});
  EXPECT_EQ(out[0].to_vector<int32_t>(), std::vector<int32_t>{3});
  EXPECT_EQ(out[1].to_vector<int32_t>(), std::vector<int32_t>{12});
  const GraphDef written = to_graph_def(g);
  std::vector<std::string> functions;
  for (const auto& f : written.library().function()) functions.push_back(f.signature().name());
  EXPECT_THAT(functions,
              ::testing::UnorderedElementsAre("while_cond", "while_body", "while_while_cond", "while_while_body"));
}

TEST(GraphDefWhileLoopsTest, ABodyNodeNothingReadsStillRunsEachIteration) {
  // An Assert(i < 5) in the body that no node reads (TensorFlow runs it; so must the While).
  const std::string text = replaced(kCounter, "versions", int_const("while/Assert/y", 5, "while/Identity") +
                  node("while/Assert/Less", "Less", {"while/Identity", "while/Assert/y"}, type_attr("DT_INT32")) +
                  node("while/Assert", "Assert", {"while/Assert/Less", "while/Identity"},
                       "attr { key: \"T\" value { list { type: DT_INT32 } } } attr { key: \"summarize\" value { i: 3 } }") +
                  "versions");
  const Graph g = graph_from_graph_def(graph_def_from_text(text));
  Session sess(g);
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { sess.run(g.get_tensor_by_name("out:0")); }),
              AllOf(HasSubstr("assertion failed: [5]"), HasSubstr("in body 'while_body' of node 'while' (While)")));
}

TEST(GraphDefWhileLoopsTest, MalformedLoopsAreTypedErrorsNamingTheLoopAndTheNode) {
  const std::string two_conds = replaced(kCounter, "versions", node("while/LoopCond_1", "LoopCond", {"while/Less"}) + "versions");
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_from_graph_def(graph_def_from_text(two_conds)); }),
              HasSubstr("node 'while/LoopCond_1' (LoopCond): in TensorFlow 1 while loop 'while/while_context': a second "
                        "LoopCond in one loop"));
  // The body reads a tensor of the root frame without an Enter.
  const std::string outside = replaced(kCounter, "input: \"while/add/y\"", "input: \"Const\"");
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_from_graph_def(graph_def_from_text(outside)); }),
              AllOf(HasSubstr("node 'while/add' (AddV2)"), HasSubstr("reads 'Const', which is outside the loop")));
  const GraphDef stray = graph_def_from_text(int_const("c", 1) + node("n", "NextIteration", {"c"}, type_attr("DT_INT32")));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_from_graph_def(stray); }),
              HasSubstr("node 'n' (NextIteration): is not inside a while loop"));
  const std::string no_switch = replaced(kCounter, "op: \"Exit\" input: \"while/Switch\"", "op: \"Exit\" input: \"while/Merge\"");
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_from_graph_def(graph_def_from_text(no_switch)); }),
              AllOf(HasSubstr("node 'while/Exit' (Exit)"), HasSubstr("an Exit reads output 0 of a loop variable's Switch")));
  const std::string ref = replaced(kCounter, "op: \"Enter\"", "op: \"RefEnter\"");
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(ref)); }),
              HasSubstr("a loop over reference variables; freeze the graph first"));
  // Frames nest as a tree: an Enter into a frame from inside it (which would make the frame its
  // own parent) is refused, as is one from a third frame.
  const GraphDef self = graph_def_from_text(int_const("c", 0) + enter("e1", "c", "DT_INT32", "A", false) +
                                            enter("e2", "e1", "DT_INT32", "A", false));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_from_graph_def(self); }),
              HasSubstr("node 'e2' (Enter): enters frame 'A' from another frame than its other Enters"));
  // Nesting is bounded: 33 loops, each inside the last.
  std::string deep = int_const("c", 0);
  std::string outer = "c";
  for (int d = 0; d < 33; ++d) {
    const std::string e = absl::StrCat("e", d);
    deep += enter(e, outer, "DT_INT32", absl::StrCat("f", d), false);
    outer = e;
  }
  EXPECT_THAT(error_of<ResourceExhaustedError>([&] { graph_from_graph_def(graph_def_from_text(deep)); }),
              HasSubstr("while loops nest more than 32 deep"));
}

TEST(GraphDefWhileLoopsTest, InputMapAndReturnElementsKeepTheirMeaningAroundTheLoop) {
  Graph g;
  const Tensor n = [&] {
    auto scope = g.as_default();
    return placeholder(DType::kInt32, Shape{}, "limit");
  }();
  const auto elements = import_graph_def(g, graph_def_from_text(power_graph()), {{"n:0", n}}, {"while/Exit_1:0"}, "loop");
  const Tensor acc = std::get<Tensor>(elements[0]);
  Session sess(g);
  const Tensor out = sess.run(acc, {{g.get_tensor_by_name("loop/x:0"), Tensor(std::vector<float>{2, 2, 2}, Shape{3})},
                                    {n, Tensor(int32_t{5})}});
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{32, 32, 32}));
  EXPECT_EQ(g.get_operation_by_name("loop/while").type(), "While");
}

}  // namespace
}  // namespace tapeflow
