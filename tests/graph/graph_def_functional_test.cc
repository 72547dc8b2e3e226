// TensorFlow 2's control flow over functions in a GraphDef: If / StatelessIf, While /
// StatelessWhile and Case / StatelessCase, written the way TensorFlow 2 writes a frozen
// tf.function with tf.cond, tf.while_loop and tf.switch_case; imported, run by a Session,
// written back with their functions (Note [Functional control flow], graph/functional_ops.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/functional_ops.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Pieces of TensorFlow's text format.
std::string float_const(const std::string& name, float v) {
  return absl::StrCat(R"pb(node_def { name: ")pb", name, R"pb(" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
                 attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: )pb", v, " } } } }");
}
std::string int_const(const std::string& name, int v) {
  return absl::StrCat(R"pb(node_def { name: ")pb", name, R"pb(" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                 attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: )pb", v, " } } } }");
}
// A function of one float argument "x" returning "x <op> c" (TensorFlow's names: "z" is the
// output arg of the binary ops).
std::string unary_function(const std::string& name, const std::string& op, float c) {
  return absl::StrCat(R"pb(function {
          signature { name: ")pb", name, R"pb(" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
          )pb", float_const("c", c), R"pb(
          node_def { name: "r" op: ")pb", op, R"pb(" input: "x" input: "c:output:0" attr { key: "T" value { type: DT_FLOAT } } }
          ret { key: "y" value: "r:z:0" } })pb");
}

const char* const kPlaceholders = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } attr { key: "shape" value { shape { } } } }
)pb";

// tf.cond(p, lambda: x * 2, lambda: x - 1) in a tf.function, frozen: a StatelessIf with
// TensorFlow 2's attrs (its lowering hints included), then an Identity.
std::string cond_graph(const std::string& op = "StatelessIf", const std::string& cond = "p", const std::string& tcond = "DT_BOOL") {
  return absl::StrCat(kPlaceholders, R"pb(
    node { name: "cond" op: ")pb", op, R"pb(" input: ")pb", cond, R"pb(" input: "x"
           attr { key: "Tcond" value { type: )pb", tcond, R"pb( } }
           attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "_lower_using_switch_merge" value { b: true } }
           attr { key: "_read_only_resource_inputs" value { list { } } }
           attr { key: "else_branch" value { func { name: "cond_false_8" } } }
           attr { key: "output_shapes" value { list { shape { dim { size: 2 } } } } }
           attr { key: "then_branch" value { func { name: "cond_true_7" } } } }
    node { name: "out" op: "Identity" input: "cond" attr { key: "T" value { type: DT_FLOAT } } }
    library { )pb", unary_function("cond_true_7", "Mul", 2), unary_function("cond_false_8", "Sub", 1),
                      unary_function("unused_fn", "Add", 5), " }\n versions { producer: 1286 min_consumer: 12 }");
}

Tensor run_out(const Graph& g, const Tensor& x, const std::vector<Feed>& more = {}) {
  Session sess(g);
  FeedList feeds{{g.get_tensor_by_name("x:0"), x}};
  feeds.insert(feeds.end(), more.begin(), more.end());
  return sess.run(g.get_tensor_by_name("out:0"), feeds);
}

TEST(GraphDefFunctionalTest, IfRunsTheBranchItsConditionPicks) {
  Graph g = graph_from_graph_def(graph_def_from_text(cond_graph()));
  const Operation cond = g.get_operation_by_name("cond");
  EXPECT_EQ(cond.type(), "StatelessIf");
  EXPECT_EQ(cond.node().functions().size(), 2u);
  EXPECT_EQ(cond.output(0).dtype(), DType::kFloat32);
  EXPECT_EQ(cond.output(0).shape(), (Shape{2}));
  const Tensor p = g.get_tensor_by_name("p:0");
  EXPECT_EQ(run_out(g, Tensor{1.5f, -3.f}, {{p, Tensor(true)}}).to_vector<float>(), (std::vector<float>{3.f, -6.f}));
  EXPECT_EQ(run_out(g, Tensor{1.5f, -3.f}, {{p, Tensor(false)}}).to_vector<float>(), (std::vector<float>{0.5f, -4.f}));
}

