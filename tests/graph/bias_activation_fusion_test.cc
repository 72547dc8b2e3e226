// Note [Bias and activation epilogue]: Conv2D / DepthwiseConv2dNative / MatMul -> bias add ->
// an activation runs as one step: the product, then the bias and the activation in place. These
// tests fail when the fusion does not happen (the traced step statistics show one entry for the
// chain, naming its members), when it happens where something else observes an intermediate,
// and when it computes anything but the unfused steps' bits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tapeflow.h"
#include "tests/support/step_stats_util.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Bit-equality of float32 or float64 tensors, NaN and the sign of zero included (expect_close
// with 0 treats NaN as a mismatch and -0 as +0).
template <typename T, typename Bits>
void expect_same_bits_as(const Tensor& actual, const Tensor& expected) {
  const std::vector<T> a = actual.to_vector<T>(), e = expected.to_vector<T>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(std::bit_cast<Bits>(a[i]), std::bit_cast<Bits>(e[i])) << "element " << i;
}
void expect_same_bits(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), expected.dtype());
  if (actual.dtype() == DType::kFloat64) expect_same_bits_as<double, uint64_t>(actual, expected);
  else expect_same_bits_as<float, uint32_t>(actual, expected);
}

std::vector<std::string> fused_of(const StepStats& stats, const std::string& node) {
  for (const NodeExecStats& n : stats.nodes)
    if (n.node_name == node) return n.fused_nodes;
  return {"(no entry for " + node + ")"};
}

struct ConvLayer {
  Graph g;
  Tensor x, y;
  Tensor filter = random_normal({3, 3, 4, 8}, 0.0, 1.0, DType::kFloat32, 11);
  Tensor bias = random_normal({8}, 0.0, 1.0, DType::kFloat32, 12);
  Tensor xv = random_normal({2, 6, 6, 4}, 0.0, 1.0, DType::kFloat32, 13);
  Tensor eager() const { return relu(conv2d(xv, filter, {1, 1}, "SAME") + bias); }
};

TEST(BiasActivationFusionTest, ConvAddReluRunsAsOneStepWithTheEagerBits) {
  ConvLayer l;
  {
    auto scope = l.g.as_default();
    l.x = placeholder(DType::kFloat32, {-1, 6, 6, 4}, "x");  // an unknown batch: shapes at run time
    Variable b(l.bias, "b");
    l.y = relu(conv2d(l.x, constant(l.filter), {1, 1}, "SAME") + b.read());
  }
  Session sess(l.g);
  run(l.g.global_variables_initializer(), {}, &sess);
  const StepStats stats = traced_kernel_stats(sess, l.y, {{l.x, l.xv}});
  EXPECT_THAT(fused_of(stats, "Relu"), ElementsAre("Conv2D", "Add", "Relu")) << stats.to_string();
  for (const NodeExecStats& n : stats.nodes) EXPECT_NE(n.op, "Conv2D") << stats.to_string();
  expect_same_bits(sess.run(l.y, {{l.x, l.xv}}), l.eager());
  // Another batch size through the same plan.
  const Tensor x5 = random_normal({5, 6, 6, 4}, 0.0, 1.0, DType::kFloat32, 14);
  expect_same_bits(sess.run(l.y, {{l.x, x5}}), relu(conv2d(x5, l.filter, {1, 1}, "SAME") + l.bias));
}

// NaNs pass through Relu with their payloads, in either order of the add. Where the product and
// the bias are both NaN the result is NaN, its payload unspecified (as between any two adds).
TEST(BiasActivationFusionTest, NaNsComeOutAsTheUnfusedStepsGiveThem) {
  Graph g;
  Tensor a, bias_first, bias_second;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float other_nan = std::bit_cast<float>(std::bit_cast<uint32_t>(nan) | 0x1234u);  // another payload
  const Tensor w({{1.f, -1.f}, {0.f, 2.f}});
  const Tensor bias({1.f, other_nan});
  {
    auto scope = g.as_default();
    a = placeholder(DType::kFloat32, {2, 2}, "a");
    bias_first = relu(bias + matmul(a, w));
    bias_second = relu(matmul(a, w) + bias);
  }
  Session sess(g);
  const Tensor av({{nan, 0.f}, {-1.f, 3.f}});  // product row 0: [NaN, NaN]; row 1: [-1, 7]
  const StepStats stats = traced_kernel_stats(sess, bias_first, {{a, av}});
  ASSERT_EQ(stats.nodes.size(), 1u) << stats.to_string();
  EXPECT_EQ(stats.nodes[0].fused_nodes.size(), 3u);
  const std::vector<Tensor> got = sess.run({bias_first, bias_second}, {{a, av}});
  for (int order = 0; order < 2; ++order) {
    const Tensor want = order == 0 ? relu(bias + matmul(av, w)) : relu(matmul(av, w) + bias);
    const std::vector<float> g = got[order].to_vector<float>(), e = want.to_vector<float>();
    ASSERT_EQ(g.size(), 4u);
    EXPECT_EQ(std::bit_cast<uint32_t>(g[0]), std::bit_cast<uint32_t>(e[0])) << "NaN product + 1";
    EXPECT_TRUE(std::isnan(g[1]) && std::isnan(e[1])) << "NaN product + NaN bias";
    EXPECT_EQ(std::bit_cast<uint32_t>(g[1]) & 0x7fc00000u, 0x7fc00000u);  // a quiet NaN
    EXPECT_EQ(g[2], 0.f);                                                     // relu(-1 + 1)
    EXPECT_EQ(std::bit_cast<uint32_t>(g[3]), std::bit_cast<uint32_t>(e[3])) << "7 + NaN bias";
  }
}

