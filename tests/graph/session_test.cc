// Session::run: feeds and fetches, pruning, errors, variables per session, run metadata,
// plan caching and concurrent runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SessionTest, FeedsAPlaceholderAsTheGuideShows) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {3}, "x");
    y = square(x);
  }
  Session sess(g);
  EXPECT_THAT(sess.run(y, {{x, {1.f, 2.f, 3.f}}}).to_vector<float>(), ElementsAre(1.f, 4.f, 9.f));
  EXPECT_THAT(sess.run(y, {{x, {0.f, 0.f, 5.f}}}).to_vector<float>(), ElementsAre(0.f, 0.f, 25.f));
  EXPECT_THAT(error_of([&] { sess.run(y); }),
              HasSubstr("You must feed a value for placeholder tensor 'x:0' with dtype float32 and shape [3]"));
  EXPECT_THAT(error_of([&] { sess.run(y); }), HasSubstr("session_test.cc:"));
  EXPECT_THAT(error_of([&] { sess.run(y, {{x, 37.0}}); }),
              HasSubstr("Cannot feed value of shape [] for Tensor 'x:0', which has shape [3]"));
  EXPECT_THAT(error_of([&] { sess.run(y, {{x, Tensor({1, 2, 3})}}); }),
              HasSubstr("Cannot feed a value of dtype int32 for Tensor 'x:0', which has dtype float32"));
}

TEST(SessionTest, AFeedOwnsItsValue) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    y = x * 2.f;
  }
  Session sess(g);
  FeedList feeds;
  {
    Tensor value = {1.f, 2.f};
    feeds.emplace_back(x, value);  // a named tensor that ends before the run
  }
  EXPECT_THAT(sess.run(y, feeds).to_vector<float>(), ElementsAre(2.f, 4.f));
}

TEST(SessionTest, RunsOnlyTheSubgraphTheFetchesNeed) {
  Graph g;
  Tensor a, b, unused;
  {
    auto scope = g.as_default();
    Tensor p = placeholder(DType::kFloat32, {}, "p");
    a = constant(Tensor(2.f), "a");
    b = a * 3.f;
    unused = print(p * 2.f, {p}, "never printed");  // needs the unfed placeholder
  }
  Session sess(g);
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata metadata;
  testing::internal::CaptureStderr();
  EXPECT_FLOAT_EQ(sess.run(b, {}, options, &metadata).item<float>(), 6.f);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  std::vector<std::string> ran;
  for (const NodeExecStats& n : metadata.step_stats.nodes) ran.push_back(n.node_name);
  // Constants feed their consumers directly: listed at zero cost beside the one kernel; the
  // print and its placeholder are not run.
  EXPECT_THAT(ran, ::testing::UnorderedElementsAre("a", "Const", "Mul"));
  for (const NodeExecStats& n : metadata.step_stats.nodes) {
    if (n.op == "Const") {
      EXPECT_EQ(n.duration_nanos, 0) << n.node_name;
    }
  }
}

TEST(SessionTest, FeedsReplaceAnyTensorAndCutTheGraphThere) {
  Graph g;
  Tensor x, y, z;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    y = x + 1.f;
    z = y * 10.f;
  }
  Session sess(g);
  // y is fed, so x need not be.
  EXPECT_THAT(sess.run(z, {{y, {1.f, 2.f}}}).to_vector<float>(), ElementsAre(10.f, 20.f));
  g.prevent_feeding(y);
  EXPECT_THAT(error_of([&] { sess.run(z, {{y, {1.f, 2.f}}}); }), HasSubstr("may not be fed"));
  EXPECT_EQ(g.why_not_feedable(y), "");
  // A reason, when given, ends the message.
  g.prevent_feeding(y, "the import chose its value");
  EXPECT_THAT(error_of([&] { sess.run(z, {{y, {1.f, 2.f}}}); }),
              HasSubstr("may not be fed: the import chose its value"));
}

