// cond and while_loop (tf.cond, tf.while_loop): one call path eagerly, in a graph and in a traced
// function, the same values from each; a traced model with data-dependent control flow saved,
// loaded and served (Note [Functional control flow], graph/functional_ops.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "graph/graph_def.h"
#include "saving/saved_model.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// y = 2x when sum(x) > 0, else x - 1: the same code eagerly and traced.
Tensor piecewise(const Tensor& x) {
  return cond(greater(reduce_sum(x), 0.f), [&] { return x * 2.f; }, [&] { return x - 1.f; });
}

// Doubles x until its sum passes 100 (at most 20 times); returns (x, how many doublings).
std::vector<Tensor> double_until_large(const Tensor& x) {
  return while_loop([](const std::vector<Tensor>& v) { return less(reduce_sum(v[0]), 100.f); },
                    [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] * 2.f, v[1] + 1}; },
                    {x, Tensor(int32_t{0})}, {.maximum_iterations = 20});
}

TEST(CondWhileTest, EagerlyTheyRunTheChosenFunctionNow) {
  EXPECT_EQ(piecewise(Tensor{1.f, 2.f}).to_vector<float>(), (std::vector<float>{2.f, 4.f}));
  EXPECT_EQ(piecewise(Tensor{1.f, -2.f}).to_vector<float>(), (std::vector<float>{0.f, -3.f}));
  const std::vector<Tensor> r = double_until_large(Tensor{1.f, 2.f});
  EXPECT_EQ(r[0].to_vector<float>(), (std::vector<float>{64.f, 128.f}));
  EXPECT_EQ(r[1].item<int32_t>(), 6);
  // maximum_iterations stops a loop whose cond stays true; a false cond runs no iteration.
  EXPECT_EQ(double_until_large(Tensor{-1.f, 0.f})[1].item<int32_t>(), 20);
  EXPECT_EQ(double_until_large(Tensor{100.f, 1.f})[1].item<int32_t>(), 0);
  // The tape records the branch that ran.
  Tensor x(3.f);
  GradientTape tape;
  tape.watch(x);
  Tensor y = cond(greater(x, 0.f), [&] { return x * x; }, [&] { return -x; });
  EXPECT_FLOAT_EQ(tape.gradient(y, x).item<float>(), 6.f);
}

TEST(CondWhileTest, InAGraphTheyAddStatelessIfAndStatelessWhileNodes) {
  Graph g;
  Tensor x, p, y, big, count;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    p = placeholder(DType::kBool, {}, "p");
    const Tensor offset = constant(Tensor{10.f, 20.f}, "offset");  // captured by one branch only
    y = cond(p, [&] { return x + offset; }, [&] { return x * 3.f; });
    const std::vector<Tensor> r = double_until_large(x);
    big = r[0];
    count = r[1];
  }
  const Operation if_op = producer(y);
  EXPECT_EQ(if_op.type(), "StatelessIf");
  EXPECT_EQ(if_op.name(), "cond");
  ASSERT_EQ(if_op.inputs().size(), 3u);  // p, then x and offset for both branches
  EXPECT_EQ(if_op.inputs()[0].name(), "p:0");
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_EQ(producer(big).type(), "StatelessWhile");
  // maximum_iterations: TensorFlow's counter and limit come first; the loop also carries x.
  EXPECT_EQ(producer(big).num_outputs(), 4);
  Session sess(g);
  EXPECT_EQ(sess.run(y, {{x, Tensor{1.f, 2.f}}, {p, Tensor(true)}}).to_vector<float>(), (std::vector<float>{11.f, 22.f}));
  EXPECT_EQ(sess.run(y, {{x, Tensor{1.f, 2.f}}, {p, Tensor(false)}}).to_vector<float>(), (std::vector<float>{3.f, 6.f}));
  const std::vector<Tensor> r = sess.run({big, count}, {{x, Tensor{1.f, 2.f}}});
  EXPECT_EQ(r[0].to_vector<float>(), (std::vector<float>{64.f, 128.f}));
  EXPECT_EQ(r[1].item<int32_t>(), 6);
  EXPECT_EQ(sess.run(count, {{x, Tensor{-1.f, 0.f}}}).item<int32_t>(), 20);
}