// An imported If is differentiated through the branch its condition (an int32 here) picks.
TEST(GraphDefFunctionalTest, GradientsFlowThroughAnImportedIf) {
  std::string text = cond_graph("If", "n", "DT_INT32");
  text.insert(0, R"pb(node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "shape" value { shape { } } } })pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  Tensor dx;
  {
    auto scope = g.as_default();
    dx = gradients({g.get_tensor_by_name("out:0")}, {g.get_tensor_by_name("x:0")})[0];
  }
  Session sess(g);
  const Tensor x = g.get_tensor_by_name("x:0"), n = g.get_tensor_by_name("n:0");
  EXPECT_EQ(sess.run(dx, {{x, Tensor{1.f, 2.f}}, {n, Tensor(int32_t{4})}}).to_vector<float>(), (std::vector<float>{2.f, 2.f}));
  EXPECT_EQ(sess.run(dx, {{x, Tensor{1.f, 2.f}}, {n, Tensor(int32_t{0})}}).to_vector<float>(), (std::vector<float>{1.f, 1.f}));
}

// TensorFlow's truth value: a nonzero number, or a non-scalar with elements.
TEST(GraphDefFunctionalTest, IfConditionsFollowTensorFlowsTruthValue) {
  std::string text = cond_graph("If", "n", "DT_INT32");
  text.insert(0, R"pb(node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "shape" value { shape { } } } })pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_operation_by_name("cond").type(), "If");
  const Tensor n = g.get_tensor_by_name("n:0");
  EXPECT_EQ(run_out(g, Tensor{1.f, 2.f}, {{n, Tensor(int32_t{-3})}}).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_EQ(run_out(g, Tensor{1.f, 2.f}, {{n, Tensor(int32_t{0})}}).to_vector<float>(), (std::vector<float>{0.f, 1.f}));
  EXPECT_TRUE(truth_value(Tensor{0.f, 0.f}));
  EXPECT_FALSE(truth_value(Tensor::from_host(DType::kFloat32, Shape{0}, nullptr)));
  EXPECT_FALSE(truth_value(Tensor(0.0)));
  EXPECT_TRUE(truth_value(Tensor(uint8_t{7})));
}

// tf.while_loop(lambda i, n, acc: i < n, lambda i, n, acc: (i + 1, n, acc * 2), (0, n, x)) as
// TensorFlow 2 writes it: the loop counter and maximum_iterations first, output_shapes set.
std::string while_graph(const std::string& acc_shape = "dim { size: 2 }", const std::string& body_op = "Mul") {
  return absl::StrCat(kPlaceholders, R"pb(
    node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "shape" value { shape { } } } }
    node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "max" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: -1 } } } }
    node { name: "while" op: "StatelessWhile" input: "zero" input: "max" input: "zero" input: "n" input: "x"
           attr { key: "T" value { list { type: DT_INT32 type: DT_INT32 type: DT_INT32 type: DT_INT32 type: DT_FLOAT } } }
           attr { key: "_lower_using_switch_merge" value { b: true } }
           attr { key: "_num_original_outputs" value { i: 5 } }
           attr { key: "body" value { func { name: "while_body_20" } } }
           attr { key: "cond" value { func { name: "while_cond_19" } } }
           attr { key: "output_shapes" value { list { shape { } shape { } shape { } shape { } shape { )pb", acc_shape, R"pb( } } } }
           attr { key: "parallel_iterations" value { i: 10 } } }
    node { name: "out" op: "Identity" input: "while:4" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "count" op: "Identity" input: "while:2" attr { key: "T" value { type: DT_INT32 } } }
    library {
      function {
        signature { name: "while_cond_19"
          input_arg { name: "loop_counter" type: DT_INT32 } input_arg { name: "maximum_iterations" type: DT_INT32 }
          input_arg { name: "i" type: DT_INT32 } input_arg { name: "n" type: DT_INT32 } input_arg { name: "acc" type: DT_FLOAT }
          output_arg { name: "identity" type: DT_BOOL } }
        node_def { name: "Less" op: "Less" input: "i" input: "n" attr { key: "T" value { type: DT_INT32 } } }
        node_def { name: "Identity" op: "Identity" input: "Less:z:0" attr { key: "T" value { type: DT_BOOL } } }
        ret { key: "identity" value: "Identity:output:0" } }
      function {
        signature { name: "while_body_20"
          input_arg { name: "loop_counter" type: DT_INT32 } input_arg { name: "maximum_iterations" type: DT_INT32 }
          input_arg { name: "i" type: DT_INT32 } input_arg { name: "n" type: DT_INT32 } input_arg { name: "acc" type: DT_FLOAT }
          output_arg { name: "add" type: DT_INT32 } output_arg { name: "maximum_iterations_out" type: DT_INT32 }
          output_arg { name: "add_1" type: DT_INT32 } output_arg { name: "n_out" type: DT_INT32 }
          output_arg { name: "mul" type: DT_FLOAT } }
        )pb", int_const("one", 1), float_const("two", 2), R"pb(
        node_def { name: "add_0" op: "AddV2" input: "loop_counter" input: "one:output:0" attr { key: "T" value { type: DT_INT32 } } }
        node_def { name: "add_1_0" op: "AddV2" input: "i" input: "one:output:0" attr { key: "T" value { type: DT_INT32 } } }
        node_def { name: "mul_0" op: ")pb", body_op, R"pb(" input: "acc" input: "two:output:0" attr { key: "T" value { type: DT_FLOAT } } }
        ret { key: "add" value: "add_0:z:0" } ret { key: "maximum_iterations_out" value: "maximum_iterations" }
        ret { key: "add_1" value: "add_1_0:z:0" } ret { key: "n_out" value: "n" } ret { key: "mul" value: "mul_0:z:0" } }
    }
    versions { producer: 1286 min_consumer: 12 })pb");
}

