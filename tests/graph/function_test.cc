// Tracing with function(): caching per signature, captures, side effects, retracing
// warnings, concrete functions in a Session, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(FunctionTest, TracesOncePerSignatureAndRunsTheGraph) {
  int host_runs = 0;
  auto f = function([&](const Tensor& x, const Tensor& y) {
    ++host_runs;  // host code runs at trace time only
    return x * y + 1.f;
  });
  EXPECT_THAT(f(Tensor({1.f, 2.f}), Tensor({3.f, 4.f})).to_vector<float>(), ElementsAre(4.f, 9.f));
  EXPECT_THAT(f(Tensor({2.f, 2.f}), Tensor({5.f, 5.f})).to_vector<float>(), ElementsAre(11.f, 11.f));
  EXPECT_EQ(f.trace_count(), 1);
  EXPECT_EQ(host_runs, 1);
  EXPECT_THAT(f(Tensor({1.f, 2.f, 3.f}), Tensor({1.f, 1.f, 1.f})).to_vector<float>(), ElementsAre(2.f, 3.f, 4.f));
  EXPECT_EQ(f.trace_count(), 2);
  EXPECT_FLOAT_EQ(f(Tensor(2.0), Tensor(3.0)).item<double>(), 7.0);  // a new dtype: a new trace
  EXPECT_EQ(f.trace_count(), 3);
}

TEST(FunctionTest, CapturesOuterTensorsByReferenceAndVariablesByHandle) {
  Tensor table = Tensor({10.f, 20.f, 30.f});
  Variable scale(Tensor(2.f), "scale");
  auto f = function([&](const Tensor& x) { return (x + table) * scale; });
  EXPECT_THAT(f(Tensor({1.f, 1.f, 1.f})).to_vector<float>(), ElementsAre(22.f, 42.f, 62.f));
  scale.assign(3.f);  // the graph reads the variable itself
  EXPECT_THAT(f(Tensor({1.f, 1.f, 1.f})).to_vector<float>(), ElementsAre(33.f, 63.f, 93.f));
  ConcreteFunction& cf = f.get_concrete_function({{DType::kFloat32, {3}}});
  ASSERT_EQ(cf.captured_inputs().size(), 1u);
  EXPECT_TRUE(cf.captured_inputs()[0].shares_buffer_with(table));
  ASSERT_EQ(cf.captured_variables().size(), 1u);
  EXPECT_EQ(cf.captured_variables()[0].id(), scale.id());
  EXPECT_EQ(f.trace_count(), 1);
}

// Note [Unconstructed Function]: zero-filled storage is what clang-repl hands a later input for
// a global whose type names a lambda; calling it is a typed error, not a segfault.
TEST(FunctionTest, AnUnconstructedFunctionIsRefusedWithAClearError) {
  auto square = [](const Tensor& x) { return x * x; };
  using F = Function<decltype(square)>;
  alignas(F) unsigned char storage[sizeof(F)] = {};
  F& f = *reinterpret_cast<F*>(storage);
  try {
    f(Tensor{1.f, 2.f});
    FAIL() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[function] this Function object was never constructed"));
    EXPECT_THAT(e.what(), HasSubstr("function_test.cc"));
  }
  EXPECT_THROW(f.get_concrete_function({{DType::kFloat32, {2}}}), FailedPreconditionError);
  EXPECT_THROW(f.trace_count(), FailedPreconditionError);
}

TEST(FunctionTest, SideEffectsRunOnEveryCallInProgramOrder) {
  Variable counter(Tensor(0), "counter");
  auto step = function([&](const Tensor& x) {
    counter.assign_add(1);
    Tensor seen = counter.read();
    print(x, {seen}, "step");
    return seen * 10;
  });
  testing::internal::CaptureStderr();
  EXPECT_EQ(step(Tensor(1.f)).item<int32_t>(), 10);
  EXPECT_EQ(step(Tensor(1.f)).item<int32_t>(), 20);
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_THAT(printed, HasSubstr("step tapeflow.Tensor(1, shape=(), dtype=int32)"));
  EXPECT_THAT(printed, HasSubstr("step tapeflow.Tensor(2, shape=(), dtype=int32)"));
  EXPECT_EQ(counter.read().item<int32_t>(), 2);
  EXPECT_EQ(step.trace_count(), 1);
}

