// Importing TensorFlow 1.x frozen graphs that use the TensorFlow-parity layers (issue 13 / 14):
// DepthwiseConv2dNative, FusedBatchNormV3 / FusedBatchNorm in inference mode and BiasAdd, as
// TensorFlow writes them (4-entry strides and dilations, "T" and "U" type attrs, attrs tapeflow
// ignores such as explicit_paddings), run in a Session and compared to the same ops run eagerly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<float> ramp(int n, float scale, float shift) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7) % n) * scale + shift;
  return v;
}

// A float Const node as TensorFlow prints it (typed float_val entries).
std::string const_node(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values) {
  std::string dims, vals;
  for (int64_t d : shape) absl::StrAppend(&dims, "dim { size: ", d, " } ");
  for (float v : values) absl::StrAppend(&vals, "float_val: ", v, " ");
  return absl::StrCat("node { name: \"", name, "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } }\n",
                      "  attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { ", dims, "} ", vals,
                      "} } } }\n");
}

// Runs `output` of an imported graph with x fed to `input`, after checking its static shape.
Tensor run_with_shape(const Graph& g, const std::string& output, const Shape& static_shape, const std::string& input,
                      const Tensor& x) {
  const Tensor out = g.get_tensor_by_name(output);
  EXPECT_EQ(out.shape(), static_shape);
  Session sess(g);
  return sess.run(out, {{g.get_tensor_by_name(input), x}});
}

TEST(GraphDefTfLayersTest, FrozenMobileNetStyleBlockRunsLikeEager) {
  const std::vector<float> w = ramp(36, 0.05f, -0.8f), gamma = {1.5f, 0.5f, 2.0f, 1.0f}, beta = {0.1f, -0.2f, 0.3f, 0.f},
                           mean = {0.2f, -0.1f, 0.0f, 0.4f}, var = {1.0f, 0.5f, 2.0f, 0.25f}, bias = {1.f, 2.f, 3.f, 4.f};
  const std::string text = absl::StrCat(
      R"pb(node { name: "input" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 5 } dim { size: 5 } dim { size: 2 } } } } }
      )pb",
      const_node("dw/depthwise_weights", {3, 3, 2, 2}, w),
      R"pb(node { name: "dw/depthwise" op: "DepthwiseConv2dNative" input: "input" input: "dw/depthwise_weights"
             attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "data_format" value { s: "NHWC" } }
             attr { key: "dilations" value { list { i: 1 i: 2 i: 1 i: 1 } } }
             attr { key: "explicit_paddings" value { list { } } }
             attr { key: "padding" value { s: "SAME" } }
             attr { key: "strides" value { list { i: 1 i: 1 i: 2 i: 1 } } } }
      )pb",
      const_node("bn/gamma", {4}, gamma), const_node("bn/beta", {4}, beta), const_node("bn/moving_mean", {4}, mean),
      const_node("bn/moving_variance", {4}, var),
      R"pb(node { name: "bn/FusedBatchNormV3" op: "FusedBatchNormV3" input: "dw/depthwise" input: "bn/gamma"
             input: "bn/beta" input: "bn/moving_mean" input: "bn/moving_variance"
             attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "U" value { type: DT_FLOAT } }
             attr { key: "data_format" value { s: "NHWC" } }
             attr { key: "epsilon" value { f: 0.001 } }
             attr { key: "exponential_avg_factor" value { f: 1 } }
             attr { key: "is_training" value { b: false } } }
      )pb",
      const_node("bias", {4}, bias),
      R"pb(node { name: "BiasAdd" op: "BiasAdd" input: "bn/FusedBatchNormV3" input: "bias"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "data_format" value { s: "NHWC" } } }
           node { name: "bn_v1" op: "FusedBatchNorm" input: "BiasAdd" input: "bn/gamma"
             input: "bn/beta" input: "bn/moving_mean" input: "bn/moving_variance"
             attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "data_format" value { s: "NHWC" } }
             attr { key: "epsilon" value { f: 0.01 } }
             attr { key: "is_training" value { b: false } } }
           node { name: "output" op: "Identity" input: "bn_v1" attr { key: "T" value { type: DT_FLOAT } } }
      )pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  const Tensor x(ramp(100, 0.1f, -2.f), Shape{2, 5, 5, 2});
  const Tensor got = run_with_shape(g, "output:0", Shape{-1, 5, 3, 4}, "input:0", x);

  const Tensor dw = depthwise_conv2d(x, Tensor(w, Shape{3, 3, 2, 2}), {1, 1, 2, 1}, "SAME", {1, 2, 1, 1});
  const Tensor g_t(gamma, Shape{4}), b_t(beta, Shape{4}), m_t(mean, Shape{4}), v_t(var, Shape{4});
  const Tensor bn = fused_batch_norm(dw, g_t, b_t, m_t, v_t, 0.001f, 1.0, "NHWC", false).y;
  const Tensor expected =
      fused_batch_norm(bias_add(bn, Tensor(bias, Shape{4})), g_t, b_t, m_t, v_t, 0.01f, 1.0, "NHWC", false).y;
  expect_close(got, expected, 1e-6);
  // The batch-norm node's other outputs are there for the consumers TensorFlow gives them.
  EXPECT_EQ(g.get_tensor_by_name("bn/FusedBatchNormV3:2").shape(), (Shape{4}));
  EXPECT_EQ(g.get_operation_by_name("BiasAdd").attrs().get<std::string>("data_format"), "NHWC");

  // An NCHW BiasAdd is checked on import: its channel dim (5) does not match the bias.
  std::string nchw = text;
  nchw.replace(nchw.find("s: \"NHWC\"", nchw.find("name: \"BiasAdd\"")), 10, "s: \"NCHW\"");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(nchw)); }),
              HasSubstr("node 'BiasAdd' (BiasAdd): [bias_add] 'bias' must have shape [5] to match the channel dim "
                        "(1, NCHW)"));
}

