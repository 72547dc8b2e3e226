// The placer (graph/placer.h): each numbered rule of Note [Placement rules], the placement
// log, the failure message and device_count. (replica_device_setter: device_functions_test.cc.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "devices/allocator.h"
#include "devices/cpu/cpu_device.h"
#include "devices/cpu/intra_op_pool.h"
#include "graph/placer.h"
#include "tapeflow.h"
#include "tests/graph/placement_util.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::Pair;

std::vector<Device*> two_cpus() {
  DeviceManager::global().set_num_cpu_devices(2);
  return {DeviceManager::global().cpu(0), DeviceManager::global().cpu(1)};
}

TEST(PlacerTest, Rule1FullAndPartialRequestsMergedAsScopesMerge) {
  Graph g;
  {
    auto scope = g.as_default();
    constant(Tensor(1.f), "free");
    auto job = device("/job:localhost");
    constant(Tensor(1.f), "local");  // partial: any local device, the best is CPU:0
    {
      auto cpu1 = device("/device:CPU:1");  // merged: /job:localhost/device:CPU:1
      constant(Tensor(1.f), "pinned");
      auto any_cpu = device("/device:CPU:*");  // the type only: the index stays CPU:1's
      constant(Tensor(1.f), "still_1");
    }
    auto task = device("/task:0/device:CPU:1");
    constant(Tensor(1.f), "full");
  }
  EXPECT_EQ(g.get_operation_by_name("pinned").device(), "/job:localhost/device:CPU:1");
  auto where = place_all(g, two_cpus());
  EXPECT_THAT(where, IsSupersetOf({Pair("free", kCpu0), Pair("local", kCpu0), Pair("pinned", kCpu1),
                                   Pair("still_1", kCpu1), Pair("full", kCpu1)}));
}

TEST(PlacerTest, Rule2AVariableItsReadsAssignsAndUpdatesStayTogether) {
  Graph g;
  Tensor read_on_0;
  std::optional<Variable> v;
  {
    auto scope = g.as_default();
    {
      auto cpu1 = device("/device:CPU:1");
      v = Variable(Tensor({1.f, 2.f}), "v");
    }
    auto cpu0 = device("/device:CPU:0");
    read_on_0 = v->read() * 2.f;  // a read built under another scope
    v->assign_add(Tensor({1.f, 1.f}));
    v->assign(Tensor({0.f, 0.f}));
  }
  auto where = place_all(g, two_cpus());
  for (const Operation& op : g.get_operations()) {
    if (op.node().variable) {
      EXPECT_EQ(where[op.name()], kCpu1) << op.name() << " (" << op.type() << ")";
    }
  }
  EXPECT_EQ(where[producer(read_on_0).name()], kCpu0);  // the consumer stays where it asked

  // A variable with no request of its own takes its members' (merged) request.
  Graph h;
  {
    auto scope = h.as_default();
    Variable w(Tensor(1.f), "w");
    auto cpu1 = device("/device:CPU:1");
    w.assign_add(Tensor(1.f));
  }
  auto where_h = place_all(h, two_cpus());
  EXPECT_EQ(where_h["w"], kCpu1);
  EXPECT_EQ(where_h["w/Assign"], kCpu1);
}

TEST(PlacerTest, Rule3KernelsRule5BestDeviceGpusFirst) {
  if (KernelRegistry::global().find("MatMul", DeviceType::kGPU, DType::kFloat32) != nullptr)
    GTEST_SKIP() << "this build has GPU kernels; the fake GPU below stands for a device without them";
  FakeDevice gpu("/job:localhost/replica:0/task:0/device:GPU:0", DeviceType::kGPU);
  const std::vector<Device*> devices{DeviceManager::global().cpu(0), &gpu};
  Graph g;
  {
    auto scope = g.as_default();
    Tensor a = constant(Tensor({{1.f}}), "a");   // no kernel needed: the best device, the GPU
    matmul(a, a);                                // no GPU kernel: CPU:0
    Variable v(Tensor(1.f), "v");                // variable ops run anywhere: the GPU
  }
  auto where = place_all(g, devices);
  EXPECT_EQ(where["a"], gpu.name());
  EXPECT_EQ(where["MatMul"], kCpu0);
  EXPECT_EQ(where["v"], gpu.name());

  // Requested where no kernel exists: an error without soft placement, CPU:0 with it (rule 4).
  Graph h;
  {
    auto scope = h.as_default();
    auto on_gpu = device("/device:GPU:0");
    Tensor a = constant(Tensor({{1.f}}), "a");
    auto name = op_name("mm");
    matmul(a, a);
  }
  const std::string error = error_of([&] { place_all(h, devices); });
  EXPECT_THAT(error, HasSubstr("[matmul] Cannot assign a device for operation 'mm' (MatMul)"));
  EXPECT_THAT(error, HasSubstr("of the devices that match it, [/job:localhost/replica:0/task:0/device:GPU:0], "
                               "none has a kernel for it"));
  EXPECT_THAT(error, HasSubstr("Devices with a kernel for MatMul (float32): [" + std::string(kCpu0) + "]"));
  EXPECT_EQ(place_all(h, devices, /*soft=*/true)["mm"], kCpu0);
}

