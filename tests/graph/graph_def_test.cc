// GraphDef export and import: TensorFlow's wire bytes, graphs as TensorFlow 1.x prints them, the
// errors of a bad GraphDef (typed, naming the node, leaving the graph unchanged), and round
// trips of built, traced and training graphs that must run to bit-identical results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <typeinfo>

#include <google/protobuf/stubs/logging.h>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "graph/function.h"
#include "graph/graph_def.h"
#include "nn/adam.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

// ---- forms and wire bytes ----

TEST(GraphDefFormTest, EveryOpFormParses) {
  int checked = 0;
  for (const OpDef* op : OpRegistry::global().ops()) {
    EXPECT_NO_THROW(graph_def_internal::form_of(*op)) << op->type;
    ++checked;
  }
  for (const char* type : {"Placeholder", "Const", "NoOp", "Print", "VarHandleOp", "ReadVariableOp",
                           "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})
    EXPECT_NO_THROW(graph_def_internal::form_of(*find_graph_op(type))) << type;
  EXPECT_GT(checked, 40);
  const auto& matmul = graph_def_internal::form_of(*OpRegistry::global().find("MatMul"));
  EXPECT_TRUE(matmul.lists("transpose_a"));
  EXPECT_EQ(graph_def_internal::form_of(*OpRegistry::global().find("Reshape")).num_const_inputs, 1);
}

// form_of hands out references that stay put: asked again, after every other op's form was
// added, and from another thread (its own per-thread cache), the same Form comes back.
TEST(GraphDefFormTest, AFormStaysWhereItWasHandedOutOnEveryThread) {
  const OpDef& matmul = *OpRegistry::global().find("MatMul");
  const graph_def_internal::Form* first = &graph_def_internal::form_of(matmul);
  for (const OpDef* op : OpRegistry::global().ops()) (void)graph_def_internal::form_of(*op);
  EXPECT_EQ(&graph_def_internal::form_of(matmul), first);
  const graph_def_internal::Form* other = nullptr;
  std::thread([&] { other = &graph_def_internal::form_of(matmul); }).join();
  EXPECT_EQ(other, first);
  EXPECT_TRUE(first->lists("transpose_b"));
}

// Bytes assembled by hand from TensorFlow's field numbers: a GraphDef (node = 1, versions = 4)
// with one NodeDef (name = 1, op = 2, attr = 5: map entries key = 1, value = 2) whose AttrValues
// are type = 6 and tensor = 8 (TensorProto dtype = 1, tensor_shape = 2, float_val = 5 packed).
TEST(GraphDefWireTest, TinyGraphBytesEqualHandAssembledFieldNumbers) {
  Graph g;
  {
    auto scope = g.as_default();
    constant(Tensor(1.0f), "c");
  }
  const std::string bytes = graph_def_to_binary(to_graph_def(g));
  const std::string dtype_entry = std::string("\x2a\x0b", 2) + "\x0a\x05" "dtype" + std::string("\x12\x02\x30\x01", 4);
  const std::string tensor = std::string("\x08\x01\x12\x00\x2a\x04\x00\x00\x80\x3f", 10);
  const std::string attr_value = "\x42\x0a" + tensor;
  const std::string value_entry = std::string("\x2a\x15", 2) + "\x0a\x05" "value" + "\x12\x0c" + attr_value;
  const std::string node = std::string("\x0a\x01" "c") + "\x12\x05" "Const" + dtype_entry + value_entry;
  ASSERT_EQ(node.size(), 0x2eu);
  const std::string expected = "\x0a\x2e" + node + std::string("\x22\x04\x08\x1b\x10\x0c", 6);
  EXPECT_EQ(bytes, expected);
  const GraphDef back = graph_def_from_binary(expected);
  ASSERT_EQ(back.node_size(), 1);
  EXPECT_EQ(back.node(0).attr().at("value").tensor().float_val(0), 1.0f);
}

TEST(GraphDefWireTest, ExportUsesTensorflowNamesAttrsAndConstInputs) {
  Graph g;
  {
    auto scope = g.as_default();
    Tensor x = placeholder(DType::kFloat32, {-1, 4}, "x");
    Tensor w = constant(Tensor(std::vector<float>(8, 0.5f), Shape{4, 2}), "w");
    Tensor y = matmul(x, w, false, false);
    reshape(y, {-1});
    reduce_sum(y, {1}, true);
  }
  const GraphDef def = to_graph_def(g);
  const std::string text = graph_def_to_text(def);
  EXPECT_THAT(text, HasSubstr("op: \"MatMul\""));
  EXPECT_THAT(text, HasSubstr("key: \"transpose_a\"\n    value {\n      b: false"));
  EXPECT_THAT(text, HasSubstr("key: \"T\"\n    value {\n      type: DT_FLOAT"));
  // One float value for eight equal elements (TensorFlow's broadcast rule reads it back).
  EXPECT_EQ(def.node(1).attr().at("value").tensor().float_val_size(), 1);
  // Reshape's shape and Sum's axes travel as int32 Const inputs, as TensorFlow has them.
  const proto::NodeDef* reshape_node = nullptr;
  for (const auto& n : def.node()) if (n.op() == "Reshape") reshape_node = &n;
  ASSERT_NE(reshape_node, nullptr);
  ASSERT_EQ(reshape_node->input_size(), 2);
  EXPECT_EQ(reshape_node->input(1), "Reshape/shape");
  EXPECT_EQ(reshape_node->attr().at("Tshape").type(), proto::DT_INT32);
  EXPECT_THAT(text, HasSubstr("key: \"keep_dims\""));
  EXPECT_THAT(text, HasSubstr("key: \"Tidx\""));
}

// ---- graphs as TensorFlow 1.x writes them ----

// w: tensor_content of [[1, -1], [2, 0.5], [-3, 1]]; b: one float_val broadcast to [2].
constexpr const char* kInferenceGraph = R"pb(
node { name: "x" op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
node { name: "w" op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 2 } }
    tensor_content: "\000\000\200?\000\000\200\277\000\000\000@\000\000\000?\000\000@\300\000\000\200?" } } } }
node { name: "b" op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 0.5 } } } }
node { name: "MatMul" op: "MatMul" input: "x" input: "w"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "transpose_a" value { b: false } }
  attr { key: "transpose_b" value { b: false } } }