TEST(FunctionTest, CreatingAVariableInsideATraceIsAnError) {
  auto f = function([](const Tensor& x) {
    Variable v(Tensor(1.f), "inner");
    return x + v;
  });
  EXPECT_THAT(error_of([&] { f(Tensor(1.f)); }), HasSubstr("Variable 'inner' is created inside a traced function"));
  std::optional<Variable> lazy;
  auto g = function([&](const Tensor& x) {
    if (!lazy) {
      auto scope = init_scope();
      lazy.emplace(Tensor(5.f), "lazy");
    }
    return x + *lazy;
  });
  EXPECT_FLOAT_EQ(g(Tensor(1.f)).item<float>(), 6.f);
  EXPECT_EQ(lazy->graph_info(), nullptr);  // an eager variable, captured
}

TEST(FunctionTest, RetracingWarnsWithTheCallSiteAndTheChange) {
  FunctionOptions options;
  options.name = "model";
  options.warn_after_traces = 2;
  auto f = function([](const Tensor& x) { return reduce_sum(x); }, options);
  testing::internal::CaptureStderr();
  for (int n = 1; n <= 3; ++n) f(zeros({n, 4}));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("function 'model' has been traced 3 times"));
  EXPECT_THAT(err, HasSubstr("function_test.cc:"));
  EXPECT_THAT(err, HasSubstr("argument 1: shape [2,4] -> [3,4]"));
}

TEST(FunctionTest, ReduceRetracingRelaxesChangedDims) {
  FunctionOptions options;
  options.reduce_retracing = true;
  auto f = function([](const Tensor& x) { return x * 2.f; }, options);
  f(zeros({2, 4}));
  f(zeros({3, 4}));  // relaxed to [-1,4]
  f(zeros({7, 4}));  // served by the relaxed trace
  EXPECT_EQ(f.trace_count(), 2);
  EXPECT_THAT(f(ones({1, 4})).to_vector<float>(), ElementsAre(2.f, 2.f, 2.f, 2.f));
  EXPECT_EQ(f.trace_count(), 2);
}

TEST(FunctionTest, ConcreteFunctionRunsInASession) {
  Variable w(Tensor({{1.f, 2.f}, {3.f, 4.f}}), "w");
  auto f = function([&](const Tensor& x) { return matmul(x, w); });
  ConcreteFunction& cf = f.get_concrete_function({{DType::kFloat32, {-1, 2}}});
  EXPECT_EQ(cf.inputs()[0].shape(), Shape({-1, 2}));
  EXPECT_EQ(cf.outputs()[0].shape(), Shape({-1, 2}));
  Session sess(cf.graph());
  Tensor out = sess.run(cf.outputs()[0], {{cf.inputs()[0], Tensor({{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}})}});
  EXPECT_THAT(out.to_vector<float>(), ElementsAre(1.f, 2.f, 3.f, 4.f, 4.f, 6.f));
}

TEST(FunctionTest, NestedFunctionsInlineIntoTheOuterTrace) {
  auto inner = function([](const Tensor& x) { return x * x; });
  auto outer = function([&](const Tensor& x) { return inner(x) + 1.f; });
  EXPECT_FLOAT_EQ(outer(Tensor(3.f)).item<float>(), 10.f);
  EXPECT_EQ(inner.trace_count(), 0);
}

TEST(FunctionTest, ErrorsInTheBodyNameTheUsersLine) {
  auto f = function([](const Tensor& x) { return matmul(x, x); });
  EXPECT_THAT(error_of([&] { f(Tensor({1.f, 2.f})); }), HasSubstr("[matmul]"));
  EXPECT_EQ(f.trace_count(), 1);
}

