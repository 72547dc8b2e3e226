// The TensorFlow op variants a GraphDef meets: ops whose TensorFlow form depends on the inputs
// (BatchMatMulV2, SelectV2), aliases TensorFlow graphs use (PlaceholderWithDefault, Snapshot,
// RandomStandardNormal, ...), int64 index dtypes, attrs later TensorFlow versions added and
// defaults a TensorFlow 2 GraphDef leaves out. Written the way TensorFlow prints them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

const char* const kPlaceholderX = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } })pb";

// TensorFlow's MatMul takes matrices only: a product of batches is written as BatchMatMulV2
// (transposes as adj_x / adj_y), and BatchMatMul, V2 and V3 read back as tapeflow's MatMul.
TEST(GraphDefVariantsTest, BatchedProductsTravelAsBatchMatMulV2) {
  const Tensor a = reshape(cast(range<int32_t>(0, 24), DType::kFloat32), {2, 3, 4}) * 0.25f;
  const Tensor b = reshape(cast(range<int32_t>(0, 8), DType::kFloat32), {2, 4}) - 3.f;
  Graph g;
  {
    auto scope = g.as_default();
    const Tensor x = placeholder(DType::kFloat32, {2, 3, 4}, "x");
    const Tensor w = placeholder(DType::kFloat32, {2, 4}, "w");
    matmul(x, w, false, true);  // [2, 3, 4] x [4, 2]^T, batch broadcast
    matmul(w, w, true, false);  // [4, 2] x [2, 4]
  }
  const GraphDef def = to_graph_def(g);
  ASSERT_EQ(def.node_size(), 4);
  const proto::NodeDef* batched = &def.node(2);
  const proto::NodeDef* plain = &def.node(3);
  ASSERT_NE(batched, nullptr);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(batched->op(), "BatchMatMulV2");
  EXPECT_TRUE(batched->attr().at("adj_y").b());
  EXPECT_FALSE(batched->attr().at("adj_x").b());
  EXPECT_FALSE(batched->attr().contains("transpose_b"));
  EXPECT_EQ(plain->op(), "MatMul");
  EXPECT_TRUE(plain->attr().at("transpose_a").b());
  Graph back = graph_from_graph_def(graph_def_from_text(graph_def_to_text(def)));
  EXPECT_EQ(back.get_operation_by_name(batched->name()).type(), "MatMul");
  Session sess(back);
  const std::vector<Tensor> got = sess.run({back.get_tensor_by_name(batched->name() + ":0"),
                                            back.get_tensor_by_name(plain->name() + ":0")},
                                           {{back.get_tensor_by_name("x:0"), a}, {back.get_tensor_by_name("w:0"), b}});
  EXPECT_EQ(values(got[0]), values(matmul(a, b, false, true)));
  EXPECT_EQ(values(got[1]), values(matmul(b, b, true, false)));

  // As TensorFlow 1.x (BatchMatMul), 2.x (BatchMatMulV2) and 2.5+ (BatchMatMulV3) print them.
  const std::string head = R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } dim { size: 4 } } } } }
      node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } dim { size: 4 } } } } })pb";
  const Tensor y = a * -0.5f + 1.f;
  for (const std::string op : {"BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}) {
    const std::string types = op == "BatchMatMulV3"
        ? R"pb(attr { key: "Ta" value { type: DT_FLOAT } } attr { key: "Tb" value { type: DT_FLOAT } }
               attr { key: "Tout" value { type: DT_FLOAT } })pb"
        : R"pb(attr { key: "T" value { type: DT_FLOAT } })pb";
    Graph h = graph_from_graph_def(graph_def_from_text(head + R"pb( node { name: "p" op: ")pb" + op +
                                                       R"pb(" input: "x" input: "y" attr { key: "adj_x" value { b: true } } )pb" +
                                                       types + "}"));
    const Tensor p = Session(h).run(h.get_tensor_by_name("p:0"), {{h.get_tensor_by_name("x:0"), a}, {h.get_tensor_by_name("y:0"), y}});
    EXPECT_EQ(p.shape(), Shape({2, 4, 4})) << op;
    EXPECT_EQ(values(p), values(matmul(a, y, true, false))) << op;
  }
  Graph h;
  auto v3 = [&](const std::string& inputs_type, const std::string& out_type) {
    import_graph_def(h, graph_def_from_text(head + absl::StrCat(
        R"pb(node { name: "p" op: "BatchMatMulV3" input: "x" input: "y" attr { key: "Ta" value { type: )pb", inputs_type,
        R"pb( } } attr { key: "Tb" value { type: )pb", inputs_type, R"pb( } } attr { key: "Tout" value { type: )pb",
        out_type, " } } }")));
  };
  // V3 multiplying into another dtype is not MatMul's: an error naming both attrs.
  EXPECT_THAT(error_of<UnimplementedError>([&] { v3("DT_FLOAT", "DT_DOUBLE"); }),
              ::testing::HasSubstr("node 'p' (BatchMatMulV3): attr 'Ta' (DT_FLOAT) differs from 'Tout' (DT_DOUBLE)"));
  // ... and a Ta that is not input 0's dtype is refused.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { v3("DT_DOUBLE", "DT_DOUBLE"); }),
              ::testing::HasSubstr("attr 'Ta' says DT_DOUBLE but input 0 is float32"));
  EXPECT_EQ(h.num_nodes(), 0);
}

