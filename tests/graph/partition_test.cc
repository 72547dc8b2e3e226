// Partitioning (Note [Partitions], graph/executor.h): per-device partitions joined by
// _Send/_Recv pairs through a rendezvous, values equal to a one-device run bit for bit,
// concurrent runs on one Session with two devices, failed runs, and traces on any device set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <set>
#include <thread>

#include "absl/strings/str_split.h"
#include "graph/rendezvous.h"
#include "tapeflow.h"
#include "tests/graph/placement_util.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

SessionOptions two_devices(int inter_op_threads = 0) {
  SessionOptions options;
  options.device_count["CPU"] = 2;
  options.inter_op_parallelism_threads = inter_op_threads;
  return options;
}

// x -> [CPU:0] matmul -> [CPU:1] tanh, * 2 -> [CPU:0] matmul + bias: two crossings each way.
struct TwoDeviceModel {
  Graph g;
  Tensor x, a, hidden, y;
  TwoDeviceModel() {
    const Tensor w1 = random_normal({64, 96}, 0, 1, DType::kFloat32, 3);  // eager values
    const Tensor w2 = random_normal({96, 8}, 0, 1, DType::kFloat32, 4);
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, 64}, "x");
    {
      auto d = device("/device:CPU:0");
      a = matmul(x, constant(w1, "w1"));
    }
    {
      auto d = device("/device:CPU:1");
      hidden = tanh(a) * 2.f;
    }
    auto d = device("/device:CPU:0");
    y = matmul(hidden, constant(w2, "w2")) + 1.f;
  }
};

