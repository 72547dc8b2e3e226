// TensorFlow primitives that tapeflow once composed from other ops (Softmax, LogSoftmax, Mean,
// Pack, Unpack, Split, SplitV, Pad) and Shape: exported as TensorFlow's own node types, read
// back from graphs written the way TensorFlow 1.x prints them, and run to the eager values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

std::vector<std::string> op_types(const GraphDef& def) {
  std::vector<std::string> ops;
  for (const auto& n : def.node()) ops.push_back(n.op());
  return ops;
}

const proto::NodeDef& node_named(const GraphDef& def, const std::string& name) {
  for (const auto& n : def.node())
    if (n.name() == name) return n;
  throw std::runtime_error("no node " + name);
}

TEST(GraphDefPrimitivesTest, ComposedOpsTravelAsTensorflowsPrimitivesAndRunTheSame) {
  Graph g;
  Tensor x, soft, log_soft, mean, packed, first, second, third, zero_pad, value_pad, dims, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2, 6}, "x");
    soft = softmax(x);
    log_soft = log_softmax(x, 0);
    mean = reduce_mean(x, {1});
    const std::vector<Tensor> halves = split(x, 2, 1);
    const std::vector<Tensor> pieces = split(x, {1, -1}, 1);
    packed = stack({halves[0], halves[1]}, 1);
    const std::vector<Tensor> rows = unstack(x);
    first = rows[0];
    second = pieces[1];
    third = halves[1];
    zero_pad = pad(x, {{1, 0}, {0, 2}});
    value_pad = pad(x, {{0, 1}, {0, 0}}, 7.0);
    dims = shape(x);
    dx = gradients({reduce_sum(soft * log_soft) + reduce_sum(mean) + reduce_sum(packed * packed) +
                    reduce_sum(first) * reduce_sum(second) + reduce_sum(zero_pad)},
                   {x})[0];
  }
  const GraphDef def = to_graph_def(g);
  const std::vector<std::string> ops = op_types(def);
  for (const char* op : {"Softmax", "LogSoftmax", "Mean", "Split", "SplitV", "Pack", "Unpack", "Pad", "PadV2", "Shape"})
    EXPECT_THAT(ops, Contains(std::string(op)));
  EXPECT_THAT(ops, Not(Contains(std::string("Max"))));  // softmax no longer shifts by a Max node
  // TensorFlow's attrs: Split takes its axis as input 0, SplitV its sizes then its axis.
  const proto::NodeDef& split_node = node_named(def, producer(third).name());
  EXPECT_EQ(split_node.op(), "Split");
  EXPECT_EQ(split_node.attr().at("num_split").i(), 2);
  EXPECT_EQ(node_named(def, split_node.input(0)).op(), "Const");
  EXPECT_EQ(split_node.input(1), "x");
  const proto::NodeDef& split_v = node_named(def, producer(second).name());
  EXPECT_EQ(split_v.attr().at("num_split").i(), 2);
  EXPECT_EQ(split_v.input(0), "x");
  EXPECT_EQ(node_named(def, producer(dims).name()).attr().at("out_type").type(), proto::DT_INT32);
  EXPECT_EQ(node_named(def, producer(packed).name()).attr().at("N").i(), 2);
  EXPECT_EQ(node_named(def, producer(zero_pad).name()).input_size(), 2);  // Pad: no constant input
  EXPECT_EQ(node_named(def, producer(value_pad).name()).input_size(), 3);

  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  Session a(g), b(back);
  const Tensor xv({{1.f, -2.f, 0.5f, 3.f, 0.f, 2.f}, {-1.f, 4.f, 2.5f, -0.5f, 1.f, 1.5f}});
  const Tensor bx = back.get_tensor_by_name("x:0");
  for (const Tensor& t : {soft, log_soft, mean, packed, first, second, third, zero_pad, value_pad, dx}) {
    SCOPED_TRACE(t.name());
    EXPECT_EQ(values(a.run(t, {{x, xv}})), values(b.run(back.get_tensor_by_name(t.name()), {{bx, xv}})));
  }
  EXPECT_THAT(b.run(back.get_tensor_by_name(dims.name()), {{bx, xv}}).to_vector<int32_t>(), ElementsAre(2, 6));
  // And the eager values.
  EXPECT_EQ(values(a.run(soft, {{x, xv}})), values(softmax(xv)));
  EXPECT_EQ(values(a.run(log_soft, {{x, xv}})), values(log_softmax(xv, 0)));
  EXPECT_EQ(values(a.run(mean, {{x, xv}})), values(reduce_mean(xv, {1})));
  EXPECT_EQ(values(a.run(packed, {{x, xv}})), values(stack({slice(xv, {0, 0}, {2, 3}), slice(xv, {0, 3}, {2, 3})}, 1)));
  EXPECT_THAT(values(a.run(first, {{x, xv}})), ElementsAre(1.f, -2.f, 0.5f, 3.f, 0.f, 2.f));
  EXPECT_EQ(values(a.run(second, {{x, xv}})), values(slice(xv, {0, 1}, {2, 5})));
  EXPECT_EQ(values(a.run(value_pad, {{x, xv}})), values(concat({xv, fill({1, 6}, 7.f)}, 0)));
}

