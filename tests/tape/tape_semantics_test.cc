// TensorFlow's rules for what a tape differentiates: only watched tensors (and trainable
// variables read under it) are sources, and a tape belongs to its thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

TEST(TapeSemanticsTest, AnUnwatchedConstantSourceGetsNoGradient) {
  const Tensor x = {1.0, 2.0};  // never watched
  const Tensor w = {3.0, 4.0};
  GradientTape tape(/*persistent=*/true);
  tape.watch(w);
  Tensor y = reduce_sum(x * w);
  std::vector<Tensor> g = tape.gradient(y, {x, w});
  EXPECT_FALSE(g[0].defined());  // TensorFlow: None
  EXPECT_EQ(g[1].to_vector<double>(), (std::vector<double>{1.0, 2.0}));
  std::vector<Tensor> z = tape.gradient(y, {x, w}, Tensor(), Unconnected::kZero);
  EXPECT_EQ(z[0].to_vector<double>(), (std::vector<double>{0.0, 0.0}));
}

TEST(TapeSemanticsTest, ATapeAskedFromAnotherThreadSaysSo) {
  const Tensor x = {1.0};
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  std::string message;
  std::thread other([&] { message = error_of<FailedPreconditionError>([&] { tape.gradient(y, x); }); });
  other.join();
  EXPECT_THAT(message, HasSubstr("belongs to another thread"));
  EXPECT_THAT(message, HasSubstr("tape_semantics_test.cc:"));
  EXPECT_EQ(tape.gradient(y, x).item<double>(), 2.0);  // still usable on its own thread
}

TEST(TapeSemanticsTest, ATargetReachedOnlyThroughNonDifferentiableOpsHasNoGradient) {
  const Tensor x = {1.5f, 2.5f};
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  const Tensor y = cast(cast(x, DType::kInt32), DType::kFloat32) * 2.f;  // a path with no gradient
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_FALSE(tape.gradient(y, x).defined());  // TensorFlow: None
  EXPECT_EQ(tape.gradient(y, x, Tensor(), Unconnected::kZero).to_vector<float>(), (std::vector<float>{0.f, 0.f}));
  EXPECT_THAT(error_of([&] { tape.gradient(y, x, Tensor(), Unconnected::kError); }),
              HasSubstr("only through ops that have no gradient"));
  // stop_gradient and a comparison are such paths too.
  EXPECT_FALSE(tape.gradient(reduce_sum(stop_gradient(x) * 3.f), x).defined());
  EXPECT_FALSE(tape.gradient(cast(greater(x, 2.f), DType::kFloat32), x).defined());
}

TEST(TapeSemanticsTest, AWatchedIntegerTensorLeadsToNoGradientNotAnError) {
  const Tensor ids = {1, 2};
  GradientTape tape;
  tape.watch(ids);  // integers have no gradient; the tape notes what they reach
  const Tensor y = cast(ids, DType::kFloat32) * 2.f;
  EXPECT_FALSE(tape.gradient(y, ids).defined());
}

TEST(TapeSemanticsTest, ATargetOfAnotherTapeNamesThatTape) {
  const Tensor x = {1.0};
  GradientTape first;
  first.watch(x);
  const int line = __LINE__; GradientTape second;
  const Tensor y = x * 3.0;  // recorded by first (which watches x); second watches nothing
  const std::string message = error_of([&] { second.gradient(y, x); });
  EXPECT_THAT(message, HasSubstr("was recorded by another tape"));
  EXPECT_THAT(message, HasSubstr("not by this one (created at tape_semantics_test.cc:" + std::to_string(line)));
  EXPECT_EQ(first.gradient(y, x).item<double>(), 3.0);
}

TEST(TapeSemanticsTest, ATargetComputedBeforeTheTapeStartedIsStillAnError) {
  const Tensor x = {1.0};
  const Tensor before = x * 2.0;
  GradientTape tape;
  tape.watch(x);
  EXPECT_THAT(error_of([&] { tape.gradient(before, x); }),
              HasSubstr("it was computed before the tape started, or from no tensor the tape watches"));
}