TEST(GraphDefFunctionalTest, WhileRepeatsItsBodyWhileCondHolds) {
  Graph g = graph_from_graph_def(graph_def_from_text(while_graph()));
  EXPECT_EQ(g.get_operation_by_name("while").type(), "StatelessWhile");
  EXPECT_EQ(g.get_operation_by_name("while").num_outputs(), 5);
  EXPECT_EQ(g.get_tensor_by_name("while:4").shape(), (Shape{2}));
  const Tensor n = g.get_tensor_by_name("n:0");
  Session sess(g);
  const FeedList three{{g.get_tensor_by_name("x:0"), Tensor{1.f, -0.5f}}, {n, Tensor(int32_t{3})}};
  const std::vector<Tensor> r = sess.run({g.get_tensor_by_name("out:0"), g.get_tensor_by_name("count:0")}, three);
  EXPECT_EQ(r[0].to_vector<float>(), (std::vector<float>{8.f, -4.f}));
  EXPECT_EQ(r[1].item<int32_t>(), 3);
  // A loop whose cond is false at once returns its inputs.
  EXPECT_EQ(run_out(g, Tensor{1.f, -0.5f}, {{n, Tensor(int32_t{0})}}).to_vector<float>(), (std::vector<float>{1.f, -0.5f}));
}