// One Session, many threads: each run takes its own branch and loop count.
TEST(CondWhileTest, ConcurrentRunsOfOneSessionAgree) {
  Graph g;
  Tensor x, big, count;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    const std::vector<Tensor> r = double_until_large(piecewise(x));
    big = r[0];
    count = r[1];
  }
  Session sess(g);
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      const Tensor in{static_cast<float>(t) - 3.f, 1.f};
      const std::vector<Tensor> want = double_until_large(piecewise(in));
      bool same = true;
      for (int k = 0; k < 20; ++k) {
        const std::vector<Tensor> got = sess.run({big, count}, {{x, in}});
        same = same && got[0].to_vector<float>() == want[0].to_vector<float>() &&
               got[1].item<int32_t>() == want[1].item<int32_t>();
      }
      ok[static_cast<size_t>(t)] = same;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok, std::vector<int>(8, 1));
}

// The user's story: eager code with data-dependent control flow, traced without rewriting it,
// gives the eager values; its variables are read around the node and passed in.
TEST(CondWhileTest, TracedFunctionsGiveTheEagerValues) {
  set_seed(7);
  Variable w(random_normal({2, 2}), "w");
  auto model = [&](const Tensor& x) {
    const Tensor h = cond(greater(reduce_max(x), 1.f), [&] { return matmul(x, w); }, [&] { return relu(x); });
    return double_until_large(h)[0];
  };
  auto traced = function(model);
  for (const Tensor& x : {Tensor{{0.5f, 2.f}}, Tensor{{0.5f, -2.f}}, Tensor{{30.f, 80.f}}}) {
    const std::vector<float> eager = model(x).to_vector<float>();
    EXPECT_EQ(traced(x).to_vector<float>(), eager);
  }
  EXPECT_EQ(traced.trace_count(), 1);
  // The read of w sits in the function's graph, before the If: the branch takes it as an input.
  ConcreteFunction& cf = traced.get_concrete_function({{DType::kFloat32, {1, 2}}});
  const Operation if_op = cf.graph().get_operation_by_name("cond");
  bool reads_w = false;
  for (const Tensor& in : if_op.inputs()) reads_w = reads_w || producer(in).type() == "ReadVariableOp";
  EXPECT_TRUE(reads_w);
  // w changed after the trace: the next call reads the new value.
  w.assign(w.read() * 0.f);
  EXPECT_EQ(traced(Tensor{{0.5f, 2.f}}).to_vector<float>(), model(Tensor{{0.5f, 2.f}}).to_vector<float>());
}

TEST(CondWhileTest, NestedBodiesCaptureThroughEveryLevel) {
  const Tensor scale{3.f, 4.f};  // eager: captured by the trace, then by both bodies
  auto f = function([&](const Tensor& x) {
    return while_loop([](const std::vector<Tensor>& v) { return less(v[1], 3); },
                      [&](const std::vector<Tensor>& v) {
                        const Tensor next = cond(greater(v[1], 0), [&] { return v[0] * scale; }, [&] { return v[0] + 1.f; });
                        return std::vector<Tensor>{next, v[1] + 1};
                      },
                      {x, Tensor(int32_t{0})})[0];
  });
  // (x + 1) * scale * scale.
  EXPECT_EQ(f(Tensor{1.f, 2.f}).to_vector<float>(), (std::vector<float>{18.f, 48.f}));
}

// shape_invariants let a loop variable grow; without them the body must keep its shape.
TEST(CondWhileTest, ShapeInvariantsLetALoopVariableChangeShape) {
  auto grow = [](const Tensor& x, std::vector<Shape> invariants) {
    return while_loop([](const std::vector<Tensor>& v) { return less(size(v[0]), 8); },
                      [](const std::vector<Tensor>& v) { return std::vector<Tensor>{concat({v[0], v[0]}, 0)}; }, {x},
                      {.shape_invariants = std::move(invariants)})[0];
  };
  EXPECT_EQ(grow(Tensor{1.f, 2.f}, {Shape{-1}}).to_vector<float>(), (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
  auto traced = function([&](const Tensor& x) { return grow(x, {Shape{-1}}); });
  const Tensor out = traced(Tensor{1.f, 2.f});
  EXPECT_EQ(out.shape(), (Shape{8}));
  EXPECT_EQ(traced.get_concrete_function({{DType::kFloat32, {2}}}).outputs()[0].shape(), (Shape{-1}));
  auto fixed = function([&](const Tensor& x) { return grow(x, {}); });
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { fixed(Tensor{1.f, 2.f}); }),
              HasSubstr("[while_loop] body_fn takes [float32 [2]] and returns [float32 [4]]"));
}

