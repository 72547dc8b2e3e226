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
  const Tensor out = g.get_tensor_by_name("output:0");
  EXPECT_EQ(out.shape(), (Shape{-1, 5, 3, 4}));
  const Tensor x(ramp(100, 0.1f, -2.f), Shape{2, 5, 5, 2});
  Session sess(g);
  const Tensor got = sess.run(out, {{g.get_tensor_by_name("input:0"), x}});

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

}  // namespace
}  // namespace tapeflow
