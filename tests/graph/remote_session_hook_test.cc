// graph/remote_session.h: without tapeflow_cluster linked (this binary does not link it), a
// grpc:// target says what to link; an unknown scheme is an invalid argument.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/remote_session.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

TEST(RemoteSessionHookTest, AGrpcTargetWithoutTheClusterLibrarySaysToLinkIt) {
  Graph g;
  EXPECT_THAT(error_of<UnimplementedError>([&] { Session("grpc://127.0.0.1:1", g); }),
              HasSubstr("link tapeflow_cluster"));
  EXPECT_THAT(error_of<UnimplementedError>([&] { Session::reset("grpc://127.0.0.1:1"); }),
              HasSubstr("link tapeflow_cluster"));
  EXPECT_THAT(error_of([&] { Session("tcp://h:1", g); }), HasSubstr("unknown target 'tcp://h:1'"));
}

TEST(RemoteSessionHookTest, ARegisteredFactoryReceivesTheValidatedRun) {
  struct Fake : RemoteSession {
    std::vector<Tensor> run(const RemoteRunRequest& r) override {
      std::vector<Tensor> out;
      for (size_t i = 0; i < r.fetches.size(); ++i) out.push_back(Tensor(static_cast<float>(r.feeds.size())));
      return out;
    }
    void close() override {}
  };
  register_remote_session_factory(
      "fake://", [](const Graph&, const SessionOptions&) { return std::unique_ptr<RemoteSession>(new Fake); },
      [](const std::string&, const std::vector<std::string>&) {});
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    y = x * 2.f;
  }
  Session sess("fake://here", g);
  EXPECT_EQ(sess.run(y, {{x, {1.f, 2.f}}}).item<float>(), 1.f);
  // Feeds are still checked by the Session before the remote side sees them.
  EXPECT_THAT(error_of([&] { sess.run(y, {{x, 3.0}}); }), HasSubstr("Cannot feed value of shape []"));
}

}  // namespace
}  // namespace tapeflow