TEST(CondWhileTest, MistakesAreTypedErrors) {
  const Tensor x{1.f, 2.f};
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { cond(x, [&] { return x; }, [&] { return x; }); }),
              HasSubstr("[cond] the predicate must be a bool scalar, not float32 [2]"));
  auto mismatched = function([](const Tensor& v) {
    return cond(greater(reduce_sum(v), 0.f), [&] { return v; }, [&] { return cast(v, DType::kInt32); });
  });
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { mismatched(x); }),
              HasSubstr("[cond] true_fn returns [float32 [2]] and false_fn returns [int32 [2]]"));
  Variable counter(Tensor(0.f), "counter");
  auto updating = function([&](const Tensor& v) {
    return cond(greater(reduce_sum(v), 0.f), [&] { counter.assign_add(Tensor(1.f)); return v; }, [&] { return v; });
  });
  EXPECT_THAT(error_of<UnimplementedError>([&] { updating(x); }),
              HasSubstr("[cond] Variable 'counter' is updated inside a cond body"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                while_loop([](const std::vector<Tensor>& v) { return v[0]; },
                           [](const std::vector<Tensor>& v) { return v; }, {Tensor(1.f)});
              }),
              HasSubstr("[while_loop] cond_fn's result must be a bool scalar, not float32 []"));
}

// Note [Reads after the trace]: a call whose bodies fail to trace, after one of them read a
// variable, leaves the graph around it as it was; one that traces reads each variable once.
TEST(CondWhileTest, AFailedTraceLeavesTheGraphAsItWas) {
  Variable w(Tensor{2.f, 3.f}, "w");
  Graph g;
  auto scope = g.as_default();
  const Tensor x = placeholder(DType::kFloat32, {2}, "x");
  const Tensor p = greater(reduce_sum(x), 0.f);
  const Tensor index = cast(reduce_sum(x), DType::kInt32);
  const int before = g.num_nodes();
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                cond(p, [&] { return x * w; }, [&] { return cast(x, DType::kInt32); });
              }),
              HasSubstr("[cond] true_fn returns [float32 [2]] and false_fn returns [int32 [2]]"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                cond(p, [&] { return x * w; }, [&]() -> Tensor { throw InvalidArgumentError("[test] a branch fails"); });
              }),
              HasSubstr("[test] a branch fails"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                switch_case(index, {[&] { return std::vector<Tensor>{x + w}; }, [&] { return std::vector<Tensor>{reshape(x, {2, 1})}; }});
              }),
              HasSubstr("[switch_case] branch_fns[0] returns [float32 [2]] and branch_fns[1] returns [float32 [2,1]]"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                while_loop([&](const std::vector<Tensor>& v) { return less(reduce_sum(v[0] * w), 10.f); },
                           [&](const std::vector<Tensor>& v) { return std::vector<Tensor>{concat({v[0], w}, 0)}; }, {x});
              }),
              HasSubstr("[while_loop] body_fn takes [float32 [2]] and returns [float32 [4]]"));
  // Inner bodies defer to the outer one, which fails: nothing from either stays.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                cond(p, [&] { return cond(p, [&] { return x * w; }, [&] { return x - w; }); },
                     [&] { return cast(x, DType::kInt32); });
              }),
              HasSubstr("[cond] true_fn returns [float32 [2]] and false_fn returns [int32 [2]]"));
  EXPECT_EQ(g.num_nodes(), before);

  // A tensor of another graph, in a body or as the predicate, fails before anything is read.
  Graph other;
  Tensor foreign;
  {
    auto other_scope = other.as_default();
    foreign = placeholder(DType::kFloat32, {2}, "foreign");
  }
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { cond(p, [&] { return foreign * w; }, [&] { return x; }); }),
              HasSubstr("[cond] input 1 is tensor 'foreign:0' of another graph"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                while_loop([&](const std::vector<Tensor>& v) { return less(reduce_sum(v[0] * w), 10.f); },
                           [&](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] + foreign}; }, {x});
              }),
              HasSubstr("[while_loop] input 1 is tensor 'foreign:0' of another graph"));
  EXPECT_EQ(g.num_nodes(), before);

  // Traced: both branches and both reads of w in one of them share one read, one capture.
  const Tensor y = cond(p, [&] { return x * w + w; }, [&] { return x - w; });
  int reads = 0;
  for (int id = before; id < g.num_nodes(); ++id) reads += g.state()->node(id).op->type == std::string("ReadVariableOp");
  EXPECT_EQ(reads, 1);
  EXPECT_EQ(producer(y).inputs().size(), 3u);  // the predicate, x and w
  Session sess(g);
  EXPECT_EQ(sess.run(y, {{x, Tensor{1.f, 1.f}}}).to_vector<float>(), (std::vector<float>{4.f, 6.f}));
  EXPECT_EQ(sess.run(y, {{x, Tensor{-1.f, -1.f}}}).to_vector<float>(), (std::vector<float>{-3.f, -4.f}));
  // A read under a device scope inside the body is made under that scope.
  const Tensor z = cond(p, [&] { auto on = device("/device:CPU:0"); return x * w; }, [&] { return x; });
  std::vector<std::string> read_devices;
  for (const Tensor& in : producer(z).inputs())
    if (producer(in).type() == "ReadVariableOp") read_devices.push_back(producer(in).device());
  EXPECT_EQ(read_devices, std::vector<std::string>{"/device:CPU:0"});
}

