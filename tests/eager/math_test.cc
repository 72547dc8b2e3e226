// The math family (eager/ops/math.h): values against known results, dtypes, errors that name
// the op and the user's line, graph nodes under TensorFlow's op type names, a Session run, a
// GraphDef round trip and second-order gradients.
#include "eager/ops/math.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MathTest, UnaryValues) {
  expect_close(reciprocal(Tensor{2.0, -0.5, 4.0}), Tensor{0.5, -2.0, 0.25}, 0);
  EXPECT_DOUBLE_EQ(expm1(Tensor{1e-10}).item<double>(), 1.00000000005e-10);  // exp(x) - 1 would lose it
  expect_close(sin(Tensor{0.0, M_PI / 6, -M_PI / 2}), Tensor{0.0, 0.5, -1.0}, 1e-15);
  expect_close(cos(Tensor{0.0, M_PI / 3, M_PI}), Tensor{1.0, 0.5, -1.0}, 1e-15);
  expect_close(tan(Tensor{0.0, M_PI / 4}), Tensor{0.0, 1.0}, 1e-15);
  expect_close(asin(Tensor{0.0, 0.5, -1.0}), Tensor{0.0, M_PI / 6, -M_PI / 2}, 1e-15);
  expect_close(acos(Tensor{1.0, 0.5, -1.0}), Tensor{0.0, M_PI / 3, M_PI}, 1e-15);
  expect_close(atan(Tensor{0.0, 1.0, -1.0}), Tensor{0.0, M_PI / 4, -M_PI / 4}, 1e-15);
  expect_close(sinh(Tensor{0.0, 1.0}), Tensor{0.0, (M_E - 1 / M_E) / 2}, 1e-15);
  expect_close(cosh(Tensor{0.0, 1.0}), Tensor{1.0, (M_E + 1 / M_E) / 2}, 1e-15);
  expect_close(asinh(Tensor{0.0, (M_E - 1 / M_E) / 2}), Tensor{0.0, 1.0}, 1e-15);
  expect_close(acosh(Tensor{1.0, (M_E + 1 / M_E) / 2}), Tensor{0.0, 1.0}, 1e-15);
  expect_close(atanh(Tensor{0.0, 0.5}), Tensor{0.0, 0.5 * std::log(3.0)}, 1e-15);
  // Outside the domain: NaN (and +-inf at atanh's ends), float32 kept.
  const std::vector<float> outside = asin(Tensor{2.f}).to_vector<float>();
  EXPECT_TRUE(std::isnan(outside[0]));
  EXPECT_TRUE(std::isnan(acosh(Tensor{0.5}).to_vector<double>()[0]));
  EXPECT_EQ(atanh(Tensor{1.f, -1.f}).to_vector<float>(),
            (std::vector<float>{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}));
  EXPECT_EQ(atan(Tensor{1.f}).dtype(), DType::kFloat32);
  // atan2(y, x) in each quadrant, on the axes and at the origin; a scalar broadcasts.
  expect_close(atan2(Tensor{1.0, 1.0, -1.0, -1.0, 1.0, -1.0, 0.0, 0.0}, Tensor{1.0, -1.0, -1.0, 1.0, 0.0, 0.0, -1.0, 0.0}),
               Tensor{M_PI / 4, 3 * M_PI / 4, -3 * M_PI / 4, -M_PI / 4, M_PI / 2, -M_PI / 2, M_PI, 0.0}, 1e-15);
  expect_close(atan2(Tensor{{1.f}, {-1.f}}, 2.f), Tensor{{std::atan2(1.f, 2.f)}, {std::atan2(-1.f, 2.f)}}, 1e-7);
  EXPECT_THAT(error_of([] { atan2(Tensor{1, 2}, Tensor{1, 2}); }), HasSubstr("[atan2]"));
  // check_numerics passes finite values on and names the first NaN or infinity with its message.
  EXPECT_EQ(check_numerics(Tensor{1.f, 2.f}, "logits").to_vector<float>(), (std::vector<float>{1.f, 2.f}));
  EXPECT_THAT(error_of([] { check_numerics(Tensor{{1.0, 2.0}, {std::nan(""), 0.0}}, "logits"); }),
              HasSubstr("[check_numerics] logits : Tensor has NaN at element [1,0] of a [2,2] float64 tensor"));
  EXPECT_THAT(error_of([] { check_numerics(Tensor{1.f, -std::numeric_limits<float>::infinity()}, "loss"); }),
              HasSubstr("loss : Tensor has -Inf at element [1]"));
  EXPECT_THAT(error_of([] { check_numerics(Tensor{1, 2}, "ints"); }), HasSubstr("[check_numerics] input 'x' has dtype int32"));
  // xlogy and xdivy are 0 where x is 0, whatever y is (0 * log(0) in an entropy is 0).
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  EXPECT_EQ(xlogy(Tensor{0.0, 0.0, 0.0, 2.0, 3.0}, Tensor{0.0, inf, nan, M_E, 1.0}).to_vector<double>(),
            (std::vector<double>{0, 0, 0, 2, 0}));
  EXPECT_EQ(xdivy(Tensor{0.0, 0.0, 0.0, 3.0}, Tensor{0.0, inf, nan, 2.0}).to_vector<double>(),
            (std::vector<double>{0, 0, 0, 1.5}));
  EXPECT_EQ(xlogy(Tensor{{2.f}, {0.f}}, Tensor{1.f, 4.f}).shape(), (Shape{2, 2}));  // broadcasts
  EXPECT_THAT(error_of([] { xlogy(Tensor{1, 2}, Tensor{1, 2}); }), HasSubstr("[xlogy] input 'x' has dtype int32"));
  EXPECT_THAT(error_of([] { sinh(Tensor{1, 2}); }), HasSubstr("[sinh]"));
  expect_close(erf(Tensor{0.0, 0.5, -1.0}), Tensor{0.0, 0.5204998778130465, -0.8427007929497149}, 1e-15);
  // erfc(5) ~ 1.5e-12: 1 - erf(5) would keep few of its digits.
  EXPECT_NEAR(erfc(Tensor{5.0}).item<double>() / 1.5374597944280348e-12, 1.0, 1e-13);
  EXPECT_THAT(ceil(Tensor{-1.5f, 0.2f, 3.f}).to_vector<float>(), ElementsAre(-1.f, 1.f, 3.f));
  EXPECT_EQ(ceil(Tensor{1.f}).dtype(), DType::kFloat32);
}

