// gradients(ys, xs): the backward pass built into a graph with the tape's gradient functions.
// Values run through a Session must equal the eager GradientTape's on the same inputs.
#include "graph/gradients.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "graph/passes.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GradientsTest, PolynomialMatchesTheTape) {
  const Tensor x_value = {-1.5f, 0.f, 0.5f, 2.f};
  auto f = [](const Tensor& x) { return 3.f * x * x * x - 2.f * square(x) + x / 4.f - 1.f; };
  Graph g;
  Tensor x, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {4}, "x");
    dx = gradients({f(x)}, {x})[0];
  }
  EXPECT_EQ(dx.shape(), Shape({4}));
  Session sess(g);
  Tensor graph_dx = sess.run(dx, {{x, x_value}});

  GradientTape tape;
  tape.watch(x_value);
  Tensor y = f(x_value);
  expect_close(graph_dx, tape.gradient(y, x_value));
  // 9x^2 - 4x + 1/4 by hand.
  EXPECT_NEAR(graph_dx.to_vector<float>()[3], 9 * 4 - 8 + 0.25, 1e-5);
}

TEST(GradientsTest, MatmulRegressionLossMatchesTheTape) {
  const Tensor x_value = {{1.f, 2.f, 3.f}, {-1.f, 0.5f, 2.f}};
  const Tensor t_value = {{1.f, 0.f}, {0.f, 2.f}};
  const Tensor w_value = {{0.1f, -0.2f}, {0.3f, 0.4f}, {-0.5f, 0.6f}};
  const Tensor b_value = {0.25f, -0.75f};
  auto loss_of = [](const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& b) {
    return reduce_mean(square(matmul(x, w) + b - t));
  };
  Graph g;
  Tensor x, t, w, b;
  std::vector<Tensor> grads;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2, 3}, "x");
    t = placeholder(DType::kFloat32, {2, 2}, "t");
    w = placeholder(DType::kFloat32, {3, 2}, "w");
    b = placeholder(DType::kFloat32, {2}, "b");
    grads = gradients({loss_of(x, t, w, b)}, {x, w, b});
  }
  Session sess(g);
  auto got = sess.run({grads[0], grads[1], grads[2]}, {{x, x_value}, {t, t_value}, {w, w_value}, {b, b_value}});

  GradientTape tape;
  for (const Tensor& v : {x_value, w_value, b_value}) tape.watch(v);
  Tensor loss = loss_of(x_value, t_value, w_value, b_value);
  auto want = tape.gradient(loss, {x_value, w_value, b_value});
  for (int i = 0; i < 3; ++i) expect_close(got[i], want[i]);
}

TEST(GradientsTest, SoftmaxCrossEntropyMatchesTheTape) {
  const Tensor logits_value = {{2.f, -1.f, 0.5f}, {0.1f, 0.2f, 3.f}};
  const Tensor labels_value = {{0.f, 1.f, 0.f}, {0.2f, 0.3f, 0.5f}};
  const Tensor sparse_value = Tensor({2, 0});
  auto loss_of = [](const Tensor& labels, const Tensor& sparse, const Tensor& logits) {
    return reduce_mean(softmax_cross_entropy_with_logits(labels, logits)) +
           reduce_sum(sparse_softmax_cross_entropy_with_logits(sparse, logits * 2.f)) +
           reduce_sum(softmax(logits) * labels);
  };
  Graph g;
  Tensor logits, labels, sparse, dlogits, dlabels;
  {
    auto scope = g.as_default();
    logits = placeholder(DType::kFloat32, {2, 3}, "logits");
    labels = placeholder(DType::kFloat32, {2, 3}, "labels");
    sparse = placeholder(DType::kInt32, {2}, "sparse");
    auto d = gradients({loss_of(labels, sparse, logits)}, {logits, labels, sparse});
    dlogits = d[0];
    dlabels = d[1];
    EXPECT_FALSE(d[2].defined());  // integer labels carry no gradient
  }
  Session sess(g);
  auto got = sess.run({dlogits, dlabels}, {{logits, logits_value}, {labels, labels_value}, {sparse, sparse_value}});

  GradientTape tape;
  tape.watch(logits_value);
  tape.watch(labels_value);
  Tensor loss = loss_of(labels_value, sparse_value, logits_value);
  auto want = tape.gradient(loss, {logits_value, labels_value});
  expect_close(got[0], want[0]);
  expect_close(got[1], want[1]);
}