// tapeflow's where(c, x, y) broadcasts as TensorFlow's SelectV2: it is written as Select only
// where the three shapes are known and equal. SelectV2 reads back as it; TensorFlow 1's Select
// with a vector condition over a matrix (row picking) is refused, not read as a broadcast.
TEST(GraphDefVariantsTest, BroadcastSelectsTravelAsSelectV2) {
  Graph g;
  {
    auto scope = g.as_default();
    const Tensor c = placeholder(DType::kBool, {3}, "c");
    const Tensor x = placeholder(DType::kFloat32, {2, 3}, "x");
    where(c, x, x * 2.f);           // broadcast condition
    where(greater(x, 0.f), x, -x);  // one shape
  }
  const GraphDef def = to_graph_def(g);
  std::vector<std::string> selects;
  for (const proto::NodeDef& n : def.node())
    if (n.op().starts_with("Select")) selects.push_back(n.op());
  EXPECT_THAT(selects, ElementsAre("SelectV2", "Select"));
  Graph back = graph_from_graph_def(graph_def_from_text(graph_def_to_text(def)));
  std::string broadcast_name;
  for (const proto::NodeDef& n : def.node())
    if (n.op() == "SelectV2") broadcast_name = n.name();
  EXPECT_EQ(back.get_operation_by_name(broadcast_name).type(), "Select");
  const Tensor got = Session(back).run(back.get_tensor_by_name(broadcast_name + ":0"),
                                       {{back.get_tensor_by_name("c:0"), Tensor({true, false, true})},
                                        {back.get_tensor_by_name("x:0"), Tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})}});
  EXPECT_EQ(values(got), (std::vector<float>{1.f, 4.f, 3.f, 4.f, 10.f, 6.f}));

  const std::string rows = R"pb(
      node { name: "c" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } }
             attr { key: "shape" value { shape { dim { size: 2 } } } } }
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } dim { size: 2 } } } } }
      node { name: "s" op: "Select" input: "c" input: "x" input: "x" attr { key: "T" value { type: DT_FLOAT } } })pb";
  Graph h;
  EXPECT_THAT(error_of<UnimplementedError>([&] { import_graph_def(h, graph_def_from_text(rows)); }),
              ::testing::HasSubstr("node 's' (Select): a vector condition [2] picks rows of x [2,2] in TensorFlow 1's Select"));
  EXPECT_EQ(h.num_nodes(), 0);
}