TEST(MathTest, RoundAndRintTakeHalvesToEven) {
  const Tensor x = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 1e300};
  EXPECT_THAT(round(x).to_vector<double>(), ElementsAre(0.0, 2.0, 2.0, 0.0, -2.0, -2.0, 2.0, -3.0, 1e300));
  EXPECT_EQ(round(x).to_vector<double>(), rint(x).to_vector<double>());
  EXPECT_THAT(round(Tensor{3.5f, 4.5f}).to_vector<float>(), ElementsAre(4.f, 4.f));
  EXPECT_THAT(round(Tensor{-3, 7}).to_vector<int32_t>(), ElementsAre(-3, 7));  // integers are whole
  EXPECT_TRUE(std::isnan(round(Tensor{std::nan("")}).item<double>()));
  EXPECT_EQ(round(Tensor{-kInf}).item<double>(), -kInf);
}

TEST(MathTest, PredicatesGiveBools) {
  const Tensor x = {1.0, std::nan(""), kInf, -kInf, 0.0};
  EXPECT_EQ(is_nan(x).dtype(), DType::kBool);
  EXPECT_THAT(is_nan(x).to_vector<bool>(), ElementsAre(false, true, false, false, false));
  EXPECT_THAT(is_inf(x).to_vector<bool>(), ElementsAre(false, false, true, true, false));
  EXPECT_THAT(is_finite(x).to_vector<bool>(), ElementsAre(true, false, false, false, true));
  EXPECT_THAT(is_nan(Tensor{std::nanf(""), 2.f}).to_vector<bool>(), ElementsAre(true, false));
}