TEST(GradientsTest, BroadcastGradientsAreSummedBackToEachShape) {
  const Tensor a_value = {{{1.f, 2.f, 3.f}}, {{-1.f, 0.5f, 0.f}}};  // [2,1,3]
  const Tensor b_value = {{0.5f}, {1.f}, {-2.f}, {0.25f}};          // [4,1]
  const Tensor c_value = {0.1f, 0.2f, 0.3f};                        // [3]
  auto f = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    return reduce_sum(tanh(a * b + c) * (b - 1.f) / (c + 2.f));  // [2,4,3] inside
  };
  Graph g;
  Tensor a, b, c;
  std::vector<Tensor> grads;
  {
    auto scope = g.as_default();
    a = placeholder(DType::kFloat32, {2, 1, 3}, "a");
    b = placeholder(DType::kFloat32, {4, 1}, "b");
    c = placeholder(DType::kFloat32, {3}, "c");
    grads = gradients({f(a, b, c)}, {a, b, c});
  }
  EXPECT_EQ(grads[0].shape(), Shape({2, 1, 3}));
  EXPECT_EQ(grads[1].shape(), Shape({4, 1}));
  EXPECT_EQ(grads[2].shape(), Shape({3}));
  Session sess(g);
  auto got = sess.run({grads[0], grads[1], grads[2]}, {{a, a_value}, {b, b_value}, {c, c_value}});

  GradientTape tape;
  for (const Tensor& v : {a_value, b_value, c_value}) tape.watch(v);
  Tensor y = f(a_value, b_value, c_value);
  auto want = tape.gradient(y, {a_value, b_value, c_value});
  for (int i = 0; i < 3; ++i) expect_close(got[i], want[i]);
}

TEST(GradientsTest, SecondOrderGradientsOfACube) {
  Graph g;
  Tensor x, d1, d2, d3;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {3}, "x");
    Tensor y = x * x * x;
    d1 = gradients({y}, {x})[0];
    d2 = gradients({d1}, {x})[0];
    d3 = gradients({d2}, {x})[0];
  }
  Session sess(g);
  auto r = sess.run({d1, d2, d3}, {{x, {1.f, 2.f, -3.f}}});
  EXPECT_THAT(r[0].to_vector<float>(), ElementsAre(3.f, 12.f, 27.f));   // 3x^2
  EXPECT_THAT(r[1].to_vector<float>(), ElementsAre(6.f, 12.f, -18.f));  // 6x
  EXPECT_THAT(r[2].to_vector<float>(), ElementsAre(6.f, 6.f, 6.f));     // 6
}

TEST(GradientsTest, GradientOfAGraphVariableSumsOverItsReads) {
  Graph g;
  std::optional<Variable> w;
  Tensor by_variable, by_first_read, loss;
  {
    auto scope = g.as_default();
    w.emplace(Tensor({1.f, -2.f}), "w");
    Tensor first = w->read();
    loss = reduce_sum(first * first) + reduce_sum(3.f * w->read());  // w^2 + 3w over two reads
    auto d = gradients({loss}, std::vector<Variable>{*w});
    by_variable = d[0];
    by_first_read = gradients({loss}, {first})[0];
  }
  Session sess(g);
  sess.run(g.global_variables_initializer());
  EXPECT_THAT(sess.run(by_variable).to_vector<float>(), ElementsAre(5.f, -1.f));   // 2w + 3
  EXPECT_THAT(sess.run(by_first_read).to_vector<float>(), ElementsAre(2.f, -4.f));  // 2w

  // Trainable variables as a list, as an optimizer passes them; the same value as the tape's.
  Variable eager_w(Tensor({1.f, -2.f}), "w");
  GradientTape tape;
  Tensor r = eager_w.read();
  Tensor eager_loss = reduce_sum(r * r) + reduce_sum(3.f * eager_w.read());
  expect_close(sess.run(gradients({loss}, g.trainable_variables())[0]), tape.gradient(eager_loss, eager_w));
}

