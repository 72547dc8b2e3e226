// Two tasks (a ps and a worker, in this process): the graph is partitioned by task, tensors
// cross between the tasks, variables placed on the ps live there and outlive a Session, and
// Session::reset clears them, all or by container.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "distributed/cluster/master.h"
#include "distributed/cluster/server.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A ps and a worker on ports the OS picks, each told the other's address.
struct PsAndWorker {
  PsAndWorker()
      : ps(ClusterSpec(JobMap{{"ps", {"127.0.0.1:0"}}, {"worker", {"127.0.0.1:0"}}}), "ps", 0),
        worker(ClusterSpec(JobMap{{"ps", {"127.0.0.1:0"}}, {"worker", {"127.0.0.1:0"}}}), "worker", 0) {
    ClusterSpec full(JobMap{{"ps", {absl::StrCat("127.0.0.1:", ps.port())}},
                            {"worker", {absl::StrCat("127.0.0.1:", worker.port())}}});
    ps.set_cluster(full);
    worker.set_cluster(full);
  }
  Server ps, worker;
};

// y = relu(x w + b) with w, b on the ps and the rest on the worker; `train` adds x to b.
struct Model {
  Graph g;
  Tensor x, y, train;
  std::optional<Variable> w, b;
  Operation init;
  Model() {
    auto scope = g.as_default();
    {
      auto on_ps = device("/job:ps/task:0");
      w.emplace(Tensor(std::vector<float>{1.f, 2.f, 3.f, 4.f}, {2, 2}), "w");
      b.emplace(Tensor(std::vector<float>{-10.f, 0.f}, {2}), "b");
    }
    auto on_worker = device("/job:worker/task:0");
    x = placeholder(DType::kFloat32, {1, 2}, "x");
    y = relu(matmul(x, *w) + *b);
    train = b->assign_add(reshape(x, {2}));
    init = global_variables_initializer();
  }
};

TEST(TwoTaskTest, PartitionsByTaskInLevels) {
  Model m;
  auto p = partition_for_cluster(m.g, ClusterSpec(JobMap{{"ps", {"h:1"}}, {"worker", {"h:2"}}}), "worker", 0);
  ASSERT_TRUE(p.ok()) << p.status();
  auto task_of = [&](const std::string& name) { return p->tasks[p->task_of[p->index.at(name)]].job; };
  auto level_of = [&](const std::string& name) { return p->level_of[p->index.at(name)]; };
  EXPECT_EQ(task_of("w"), "ps");
  EXPECT_EQ(task_of("MatMul"), "worker");
  // The update of b was built under the worker's scope but runs where b lives.
  EXPECT_EQ(task_of(m.train.name().substr(0, m.train.name().find(':'))), "ps");
  EXPECT_EQ(level_of("w"), 0);
  EXPECT_EQ(level_of("MatMul"), 1);  // reads w from the ps
  EXPECT_EQ(level_of(m.train.name().substr(0, m.train.name().find(':'))), 1);  // reads x from the worker
  // x crosses from the worker to the ps (the update of b), through a Placeholder there.
  const int ps = p->task_of[p->index.at("w")];
  EXPECT_FALSE(p->recv_names.contains({p->task_of[p->index.at("MatMul")], "x:0"}));
  ASSERT_TRUE(p->recv_names.contains({ps, "Reshape:0"}));
  EXPECT_EQ(p->recv_names.at({ps, "Reshape:0"}), "cluster_recv/Reshape/0");
  // An unknown job is named.
  Graph bad;
  {
    auto scope = bad.as_default();
    auto d = device("/job:chief/task:0");
    constant(Tensor(1.f), "c");
  }
  auto q = partition_for_cluster(bad, ClusterSpec(JobMap{{"ps", {"h:1"}}}), "ps", 0);
  ASSERT_FALSE(q.ok());
  EXPECT_THAT(std::string(q.status().message()), HasSubstr("node 'c' (Const) requests device '/job:chief/task:0'"));
}