// A graph a GPU run of TensorFlow froze in NCHW (channels first, as cuDNN prefers): every layer
// carries data_format "NCHW" and TensorFlow's {1, 1, h, w} windows. It runs as the NHWC network
// between transposes does, and is written back in NCHW.
TEST(GraphDefTfLayersTest, FrozenNchwGraphRunsLikeItsNhwcForm) {
  const std::vector<float> w = ramp(72, 0.05f, -1.f), wd = ramp(16, 0.1f, -0.7f), bias = {0.5f, -0.5f, 1.f, 0.f},
                           gamma = {1.5f, 0.5f, 2.0f, 1.0f}, beta = {0.1f, -0.2f, 0.3f, 0.f},
                           mean = {0.2f, -0.1f, 0.0f, 0.4f}, var = {1.0f, 0.5f, 2.0f, 0.25f};
  auto nchw_attrs = [](const std::string& strides, const std::string& dilations) {
    return absl::StrCat(R"pb(attr { key: "T" value { type: DT_FLOAT } }
                             attr { key: "data_format" value { s: "NCHW" } }
                             attr { key: "dilations" value { list { )pb", dilations, R"pb( } } }
                             attr { key: "strides" value { list { )pb", strides, " } } }\n");
  };
  const std::string text = absl::StrCat(
      R"pb(node { name: "images" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } dim { size: 7 } dim { size: 6 } } } } }
      )pb",
      const_node("conv/kernel", {3, 3, 2, 4}, w),
      R"pb(node { name: "conv/Conv2D" op: "Conv2D" input: "images" input: "conv/kernel"
             attr { key: "padding" value { s: "SAME" } } attr { key: "use_cudnn_on_gpu" value { b: true } }
      )pb",
      nchw_attrs("i: 1 i: 1 i: 2 i: 1", "i: 1 i: 1 i: 1 i: 1"), "}\n", const_node("conv/bias", {4}, bias),
      R"pb(node { name: "conv/BiasAdd" op: "BiasAdd" input: "conv/Conv2D" input: "conv/bias"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "data_format" value { s: "NCHW" } } }
      )pb",
      const_node("bn/gamma", {4}, gamma), const_node("bn/beta", {4}, beta), const_node("bn/mean", {4}, mean),
      const_node("bn/variance", {4}, var),
      R"pb(node { name: "bn/FusedBatchNormV3" op: "FusedBatchNormV3" input: "conv/BiasAdd" input: "bn/gamma"
             input: "bn/beta" input: "bn/mean" input: "bn/variance"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "U" value { type: DT_FLOAT } }
             attr { key: "data_format" value { s: "NCHW" } } attr { key: "epsilon" value { f: 0.001 } }
             attr { key: "is_training" value { b: false } } }
           node { name: "relu" op: "Relu" input: "bn/FusedBatchNormV3" attr { key: "T" value { type: DT_FLOAT } } }
      )pb",
      const_node("dw/kernel", {2, 2, 4, 1}, wd),
      R"pb(node { name: "dw/depthwise" op: "DepthwiseConv2dNative" input: "relu" input: "dw/kernel"
             attr { key: "padding" value { s: "VALID" } }
      )pb",
      nchw_attrs("i: 1 i: 1 i: 1 i: 1", "i: 1 i: 1 i: 1 i: 2"), "}\n",
      R"pb(node { name: "pool" op: "MaxPool" input: "dw/depthwise"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "data_format" value { s: "NCHW" } }
             attr { key: "ksize" value { list { i: 1 i: 1 i: 2 i: 2 } } } attr { key: "padding" value { s: "SAME" } }
             attr { key: "strides" value { list { i: 1 i: 1 i: 2 i: 2 } } } }
      )pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  const Tensor x(ramp(168, 0.05f, -2.f), Shape{2, 2, 7, 6});
  const Tensor got = run_with_shape(g, "pool:0", Shape{-1, 4, 2, 2}, "images:0", x);

  // The same network on NHWC images, eagerly.
  const Tensor xh = transpose(x, {0, 2, 3, 1});
  const Tensor conv = bias_add(conv2d(xh, Tensor(w, Shape{3, 3, 2, 4}), {2, 1}, "SAME"), Tensor(bias, Shape{4}));
  const Tensor bn = fused_batch_norm(conv, Tensor(gamma, Shape{4}), Tensor(beta, Shape{4}), Tensor(mean, Shape{4}),
                                     Tensor(var, Shape{4}), 0.001f, 1.0, "NHWC", false).y;
  const Tensor dw = depthwise_conv2d(relu(bn), Tensor(wd, Shape{2, 2, 4, 1}), {1, 1}, "VALID", {1, 2});
  const Tensor expected = transpose(max_pool(dw, {2, 2}, {2, 2}, "SAME"), {0, 3, 1, 2});
  EXPECT_EQ(got.shape(), (Shape{2, 4, 2, 2}));
  expect_close(got, expected, 1e-5);

  // Written back as TensorFlow wrote it: NCHW, {1, 1, h, w} windows, no transposes.
  const std::string again = graph_def_to_text(to_graph_def(g));
  EXPECT_THAT(again, Not(HasSubstr("Transpose")));
  const proto::GraphDef def = to_graph_def(g);
  for (const proto::NodeDef& n : def.node()) {
    if (n.op() != "Conv2D" && n.op() != "DepthwiseConv2dNative") continue;
    SCOPED_TRACE(n.name());
    EXPECT_EQ(n.attr().at("data_format").s(), "NCHW");
    const auto& strides = n.attr().at("strides").list().i();
    EXPECT_EQ(std::vector<int64_t>(strides.begin(), strides.end()),
              (n.op() == "Conv2D" ? std::vector<int64_t>{1, 1, 2, 1} : std::vector<int64_t>{1, 1, 1, 1}));
  }
  Graph h = graph_from_graph_def(def);
  EXPECT_EQ(run_with_shape(h, "pool:0", Shape{-1, 4, 2, 2}, "images:0", x).to_vector<float>(), got.to_vector<float>());
}

