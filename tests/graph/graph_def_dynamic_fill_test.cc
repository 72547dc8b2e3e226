// Note [Fills of run-time shape]: a TensorFlow Fill whose dims are known only at run time (Keras'
// RNN layers: tf.zeros([tf.shape(x)[0], units])) imports as DynamicFill, runs, and is written
// back as TensorFlow's Fill; a Range of run-time bounds (tf.range(tf.shape(x)[1])) as
// DynamicRange, written back as Range; a Tile of run-time multiples as DynamicTile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

// The initial state of a Keras LSTM of 4 units over x [batch, 5, 3], as TensorFlow 2 writes it.
std::string keras_zeros_graph(const std::string& batch = "-1", const std::string& fill_value = "0") {
  const std::string int_const = R"pb(attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 )pb";
  return absl::StrCat(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: )pb", batch, R"pb( } dim { size: 5 } dim { size: 3 } } } } }
    node { name: "lstm/Shape" op: "Shape" input: "x" attr { key: "T" value { type: DT_FLOAT } } attr { key: "out_type" value { type: DT_INT32 } } }
    node { name: "lstm/strided_slice/stack" op: "Const" )pb", int_const, R"pb(tensor_shape { dim { size: 1 } } int_val: 0 } } } }
    node { name: "lstm/strided_slice/stack_1" op: "Const" )pb", int_const, R"pb(tensor_shape { dim { size: 1 } } int_val: 1 } } } }
    node { name: "lstm/strided_slice/stack_2" op: "Const" )pb", int_const, R"pb(tensor_shape { dim { size: 1 } } int_val: 1 } } } }
    node { name: "lstm/strided_slice" op: "StridedSlice" input: "lstm/Shape" input: "lstm/strided_slice/stack"
           input: "lstm/strided_slice/stack_1" input: "lstm/strided_slice/stack_2"
           attr { key: "Index" value { type: DT_INT32 } } attr { key: "T" value { type: DT_INT32 } }
           attr { key: "begin_mask" value { i: 0 } } attr { key: "ellipsis_mask" value { i: 0 } } attr { key: "end_mask" value { i: 0 } }
           attr { key: "new_axis_mask" value { i: 0 } } attr { key: "shrink_axis_mask" value { i: 1 } } }
    node { name: "lstm/zeros/packed/1" op: "Const" )pb", int_const, R"pb(tensor_shape { } int_val: 4 } } } }
    node { name: "lstm/zeros/packed" op: "Pack" input: "lstm/strided_slice" input: "lstm/zeros/packed/1"
           attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } } attr { key: "axis" value { i: 0 } } }
    node { name: "lstm/zeros/Const" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: )pb", fill_value, R"pb( } } } }
    node { name: "lstm/zeros" op: "Fill" input: "lstm/zeros/packed" input: "lstm/zeros/Const"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } }
    versions { producer: 1286 min_consumer: 12 })pb");
}

Tensor batch_of(int64_t n) { return Tensor::from_host(DType::kFloat32, Shape{n, 5, 3}, nullptr); }

Tensor run_zeros(const Graph& g, int64_t batch) {
  Session s(g);
  return s.run(g.get_tensor_by_name("lstm/zeros:0"), {{g.get_tensor_by_name("x:0"), batch_of(batch)}});
}