TEST(FunctionTest, AnErrorInsideATraceSaysWhichTraceAndWhereItWasCalled) {
  const int body_line = __LINE__ + 1;
  auto predict = function([](const Tensor& x) { return matmul(x, x); }, FunctionOptions{.name = "predict"});
  auto outer = function([&](const Tensor& x) { return predict(x) + 1.f; }, FunctionOptions{.name = "outer"});
  const int call_line = __LINE__ + 1;
  const std::string message = error_of([&] { predict(Tensor({1.f, 2.f})); });
  EXPECT_THAT(message, HasSubstr("[matmul]"));
  EXPECT_THAT(message, HasSubstr("(at function_test.cc:" + std::to_string(body_line) +
                                 ") while tracing 'predict' called at function_test.cc:" + std::to_string(call_line)));
  // Nested traces add one line each, innermost first; the error keeps its type.
  EXPECT_THAT(error_of([&] { outer(Tensor({1.f, 2.f})); }),
              AllOf(HasSubstr("while tracing 'predict' called at function_test.cc:"),
                    HasSubstr("while tracing 'outer' called at function_test.cc:")));
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {

TEST(FunctionTest, GradientTapeInsideATraceBuildsTheBackwardGraph) {
  Variable w(Tensor({1.f, 2.f}), "w");
  auto train_step = function([&](const Tensor& x) {
    GradientTape tape;
    Tensor loss = reduce_sum(square(x * w));
    Tensor g = tape.gradient(loss, w);
    w.assign_sub(g * 0.1f);
    return loss;
  });
  // loss = sum((x w)^2); dloss/dw = 2 x^2 w.
  EXPECT_FLOAT_EQ(train_step(Tensor({1.f, 1.f})).item<float>(), 5.f);
  EXPECT_THAT(w.read().to_vector<float>(), ::testing::ElementsAre(0.8f, 1.6f));
  EXPECT_NEAR(train_step(Tensor({1.f, 1.f})).item<float>(), 0.64f + 2.56f, 1e-6);
  EXPECT_EQ(train_step.trace_count(), 1);
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {

TEST(FunctionGradientTest, ACallIsDifferentiableLikeTheEagerCode) {
  auto cube = function([](const Tensor& x) { return x * x * x; });
  Tensor x = Tensor({1.0, 2.0, -3.0});
  GradientTape tape;
  tape.watch(x);
  Tensor y = cube(x);
  Tensor g = tape.gradient(y, x);
  EXPECT_THAT(g.to_vector<double>(), ::testing::ElementsAre(3.0, 12.0, 27.0));
}

TEST(FunctionGradientTest, CapturedVariablesGetGradients) {
  Variable w(Tensor({{1.0, 2.0}, {3.0, 4.0}}), "w");
  Variable b(Tensor({0.5, -0.5}), "b");
  Tensor x = Tensor({{1.0, -1.0}, {2.0, 0.5}});
  auto model = [&](const Tensor& in) { return reduce_sum(square(matmul(in, w) + b)); };
  auto traced = function(model);
  std::vector<Tensor> eager_grads, traced_grads;
  {
    GradientTape tape;
    Tensor loss = model(x);
    eager_grads = tape.gradient(loss, std::vector<Variable>{w, b});
  }
  {
    GradientTape tape;
    Tensor loss = traced(x);
    traced_grads = tape.gradient(loss, std::vector<Variable>{w, b});
  }
  ASSERT_EQ(traced_grads.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(traced_grads[i].defined()) << i;
    EXPECT_EQ(traced_grads[i].to_vector<double>(), eager_grads[i].to_vector<double>()) << i;
  }
}

TEST(FunctionGradientTest, NestedTapesGiveSecondDerivatives) {
  auto cube = function([](const Tensor& x) { return x * x * x; });
  Tensor x = Tensor(2.0);
  GradientTape outer;
  outer.watch(x);
  Tensor dy;
  {
    GradientTape inner;
    inner.watch(x);
    Tensor y = cube(x);
    dy = inner.gradient(y, x);  // runs the backward function, recorded by the outer tape
  }
  EXPECT_DOUBLE_EQ(dy.item<double>(), 12.0);
  EXPECT_DOUBLE_EQ(outer.gradient(dy, x).item<double>(), 12.0);  // d2/dx2 x^3 = 6x
}

}  // namespace
}  // namespace tapeflow
