// Server: binding (127.0.0.1 by default, OS-chosen ports), join/stop, the token, message limits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "distributed/cluster/grpc_client.h"
#include "distributed/cluster/server.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow::cluster {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ServerTest, ALocalServerBindsLoopbackOnAPortTheOsPicks) {
  Server server = Server::create_local_server();
  EXPECT_GT(server.port(), 0);
  EXPECT_EQ(server.target(), absl::StrCat("grpc://127.0.0.1:", server.port()));
  EXPECT_EQ(server.job(), "localhost");
  EXPECT_EQ(server.cluster().task_address("localhost", 0), absl::StrCat("127.0.0.1:", server.port()));
  // It answers on loopback.
  grpc::ClientContext context;
  prepare_context(context, 5000);
  GetStatusResponse response;
  ASSERT_TRUE(stub_for(absl::StrCat("127.0.0.1:", server.port()))->GetStatus(&context, {}, &response).ok());
  EXPECT_EQ(response.job(), "localhost");
  EXPECT_EQ(response.cluster().job(0).tasks().at(0), absl::StrCat("127.0.0.1:", server.port()));
}

TEST(ServerTest, JoinReturnsOnceStopped) {
  Server server = Server::create_local_server();
  auto joined = std::async(std::launch::async, [&] { server.join(); });
  EXPECT_EQ(joined.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  server.stop();
  EXPECT_EQ(joined.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  server.stop();  // idempotent
}

TEST(ServerTest, RejectsTasksTheClusterLacksAndPortsInUse) {
  ClusterSpec cluster(JobMap{{"ps", {"127.0.0.1:0"}}});
  EXPECT_THAT(error_of([&] { Server(cluster, "worker", 0); }), HasSubstr("no task 0 in job 'worker'"));
  EXPECT_THAT(error_of([&] { Server(cluster, "ps", 1); }), HasSubstr("no task 1 in job 'ps'"));
  Server first(cluster, "ps", 0);
  ClusterSpec taken(JobMap{{"ps", {absl::StrCat("127.0.0.1:", first.port())}}});
  EXPECT_THAT(error_of<UnavailableError>([&] { Server(taken, "ps", 0); }), HasSubstr("could not listen on 127.0.0.1:"));
}

TEST(ServerTest, SetClusterKeepsItsOwnBoundAddress) {
  ClusterSpec cluster(JobMap{{"ps", {"127.0.0.1:0"}}, {"worker", {"127.0.0.1:0"}}});
  Server ps(cluster, "ps", 0);
  ps.set_cluster(ClusterSpec(JobMap{{"ps", {"127.0.0.1:0"}}, {"worker", {"127.0.0.1:4567"}}}));
  EXPECT_EQ(ps.cluster().task_address("ps", 0), absl::StrCat("127.0.0.1:", ps.port()));
  EXPECT_EQ(ps.cluster().task_address("worker", 0), "127.0.0.1:4567");
  EXPECT_THAT(error_of([&] { ps.set_cluster(ClusterSpec(JobMap{{"worker", {"127.0.0.1:1"}}})); }), HasSubstr("no task 0 in job 'ps'"));
}

struct TokenReset {
  ~TokenReset() { set_client_token(""); }
};

TEST(ServerTest, ATokenRejectsClientsThatLackIt) {
  TokenReset reset;
  ServerOptions options;
  options.token = "s3cret";
  Server server = Server::create_local_server(options);
  Graph g;
  Tensor y;
  {
    auto scope = g.as_default();
    y = constant(Tensor(2.f)) * 3.f;
  }
  set_client_token("");
  EXPECT_THAT(error_of<PermissionDeniedError>([&] { Session(server.target(), g).run(y); }),
              HasSubstr("requires the cluster token (set_client_token or $TAPEFLOW_CLUSTER_TOKEN); none was sent"));
  set_client_token("wrong");
  EXPECT_THAT(error_of<PermissionDeniedError>([&] { Session(server.target(), g).run(y); }),
              HasSubstr("a different one was sent"));
  set_client_token("s3cret");
  EXPECT_EQ(Session(server.target(), g).run(y).item<float>(), 6.f);
}

TEST(ServerTest, AnOversizedRequestIsRejectedWithAStatus) {
  ServerOptions options;
  options.max_message_bytes = 64 * 1024;
  Server server = Server::create_local_server(options);
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1}, "x");
    y = reduce_sum(x);
  }
  Session sess(server.target(), g);
  EXPECT_EQ(sess.run(y, {{x, Tensor(std::vector<float>(100, 1.f), {100})}}).item<float>(), 100.f);
  std::vector<float> big(100000);  // distinct values: a constant tensor travels as one value
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 7);
  EXPECT_THAT(error_of<ResourceExhaustedError>([&] { sess.run(y, {{x, Tensor(big, {100000})}}); }),
              HasSubstr("/job:localhost/replica:0/task:0"));
  // The server still serves.
  EXPECT_EQ(sess.run(y, {{x, Tensor(std::vector<float>(10, 1.f), {10})}}).item<float>(), 10.f);
}

}  // namespace
}  // namespace tapeflow::cluster