// tf.nn.atrous_conv2d(x, k, rate=2, padding="SAME") as TensorFlow 1.x freezes it (DeepLab's
// ASPP branches): SpaceToBatchND with the paddings required_space_to_batch_paddings computed for
// a 7x7 image ((2, 3): SAME's 2 and one to make 11 divisible by 2), a VALID Conv2D per phase,
// and BatchToSpaceND cropping that extra row and column. It runs as the dilated convolution.
TEST(GraphDefTfLayersTest, FrozenAtrousConvolutionRunsAsTheDilatedOne) {
  const std::vector<float> w = ramp(36, 0.05f, -0.9f);
  const std::string i32_2x2_2233 = R"(\002\000\000\000\003\000\000\000\002\000\000\000\003\000\000\000)";
  const std::string text = absl::StrCat(
      R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 7 } dim { size: 7 } dim { size: 2 } } } } }
           node { name: "aspp/SpaceToBatchND/block_shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } tensor_content: "\002\000\000\000\002\000\000\000" } } } }
           node { name: "aspp/SpaceToBatchND/paddings" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } tensor_content: ")pb",
      i32_2x2_2233, R"pb(" } } } }
           node { name: "aspp/SpaceToBatchND" op: "SpaceToBatchND" input: "x" input: "aspp/SpaceToBatchND/block_shape"
             input: "aspp/SpaceToBatchND/paddings"
             attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "Tblock_shape" value { type: DT_INT32 } }
             attr { key: "Tpaddings" value { type: DT_INT32 } } }
      )pb",
      const_node("aspp/weights", {3, 3, 2, 2}, w),
      R"pb(node { name: "aspp/Conv2D" op: "Conv2D" input: "aspp/SpaceToBatchND" input: "aspp/weights"
             attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "data_format" value { s: "NHWC" } }
             attr { key: "dilations" value { list { i: 1 i: 1 i: 1 i: 1 } } }
             attr { key: "padding" value { s: "VALID" } }
             attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } }
             attr { key: "use_cudnn_on_gpu" value { b: true } } }
           node { name: "aspp/BatchToSpaceND/crops" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
             attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } dim { size: 2 } } int64_val: 0 int64_val: 1 int64_val: 0 int64_val: 1 } } } }
           node { name: "aspp/BatchToSpaceND" op: "BatchToSpaceND" input: "aspp/Conv2D" input: "aspp/SpaceToBatchND/block_shape"
             input: "aspp/BatchToSpaceND/crops"
             attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "Tblock_shape" value { type: DT_INT32 } }
             attr { key: "Tcrops" value { type: DT_INT64 } } }
      )pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_tensor_by_name("aspp/SpaceToBatchND:0").shape(), (Shape{-1, 6, 6, 2}));
  const Tensor x(ramp(2 * 7 * 7 * 2, 0.1f, -3.f), Shape{2, 7, 7, 2});
  const Tensor got = run_with_shape(g, "aspp/BatchToSpaceND:0", Shape{-1, 7, 7, 2}, "x:0", x);
  expect_close(got, conv2d(x, Tensor(w, Shape{3, 3, 2, 2}), {1, 1}, "SAME", {2, 2}), 1e-5);

  // Written back as TensorFlow's nodes (constant inputs, their index types), and read again.
  const GraphDef def = to_graph_def(g);
  bool seen = false;
  for (const auto& node : def.node()) {
    if (node.op() != "SpaceToBatchND") continue;
    seen = true;
    EXPECT_EQ(node.input_size(), 3);
    EXPECT_EQ(node.attr().at("Tpaddings").type(), proto::DT_INT32);
    EXPECT_EQ(node.attr().at("Tblock_shape").type(), proto::DT_INT32);
  }
  EXPECT_TRUE(seen);
  Graph h = graph_from_graph_def(def);
  EXPECT_EQ(run_with_shape(h, "aspp/BatchToSpaceND:0", Shape{-1, 7, 7, 2}, "x:0", x).to_vector<float>(),
            got.to_vector<float>());

  // Crops larger than the rearranged size are refused at import, naming the node.
  std::string bad = text;
  bad.replace(bad.find("int64_val: 0 int64_val: 1"), 12, "int64_val: 9");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(bad)); }),
              HasSubstr("node 'aspp/BatchToSpaceND' (BatchToSpaceND): [batch_to_space_nd] crops (9, 1) of spatial dim 0 "
                        "exceed its size 8"));
}