node { name: "add" op: "AddV2" input: "MatMul" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "add_1" op: "Add" input: "add" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "Relu" op: "Relu" input: "add" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "Softmax" op: "Softmax" input: "Relu" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "truediv" op: "RealDiv" input: "add" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "Maximum" op: "Maximum" input: "truediv" input: "Relu" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "Minimum" op: "Minimum" input: "Maximum" input: "add_1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "sub" op: "Sub" input: "Minimum" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "mul" op: "Mul" input: "sub" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "perm" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 0 } } } }
node { name: "transpose" op: "Transpose" input: "mul" input: "perm"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tperm" value { type: DT_INT32 } } }
node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: -1 } } } }
node { name: "Reshape" op: "Reshape" input: "transpose" input: "shape"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "concat" op: "ConcatV2" input: "Softmax" input: "mul" input: "axis"
  attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tidx" value { type: DT_INT32 } } }
node { name: "ridx" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 1 } } } }
node { name: "Mean" op: "Mean" input: "concat" input: "ridx"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT32 } }
  attr { key: "keep_dims" value { b: false } } }
node { name: "output" op: "Identity" input: "Mean" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "done" op: "NoOp" input: "^output" }
versions { producer: 27 }
)pb";

TEST(GraphDefImportTest, RunsAnInferenceGraphAsTensorflow1PrintsIt) {
  const GraphDef def = graph_def_from_text(kInferenceGraph);
  Graph g;
  const auto out = import_graph_def(g, def, {}, {"x:0", "output:0", "Reshape:0", "done"});
  ASSERT_EQ(out.size(), 4u);
  const Tensor x = std::get<Tensor>(out[0]);
  EXPECT_EQ(x.name(), "import/x:0");
  EXPECT_EQ(std::get<Operation>(out[3]).name(), "import/done");
  EXPECT_EQ(std::get<Operation>(out[3]).control_inputs().at(0).name(), "import/output");
  const Tensor xv({{1.f, 2.f, 3.f}, {-1.f, 0.5f, 2.f}});
  Session sess(g);
  const Tensor got = sess.run(std::get<Tensor>(out[1]), {{x, xv}});
  const Tensor got_reshape = sess.run(std::get<Tensor>(out[2]), {{x, xv}});
  // The same computation eagerly, op for op.
  const Tensor w({{1.f, -1.f}, {2.f, 0.5f}, {-3.f, 1.f}});
  const Tensor b({0.5f, 0.5f});
  const Tensor add = matmul(xv, w) + b;
  const Tensor relu_v = maximum(add, 0.f);
  const Tensor mul = (minimum(maximum(add / 2.f, relu_v), add + b) - b) * 2.f;
  const Tensor expected = reduce_mean(concat({softmax(relu_v), mul}, 0), {1});
  expect_close(got, expected);
  EXPECT_EQ(values(got_reshape), values(reshape(transpose(mul, {1, 0}), {-1})));
}

TEST(GraphDefImportTest, ConstValuesFollowTensorflowsRules) {
  const GraphDef def = graph_def_from_text(R"pb(
    node { name: "fill" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 3 } } float_val: 7 } } } }
    node { name: "tail" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } } int_val: 1 int_val: 2 } } } }
    node { name: "bytes" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } }
        tensor_content: "\000\000\200?\000\000\000@\000\000@@\000\000\200@" } } } }
    node { name: "empty" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
      attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } } } } } }
    node { name: "flags" op: "Const" attr { key: "dtype" value { type: DT_BOOL } }
      attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { dim { size: 3 } } bool_val: true bool_val: false } } } }
  )pb");
  Graph g = graph_from_graph_def(def);
  Session sess(g);
  EXPECT_EQ(values(sess.run(g.get_tensor_by_name("fill:0"))), std::vector<float>(6, 7.f));
  EXPECT_EQ(sess.run(g.get_tensor_by_name("tail:0")).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 2, 2}));
  EXPECT_THAT(values(sess.run(g.get_tensor_by_name("bytes:0"))), ElementsAre(1.f, 2.f, 3.f, 4.f));
  EXPECT_EQ(sess.run(g.get_tensor_by_name("empty:0")).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(sess.run(g.get_tensor_by_name("flags:0")).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  // Export: a large tensor goes to tensor_content, a small one to typed values.
  Graph h;
  {
    auto scope = h.as_default();
    std::vector<float> big(100);
    for (int i = 0; i < 100; ++i) big[i] = 0.25f * i;
    constant(Tensor(big, Shape{10, 10}), "big");
    constant(Tensor({1.f, 2.f, 3.f}), "small");
  }
  const GraphDef out = to_graph_def(h);
  EXPECT_EQ(out.node(0).attr().at("value").tensor().tensor_content().size(), 400u);
  EXPECT_EQ(out.node(1).attr().at("value").tensor().float_val_size(), 3);
  Graph back = graph_from_graph_def(out);
  Session s2(back);
  EXPECT_EQ(values(s2.run(back.get_tensor_by_name("big:0")))[99], 24.75f);
}

// ---- errors: typed, naming the node, the graph unchanged ----

template <typename E>
void expect_import_error(const std::string& text, const std::string& message) {
  Graph g;
  {
    auto scope = g.as_default();
    placeholder(DType::kFloat32, {2}, "existing");
  }
  const int before = g.num_nodes();
  const GraphDef def = graph_def_from_text(text);
  EXPECT_THAT(error_of<E>([&] { import_graph_def(g, def); }), HasSubstr(message)) << text;
  EXPECT_EQ(g.num_nodes(), before);
  // Not even the "import" name scope was taken.
  Graph probe = g;
  auto scope = probe.as_default();
  EXPECT_EQ(no_op("import").name(), "import");
}

constexpr const char* kX = R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } } } )pb";

// Note [One pass]: a GraphDef whose inputs come first is planned in one pass; one with a later
// input (here z before the y it reads) or a colocation with a later node takes the passes. All
// three import the same graph, and the two in input-first order keep the GraphDef's own order
// (Kahn's order would put c before a).
TEST(GraphDefTest, NodesInAnyOrderImportAlikeAndInputFirstOnesKeepTheirOrder) {
  const std::string x = std::string(kX), t = R"pb( attr { key: "T" value { type: DT_FLOAT } } })pb";
  const std::string a = R"pb(node { name: "a" op: "Neg" input: "x")pb" + t;
  const std::string c = R"pb(node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } })pb";
  const std::string y = R"pb(node { name: "y" op: "Mul" input: "a" input: "c")pb" + t;
  const std::string z = R"pb(node { name: "z" op: "Neg" input: "y")pb" + t;
  const std::string x_with_z = R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 2 } } } }
      attr { key: "_class" value { list { s: "loc:@z" } } } })pb";
  const std::vector<std::string> own_order = {"x", "a", "c", "y", "z"};
  const std::vector<std::pair<std::string, bool>> cases = {
      {x + a + c + y + z, true},          // one pass
      {z + y + c + a + x, false},         // z reads y, which comes later: the passes
      {x_with_z + a + c + y + z, true},   // x is placed with z, which comes later: the passes
  };
  for (const auto& [text, keeps_order] : cases) {
    Graph g = graph_from_graph_def(graph_def_from_text(text));
    std::vector<std::string> names;
    for (const Operation& op : g.get_operations()) names.push_back(op.name());
    if (keeps_order) {
      EXPECT_EQ(names, own_order) << text;
    }
    EXPECT_THAT(names, ::testing::UnorderedElementsAreArray(own_order));
    Session sess(g);
    const Tensor got = sess.run(g.get_tensor_by_name("z:0"), {{g.get_tensor_by_name("x:0"), Tensor{1.f, -2.f}}});
    EXPECT_THAT(values(got), ElementsAre(3.f, -6.f)) << text;
  }
}