// An inner body that holds both a tensor of the body around it and a read of the variable that
// body read gets both as arguments (one tensor outside, two places inside).
TEST(CondWhileTest, NestedBodiesReadingOneVariableTwoWays) {
  Variable w(Tensor{2.f, 3.f}, "w");
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    const Tensor p = greater(reduce_sum(x), 0.f);
    y = cond(p, [&] {
          const Tensor r = w.read();
          return cond(p, [&] { return r + w.read() * x; }, [&] { return r; });
        }, [&] { return x; });
  }
  Session sess(g);
  EXPECT_EQ(sess.run(y, {{x, Tensor{1.f, 1.f}}}).to_vector<float>(), (std::vector<float>{4.f, 6.f}));
  EXPECT_EQ(sess.run(y, {{x, Tensor{-1.f, -1.f}}}).to_vector<float>(), (std::vector<float>{-1.f, -1.f}));
  // The same call traced in a function, and the graph frozen and served.
  auto f = function([&](const Tensor& v) {
    const Tensor p = greater(reduce_sum(v), 0.f);
    return cond(p, [&] {
      const Tensor r = w.read();
      return cond(p, [&] { return r + w.read() * v; }, [&] { return r; });
    }, [&] { return v; });
  });
  EXPECT_EQ(f(Tensor{1.f, 2.f}).to_vector<float>(), (std::vector<float>{4.f, 9.f}));
  const FrozenGraph frozen = freeze(g, &sess, {y});
  Session served(frozen.graph);
  EXPECT_EQ(served.run(frozen.outputs[0], {{frozen.graph.get_tensor_by_name("x:0"), Tensor{1.f, 1.f}}}).to_vector<float>(),
            (std::vector<float>{4.f, 6.f}));
}

// A body with a side effect makes TensorFlow's stateful If, which runs when nothing reads it and
// is written back as "If" with the side effect a control_ret.
TEST(CondWhileTest, BodiesWithSideEffectsMakeStatefulNodes) {
  Graph g;
  Tensor p;
  Operation check;
  {
    auto scope = g.as_default();
    p = placeholder(DType::kBool, {}, "p");
    const Tensor x = constant(Tensor{1.f, 2.f}, "x");
    cond(p, [&] { assert_that(less(reduce_sum(x), 0.f), {x}, "x must be negative"); return x; }, [&] { return x; });
  }
  const Operation if_op = g.get_operation_by_name("cond");
  EXPECT_EQ(if_op.type(), "If");
  const GraphDef def = to_graph_def(g);
  bool has_control_ret = false;
  for (const auto& f : def.library().function()) has_control_ret = has_control_ret || f.control_ret_size() == 1;
  EXPECT_TRUE(has_control_ret);
  for (const Graph& graph : {g, graph_from_graph_def(def)}) {
    Session sess(graph);
    const Operation target = graph.get_operation_by_name("cond");
    sess.run(std::vector<Fetch>{target}, {{graph.get_tensor_by_name("p:0"), Tensor(false)}});
    EXPECT_THAT(error_of<InvalidArgumentError>(
                    [&] { sess.run(std::vector<Fetch>{target}, {{graph.get_tensor_by_name("p:0"), Tensor(true)}}); }),
                HasSubstr("assertion failed: [x must be negative] [1 2]"));
  }
}