// output_shapes may relax a loop variable's shape ([?] here): the loop's output takes the declared
// shape, and an input it does not allow is refused. (A loop variable that grows between
// iterations: CondWhileTest.ShapeInvariantsLetALoopVariableChangeShape.)
TEST(GraphDefFunctionalTest, WhileLoopVariablesTakeTheShapesOutputShapesAllows) {
  Graph g = graph_from_graph_def(graph_def_from_text(while_graph("dim { size: -1 }", "Mul")));
  EXPECT_EQ(g.get_tensor_by_name("while:4").shape(), (Shape{-1}));
  EXPECT_EQ(run_out(g, Tensor{1.f, 2.f}, {{g.get_tensor_by_name("n:0"), Tensor(int32_t{2})}}).to_vector<float>(),
            (std::vector<float>{4.f, 8.f}));
  // An input that output_shapes does not allow is refused at import.
  EXPECT_THAT(error_of<InvalidArgumentError>([] { graph_from_graph_def(graph_def_from_text(while_graph("dim { size: 3 }"))); }),
              HasSubstr("node 'while' (StatelessWhile): input 4 has shape [2], which attr 'output_shapes' ([3]) does not allow"));
}

TEST(GraphDefFunctionalTest, CaseRunsTheIndexedBranchAndTheLastOneOutOfRange) {
  const std::string text = absl::StrCat(kPlaceholders, R"pb(
    node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "shape" value { shape { } } } }
    node { name: "case" op: "StatelessCase" input: "i" input: "x"
           attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } }
           attr { key: "branches" value { list { func { name: "plus" } func { name: "times" } func { name: "minus" } } } }
           attr { key: "output_shapes" value { list { shape { dim { size: 2 } } } } } }
    node { name: "out" op: "Identity" input: "case" attr { key: "T" value { type: DT_FLOAT } } }
    library { )pb", unary_function("plus", "AddV2", 1), unary_function("times", "Mul", 10),
                                        unary_function("minus", "Sub", 100), " }");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  const Tensor i = g.get_tensor_by_name("i:0");
  auto at = [&](int32_t index) { return run_out(g, Tensor{1.f, 2.f}, {{i, Tensor(index)}}).to_vector<float>(); };
  EXPECT_EQ(at(0), (std::vector<float>{2.f, 3.f}));
  EXPECT_EQ(at(1), (std::vector<float>{10.f, 20.f}));
  EXPECT_EQ(at(2), (std::vector<float>{-99.f, -98.f}));
  EXPECT_EQ(at(7), at(2));
  EXPECT_EQ(at(-1), at(2));
}

// A While whose body holds a StatelessIf (each function a body of its own, nested).
TEST(GraphDefFunctionalTest, FunctionsNestIfInsideWhile) {
  std::string text = while_graph("dim { size: 2 }", "halve_or_double");
  // The body's "mul_0" becomes a call of a function that runs an If on the sign of acc's sum.
  const std::string library_end = "\n    }\n    versions";
  text.replace(text.rfind(library_end), library_end.size(), absl::StrCat(R"pb(
      function {
        signature { name: "halve_or_double" input_arg { name: "acc" type: DT_FLOAT } input_arg { name: "two" type: DT_FLOAT }
                    output_arg { name: "z" type: DT_FLOAT } }
        )pb", int_const("axis", 0), float_const("zero", 0), R"pb(
        node_def { name: "sum" op: "Sum" input: "acc" input: "axis:output:0" attr { key: "T" value { type: DT_FLOAT } }
                   attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "keep_dims" value { b: false } } }
        node_def { name: "positive" op: "Greater" input: "sum:output:0" input: "zero:output:0" attr { key: "T" value { type: DT_FLOAT } } }
        node_def { name: "if" op: "StatelessIf" input: "positive:z:0" input: "acc"
                   attr { key: "Tcond" value { type: DT_BOOL } } attr { key: "Tin" value { list { type: DT_FLOAT } } }
                   attr { key: "Tout" value { list { type: DT_FLOAT } } }
                   attr { key: "then_branch" value { func { name: "halve" } } }
                   attr { key: "else_branch" value { func { name: "double" } } } }
        ret { key: "z" value: "if:output:0" } }
      )pb", unary_function("halve", "Mul", 0.5f), unary_function("double", "Mul", 2), library_end));
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  // Positive sums halve, others double: [1, 1] -> [.5, .5] -> [.25, .25]; [-1, 0] -> [-2, 0] -> [-4, 0].
  const Tensor n = g.get_tensor_by_name("n:0");
  EXPECT_EQ(run_out(g, Tensor{1.f, 1.f}, {{n, Tensor(int32_t{2})}}).to_vector<float>(), (std::vector<float>{.25f, .25f}));
  EXPECT_EQ(run_out(g, Tensor{-1.f, 0.f}, {{n, Tensor(int32_t{2})}}).to_vector<float>(), (std::vector<float>{-4.f, 0.f}));

  // Written back: the nodes keep TensorFlow's attrs, the library holds the functions used (the
  // nested ones too) once each, and the GraphDef imports and runs alike.
  const GraphDef out = to_graph_def(g);
  std::vector<std::string> names;
  for (const auto& f : out.library().function()) names.push_back(f.signature().name());
  std::sort(names.begin(), names.end());
  EXPECT_THAT(names, ElementsAre("double", "halve", "halve_or_double", "while_body_20", "while_cond_19"));
  Graph again = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(out)));
  EXPECT_EQ(run_out(again, Tensor{-1.f, 0.f}, {{again.get_tensor_by_name("n:0"), Tensor(int32_t{2})}}).to_vector<float>(),
            (std::vector<float>{-4.f, 0.f}));
}