// A frozen graph as TensorFlow 1.x prints it, with the primitives tapeflow used to compose.
constexpr const char* kPrimitivesGraph = R"pb(
node { name: "x" op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 6 } } } } }
node { name: "split/split_dim" op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "split" op: "Split" input: "split/split_dim" input: "x"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "num_split" value { i: 3 } } }
node { name: "sizes" op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } tensor_content: "\001\000\000\000\377\377\377\377" } } } }
node { name: "split_v" op: "SplitV" input: "x" input: "sizes" input: "split/split_dim"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tlen" value { type: DT_INT32 } }
  attr { key: "num_split" value { i: 2 } } }
node { name: "stack" op: "Pack" input: "split" input: "split:2"
  attr { key: "N" value { i: 2 } }
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "axis" value { i: -1 } } }
node { name: "unstack" op: "Unpack" input: "stack"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "axis" value { i: 2 } }
  attr { key: "num" value { i: 2 } } }
node { name: "paddings" op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } tensor_content: "\000\000\000\000\000\000\000\000\001\000\000\000\002\000\000\000" } } } }
node { name: "Pad" op: "Pad" input: "split_v:1" input: "paddings"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tpaddings" value { type: DT_INT32 } } }
node { name: "Shape" op: "Shape" input: "Pad"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "out_type" value { type: DT_INT64 } } }
node { name: "Mean/reduction_indices" op: "Const"
  attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
node { name: "Mean" op: "Mean" input: "Pad" input: "Mean/reduction_indices"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tidx" value { type: DT_INT32 } }
  attr { key: "keep_dims" value { b: true } } }
node { name: "Softmax" op: "Softmax" input: "unstack:1"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "LogSoftmax" op: "LogSoftmax" input: "Pad"
  attr { key: "T" value { type: DT_FLOAT } }
  experimental_debug_info { original_node_names: "log_softmax" } }
library { }
versions { producer: 27 }
)pb";

TEST(GraphDefImportTest, ReadsTensorflowsPrimitivesAsTensorflow1PrintsThem) {
  Graph g = graph_from_graph_def(graph_def_from_text(kPrimitivesGraph));
  Session sess(g);
  const Tensor x = g.get_tensor_by_name("x:0");
  const Tensor xv({{1.f, -2.f, 0.5f, 3.f, 0.f, 2.f}, {-1.f, 4.f, 2.5f, -0.5f, 1.f, 1.5f}});
  auto run = [&](const char* name) { return sess.run(g.get_tensor_by_name(name), {{x, xv}}); };
  const std::vector<Tensor> thirds = split(xv, 3, 1);
  EXPECT_EQ(values(run("split:1")), values(thirds[1]));
  EXPECT_EQ(values(run("split_v:1")), values(slice(xv, {0, 1}, {2, 5})));
  const Tensor stacked = stack({thirds[0], thirds[2]}, -1);
  EXPECT_EQ(run("stack:0").shape(), Shape({2, 2, 2}));
  EXPECT_EQ(values(run("stack:0")), values(stacked));
  EXPECT_EQ(values(run("unstack:1")), values(thirds[2]));
  const Tensor padded = pad(slice(xv, {0, 1}, {2, 5}), {{0, 0}, {1, 2}});
  EXPECT_EQ(values(run("Pad:0")), values(padded));
  EXPECT_THAT(run("Shape:0").to_vector<int64_t>(), ElementsAre(2, 8));
  EXPECT_EQ(values(run("Mean:0")), values(reduce_mean(padded, {1}, true)));
  EXPECT_EQ(values(run("Softmax:0")), values(softmax(thirds[2])));
  EXPECT_EQ(values(run("LogSoftmax:0")), values(log_softmax(padded)));
}