TEST(GradientsTest, VariablesCarriedOverByAPassAreSources) {
  Graph g;
  std::optional<Variable> w;
  Tensor loss;
  Operation init;
  {
    auto scope = g.as_default();
    w.emplace(Tensor({1.f, -2.f}), "w");
    loss = reduce_sum(square(w->read()));
    Tensor unused = loss * 3.f;
    init = g.global_variables_initializer();
  }
  PassResult pruned = prune(g, {loss}, {init});
  Tensor dw = gradients({pruned.map(loss)}, std::vector<Variable>{*w})[0];
  ASSERT_TRUE(dw.defined());
  Session sess(pruned.graph);
  sess.run(pruned.map(init));
  EXPECT_THAT(sess.run(dw).to_vector<float>(), ElementsAre(2.f, -4.f));
}

TEST(GradientsTest, GradYsWeightEachY) {
  Graph g;
  Tensor x, weights, dx, dx_fed, dx_two;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {3}, "x");
    weights = placeholder(DType::kFloat32, {3}, "weights");
    Tensor y = 2.f * x;
    dx = gradients({y}, {x}, {Tensor({1.f, 10.f, 100.f})})[0];
    dx_fed = gradients({y}, {x}, {weights})[0];
    // Two ys: d(sum(2x) * 1 + sum(x^2) * 0.5)/dx.
    dx_two = gradients({y, square(x)}, {x}, {ones({3}), fill({3}, 0.5f)})[0];
  }
  Session sess(g);
  EXPECT_THAT(sess.run(dx, {{x, {1.f, 2.f, 3.f}}}).to_vector<float>(), ElementsAre(2.f, 20.f, 200.f));
  EXPECT_THAT(sess.run(dx_fed, {{x, {1.f, 2.f, 3.f}}, {weights, {-1.f, 0.f, 1.f}}}).to_vector<float>(),
              ElementsAre(-2.f, 0.f, 2.f));
  EXPECT_THAT(sess.run(dx_two, {{x, {1.f, 2.f, 3.f}}}).to_vector<float>(), ElementsAre(3.f, 4.f, 5.f));
}

TEST(GradientsTest, GradYsMustMatchTheirYs) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {3}, "x");
  Tensor y = 2.f * x;
  EXPECT_THAT(error_of([&] { gradients({y}, {x}, {Tensor({1.f, 2.f})}); }),
              HasSubstr("[gradients] grad_ys[0] has dtype float32 and shape [2]"));
  EXPECT_THAT(error_of([&] { gradients({y}, {x}, {Tensor({1, 2, 3})}); }), HasSubstr("grad_ys[0] has dtype int32"));
  EXPECT_THAT(error_of([&] { gradients({y}, {x}, {ones({3}), ones({3})}); }), HasSubstr("got 2 grad_ys for 1 ys"));
}