TEST(GraphDefDynamicFillTest, AFillOfRunTimeDimsImportsRunsAndIsWrittenBackAsFill) {
  const Graph g = graph_from_graph_def(graph_def_from_text(keras_zeros_graph("-1", "2.5")));
  EXPECT_EQ(g.get_operation_by_name("lstm/zeros").type(), "DynamicFill");
  EXPECT_EQ(g.get_tensor_by_name("lstm/zeros:0").shape(), (Shape{-1, -1}));
  for (int64_t batch : {3, 1, 0}) {
    const Tensor z = run_zeros(g, batch);
    EXPECT_EQ(z.dtype(), DType::kFloat32);
    EXPECT_EQ(z.shape(), (Shape{batch, 4}));
    EXPECT_EQ(z.to_vector<float>(), std::vector<float>(static_cast<size_t>(batch * 4), 2.5f));
  }
  // Written as TensorFlow's Fill (dims and value inputs, T and index_type), and read back.
  const GraphDef def = to_graph_def(g);
  const proto::NodeDef* fill = nullptr;
  for (const proto::NodeDef& n : def.node()) if (n.name() == "lstm/zeros") fill = &n;
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(fill->op(), "Fill");
  EXPECT_THAT(std::vector<std::string>(fill->input().begin(), fill->input().end()),
              ::testing::ElementsAre("lstm/zeros/packed", "lstm/zeros/Const"));
  EXPECT_EQ(fill->attr().at("T").type(), proto::DT_FLOAT);
  EXPECT_EQ(fill->attr().at("index_type").type(), proto::DT_INT32);
  const Graph back = graph_from_graph_def(def);
  EXPECT_EQ(run_zeros(back, 2).to_vector<float>(), std::vector<float>(8, 2.5f));
}

TEST(GraphDefDynamicFillTest, DimsKnownWhenImportingStayAFill) {
  const Graph g = graph_from_graph_def(graph_def_from_text(keras_zeros_graph("2")));
  EXPECT_EQ(g.get_operation_by_name("lstm/zeros").type(), "Fill");
  EXPECT_EQ(g.get_tensor_by_name("lstm/zeros:0").shape(), (Shape{2, 4}));
  EXPECT_EQ(run_zeros(g, 2).to_vector<float>(), std::vector<float>(8, 0.f));
}

// dims fed at run time: bad values fail the run with typed errors naming the op; dims of
// unknown length fail the import naming the node, and the target graph is left as it was.
TEST(GraphDefDynamicFillTest, BadDimsAreTypedErrors) {
  const std::string text = R"pb(
    node { name: "dims" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "value" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
    node { name: "f" op: "Fill" input: "dims" input: "value"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "index_type" value { type: DT_INT32 } } })pb";
  const Graph g = graph_from_graph_def(graph_def_from_text(text));
  Session s(g);
  auto run = [&](std::vector<int32_t> dims) {
    return s.run(g.get_tensor_by_name("f:0"), {{g.get_tensor_by_name("dims:0"), Tensor(dims, Shape{2})}});
  };
  EXPECT_EQ(run({2, 3}).to_vector<float>(), std::vector<float>(6, 1.f));
  EXPECT_THAT(error_of([&] { run({2, -3}); }), HasSubstr("dims must be non-negative, got -3 at 1"));
  EXPECT_THAT(error_of<Error>([&] { run({1 << 30, 1 << 30}); }), HasSubstr("bytes"));  // over the size limit
  Graph target;
  {
    auto scope = target.as_default();
    placeholder(DType::kFloat32, {}, "already_here");
  }
  const std::string unknown_length = absl::StrReplaceAll(text, {{"shape { dim { size: 2 } }", "shape { dim { size: -1 } }"}});
  EXPECT_THAT(error_of([&] { import_graph_def(target, graph_def_from_text(unknown_length)); }),
              HasSubstr("node 'f' (DynamicFill)"));
  EXPECT_EQ(target.num_nodes(), 1);
}

