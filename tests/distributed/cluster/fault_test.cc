// Faults: a run past its RunOptions timeout, a worker process killed mid-step (the run fails
// within the timeout, naming the task and what it was doing), and the cluster serving new steps
// once the task is back. Tasks are tapeflow_server processes on 127.0.0.1 (cluster_process.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "distributed/cluster/grpc_client.h"
#include "distributed/cluster/server.h"
#include "tapeflow.h"
#include "tests/distributed/cluster/cluster_process.h"
#include "tests/support/test_util.h"

namespace tapeflow::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// A counter on the ps and a product on the worker whose cost the fed matrix sets (12 matmuls of
// an n x n matrix: n = 1500 keeps the worker busy for seconds, n = 50 is instant).
struct SlowModel {
  Graph g;
  Tensor seed, matrix, slow, bump;
  std::optional<Variable> counter;
  Operation init;
  SlowModel() {
    auto scope = g.as_default();
    {
      auto on_ps = device("/job:ps/task:0");
      counter.emplace(Tensor(0.f), "counter");
    }
    auto on_worker = device("/job:worker/task:0");
    seed = placeholder(DType::kFloat32, {}, "seed");
    matrix = placeholder(DType::kFloat32, {-1, -1}, "matrix");
    Tensor p = matrix;
    for (int i = 0; i < 12; ++i) p = matmul(p, matrix);
    slow = reduce_sum(p) + *counter;
    bump = counter->assign_add(seed);
    init = global_variables_initializer();
  }
};

TEST(FaultTest, ARunPastItsTimeoutNamesTheTaskItWaitedFor) {
  Server server = Server::create_local_server();
  // The same graph, all on the one local task.
  Graph g;
  Tensor slow, seed;
  {
    auto scope = g.as_default();
    seed = placeholder(DType::kFloat32, {}, "seed");
    Tensor mm = random_uniform({700, 700}, 0.f, 0.01f, DType::kFloat32, 3) * seed;
    Tensor p = mm;
    for (int i = 0; i < 40; ++i) p = matmul(p, mm);
    slow = reduce_sum(p);
  }
  Session sess(server.target(), g);
  RunOptions options;
  options.timeout_in_ms = 50;
  const auto start = Clock::now();
  const std::string error = error_of<DeadlineExceededError>([&] { sess.run(slow, {{seed, 1.f}}, options, nullptr); });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_THAT(error, HasSubstr("/job:localhost/replica:0/task:0"));
  EXPECT_THAT(error, HasSubstr("did not answer within the run's timeout of 50 ms while running level 0 of step"));
  // Without a timeout the same run completes.
  EXPECT_TRUE(sess.run(slow, {{seed, 1.f}}).defined());
}

TEST(FaultTest, SlowAKilledWorkerFailsTheRunAndTheClusterRecovers) {
  testing::ProcessCluster cluster({{"ps", 1}, {"worker", 1}});
  SlowModel m;
  Session sess(cluster.target("ps", 0), m.g);
  sess.run(std::vector<Fetch>{}, {}, {m.init});
  EXPECT_EQ(sess.run(m.bump, {{m.seed, 2.f}}).item<float>(), 2.f);
  RunOptions options;
  options.timeout_in_ms = 20000;
  // Kill the worker while it computes the slow product.
  auto killer = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cluster.kill("worker", 0);
  });
  const Tensor big = random_uniform({1500, 1500}, 0.f, 0.001f), small = random_uniform({50, 50}, 0.f, 0.01f);
  const auto start = Clock::now();
  std::string error;
  try {
    sess.run(m.slow, {{m.matrix, big}}, options, nullptr);
    error = "the run succeeded";
  } catch (const UnavailableError& e) {
    error = e.what();
  } catch (const Error& e) {
    error = absl::StrCat("wrong error type: ", e.what());
  }
  killer.get();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(options.timeout_in_ms));
  EXPECT_THAT(error, HasSubstr("/job:worker/replica:0/task:0"));
  EXPECT_THAT(error, HasSubstr("failed while running level 0 of step"));  // the product
  EXPECT_THAT(error, HasSubstr("(RunGraph)"));
  // While it is down, runs fail fast with the same diagnosis.
  options.timeout_in_ms = 3000;
  EXPECT_THAT(error_of<UnavailableError>([&] { sess.run(m.slow, {{m.matrix, small}}, options, nullptr); }),
              HasSubstr("/job:worker/replica:0/task:0"));
  // Back on its port: the next step re-registers the partitions and runs; the ps kept its variable.
  cluster.restart("worker", 0);
  options.timeout_in_ms = 60000;
  Tensor product = small;  // the worker's product, here, plus the ps's counter (2)
  for (int i = 0; i < 12; ++i) product = matmul(product, small);
  const float expected = reduce_sum(product).item<float>() + 2.f;
  EXPECT_NEAR(sess.run(m.slow, {{m.matrix, small}}, options, nullptr).item<float>(), expected, 1e-4f * expected);
  EXPECT_EQ(sess.run(m.bump, {{m.seed, 3.f}}).item<float>(), 5.f);
}

TEST(FaultTest, ATokenProtectsServerProcesses) {
  testing::ProcessCluster cluster({{"ps", 1}}, "tok3n");
  Graph g;
  Tensor y;
  {
    auto scope = g.as_default();
    y = constant(Tensor(2.f)) + 1.f;
  }
  set_client_token("");
  EXPECT_THAT(error_of<PermissionDeniedError>([&] { Session(cluster.target("ps", 0), g).run(y); }),
              HasSubstr("requires the cluster token"));
  set_client_token("tok3n");
  EXPECT_EQ(Session(cluster.target("ps", 0), g).run(y).item<float>(), 3.f);
  set_client_token("");
}

}  // namespace
}  // namespace tapeflow::cluster