// Note [Spare constants]: the Consts that carried constant inputs stay in an imported graph;
// export hands them back to the nodes they sit under instead of adding another beside them, so
// round trips do not grow the graph.
TEST(GraphDefImportTest, ReexportReusesTheConstantsThatCarriedAttrs) {
  const GraphDef original = graph_def_from_text(kPrimitivesGraph);
  const GraphDef once = to_graph_def(graph_from_graph_def(original));
  EXPECT_EQ(node_named(once, "Mean").input(1), "Mean/reduction_indices");
  EXPECT_EQ(node_named(once, "split").input(0), "split/split_dim");
  EXPECT_EQ(node_named(once, "Pad").input(1), "Pad/paddings");  // "paddings" sits under no node: a new one
  std::vector<std::string> names;
  for (const auto& n : once.node()) names.push_back(n.name());
  EXPECT_THAT(names, Not(Contains(std::string("Mean/axes"))));
  EXPECT_THAT(names, Not(Contains(std::string("split/axis"))));
  const GraphDef twice = to_graph_def(graph_from_graph_def(once));
  EXPECT_EQ(twice.node_size(), once.node_size());
  EXPECT_EQ(graph_def_to_binary(to_graph_def(graph_from_graph_def(twice))), graph_def_to_binary(twice));
}

// Keras' Flatten in a TensorFlow 1.x graph: Reshape(x, Pack(StridedSlice(Shape(x), 0), 6)). The
// shape is folded at import (Note [Folded constant inputs]): the unknown batch becomes -1.
constexpr const char* kFlattenGraph = R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } dim { size: 3 } } } } }
node { name: "flatten/Shape" op: "Shape" input: "x"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "out_type" value { type: DT_INT32 } } }
node { name: "flatten/strided_slice/stack" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }
node { name: "flatten/strided_slice/stack_1" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 1 } } } }
node { name: "flatten/strided_slice/stack_2" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 1 } } } }
node { name: "flatten/strided_slice" op: "StridedSlice" input: "flatten/Shape"
  input: "flatten/strided_slice/stack" input: "flatten/strided_slice/stack_1" input: "flatten/strided_slice/stack_2"
  attr { key: "Index" value { type: DT_INT32 } } attr { key: "T" value { type: DT_INT32 } }
  attr { key: "begin_mask" value { i: 0 } } attr { key: "ellipsis_mask" value { i: 0 } }
  attr { key: "end_mask" value { i: 0 } } attr { key: "new_axis_mask" value { i: 0 } }
  attr { key: "shrink_axis_mask" value { i: 1 } } }
node { name: "flatten/Reshape/shape/1" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: %s } } } }
node { name: "flatten/Reshape/shape" op: "Pack" input: "flatten/strided_slice" input: "flatten/Reshape/shape/1"
  attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } } attr { key: "axis" value { i: 0 } } }
node { name: "flatten/Reshape" op: "Reshape" input: "x" input: "flatten/Reshape/shape"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
)pb";

std::string flatten_graph(const char* second_dim) {
  std::string text = kFlattenGraph;
  text.replace(text.find("%s"), 2, second_dim);
  return text;
}

TEST(GraphDefImportTest, ShapeComputationsFoldIntoConstantInputs) {
  Graph g = graph_from_graph_def(graph_def_from_text(flatten_graph("6")));
  const Tensor flat = g.get_tensor_by_name("flatten/Reshape:0");
  EXPECT_EQ(flat.shape(), Shape({-1, 6}));
  const Tensor xv = reshape(cast(range<int32_t>(0, 24), DType::kFloat32), {4, 2, 3});
  Session sess(g);
  const Tensor got = sess.run(flat, {{g.get_tensor_by_name("x:0"), xv}});
  EXPECT_EQ(got.shape(), Shape({4, 6}));
  EXPECT_EQ(values(got), values(reshape(xv, {4, 6})));
  // The Shape node itself still runs (its value at run time is the fed batch).
  EXPECT_THAT(sess.run(g.get_tensor_by_name("flatten/Shape:0"), {{g.get_tensor_by_name("x:0"), xv}}).to_vector<int32_t>(),
              ElementsAre(4, 2, 3));
  // Two unknowns (the batch and a -1) cannot become one Reshape attr: the error it always was.
  try {
    graph_from_graph_def(graph_def_from_text(flatten_graph("-1")));
    FAIL() << "two -1s in a reshape";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("node 'flatten/Reshape' (Reshape)"));
  }
}