TEST(BiasActivationFusionTest, MatMulBiasAddRelu6AndABiasAloneFuse) {
  Graph g;
  Tensor x, y6, plain;
  const Tensor w = random_normal({16, 32}, 0.0, 2.0, DType::kFloat32, 21);
  const Tensor bias = random_normal({32}, 0.0, 2.0, DType::kFloat32, 22);
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {8, 16}, "x");
    y6 = relu6(bias_add(matmul(x, w), bias));
    plain = constant(bias) + matmul(x, w);  // the bias first
  }
  Session sess(g);
  const Tensor xv = random_normal({8, 16}, 0.0, 2.0, DType::kFloat32, 23);
  const StepStats s6 = traced_kernel_stats(sess, y6, {{x, xv}});
  EXPECT_THAT(fused_of(s6, "Relu6"), ElementsAre("MatMul", "BiasAdd", "Relu6")) << s6.to_string();
  const StepStats sp = traced_kernel_stats(sess, plain, {{x, xv}});
  ASSERT_EQ(sp.nodes.size(), 1u) << sp.to_string();
  EXPECT_EQ(sp.nodes[0].op, "Add");
  EXPECT_EQ(sp.nodes[0].fused_nodes.size(), 2u);
  const std::vector<Tensor> got = sess.run({y6, plain}, {{x, xv}});
  expect_same_bits(got[0], relu6(bias_add(matmul(xv, w), bias)));
  expect_same_bits(got[1], bias + matmul(xv, w));
}

// Elu and LeakyRelu (with its alpha), the other activations TensorFlow's remapper fuses.
TEST(BiasActivationFusionTest, EluAndLeakyReluWithItsAlphaFuse) {
  Graph g;
  Tensor x, e, l;
  const Tensor w = random_normal({6, 5}, 0.0, 1.0, DType::kFloat32, 71);
  const Tensor bias = random_normal({5}, 0.0, 1.0, DType::kFloat32, 72);
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {4, 6}, "x");
    e = elu(matmul(x, w) + bias);
    l = leaky_relu(matmul(x, w) + bias, 0.3);
  }
  Session sess(g);
  const Tensor xv = random_normal({4, 6}, 0.0, 1.0, DType::kFloat32, 73);
  EXPECT_THAT(fused_of(traced_kernel_stats(sess, e, {{x, xv}}), "Elu"), ElementsAre("MatMul", "Add", "Elu"));
  EXPECT_THAT(fused_of(traced_kernel_stats(sess, l, {{x, xv}}), "LeakyRelu"),
              ElementsAre("MatMul_1", "Add_1", "LeakyRelu"));
  const std::vector<Tensor> got = sess.run({e, l}, {{x, xv}});
  expect_same_bits(got[0], elu(matmul(xv, w) + bias));
  expect_same_bits(got[1], leaky_relu(matmul(xv, w) + bias, 0.3));
  EXPECT_LT(reduce_min(got[1]).item<float>(), 0.f);  // negative inputs present: alpha was applied
}

TEST(BiasActivationFusionTest, DepthwiseConvAndDoubleFuse) {
  Graph g;
  Tensor x, y;
  const Tensor filter = random_normal({3, 3, 3, 2}, 0.0, 1.0, DType::kFloat64, 31);
  const Tensor bias = random_normal({6}, 0.0, 1.0, DType::kFloat64, 32);
  const Tensor xv = random_normal({1, 5, 5, 3}, 0.0, 1.0, DType::kFloat64, 33);
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat64, {1, 5, 5, 3}, "x");
    y = relu(depthwise_conv2d(x, filter, {1, 1}, "VALID") + bias);
  }
  Session sess(g);
  EXPECT_THAT(fused_of(traced_kernel_stats(sess, y, {{x, xv}}), "Relu"),
              ElementsAre("DepthwiseConv2dNative", "Add", "Relu"));
  expect_same_bits(sess.run(y, {{x, xv}}), relu(depthwise_conv2d(xv, filter, {1, 1}, "VALID") + bias));
}