// A value folded while the one pass planned (Reshape's shape from Shape(a), planned node 1) is
// not reused when the passes renumber the nodes: there node 1 is the placeholder p, and
// Reshape(a, p) must stay the error a shape fed at run time is, not become a Reshape to [2, 6].
TEST(GraphDefTest, FoldedValuesDoNotOutliveTheAbandonedPass) {
  const std::string text = R"pb(
      node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } dim { size: 6 } } } } }
      node { name: "sa" op: "Shape" input: "a" attr { key: "T" value { type: DT_FLOAT } } attr { key: "out_type" value { type: DT_INT32 } } }
      node { name: "r1" op: "Reshape" input: "a" input: "sa" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
      node { name: "w" op: "Identity" input: "r2" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "shape" value { shape { dim { size: 2 } } } } }
      node { name: "r2" op: "Reshape" input: "a" input: "p" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } })pb";
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(text)); }),
              HasSubstr("node 'r2' (Reshape): the input that carries 'shape' must be a Const node"));
}

TEST(GraphDefErrorTest, UnknownOpsAreOneErrorListingEveryTypeAndNode) {
  expect_import_error<NotFoundError>(
      std::string(kX) + R"pb(
        node { name: "a" op: "FancyOp" input: "x" }
        node { name: "b" op: "FancyOp" input: "a" }
        node { name: "c" op: "OtherOp" input: "x" })pb",
      "op types tapeflow does not have: FancyOp (nodes a, b); OtherOp (node c)");
}

TEST(GraphDefErrorTest, BadInputsAreTypedErrorsNamingTheNode) {
  const std::string add_t = R"pb( attr { key: "T" value { type: DT_FLOAT } } })pb";
  expect_import_error<NotFoundError>(std::string(kX) + R"pb(node { name: "y" op: "Neg" input: "nope")pb" + add_t,
                                     "node 'y' (Neg): input 'nope' names no node of the GraphDef");
  expect_import_error<NotFoundError>(std::string(kX) + R"pb(node { name: "y" op: "Neg" input: "x" input: "^ghost")pb" + add_t,
                                     "node 'y' (Neg): control input '^ghost' names no node");
  expect_import_error<InvalidArgumentError>(std::string(kX) + R"pb(node { name: "y" op: "Add" input: "x")pb" + add_t,
                                            "node 'y' (Add): expects 2 input(s); got 1");
  expect_import_error<InvalidArgumentError>(std::string(kX) + R"pb(node { name: "y" op: "Neg" input: "x:3")pb" + add_t,
                                            "input 'x:3' names output 3 of node 'x', which has 1 output(s)");
  expect_import_error<InvalidArgumentError>(
      std::string(kX) + R"pb(node { name: "y" op: "MatMul" input: "x" input: "x"
        attr { key: "transpose_a" value { i: 1 } })pb" + add_t,
      "node 'y' (MatMul): attr 'transpose_a' has a value of type int; expected bool");
  expect_import_error<InvalidArgumentError>(
      R"pb(node { name: "p" op: "Neg" input: "q" attr { key: "T" value { type: DT_FLOAT } } }
           node { name: "q" op: "Neg" input: "p" attr { key: "T" value { type: DT_FLOAT } } })pb",
      "the GraphDef has a cycle; these nodes wait on each other: p, q");
  expect_import_error<InvalidArgumentError>(
      std::string(kX) + R"pb(node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_INT32 } } })pb",
      "node 'y' (Neg): attr 'T' says int32 but input 0 is float32");
  expect_import_error<InvalidArgumentError>(
      R"pb(node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
        attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } })pb",
      "node 'c' (Const): attr 'dtype' is int32 but the value is float32");
  expect_import_error<InvalidArgumentError>(
      std::string(kX) + R"pb(node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
        attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
        node { name: "y" op: "Add" input: "x" input: "c" attr { key: "T" value { type: DT_FLOAT } } })pb",
      "node 'y' (Add): ");
  expect_import_error<InvalidArgumentError>(
      std::string(kX) + R"pb(node { name: "f" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
        attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
        node { name: "y" op: "Reshape" input: "x" input: "f" attr { key: "T" value { type: DT_FLOAT } } })pb",
      "node 'y' (Reshape): the constant for 'shape' must be an integer scalar or vector");
  expect_import_error<UnimplementedError>(
      std::string(kX) + R"pb(node { name: "s" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
        attr { key: "shape" value { shape { dim { size: 1 } } } } }
        node { name: "y" op: "Reshape" input: "x" input: "s" attr { key: "T" value { type: DT_FLOAT } } })pb",
      "node 'y' (Reshape): the input that carries 'shape' must be a Const node");
  expect_import_error<UnimplementedError>(
      R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
        attr { key: "shape" value { shape { unknown_rank: true } } } })pb",
      "node 'x' (Placeholder): attr 'shape' has a shape of unknown rank");
  expect_import_error<UnimplementedError>(
      R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_HALF } }
        attr { key: "shape" value { shape { } } } })pb",
      "dtype DT_HALF is not supported by tapeflow");
  expect_import_error<InvalidArgumentError>(
      std::string(kX) + R"pb(node { name: "x" op: "NoOp" })pb", "two nodes are named 'x'");
}