TEST(TwoTaskTest, RunsAcrossTasksAndVariablesOutliveTheSession) {
  PsAndWorker cluster;
  Model m;
  {
    Session sess(cluster.worker.target(), m.g);
    sess.run(std::vector<Fetch>{}, {}, {m.init});
    // [1, 1] x [[1, 2], [3, 4]] + [-10, 0] = [-6, 6] -> relu [0, 6]
    EXPECT_THAT(sess.run(m.y, {{m.x, Tensor(std::vector<float>{1.f, 1.f}, {1, 2})}}).to_vector<float>(),
                ElementsAre(0.f, 6.f));
    EXPECT_THAT(sess.run(m.train, {{m.x, Tensor(std::vector<float>{20.f, 1.f}, {1, 2})}}).to_vector<float>(),
                ElementsAre(10.f, 1.f));
    RunOptions options;
    options.trace_level = RunOptions::TraceLevel::kFullTrace;
    options.output_partition_graphs = true;
    RunMetadata metadata;
    EXPECT_THAT(sess.run(m.y, {{m.x, Tensor(std::vector<float>{1.f, 1.f}, {1, 2})}}, options, &metadata)
                    .to_vector<float>(),
                ElementsAre(14.f, 7.f));
    std::set<std::string> devices;
    for (const NodeExecStats& s : metadata.step_stats.nodes) devices.insert(s.device);
    EXPECT_THAT(devices, ElementsAre("/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"));
    // The partitions as registered: the ps's update of b reads the worker's Reshape through a
    // Placeholder.
    ASSERT_EQ(metadata.partition_graphs.size(), 2u);
    EXPECT_EQ(metadata.partition_graphs[0].device, "/job:ps/replica:0/task:0/device:CPU:0");
    EXPECT_THAT(metadata.partition_graphs[0].to_string(), HasSubstr("cluster_recv/Reshape/0 = Placeholder()"));
    EXPECT_THAT(metadata.partition_graphs[1].to_string(), HasSubstr("MatMul = MatMul(x, cluster_recv/"));
  }
  // A new client Session (any task as its target) sees the ps's values.
  Session again(cluster.ps.target(), m.g);
  EXPECT_THAT(again.run(*m.b).to_vector<float>(), ElementsAre(10.f, 1.f));
  Session::reset(cluster.worker.target());
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { again.run(*m.b); }), HasSubstr("uninitialized"));
  again.run(std::vector<Fetch>{}, {}, {m.init});
  EXPECT_THAT(again.run(*m.b).to_vector<float>(), ElementsAre(-10.f, 0.f));
}

// Note [Resource container]: variables in two containers (and the default one) on the ps;
// Session::reset(target, {name}) clears only the named ones, {} clears all (TensorFlow's
// containers=None).
TEST(TwoTaskTest, ResetClearsOnlyTheNamedContainers) {
  PsAndWorker cluster;
  Graph g;
  std::optional<Variable> a, b, d;
  Tensor bump_a, bump_b;
  Operation init;
  {
    auto scope = g.as_default();
    auto on_ps = device("/job:ps/task:0");
    {
      auto c = container("exp1");
      a.emplace(Tensor({1.f, 2.f}), "a");
    }
    {
      auto c = container("exp2");
      b.emplace(Tensor({3.f}), "b");
    }
    d.emplace(Tensor(5.f), "d");  // the default container ""
    bump_a = a->assign_add(Tensor({10.f, 10.f}));
    bump_b = b->assign_add(Tensor({10.f}));
    init = global_variables_initializer();
  }
  Session sess(cluster.worker.target(), g);
  sess.run(std::vector<Fetch>{}, {}, {init});
  sess.run({bump_a, bump_b});
  const std::string target = cluster.worker.target();
  Session::reset(target, {"exp1"});
  // a needs initialising again, as TensorFlow's uninitialised variable; b and d keep theirs.
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { sess.run(*a); }), HasSubstr("uninitialized"));
  EXPECT_THAT(sess.run(*b).to_vector<float>(), ElementsAre(13.f));
  EXPECT_EQ(sess.run(*d).item<float>(), 5.f);
  // Re-initialising a alone (its initializer "a/Assign") leaves b as it is.
  sess.run(std::vector<Fetch>{}, {}, {g.get_operation_by_name("a/Assign")});
  EXPECT_THAT(sess.run(*a).to_vector<float>(), ElementsAre(1.f, 2.f));
  EXPECT_THAT(sess.run(*b).to_vector<float>(), ElementsAre(13.f));
  // A container nobody uses: nothing to clear. A new client Session sees the same values.
  Session::reset(target, {"nope"});
  Session other(cluster.ps.target(), g);
  EXPECT_THAT(other.run(*b).to_vector<float>(), ElementsAre(13.f));
  // {""}: the default container only.
  Session::reset(target, {""});
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { other.run(*d); }), HasSubstr("uninitialized"));
  EXPECT_THAT(other.run(*a).to_vector<float>(), ElementsAre(1.f, 2.f));
  // {}: every container.
  Session::reset(target);
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { other.run(*a); }), HasSubstr("uninitialized"));
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { other.run(*b); }), HasSubstr("uninitialized"));
}

TEST(TwoTaskTest, MovesLargeTensorsBetweenTasksInChunks) {
  PsAndWorker cluster;
  Graph g;
  Tensor big, total;
  {
    auto scope = g.as_default();
    {
      auto on_ps = device("/job:ps/task:0");
      big = random_uniform({1024, 1024 + 300}, 0.f, 1.f, DType::kFloat32, 7);  // 5.3 MB: 6 chunks
    }
    auto on_worker = device("/job:worker/task:0");
    total = reduce_sum(big);
  }
  Session sess(cluster.worker.target(), g);
  auto out = sess.run({big, total});
  EXPECT_EQ(out[0].shape(), Shape({1024, 1324}));
  double sum = 0;
  for (float v : out[0].to_vector<float>()) sum += v;
  EXPECT_NEAR(out[1].item<float>(), sum, 1e-3 * sum);
}

}  // namespace
}  // namespace tapeflow::cluster