// TensorFlow 2's Einsum as Keras writes it in a frozen transformer: an EinsumDense projection
// ("abc,cd->abd") of a [batch, 4, 3] input and MultiHeadAttention's score contraction
// ("aecd,abcd->acbe") of the heads, under the node names a user fetches. tapeflow reads each as
// its einsum composite (Note [Composites in a GraphDef]).
TEST(GraphDefTfLayersTest, FrozenEinsumNodesRunAsTheComposite) {
  const std::vector<float> w = ramp(3 * 4, 0.1f, -0.5f);
  const std::string text = absl::StrCat(
      R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } dim { size: 3 } } } } }
      )pb",
      const_node("dense/kernel", {3, 4}, w),
      R"pb(node { name: "dense/einsum/Einsum" op: "Einsum" input: "x" input: "dense/kernel"
             attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "equation" value { s: "abc,cd->abd" } } }
           node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } } int_val: 2 int_val: 4 int_val: 2 int_val: 2 } } } }
           node { name: "heads" op: "Reshape" input: "dense/einsum/Einsum" input: "shape"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
           node { name: "attention/einsum/Einsum" op: "Einsum" input: "heads" input: "heads"
             attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "equation" value { s: "aecd,abcd->acbe" } } }
           node { name: "scores" op: "Identity" input: "attention/einsum/Einsum" attr { key: "T" value { type: DT_FLOAT } } }
      )pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_tensor_by_name("dense/einsum/Einsum:0").shape(), (Shape{-1, 4, 4}));
  const Tensor x(ramp(2 * 4 * 3, 0.2f, -1.f), Shape{2, 4, 3});
  const Tensor got = run_with_shape(g, "scores:0", Shape{2, 2, 4, 4}, "x:0", x);
  const Tensor heads = reshape(einsum("abc,cd->abd", x, Tensor(w, Shape{3, 4})), {2, 4, 2, 2});
  expect_close(got, einsum("aecd,abcd->acbe", heads, heads), 1e-5);
  // The composite's nodes sit under the Einsum's name; they are written back as primitives.
  EXPECT_EQ(g.get_operation_by_name("dense/einsum/Einsum").type(), "Reshape");
  Graph h = graph_from_graph_def(to_graph_def(g));
  expect_close(run_with_shape(h, "scores:0", Shape{2, 2, 4, 4}, "x:0", x), got, 0);

  // A GraphDef node named like a composite's inner node keeps its name; the inner node gives way.
  // A control input of the Einsum holds back every node of its composite.
  std::string clash = text;
  clash += R"pb(node { name: "dense/einsum/Einsum/Reshape" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
                node { name: "gate" op: "NoOp" })pb";
  clash.replace(clash.find("input: \"dense/kernel\""), 21, "input: \"dense/kernel\" input: \"^gate\"");
  Graph c = graph_from_graph_def(graph_def_from_text(clash));
  EXPECT_EQ(c.get_operation_by_name("dense/einsum/Einsum/Reshape").type(), "Identity");
  int gated = 0;
  for (const Operation& op : c.get_operations()) {
    if (!op.name().starts_with("dense/einsum/Einsum")) continue;
    for (const Operation& control : op.control_inputs()) gated += control.name() == "gate";
  }
  EXPECT_GE(gated, 2);
  expect_close(run_with_shape(c, "scores:0", Shape{2, 2, 4, 4}, "x:0", x), got, 0);

  // Keras' EinsumDense with an ellipsis ("...c,cd->...d") reads too; what the composite refuses
  // is the node's error.
  std::string ellipsis = text;
  ellipsis.replace(ellipsis.find("abc,cd->abd"), 11, "...c,cd->...d");
  Graph e = graph_from_graph_def(graph_def_from_text(ellipsis));
  EXPECT_EQ(e.get_tensor_by_name("dense/einsum/Einsum:0").shape(), (Shape{-1, 4, 4}));
  expect_close(run_with_shape(e, "scores:0", Shape{2, 2, 4, 4}, "x:0", x), got, 0);
  // Three operands (written by hand: TensorFlow's Python splits them into pairs).
  std::string three = text;
  three.replace(three.find("input: \"heads\" input: \"heads\""), 29, "input: \"heads\" input: \"heads\" input: \"heads\"");
  three.replace(three.find("aecd,abcd->acbe"), 15, "aecd,abcd,abcd->acbe");
  three.replace(three.find("i: 2", three.find("name: \"attention/einsum/Einsum\"")), 4, "i: 3");
  Graph t3 = graph_from_graph_def(graph_def_from_text(three));
  expect_close(run_with_shape(t3, "scores:0", Shape{2, 2, 4, 4}, "x:0", x),
               einsum("aecd,abcd,abcd->acbe", {heads, heads, heads}), 1e-4);
  std::string diagonal = text;
  diagonal.replace(diagonal.find("abc,cd->abd"), 11, "abc,cc->abd");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(diagonal)); }),
              HasSubstr("node 'dense/einsum/Einsum' (Einsum): [einsum] equation 'abc,cc->abd': output label 'd' "
                        "appears in no operand"));
  std::string typed = text;
  const std::string float_t = "attr { key: \"N\" value { i: 2 } } attr { key: \"T\" value { type: DT_FLOAT } }";
  typed.replace(typed.find(float_t), float_t.size(), "attr { key: \"N\" value { i: 2 } } attr { key: \"T\" value { type: DT_INT32 } }");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(typed)); }),
              HasSubstr("node 'dense/einsum/Einsum' (Einsum): attr 'T' says type: DT_INT32 but input 0 is float32"));
  std::string counted = text;
  counted.replace(counted.find("attr { key: \"N\" value { i: 2 } }"), 32, "attr { key: \"N\" value { i: 3 } }");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(counted)); }),
              HasSubstr("node 'dense/einsum/Einsum' (Einsum): attr 'N' is 3 but the node has 2 inputs"));
}