// tf.placeholder(tf.float32) without a shape (a TF 1.x dropout's keep_prob): unknown rank, or
// no shape attr at all in older graphs. tapeflow's shapes have a rank, so the import asks for an
// input_map entry, and with one the placeholder takes its replacement's shape.
TEST(GraphDefImportTest, APlaceholderOfUnknownRankImportsWhenInputMapReplacesIt) {
  const std::string text = R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
      node { name: "keep_prob" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { unknown_rank: true } } } }
      node { name: "scale" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
      node { name: "y" op: "Mul" input: "x" input: "keep_prob" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "z" op: "Mul" input: "y" input: "scale" attr { key: "T" value { type: DT_FLOAT } } })pb";
  const GraphDef def = graph_def_from_text(text);
  {
    Graph g;
    const std::string message = error_of<UnimplementedError>([&] { import_graph_def(g, def, {}, {}, ""); });
    EXPECT_THAT(message, HasSubstr("node 'keep_prob' (Placeholder): attr 'shape' has a shape of unknown rank"));
    EXPECT_THAT(message, HasSubstr("give import_graph_def an input_map entry 'keep_prob:0'"));
    EXPECT_EQ(g.num_nodes(), 0);  // nothing was added
    const std::string missing = error_of<UnimplementedError>(
        [&] { import_graph_def(g, def, {{"keep_prob:0", Tensor(0.5f)}}, {}, ""); });
    EXPECT_THAT(missing, HasSubstr("node 'scale' (Placeholder): attr 'shape' is missing"));
  }
  Graph g;
  Tensor scale;
  {
    auto scope = g.as_default();
    scale = placeholder(DType::kFloat32, {}, "my_scale");
  }
  import_graph_def(g, def, {{"keep_prob:0", Tensor(0.5f)}, {"scale:0", scale}}, {}, "");
  EXPECT_EQ(g.get_tensor_by_name("keep_prob:0").shape(), Shape{});
  EXPECT_EQ(g.get_tensor_by_name("scale:0").shape(), Shape{});
  Session sess(g);
  const Tensor z = sess.run(g.get_tensor_by_name("z:0"),
                            {{g.get_tensor_by_name("x:0"), Tensor({{1.f, 2.f}, {3.f, 4.f}})}, {scale, Tensor(10.f)}});
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{5.f, 10.f, 15.f, 20.f}));
}

// A node of an imported GraphDef that fails at run time is named as the GraphDef's node, with
// the line that imported it ("imported at"), not as if that line had created it.
TEST(GraphDefErrorTest, AnImportedNodeFailingAtRunTimeSaysWhereItWasImported) {
  Graph g;
  const int import_line = __LINE__ + 1;
  import_graph_def(g, graph_def_from_text(R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } } } } }
      node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } } }
      node { name: "r" op: "Reshape" input: "x" input: "two"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } })pb"),
                   {}, {}, "");
  Session sess(g);
  const std::string message = error_of<InvalidArgumentError>(
      [&] { sess.run(g.get_tensor_by_name("r:0"), {{g.get_tensor_by_name("x:0"), Tensor({1.f, 2.f, 3.f})}}); });
  EXPECT_THAT(message, HasSubstr("in node 'r' (Reshape) imported at "));
  EXPECT_THAT(message, HasSubstr("graph_def_test.cc:" + std::to_string(import_line)));
  EXPECT_THAT(message, Not(HasSubstr("created at")));
  // Without a location (a tool importing a user's file), the node alone.
  Graph quiet = graph_from_graph_def(to_graph_def(g), std::source_location{});
  Session quiet_sess(quiet);
  const std::string bare = error_of<InvalidArgumentError>(
      [&] { quiet_sess.run(quiet.get_tensor_by_name("r:0"), {{quiet.get_tensor_by_name("x:0"), Tensor({1.f, 2.f, 3.f})}}); });
  EXPECT_THAT(bare, HasSubstr("in node 'r' (Reshape)"));
  EXPECT_THAT(bare, Not(HasSubstr(" at ")));
}

// Corrupted bytes of a real graph: every outcome is a parse error, a typed tapeflow Error or a
// good import; never a crash or a foreign exception. Deterministic (a fixed LCG).
// A training graph (variables, slots, Adam's fused update, gradients) as a second fuzz seed.
GraphDef adam_graph_def() {
  nn::Adam opt(0.1);
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {4, 3}, "x");
  Variable w(zeros({3, 1}), "w");
  opt.minimize(reduce_mean(square(matmul(x, w) - 1.f)));
  global_variables_initializer();
  return to_graph_def(g);
}

TEST(GraphDefErrorTest, CorruptedGraphDefsNeverCrash) {
  for (const std::string& good : {graph_def_to_binary(graph_def_from_text(kInferenceGraph)),
                                  graph_def_to_binary(adam_graph_def())}) {
    uint64_t state = 12345;
    auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    int parsed = 0, imported = 0, rejected = 0;
    // Flipped bytes in strings trip protobuf's UTF-8 log line; the parse result is what counts.
    auto* previous = google::protobuf::SetLogHandler([](google::protobuf::LogLevel, const char*, int, const std::string&) {});
    for (int trial = 0; trial < 3000; ++trial) {
      std::string bytes = good;
      const int flips = 1 + static_cast<int>(next() % 3);
      for (int f = 0; f < flips; ++f) bytes[next() % bytes.size()] = static_cast<char>(next() & 0xff);
      GraphDef def;
      if (!def.ParseFromString(bytes)) continue;
      ++parsed;
      Graph g;
      try {
        import_graph_def(g, def);
        ++imported;
      } catch (const Error& e) {
        EXPECT_THAT(e.message(), ::testing::StartsWith("[")) << e.message();
        EXPECT_EQ(g.num_nodes(), 0) << e.message();
        ++rejected;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "trial " << trial << ": " << typeid(e).name() << ": " << e.what() << "\n"
                      << graph_def_to_text(def);
      }
    }
    google::protobuf::SetLogHandler(previous);
    std::cout << "corrupted GraphDefs: " << parsed << " parsed, " << rejected << " rejected, " << imported << " imported\n";
    EXPECT_GT(parsed, 300);
    EXPECT_GT(rejected, 100);
    EXPECT_GT(imported, 10);
  }
}

TEST(GraphDefErrorTest, MalformedTextAndBytesAreInvalidArgument) {
  EXPECT_THAT(error_of([] { graph_def_from_text("node { name: "); }), HasSubstr("[graph_def_from_text] not a GraphDef"));
  EXPECT_THAT(error_of([] { graph_def_from_binary(std::string("\x0a\x7f\x01", 3)); }),
              HasSubstr("[graph_def_from_binary] 3 bytes are not a GraphDef"));
  EXPECT_THAT(error_of<NotFoundError>([] { read_graph_def("/nonexistent/graph.pb"); }),
              HasSubstr("[read_graph_def] cannot open"));
}

// ---- import_graph_def semantics ----