TEST(GradientsTest, UnconnectedSourcesGetNothingZerosOrAnError) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {2}, "x");
  Tensor unused = placeholder(DType::kFloat32, {2, 2}, "unused");
  Tensor stopped = placeholder(DType::kFloat32, {2}, "stopped");
  Tensor y = square(x) + stop_gradient(stopped) + cast(argmax(stopped, 0), DType::kFloat32);
  auto none = gradients({y}, {x, unused, stopped});
  EXPECT_TRUE(none[0].defined());
  EXPECT_FALSE(none[1].defined());
  EXPECT_FALSE(none[2].defined());
  auto zero = gradients({y}, {x, unused}, {}, Unconnected::kZero);
  ASSERT_TRUE(zero[1].defined());
  EXPECT_EQ(zero[1].shape(), Shape({2, 2}));
  Session sess(g);
  EXPECT_THAT(sess.run(zero[1]).to_vector<float>(), ElementsAre(0.f, 0.f, 0.f, 0.f));
  // The seed is ones_like(y), so y's inputs are needed (Note [Gradient seeds] in gradients.cc).
  EXPECT_THAT(sess.run(none[0], {{x, {1.f, 2.f}}, {stopped, {0.f, 0.f}}}).to_vector<float>(), ElementsAre(2.f, 4.f));
  EXPECT_THAT(error_of([&] { gradients({y}, {unused}, {}, Unconnected::kError); }),
              HasSubstr("[gradients] xs[0] (tensor 'unused:0') is not connected to the ys"));
  Variable never_read(Tensor(1.f), "never_read");
  EXPECT_THAT(error_of([&] { gradients({y}, {never_read}, {}, Unconnected::kError); }),
              HasSubstr("the graph never reads the variable"));
}

TEST(GradientsTest, BackwardNodesLiveUnderGradientsScopes) {
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {2}, "x");
  Tensor y;
  {
    auto layer = name_scope("layer");
    y = square(x);
  }
  Tensor dx;
  {
    auto named = op_name("ignored_for_gradients");
    dx = gradients({y}, {x})[0];
  }
  Tensor dx2 = gradients({y}, {x})[0];
  EXPECT_THAT(dx.name(), ::testing::StartsWith("gradients/layer/Square_grad/"));
  EXPECT_THAT(dx2.name(), ::testing::StartsWith("gradients_1/layer/Square_grad/"));
  EXPECT_GE(g.get_operation_by_name("gradients/OnesLike").id(), 0);
}

TEST(GradientsTest, PrintPassesGradientsThrough) {
  Graph g;
  Tensor x, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    Tensor y = square(print(x, {}, "forward"));
    dx = gradients({y}, {x})[0];
  }
  ASSERT_TRUE(dx.defined());
  Session sess(g);
  testing::internal::CaptureStderr();
  EXPECT_THAT(sess.run(dx, {{x, {1.f, -3.f}}}).to_vector<float>(), ElementsAre(2.f, -6.f));
  testing::internal::GetCapturedStderr();
}

TEST(GradientsTest, UnknownDimsWorkWhereGradientsNeedNoRuntimeShape) {
  const Tensor x_value = {{{1.f, 2.f, 3.f}, {0.f, -1.f, 2.f}}, {{0.5f, 0.5f, 0.5f}, {1.f, 1.f, -1.f}}};
  const Tensor w_value = {{1.f, -1.f}, {0.5f, 2.f}, {0.f, 1.f}};
  const Tensor b_value = {0.1f, -0.2f};
  auto f = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    // [n, m, 3] -> row sums [n, m] (two unknown dims kept) and an affine map broadcast over
    // the batch dims (its weight gradient is summed over them).
    Tensor rows = reduce_sum(x * x, {2});
    Tensor z = matmul(x, w) + b;
    return reduce_sum(rows * 0.5f) + reduce_sum(tanh(z));
  };
  Graph g;
  Tensor x;
  std::vector<Tensor> grads;
  std::optional<Variable> w, b;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, -1, 3}, "x");
    w.emplace(w_value, "w");
    b.emplace(b_value, "b");
    grads = gradients({f(x, *w, *b)}, {x, *w, *b});
  }
  EXPECT_EQ(grads[0].shape(), Shape({-1, -1, 3}));
  EXPECT_EQ(grads[2].shape(), Shape({2}));
  Session sess(g);
  sess.run(g.global_variables_initializer());
  auto got = sess.run({grads[0], grads[1], grads[2]}, {{x, x_value}});

  Variable ew(w_value, "w"), eb(b_value, "b");
  GradientTape tape;
  tape.watch(x_value);
  Tensor y = f(x_value, ew, eb);
  auto want = tape.gradient(y, {x_value, ew, eb});
  for (int i = 0; i < 3; ++i) expect_close(got[i], want[i]);
}

