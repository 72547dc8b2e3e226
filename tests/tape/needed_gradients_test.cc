// The backward pass computes only the input gradients that lead to a source
// (GradInputs::needs): the ops it runs, counted with an observer, and the values it returns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;

// Counts the ops run while registered, by type.
class OpCounter final : public OpObserver {
 public:
  OpCounter() { add_op_observer(this); }
  ~OpCounter() override { remove_op_observer(this); }
  void on_op(const OpCall& call, absl::Span<const Tensor>) override { ++counts[call.op.type]; }
  void on_variable_read(const Variable&, const Tensor&) override {}
  std::map<std::string, int> counts;
};

TEST(NeededGradientsTest, MatmulSkipsTheConstantInput) {
  const Tensor x = {{1.f, 2.f}};           // [1, 2], a constant
  Variable w(Tensor{{3.f}, {4.f}}, "w");   // [2, 1]
  GradientTape tape;
  const Tensor y = reduce_sum(matmul(x, w));
  std::vector<Tensor> g;
  {
    OpCounter counter;
    g = tape.gradient(y, std::vector<Source>{w});
    EXPECT_EQ(counter.counts["MatMul"], 1);  // x^T g only, not g w^T
  }
  EXPECT_THAT(g[0].to_vector<float>(), ElementsAre(1.f, 2.f));
}

TEST(NeededGradientsTest, BinaryOpsSkipInputsThatReachNoSource) {
  const Tensor x = {1.0, 2.0};
  const Tensor c = {3.0, 5.0};
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  tape.watch(c);
  const Tensor y = x * c;  // both watched, but each gradient call asks for one
  {
    OpCounter counter;
    EXPECT_THAT(tape.gradient(y, x).to_vector<double>(), ElementsAre(3.0, 5.0));
    EXPECT_EQ(counter.counts["Mul"], 1);
  }
  {
    OpCounter counter;
    const std::vector<Tensor> both = tape.gradient(y, {x, c});
    EXPECT_EQ(counter.counts["Mul"], 2);
    EXPECT_THAT(both[1].to_vector<double>(), ElementsAre(1.0, 2.0));
  }
}

TEST(NeededGradientsTest, FirstConvLayerSkipsTheImageGradient) {
  const Tensor images = ones({1, 3, 3, 1});
  Variable f(ones({2, 2, 1, 1}), "f");
  GradientTape tape;
  const Tensor y = reduce_sum(conv2d(images, f, {1, 1}, "VALID"));
  OpCounter counter;
  const Tensor g = tape.gradient(y, Source(f));
  EXPECT_EQ(counter.counts["Conv2DBackpropInput"], 0);
  EXPECT_EQ(counter.counts["Conv2DBackpropFilter"], 1);
  EXPECT_THAT(g.to_vector<float>(), ElementsAre(4.f, 4.f, 4.f, 4.f));  // each tap sees 4 windows
}

TEST(NeededGradientsTest, SecondOrderThroughSkippedInputs) {
  // y = x * c with only x watched by the inner tape: the inner backward skips c's gradient, and
  // the outer tape still differentiates what the inner one computed: d/dc (dy/dx) = 1.
  Tensor x = {2.0};
  Tensor c = {3.0};
  GradientTape outer;
  outer.watch(c);
  Tensor dydx;
  {
    GradientTape inner;
    inner.watch(x);
    dydx = inner.gradient(x * c, x);
  }
  EXPECT_THAT(dydx.to_vector<double>(), ElementsAre(3.0));
  EXPECT_THAT(outer.gradient(dydx, c).to_vector<double>(), ElementsAre(1.0));
}

}  // namespace
}  // namespace tapeflow