// Nodes naming the same device string share one spec (Importer::device_of); a node naming none
// holds none; a device string that does not parse is an error naming the node, the graph unchanged.
TEST(GraphDefImportTest, NodesNamingOneDeviceShareItsSpecAndABadDeviceNamesTheNode) {
  const std::string t = R"pb( attr { key: "T" value { type: DT_FLOAT } } })pb";
  const GraphDef def = graph_def_from_text(std::string(kX) +
      R"pb(node { name: "a" op: "Neg" input: "x" device: "/job:ps/task:0/device:CPU:0")pb" + t +
      R"pb(node { name: "b" op: "Square" input: "a" device: "/job:ps/task:0/device:CPU:0")pb" + t +
      R"pb(node { name: "c" op: "Neg" input: "b")pb" + t);
  const Graph g = graph_from_graph_def(def);
  const GraphState& state = *g.state();
  const Node& a = state.node(state.find("a"));
  const Node& b = state.node(state.find("b"));
  EXPECT_EQ(a.requested_device.to_string(), "/job:ps/task:0/device:CPU:0");
  EXPECT_EQ(&a.requested_device.get(), &b.requested_device.get());  // one spec for both
  EXPECT_TRUE(state.node(state.find("c")).requested_device.empty());
  EXPECT_EQ(g.get_operation_by_name("b").device(), "/job:ps/task:0/device:CPU:0");

  expect_import_error<InvalidArgumentError>(
      std::string(kX) + R"pb(node { name: "d" op: "Neg" input: "x" device: "/device:CPU:zero")pb" + t,
      "[import_graph_def] node 'd' (Neg): Malformed device specification '/device:CPU:zero': device index 'zero'");
}

TEST(GraphDefImportTest, PrefixInputMapReturnElementsCollisionsDevicesAndControlInputs) {
  const GraphDef def = graph_def_from_text(std::string(kX) + R"pb(
    node { name: "y" op: "Square" input: "x" device: "/device:CPU:0" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
    node { name: "z" op: "Neg" input: "y" input: "^c" attr { key: "T" value { type: DT_FLOAT } } })pb");
  Graph g;
  auto scope = g.as_default();
  Tensor feed = placeholder(DType::kFloat32, {2}, "feed");
  const auto first = import_graph_def(def, {{"x:0", feed}}, {"z:0", "y"});
  const auto second = import_graph_def(def, {{"x", Tensor({3.f, 4.f})}}, {"z:0"});
  const Tensor z1 = std::get<Tensor>(first[0]), z2 = std::get<Tensor>(second[0]);
  EXPECT_EQ(z1.name(), "import/z:0");
  EXPECT_EQ(z2.name(), "import_1/z:0");
  EXPECT_EQ(std::get<Operation>(first[1]).device(), "/device:CPU:0");
  EXPECT_EQ(std::get<Operation>(first[1]).inputs().at(0).name(), "feed:0");  // mapped, not import/x
  ASSERT_EQ(producer(z1).control_inputs().size(), 1u);
  EXPECT_EQ(producer(z1).control_inputs()[0].name(), "import/c");
  // Without a prefix, taken names get the next free suffix.
  const auto third = import_graph_def(def, {{"x:0", feed}}, {"z:0", "x"}, "");
  EXPECT_EQ(std::get<Tensor>(third[0]).name(), "z:0");
  const auto fourth = import_graph_def(def, {{"x:0", feed}}, {"z:0"}, "");
  EXPECT_EQ(std::get<Tensor>(fourth[0]).name(), "z_1:0");
  Session sess(g);
  EXPECT_THAT(values(sess.run(z1, {{feed, Tensor({1.f, 2.f})}})), ElementsAre(-1.f, -4.f));
  EXPECT_THAT(values(sess.run(z2)), ElementsAre(-9.f, -16.f));
  EXPECT_THAT(error_of([&] { import_graph_def(def, {{"missing:0", feed}}); }),
              HasSubstr("input_map names tensors the GraphDef does not have: missing:0"));
  EXPECT_THAT(error_of<NotFoundError>([&] { import_graph_def(def, {}, {"nothing"}); }),
              HasSubstr("return element 'nothing' names no node"));
}

// ---- round trips ----

Graph round_trip(const Graph& g, bool text) {
  const GraphDef def = to_graph_def(g);
  const GraphDef back = text ? graph_def_from_text(graph_def_to_text(def)) : graph_def_from_binary(graph_def_to_binary(def));
  EXPECT_EQ(graph_def_to_binary(back), graph_def_to_binary(def));
  return graph_from_graph_def(back);
}

TEST(GraphDefRoundTripTest, Tutorial05GraphRunsTheSame) {
  Graph g;
  Tensor product, increment, scoped, halved;
  std::optional<Variable> v;
  {
    auto scope = g.as_default();
    Tensor a = constant(Tensor({{1.f, 2.f}, {3.f, 4.f}}), "a");
    Tensor b = constant(Tensor({{1.f}, {1.f}}), "b");
    product = matmul(a, b);
    v.emplace(Tensor(0), "Variable");
    increment = v->assign_add(1);
    auto outer = name_scope("outer");
    auto dev = device("/device:CPU:0");
    scoped = constant(Tensor(2), "c") * constant(Tensor(3), "c");
    halved = cast(reduce_sum(product), DType::kFloat64) / 2.0;
  }
  for (bool text : {true, false}) {
    Graph h = round_trip(g, text);
    EXPECT_EQ(h.num_nodes(), g.num_nodes() + 1);  // + "Sum/axes", the Const that carries Sum's axes
    EXPECT_EQ(h.get_operation_by_name("outer/c_1").device(), "/device:CPU:0");
    Session s1(g), s2(h);
    EXPECT_EQ(values(s2.run(h.get_tensor_by_name(product.name()))), values(s1.run(product)));
    EXPECT_EQ(s2.run(h.get_tensor_by_name(scoped.name())).item<int32_t>(), 6);
    EXPECT_EQ(s2.run(h.get_tensor_by_name(halved.name())).item<double>(), 5.0);
    ASSERT_EQ(h.global_variables().size(), 1u);
    s2.run(h.get_operation_by_name("Variable/Assign"));
    s2.run(h.get_tensor_by_name(increment.name()));
    s2.run(h.get_tensor_by_name(increment.name()));
    EXPECT_EQ(s2.run(h.global_variables()[0]).item<int32_t>(), 2);
  }
}

TEST(GraphDefRoundTripTest, TracedMlpGivesBitIdenticalOutputs) {
  const Tensor w1({{0.1f, -0.2f, 0.3f, 0.05f}, {0.4f, 0.1f, -0.5f, 0.2f}, {-0.3f, 0.2f, 0.1f, -0.1f}});
  const Tensor b1({0.01f, -0.02f, 0.03f, 0.0f});
  const Tensor w2({{0.5f, -0.5f}, {0.25f, 0.75f}, {-1.f, 0.5f}, {0.3f, 0.3f}});
  const Tensor b2({0.1f, -0.1f});
  auto mlp = function([&](const Tensor& x) { return softmax(matmul(relu(matmul(x, w1) + b1), w2) + b2); });
  ConcreteFunction& cf = mlp.get_concrete_function({{DType::kFloat32, {2, 3}}});
  const Tensor xv({{1.f, 2.f, 3.f}, {-1.f, 0.5f, 0.25f}});
  const Tensor expected = cf({xv})[0];
  Graph h = round_trip(cf.graph(), false);
  FeedList feeds{{h.get_tensor_by_name(cf.inputs()[0].name()), xv}};
  for (const auto& c : cf.captures()) feeds.emplace_back(h.get_tensor_by_name(c.placeholder.name()), c.value);
  Session sess(h);
  EXPECT_EQ(values(sess.run(h.get_tensor_by_name(cf.outputs()[0].name()), feeds)), values(expected));
}

TEST(GraphDefRoundTripTest, AdamTrainingGraphTrainsBitIdentically) {
  const Tensor xv({{1.f, 0.f, 2.f}, {0.5f, 1.f, -1.f}, {-1.f, 2.f, 0.f}, {0.f, 0.f, 1.f}});
  const Tensor yv({{3.f}, {0.2f}, {-1.5f}, {0.8f}});
  nn::Adam opt(0.1);
  Graph g;
  Tensor x, y;
  Operation train, init;
  std::optional<Variable> w, b;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {4, 3}, "x");
    y = placeholder(DType::kFloat32, {4, 1}, "y");
    w.emplace(zeros({3, 1}), "w");
    b.emplace(zeros({1}), "b");
    train = opt.minimize(reduce_mean(square(matmul(x, *w) + *b - y)));
    init = global_variables_initializer();
  }
  Graph h = round_trip(g, true);
  EXPECT_EQ(h.global_variables().size(), g.global_variables().size());
  EXPECT_EQ(h.trainable_variables().size(), 2u);
  Session s1(g), s2(h);
  s1.run(init);
  s2.run(h.get_operation_by_name(init.name()));
  const Tensor hx = h.get_tensor_by_name("x:0"), hy = h.get_tensor_by_name("y:0");
  const Operation htrain = h.get_operation_by_name(train.name());
  for (int i = 0; i < 12; ++i) {
    s1.run(train, {{x, xv}, {y, yv}});
    s2.run(htrain, {{hx, xv}, {hy, yv}});
  }
  std::optional<Variable> hw, hb;
  for (const Variable& v : h.global_variables()) {
    if (v.name() == "w") hw = v;
    if (v.name() == "b") hb = v;
  }
  ASSERT_TRUE(hw && hb);
  EXPECT_EQ(values(s2.run(*hw)), values(s1.run(*w)));
  EXPECT_EQ(values(s2.run(*hb)), values(s1.run(*b)));
  EXPECT_NE(values(s1.run(*w))[0], 0.f);
}

