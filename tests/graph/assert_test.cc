// assert_that (TensorFlow's tf.debugging.Assert): eagerly, in a graph through a control
// dependency, in a traced function, and as TensorFlow 1.x writes it in a GraphDef (its message
// a DT_STRING Const), read and written back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(AssertTest, EagerlyItChecksAtOnceAndSummarizesTheData) {
  const Tensor x(std::vector<float>{-1.f, 2.5f, 3.f, 4.f}, Shape{4});
  EXPECT_FALSE(assert_that(Tensor(true), {x}, "x must be positive").defined());
  EXPECT_THAT(error_of([&] { assert_that(Tensor(false), {x}, "x must be positive"); }),
              HasSubstr("assertion failed: [x must be positive] [-1 2.5 3...]"));
  EXPECT_THAT(error_of([&] { assert_that(reduce_all(greater(x, 0.f)), {x, Tensor(int64_t{7})}, "", 5); }),
              HasSubstr("assertion failed: [-1 2.5 3 4] [7]"));
  EXPECT_THAT(error_of([&] { assert_that(Tensor(std::vector<bool>{true, true}, Shape{2}), {}); }),
              HasSubstr("[assert_that] the condition must be a bool scalar, not bool [2]"));
}

// TensorFlow's Tensor::SummarizeValue: rows in brackets, a cut row ends in "...", and "..." after
// all when values are left out; floats in the fewest digits that read back; scalars bare.
TEST(AssertTest, DataIsSummarizedAsTensorflowPrintsIt) {
  const Tensor m(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  auto message = [](const Tensor& t, int64_t summarize) {
    return error_of([&] { assert_that(Tensor(false), {t}, "", summarize); });
  };
  EXPECT_THAT(message(m, 6), HasSubstr("assertion failed: [[1 2 3][4 5 6]]"));
  EXPECT_THAT(message(m, -1), HasSubstr("assertion failed: [[1 2 3][4 5 6]]"));
  EXPECT_THAT(message(m, 4), HasSubstr("assertion failed: [[1 2 3][4...]...]"));
  EXPECT_THAT(message(m, 3), HasSubstr("assertion failed: [[1 2 3]...]"));
  EXPECT_THAT(message(reshape(m, {3, 1, 2}), 6), HasSubstr("assertion failed: [[[1 2]][[3 4]][[5 6]]]"));
  EXPECT_THAT(message(Tensor(std::vector<float>{1.2345678f, 0.1f, 1e-7f}, Shape{3}), 3),
              HasSubstr("assertion failed: [1.23456776 0.1 1e-07]"));
  EXPECT_THAT(message(Tensor(std::vector<double>{0.1, 1.0 / 3}, Shape{2}), 3),
              HasSubstr("assertion failed: [0.1 0.33333333333333331]"));
  EXPECT_THAT(message(Tensor(7.5f), 3), HasSubstr("assertion failed: [7.5]"));
  EXPECT_THAT(message(zeros({2, 0}), 3), HasSubstr("assertion failed: []"));
  // Texts are C-escaped, as TensorFlow prints a string; summarize 0 prints "..." for each item.
  EXPECT_THAT(error_of([&] { assert_that(Tensor(false), {m}, "it's\nbad"); }),
              HasSubstr("assertion failed: [it\\'s\\nbad] [[1 2 3]...]"));
  EXPECT_THAT(error_of([&] { assert_that(Tensor(false), {m}, "text", 0); }), HasSubstr("assertion failed: [...] [...]"));
}

TEST(AssertTest, InAGraphItRunsWhereAControlDependencyNeedsIt) {
  Graph g;
  Tensor x, y;
  Operation check;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {3}, "x");
    check = assert_that(reduce_all(greater(x, 0.f)), {x}, "x must be positive", 3, "check");
    auto deps = control_dependencies({check});
    y = identity(x);
  }
  EXPECT_EQ(check.type(), "Assert");
  EXPECT_EQ(check.node().outputs.size(), 0u);
  Session sess(g);
  EXPECT_EQ(sess.run(y, {{x, Tensor(std::vector<float>{1, 2, 3}, Shape{3})}}).to_vector<float>(),
            std::vector<float>({1, 2, 3}));
  const std::string message =
      error_of([&] { sess.run(y, {{x, Tensor(std::vector<float>{1, -2, 3}, Shape{3})}}); });
  EXPECT_THAT(message, AllOf(HasSubstr("assertion failed: [x must be positive] [1 -2 3]"), HasSubstr("node 'check' (Assert)")));
}