Tensor batch(int rows, float scale) {
  std::vector<float> v(static_cast<size_t>(rows) * 64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>((i * 7919) % 101) / 101.f - 0.5f;
  return Tensor(v, Shape{rows, 64});
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  return a.shape() == b.shape() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

TEST(SessionPartitionTest, CrossDeviceValuesEqualOneDeviceValuesBitForBit) {
  TwoDeviceModel m;
  Session split(m.g, two_devices());
  SessionOptions one;
  one.allow_soft_placement = true;  // CPU:1 requests run on CPU:0
  Session single(m.g, one);
  for (int rows : {1, 5, 64}) {
    const Tensor xb = batch(rows, 1.f + rows);
    const Tensor a = split.run(m.y, {{m.x, xb}});
    const Tensor b = single.run(m.y, {{m.x, xb}});
    EXPECT_TRUE(bitwise_equal(a, b)) << rows << " rows";
    EXPECT_THAT(split.run(m.hidden, {{m.x, xb}}).device_name(), ::testing::EndsWith("CPU:1"));
  }
  // One inter-op thread: partitions run in order on the caller's thread, same values.
  Session sequential(m.g, two_devices(1));
  EXPECT_TRUE(bitwise_equal(sequential.run(m.y, {{m.x, batch(3, 2.f)}}), single.run(m.y, {{m.x, batch(3, 2.f)}})));
}

TEST(SessionPartitionTest, PartitionGraphsShowOneGraphPerDeviceWithSendRecv) {
  TwoDeviceModel m;
  Session sess(m.g, two_devices());
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata md;
  sess.run(m.y, {{m.x, batch(2, 1.f)}}, options, &md);
  ASSERT_EQ(md.partition_graphs.size(), 2u);
  const PartitionGraph& p0 = md.partition_graphs[0].device == kCpu0 ? md.partition_graphs[0] : md.partition_graphs[1];
  const PartitionGraph& p1 = md.partition_graphs[0].device == kCpu1 ? md.partition_graphs[0] : md.partition_graphs[1];
  ASSERT_EQ(p0.device, kCpu0);
  ASSERT_EQ(p1.device, kCpu1);
  const std::string s0 = p0.to_string(), s1 = p1.to_string();
  // a (MatMul:0) goes to CPU:1 and hidden comes back.
  const std::string a = producer(m.a).name(), h = producer(m.hidden).name();
  ASSERT_EQ(a, "MatMul");
  EXPECT_THAT(s0, HasSubstr("MatMul/_0 = _Send(MatMul:0) {tensor_name=\"MatMul:0\", recv_device=\"" +
                            std::string(kCpu1) + "\"}"));
  EXPECT_THAT(s1, HasSubstr("MatMul/_1 = _Recv() {tensor_name=\"MatMul:0\", send_device=\"" + std::string(kCpu0) +
                            "\"}"));
  EXPECT_THAT(s1, HasSubstr("Tanh = Tanh(MatMul/_1:0)"));
  EXPECT_THAT(s1, HasSubstr(h + "/_2 = _Send(" + h + ":0)"));
  EXPECT_THAT(s0, HasSubstr(h + "/_3 = _Recv() {tensor_name=\"" + h + ":0\""));
  EXPECT_THAT(s0, HasSubstr("MatMul_1 = MatMul(" + h + "/_3:0, w2:0)"));
  EXPECT_THAT(s0, Not(HasSubstr("Tanh")));
  EXPECT_THAT(s1, Not(HasSubstr("MatMul_1")));
  // The step statistics have the transfers on their devices too.
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata traced;
  sess.run(m.y, {{m.x, batch(2, 1.f)}}, options, &traced);
  int sends = 0, recvs = 0;
  for (const NodeExecStats& n : traced.step_stats.nodes) {
    if (n.op == "_Send") { ++sends; EXPECT_EQ(n.device, n.node_name == "MatMul/_0" ? kCpu0 : kCpu1); }
    if (n.op == "_Recv") ++recvs;
  }
  EXPECT_EQ(sends, 2);
  EXPECT_EQ(recvs, 2);
  // One device: one partition, no transfers.
  SessionOptions one;
  one.allow_soft_placement = true;
  Session single(m.g, one);
  RunMetadata md1;
  single.run(m.y, {{m.x, batch(2, 1.f)}}, options, &md1);
  ASSERT_EQ(md1.partition_graphs.size(), 1u);
  EXPECT_THAT(md1.partition_graphs[0].to_string(), Not(HasSubstr("_Send")));
}

TEST(SessionPartitionTest, ATensorCrossesOncePerDeviceHoweverManyConsumers) {
  Graph g;
  Tensor a, b, c;
  {
    auto scope = g.as_default();
    a = constant(Tensor({1.f, 2.f}), "a");
    auto d = device("/device:CPU:1");
    b = a * 3.f;
    c = a + b;
  }
  Session sess(g, two_devices());
  RunOptions options;
  options.output_partition_graphs = true;
  RunMetadata md;
  EXPECT_THAT(sess.run(c, {}, options, &md).to_vector<float>(), ElementsAre(4.f, 8.f));
  std::string all;
  for (const PartitionGraph& p : md.partition_graphs) all += p.to_string();
  size_t sends = 0;
  for (size_t pos = all.find("= _Send("); pos != std::string::npos; pos = all.find("= _Send(", pos + 1)) ++sends;
  EXPECT_EQ(sends, 1u);
}

TEST(SessionPartitionTest, RendezvousKeysAndAbort) {
  DeviceManager::global().set_num_cpu_devices(2);
  Device* d0 = DeviceManager::global().cpu(0);
  Device* d1 = DeviceManager::global().cpu(1);
  const std::string key = Rendezvous::create_key(*d0, *d1, "a:0");
  const std::vector<std::string> parts = absl::StrSplit(key, ';');
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[0], kCpu0);
  EXPECT_EQ(parts[1].size(), 16u);  // the incarnation, in hex
  EXPECT_EQ(parts[2], kCpu1);
  EXPECT_EQ(parts[3], "a:0");
  EXPECT_EQ(parts[4], "0:0");
  Rendezvous r;
  DeviceTensor t = d0->allocate(DType::kFloat32, Shape{1}).value();
  int got = 0;
  r.recv_async(key, [&](const absl::Status& s, const DeviceTensor& v) { got += s.ok() && v.buffer == t.buffer; });
  EXPECT_EQ(got, 0);
  ASSERT_TRUE(r.send(key, t).ok());
  EXPECT_EQ(got, 1);
  EXPECT_FALSE(r.send("k2", t).ok() && r.send("k2", t).ok());  // twice: an error
  absl::Status aborted;
  r.recv_async("never", [&](const absl::Status& s, const DeviceTensor&) { aborted = s; });
  r.start_abort(absl::CancelledError("stop"));
  EXPECT_EQ(aborted.code(), absl::StatusCode::kCancelled);
  r.recv_async("later", [&](const absl::Status& s, const DeviceTensor&) { aborted = s; });
  EXPECT_EQ(aborted.code(), absl::StatusCode::kCancelled);
}

TEST(SessionPartitionTest, ConcurrentRunsOnOneSessionWithTwoDevices) {
  TwoDeviceModel m;
  Session sess(m.g, two_devices());
  SessionOptions one;
  one.allow_soft_placement = true;
  Session single(m.g, one);
  std::vector<Tensor> inputs, expected;
  for (int i = 0; i < 4; ++i) {
    inputs.push_back(batch(2 + i, 1.f + i));
    expected.push_back(single.run(m.y, {{m.x, inputs.back()}}));
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 25; ++k) {
        const int i = (t + k) % 4;
        if (!bitwise_equal(sess.run(m.y, {{m.x, inputs[i]}}), expected[i])) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(SessionPartitionTest, EachPartitionRunsOnItsOwnDevicesThreads) {
  // Two independent chains, one per device: CPU:1's steps go to CPU:1's inter-op pool while the
  // caller runs CPU:0's, so they run on another thread at once. Each chain takes milliseconds:
  // a sleeping pool thread needs ~0.1 ms to wake on these machines, more under load (a chain
  // of 64x64 products, done in 0.1 ms, was always finished by the caller alone).
  const Tensor w = random_normal({192, 192}, 0, 0.1, DType::kFloat32, 5);
  Graph g;
  std::vector<Tensor> chains;
  {
    auto scope = g.as_default();
    for (const char* dev : {"/device:CPU:0", "/device:CPU:1"}) {
      auto d = device(dev);
      Tensor x = constant(w);
      for (int i = 0; i < 6; ++i) x = matmul(x, constant(w));
      chains.push_back(x);
    }
  }
  Session sess(g, two_devices(2));
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  bool other_thread = false;
  for (int run = 0; run < 20 && !other_thread; ++run) {
    RunMetadata md;
    sess.run(std::vector<Fetch>{chains[0], chains[1]}, {}, {}, &options, &md);
    std::set<size_t> threads_0, threads_1;
    for (const NodeExecStats& n : md.step_stats.nodes)
      if (n.op == "MatMul") (n.device == kCpu0 ? threads_0 : threads_1).insert(n.thread_id);
    ASSERT_EQ(threads_0.size() + threads_1.size() > 0, true);
    for (size_t t : threads_1) other_thread |= !threads_0.contains(t);
  }
  EXPECT_TRUE(other_thread);
  SessionOptions one;
  one.allow_soft_placement = true;
  Session single(g, one);
  auto a = sess.run(std::vector<Fetch>{chains[0], chains[1]});
  auto b = single.run(std::vector<Fetch>{chains[0], chains[1]});
  EXPECT_TRUE(bitwise_equal(a[0], b[0]));
  EXPECT_TRUE(bitwise_equal(a[1], b[1]));
}

TEST(SessionPartitionTest, AFailedRunChangesNoVariableOnAnyDevice) {
  Graph g;
  Tensor x, bad;
  std::optional<Variable> v;
  Operation update;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, -1}, "x");
    {
      auto d = device("/device:CPU:1");
      v = Variable(Tensor({1.f, 2.f}), "v");
      update = producer(v->assign_add(Tensor({10.f, 10.f})));
    }
    auto d = device("/device:CPU:0");
    auto deps = control_dependencies({update});
    bad = matmul(x, x);  // fails for a non-square x
  }
  for (int inter : {0, 1}) {
    Session sess(g, two_devices(inter));
    sess.run(std::vector<Fetch>{}, {}, {g.global_variables_initializer()});
    EXPECT_THROW(sess.run(bad, {{x, Tensor(std::vector<float>(6, 1.f), Shape{2, 3})}}), InvalidArgumentError);
    EXPECT_THAT(sess.run(*v).to_vector<float>(), ElementsAre(1.f, 2.f)) << inter;
    sess.run(bad, {{x, Tensor(std::vector<float>(4, 1.f), Shape{2, 2})}});
    EXPECT_THAT(sess.run(*v).to_vector<float>(), ElementsAre(11.f, 12.f)) << inter;
  }
}