// Resource variables as TensorFlow (tf.compat.v1 with resource variables) writes them.
TEST(GraphDefImportTest, ResourceVariablesBecomeGraphVariables) {
  const std::string text = R"pb(
    node { name: "v" op: "VarHandleOp"
      attr { key: "_class" value { list { s: "loc:@v" } } }
      attr { key: "allowed_devices" value { list { } } }
      attr { key: "container" value { s: "" } }
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 2 } } } }
      attr { key: "shared_name" value { s: "v" } } }
    node { name: "v/Initializer/Const" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: 2 } } } }
    node { name: "v/Assign" op: "AssignVariableOp" input: "v" input: "v/Initializer/Const"
      attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "delta" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 0.5 } } } }
    node { name: "step" op: "AssignAddVariableOp" input: "v" input: "delta" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "read" op: "ReadVariableOp" input: "v" input: "^step" attr { key: "dtype" value { type: DT_FLOAT } } })pb";
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  ASSERT_EQ(g.global_variables().size(), 1u);
  EXPECT_EQ(g.global_variables()[0].name(), "v");
  EXPECT_FALSE(g.get_operation_by_name("v").attrs().has("class"));
  Session sess(g);
  sess.run(g.get_operation_by_name("v/Assign"));
  EXPECT_THAT(values(sess.run(g.get_tensor_by_name("read:0"))), ElementsAre(1.5f, 2.5f));
  EXPECT_THAT(values(sess.run(g.get_tensor_by_name("read:0"))), ElementsAre(2.f, 3.f));
  std::string bad = text;
  bad.replace(bad.rfind("DT_FLOAT"), 8, "DT_INT32");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(bad)); }),
              HasSubstr("node 'read' (ReadVariableOp): variable 'v' holds float32; this node has dtype int32"));
  std::string not_handle = text;
  not_handle.replace(not_handle.find("input: \"v\" input: \"delta\""), 10, "input: \"delta\"");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(not_handle)); }),
              HasSubstr("node 'step' (AssignAddVariableOp): input 0 'delta' must be a VarHandleOp, not a Const"));
}

// Conv2D / MaxPool / BiasAdd as TensorFlow writes them: 4-entry strides and ksize, NHWC.
TEST(GraphDefImportTest, ConvolutionGraphInTensorflowsForm) {
  const std::string conv = R"pb(
    node { name: "img" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 1 } dim { size: 4 } dim { size: 4 } dim { size: 1 } } } } }
    node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } dim { size: 1 } dim { size: 1 } } float_val: 1 } } } }
    node { name: "bias" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 0.5 } } } }
    node { name: "Conv2D" op: "Conv2D" input: "img" input: "k"
      attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "data_format" value { s: "NHWC" } }
      attr { key: "dilations" value { list { i: 1 i: 1 i: 1 i: 1 } } }
      attr { key: "padding" value { s: "VALID" } }
      attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } }
      attr { key: "use_cudnn_on_gpu" value { b: true } } }
    node { name: "BiasAdd" op: "BiasAdd" input: "Conv2D" input: "bias"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "data_format" value { s: "NHWC" } } }
    node { name: "MaxPool" op: "MaxPool" input: "BiasAdd"
      attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "data_format" value { s: "NHWC" } }
      attr { key: "ksize" value { list { i: 1 i: 2 i: 2 i: 1 } } }
      attr { key: "padding" value { s: "VALID" } }
      attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } } })pb";
  Graph g = graph_from_graph_def(graph_def_from_text(conv));
  EXPECT_EQ(g.get_operation_by_name("Conv2D").attrs().get<std::vector<int64_t>>("strides"), (std::vector<int64_t>{1, 1}));
  std::vector<float> pixels(16);
  for (int i = 0; i < 16; ++i) pixels[i] = float(i);
  const Tensor img(pixels, Shape{1, 4, 4, 1});
  Session sess(g);
  const Tensor out = sess.run(g.get_tensor_by_name("MaxPool:0"), {{g.get_tensor_by_name("img:0"), img}});
  EXPECT_EQ(out.shape(), (Shape{1, 1, 1, 1}));
  const Tensor expected = max_pool(conv2d(img, ones({2, 2, 1, 1}), {1, 1}, "VALID") + 0.5f, {2, 2}, {2, 2}, "VALID");
  EXPECT_EQ(values(out), values(expected));
  // A layout that does not exist is refused by name, not run wrongly (NCHW: graph_def_tf_layers_test).
  std::string bad_layout = conv;
  bad_layout.replace(bad_layout.find("s: \"NHWC\""), 10, "s: \"NHCW\"");
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_from_graph_def(graph_def_from_text(bad_layout)); }),
              HasSubstr("node 'Conv2D' (Conv2D): [conv2d] data_format must be \"NHWC\" or \"NCHW\", got \"NHCW\""));
}