// A differentiable op type with no gradient function (never run: only built).
absl::StatusOr<OutputSpecs> same_as_input(const InferenceContext& ctx) {
  return single_output(ctx.inputs[0].dtype, ctx.inputs[0].shape);
}
OpDef kNoGradientOp{.type = "NoGradientForTest", .api_name = "no_gradient_for_test", .num_inputs = 1,
                    .infer = same_as_input};

TEST(GradientsTest, ErrorsNameTheTensorsAndNodes) {
  Graph g, other;
  Tensor foreign;
  {
    auto scope = other.as_default();
    foreign = placeholder(DType::kFloat32, {2}, "foreign");
  }
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {2}, "x");
  Tensor y = square(x);
  EXPECT_THAT(error_of([&] { gradients({y}, {foreign}); }),
              HasSubstr("[gradients] xs[0] is tensor 'foreign:0', which is not a tensor of the graph being built"));
  EXPECT_THAT(error_of([&] { gradients({foreign}, {x}); }), HasSubstr("ys[0] is tensor 'foreign:0'"));
  EXPECT_THAT(error_of([&] { gradients({y}, {Tensor({1.f, 2.f})}); }),
              HasSubstr("xs[0] is a concrete (eager) tensor"));
  EXPECT_THAT(error_of([&] { gradients({}, {x}); }), HasSubstr("ys is empty"));

  Tensor z = execute_single(kNoGradientOp, {y}, {}, std::source_location::current());
  const int line = __LINE__ - 1;
  Tensor loss = reduce_sum(z);
  try {
    gradients({loss}, {x});
    FAIL() << "no error";
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr("No gradient is defined for node 'NoGradientForTest' (NoGradientForTest)"));
    EXPECT_THAT(e.what(), HasSubstr(absl::StrCat("gradients_test.cc:", line)));
  }
  // Not on the path between y and x: no error.
  EXPECT_TRUE(gradients({y}, {x})[0].defined());
}

// A gradient function that fails while the backward graph is built: the error keeps its type and
// says which node's gradient it was and where gradients() was called.
OpDef kGradientFailsOp{.type = "GradientFailsForTest", .api_name = "gradient_fails_for_test", .num_inputs = 1,
                       .infer = same_as_input};
GradList failing_gradient(const GradInputs&, absl::Span<const Tensor>) {
  throw InvalidArgumentError("[gradient_fails_for_test] cannot build this gradient");
}

TEST(GradientsTest, AGradientFunctionsErrorNamesTheNodeAndTheCall) {
  register_gradient(kGradientFailsOp.type, failing_gradient);
  Graph g;
  auto scope = g.as_default();
  Tensor x = placeholder(DType::kFloat32, {2}, "x");
  Tensor loss = reduce_sum(execute_single(kGradientFailsOp, {square(x)}, {}, std::source_location::current()));
  const std::string message = error_of<InvalidArgumentError>([&] { gradients({loss}, {x}); });
  const int line = __LINE__ - 1;
  EXPECT_THAT(message, HasSubstr("[gradient_fails_for_test] cannot build this gradient"));
  EXPECT_THAT(message, HasSubstr("while building the gradient of node 'GradientFailsForTest' (GradientFailsForTest)"));
  EXPECT_THAT(message, HasSubstr(absl::StrCat("asked at gradients_test.cc:", line)));
}

TEST(GradientsTest, EagerlyItAsksForAGraphTensor) {
  Tensor x = {1.f, 2.f};
  EXPECT_THAT(error_of([&] { gradients({square(x)}, {x}); }), HasSubstr("eagerly, use a GradientTape"));
  // Outside a graph scope, symbolic ys bring their graph.
  Graph g;
  Tensor p, y;
  {
    auto scope = g.as_default();
    p = placeholder(DType::kFloat32, {2}, "p");
    y = square(p);
  }
  Tensor dp = gradients({y}, {p})[0];
  Session sess(g);
  EXPECT_THAT(sess.run(dp, {{p, {1.f, 2.f}}}).to_vector<float>(), ElementsAre(2.f, 4.f));
}

}  // namespace
}  // namespace tapeflow