// tf.image.non_max_suppression as TensorFlow 2 writes it in a detector's post-processing:
// NonMaxSuppressionV3 over Const limits (score_threshold -inf, its default), then a GatherV2 of
// the kept boxes, whose count is known only when it runs.
TEST(GraphDefTfLayersTest, FrozenNonMaxSuppressionKeepsTheBoxesTensorflowKeeps) {
  const std::string text = R"pb(
    node { name: "boxes" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } } }
    node { name: "scores" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } } } } }
    node { name: "nms/max_output_size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }
    node { name: "nms/iou_threshold" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }
    node { name: "nms/score_threshold" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: -inf } } } }
    node { name: "nms/NonMaxSuppressionV3" op: "NonMaxSuppressionV3" input: "boxes" input: "scores"
      input: "nms/max_output_size" input: "nms/iou_threshold" input: "nms/score_threshold"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "T_threshold" value { type: DT_FLOAT } } }
    node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "detections" op: "GatherV2" input: "boxes" input: "nms/NonMaxSuppressionV3" input: "axis"
      attr { key: "Taxis" value { type: DT_INT32 } } attr { key: "Tindices" value { type: DT_INT32 } }
      attr { key: "Tparams" value { type: DT_FLOAT } } attr { key: "batch_dims" value { i: 0 } } }
  )pb";
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_tensor_by_name("nms/NonMaxSuppressionV3:0").shape(), Shape({-1}));
  const Tensor boxes(std::vector<float>{0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f,
                                        0, 100, 1, 101},
                     Shape{6, 4});
  const Tensor scores({0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  Session sess(g);
  const std::vector<Tensor> got = sess.run({g.get_tensor_by_name("nms/NonMaxSuppressionV3:0"), g.get_tensor_by_name("detections:0")},
                                           {{g.get_tensor_by_name("boxes:0"), boxes}, {g.get_tensor_by_name("scores:0"), scores}});
  EXPECT_EQ(got[0].to_vector<int32_t>(), (std::vector<int32_t>{3, 0, 5}));
  EXPECT_EQ(got[1].shape(), (Shape{3, 4}));
  EXPECT_EQ(got[1].to_vector<float>(), (std::vector<float>{0, 10, 1, 11, 0, 0, 1, 1, 0, 100, 1, 101}));
  // Written back with TensorFlow's type attrs, the thresholds still inputs.
  const GraphDef written = to_graph_def(g);
  int seen = 0;
  for (const auto& node : written.node()) {
    if (node.op() != "NonMaxSuppressionV3") continue;
    ++seen;
    EXPECT_EQ(node.input_size(), 5);
    EXPECT_EQ(node.attr().at("T_threshold").type(), proto::DT_FLOAT);
  }
  EXPECT_EQ(seen, 1);
  // An iou_threshold outside [0, 1] fails the run that reaches it, naming the node.
  std::string bad = text;
  bad.replace(bad.find("float_val: 0.5"), 14, "float_val: 1.5");
  Graph h = graph_from_graph_def(graph_def_from_text(bad));
  EXPECT_THAT(error_of([&] {
                Session(h).run(h.get_tensor_by_name("detections:0"),
                               {{h.get_tensor_by_name("boxes:0"), boxes}, {h.get_tensor_by_name("scores:0"), scores}});
              }),
              AllOf(HasSubstr("iou_threshold must be in [0, 1], got 1.5"),
                    HasSubstr("node 'nms/NonMaxSuppressionV3' (NonMaxSuppressionV3)")));
}

// The older and newer NonMaxSuppression nodes, read as V3 and a few moves (Note [Composites in a
// GraphDef]): V2 (no score threshold) and V4 (valid_outputs); V5 padded to max_output_size
// (indices and scores padded with zeros, as TensorFlow pads them) is tapeflow's own op, soft NMS
// included.
TEST(GraphDefTfLayersTest, NonMaxSuppressionV1V2V4ReadAsV3AndV5AsItself) {
  auto scalar = [](const std::string& name, const std::string& type, const std::string& value) {
    return absl::StrCat("node { name: \"", name, "\" op: \"Const\" attr { key: \"dtype\" value { type: ", type,
                        " } } attr { key: \"value\" value { tensor { dtype: ", type, " tensor_shape { } ", value,
                        " } } } }\n");
  };
  const std::string text = absl::StrCat(
      R"pb(node { name: "boxes" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } } }
           node { name: "scores" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: -1 } } } } }
      )pb",
      scalar("two", "DT_INT32", "int_val: 2"), scalar("five", "DT_INT32", "int_val: 5"),
      scalar("iou", "DT_FLOAT", "float_val: 0.5"), scalar("floor", "DT_FLOAT", "float_val: 0.2"),
      scalar("sigma", "DT_FLOAT", "float_val: 0"),
      R"pb(node { name: "v2" op: "NonMaxSuppressionV2" input: "boxes" input: "scores" input: "two" input: "iou"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "T_threshold" value { type: DT_FLOAT } } }
           node { name: "v4" op: "NonMaxSuppressionV4" input: "boxes" input: "scores" input: "five" input: "iou" input: "floor"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "T_threshold" value { type: DT_FLOAT } }
             attr { key: "pad_to_max_output_size" value { b: false } } }
           node { name: "v5" op: "NonMaxSuppressionV5" input: "boxes" input: "scores" input: "five" input: "iou" input: "floor"
             input: "sigma" attr { key: "T" value { type: DT_FLOAT } } attr { key: "pad_to_max_output_size" value { b: true } } }
           node { name: "v1" op: "NonMaxSuppression" input: "boxes" input: "scores" input: "five"
             attr { key: "iou_threshold" value { f: 0.85 } } }
           node { name: "v1_default" op: "NonMaxSuppression" input: "boxes" input: "scores" input: "five" }
      )pb");
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  const Tensor boxes(std::vector<float>{0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f,
                                        0, 100, 1, 101},
                     Shape{6, 4});
  const Tensor scores({0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  Session sess(g);
  std::vector<Fetch> fetches;
  for (const char* name : {"v2:0", "v4:0", "v4:1", "v5:0", "v5:1", "v5:2", "v1:0", "v1_default:0"})
    fetches.push_back(g.get_tensor_by_name(name));
  const std::vector<Tensor> got =
      sess.run(fetches, {{g.get_tensor_by_name("boxes:0"), boxes}, {g.get_tensor_by_name("scores:0"), scores}});
  EXPECT_EQ(got[0].to_vector<int32_t>(), (std::vector<int32_t>{3, 0}));
  EXPECT_EQ(got[1].to_vector<int32_t>(), (std::vector<int32_t>{3, 0, 5}));
  EXPECT_EQ(got[2].item<int32_t>(), 3);
  EXPECT_EQ(got[3].to_vector<int32_t>(), (std::vector<int32_t>{3, 0, 5, 0, 0}));
  EXPECT_EQ(got[4].to_vector<float>(), (std::vector<float>{0.95f, 0.9f, 0.3f, 0.f, 0.f}));
  EXPECT_EQ(got[5].item<int32_t>(), 3);
  EXPECT_EQ(g.get_tensor_by_name("v5:1").shape(), Shape({5}));
  // V1's iou_threshold is an attr (default 0.5): at 0.85 the boxes of IoU 0.82 with a kept one
  // stay (1 and 2 beside 0, 4 beside 3), and the limit of 5 drops the last (5).
  EXPECT_EQ(got[6].to_vector<int32_t>(), (std::vector<int32_t>{3, 0, 1, 2, 4}));
  EXPECT_EQ(got[7].to_vector<int32_t>(), (std::vector<int32_t>{3, 0, 5}));

  // V5 is written back as itself, six inputs, its limit a Const again.
  int v5_nodes = 0;
  const GraphDef written = to_graph_def(g);
  for (const auto& node : written.node())
    if (node.op() == "NonMaxSuppressionV5") {
      ++v5_nodes;
      EXPECT_EQ(node.input_size(), 6);
      EXPECT_TRUE(node.attr().at("pad_to_max_output_size").b());
    }
  EXPECT_EQ(v5_nodes, 1);
  // Soft NMS (sigma 0.5): the overlapping boxes are rescored, not dropped.
  std::string soft = text;
  soft.replace(soft.find("float_val: 0 "), 13, "float_val: 0.5 ");
  Graph h = graph_from_graph_def(graph_def_from_text(soft));
  const std::vector<Tensor> rescored =
      Session(h).run({Fetch(h.get_tensor_by_name("v5:0")), Fetch(h.get_tensor_by_name("v5:1"))},
                     {{h.get_tensor_by_name("boxes:0"), boxes}, {h.get_tensor_by_name("scores:0"), scores}});
  const NmsWithScores want = non_max_suppression_with_scores(boxes, scores, 5, 0.5f, 0.2f, 0.5f, true);
  EXPECT_EQ(rescored[0].to_vector<int32_t>(), want.selected_indices.to_vector<int32_t>());
  EXPECT_EQ(rescored[1].to_vector<float>(), want.selected_scores.to_vector<float>());
  EXPECT_EQ(want.valid_outputs.item<int32_t>(), 5);
  std::string fed = text;
  fed.replace(fed.find("input: \"two\""), 12, "input: \"iou\"");  // a float where the limit goes
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(fed)); }),
              HasSubstr("node 'v2' (NonMaxSuppressionV2): input 2 ('max_output_size') must be an integer constant"));
}