// Index dtypes (Tidx, Tshape, Tperm, Tpaddings, ...) are int32 or int64 in TensorFlow: numpy
// arrays as shapes or axes make int64 Consts. Both are read; tapeflow writes int32.
TEST(GraphDefVariantsTest, Int64IndexConstantsAreRead) {
  const GraphDef def = graph_def_from_text(std::string(kPlaceholderX) + R"pb(
      node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
             attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 1 } } int64_val: -1 } } } }
      node { name: "flat" op: "Reshape" input: "x" input: "shape"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT64 } } }
      node { name: "axes" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
             attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 1 } } int64_val: 1 } } } }
      node { name: "sum" op: "Sum" input: "x" input: "axes"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT64 } }
             attr { key: "keep_dims" value { b: false } } })pb");
  Graph g = graph_from_graph_def(def);
  Session sess(g);
  const Tensor x({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  const std::vector<Tensor> got = sess.run({g.get_tensor_by_name("flat:0"), g.get_tensor_by_name("sum:0")},
                                           {{g.get_tensor_by_name("x:0"), x}});
  EXPECT_EQ(got[0].shape(), Shape({6}));
  EXPECT_EQ(values(got[1]), (std::vector<float>{6.f, 15.f}));
  // Written back, the index dtypes are int32 (every TensorFlow version reads that).
  const GraphDef again = to_graph_def(g);
  for (const proto::NodeDef& n : again.node())
    if (n.op() == "Reshape") {
      EXPECT_EQ(n.attr().at("Tshape").type(), proto::DT_INT32);
    }
  // An index dtype TensorFlow does not allow is still refused.
  GraphDef wrong = def;
  (*wrong.mutable_node(2)->mutable_attr())["Tshape"].set_type(proto::DT_FLOAT);
  Graph h;
  EXPECT_THAT(error_of<UnimplementedError>([&] { import_graph_def(h, wrong); }), HasSubstr("attr 'Tshape'"));
}

// exponential_avg_factor came with TensorFlow 2.2; 1.15 refuses a FusedBatchNormV3 that has it.
// It is written only when it is not 1. Range's Tidx, which TensorFlow 2 leaves out when it is
// the default int32, is read as int32.
TEST(GraphDefVariantsTest, AttrsOfLaterVersionsAreWrittenOnlyWhenNeeded) {
  Graph g;
  {
    auto scope = g.as_default();
    const Tensor x = placeholder(DType::kFloat32, {1, 2, 2, 3}, "x");
    const Tensor c = constant(Tensor({1.f, 2.f, 3.f}));
    fused_batch_norm(x, c, c, c, c, 0.001, 1.0, "NHWC", /*is_training=*/false);
  }
  const GraphDef written = to_graph_def(g);
  for (const proto::NodeDef& n : written.node())
    if (n.op() == "FusedBatchNormV3") {
      EXPECT_FALSE(n.attr().contains("exponential_avg_factor")) << n.ShortDebugString();
      EXPECT_TRUE(n.attr().contains("epsilon"));
    }
  Graph training;  // another factor is written (TensorFlow 2.2 and later read it)
  {
    auto scope = training.as_default();
    const Tensor x = placeholder(DType::kFloat32, {1, 2, 2, 3}, "x");
    const Tensor c = constant(Tensor({1.f, 2.f, 3.f}));
    fused_batch_norm(x, c, c, c, c, 0.001, 0.5, "NHWC", /*is_training=*/true);
  }
  const GraphDef trained = to_graph_def(training);
  int factors = 0;
  for (const proto::NodeDef& n : trained.node())
    if (n.op() == "FusedBatchNormV3") {
      EXPECT_FLOAT_EQ(n.attr().at("exponential_avg_factor").f(), 0.5f);
      ++factors;
    }
  EXPECT_EQ(factors, 1);
  Graph r = graph_from_graph_def(graph_def_from_text(R"pb(
      node { name: "start" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 2 } } } }
      node { name: "limit" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 5 } } } }
      node { name: "delta" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
      node { name: "range" op: "Range" input: "start" input: "limit" input: "delta" })pb"));
  const Tensor range = Session(r).run(r.get_tensor_by_name("range:0"));
  EXPECT_EQ(range.dtype(), DType::kInt32);
  EXPECT_EQ(range.to_vector<int32_t>(), (std::vector<int32_t>{2, 3, 4}));
}