TEST(SessionPartitionTest, AFailureBeforeASendEndsTheWaitingRecvInAParallelRun) {
  // CPU:0's MatMul fails (x is not square) before its _Send; CPU:1's _Recv of it is waiting in
  // the rendezvous: the abort ends it, the run throws, and the update on CPU:1 is not committed.
  Graph g;
  Tensor x, r, e;
  std::optional<Variable> v;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, -1}, "x");
    Tensor m;
    {
      auto d = device("/device:CPU:0");
      m = matmul(x, x);
      e = exp(x);  // independent: the plan runs in parallel
    }
    auto d = device("/device:CPU:1");
    v = Variable(Tensor(0.f), "v");
    auto deps = control_dependencies({producer(v->assign_add(Tensor(1.f)))});
    r = tanh(m) + tanh(x);
  }
  Session sess(g, two_devices(2));
  sess.run(std::vector<Fetch>{}, {}, {g.global_variables_initializer()});
  const Tensor bad(std::vector<float>(6, 1.f), Shape{2, 3});
  for (int i = 0; i < 5; ++i) {
    EXPECT_THAT(error_of([&] { sess.run(std::vector<Fetch>{r, e}, {{x, bad}}); }), HasSubstr("[matmul]"));
  }
  EXPECT_FLOAT_EQ(sess.run(*v).item<float>(), 0.f);
  const Tensor good(std::vector<float>(4, 0.5f), Shape{2, 2});
  auto out = sess.run(std::vector<Fetch>{r, e}, {{x, good}});
  EXPECT_FLOAT_EQ(out[0].to_vector<float>()[0], std::tanh(0.5f) + std::tanh(0.5f));
  EXPECT_FLOAT_EQ(sess.run(*v).item<float>(), 1.f);
}