// Position ids over a sequence of run-time length, as a Transformer's embedding writes them:
// Range(0, Shape(x)[1], 1); and a float Range whose limit is fed.
std::string range_graph(const std::string& x_dims = "dim { size: -1 } dim { size: -1 }") {
  const std::string int_const = R"pb(attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 )pb";
  return absl::StrCat(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { )pb",
                      x_dims, R"pb( } } } }
    node { name: "Shape" op: "Shape" input: "x" attr { key: "T" value { type: DT_FLOAT } } attr { key: "out_type" value { type: DT_INT32 } } }
    node { name: "ss/stack" op: "Const" )pb", int_const, R"pb(tensor_shape { dim { size: 1 } } int_val: 1 } } } }
    node { name: "ss/stack_1" op: "Const" )pb", int_const, R"pb(tensor_shape { dim { size: 1 } } int_val: 2 } } } }
    node { name: "ss/stack_2" op: "Const" )pb", int_const, R"pb(tensor_shape { dim { size: 1 } } int_val: 1 } } } }
    node { name: "seq_len" op: "StridedSlice" input: "Shape" input: "ss/stack" input: "ss/stack_1" input: "ss/stack_2"
           attr { key: "Index" value { type: DT_INT32 } } attr { key: "T" value { type: DT_INT32 } }
           attr { key: "begin_mask" value { i: 0 } } attr { key: "ellipsis_mask" value { i: 0 } } attr { key: "end_mask" value { i: 0 } }
           attr { key: "new_axis_mask" value { i: 0 } } attr { key: "shrink_axis_mask" value { i: 1 } } }
    node { name: "start" op: "Const" )pb", int_const, R"pb(tensor_shape { } int_val: 0 } } } }
    node { name: "delta" op: "Const" )pb", int_const, R"pb(tensor_shape { } int_val: 1 } } } }
    node { name: "positions" op: "Range" input: "start" input: "seq_len" input: "delta" attr { key: "Tidx" value { type: DT_INT32 } } }
    node { name: "limit" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
    node { name: "fstep" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
    node { name: "fstart" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
    node { name: "steps" op: "Range" input: "fstart" input: "limit" input: "fstep" attr { key: "Tidx" value { type: DT_FLOAT } } })pb");
}

TEST(GraphDefDynamicFillTest, ARangeOfRunTimeBoundsImportsRunsAndIsWrittenBackAsRange) {
  const Graph g = graph_from_graph_def(graph_def_from_text(range_graph()));
  EXPECT_EQ(g.get_operation_by_name("positions").type(), "DynamicRange");
  EXPECT_EQ(g.get_tensor_by_name("positions:0").shape(), (Shape{-1}));
  Session s(g);
  auto positions = [&](const Graph& graph, int64_t len) {
    Session run(graph);
    return run.run(graph.get_tensor_by_name("positions:0"),
                   {{graph.get_tensor_by_name("x:0"), Tensor::from_host(DType::kFloat32, Shape{2, len}, nullptr)}});
  };
  EXPECT_EQ(positions(g, 5).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(positions(g, 0).shape(), (Shape{0}));
  auto steps = [&](float limit, float step) {
    return s.run(g.get_tensor_by_name("steps:0"), {{g.get_tensor_by_name("limit:0"), Tensor(limit)},
                                                   {g.get_tensor_by_name("fstep:0"), Tensor(step)}});
  };
  EXPECT_EQ(steps(2.f, 0.25f).to_vector<float>(), (std::vector<float>{1.f, 1.25f, 1.5f, 1.75f}));
  EXPECT_EQ(steps(-1.f, -1.f).to_vector<float>(), (std::vector<float>{1.f, 0.f}));
  EXPECT_THAT(error_of([&] { steps(2.f, 0.f); }), HasSubstr("delta must not be 0"));
  EXPECT_THAT(error_of([&] { steps(-2.f, 1.f); }), HasSubstr("must not exceed limit"));
  EXPECT_THAT(error_of<Error>([&] { steps(1e30f, 1e-30f); }), HasSubstr("too many elements"));
  // Written as TensorFlow's Range (start, limit, delta inputs, Tidx) and read back.
  const GraphDef def = to_graph_def(g);
  for (const proto::NodeDef& n : def.node())
    if (n.name() == "positions") {
      EXPECT_EQ(n.op(), "Range");
      EXPECT_EQ(n.input_size(), 3);
      EXPECT_EQ(n.attr().at("Tidx").type(), proto::DT_INT32);
    }
  EXPECT_EQ(positions(graph_from_graph_def(def), 3).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2}));
  // Bounds known when importing: a Range, with its static length.
  const std::string fixed = absl::StrReplaceAll(range_graph("dim { size: 2 } dim { size: 6 }"),
                                                {{"input: \"fstart\" input: \"limit\"", "input: \"fstart\" input: \"fstart\""}});
  const Graph h = graph_from_graph_def(graph_def_from_text(fixed));
  EXPECT_EQ(h.get_operation_by_name("positions").type(), "Range");
  EXPECT_EQ(h.get_tensor_by_name("positions:0").shape(), (Shape{6}));
}