// TensorFlow moves a fed placeholder's control edges onto the fed value: they wait for nothing.
TEST(SessionTest, AControlInputOnAFedPlaceholderIsSatisfiedByTheFeed) {
  Graph g;
  Tensor a, b, out;
  {
    auto scope = g.as_default();
    a = placeholder(DType::kFloat32, {2}, "a");
    b = placeholder(DType::kFloat32, {2}, "b");
    auto deps = control_dependencies({b});
    out = a * 2.f;
  }
  ASSERT_EQ(producer(out).control_inputs().size(), 1u);
  Session sess(g);
  EXPECT_EQ(sess.run(out, {{a, Tensor({1.f, 2.f})}, {b, Tensor({0.f, 0.f})}}).to_vector<float>(),
            (std::vector<float>{2.f, 4.f}));
  try {  // unfed, it still must be fed
    sess.run(out, {{a, Tensor({1.f, 2.f})}});
    FAIL() << "b is needed and not fed";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("You must feed a value for placeholder tensor 'b:0'"));
  }
}

TEST(SessionTest, FetchesManyComputeSharedWorkOnce) {
  Graph g;
  Tensor y, out;
  {
    auto scope = g.as_default();
    Tensor x = constant(Tensor({{37.f, -23.f}, {1.f, 4.f}}));
    Variable w(Tensor({{1.f, 0.f}, {0.f, 1.f}}), "w");
    y = matmul(x, w);
    out = softmax(y);
  }
  Session sess(g);
  sess.run(g.global_variables_initializer());
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata md;
  auto r = sess.run({y, out, y}, {}, {}, &options, &md);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_THAT(r[0].to_vector<float>(), ElementsAre(37.f, -23.f, 1.f, 4.f));
  EXPECT_THAT(r[2].to_vector<float>(), ElementsAre(37.f, -23.f, 1.f, 4.f));
  EXPECT_NEAR(r[1].at<float>({0, 0}), 1.f, 1e-6);
  int matmuls = 0;
  for (const NodeExecStats& n : md.step_stats.nodes) {
    matmuls += n.op == "MatMul";
    EXPECT_EQ(n.device, "/job:localhost/replica:0/task:0/device:CPU:0");
    EXPECT_GE(n.duration_nanos, 0);
  }
  EXPECT_EQ(matmuls, 1);
}

TEST(SessionTest, UninitializedVariablesAreListedWithTheirLines) {
  Graph g;
  Tensor sum;
  Variable* v1;
  {
    auto scope = g.as_default();
    static Variable a(Tensor(1.f), "a");
    static Variable b(Tensor(2.f), "b");
    v1 = &a;
    sum = a.read() + b.read();
  }
  (void)v1;
  Session sess(g);
  try {
    sess.run(sum);
    FAIL() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("uninitialized"));
    EXPECT_THAT(e.what(), HasSubstr("'a' (created at"));
    EXPECT_THAT(e.what(), HasSubstr("'b' (created at"));
  }
  sess.run(g.global_variables_initializer());
  EXPECT_FLOAT_EQ(sess.run(sum).item<float>(), 3.f);
}

TEST(SessionTest, VariablesLivePerSessionAndFailedRunsChangeNothing) {
  Graph g;
  std::optional<Variable> v;
  Tensor inc, bad, x;
  Operation init;
  {
    auto scope = g.as_default();
    v.emplace(Tensor(0.f), "counter");
    inc = v->assign_add(1.f);
    x = placeholder(DType::kFloat32, {-1}, "x");
    // Assigns first, then fails in a later node: the assignment must not stick.
    auto deps = control_dependencies({inc});
    bad = v->read() + x + Tensor({1.f, 2.f, 3.f});
    init = g.global_variables_initializer();
  }
  Session s1(g), s2(g);
  s1.run(init);
  s2.run(init);
  s1.run(inc);
  s1.run(inc);
  EXPECT_FLOAT_EQ(s1.run(*v).item<float>(), 2.f);
  EXPECT_FLOAT_EQ(s2.run(*v).item<float>(), 0.f);
  EXPECT_THROW(s1.run(bad, {{x, {1.f, 2.f}}}), InvalidArgumentError);
  EXPECT_FLOAT_EQ(s1.run(*v).item<float>(), 2.f);
  s1.close();
  EXPECT_THROW(s1.run(*v), FailedPreconditionError);
  EXPECT_FLOAT_EQ(s2.run(*v).item<float>(), 0.f);
}