TEST(GraphDefFunctionalTest, RoundTripWritesTensorFlowsAttrsAndTheFunctionsUsed) {
  Graph g = graph_from_graph_def(graph_def_from_text(cond_graph()));
  const GraphDef out = to_graph_def(g);
  const proto::NodeDef* cond = nullptr;
  for (const auto& n : out.node())
    if (n.name() == "cond") cond = &n;
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->op(), "StatelessIf");
  EXPECT_THAT(std::vector<std::string>(cond->input().begin(), cond->input().end()), ElementsAre("p", "x"));
  EXPECT_EQ(cond->attr().at("then_branch").func().name(), "cond_true_7");
  EXPECT_EQ(cond->attr().at("else_branch").func().name(), "cond_false_8");
  EXPECT_EQ(cond->attr().at("Tcond").type(), proto::DT_BOOL);
  EXPECT_EQ(cond->attr().at("Tin").list().type_size(), 1);
  EXPECT_EQ(cond->attr().at("Tout").list().type(0), proto::DT_FLOAT);
  EXPECT_EQ(cond->attr().at("output_shapes").list().shape(0).dim(0).size(), 2);
  ASSERT_EQ(out.library().function_size(), 2);  // not the unused one
  Graph again = graph_from_graph_def(graph_def_from_text(graph_def_to_text(out)));
  const Tensor p = again.get_tensor_by_name("p:0");
  EXPECT_EQ(run_out(again, Tensor{1.5f, -3.f}, {{p, Tensor(false)}}).to_vector<float>(), (std::vector<float>{0.5f, -4.f}));
  // Imported twice into one graph: the shared functions are written once.
  import_graph_def(g, graph_def_from_text(cond_graph()), {}, {}, "second");
  EXPECT_EQ(to_graph_def(g).library().function_size(), 2);
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