// TensorFlow 1's SpaceToBatch / BatchToSpace (4-D, attr block_size), as tf.space_to_batch wrote
// them: the ND ops with a square block.
TEST(GraphDefTfLayersTest, SpaceToBatchWithABlockSizeAttrReadAsTheNdOp) {
  const std::string text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 1 } dim { size: 3 } dim { size: 3 } dim { size: 2 } } } } }
    node { name: "pads" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } } int_val: 0 int_val: 1 int_val: 1 int_val: 0 } } } }
    node { name: "s2b" op: "SpaceToBatch" input: "x" input: "pads" attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "Tpaddings" value { type: DT_INT32 } } attr { key: "block_size" value { i: 2 } } }
    node { name: "b2s" op: "BatchToSpace" input: "s2b" input: "pads" attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "Tidx" value { type: DT_INT32 } } attr { key: "block_size" value { i: 2 } } }
  )pb";
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_tensor_by_name("s2b:0").shape(), Shape({4, 2, 2, 2}));
  const Tensor x(ramp(18, 1.f, 1.f), Shape{1, 3, 3, 2});
  Session sess(g);
  const std::vector<Tensor> got = sess.run({g.get_tensor_by_name("s2b:0"), g.get_tensor_by_name("b2s:0")},
                                           {{g.get_tensor_by_name("x:0"), x}});
  EXPECT_EQ(got[0].to_vector<float>(), space_to_batch_nd(x, {2, 2}, {{0, 1}, {1, 0}}).to_vector<float>());
  EXPECT_EQ(got[1].to_vector<float>(), x.to_vector<float>());  // the crops undo the paddings
  std::string odd = text;
  odd.replace(odd.find("block_size\" value { i: 2 }"), 26, "block_size\" value { i: 3 }");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(odd)); }),
              HasSubstr("node 's2b' (SpaceToBatch): [space_to_batch_nd] spatial dim 0 of input [1,3,3,2] padded by (0, 1) "
                        "must be divisible by block_shape[0] = 3"));
}