TEST(SessionTest, ReadValueUnderControlDependenciesSeesTheUpdate) {
  Graph g;
  std::optional<Variable> v;
  Tensor read_after;
  {
    auto scope = g.as_default();
    v.emplace(Tensor(10), "v");
    Tensor update = v->assign_add(5);
    auto deps = control_dependencies({update});
    read_after = v->read();
  }
  Session sess(g);
  sess.run(g.global_variables_initializer());
  EXPECT_EQ(sess.run(read_after).item<int32_t>(), 15);
  EXPECT_EQ(sess.run(read_after).item<int32_t>(), 20);
}

TEST(SessionTest, EagerVariablesUsedInAGraphAreCapturedNotCopied) {
  Variable w(Tensor({1.f, 2.f}), "w");
  Graph g;
  Tensor y, step;
  {
    auto scope = g.as_default();
    y = w.read() * 2.f;
    step = w.assign_add(Tensor({1.f, 1.f}));
  }
  Session sess(g);
  EXPECT_THAT(sess.run(y).to_vector<float>(), ElementsAre(2.f, 4.f));
  sess.run(step);
  EXPECT_THAT(w.read().to_vector<float>(), ElementsAre(2.f, 3.f));  // the eager variable changed
}

TEST(SessionTest, ErrorsNameTheNodeAndItsLine) {
  Graph g;
  Tensor y, x;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, -1}, "x");
    y = matmul(x, x);
  }
  Session sess(g);
  const std::string msg = error_of([&] { sess.run(y, {{x, Tensor({{1.f, 2.f, 3.f}})}}); });
  EXPECT_THAT(msg, HasSubstr("[matmul]"));
  EXPECT_THAT(msg, HasSubstr("node 'MatMul' (MatMul) created at"));
  EXPECT_THAT(msg, HasSubstr("session_test.cc"));
  Graph other;
  Tensor c;
  {
    auto scope = other.as_default();
    c = constant(Tensor(1.f));
  }
  EXPECT_THAT(error_of([&] { sess.run(c); }), HasSubstr("is not an element of this session's graph"));
}

TEST(SessionTest, RandomNodesDrawNewValuesEachRun) {
  Graph g;
  Tensor r;
  {
    auto scope = g.as_default();
    r = random_uniform({4}, 0.0, 1.0, DType::kFloat32, 3);
  }
  Session s1(g), s2(g);
  auto a = s1.run(r).to_vector<float>();
  auto b = s1.run(r).to_vector<float>();
  EXPECT_NE(a, b);
  EXPECT_EQ(s2.run(r).to_vector<float>(), a);  // a new session repeats the sequence
}

TEST(SessionTest, PlansAreCachedAndConcurrentRunsAreSafe) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1}, "x");
    Tensor a = x * 2.f;
    Tensor b = x + 3.f;
    y = a * b + reduce_sum(x);
  }
  Session sess(g);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const float v = static_cast<float>(t * 100 + i);
        Tensor out = sess.run(y, {{x, {v, 1.f}}});
        const auto got = out.to_vector<float>();
        if (got[0] != (2 * v) * (v + 3) + v + 1 || got[1] != 2.f * 4.f + v + 1) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(sess.num_cached_plans(), 1);
}

TEST(SessionTest, PartitionGraphsAndPlacement) {
  DeviceManager::global().set_num_cpu_devices(2);
  Graph g;
  Tensor y;
  {
    auto scope = g.as_default();
    Tensor a = constant(Tensor({1.f, 2.f}), "a");
    {
      auto d = device("/device:CPU:1");
      y = a * 2.f;
    }
  }
  SessionOptions so;
  so.log_device_placement = true;
  so.device_count["CPU"] = 2;
  Session sess(g, so);
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata md;
  testing::internal::CaptureStderr();
  EXPECT_THAT(sess.run(y, {}, options, &md).to_vector<float>(), ElementsAre(2.f, 4.f));
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("Mul: (Mul): /job:localhost/replica:0/task:0/device:CPU:1"));
  ASSERT_EQ(md.partition_graphs.size(), 2u);
  const PartitionGraph& cpu1 =
      md.partition_graphs[0].device.ends_with("CPU:1") ? md.partition_graphs[0] : md.partition_graphs[1];
  EXPECT_THAT(cpu1.to_string(), HasSubstr("a/_1 = _Recv() {tensor_name=\"a:0\""));
  EXPECT_THAT(cpu1.to_string(), HasSubstr("Mul = Mul(a/_1:0"));

  Graph remote;
  Tensor z;
  {
    auto scope = remote.as_default();
    auto d = device("/job:ps/task:1");
    z = constant(Tensor(1.f)) + 1.f;
  }
  Session strict(remote);
  EXPECT_THAT(error_of([&] { strict.run(z); }), HasSubstr("Cannot assign a device for operation"));
  SessionOptions soft;
  soft.allow_soft_placement = true;
  Session lenient(remote, soft);
  EXPECT_FLOAT_EQ(lenient.run(z).item<float>(), 2.f);
}