// TensorFlow op types that are a tapeflow op under another name.
TEST(GraphDefVariantsTest, AliasesReadAsTheirTapeflowOps) {
  const GraphDef def = graph_def_from_text(std::string(kPlaceholderX) + R"pb(
      node { name: "default" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 3 } }
                                                  float_val: 1 float_val: 2 float_val: 4 } } } }
      node { name: "p" op: "PlaceholderWithDefault" input: "default" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
      node { name: "snap" op: "Snapshot" input: "p" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "inv" op: "Inv" input: "snap" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "bias" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 10 } } } }
      node { name: "biased" op: "BiasAddV1" input: "inv" input: "bias" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "frozen" op: "PreventGradient" input: "biased" attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "message" value { s: "no gradient here" } } }
      node { name: "dims" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 2 int_val: 3 } } } }
      node { name: "noise" op: "RandomStandardNormal" input: "dims" attr { key: "T" value { type: DT_INT32 } }
             attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "seed" value { i: 1 } } attr { key: "seed2" value { i: 2 } } }
      node { name: "uniform" op: "RandomUniform" input: "dims" attr { key: "T" value { type: DT_INT32 } }
             attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "seed" value { i: 3 } } attr { key: "seed2" value { i: 4 } } })pb");
  Graph g = graph_from_graph_def(def);
  EXPECT_EQ(g.get_operation_by_name("p").type(), "Identity");
  EXPECT_EQ(g.get_tensor_by_name("p:0").shape(), Shape({-1, 3}));  // its shape attr, not its default's
  EXPECT_EQ(g.get_operation_by_name("frozen").type(), "StopGradient");
  EXPECT_EQ(g.get_operation_by_name("noise").type(), "RandomNormal");
  Session sess(g);
  // Not fed, a PlaceholderWithDefault gives its default; fed, any tensor of its shape.
  EXPECT_EQ(values(sess.run(g.get_tensor_by_name("frozen:0"))), (std::vector<float>{11.f, 10.5f, 10.25f}));
  const Tensor fed = sess.run(g.get_tensor_by_name("frozen:0"), {{g.get_tensor_by_name("p:0"), Tensor({{2.f, 2.f, 2.f}, {4.f, 4.f, 4.f}})}});
  EXPECT_EQ(values(fed), (std::vector<float>{10.5f, 10.5f, 10.5f, 10.25f, 10.25f, 10.25f}));
  const std::vector<Tensor> draws = sess.run({g.get_tensor_by_name("noise:0"), g.get_tensor_by_name("uniform:0")});
  EXPECT_EQ(draws[0].shape(), Shape({2, 3}));
  for (float u : values(draws[1])) {  // TensorFlow's RandomUniform has no range attrs: [0, 1)
    EXPECT_GE(u, 0.f);
    EXPECT_LT(u, 1.f);
  }
  // RandomNormal is written as TensorFlow's RandomStandardNormal, without mean and stddev when
  // they are TensorFlow's 0 and 1.
  const GraphDef again = to_graph_def(g);
  for (const proto::NodeDef& n : again.node())
    if (n.name() == "noise") {
      EXPECT_EQ(n.op(), "RandomStandardNormal");
      EXPECT_FALSE(n.attr().contains("mean"));
      EXPECT_FALSE(n.attr().contains("stddev"));
    }
  // Written back, it is a PlaceholderWithDefault again, with the shape it was read with.
  const GraphDef rewritten = to_graph_def(g);
  for (const proto::NodeDef& n : rewritten.node())
    if (n.name() == "p") {
      EXPECT_EQ(n.op(), "PlaceholderWithDefault");
      EXPECT_EQ(n.attr().at("shape").shape().dim(0).size(), -1);
    }
  EXPECT_EQ(graph_from_graph_def(rewritten).get_tensor_by_name("p:0").shape(), Shape({-1, 3}));
  // A shape attr more specific than its default (a fed [2] over a default of unknown size) gives
  // the dims both agree on: unknown here.
  Graph n = graph_from_graph_def(graph_def_from_text(R"pb(
      node { name: "d" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } } } } }
      node { name: "p" op: "PlaceholderWithDefault" input: "d" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } } } } }
      node { name: "r" op: "Relu" input: "p" attr { key: "T" value { type: DT_FLOAT } } })pb"));
  EXPECT_EQ(n.get_tensor_by_name("p:0").shape(), Shape({-1}));
  EXPECT_EQ(Session(n).run(n.get_tensor_by_name("r:0"), {{n.get_tensor_by_name("d:0"), Tensor({-1.f, 2.f, -3.f, 4.f})}})
                .to_vector<float>(),
            (std::vector<float>{0.f, 2.f, 0.f, 4.f}));
  // A shape attr that cannot hold the default is refused.
  GraphDef narrow = def;
  narrow.mutable_node(2)->mutable_attr()->at("shape").mutable_shape()->mutable_dim(1)->set_size(4);
  Graph h;
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import_graph_def(h, narrow); }),
              HasSubstr("node 'p' (PlaceholderWithDefault): attr 'shape' [?,4] does not hold its default's shape [1,3]"));
}