// Random ops in a body draw new numbers on every run of a Session, whatever it fetches.
TEST(CondWhileTest, RandomOpsInBodiesDrawNewNumbersEachRun) {
  Graph g;
  Tensor r, doubled;
  {
    auto scope = g.as_default();
    const Tensor p = constant(Tensor(true), "p");
    r = cond(p, [] { return random_uniform({4}); }, [] { return zeros({4}); });
    doubled = r * 2.f;
  }
  Session sess(g);
  const std::vector<float> a = sess.run(r).to_vector<float>(), b = sess.run(r).to_vector<float>();
  const std::vector<float> c = sess.run(std::vector<Fetch>{r, doubled})[0].to_vector<float>();
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_NE(a, c);
}

// freeze() keeps the functions the nodes run: the frozen graph imports and gives the same value.
TEST(CondWhileTest, FrozenGraphsKeepTheirFunctions) {
  Variable w(Tensor{2.f, 3.f}, "w");
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    y = cond(greater(reduce_sum(x), 0.f), [&] { return x * w; }, [&] { return x; });
  }
  Session sess(g);
  const FrozenGraph frozen = freeze(g, &sess, {y});
  Session served(frozen.graph);
  EXPECT_EQ(served.run(frozen.outputs[0], {{frozen.graph.get_tensor_by_name("x:0"), Tensor{1.f, 1.f}}}).to_vector<float>(),
            (std::vector<float>{2.f, 3.f}));
}

// Graph gradients through an If recompute the branch that ran (Note [If gradient]): a traced
// function's gradients, in the tensors and in a variable read inside a branch, are the eager
// tape's. Through a While they are not built: an error naming the node, not a zero.
TEST(CondWhileTest, GradientsThroughCondMatchTheEagerTape) {
  Variable w(Tensor{0.5f, -2.f}, "w");
  auto f = [&](const Tensor& x) {
    return reduce_sum(cond(greater(reduce_sum(x), 0.f), [&] { return x * x * w; }, [&] { return x + w * 3.f; }));
  };
  auto traced = function(f);
  for (const Tensor& x : {Tensor{1.f, 2.f}, Tensor{-1.f, -2.f}}) {
    std::vector<Tensor> eager, graph;
    {
      GradientTape tape;
      tape.watch(x);
      const Tensor y = f(x);
      eager = tape.gradient(y, std::vector<Source>{x, w});
    }
    {
      GradientTape tape;
      tape.watch(x);
      const Tensor y = traced(x);
      graph = tape.gradient(y, std::vector<Source>{x, w});
    }
    EXPECT_EQ(graph[0].to_vector<float>(), eager[0].to_vector<float>());
    EXPECT_EQ(graph[1].to_vector<float>(), eager[1].to_vector<float>());
  }
  // gradients() in a graph, the branch chosen at run time.
  Graph g;
  Tensor x, p, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    p = placeholder(DType::kBool, {}, "p");
    dx = gradients({cond(p, [&] { return x * x; }, [&] { return x * 5.f; })}, {x})[0];
  }
  Session sess(g);
  EXPECT_EQ(sess.run(dx, {{x, Tensor{1.f, 3.f}}, {p, Tensor(true)}}).to_vector<float>(), (std::vector<float>{2.f, 6.f}));
  EXPECT_EQ(sess.run(dx, {{x, Tensor{1.f, 3.f}}, {p, Tensor(false)}}).to_vector<float>(), (std::vector<float>{5.f, 5.f}));

  // Second order: the gradient's If is differentiated the same way (d2/dx2 of x^3 is 6x).
  auto cubic = function([](const Tensor& v) {
    return reduce_sum(cond(greater(reduce_sum(v), 0.f), [&] { return v * v * v; }, [&] { return v * 2.f; }));
  });
  const Tensor at{1.f, 2.f};
  GradientTape outer;
  outer.watch(at);
  Tensor first;
  {
    GradientTape inner;
    inner.watch(at);
    first = inner.gradient(cubic(at), at);
  }
  EXPECT_EQ(first.to_vector<float>(), (std::vector<float>{3.f, 12.f}));
  EXPECT_EQ(outer.gradient(reduce_sum(first), at).to_vector<float>(), (std::vector<float>{6.f, 12.f}));

}