// Note [Unconnected gradients]: the gradient of a source the target does not depend on is empty
// (a user's `if (!g.defined())` sees None, as in TensorFlow), and an op given it says whose
// gradient it is, where gradient() was asked, and the op's own line.
TEST(TapeSemanticsTest, AnUnconnectedGradientIsEmptyAndAnOpGivenItSaysWhereItWasAsked) {
  Variable w(Tensor{1.f, 2.f}, "w");
  const int created = __LINE__; Variable b(Tensor{3.f, 4.f}, "b");
  GradientTape tape(/*persistent=*/true);
  const Tensor loss = reduce_sum(w * w);  // b is not used
  const int asked = __LINE__; std::vector<Tensor> g = tape.gradient(loss, {w, b});
  ASSERT_TRUE(g[0].defined());
  EXPECT_FALSE(g[1].defined());  // the None check users write
  if (!g[1].defined()) SUCCEED();
  EXPECT_EQ(g[1].impl(), nullptr);
  ASSERT_NE(g[1].unconnected(), nullptr);
  EXPECT_EQ(g[1].unconnected()->source_index, 1);
  EXPECT_EQ(g[1].unconnected()->asked_at.line(), static_cast<uint_least32_t>(asked));
  EXPECT_EQ(g[0].unconnected(), nullptr);
  EXPECT_EQ(Tensor().unconnected(), nullptr);
  const Tensor copy = g[1];  // copies keep the record
  ASSERT_NE(copy.unconnected(), nullptr);

  const std::string file = "tape_semantics_test.cc:";
  const std::string whose = "the gradient of source 1 (variable 'b' created at " + file + std::to_string(created) +
                            ") that the target does not depend on (an unconnected gradient, asked at " + file +
                            std::to_string(asked) + "); pass Unconnected::kZero to get zeros";
  auto op_line = [&](int line) { return "(at " + file + std::to_string(line) + ")"; };
  // The eager context's one input check, whichever op and operand it is.
  const int add_line = __LINE__; const std::string e1 = error_of([&] { (void)add(g[0], copy); });
  EXPECT_THAT(e1, HasSubstr("[add] input 1 is " + whose));
  EXPECT_THAT(e1, HasSubstr(op_line(add_line)));
  const int square_line = __LINE__; const std::string e2 = error_of([&] { (void)square(g[1]); });
  EXPECT_THAT(e2, HasSubstr("[square] input 0 is " + whose));
  EXPECT_THAT(e2, HasSubstr(op_line(square_line)));
  const int scalar_line = __LINE__; const std::string e3 = error_of([&] { (void)(0.5f * g[1]); });
  EXPECT_THAT(e3, HasSubstr("[mul] input 'y' is " + whose));
  EXPECT_THAT(e3, HasSubstr(op_line(scalar_line)));
  // Accessors and printing say so too.
  const int item_line = __LINE__; const std::string e4 = error_of([&] { (void)g[1].item<float>(); });
  EXPECT_THAT(e4, HasSubstr("[item] The tensor is " + whose));
  EXPECT_THAT(e4, HasSubstr(op_line(item_line)));
  EXPECT_THAT(error_of([&] { (void)g[1].shape(); }), HasSubstr("[tensor] The tensor is " + whose));
  EXPECT_EQ(g[1].to_string(), "tapeflow.Tensor(<empty: the unconnected gradient of source 1, asked at " + file +
                                  std::to_string(asked) + ">)");
  // A graph being built refuses it the same way.
  {
    Graph graph;
    auto scope = graph.as_default();
    const Tensor p = placeholder(DType::kFloat32, {2}, "p");
    EXPECT_THAT(error_of([&] { (void)add(p, g[1]); }), HasSubstr("[add] input 1 is " + whose));
  }
  // A plain empty tensor still says only that.
  EXPECT_THAT(error_of([&] { (void)add(g[0], Tensor()); }), HasSubstr("[add] input 1 is an empty tensor"));
  // Unconnected::kZero still gives zeros; the connected gradient is unaffected.
  EXPECT_EQ(tape.gradient(loss, {w, b}, Tensor(), Unconnected::kZero)[1].to_vector<float>(),
            (std::vector<float>{0.f, 0.f}));
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{2.f, 4.f}));
}