// Symbolic gradients of a small CNN: Conv2DBackpropInput / Filter carry their shapes as const
// inputs at TensorFlow's positions (0 and 1); the values must survive bit for bit.
TEST(GraphDefRoundTripTest, CnnGradientsGiveBitIdenticalValues) {
  Graph g;
  Tensor x, k, loss;
  std::vector<Tensor> grads;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2, 5, 5, 2}, "x");
    k = constant(Tensor(std::vector<float>{0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, -0.8f, 0.9f, 1.f, -1.1f, 1.2f,
                                           0.05f, 0.15f, -0.25f, 0.35f, 0.45f, -0.55f, 0.65f, 0.75f, -0.85f, 0.95f,
                                           1.05f, -1.15f},
                        Shape{2, 2, 2, 3}),
                 "k");
    Tensor y = max_pool(relu(conv2d(x, k, {1, 1}, "SAME")), {2, 2}, {2, 2}, "VALID");
    loss = reduce_sum(square(y));
    grads = gradients({loss}, std::vector<Tensor>{x, k});
  }
  std::vector<float> xs(100);
  for (int i = 0; i < 100; ++i) xs[i] = 0.01f * float((i * 37) % 100) - 0.5f;
  const Tensor xv(xs, Shape{2, 5, 5, 2});
  Graph h = round_trip(g, false);
  Session s1(g), s2(h);
  const Tensor hx = h.get_tensor_by_name("x:0");
  for (const Tensor& t : {loss, grads[0], grads[1]})
    EXPECT_EQ(values(s2.run(h.get_tensor_by_name(t.name()), {{hx, xv}})), values(s1.run(t, {{x, xv}}))) << t.name();
  const std::string text = graph_def_to_text(to_graph_def(g));
  EXPECT_THAT(text, HasSubstr("op: \"Conv2DBackpropFilter\""));
  EXPECT_THAT(text, HasSubstr("op: \"Conv2DBackpropInput\""));
}

TEST(GraphDefFileTest, WritesAndReadsTextAndBinaryFiles) {
  const GraphDef def = graph_def_from_text(kInferenceGraph);
  const auto dir = std::filesystem::temp_directory_path() / absl::StrCat("tapeflow_graph_def_", ::getpid());
  std::filesystem::create_directories(dir);
  for (const char* name : {"model.pbtxt", "model.pb"}) {
    const std::string path = (dir / name).string();
    write_graph_def(def, path);
    EXPECT_EQ(graph_def_to_binary(read_graph_def(path)), graph_def_to_binary(def)) << name;
  }
  std::ifstream text_file(dir / "model.pbtxt");
  std::string first_line;
  std::getline(text_file, first_line);
  EXPECT_EQ(first_line, "node {");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {
// Relu and friends are TensorFlow's primitives on both sides: written as TF writes them, and
// a TF graph's Relu, Relu6, LeakyRelu (with its alpha) and ReluGrad import as those ops.
TEST(GraphDefActivationTest, ActivationsTravelAsTensorflowsPrimitives) {
  Graph g;
  Tensor x, y, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, 3}, "x");
    y = leaky_relu(relu6(relu(x) - 1.f), 0.1);
    dx = gradients({reduce_sum(y)}, {x})[0];
  }
  const GraphDef def = to_graph_def(g);
  std::vector<std::string> ops;
  for (const auto& n : def.node()) ops.push_back(n.op());
  for (const char* op : {"Relu", "Relu6", "LeakyRelu", "ReluGrad", "Relu6Grad", "LeakyReluGrad"})
    EXPECT_THAT(ops, ::testing::Contains(std::string(op)));
  for (const auto& n : def.node()) {
    if (n.op() == "LeakyRelu") {
      EXPECT_FLOAT_EQ(n.attr().at("alpha").f(), 0.1f);
    }
  }

  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  Session a(g), b(back);
  const Tensor xv({{-2.f, 0.5f, 9.f}, {1.5f, 3.f, 0.f}});
  const Tensor bx = back.get_tensor_by_name("x:0");
  EXPECT_EQ(values(a.run(y, {{x, xv}})), values(b.run(back.get_tensor_by_name(y.name()), {{bx, xv}})));
  EXPECT_EQ(values(a.run(dx, {{x, xv}})), values(b.run(back.get_tensor_by_name(dx.name()), {{bx, xv}})));
  EXPECT_EQ(values(a.run(y, {{x, xv}})), values(leaky_relu(relu6(relu(xv) - 1.f), 0.1)));
}