// Graphs holding control-flow gradients are written as TensorFlow's GraphDef and read back with
// the same values; what a gradient cannot recompute is a typed error naming the node.
TEST(CondWhileTest, GradientGraphsSaveAndWhatCannotBeRecomputedIsRefused) {
  Graph g;
  Tensor x, dcond, dloop;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    const Tensor c = cond(greater(reduce_sum(x), 0.f), [&] { return x * x; }, [&] { return x * 5.f; });
    const Tensor w = while_loop([](const std::vector<Tensor>& v) { return less(v[1], 2); },
                                [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] * v[0], v[1] + 1}; },
                                {x, Tensor(int32_t{0})})[0];
    dcond = gradients({c}, {x})[0];
    dloop = gradients({w}, {x})[0];
  }
  const Graph h = graph_from_graph_def(to_graph_def(g));
  for (const Graph* graph : std::vector<const Graph*>{&g, &h}) {
    Session sess(*graph);
    const std::vector<Tensor> got = sess.run({graph->get_tensor_by_name(dcond.name()), graph->get_tensor_by_name(dloop.name())},
                                             {{graph->get_tensor_by_name("x:0"), Tensor{1.f, 2.f}}});
    EXPECT_EQ(got[0].to_vector<float>(), (std::vector<float>{2.f, 4.f}));
    EXPECT_EQ(got[1].to_vector<float>(), (std::vector<float>{4.f, 32.f}));  // d x^4 / dx
  }
  // A random op in a body would draw other numbers when the gradient runs it again.
  Graph r;
  {
    auto scope = r.as_default();
    const Tensor p = placeholder(DType::kFloat32, {2}, "p");
    const Tensor y = cond(greater(reduce_sum(p), 0.f), [&] { return p * random_uniform({2}); }, [&] { return p; });
    EXPECT_THAT(error_of<UnimplementedError>([&] { gradients({y}, {p}); }),
                AllOf(HasSubstr("(RandomUniform) in function 'tapeflow_cond_true_"), HasSubstr("would compute other values")));
  }
  // A loop variable that changes shape ([1] to [3] by broadcasting): the history cannot stack it.
  Graph s;
  Tensor q, dq;
  {
    auto scope = s.as_default();
    q = placeholder(DType::kFloat32, {1}, "q");
    const Tensor y = while_loop([](const std::vector<Tensor>& v) { return less(v[1], 2); },
                                [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] * Tensor{1.f, 1.f, 1.f}, v[1] + 1}; },
                                {q, Tensor(int32_t{0})}, {.shape_invariants = {Shape{-1}, Shape{}}})[0];
    dq = gradients({reduce_sum(y)}, {q})[0];
  }
  Session sess(s);
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { sess.run(dq, {{q, Tensor{2.f}}}); }),
              HasSubstr("needs loop variable 0 to keep its shape between iterations (Note [While gradient]); it went "
                        "from] [1] [3]"));
}

