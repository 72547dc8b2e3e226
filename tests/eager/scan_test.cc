// The scan family (eager/ops/scan.h): cumsum and cumprod with TensorFlow's exclusive and reverse
// attributes, along any axis, their gradients, errors, and a Session run of a GraphDef that
// carries TensorFlow's Cumsum node.
#include "eager/ops/scan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ScanTest, CumsumAndCumprodWithEveryFlag) {
  const Tensor x = {1, 2, 3, 4};
  EXPECT_THAT(cumsum(x).to_vector<int32_t>(), ElementsAre(1, 3, 6, 10));
  EXPECT_THAT(cumsum(x, 0, true).to_vector<int32_t>(), ElementsAre(0, 1, 3, 6));
  EXPECT_THAT(cumsum(x, 0, false, true).to_vector<int32_t>(), ElementsAre(10, 9, 7, 4));
  EXPECT_THAT(cumsum(x, 0, true, true).to_vector<int32_t>(), ElementsAre(9, 7, 4, 0));
  EXPECT_THAT(cumprod(x).to_vector<int32_t>(), ElementsAre(1, 2, 6, 24));
  EXPECT_THAT(cumprod(x, 0, true).to_vector<int32_t>(), ElementsAre(1, 1, 2, 6));
  EXPECT_THAT(cumprod(x, -1, true, true).to_vector<int32_t>(), ElementsAre(24, 12, 4, 1));
}

TEST(ScanTest, AlongInnerAndOuterAxes) {
  const Tensor x = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
  EXPECT_THAT(cumsum(x, 0).to_vector<double>(), ElementsAre(1.0, 2.0, 3.0, 5.0, 7.0, 9.0));
  EXPECT_THAT(cumsum(x, 1).to_vector<double>(), ElementsAre(1.0, 3.0, 6.0, 4.0, 9.0, 15.0));
  EXPECT_THAT(cumprod(x, -1, false, true).to_vector<double>(), ElementsAre(6.0, 6.0, 3.0, 120.0, 30.0, 6.0));
  EXPECT_EQ(cumsum(x, 1).shape(), (Shape{2, 3}));
  EXPECT_EQ(cumsum(zeros({2, 0}), 1).shape(), (Shape{2, 0}));
  // A long axis split over many columns: every column sums to its row count.
  EXPECT_EQ(cumsum(ones({1000, 3000}), 0).to_vector<float>().back(), 1000.f);
  EXPECT_THAT(cumsum(Tensor{2147483647, 1}).to_vector<int32_t>(), ElementsAre(2147483647, -2147483648));  // wraps
}

TEST(ScanTest, GradientsRunTheScanBackwards) {
  const Tensor x = {1.0, 2.0, 3.0};
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  const Tensor s = reduce_sum(cumsum(x) * Tensor{1.0, 10.0, 100.0});
  EXPECT_THAT(tape.gradient(s, x).to_vector<double>(), ElementsAre(111.0, 110.0, 100.0));
  const Tensor p = reduce_sum(cumprod(x, 0, true));  // 1 + x0 + x0 x1
  EXPECT_THAT(tape.gradient(p, x).to_vector<double>(), ElementsAre(3.0, 1.0, 0.0));
}

TEST(ScanTest, ErrorsNameTheOpAndTheLine) {
  EXPECT_THAT(error_of([] { cumsum(Tensor{1.f, 2.f}, 1); }),
              AllOf(HasSubstr("[cumsum]"), HasSubstr("axis 1"), HasSubstr("scan_test.cc:")));
  EXPECT_THAT(error_of([] { cumprod(Tensor(3.f)); }), HasSubstr("[cumprod] input 'x' must have rank >= 1"));
  EXPECT_THAT(error_of([] { cumsum(Tensor{true}); }), AllOf(HasSubstr("[cumsum]"), HasSubstr("bool")));
}

TEST(ScanTest, GraphsAndGraphDefsCarryTensorFlowsNodes) {
  Graph g;
  Tensor x, y, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat64, {2, -1}, "x");
    y = cumprod(cumsum(x, 1, true, true) + 1.0, 0, false, true);
    EXPECT_EQ(y.shape(), (Shape{2, -1}));
    dx = gradients({reduce_sum(y)}, {x})[0];
  }
  const GraphDef def = to_graph_def(g);
  // The forward Cumsum (exclusive, reverse), its gradient (exclusive, forward) and the one in
  // Cumprod's gradient (inclusive, forward: cumprod's flags with reverse flipped).
  int forward = 0, cumsum_grad = 0, cumprod_grad = 0;
  for (const auto& n : def.node()) {
    if (n.op() != "Cumsum") continue;
    const bool exclusive = n.attr().at("exclusive").b(), reverse = n.attr().at("reverse").b();
    forward += exclusive && reverse;
    cumsum_grad += exclusive && !reverse;
    cumprod_grad += !exclusive && !reverse;
  }
  EXPECT_EQ(forward, 1);
  EXPECT_EQ(cumsum_grad, 1);
  EXPECT_EQ(cumprod_grad, 1);
  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  const Tensor xv = {{1.0, 2.0, 3.0}, {0.5, -1.0, 2.0}};
  Tensor eager_dx;
  {
    GradientTape tape;
    tape.watch(xv);
    eager_dx = tape.gradient(reduce_sum(cumprod(cumsum(xv, 1, true, true) + 1.0, 0, false, true)), xv);
  }
  Session a(g), b(back);
  const Tensor want = cumprod(cumsum(xv, 1, true, true) + 1.0, 0, false, true);
  expect_close(a.run(y, {{x, xv}}), want, 1e-15);
  expect_close(b.run(back.get_tensor_by_name(y.name()), {{back.get_tensor_by_name("x:0"), xv}}), want, 1e-15);
  expect_close(a.run(dx, {{x, xv}}), eager_dx, 1e-12);
}

}  // namespace
}  // namespace tapeflow