TEST(AssertTest, ATracedFunctionRunsItOnEveryCall) {
  auto f = function([](const Tensor& x) {
    assert_that(reduce_all(greater_equal(x, 0.f)), {x}, "no negatives");
    return x * 2.f;
  });
  EXPECT_EQ(f(Tensor(std::vector<float>{1, 2}, Shape{2})).to_vector<float>(), std::vector<float>({2, 4}));
  EXPECT_THAT(error_of([&] { f(Tensor(std::vector<float>{1, -2}, Shape{2})); }),
              HasSubstr("assertion failed: [no negatives] [1 -2]"));
}

// tf.Assert(tf.reduce_all(x >= 0), ["x must be non-negative", "x (x:0) = ", x]) in TensorFlow 1.15:
// string and int32 data, so no AssertGuard cond.
constexpr char kAssertGraph[] = R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "shape" value { shape { dim { size: 3 } } } } }
node { name: "GreaterEqual/y" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "GreaterEqual" op: "GreaterEqual" input: "x" input: "GreaterEqual/y" attr { key: "T" value { type: DT_INT32 } } }
node { name: "Const" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }
node { name: "All" op: "All" input: "GreaterEqual" input: "Const" attr { key: "Tidx" value { type: DT_INT32 } }
  attr { key: "keep_dims" value { b: false } } }
node { name: "Assert/data_0" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
  attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "x must be non-negative" } } } }
node { name: "Assert/data_1" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
  attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "x (x:0) = " } } } }
node { name: "Assert" op: "Assert" input: "All" input: "Assert/data_0" input: "Assert/data_1" input: "x"
  attr { key: "T" value { list { type: DT_STRING type: DT_STRING type: DT_INT32 } } }
  attr { key: "summarize" value { i: 3 } } }
node { name: "y" op: "Identity" input: "x" input: "^Assert" attr { key: "T" value { type: DT_INT32 } } }
versions { producer: 134 }
)pb";

std::string run_y(const Graph& g, std::vector<int32_t> x) {
  Session sess(g);
  return error_of([&] { sess.run(g.get_tensor_by_name("y:0"), {{g.get_tensor_by_name("x:0"), Tensor(x, Shape{3})}}); });
}

TEST(AssertTest, TensorFlowsAssertWithStringDataImportsRunsAndIsWrittenBack) {
  const Graph g = graph_from_graph_def(graph_def_from_text(kAssertGraph));
  EXPECT_THROW(g.get_operation_by_name("Assert/data_0"), Error);  // the texts are the Assert's
  EXPECT_EQ(run_y(g, {1, 2, 3}), "no exception of the expected type");
  EXPECT_THAT(run_y(g, {1, -2, 3}), HasSubstr("assertion failed: [x must be non-negative] [x (x:0) = ] [1 -2 3]"));

  // Written back as TensorFlow wrote it: the texts DT_STRING Consts at their places, T with them.
  const GraphDef out = to_graph_def(g);
  const proto::NodeDef* assert_node = nullptr;
  std::map<std::string, std::string> strings;
  for (const proto::NodeDef& n : out.node()) {
    if (n.op() == "Assert") assert_node = &n;
    if (n.op() == "Const" && n.attr().at("dtype").type() == proto::DT_STRING)
      strings[n.name()] = n.attr().at("value").tensor().string_val(0);
  }
  ASSERT_NE(assert_node, nullptr);
  ASSERT_EQ(assert_node->input_size(), 4);
  EXPECT_EQ(strings.at(assert_node->input(1)), "x must be non-negative");
  EXPECT_EQ(strings.at(assert_node->input(2)), "x (x:0) = ");
  EXPECT_EQ(assert_node->input(3), "x");
  ASSERT_EQ(assert_node->attr().at("T").list().type_size(), 3);
  EXPECT_EQ(assert_node->attr().at("T").list().type(0), proto::DT_STRING);
  EXPECT_EQ(assert_node->attr().at("T").list().type(2), proto::DT_INT32);
  EXPECT_EQ(assert_node->attr().count("_texts"), 0u);
  EXPECT_THAT(run_y(graph_from_graph_def(out), {-1, 2, 3}),
              HasSubstr("assertion failed: [x must be non-negative] [x (x:0) = ] [-1 2 3]"));
}