// Note [While gradient]: the loop run again with its history, then back from the last iteration.
TEST(CondWhileTest, GradientsThroughWhileLoopsMatchTheEagerTape) {
  auto looping = function([](const Tensor& v) { return double_until_large(v)[0]; });
  for (const Tensor& v : {Tensor{1.f, 2.f}, Tensor{100.f, 1.f}, Tensor{-1.f, 0.f}}) {  // 6, 0 and 20 iterations
    Tensor eager, traced;
    {
      GradientTape tape;
      tape.watch(v);
      eager = tape.gradient(double_until_large(v)[0], v);
    }
    {
      GradientTape tape;
      tape.watch(v);
      traced = tape.gradient(looping(v), v);
    }
    EXPECT_EQ(traced.to_vector<float>(), eager.to_vector<float>());
  }
  // A variable the body reads (a capture, passed through the loop): x * w three times.
  Variable w(Tensor{1.5f, -0.5f}, "w");
  auto f = [&](const Tensor& x) {
    return reduce_sum(while_loop([](const std::vector<Tensor>& v) { return less(v[1], 3); },
                                 [&](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] * w, v[1] + 1}; },
                                 {x, Tensor(int32_t{0})})[0]);
  };
  auto g = function(f);
  const Tensor x{2.f, 4.f};
  std::vector<Tensor> eager, traced;
  {
    GradientTape tape;
    tape.watch(x);
    eager = tape.gradient(f(x), std::vector<Source>{x, w});
  }
  {
    GradientTape tape;
    tape.watch(x);
    traced = tape.gradient(g(x), std::vector<Source>{x, w});
  }
  EXPECT_EQ(eager[0].to_vector<float>(), (std::vector<float>{3.375f, -0.125f}));  // w^3
  EXPECT_EQ(eager[1].to_vector<float>(), (std::vector<float>{13.5f, 3.f}));       // 3 x w^2
  EXPECT_EQ(traced[0].to_vector<float>(), eager[0].to_vector<float>());
  EXPECT_EQ(traced[1].to_vector<float>(), eager[1].to_vector<float>());
  // gradients() in a graph: x squared n times, n fed when it runs: d/dx is 2^n x^(2^n - 1).
  Graph graph;
  Tensor p, n, dp;
  {
    auto scope = graph.as_default();
    p = placeholder(DType::kFloat32, {}, "p");
    n = placeholder(DType::kInt32, {}, "n");
    const Tensor y = while_loop([&](const std::vector<Tensor>& v) { return less(v[1], n); },
                                [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] * v[0], v[1] + 1}; },
                                {p, Tensor(int32_t{0})})[0];
    dp = gradients({y}, {p})[0];
  }
  Session sess(graph);
  EXPECT_FLOAT_EQ(sess.run(dp, {{p, Tensor(1.5f)}, {n, Tensor(int32_t{2})}}).item<float>(), 13.5f);  // 4 x^3
  EXPECT_FLOAT_EQ(sess.run(dp, {{p, Tensor(1.5f)}, {n, Tensor(int32_t{0})}}).item<float>(), 1.f);
}

// The deploy story: a traced model with cond and while_loop saved as a bundle (its GraphDef's
// library holds the bodies as TensorFlow FunctionDefs), loaded and served with the eager values.
TEST(CondWhileTest, ModelsWithControlFlowSaveLoadAndServe) {
  set_seed(11);
  Variable w(random_normal({2, 2}), "w");
  auto model = [&](const Tensor& x) {
    const Tensor h = cond(greater(reduce_max(x), 1.f), [&] { return matmul(x, w); }, [&] { return relu(x); });
    return double_until_large(h)[0];
  };
  auto serve = function(model);
  ConcreteFunction& cf = serve.get_concrete_function({{DType::kFloat32, {-1, 2}}});

  const GraphDef def = to_graph_def(cf.graph());
  ASSERT_EQ(def.library().function_size(), 4);
  for (const auto& f : def.library().function())
    for (const auto& n : f.node_def())
      for (const std::string& in : n.input())
        EXPECT_TRUE(in.starts_with("^") || in.find(':') == std::string::npos || std::count(in.begin(), in.end(), ':') == 2)
            << f.signature().name() << ": " << in;  // an argument, or TensorFlow's "node:out_arg:index"

  std::string dir = ::testing::TempDir() + "tapeflow_cond_model_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::filesystem::remove_all(dir);
  save_model(dir, {{"serve", cf}});
  LoadedModel loaded = load_model(dir);
  const Signature& sig = loaded.signature("serve");
  const std::string in = sig.inputs().begin()->first, out = sig.outputs().begin()->first;
  for (const Tensor& x : {Tensor{{0.5f, 2.f}, {3.f, 1.f}}, Tensor{{0.5f, -2.f}, {0.f, 0.f}}}) {
    const std::vector<float> eager = model(x).to_vector<float>();
    EXPECT_EQ(sig.run({{in, x}}).at(out).to_vector<float>(), eager);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tapeflow