TEST(TapeSemanticsTest, AnUnconnectedTensorSourceIsNamedByWhereItWasMade) {
  const int made = __LINE__; const Tensor x = ones({2});  // an op's output knows its line
  const Tensor w = ones({2}) * 3.f;
  GradientTape tape;
  tape.watch(x);
  tape.watch(w);
  const Tensor y = reduce_sum(w * w);
  const int asked = __LINE__; const Tensor gx = tape.gradient(y, x);
  EXPECT_FALSE(gx.defined());
  EXPECT_THAT(error_of([&] { (void)(gx + 1.f); }),
              HasSubstr("[add] input 0 is the gradient of source 0 (made at tape_semantics_test.cc:" +
                        std::to_string(made) + ") that the target does not depend on (an unconnected gradient, "
                        "asked at tape_semantics_test.cc:" + std::to_string(asked) + ")"));
}

TEST(TapeSemanticsTest, SymbolicGradientsMarkTheirUnconnectedGradientsToo) {
  Graph graph;
  auto scope = graph.as_default();
  const Tensor x = placeholder(DType::kFloat32, {2}, "x");
  const Tensor z = placeholder(DType::kFloat32, {2}, "z");
  const Tensor y = reduce_sum(x * x);
  const int asked = __LINE__; const std::vector<Tensor> d = gradients({y}, {x, z});
  ASSERT_TRUE(d[0].defined());
  EXPECT_FALSE(d[1].defined());
  EXPECT_THAT(error_of([&] { (void)(d[1] + 1.f); }),
              HasSubstr("[add] input 0 is the gradient of source 1 (tensor 'z:0') that the target does not depend "
                        "on (an unconnected gradient, asked at tape_semantics_test.cc:" + std::to_string(asked) + ")"));
}

// Composite ops check their inputs before any primitive runs; they name an unconnected
// gradient as such too, not as "an empty tensor".
TEST(TapeSemanticsTest, CompositeOpsAlsoNameAnUnconnectedGradient) {
  Variable w(Tensor{{1.f, 2.f}}, "w");
  Variable unused(Tensor{{3.f, 4.f}}, "unused");
  GradientTape tape;
  const std::vector<Tensor> g = tape.gradient(reduce_sum(w * w), {w, unused});
  ASSERT_FALSE(g[1].defined());
  const Tensor none = g[1];
  Variable target(Tensor{{0.f, 0.f}}, "target");
  const std::vector<std::pair<const char*, std::function<void()>>> uses = {
      {"[reduce_mean]", [&] { (void)reduce_mean(none); }},
      {"[softmax]", [&] { (void)softmax(none); }},
      {"[softmax_cross_entropy_with_logits]", [&] { (void)softmax_cross_entropy_with_logits(none, w.read()); }},
      {"[fill]", [&] { (void)fill({2}, none); }},
      {"[einsum]", [&] { (void)einsum("ij,jk->ik", none, w.read()); }},
      {"[assign]", [&] { (void)target.assign(none); }},
  };
  for (const auto& [op, use] : uses) {
    const std::string message = error_of(use);
    EXPECT_THAT(message, HasSubstr(op)) << message;
    EXPECT_THAT(message, HasSubstr("an unconnected gradient")) << op << ": " << message;
    EXPECT_THAT(message, HasSubstr("variable 'unused'")) << op << ": " << message;
  }
  EXPECT_EQ(target.read().to_vector<float>(), (std::vector<float>{0.f, 0.f}));  // unchanged
}

}  // namespace
}  // namespace tapeflow