TEST(SessionTest, InteractiveSessionAndShortcuts) {
  Graph g;
  auto scope = g.as_default();
  Tensor c = constant(Tensor(5.f)) * constant(Tensor(6.f));
  EXPECT_THROW(eval(c), FailedPreconditionError);
  InteractiveSession sess;
  EXPECT_FLOAT_EQ(eval(c).item<float>(), 30.f);
  EXPECT_FLOAT_EQ(c.eval().item<float>(), 30.f);
  Variable v(Tensor(1.f), "v");
  g.global_variables_initializer().run();
  EXPECT_FLOAT_EQ(sess.run(v).item<float>(), 1.f);
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {
TEST(SessionTest, AFetchOfAnotherGraphNamesBothGraphs) {
  Graph g1;  // the line below names this one
  const int g1_line = __LINE__ - 1;
  Graph g2;
  const int g2_line = __LINE__ - 1;
  Tensor a;
  {
    auto scope = g1.as_default();
    a = constant(Tensor(1.f), "a");
  }
  {
    auto scope = g2.as_default();
    constant(Tensor(2.f), "b");
  }
  Session sess(g2);
  const std::string message = error_of([&] { sess.run(a); });
  EXPECT_THAT(message, ::testing::HasSubstr("Tensor 'a:0' (fetch) is not an element of this session's graph: "
                                            "it belongs to the graph created at session_test.cc:" +
                                            std::to_string(g1_line)));
  EXPECT_THAT(message, ::testing::HasSubstr("the session runs the graph created at session_test.cc:" +
                                            std::to_string(g2_line)));
}
}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {
// Note [Growing graph]: warned once per session, naming the count and the first new node's line.
TEST(SessionTest, AGraphThatGrowsBetweenRunsIsReportedOnce) {
  Graph g;
  Tensor x;
  {
    auto scope = g.as_default();
    x = constant(Tensor(1.f), "x");
  }
  Session sess(g);
  ::testing::internal::CaptureStderr();
  sess.run(x);
  {
    auto scope = g.as_default();
    for (int i = 0; i < 3; ++i) x = x + 1.f;  // the leak: ops built in the loop
  }
  const int loop_line = __LINE__ - 2;
  sess.run(x);
  sess.run(x);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ::testing::HasSubstr("the graph grew by 6 nodes since this session's first run"));
  EXPECT_THAT(err, ::testing::HasSubstr("was added at session_test.cc:" + std::to_string(loop_line)));
  EXPECT_EQ(err.find("the graph grew"), err.rfind("the graph grew"));  // once
}
}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {
// Constants read in place by the kernels still show in the step statistics and the partitions.
TEST(SessionTest, ConstNodesAreListedInStepStatsAndPartitionGraphs) {
  Graph g;
  Tensor y;
  {
    auto scope = g.as_default();
    Tensor c = constant(Tensor{1.f, 2.f}, "c");
    y = square(c);
  }
  Session sess(g);
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  options.output_partition_graphs = true;
  RunMetadata md;
  sess.run({y}, {}, {}, &options, &md);
  std::vector<std::string> names;
  for (const NodeExecStats& n : md.step_stats.nodes) names.push_back(n.node_name + "/" + n.op);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("c/Const", "Square/Square"));
  ASSERT_EQ(md.partition_graphs.size(), 1u);
  EXPECT_THAT(md.partition_graphs[0].nodes, ::testing::Contains("c = Const()"));
  EXPECT_THAT(md.partition_graphs[0].nodes, ::testing::Contains("Square = Square(c:0)"));
}
}  // namespace
}  // namespace tapeflow