// The flatten graph with the packed batch dim doubled: Pack(StridedSlice(Shape(x)) * 2, second).
std::string flatten_of_doubled_batch(const char* second_dim, const char* batch) {
  std::string text = flatten_graph(second_dim);
  const std::string batch_dim = "dim { size: -1 }", packed = R"(input: "flatten/strided_slice" input: "flatten/Reshape/shape/1")";
  text.replace(text.find(batch_dim), batch_dim.size(), absl::StrCat("dim { size: ", batch, " }"));
  text.replace(text.find(packed), packed.size(), R"(input: "doubled" input: "flatten/Reshape/shape/1")");
  return text + R"pb(node { name: "doubled" op: "Mul" input: "flatten/strided_slice" input: "two"
                       attr { key: "T" value { type: DT_INT32 } } }
                     node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 2 } } } })pb";
}

TEST(GraphDefImportTest, ArithmeticOnAnUnknownDimIsNotFolded) {
  // shape[0] * 2 would fold -1 into -2: refused, so the Reshape says its input is not constant.
  try {
    graph_from_graph_def(graph_def_from_text(flatten_of_doubled_batch("6", "-1")));
    FAIL() << "arithmetic on an unknown dim must not fold";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the input that carries 'shape' must be a Const node, or a value tapeflow "
                                               "can compute while importing"));
  }
  // With every dim known the same arithmetic folds: [4, 2, 3] reshaped to [8, 3].
  EXPECT_EQ(graph_from_graph_def(graph_def_from_text(flatten_of_doubled_batch("3", "4")))
                .get_tensor_by_name("flatten/Reshape:0")
                .shape(),
            Shape({8, 3}));
}

// A binary GraphDef from a newer TensorFlow carries fields this schema does not declare (here
// NodeDef field 7, experimental_type): the text form leaves them out, so it parses back.
TEST(GraphDefFileTest, TextOfABinaryWithUnknownFieldsParsesBack) {
  std::string bytes = graph_def_to_binary(graph_def_from_text(R"pb(node { name: "n" op: "NoOp" })pb"));
  // GraphDef.node (field 1) holds NodeDef bytes; append NodeDef field 99, one a later TensorFlow
  // might add (length-delimited, 0 bytes: tag (99 << 3) | 2 = 794, varint 0x9a 0x06).
  ASSERT_EQ(bytes[0], '\x0a');
  bytes[1] = static_cast<char>(bytes[1] + 3);
  bytes += std::string("\x9a\x06\x00", 3);
  const GraphDef def = graph_def_from_binary(bytes);
  ASSERT_EQ(def.node(0).GetReflection()->GetUnknownFields(def.node(0)).field_count(), 1);
  const std::string text = graph_def_to_text(def);
  EXPECT_EQ(text.find("99:"), std::string::npos) << text;
  EXPECT_EQ(graph_def_from_text(text).node(0).name(), "n");
}

// Global average pooling over dims only known when the graph runs: Mean counts at run time.
TEST(GraphDefImportTest, MeanOverDimsOfUnknownSize) {
  Graph g = graph_from_graph_def(graph_def_from_text(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: -1 } dim { size: -1 } dim { size: 2 } } } } }
    node { name: "axes" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 1 int_val: 2 } } } }
    node { name: "gap" op: "Mean" input: "x" input: "axes"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT32 } }
      attr { key: "keep_dims" value { b: false } } }
  )pb"));
  const Tensor gap = g.get_tensor_by_name("gap:0");
  EXPECT_EQ(gap.shape(), Shape({-1, 2}));
  const Tensor xv = reshape(cast(range<int32_t>(0, 2 * 3 * 4 * 2), DType::kFloat32), {2, 3, 4, 2});
  Session sess(g);
  const Tensor got = sess.run(gap, {{g.get_tensor_by_name("x:0"), xv}});
  EXPECT_EQ(got.shape(), Shape({2, 2}));
  EXPECT_EQ(values(got), values(reduce_mean(xv, {1, 2})));
  EXPECT_THAT(values(got), ElementsAre(11.f, 12.f, 35.f, 36.f));
}