TEST(AssertTest, AStringConstReadByAnythingElseIsStillRefused) {
  GraphDef def = graph_def_from_text(kAssertGraph);
  *def.add_node() = graph_def_from_text(R"pb(node { name: "z" op: "Identity" input: "Assert/data_0"
                                               attr { key: "T" value { type: DT_STRING } } })pb").node(0);
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(def); }),
              HasSubstr("node 'Assert/data_0' (Const): attr 'dtype' dtype DT_STRING is not supported by tapeflow"));
}

// tf.Assert(tf.reduce_all(x > 0), ["x must be positive", x]) of a float x in TensorFlow 1.15: the
// Assert sits in the false branch of a cond on its own condition (Note [Assert guards]).
constexpr char kAssertGuardGraph[] = R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 3 } } } } }
node { name: "Greater/y" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0 } } } }
node { name: "Greater" op: "Greater" input: "x" input: "Greater/y" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "Const" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }
node { name: "All" op: "All" input: "Greater" input: "Const" attr { key: "Tidx" value { type: DT_INT32 } }
  attr { key: "keep_dims" value { b: false } } }
node { name: "Assert/AssertGuard/Switch" op: "Switch" input: "All" input: "All" attr { key: "T" value { type: DT_BOOL } } }
node { name: "Assert/AssertGuard/switch_t" op: "Identity" input: "Assert/AssertGuard/Switch:1"
  attr { key: "T" value { type: DT_BOOL } } }
node { name: "Assert/AssertGuard/switch_f" op: "Identity" input: "Assert/AssertGuard/Switch"
  attr { key: "T" value { type: DT_BOOL } } }
node { name: "Assert/AssertGuard/pred_id" op: "Identity" input: "All" attr { key: "T" value { type: DT_BOOL } } }
node { name: "Assert/AssertGuard/NoOp" op: "NoOp" input: "^Assert/AssertGuard/switch_t" }
node { name: "Assert/AssertGuard/control_dependency" op: "Identity" input: "Assert/AssertGuard/switch_t"
  input: "^Assert/AssertGuard/NoOp" attr { key: "T" value { type: DT_BOOL } }
  attr { key: "_class" value { list { s: "loc:@Assert/AssertGuard/switch_t" } } } }
node { name: "Assert/AssertGuard/Assert/data_0" op: "Const" input: "^Assert/AssertGuard/switch_f"
  attr { key: "dtype" value { type: DT_STRING } }
  attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "x must be positive" } } } }
node { name: "Assert/AssertGuard/Assert" op: "Assert" input: "Assert/AssertGuard/Assert/Switch"
  input: "Assert/AssertGuard/Assert/data_0" input: "Assert/AssertGuard/Assert/Switch_1"
  attr { key: "T" value { list { type: DT_STRING type: DT_FLOAT } } } attr { key: "summarize" value { i: 3 } } }
node { name: "Assert/AssertGuard/Assert/Switch" op: "Switch" input: "All" input: "Assert/AssertGuard/pred_id"
  attr { key: "T" value { type: DT_BOOL } } attr { key: "_class" value { list { s: "loc:@All" } } } }