TEST(MathTest, BinaryValues) {
  EXPECT_THAT(squared_difference(Tensor{{1.0, 2.0}, {3.0, 4.0}}, Tensor{1.5, -1.0}).to_vector<double>(),
              ElementsAre(0.25, 9.0, 2.25, 25.0));
  EXPECT_THAT(squared_difference(Tensor{5, -3}, 2).to_vector<int32_t>(), ElementsAre(9, 25));
  EXPECT_THAT(div_no_nan(Tensor{1.0, 0.0, 3.0, kInf}, Tensor{0.0, 0.0, 2.0, 0.0}).to_vector<double>(),
              ElementsAre(0.0, 0.0, 1.5, 0.0));
  const Tensor a = {-7, 7, -7, 7, std::numeric_limits<int32_t>::min()};
  const Tensor b = {2, 2, -2, -2, -1};
  EXPECT_THAT(truncate_div(a, b).to_vector<int32_t>(), ElementsAre(-3, 3, 3, -3, std::numeric_limits<int32_t>::min()));
  EXPECT_THAT(truncate_mod(a, b).to_vector<int32_t>(), ElementsAre(-1, 1, -1, 1, 0));
  // truncate_div(x, y) * y + truncate_mod(x, y) == x, where floor_div and mod differ.
  EXPECT_EQ((truncate_div(a, b) * b + truncate_mod(a, b)).to_vector<int32_t>(), a.to_vector<int32_t>());
  EXPECT_THAT(truncate_mod(Tensor{-7.5, 7.5}, 2.0).to_vector<double>(), ElementsAre(-1.5, 1.5));
  EXPECT_THAT(truncate_div(Tensor{uint8_t{200}}, Tensor{uint8_t{7}}).to_vector<uint8_t>(), ElementsAre(28));
}

TEST(MathTest, AddNSumsItsInputs) {
  const Tensor a = {{1.f, 2.f}, {3.f, 4.f}};
  const Tensor s = add_n({a, a * 10.f, a * 100.f});
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_THAT(s.to_vector<float>(), ElementsAre(111.f, 222.f, 333.f, 444.f));
  EXPECT_THAT(add_n({Tensor{int64_t{5}}}).to_vector<int64_t>(), ElementsAre(5));  // one input: itself
  EXPECT_THAT(add_n({Tensor{2147483647}, Tensor{1}}).to_vector<int32_t>(), ElementsAre(-2147483648));  // wraps
}

TEST(MathTest, ClipByValue) {
  const Tensor x = {-5.f, 0.5f, 9.f, std::nanf("")};
  const Tensor c = clip_by_value(x, 0, 1);
  const std::vector<float> cv = c.to_vector<float>();
  ASSERT_EQ(cv.size(), 4u);
  EXPECT_THAT(std::vector<float>(cv.begin(), cv.begin() + 3), ElementsAre(0.f, 0.5f, 1.f));
  EXPECT_TRUE(std::isnan(cv[3]));
  // Bounds of t's shape; and bounds that broadcast into it (a row), as tf.clip_by_value.
  EXPECT_THAT(clip_by_value(Tensor{1, 5, 9}, Tensor{2, 2, 2}, Tensor{3, 4, 8}).to_vector<int32_t>(),
              ElementsAre(2, 4, 8));
  EXPECT_THAT(clip_by_value(Tensor{{1.0, 5.0}, {-1.0, 3.0}}, Tensor{0.0, 4.0}, 4.5).to_vector<double>(),
              ElementsAre(1.0, 4.5, 0.0, 4.0));
}