TEST(GraphDefPrimitivesTest, ShapeIsTheRunsShape) {
  const Tensor x = zeros({3, 0, 5});
  EXPECT_THAT(shape(x).to_vector<int32_t>(), ElementsAre(3, 0, 5));
  EXPECT_THAT(shape(x, DType::kInt64).to_vector<int64_t>(), ElementsAre(3, 0, 5));
  EXPECT_EQ(shape(Tensor(1.f)).shape(), Shape({0}));
  EXPECT_THROW(shape(x, DType::kFloat32), InvalidArgumentError);
  Graph g;
  Tensor p, s;
  {
    auto scope = g.as_default();
    p = placeholder(DType::kFloat32, {-1, 4}, "p");
    s = shape(p, DType::kInt64);
  }
  EXPECT_EQ(s.shape(), Shape({2}));
  Session sess(g);
  EXPECT_THAT(sess.run(s, {{p, zeros({7, 4})}}).to_vector<int64_t>(), ElementsAre(7, 4));
}

// Split's checks are its shape function's: a dim unknown while tracing splits when the graph
// runs, and a count that does not divide it fails then, naming the op.
TEST(GraphDefPrimitivesTest, SplitOfADimKnownOnlyAtRunTime) {
  Graph g;
  Tensor p;
  std::vector<Tensor> pieces;
  {
    auto scope = g.as_default();
    p = placeholder(DType::kFloat32, {2, -1}, "p");
    pieces = split(p, 3, 1);
  }
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[1].shape(), Shape({2, -1}));
  Session sess(g);
  const Tensor pv = reshape(cast(range<int32_t>(0, 12), DType::kFloat32), {2, 6});
  EXPECT_THAT(values(sess.run(pieces[1], {{p, pv}})), ElementsAre(2.f, 3.f, 8.f, 9.f));
  EXPECT_THAT(error_of([&] { sess.run(pieces[0], {{p, zeros({2, 4})}}); }),
              ::testing::AllOf(::testing::HasSubstr("[split]"), ::testing::HasSubstr("not divisible by 3")));
}

TEST(GraphDefPrimitivesTest, MeanKeepsTensorflowsIntegerAndEmptyRules) {
  EXPECT_THAT(reduce_mean(Tensor({1, 2, 4})).to_vector<int32_t>(), ElementsAre(2));  // 7 / 3 truncates
  EXPECT_THAT(reduce_mean(Tensor({-7, 0})).to_vector<int32_t>(), ElementsAre(-3));
  EXPECT_TRUE(std::isnan(reduce_mean(zeros({0, 3}), {0}).to_vector<float>()[0]));
  try {
    reduce_mean(zeros({0, 3}, DType::kInt32), {0});
    FAIL() << "an integer mean of nothing must throw";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("[reduce_mean] the integer mean of the empty input 'x' [0,3] is undefined"));
  }
  EXPECT_THROW(reduce_mean(Tensor({true, false})), InvalidArgumentError);
}

TEST(GraphDefPrimitivesTest, SoftmaxIsStableAlongAnyAxis) {
  const Tensor logits({{1000.f, 1000.f, 1000.f}, {1.f, 2.f, 3.f}});
  EXPECT_THAT(values(softmax(logits)), ::testing::Pointwise(::testing::FloatNear(1e-6f),
      std::vector<float>{1 / 3.f, 1 / 3.f, 1 / 3.f, 0.09003057f, 0.24472847f, 0.66524096f}));
  expect_close(softmax(logits, 0), transpose(softmax(transpose(logits, {1, 0})), {1, 0}));
  expect_close(exp(log_softmax(logits, 0)), softmax(logits, 0));
  EXPECT_THAT(values(log_softmax(Tensor({0.f, -1000.f}))), ElementsAre(0.f, -1000.f));  // exact where softmax underflows
  EXPECT_THROW(softmax(Tensor(1.f)), InvalidArgumentError);
  EXPECT_THROW(softmax(Tensor({1, 2})), InvalidArgumentError);
}

}  // namespace
}  // namespace tapeflow