// An entropy and a KL term as TensorFlow writes them (tf.math.xlogy / xdivy: 0 where x is 0), a
// weight-decay L2Loss, and the old Mod (C's remainder) read as TruncateMod.
TEST(GraphDefVariantsTest, XlogyXdivyL2LossAndModReadAsTensorFlowWritesThem) {
  const GraphDef def = graph_def_from_text(R"pb(
      node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 4 } } } } }
      node { name: "q" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 4 } } } } }
      node { name: "plogp" op: "Xlogy" input: "p" input: "p" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "ratio" op: "Xdivy" input: "p" input: "q" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "three" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: -0.3 } } } }
      node { name: "rem" op: "Mod" input: "q" input: "three" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "decay" op: "L2Loss" input: "q" attr { key: "T" value { type: DT_FLOAT } } })pb");
  Graph g = graph_from_graph_def(def);
  EXPECT_EQ(g.get_operation_by_name("rem").type(), "TruncateMod");
  Session sess(g);
  const Tensor p({0.f, 0.25f, 0.25f, 0.5f}), q({0.f, 0.5f, 0.25f, -1.f});
  const std::vector<Tensor> got = sess.run({g.get_tensor_by_name("plogp:0"), g.get_tensor_by_name("ratio:0"),
                                            g.get_tensor_by_name("rem:0"), g.get_tensor_by_name("decay:0")},
                                           {{g.get_tensor_by_name("p:0"), p}, {g.get_tensor_by_name("q:0"), q}});
  EXPECT_EQ(values(got[0]), values(xlogy(p, p)));
  EXPECT_EQ(values(got[0])[0], 0.f);  // 0 * log(0)
  EXPECT_EQ(values(got[1]), (std::vector<float>{0.f, 0.5f, 1.f, -0.5f}));
  EXPECT_EQ(values(got[2]), values(truncate_mod(q, -0.3f)));
  EXPECT_LT(values(got[2])[3], 0.f);  // the dividend's sign: -1 mod -0.3 = -0.1
  EXPECT_EQ(got[3].shape(), Shape{});
  EXPECT_EQ(got[3].item<float>(), (0.25f + 0.0625f + 1.f) / 2);
  const GraphDef written = to_graph_def(g);  // (a ranged for over a temporary's node() would dangle)
  int seen = 0;
  for (const proto::NodeDef& n : written.node()) {
    if (n.name() == "plogp" || n.name() == "ratio" || n.name() == "decay") {
      ++seen;
      EXPECT_EQ(n.attr().at("T").type(), proto::DT_FLOAT) << n.name();
    }
  }
  EXPECT_EQ(seen, 3);
}