// Whatever else can see the product or the biased sum keeps its own step.
TEST(BiasActivationFusionTest, AnObservedIntermediateIsNotFusedAway) {
  Graph g;
  Tensor x, product, biased, y, twice, other, wrong_bias, broadcast_up;
  const Tensor w = random_normal({4, 3}, 0.0, 1.0, DType::kFloat32, 41);
  const Tensor bias({1.f, -2.f, 3.f});
  Operation after_product;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2, 4}, "x");
    product = matmul(x, w);           // fetched below
    y = relu(product + bias);
    Tensor p2 = matmul(x, w);         // read twice
    twice = relu(p2 + bias) + p2;
    Tensor p3 = matmul(x, w);         // a control edge waits on it
    other = relu(p3 + bias);
    {
      auto deps = control_dependencies({p3});
      after_product = no_op("after_product");
    }
    wrong_bias = relu(matmul(x, w) + Tensor({{1.f, 2.f, 3.f}}));  // rank 2: not a bias
    broadcast_up = relu(matmul(x, Tensor({{1.f}, {2.f}, {3.f}, {4.f}})) + bias);  // [2,1] + [3]
  }
  Session sess(g);
  const Tensor xv = random_normal({2, 4}, 0.0, 1.0, DType::kFloat32, 42);
  auto stats_of = [&](const std::vector<Tensor>& fetches, const std::vector<Operation>& targets = {}) {
    RunOptions options;
    options.trace_level = RunOptions::TraceLevel::kFullTrace;
    RunMetadata md;
    sess.run(std::vector<Fetch>(fetches.begin(), fetches.end()), {{x, xv}}, targets, &options, &md);
    return md.step_stats;
  };
  // The product fetched: nothing fuses (the epilogue starts at the product).
  const StepStats fetched = stats_of({product, y});
  for (const NodeExecStats& n : fetched.nodes) EXPECT_TRUE(n.fused_nodes.empty()) << fetched.to_string();
  const StepStats shared = stats_of({twice});
  for (const NodeExecStats& n : shared.nodes) EXPECT_TRUE(n.fused_nodes.empty()) << shared.to_string();
  const StepStats waited = stats_of({other}, {after_product});
  for (const NodeExecStats& n : waited.nodes) EXPECT_TRUE(n.fused_nodes.empty()) << waited.to_string();
  const StepStats shapes = stats_of({wrong_bias, broadcast_up});
  for (const NodeExecStats& n : shapes.nodes) EXPECT_TRUE(n.fused_nodes.empty()) << shapes.to_string();
  // And the values are the eager ones.
  const std::vector<Tensor> got = sess.run({product, y, twice, wrong_bias, broadcast_up}, {{x, xv}});
  const Tensor p = matmul(xv, w);
  expect_same_bits(got[1], relu(p + bias));
  expect_same_bits(got[2], relu(p + bias) + p);
  expect_same_bits(got[3], relu(p + Tensor({{1.f, 2.f, 3.f}})));
  expect_same_bits(got[4], relu(matmul(xv, Tensor({{1.f}, {2.f}, {3.f}, {4.f}})) + bias));
}