// A serving graph's preprocessing as TensorFlow froze it: the decoded uint8 image resized
// straight away (ResizeBilinear of T=DT_UINT8 gives float32, TensorFlow's rule), then scaled; a
// nearest-neighbour resize of the same image keeps uint8.
TEST(GraphDefTfLayersTest, FrozenPreprocessingResizesUint8Images) {
  const std::string text = R"pb(
    node { name: "image" op: "Placeholder" attr { key: "dtype" value { type: DT_UINT8 } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: -1 } dim { size: -1 } dim { size: 3 } } } } }
    node { name: "size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } tensor_content: "\005\000\000\000\003\000\000\000" } } } }
    node { name: "resize/ResizeBilinear" op: "ResizeBilinear" input: "image" input: "size"
      attr { key: "T" value { type: DT_UINT8 } }
      attr { key: "align_corners" value { b: false } }
      attr { key: "half_pixel_centers" value { b: true } } }
    node { name: "scale" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.00392156886 } } } }
    node { name: "scaled" op: "Mul" input: "resize/ResizeBilinear" input: "scale" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "thumb" op: "ResizeNearestNeighbor" input: "image" input: "size"
      attr { key: "T" value { type: DT_UINT8 } }
      attr { key: "align_corners" value { b: false } }
      attr { key: "half_pixel_centers" value { b: false } } }
  )pb";
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  std::vector<uint8_t> pixels(2 * 4 * 6 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>((i * 37) % 256);
  const Tensor image(pixels, Shape{2, 4, 6, 3});
  const Tensor scaled = run_with_shape(g, "scaled:0", Shape{-1, 5, 3, 3}, "image:0", image);
  EXPECT_EQ(scaled.dtype(), DType::kFloat32);
  EXPECT_EQ(scaled.to_vector<float>(), (resize_bilinear(image, {5, 3}, false, true) * 0.00392156886f).to_vector<float>());
  const Tensor thumb = run_with_shape(g, "thumb:0", Shape{-1, 5, 3, 3}, "image:0", image);
  EXPECT_EQ(thumb.dtype(), DType::kUInt8);
  EXPECT_EQ(thumb.to_vector<uint8_t>(), resize_nearest_neighbor(image, {5, 3}).to_vector<uint8_t>());
  // Written back with T = DT_UINT8 on both resizes.
  const GraphDef def = to_graph_def(g);
  int resizes = 0;
  for (const auto& node : def.node()) {
    if (node.op() == "ResizeBilinear" || node.op() == "ResizeNearestNeighbor") {
      ++resizes;
      EXPECT_EQ(node.attr().at("T").type(), proto::DT_UINT8) << node.name();
    }
  }
  EXPECT_EQ(resizes, 2);
}

// A detection model's ROI crop as TensorFlow 1's Object Detection API freezes it: CropAndResize
// of the feature map at the proposals (crop_size a Const), then a 2x2 max pool; and the image
// gradient of its training graph, whose image_size is a Shape node (a tensor, not a constant).
TEST(GraphDefTfLayersTest, FrozenRoiCropRunsLikeEagerAndItsGradientReadsAShape) {
  const std::string text = R"pb(
    node { name: "features" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: -1 } dim { size: -1 } dim { size: 2 } } } } }
    node { name: "proposals" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } } }
    node { name: "box_ind" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "shape" value { shape { dim { size: -1 } } } } }
    node { name: "crop_size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } tensor_content: "\004\000\000\000\004\000\000\000" } } } }
    node { name: "CropAndResize" op: "CropAndResize" input: "features" input: "proposals" input: "box_ind" input: "crop_size"
      attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "extrapolation_value" value { f: 0 } }
      attr { key: "method" value { s: "bilinear" } } }
    node { name: "MaxPool2D/MaxPool" op: "MaxPool" input: "CropAndResize"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "data_format" value { s: "NHWC" } }
      attr { key: "ksize" value { list { i: 1 i: 2 i: 2 i: 1 } } } attr { key: "padding" value { s: "VALID" } }
      attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } } }
    node { name: "grads" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } dim { size: 4 } dim { size: 2 } } } } }
    node { name: "gradients/Shape" op: "Shape" input: "features"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "out_type" value { type: DT_INT32 } } }
    node { name: "gradients/CropAndResizeGradImage" op: "CropAndResizeGradImage" input: "grads" input: "proposals"
      input: "box_ind" input: "gradients/Shape"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "method" value { s: "bilinear" } } }
  )pb";
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  std::vector<float> fm = ramp(2 * 6 * 5 * 2, 0.25f, -3);
  const Tensor features(fm, Shape{2, 6, 5, 2});
  const Tensor proposals(std::vector<float>{0.1f, 0.1f, 0.7f, 0.9f, 0.9f, 0.2f, 0.3f, 0.6f, -0.2f, 0.5f, 0.5f, 1.1f},
                         Shape{3, 4});
  const Tensor box_ind(std::vector<int32_t>{0, 1, 1}, Shape{3});
  const Tensor grads(ramp(3 * 4 * 4 * 2, 0.5f, -1), Shape{3, 4, 4, 2});
  EXPECT_EQ(g.get_tensor_by_name("MaxPool2D/MaxPool:0").shape(), (Shape{-1, 2, 2, 2}));
  EXPECT_EQ(g.get_tensor_by_name("gradients/CropAndResizeGradImage:0").shape(), (Shape{-1, -1, -1, 2}));
  Session sess(g);
  const std::vector<Tensor> got =
      sess.run({g.get_tensor_by_name("MaxPool2D/MaxPool:0"), g.get_tensor_by_name("gradients/CropAndResizeGradImage:0")},
               {{g.get_tensor_by_name("features:0"), features},
                {g.get_tensor_by_name("proposals:0"), proposals},
                {g.get_tensor_by_name("box_ind:0"), box_ind},
                {g.get_tensor_by_name("grads:0"), grads}});
  const Tensor crops = crop_and_resize(features, proposals, box_ind, {4, 4});
  EXPECT_EQ(got[0].to_vector<float>(), max_pool(crops, {2, 2}, {2, 2}, "VALID").to_vector<float>());
  EXPECT_EQ(got[1].shape(), features.shape());
  EXPECT_EQ(got[1].to_vector<float>(),
            crop_and_resize_grad_image(grads, proposals, box_ind, shape(features), DType::kFloat32).to_vector<float>());
  // Written back as TensorFlow reads them: crop_size a Const input again, T on each node.
  const GraphDef written = to_graph_def(g);
  int seen = 0;
  for (const auto& node : written.node()) {
    if (node.op() == "CropAndResize") {
      ++seen;
      ASSERT_EQ(node.input_size(), 4);
      EXPECT_EQ(node.attr().at("T").type(), proto::DT_FLOAT);
      EXPECT_EQ(node.attr().at("method").s(), "bilinear");
      EXPECT_EQ(node.attr().at("extrapolation_value").f(), 0.f);
    } else if (node.op() == "CropAndResizeGradImage") {
      ++seen;
      EXPECT_EQ(node.input(3), "gradients/Shape");
      EXPECT_EQ(node.attr().at("T").type(), proto::DT_FLOAT);
    }
  }
  EXPECT_EQ(seen, 2);
  // A box index past the batch fails the run, naming the node.
  EXPECT_THAT(error_of([&] {
                sess.run(g.get_tensor_by_name("CropAndResize:0"),
                         {{g.get_tensor_by_name("features:0"), features},
                          {g.get_tensor_by_name("proposals:0"), proposals},
                          {g.get_tensor_by_name("box_ind:0"), Tensor(std::vector<int32_t>{0, 2, 1}, Shape{3})}});
              }),
              AllOf(HasSubstr("box_indices[1] = 2 is outside [0, 2)"), HasSubstr("node 'CropAndResize' (CropAndResize)")));
}