// Pieces of TensorFlow training graphs: Transpose's gradient reads its permutation through
// InvertPermutation of the forward Const (folded into the attr at import, and runnable on its
// own), and tf.debugging.check_numerics guards a loss: the run that meets a NaN fails naming
// the node and the message.
TEST(GraphDefVariantsTest, InvertPermutationFoldsAndCheckNumericsGuardsARun) {
  const GraphDef def = graph_def_from_text(R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } dim { size: 4 } } } } }
      node { name: "perm" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 3 } } int_val: 1 int_val: 2 int_val: 0 } } } }
      node { name: "grad/InvertPermutation" op: "InvertPermutation" input: "perm" attr { key: "T" value { type: DT_INT32 } } }
      node { name: "grad/transpose" op: "Transpose" input: "x" input: "grad/InvertPermutation"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tperm" value { type: DT_INT32 } } }
      node { name: "loss" op: "Log" input: "grad/transpose" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "loss/CheckNumerics" op: "CheckNumerics" input: "loss" attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "message" value { s: "loss went bad" } } })pb");
  Graph g = graph_from_graph_def(def);
  EXPECT_EQ(g.get_tensor_by_name("grad/transpose:0").shape(), Shape({4, 2, 3}));
  EXPECT_EQ(g.get_operation_by_name("grad/transpose").attrs().get<std::vector<int64_t>>("perm"),
            (std::vector<int64_t>{2, 0, 1}));
  Session sess(g);
  EXPECT_EQ(sess.run(g.get_tensor_by_name("grad/InvertPermutation:0")).to_vector<int32_t>(),
            (std::vector<int32_t>{2, 0, 1}));
  const Tensor x = reshape(range<float>(1, 25), {2, 3, 4});
  const Tensor checked = g.get_tensor_by_name("loss/CheckNumerics:0");
  expect_close(sess.run(checked, {{g.get_tensor_by_name("x:0"), x}}), log(transpose(x, {2, 0, 1})), 1e-6);
  const std::string message = error_of([&] { sess.run(checked, {{g.get_tensor_by_name("x:0"), x - 1.f}}); });
  EXPECT_THAT(message, HasSubstr("loss went bad : Tensor has -Inf at element [0,0,0] of a [4,2,3] float32 tensor"));
  EXPECT_THAT(message, HasSubstr("node 'loss/CheckNumerics' (CheckNumerics)"));
  const GraphDef written = to_graph_def(g);
  int seen = 0;
  for (const proto::NodeDef& n : written.node()) {
    if (n.name() == "loss/CheckNumerics") {
      ++seen;
      EXPECT_EQ(n.op(), "CheckNumerics");
      EXPECT_EQ(n.attr().at("message").s(), "loss went bad");
    }
  }
  EXPECT_EQ(seen, 1);
}

// concat of one value is its identity, as in TensorFlow's Python: TensorFlow's ConcatV2 takes
// two values or more.
TEST(GraphDefVariantsTest, ConcatOfOneValueIsItsIdentity) {
  Graph g;
  {
    auto scope = g.as_default();
    concat({placeholder(DType::kFloat32, {2, 3}, "x")}, 1);
  }
  const GraphDef def = to_graph_def(g);
  ASSERT_EQ(def.node_size(), 2);
  EXPECT_EQ(def.node(1).op(), "Identity");
  const Tensor x({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  EXPECT_EQ(values(concat({x}, -1)), values(x));
  EXPECT_THAT(error_of([&] { concat({x}, 2); }), HasSubstr("[concat]"));
}

// Size and Rank as TensorFlow writes them: a run-time value, and a constant input where the
// shape is known (a flattening Reshape to [Size(x)]), which the import folds.
TEST(GraphDefVariantsTest, SizeAndRankRunAndFoldIntoConstantInputs) {
  const std::string text = absl::StrCat(kPlaceholderX, R"pb(
    node { name: "n" op: "Size" input: "x" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "out_type" value { type: DT_INT32 } } }
    node { name: "r" op: "Rank" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "dims" op: "ExpandDims" input: "n" input: "zero"
           attr { key: "T" value { type: DT_INT32 } } attr { key: "Tdim" value { type: DT_INT32 } } }
    node { name: "flat" op: "Reshape" input: "x" input: "dims"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } })pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_tensor_by_name("flat:0").shape(), (Shape{6}));
  Session sess(g);
  const Tensor x({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  const std::vector<Tensor> out =
      sess.run({g.get_tensor_by_name("n:0"), g.get_tensor_by_name("r:0"), g.get_tensor_by_name("flat:0")},
               {{g.get_tensor_by_name("x:0"), x}});
  EXPECT_EQ(out[0].to_vector<int32_t>(), std::vector<int32_t>{6});
  EXPECT_EQ(out[1].to_vector<int32_t>(), std::vector<int32_t>{2});
  EXPECT_EQ(values(out[2]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Written back under TensorFlow's types and attrs.
  const std::string again = graph_def_to_text(to_graph_def(g));
  EXPECT_THAT(again, HasSubstr("op: \"Size\""));
  EXPECT_THAT(again, HasSubstr("op: \"Rank\""));
  // Of a placeholder whose dims are unknown, Size is no constant: refused as a shape, by name.
  std::string unknown = text;
  unknown.replace(unknown.find("dim { size: 2 }"), 15, "dim { size: -1 }");
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(unknown)); }),
              HasSubstr("node 'flat' (Reshape): the input that carries 'shape' must be a Const node, or a value "
                        "tapeflow can compute while importing"));
}

