// The worker's request handlers as pure functions (no sockets): good requests run, bad ones get
// a status that names the problem and change nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "distributed/cluster/worker_service.h"
#include "graph/graph_def.h"
#include "tapeflow.h"

namespace tapeflow::cluster {
namespace {

using ::testing::HasSubstr;

std::string message(const absl::Status& s) { return std::string(s.message()); }

absl::StatusOr<Tensor> no_pull(const std::string& address, int64_t, const std::string& key, int64_t) {
  return absl::UnavailableError(absl::StrCat("no pulls in this test (", address, ", ", key, ")"));
}

struct Registered {
  Worker worker{"/job:worker/replica:0/task:0"};
  std::string handle;
  std::string product;  // "Mul:0"
  Registered() {
    Graph g;
    {
      auto scope = g.as_default();
      Tensor x = placeholder(DType::kFloat32, {2}, "x");
      Variable v(Tensor(std::vector<float>{1.f, 2.f}, {2}), "v");
      Tensor y = x * v;
      product = y.name();
    }
    RegisterGraphRequest request;
    *request.mutable_graph_def() = to_graph_def(g);
    RegisterGraphResponse response;
    EXPECT_TRUE(worker.register_graph(request, &response).ok());
    handle = response.graph_handle();
  }
  absl::Status init() {
    RunGraphRequest r;
    r.set_graph_handle(handle);
    r.add_target("v/Assign");
    RunGraphResponse response;
    return worker.run_graph(r, &response, no_pull, "");
  }
  RunGraphRequest run(std::vector<float> x) {
    RunGraphRequest r;
    r.set_graph_handle(handle);
    r.set_step_id(7);
    NamedTensor* send = r.add_send();
    send->set_name("x:0");
    EXPECT_TRUE(tensor_to_wire(Tensor(x, {2}), send->mutable_tensor()).ok());
    r.add_fetch(product);
    return r;
  }
};

TEST(WorkerServiceTest, RunsARegisteredGraphAndKeepsTensorsForTheStep) {
  Registered r;
  ASSERT_TRUE(r.init().ok());
  RunGraphRequest request = r.run({3.f, 4.f});
  request.add_keep("x:0");
  RunGraphResponse response;
  const absl::Status ran = r.worker.run_graph(request, &response, no_pull, "");
  ASSERT_TRUE(ran.ok()) << ran;
  ASSERT_EQ(response.recv_size(), 1);
  auto y = tensor_from_wire(response.recv(0).tensor());
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->to_vector<float>(), (std::vector<float>{3.f, 8.f}));
  EXPECT_EQ(r.worker.num_container_variables(), 1);  // v's value now lives in the container
  EXPECT_EQ(r.worker.step_tensor(7, "x:0")->to_vector<float>(), (std::vector<float>{3.f, 4.f}));
  EXPECT_EQ(r.worker.num_steps(), 1);
  CleanupStepRequest cleanup;
  cleanup.set_step_id(7);
  EXPECT_TRUE(r.worker.cleanup_step(cleanup).ok());
  EXPECT_THAT(message(r.worker.step_tensor(7, "x:0").status()), HasSubstr("holds no tensor 'x:0' for step 7"));
}

TEST(WorkerServiceTest, VariablesAreKeptPerContainerAndResetByContainer) {
  Graph g;
  {
    auto scope = g.as_default();
    Variable a(Tensor(1.f), "v");
    auto c = container("exp1");
    Variable b(Tensor(2.f), "w");
  }
  Worker worker("/job:ps/replica:0/task:0");
  RegisterGraphRequest request;
  *request.mutable_graph_def() = to_graph_def(g);
  RegisterGraphResponse registered;
  ASSERT_TRUE(worker.register_graph(request, &registered).ok());
  RunGraphRequest init;
  init.set_graph_handle(registered.graph_handle());
  init.add_target("v/Assign");
  init.add_target("w/Assign");
  RunGraphResponse response;
  ASSERT_TRUE(worker.run_graph(init, &response, no_pull, "").ok());
  EXPECT_EQ(worker.num_container_variables(""), 1);
  EXPECT_EQ(worker.num_container_variables("exp1"), 1);
  ResetRequest reset;
  reset.add_container("exp1");
  ASSERT_TRUE(worker.reset(reset).ok());
  EXPECT_EQ(worker.num_container_variables("exp1"), 0);
  EXPECT_EQ(worker.num_container_variables(""), 1);
  // w reads as uninitialised now; v still has its value.
  RunGraphRequest read;
  read.set_graph_handle(registered.graph_handle());
  read.add_fetch("var:w");
  RunGraphResponse read_response;
  const absl::Status s = worker.run_graph(read, &read_response, no_pull, "");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  read.set_fetch(0, "var:v");
  RunGraphResponse v_response;
  ASSERT_TRUE(worker.run_graph(read, &v_response, no_pull, "").ok());
  EXPECT_EQ(tensor_from_wire(v_response.recv(0).tensor())->item<float>(), 1.f);
  ASSERT_TRUE(worker.reset(ResetRequest()).ok());  // no names: every container
  EXPECT_EQ(worker.num_container_variables(), 0);
}

TEST(WorkerServiceTest, RejectsBadRequestsWithAStatus) {
  Registered r;
  RunGraphResponse response;
  RunGraphRequest unknown = r.run({1.f, 1.f});
  unknown.set_graph_handle("g99");
  EXPECT_EQ(r.worker.run_graph(unknown, &response, no_pull, "").code(), absl::StatusCode::kNotFound);
  RunGraphRequest bad_name = r.run({1.f, 1.f});
  bad_name.add_fetch("Mul:x");
  EXPECT_THAT(message(r.worker.run_graph(bad_name, &response, no_pull, "")), HasSubstr("'Mul:x' is not a tensor name"));
  RunGraphRequest bad_output = r.run({1.f, 1.f});
  bad_output.add_fetch("Mul:3");
  EXPECT_THAT(message(r.worker.run_graph(bad_output, &response, no_pull, "")), HasSubstr("node 'Mul' has no output 3"));
  RunGraphRequest bad_target = r.run({1.f, 1.f});
  bad_target.add_target("nope");
  EXPECT_EQ(r.worker.run_graph(bad_target, &response, no_pull, "").code(), absl::StatusCode::kNotFound);
  // A tensor whose content does not match its shape, and one too large to allocate.
  RunGraphRequest short_content = r.run({1.f, 1.f});
  short_content.mutable_send(0)->mutable_tensor()->set_tensor_content("abc");
  EXPECT_EQ(r.worker.run_graph(short_content, &response, no_pull, "").code(), absl::StatusCode::kInvalidArgument);
  RunGraphRequest huge = r.run({1.f, 1.f});
  auto* shape = huge.mutable_send(0)->mutable_tensor()->mutable_tensor_shape();
  shape->clear_dim();
  for (int i = 0; i < 4; ++i) shape->add_dim()->set_size(int64_t{1} << 20);
  huge.mutable_send(0)->mutable_tensor()->clear_tensor_content();
  huge.mutable_send(0)->mutable_tensor()->add_float_val(1.f);
  EXPECT_FALSE(r.worker.run_graph(huge, &response, no_pull, "").ok());
  // A pull that fails names the task, the key and the address.
  RunGraphRequest pull = r.run({1.f, 1.f});
  pull.clear_send();
  RemoteInput* in = pull.add_recv();
  in->set_name("x:0");
  in->set_address("127.0.0.1:9");
  in->set_key("a:0");
  EXPECT_THAT(message(r.worker.run_graph(pull, &response, no_pull, "")),
              HasSubstr("/job:worker/replica:0/task:0 receiving 'a:0' from 127.0.0.1:9"));
  // A GraphDef that does not import, and an unknown handle to deregister.
  RegisterGraphRequest bad_graph;
  bad_graph.mutable_graph_def()->add_node()->set_op("NoSuchOp");
  RegisterGraphResponse registered;
  EXPECT_THAT(message(r.worker.register_graph(bad_graph, &registered)), HasSubstr("registering a graph with"));
  DeregisterGraphRequest dereg;
  dereg.set_graph_handle("g42");
  EXPECT_EQ(r.worker.deregister_graph(dereg).code(), absl::StatusCode::kNotFound);
  // Nothing changed: no variable or step was stored; the graph still runs.
  EXPECT_EQ(r.worker.num_graphs(), 1);
  EXPECT_EQ(r.worker.num_container_variables(), 0);
  EXPECT_EQ(r.worker.num_steps(), 0);
  EXPECT_EQ(r.worker.run_graph(r.run({1.f, 1.f}), &response, no_pull, "").code(),
            absl::StatusCode::kFailedPrecondition);  // v is not initialized yet
  ASSERT_TRUE(r.init().ok());
  EXPECT_TRUE(r.worker.run_graph(r.run({1.f, 1.f}), &response, no_pull, "").ok());
}

}  // namespace
}  // namespace tapeflow::cluster