TEST(MathTest, ErrorsNameTheOpTheInputAndTheLine) {
  EXPECT_THAT(error_of([] { sin(Tensor{1, 2}); }),
              AllOf(HasSubstr("[sin]"), HasSubstr("'x'"), HasSubstr("int32"), HasSubstr("math_test.cc:")));
  EXPECT_THAT(error_of([] { is_nan(Tensor{1, 2}); }), HasSubstr("[is_nan]"));
  EXPECT_THAT(error_of([] { div_no_nan(Tensor{1, 2}, Tensor{1, 2}); }), HasSubstr("[div_no_nan]"));
  EXPECT_THAT(error_of([] { squared_difference(Tensor{1.f, 2.f}, Tensor{1.f, 2.f, 3.f}); }),
              AllOf(HasSubstr("[squared_difference]"), HasSubstr("cannot be broadcast")));
  EXPECT_THAT(error_of([] { truncate_div(Tensor{1, 2}, Tensor{1, 0}); }),
              AllOf(HasSubstr("[truncate_div]"), HasSubstr("division by zero"), HasSubstr("math_test.cc:")));
  EXPECT_THAT(error_of([] { truncate_mod(Tensor{int64_t{1}}, Tensor{int64_t{0}}); }),
              AllOf(HasSubstr("[truncate_mod]"), HasSubstr("division by zero")));
  EXPECT_THAT(error_of([] { truncate_div(Tensor{1.5}, Tensor{1.0}); }), HasSubstr("[truncate_div]"));
  EXPECT_THAT(error_of([] { add_n({}); }), HasSubstr("[add_n] needs at least one input"));
  EXPECT_THAT(error_of([] { add_n({Tensor{1.f, 2.f}, Tensor{1.f, 2.f, 3.f}}); }),
              HasSubstr("[add_n] input 'inputs[1]' has shape [3] but 'inputs[0]' has shape [2]"));
  EXPECT_THAT(error_of([] { add_n({Tensor{1.f}, Tensor{1.0}}); }),
              HasSubstr("[add_n] input 'inputs[1]' has dtype float64 but 'inputs[0]' has dtype float32"));
  EXPECT_THAT(error_of([] { clip_by_value(Tensor{1.f}, 2, 1); }),
              HasSubstr("[clip_by_value] clip_value_min must not exceed clip_value_max"));
  EXPECT_THAT(error_of([] { clip_by_value(Tensor{1.f, 2.f}, Tensor{{0.f}, {1.f}}, 3); }),
              HasSubstr("[clip_by_value] input 'clip_value_min' [2,1] does not broadcast to the shape of 't' [2]"));
}

TEST(MathTest, GradientsAndSecondOrder) {
  const Tensor x = {-1.0, 0.3, 2.0};
  GradientTape outer;
  outer.watch(x);
  Tensor dx;
  {
    GradientTape inner;
    inner.watch(x);
    dx = inner.gradient(reduce_sum(sin(x) + erf(x)), x);  // cos x + 2/sqrt(pi) e^{-x^2}
  }
  const Tensor d2 = outer.gradient(reduce_sum(dx), x);
  const std::vector<double> xs = x.to_vector<double>(), g1 = dx.to_vector<double>(), g2 = d2.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = 2 / std::sqrt(M_PI) * std::exp(-xs[i] * xs[i]);
    EXPECT_NEAR(g1[i], std::cos(xs[i]) + e, 1e-14);
    EXPECT_NEAR(g2[i], -std::sin(xs[i]) - 2 * xs[i] * e, 1e-14);
  }
  // clip_by_value passes the gradient inside the bounds only; add_n to each input.
  GradientTape tape;
  const Tensor t = {-2.0, 0.5, 3.0};
  tape.watch(t);
  EXPECT_THAT(tape.gradient(reduce_sum(clip_by_value(t, -1.0, 1.0)), t).to_vector<double>(), ElementsAre(0.0, 1.0, 0.0));
  GradientTape tape2;
  tape2.watch(t);
  EXPECT_THAT(tape2.gradient(reduce_sum(add_n({t, t * 3.0})), t).to_vector<double>(), ElementsAre(4.0, 4.0, 4.0));
}