// A sub-pixel upsampling (ESPCN) as TensorFlow writes it: DepthToSpace, and its inverse.
TEST(GraphDefVariantsTest, DepthToSpaceAndBackAsTensorFlowWritesThem) {
  const std::string text = R"pb(
    node { name: "img" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } dim { size: 3 } dim { size: 8 } } } } }
    node { name: "up" op: "DepthToSpace" input: "img" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "block_size" value { i: 2 } } attr { key: "data_format" value { s: "NHWC" } } }
    node { name: "down" op: "SpaceToDepth" input: "up" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "block_size" value { i: 2 } } attr { key: "data_format" value { s: "NHWC" } } })pb";
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_tensor_by_name("up:0").shape(), (Shape{-1, 4, 6, 2}));
  Session sess(g);
  const Tensor x = random_uniform(Shape{1, 2, 3, 8}, -1, 1, DType::kFloat32, 7);
  const std::vector<Tensor> out =
      sess.run({g.get_tensor_by_name("up:0"), g.get_tensor_by_name("down:0")}, {{g.get_tensor_by_name("img:0"), x}});
  EXPECT_EQ(values(out[0]), values(depth_to_space(x, 2)));
  EXPECT_EQ(values(out[1]), values(x));
  EXPECT_THAT(graph_def_to_text(to_graph_def(g)), HasSubstr("key: \"block_size\"\n    value {\n      i: 2\n"));
}