// The biased sum fetched, or waited on by a control edge: the product and the add still run as
// one step (the add last), the Relu on its own. A BiasAdd over NCHW's channel dim 1 is not a
// bias over the last dim: nothing fuses.
TEST(BiasActivationFusionTest, AnObservedSumEndsTheChainAtTheAddAndNchwIsLeftAlone) {
  Graph g;
  Tensor x, image, sum, y, sum2, y2, nchw;
  Operation after_sum;
  const Tensor w = random_normal({4, 3}, 0.0, 1.0, DType::kFloat32, 61);
  const Tensor bias({0.5f, -0.5f, 1.f});
  const Tensor filter = random_normal({1, 1, 2, 3}, 0.0, 1.0, DType::kFloat32, 63);
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2, 4}, "x");
    sum = matmul(x, w) + bias;
    y = relu(sum);
    sum2 = matmul(x, w) + bias;
    y2 = relu(sum2);
    {
      auto deps = control_dependencies({sum2});
      after_sum = no_op("after_sum");
    }
    // [1,3,3,3]: its last dim matches the bias too, but NCHW adds it along dim 1.
    image = placeholder(DType::kFloat32, {1, 3, 3, 2}, "image");
    nchw = relu(bias_add(conv2d(image, constant(filter), {1, 1}, "SAME"), bias, "NCHW"));
  }
  Session sess(g);
  const Tensor xv = random_normal({2, 4}, 0.0, 1.0, DType::kFloat32, 62);
  const Tensor iv = random_normal({1, 3, 3, 2}, 0.0, 1.0, DType::kFloat32, 64);
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata md;
  const std::vector<Tensor> got = sess.run({sum, y, y2, nchw}, {{x, xv}, {image, iv}}, {after_sum}, &options, &md);
  EXPECT_THAT(fused_of(md.step_stats, "Add"), ElementsAre("MatMul", "Add")) << md.step_stats.to_string();
  EXPECT_THAT(fused_of(md.step_stats, "Add_1"), ElementsAre("MatMul_1", "Add_1")) << md.step_stats.to_string();
  EXPECT_TRUE(fused_of(md.step_stats, "Relu").empty());
  EXPECT_TRUE(fused_of(md.step_stats, "Relu_1").empty());
  EXPECT_TRUE(fused_of(md.step_stats, "Relu_2").empty());
  EXPECT_TRUE(fused_of(md.step_stats, "BiasAdd").empty());
  const Tensor p = matmul(xv, w);
  expect_same_bits(got[0], p + bias);
  expect_same_bits(got[1], relu(p + bias));
  expect_same_bits(got[2], relu(p + bias));
  EXPECT_TRUE(fused_of(md.step_stats, "Conv2D").empty());
  expect_same_bits(got[3], relu(bias_add(conv2d(iv, filter, {1, 1}, "SAME"), bias, "NCHW")));
}

TEST(BiasActivationFusionTest, IntegerMatMulHasNoEpilogueKernelAndStaysUnfused) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kInt32, {2, 2}, "x");
    y = relu(matmul(x, Tensor({{1, -2}, {3, -4}})) + Tensor({1, 1}));
  }
  Session sess(g);
  const Tensor xv = Tensor({{1, 2}, {3, 4}});
  const StepStats stats = traced_kernel_stats(sess, y, {{x, xv}});
  for (const NodeExecStats& n : stats.nodes) EXPECT_TRUE(n.fused_nodes.empty()) << stats.to_string();
  EXPECT_EQ(sess.run(y, {{x, xv}}).to_vector<int32_t>(), (std::vector<int32_t>{8, 0, 16, 0}));
}

TEST(BiasActivationFusionTest, TwoFusedBranchesRunInParallel) {
  Graph g;
  Tensor x, y;
  const Tensor w1 = random_normal({8, 8}, 0.0, 1.0, DType::kFloat32, 51);
  const Tensor w2 = random_normal({8, 8}, 0.0, 1.0, DType::kFloat32, 52);
  const Tensor bias = random_normal({8}, 0.0, 1.0, DType::kFloat32, 53);
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {4, 8}, "x");
    Tensor left = relu(matmul(x, w1) + bias);
    Tensor right = relu6(matmul(x, w2) + bias);
    y = left + right;
  }
  SessionOptions options;
  options.inter_op_parallelism_threads = 2;
  Session sess(g, options);
  const Tensor xv = random_normal({4, 8}, 0.0, 1.0, DType::kFloat32, 54);
  const StepStats stats = traced_kernel_stats(sess, y, {{x, xv}});
  EXPECT_THAT(fused_of(stats, "Relu"), ElementsAre("MatMul", "Add", "Relu")) << stats.to_string();
  EXPECT_THAT(fused_of(stats, "Relu6"), ElementsAre("MatMul_1", "Add_1", "Relu6")) << stats.to_string();
  for (int i = 0; i < 20; ++i)
    expect_same_bits(sess.run(y, {{x, xv}}), relu(matmul(xv, w1) + bias) + relu6(matmul(xv, w2) + bias));
}

// A failing product is reported at its own node and line, as unfused.
TEST(BiasActivationFusionTest, AFailingProductNamesItsNode) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, -1}, "x");
    y = relu(matmul(x, constant(ones({3, 2}))) + Tensor({1.f, 2.f}));
  }
  Session sess(g);
  EXPECT_THAT(fused_of(traced_kernel_stats(sess, y, {{x, ones({2, 3})}}), "Relu"), ElementsAre("MatMul", "Add", "Relu"));
  const std::string message = error_of<InvalidArgumentError>([&] { sess.run(y, {{x, ones({2, 4})}}); });
  EXPECT_THAT(message, HasSubstr("[matmul]"));
  EXPECT_THAT(message, HasSubstr("in node 'MatMul' (MatMul) created at"));
  EXPECT_THAT(message, Not(HasSubstr("node 'Add'")));
  EXPECT_THAT(message, HasSubstr("bias_activation_fusion_test.cc"));
}

}  // namespace
}  // namespace tapeflow