TEST(MathTest, GraphsSessionsAndGraphDefsUseTensorFlowsOpTypes) {
  Graph g;
  Tensor x, y, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, 3}, "x");
    EXPECT_EQ(round(x).shape(), (Shape{-1, 3}));  // unknown dims pass through
    EXPECT_EQ(squared_difference(x, Tensor{1.f, 2.f, 3.f}).shape(), (Shape{-1, 3}));
    y = add_n({squared_difference(sin(x), 0.5f), clip_by_value(x, -1.f, 1.f), round(x) * expm1(x),
               div_no_nan(x, ceil(x)), reciprocal(x) + cos(x) + tan(x) + erfc(x) + rint(x),
               asin(tanh(x)) + acos(tanh(x)) + atan(x) + sinh(x) + cosh(x) + asinh(x) + acosh(1.f + x * x) +
                   atanh(tanh(x) * 0.9f)});
    y = where(is_finite(y), y, 0.f);
    dx = gradients({reduce_sum(y)}, {x})[0];
  }
  std::vector<std::string> types;
  for (const Operation& op : g.get_operations()) types.push_back(op.type());
  for (const char* type : {"Sin", "SquaredDifference", "ClipByValue", "Round", "Expm1", "DivNoNan", "Ceil",
                           "Reciprocal", "Cos", "Tan", "Erfc", "Rint", "AddN", "IsFinite", "Asin", "Acos", "Atan",
                           "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"})
    EXPECT_THAT(types, ::testing::Contains(std::string(type)));

  const Tensor xv = {{-2.f, 0.3f, 1.7f}, {2.5f, -0.4f, 0.6f}};
  auto eager_y = [](const Tensor& x) {
    Tensor y = add_n({squared_difference(sin(x), 0.5f), clip_by_value(x, -1.f, 1.f), round(x) * expm1(x),
                      div_no_nan(x, ceil(x)), reciprocal(x) + cos(x) + tan(x) + erfc(x) + rint(x),
                      asin(tanh(x)) + acos(tanh(x)) + atan(x) + sinh(x) + cosh(x) + asinh(x) + acosh(1.f + x * x) +
                          atanh(tanh(x) * 0.9f)});
    return where(is_finite(y), y, 0.f);
  };
  Session sess(g);
  expect_close(sess.run(y, {{x, xv}}), eager_y(xv), 1e-6);
  Tensor eager_dx;
  {
    GradientTape tape;
    tape.watch(xv);
    eager_dx = tape.gradient(reduce_sum(eager_y(xv)), xv);
  }
  expect_close(sess.run(dx, {{x, xv}}), eager_dx, 1e-5);

  // Written under TensorFlow's names, read back, and run to the same values.
  const GraphDef def = to_graph_def(g);
  std::vector<std::string> def_types;
  for (const auto& n : def.node()) def_types.push_back(n.op());
  for (const char* type : {"AddN", "ClipByValue", "SquaredDifference", "DivNoNan", "IsFinite"})
    EXPECT_THAT(def_types, ::testing::Contains(std::string(type)));
  for (const auto& n : def.node()) {
    if (n.op() == "AddN") {
      EXPECT_EQ(n.attr().at("N").i(), 6);
    }
  }
  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  Session b(back);
  const Tensor bx = back.get_tensor_by_name("x:0");
  expect_close(b.run(back.get_tensor_by_name(y.name()), {{bx, xv}}), eager_y(xv), 1e-6);
  expect_close(b.run(back.get_tensor_by_name(dx.name()), {{bx, xv}}), eager_dx, 1e-5);
}

TEST(MathTest, TracedFunctionsUseTheOps) {
  auto f = function([](const Tensor& a, const Tensor& b) { return truncate_mod(a, b) + truncate_div(a, b); });
  EXPECT_THAT(f(Tensor{-7, 9}, Tensor{2, 4}).to_vector<int32_t>(), ElementsAre(-4, 3));
  EXPECT_THAT(f(Tensor{8, -9}, Tensor{3, 4}).to_vector<int32_t>(), ElementsAre(4, -3));
  EXPECT_EQ(f.trace_count(), 1);
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {

// TensorFlow's gradients of Floor, Ceil, Round and Rint are None (math_grad.py), and it registers
// none for TruncateMod: a path through them carries no gradient, one beside them still does.
TEST(MathTest, RoundingOpsCarryNoGradientAsInTensorFlow) {
  const Tensor x = {0.3, 1.6, -2.2};
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  using Rounding = Tensor (*)(const Tensor&, std::source_location);
  for (Rounding f : {Rounding(floor), Rounding(ceil), Rounding(round), Rounding(rint)}) {
    const Tensor y = reduce_sum(f(x, std::source_location::current()) * 2.0);
    EXPECT_FALSE(tape.gradient(y, x).defined());
    EXPECT_THAT(tape.gradient(y, x, Tensor(), Unconnected::kZero).to_vector<double>(), ElementsAre(0.0, 0.0, 0.0));
  }
  EXPECT_FALSE(tape.gradient(reduce_sum(truncate_mod(x, 0.7)), x).defined());
  // x - floor(x): only the first path has a gradient.
  EXPECT_THAT(tape.gradient(reduce_sum(x - floor(x)), x).to_vector<double>(), ElementsAre(1.0, 1.0, 1.0));
  for (const char* type : {"Floor", "Ceil", "Round", "Rint", "TruncateMod"}) {
    ASSERT_NE(find_any_op(type), nullptr) << type;
    EXPECT_FALSE(find_any_op(type)->differentiable) << type;
  }
}

}  // namespace
}  // namespace tapeflow