// Tile(a [1, 2], Pack(Shape(x)[0], 1)): a row repeated once per example of a run-time batch; and
// Tile(a, fed multiples) for the errors.
TEST(GraphDefDynamicFillTest, ATileOfRunTimeMultiplesImportsRunsAndIsWrittenBackAsTile) {
  const std::string text = absl::StrCat(keras_zeros_graph(), R"pb(
    node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 2 } } float_val: 1 float_val: 2 } } } }
    node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
    node { name: "reps" op: "Pack" input: "lstm/strided_slice" input: "one"
           attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } } attr { key: "axis" value { i: 0 } } }
    node { name: "rows" op: "Tile" input: "a" input: "reps" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tmultiples" value { type: DT_INT32 } } }
    node { name: "m" op: "Placeholder" attr { key: "dtype" value { type: DT_INT64 } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "fed" op: "Tile" input: "a" input: "m" attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tmultiples" value { type: DT_INT64 } } })pb");
  const Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_operation_by_name("rows").type(), "DynamicTile");
  EXPECT_EQ(g.get_tensor_by_name("rows:0").shape(), (Shape{-1, -1}));
  Session s(g);
  const Tensor rows = s.run(g.get_tensor_by_name("rows:0"), {{g.get_tensor_by_name("x:0"), batch_of(3)}});
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2}));
  auto fed = [&](std::vector<int64_t> m) {
    return s.run(g.get_tensor_by_name("fed:0"), {{g.get_tensor_by_name("m:0"), Tensor(m, Shape{2})}});
  };
  EXPECT_EQ(fed({2, 2}).to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(fed({0, 3}).shape(), (Shape{0, 6}));
  EXPECT_THAT(error_of([&] { fed({1, -1}); }), HasSubstr("multiples[1] = -1 is negative"));
  EXPECT_THAT(error_of([&] { fed({int64_t{1} << 62, 4}); }), HasSubstr("too large"));
  EXPECT_THAT(error_of<Error>([&] { fed({int64_t{1} << 40, 1}); }), HasSubstr("bytes"));  // over the size limit
  // Written as TensorFlow's Tile and read back.
  const GraphDef def = to_graph_def(g);
  for (const proto::NodeDef& n : def.node()) {
    if (n.name() == "rows") { EXPECT_EQ(n.op(), "Tile"); }
  }
  const Graph back = graph_from_graph_def(def);
  Session again(back);
  EXPECT_EQ(again.run(back.get_tensor_by_name("rows:0"), {{back.get_tensor_by_name("x:0"), batch_of(2)}}).to_vector<float>(),
            (std::vector<float>{1, 2, 1, 2}));
  // Multiples of another length than x's rank: refused at import, naming the node.
  const std::string wrong = absl::StrReplaceAll(text, {{"shape { dim { size: 2 } } } } }\n    node { name: \"fed\"",
                                                        "shape { dim { size: 3 } } } } }\n    node { name: \"fed\""}});
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(wrong)); }),
              HasSubstr("node 'fed' (DynamicTile): [tile] multiples must be a vector of one entry per dim of x (2)"));
}

}  // namespace
}  // namespace tapeflow