TEST(GraphDefFunctionalTest, BadFunctionalNodesAreTypedErrorsThatLeaveTheGraphAsItWas) {
  Graph g;
  auto import = [&](const std::string& text) { import_graph_def(g, graph_def_from_text(text)); };
  EXPECT_THAT(error_of<NotFoundError>([&] { import(replace_all(cond_graph(), "\"cond_true_7\" } } }", "\"nope\" } } }")); }),
              HasSubstr("node 'cond' (StatelessIf): function 'nope' is not in the GraphDef's library"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                import(replace_all(cond_graph(), "attr { key: \"Tout\" value { list { type: DT_FLOAT } } }",
                                   "attr { key: \"Tout\" value { list { type: DT_INT32 } } }"));
              }),
              HasSubstr("attr 'Tout' is [int32] but then_branch 'cond_true_7' returns [float32]"));
  EXPECT_THAT(error_of<UnimplementedError>([&] {
                import(replace_all(cond_graph(), "key: \"Tin\" value { list { type: DT_FLOAT } }",
                                   "key: \"Tin\" value { list { type: DT_RESOURCE } }"));
              }),
              HasSubstr("passes a resource (a variable); freeze the graph first"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import(replace_all(cond_graph(), "\"cond_true_7\" } } }", "\"no good\" } } }")); }),
              HasSubstr("function 'no good' (or one of its attr names) is not a valid name"));
  // An op tapeflow lacks inside a function: named with its function.
  EXPECT_THAT(error_of<NotFoundError>([&] { import(replace_all(cond_graph(), "op: \"Sub\"", "op: \"Frobnicate\"")); }),
              AllOf(HasSubstr("node 'cond' (StatelessIf): function 'cond_false_8'"), HasSubstr("Frobnicate (node f/r)")));
  // A branch index that is not an int32 scalar.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                import(absl::StrCat(kPlaceholders, R"pb(node { name: "c" op: "Case" input: "x" input: "x"
                  attr { key: "Tout" value { list { type: DT_FLOAT } } }
                  attr { key: "branches" value { list { func { name: "f" } } } } })pb"));
              }),
              HasSubstr("node 'c' (Case): the branch index (input 0) must be an int32 scalar, not float32 [2]"));
  // A body whose loop variable changes shape where output_shapes fixes it.
  const std::string three = R"pb(node_def { name: "three" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 1 } } } }
      ret { key: "mul" value: "three:output:0" })pb";
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import(replace_all(while_graph(), "ret { key: \"mul\" value: \"mul_0:z:0\" }", three)); }),
              HasSubstr("node 'while' (StatelessWhile): body 'while_body_20' returns loop variable 4 with shape [3] where it has [2]"));
  EXPECT_EQ(g.num_nodes(), 0);
}

// The functions of a chain: <prefix>0 runs <prefix>1 through an If (both branches), ... and the
// last runs `last` (a function's name), or returns its argument when `last` is empty.
std::string chain_functions(const std::string& prefix, int depth, const std::string& last) {
  std::string lib;
  for (int k = 0; k < depth; ++k) {
    const std::string next = k == depth - 1 ? last : absl::StrCat(prefix, k + 1);
    lib += absl::StrCat(R"pb(function { signature { name: ")pb", prefix, k, R"pb(" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
      )pb", next.empty() ? "" : absl::StrCat(float_const("one", 1), R"pb(
      node_def { name: "p" op: "Greater" input: "x" input: "one:output:0" attr { key: "T" value { type: DT_FLOAT } } }
      node_def { name: "if" op: "If" input: "p:z:0" input: "x" attr { key: "Tcond" value { type: DT_BOOL } }
                 attr { key: "Tin" value { list { type: DT_FLOAT } } } attr { key: "Tout" value { list { type: DT_FLOAT } } }
                 attr { key: "then_branch" value { func { name: ")pb", next, R"pb(" } } }
                 attr { key: "else_branch" value { func { name: ")pb", next, R"pb(" } } } })pb"),
      R"pb( ret { key: "y" value: ")pb", next.empty() ? "x" : "if:output:0", "\" } }\n");
  }
  return lib;
}
std::string chain(int depth, bool loop) {
  return absl::StrCat(kPlaceholders, R"pb(node { name: "top" op: "g0" input: "x" } library { )pb",
                      chain_functions("g", depth, loop ? "g0" : ""), " }");
}