TEST(PlacerTest, Rule4SoftPlacementKeepsTheTypeWhenItCan) {
  Graph g;
  {
    auto scope = g.as_default();
    {
      auto cpu7 = device("/device:CPU:7");
      constant(Tensor(1.f), "cpu7");
    }
    {
      auto ps = device("/job:ps/task:1");
      constant(Tensor(1.f), "ps");
    }
    auto gpu = device("/device:GPU:0");
    constant(Tensor(1.f), "gpu");
  }
  EXPECT_THAT(error_of([&] { place_all(g, two_cpus()); }), HasSubstr("Cannot assign a device for operation 'cpu7'"));
  auto where = place_all(g, two_cpus(), /*soft=*/true);
  EXPECT_THAT(where, IsSupersetOf({Pair("cpu7", kCpu0), Pair("ps", kCpu0), Pair("gpu", kCpu0)}));
}

TEST(PlacerTest, Rule6TheFailureNamesOpLineRequestAndDevices) {
  Graph g;
  Tensor y;
  int line = 0;
  {
    auto scope = g.as_default();
    Tensor a = constant(Tensor({{1.f}}), "a"), b = constant(Tensor({{2.f}}), "b");
    auto ps = device("/job:ps/task:0");
    auto name = op_name("layer");
    line = __LINE__ + 1;
    y = matmul(a, b);
  }
  Session sess(g);
  const std::string error = error_of([&] { sess.run(y); });
  EXPECT_THAT(error, HasSubstr("[matmul] Cannot assign a device for operation 'layer' (MatMul)"));
  EXPECT_THAT(error, HasSubstr("it was explicitly requested on '/job:ps/task:0', and no device of this session "
                               "matches that"));
  EXPECT_THAT(error, HasSubstr(std::string("Devices present: [") + kCpu0 + "]"));
  EXPECT_THAT(error, HasSubstr("allow_soft_placement"));
  EXPECT_THAT(error, HasSubstr("placer_test.cc:" + std::to_string(line)));
  EXPECT_THAT(error, HasSubstr(std::string("Devices with a kernel for MatMul (float32): [") + kCpu0 + "]"));
}

TEST(PlacerTest, LogDevicePlacementPrintsOneLinePerNode) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    auto cpu1 = device("/device:CPU:1");
    y = square(x);
  }
  SessionOptions options;
  options.log_device_placement = true;
  options.device_count["CPU"] = 2;
  Session sess(g, options);
  testing::internal::CaptureStderr();
  sess.run(y, {{x, {1.f, 2.f}}});
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log, "Square: (Square): /job:localhost/replica:0/task:0/device:CPU:1\n");  // x is fed: not run
}

TEST(PlacerTest, DeviceCountGivesTheSessionItsCpuDevicesEachWithItsOwnPool) {
  SessionOptions options;
  options.device_count["CPU"] = 3;
  Graph g;
  Session sess(g, options);
  ASSERT_EQ(sess.devices().size(), 3u);
  EXPECT_EQ(sess.devices()[2]->name(), "/job:localhost/replica:0/task:0/device:CPU:2");
  EXPECT_EQ(DeviceManager::global().intra_op_pool(sess.devices()[0]), nullptr);  // the process-wide pool
  IntraOpPool* p1 = DeviceManager::global().intra_op_pool(sess.devices()[1]);
  IntraOpPool* p2 = DeviceManager::global().intra_op_pool(sess.devices()[2]);
  ASSERT_NE(p1, nullptr);
  EXPECT_NE(p1, p2);
  EXPECT_GE(intra_op_pool_threads(*p1), 1);
  Session one(g);
  EXPECT_EQ(one.devices().size(), 1u);  // the default: CPU:0 only, as today
  SessionOptions bad;
  bad.device_count["CPU"] = 0;
  EXPECT_THAT(error_of([&] { Session s(g, bad); }), HasSubstr("device_count[\"CPU\"] must be in [1, 64], got 0"));
  SessionOptions unknown;
  unknown.device_count["TPU"] = 1;
  EXPECT_THAT(error_of([&] { Session s(g, unknown); }), HasSubstr("unknown device type 'TPU'"));
}

}  // namespace
}  // namespace tapeflow