TEST(SessionPartitionTest, ATraceRecordsNoDeviceAndRunsOnAnyDeviceSet) {
  Tensor w_value = Tensor({{1.f, 2.f}, {3.f, 4.f}});
  auto f = function([&](const Tensor& x) { return tanh(matmul(x, w_value)) + 1.f; });
  ConcreteFunction& cf = f.get_concrete_function({{DType::kFloat32, {-1, 2}}});
  for (const Operation& op : cf.graph().get_operations()) EXPECT_EQ(op.device(), "") << op.name();
  const Tensor xb({{0.5f, -1.f}, {2.f, 0.25f}});
  const Tensor eager_value = tanh(matmul(xb, w_value)) + 1.f;
  for (int cpus : {1, 2, 3}) {
    SessionOptions options;
    options.device_count["CPU"] = cpus;
    Session sess(cf.graph(), options);
    EXPECT_TRUE(bitwise_equal(sess.run(cf.outputs()[0], {{cf.inputs()[0], xb}}), eager_value)) << cpus;
  }
  // Traced under a device scope, the trace records the request; the Session decides.
  Tensor traced_on_1;
  auto g = function([&](const Tensor& x) {
    auto d = device("/device:CPU:1");
    return tanh(matmul(x, w_value)) + 1.f;
  });
  ConcreteFunction& cg = g.get_concrete_function({{DType::kFloat32, {-1, 2}}});
  SessionOptions log2 = two_devices();
  log2.log_device_placement = true;
  Session on_two(cg.graph(), log2);
  testing::internal::CaptureStderr();
  const Tensor r2 = on_two.run(cg.outputs()[0], {{cg.inputs()[0], xb}});
  EXPECT_THAT(testing::internal::GetCapturedStderr(), HasSubstr(std::string("MatMul: (MatMul): ") + kCpu1));
  EXPECT_TRUE(bitwise_equal(r2, eager_value));
  SessionOptions soft;
  soft.allow_soft_placement = true;
  Session on_one(cg.graph(), soft);
  EXPECT_TRUE(bitwise_equal(on_one.run(cg.outputs()[0], {{cg.inputs()[0], xb}}), eager_value));
}

}  // namespace
}  // namespace tapeflow