// The post-processing of TensorFlow 2's Object Detection API models: CombinedNonMaxSuppression
// with its limits as Consts, its four outputs read by name.
TEST(GraphDefTfLayersTest, FrozenCombinedNonMaxSuppressionRunsLikeEager) {
  const std::string text = R"pb(
    node { name: "boxes" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: -1 } dim { size: 1 } dim { size: 4 } } } } }
    node { name: "scores" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: -1 } dim { size: -1 } dim { size: 2 } } } } }
    node { name: "max_output_size_per_class" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 100 } } } }
    node { name: "max_total_size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
      attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 5 } } } }
    node { name: "iou_threshold" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }
    node { name: "score_threshold" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.25 } } } }
    node { name: "CombinedNonMaxSuppression" op: "CombinedNonMaxSuppression" input: "boxes" input: "scores"
      input: "max_output_size_per_class" input: "max_total_size" input: "iou_threshold" input: "score_threshold"
      attr { key: "clip_boxes" value { b: false } } attr { key: "pad_per_class" value { b: false } } }
  )pb";
  Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_tensor_by_name("CombinedNonMaxSuppression:0").shape(), (Shape{-1, 5, 4}));
  EXPECT_EQ(g.get_tensor_by_name("CombinedNonMaxSuppression:3").shape(), (Shape{-1}));
  const Tensor boxes(std::vector<float>{0, 0, 0.5f, 0.5f, 0, 0.05f, 0.5f, 0.55f, 0.5f, 0.5f, 1, 1, 0.5f, 0.55f, 1, 1.05f},
                     Shape{1, 4, 1, 4});
  const Tensor scores(std::vector<float>{0.9f, 0.1f, 0.8f, 0.7f, 0.3f, 0.6f, 0.2f, 0.65f}, Shape{1, 4, 2});
  Session sess(g);
  std::vector<Fetch> fetches;
  for (int i = 0; i < 4; ++i) fetches.emplace_back(g.get_tensor_by_name(absl::StrCat("CombinedNonMaxSuppression:", i)));
  const std::vector<Tensor> got =
      sess.run(fetches, {{g.get_tensor_by_name("boxes:0"), boxes}, {g.get_tensor_by_name("scores:0"), scores}});
  const CombinedNms want = combined_non_max_suppression(boxes, scores, 100, 5, 0.5f, 0.25f, false, false);
  EXPECT_EQ(got[0].to_vector<float>(), want.boxes.to_vector<float>());
  EXPECT_EQ(got[1].to_vector<float>(), (std::vector<float>{0.9f, 0.7f, 0.65f, 0.3f, 0}));
  EXPECT_EQ(got[2].to_vector<float>(), want.classes.to_vector<float>());
  EXPECT_EQ(got[3].to_vector<int32_t>(), (std::vector<int32_t>{4}));
  EXPECT_FLOAT_EQ(got[0].to_vector<float>()[11], 1.05f);  // clip_boxes false
  // Written back as TensorFlow's six inputs, the limits Consts again.
  const GraphDef written = to_graph_def(g);
  int seen = 0;
  for (const auto& node : written.node()) {
    if (node.op() != "CombinedNonMaxSuppression") continue;
    ++seen;
    ASSERT_EQ(node.input_size(), 6);
    EXPECT_EQ(node.input(4), "iou_threshold");
    EXPECT_FALSE(node.attr().at("clip_boxes").b());
    EXPECT_FALSE(node.attr().contains("T"));
  }
  EXPECT_EQ(seen, 1);
  // A limit that is not an integer constant is refused naming the node and the input.
  std::string odd = text;
  odd.replace(odd.find("input: \"max_total_size\""), 24, "input: \"score_threshold\"");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(odd)); }),
              HasSubstr("node 'CombinedNonMaxSuppression' (CombinedNonMaxSuppression): the constant for "
                        "'max_total_size' must be one integer; got float32 of shape []"));
}

}  // namespace
}  // namespace tapeflow