// tf.linalg.band_part as TensorFlow writes it: int64 bounds (Tindex's default) as Consts.
TEST(GraphDefVariantsTest, MatrixBandPartReadsItsBoundsFromInt64Constants) {
  const std::string text = absl::StrCat(kPlaceholderX, R"pb(
    node { name: "lower" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: -1 } } } }
    node { name: "upper" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 0 } } } }
    node { name: "band" op: "MatrixBandPart" input: "x" input: "lower" input: "upper"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tindex" value { type: DT_INT64 } } })pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_operation_by_name("band").attrs().get<int64_t>("num_lower"), -1);
  Session sess(g);
  const Tensor x({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  EXPECT_EQ(values(sess.run(g.get_tensor_by_name("band:0"), {{g.get_tensor_by_name("x:0"), x}})),
            (std::vector<float>{1, 0, 0, 4, 5, 0}));
  int written = 0;
  const GraphDef again = to_graph_def(g);
  for (const auto& n : again.node()) {
    if (n.op() != "MatrixBandPart") continue;
    ++written;
    EXPECT_EQ(n.input_size(), 3);  // the bounds are constant inputs again
  }
  EXPECT_EQ(written, 1);
}

// TensorFlow's Print lists the dtypes of its data inputs (after the first) as U, which it
// requires even when there are none.
TEST(GraphDefVariantsTest, PrintListsItsDataDtypes) {
  Graph g;
  {
    auto scope = g.as_default();
    const Tensor x = placeholder(DType::kFloat32, {2}, "x");
    print(x, {x, cast(x, DType::kInt32)}, "x: ");
    print(x, {}, "alone");
  }
  const GraphDef def = to_graph_def(g);
  std::vector<int> u_sizes;
  for (const proto::NodeDef& n : def.node())
    if (n.op() == "Print") {
      u_sizes.push_back(n.attr().at("U").list().type_size());
      if (n.input_size() == 3) {
        EXPECT_EQ(n.attr().at("U").list().type(1), proto::DT_INT32);
      }
    }
  EXPECT_THAT(u_sizes, ElementsAre(2, 0));
  Graph back = graph_from_graph_def(def);
  EXPECT_EQ(back.num_nodes(), g.num_nodes());
  GraphDef wrong = def;
  for (proto::NodeDef& n : *wrong.mutable_node())
    if (n.op() == "Print" && n.input_size() == 3) n.mutable_attr()->at("U").mutable_list()->set_type(1, proto::DT_FLOAT);
  Graph h;
  EXPECT_THAT(error_of([&] { import_graph_def(h, wrong); }),
              HasSubstr("attr 'U' lists [float32, float32] but the inputs are [float32, int32]"));
}

// Note [Squeeze of unknown dims]: squeeze without axes on a traced or imported [?, 1, 1, 3]
// drops the two dims known to be 1 and keeps the batch dim, also when the batch is 1 at run
// time; eagerly, every dim of size 1 goes, as in TensorFlow.
TEST(GraphDefVariantsTest, SqueezeOfUnknownDimsKeepsItsStaticRank) {
  const Tensor one_image = ones({1, 1, 1, 3});
  EXPECT_EQ(squeeze(one_image).shape(), Shape({3}));
  Graph traced;
  Tensor x, y;
  {
    auto scope = traced.as_default();
    x = placeholder(DType::kFloat32, {-1, 1, 1, 3}, "x");
    y = squeeze(x);
  }
  EXPECT_EQ(y.shape(), Shape({-1, 3}));
  EXPECT_EQ(Session(traced).run(y, {{x, one_image}}).shape(), Shape({1, 3}));
  const GraphDef written = to_graph_def(traced);
  for (const proto::NodeDef& n : written.node())
    if (n.op() == "Squeeze") {
      EXPECT_THAT(n.attr().at("squeeze_dims").list().i(), ElementsAre(1, 2));
    }
  Graph imported = graph_from_graph_def(graph_def_from_text(R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 1 } dim { size: 1 } dim { size: 3 } } } } }
      node { name: "s" op: "Squeeze" input: "x" attr { key: "T" value { type: DT_FLOAT } } })pb"));
  const Tensor s = imported.get_tensor_by_name("s:0");
  EXPECT_EQ(s.shape(), Shape({-1, 3}));
  EXPECT_EQ(Session(imported).run(s, {{imported.get_tensor_by_name("x:0"), one_image}}).shape(), Shape({1, 3}));
  // Nothing known to be 1: an identity, traced or imported.
  Graph imported_none = graph_from_graph_def(graph_def_from_text(R"pb(
      node { name: "v" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
      node { name: "s" op: "Squeeze" input: "v" attr { key: "T" value { type: DT_FLOAT } } })pb"));
  EXPECT_EQ(imported_none.get_operation_by_name("s").type(), "Identity");
  EXPECT_EQ(Session(imported_none).run(imported_none.get_tensor_by_name("s:0"),
                                       {{imported_none.get_tensor_by_name("v:0"), ones({1, 3})}}).shape(),
            Shape({1, 3}));
  Graph none;
  {
    auto scope = none.as_default();
    const Tensor v = placeholder(DType::kFloat32, {-1, 3}, "v");
    EXPECT_EQ(producer(squeeze(v)).type(), "Identity");
  }
}

}  // namespace
}  // namespace tapeflow