// Functions that run themselves, and chains nested past the limit, are refused before any graph
// changes (a hostile GraphDef cannot make the import recurse without bound).
TEST(GraphDefFunctionalTest, RecursionAndDeepNestingAreRefused) {
  Graph g;
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import_graph_def(g, graph_def_from_text(chain(3, true))); }),
              AllOf(HasSubstr("[import_graph_def] node 'top/if' (If): function 'g1': node 'f/if' (If): function 'g2': "),
                    HasSubstr("function 'g1' runs itself (through g1 -> g2 -> g0); tapeflow cannot import recursion")));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import_graph_def(g, graph_def_from_text(chain(40, false))); }),
              HasSubstr("functions run by If, While and Case nest more than 32 deep"));
  // A body built once and reused deep inside another nest counts its whole depth: "h" (20 deep)
  // imports first, then "k" (20 deep) runs it from its last function, 40 deep.
  const std::string two_chains = absl::StrCat(kPlaceholders, R"pb(
      node { name: "a" op: "h0" input: "x" } node { name: "b" op: "k0" input: "x" }
      library { )pb", chain_functions("h", 20, ""), chain_functions("k", 20, "h0"), " }");
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import_graph_def(g, graph_def_from_text(two_chains)); }),
              HasSubstr("nest more than 32 deep"));
  EXPECT_EQ(g.num_nodes(), 0);
  // Within the limits a chain imports and runs; its functions, each run by both branches of the
  // If above, are built and compiled once each (not 2^30 times).
  Graph ok = graph_from_graph_def(graph_def_from_text(chain(30, false)));
  Session sess(ok);
  EXPECT_EQ(sess.run(ok.get_tensor_by_name("top:0"), {{ok.get_tensor_by_name("x:0"), Tensor{5.f, -5.f}}}).to_vector<float>(),
            (std::vector<float>{5.f, -5.f}));
}

// Errors while a body runs name the node and the function; a While that does not end is
// stopped by RunOptions::timeout_in_ms.
TEST(GraphDefFunctionalTest, RunTimeErrorsNameTheNodeAndItsFunction) {
  // A then_branch whose Assert fails when taken.
  const std::string asserting = replace_all(cond_graph(), unary_function("cond_true_7", "Mul", 2), R"pb(function {
          signature { name: "cond_true_7" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
          node_def { name: "no" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
                     attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: false } } } }
          node_def { name: "check" op: "Assert" input: "no:output:0" input: "x" attr { key: "T" value { list { type: DT_FLOAT } } } }
          node_def { name: "r" op: "Identity" input: "x" input: "^check" attr { key: "T" value { type: DT_FLOAT } } }
          ret { key: "y" value: "r:output:0" } control_ret { key: "check" value: "check" } })pb");
  Graph g = graph_from_graph_def(graph_def_from_text(asserting));
  const Tensor p = g.get_tensor_by_name("p:0");
  EXPECT_EQ(run_out(g, Tensor{1.f, 2.f}, {{p, Tensor(false)}}).to_vector<float>(), (std::vector<float>{0.f, 1.f}));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { run_out(g, Tensor{1.f, 2.f}, {{p, Tensor(true)}}); }),
              AllOf(HasSubstr("assertion failed: [1 2]"), HasSubstr("in then_branch 'cond_true_7' of node 'cond' (StatelessIf)")));

  // A body that leaves i alone: i < n holds for ever, until the run's timeout.
  Graph forever = graph_from_graph_def(
      graph_def_from_text(replace_all(while_graph(), "ret { key: \"add_1\" value: \"add_1_0:z:0\" }", "ret { key: \"add_1\" value: \"i\" }")));
  Session sess(forever);
  RunOptions options;
  options.timeout_in_ms = 100;
  EXPECT_THAT(error_of<DeadlineExceededError>([&] {
                sess.run(forever.get_tensor_by_name("out:0"),
                         {{forever.get_tensor_by_name("x:0"), Tensor{1.f, 2.f}}, {forever.get_tensor_by_name("n:0"), Tensor(int32_t{1})}},
                         options, nullptr);
              }),
              AllOf(HasSubstr("[while] the loop ran past the run's timeout of 100 ms"), HasSubstr("node 'while' (StatelessWhile)")));
}

}  // namespace
}  // namespace tapeflow
