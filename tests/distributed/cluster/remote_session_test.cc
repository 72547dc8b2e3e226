// Session("grpc://...") on one local server: the whole graph runs in the server; feeds,
// fetches and errors (type and message) come back as from a local Session.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "distributed/cluster/server.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RemoteSessionTest, RunsAGraphWithFeedsAndFetches) {
  Server server = Server::create_local_server();
  Graph g;
  Tensor x, y, z;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {3}, "x");
    y = square(x);
    z = reduce_sum(y) + constant(Tensor(1.f));
  }
  Session sess(server.target(), g);
  auto out = sess.run({y, z}, {{x, {1.f, 2.f, 3.f}}});
  EXPECT_THAT(out[0].to_vector<float>(), ElementsAre(1.f, 4.f, 9.f));
  EXPECT_EQ(out[1].item<float>(), 15.f);
  EXPECT_EQ(out[1].dtype(), DType::kFloat32);
  // A fetched feed comes back as fed; an operation fetch is an empty tensor.
  auto fed = sess.run({x, producer(y)}, {{x, {4.f, 5.f, 6.f}}});
  EXPECT_THAT(fed[0].to_vector<float>(), ElementsAre(4.f, 5.f, 6.f));
  EXPECT_FALSE(fed[1].defined());
}

TEST(RemoteSessionTest, ErrorsKeepTheirTypeAndMessage) {
  Server server = Server::create_local_server();
  Graph g;
  Tensor x, y, bad;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {3}, "x");
    y = square(x);
    bad = reshape(placeholder(DType::kFloat32, {-1}, "v"), {2, 2});
  }
  Session sess(server.target(), g);
  // Checked in the client, before anything is sent.
  EXPECT_THAT(error_of([&] { sess.run(y, {{x, 37.0}}); }),
              HasSubstr("Cannot feed value of shape [] for Tensor 'x:0', which has shape [3]"));
  // Checked in the server: the worker's own message, its type, and which task said it.
  const std::string unfed = error_of([&] { sess.run(y); });
  EXPECT_THAT(unfed, HasSubstr("You must feed a value for placeholder tensor 'x:0'"));
  EXPECT_THAT(unfed, HasSubstr("/job:localhost/replica:0/task:0"));
  EXPECT_THAT(error_of([&] { sess.run(bad, {{producer(bad).inputs()[0], {1.f, 2.f, 3.f}}}); }),
              HasSubstr("reshape"));
  // The session still works.
  EXPECT_THAT(sess.run(y, {{x, {1.f, 1.f, 2.f}}}).to_vector<float>(), ElementsAre(1.f, 1.f, 4.f));
  sess.close();
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { sess.run(y, {{x, {1.f, 1.f, 2.f}}}); }),
              HasSubstr("closed Session"));
}

TEST(RemoteSessionTest, VariablesLiveInTheServerAndOutliveTheSession) {
  Server server = Server::create_local_server();
  Graph g;
  Tensor bump;
  std::optional<Variable> v;
  Operation init;
  {
    auto scope = g.as_default();
    v.emplace(Tensor({1.f, 2.f}), "counter");
    bump = v->assign_add(Tensor({10.f, 10.f}));
    init = global_variables_initializer();
  }
  {
    Session sess(server.target(), g);
    EXPECT_THAT(error_of<FailedPreconditionError>([&] { sess.run(*v); }), HasSubstr("counter"));
    sess.run(std::vector<Fetch>{}, {}, {init});
    EXPECT_THAT(sess.run(bump).to_vector<float>(), ElementsAre(11.f, 12.f));
    EXPECT_THAT(sess.run(*v).to_vector<float>(), ElementsAre(11.f, 12.f));
  }
  Session again(server.target(), g);
  EXPECT_THAT(again.run(*v).to_vector<float>(), ElementsAre(11.f, 12.f));
  Session::reset(server.target());
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { again.run(*v); }), HasSubstr("uninitialized"));
}

TEST(RemoteSessionTest, ReturnsStepStatisticsFromTheTask) {
  Server server = Server::create_local_server();
  Graph g;
  Tensor y;
  {
    auto scope = g.as_default();
    y = matmul(constant(Tensor(std::vector<float>{1.f, 2.f, 3.f, 4.f}, {2, 2}), "a"),
               constant(Tensor(std::vector<float>{1.f, 0.f, 0.f, 1.f}, {2, 2}), "b"));
  }
  Session sess(server.target(), g);
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata metadata;
  sess.run(y, {}, options, &metadata);
  bool found = false;
  for (const NodeExecStats& s : metadata.step_stats.nodes)
    if (s.node_name == "MatMul") {
      found = true;
      EXPECT_EQ(s.op, "MatMul");
      EXPECT_EQ(s.device, "/job:localhost/replica:0/task:0/device:CPU:0");
    }
  EXPECT_TRUE(found) << metadata.step_stats.to_string();
}

}  // namespace
}  // namespace tapeflow::cluster