// TensorFlow's ScatterNd takes its shape in the indices' dtype (Tindices): int64 indices get an
// int64 shape Const, int32 ones an int32 one; both read back and run the same.
TEST(GraphDefWireTest, ScatterNdShapeConstHasTheIndicesDtype) {
  for (DType index_dtype : {DType::kInt64, DType::kInt32}) {
    Graph g;
    Tensor updates, y;
    {
      auto scope = g.as_default();
      updates = placeholder(DType::kFloat32, {2}, "updates");
      const Tensor indices = index_dtype == DType::kInt64 ? Tensor(std::vector<int64_t>{3, 1}, Shape{2, 1})
                                                          : Tensor(std::vector<int32_t>{3, 1}, Shape{2, 1});
      y = scatter_nd(indices, updates, {5});
    }
    const GraphDef def = to_graph_def(g);
    const proto::NodeDef* shape = nullptr;
    const proto::NodeDef* scatter = nullptr;
    for (const auto& n : def.node()) {
      if (n.name() == "ScatterNd/shape") shape = &n;
      if (n.op() == "ScatterNd") scatter = &n;
    }
    ASSERT_NE(shape, nullptr);
    ASSERT_NE(scatter, nullptr);
    const proto::DataType want = index_dtype == DType::kInt64 ? proto::DT_INT64 : proto::DT_INT32;
    EXPECT_EQ(shape->attr().at("dtype").type(), want);
    EXPECT_EQ(shape->attr().at("value").tensor().dtype(), want);
    EXPECT_EQ(scatter->attr().at("Tindices").type(), want);
    EXPECT_EQ(scatter->input(2), "ScatterNd/shape");

    Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
    Session a(g), b(back);
    const Tensor uv({2.f, -7.f});
    EXPECT_EQ(values(b.run(back.get_tensor_by_name(y.name()), {{back.get_tensor_by_name("updates:0"), uv}})),
              values(a.run(y, {{updates, uv}})));
    EXPECT_EQ(values(a.run(y, {{updates, uv}})), (std::vector<float>{0, -7, 0, 2, 0}));
  }
}

// TensorFlow's RandomUniform has no range attrs; tapeflow's float or integer range travels as
// "_minval"/"_maxval" and reads back to the same op and the same seeded values.
TEST(GraphDefWireTest, RandomUniformRangesTravelAsTapeflowAttrs) {
  for (DType dtype : {DType::kFloat32, DType::kInt32}) {
    Graph g;
    Tensor r;
    {
      auto scope = g.as_default();
      r = random_uniform({3}, 2, 9, dtype, /*seed=*/7);
    }
    const GraphDef def = to_graph_def(g);
    const proto::NodeDef* node = nullptr;
    for (const auto& n : def.node())
      if (n.op() == "RandomUniform") node = &n;
    ASSERT_NE(node, nullptr) << dtype_name(dtype);
    EXPECT_FALSE(node->attr().contains("minval"));
    EXPECT_TRUE(node->attr().contains("_minval"));
    EXPECT_TRUE(node->attr().contains("_maxval"));
    Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
    Session a(g), b(back);
    const Tensor ra = a.run(r), rb = b.run(back.get_tensor_by_name(r.name()));
    EXPECT_EQ(rb.dtype(), dtype);
    EXPECT_EQ(rb.shape(), (Shape{3}));
    EXPECT_EQ(back.get_tensor_by_name(r.name()).dtype(), dtype);
    const Tensor lo = cast(ra, DType::kFloat64), hi = cast(rb, DType::kFloat64);
    for (double v : lo.to_vector<double>()) {
      EXPECT_GE(v, 2.0);
      EXPECT_LT(v, 9.0);
    }
    for (double v : hi.to_vector<double>()) {
      EXPECT_GE(v, 2.0);
      EXPECT_LT(v, 9.0);
    }
  }
}

// ---- the file edge: bounded reads, a quiet protobuf ----

}  // namespace
namespace {

struct GraphDefBoundedReadTest : ::testing::Test {
  ScopedTempDir tmp{"graph_def"};
  const std::string& dir = tmp.path();
};

// A stream without an end stops one byte past the limit (before: `tapeflow graph /dev/zero`
// grew to gigabytes); the real limit is protobuf's, 2^31 - 1 bytes.
TEST_F(GraphDefBoundedReadTest, AStreamWithoutEndStopsAtTheLimit) {
  const auto loc = std::source_location::current();
  EXPECT_THAT(error_of<ResourceExhaustedError>([&] { graph_def_internal::read_file_bounded("/dev/zero", 1 << 20, loc); }),
              HasSubstr("[read_graph_def] '/dev/zero': more than 1048576 bytes, over the limit of 1048576 bytes "
                        "for a GraphDef file"));
}

TEST_F(GraphDefBoundedReadTest, ARegularFileOverTheLimitIsRefusedBeforeReadingAndOneAtItIsRead) {
  const auto loc = std::source_location::current();
  const std::string path = dir + "/g.pb";
  std::ofstream(path, std::ios::binary) << std::string(2000, 'x');
  EXPECT_THAT(error_of<ResourceExhaustedError>([&] { graph_def_internal::read_file_bounded(path, 1999, loc); }),
              HasSubstr("[read_graph_def] '" + path + "': 2000 bytes, over the limit of 1999 bytes"));
  EXPECT_EQ(graph_def_internal::read_file_bounded(path, 2000, loc), std::string(2000, 'x'));
  EXPECT_EQ(graph_def_internal::read_file_bounded(path, 1 << 20, loc), std::string(2000, 'x'));
  EXPECT_THAT(error_of([&] { read_graph_def(dir); }),
              HasSubstr("[read_graph_def] '" + dir + "' is a directory, not a GraphDef file"));
}

// A pipe has no size to check: it is read to its end, and what it held parses.
TEST_F(GraphDefBoundedReadTest, APipeIsReadToItsEnd) {
  const std::string bytes = graph_def_to_binary(graph_def_from_text(kInferenceGraph));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fds[1], bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fds[1]);
  });
  const GraphDef def = read_graph_def("/dev/fd/" + std::to_string(fds[0]));
  writer.join();
  ::close(fds[0]);
  EXPECT_EQ(graph_def_to_binary(def), bytes);
}

// Note [Quiet protobuf]: a string that is not UTF-8 is our typed error, and libprotobuf logs
// nothing of its own (before, "[libprotobuf ERROR ...] String field ... invalid UTF-8" came first).
TEST_F(GraphDefBoundedReadTest, InvalidUtf8IsOurErrorAndProtobufStaysQuiet) {
  static std::vector<std::string> logged;
  logged.clear();
  auto* previous = google::protobuf::SetLogHandler(
      [](google::protobuf::LogLevel, const char*, int, const std::string& message) { logged.push_back(message); });
  const std::string bad("\x0a\x03\x0a\x01\xff", 5);  // node { name: "\xff" }
  const std::string error = error_of([&] { graph_def_from_binary(bad); });
  const std::string path = dir + "/bad.pb";
  std::ofstream(path, std::ios::binary) << bad;
  const std::string file_error = error_of([&] { read_graph_def(path); });
  google::protobuf::SetLogHandler(previous);
  EXPECT_THAT(error, HasSubstr("[graph_def_from_binary] 5 bytes are not a GraphDef in binary format"));
  EXPECT_THAT(file_error, HasSubstr("[read_graph_def] '" + path + "': [graph_def_from_binary] 5 bytes"));
  EXPECT_THAT(logged, ElementsAre());
}

}  // namespace
}  // namespace tapeflow