node { name: "Assert/AssertGuard/Assert/Switch_1" op: "Switch" input: "x" input: "Assert/AssertGuard/pred_id"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "_class" value { list { s: "loc:@x" } } } }
node { name: "Assert/AssertGuard/control_dependency_1" op: "Identity" input: "Assert/AssertGuard/switch_f"
  input: "^Assert/AssertGuard/Assert" attr { key: "T" value { type: DT_BOOL } }
  attr { key: "_class" value { list { s: "loc:@Assert/AssertGuard/switch_f" } } } }
node { name: "Assert/AssertGuard/Merge" op: "Merge" input: "Assert/AssertGuard/control_dependency_1"
  input: "Assert/AssertGuard/control_dependency" attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_BOOL } } }
node { name: "y" op: "Identity" input: "x" input: "^Assert/AssertGuard/Merge" attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 134 }
)pb";

TEST(AssertTest, TensorFlowsAssertGuardRunsBothSidesSoTheAssertChecksItsCondition) {
  const Graph g = graph_from_graph_def(graph_def_from_text(kAssertGuardGraph));
  EXPECT_EQ(g.get_operation_by_name("Assert/AssertGuard/Merge").type(), "NoOp");
  EXPECT_EQ(g.get_operation_by_name("Assert/AssertGuard/Assert").type(), "Assert");
  Session sess(g);
  const Tensor x = g.get_tensor_by_name("x:0"), y = g.get_tensor_by_name("y:0");
  EXPECT_EQ(sess.run(y, {{x, Tensor(std::vector<float>{1, 2, 3}, Shape{3})}}).to_vector<float>(),
            std::vector<float>({1, 2, 3}));
  EXPECT_THAT(error_of([&] { sess.run(y, {{x, Tensor(std::vector<float>{1, -2.5f, 3}, Shape{3})}}); }),
              AllOf(HasSubstr("assertion failed: [x must be positive] [1 -2.5 3]"),
                    HasSubstr("node 'Assert/AssertGuard/Assert' (Assert)")));
}

// Not a guard whose sides may both run: the true side computes, or the join's value is read. The
// cond becomes an If that runs one side (Note [TF1 conds as If]), the Assert in its else branch.
TEST(AssertTest, AGuardWhoseBranchesComputeOrWhoseJoinIsReadBecomesAnIf) {
  GraphDef computes = graph_def_from_text(kAssertGuardGraph);
  for (proto::NodeDef& n : *computes.mutable_node())  // the true side computes something
    if (n.name() == "Assert/AssertGuard/control_dependency") n.set_op("LogicalNot");
  GraphDef read = graph_def_from_text(kAssertGuardGraph);
  *read.add_node() = graph_def_from_text(R"pb(node { name: "z" op: "LogicalNot" input: "Assert/AssertGuard/Merge" })pb").node(0);
  for (const GraphDef* def : {&computes, &read}) {
    const Graph g = graph_from_graph_def(*def);
    EXPECT_EQ(g.get_operation_by_name("Assert/AssertGuard").type(), "If");
    Session sess(g);
    const Tensor x = g.get_tensor_by_name("x:0"), y = g.get_tensor_by_name("y:0");
    EXPECT_EQ(sess.run(y, {{x, Tensor(std::vector<float>{1, 2, 3}, Shape{3})}}).to_vector<float>(),
              std::vector<float>({1, 2, 3}));
    EXPECT_THAT(error_of<InvalidArgumentError>([&] { sess.run(y, {{x, Tensor(std::vector<float>{1, -2.5f, 3}, Shape{3})}}); }),
                AllOf(HasSubstr("assertion failed: [x must be positive] [1 -2.5 3]"),
                      HasSubstr("in else_branch 'Assert_AssertGuard_false' of node 'Assert/AssertGuard' (If)")));
    if (def == &read) {  // the true side's value: All(x > 0), negated
      EXPECT_EQ(sess.run(g.get_tensor_by_name("z:0"), {{x, Tensor(std::vector<float>{1, 2, 3}, Shape{3})}}).to_vector<bool>(),
                std::vector<bool>{false});
    }
  }
}

}  // namespace
}  // namespace tapeflow
