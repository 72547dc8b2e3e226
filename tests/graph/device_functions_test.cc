// replica_device_setter and device functions (graph/device_functions.h): the guide's example
// placements, inner scopes winning field by field, and a Session's run of such a graph.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/device_functions.h"
#include "tapeflow.h"
#include "tests/graph/placement_util.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DeviceFunctionTest, ReplicaDeviceSetterPlacesAsTheGuideShows) {
  Graph g;
  Tensor input_data, layer_0, layer_1;
  {
    auto scope = g.as_default();
    auto setter = device(replica_device_setter(3));
    Variable w_0(zeros({4, 3}), "w_0");  // placed on "/job:ps/task:0"
    Variable b_0(zeros({3}), "b_0");     // placed on "/job:ps/task:1"
    Variable w_1(zeros({3, 2}), "w_1");  // placed on "/job:ps/task:2"
    Variable b_1(zeros({2}), "b_1");     // placed on "/job:ps/task:0"
    input_data = placeholder(DType::kFloat32, {-1, 4}, "input_data");  // placed on "/job:worker"
    layer_0 = matmul(input_data, w_0) + b_0;                          // placed on "/job:worker"
    layer_1 = matmul(layer_0, w_1) + b_1;                             // placed on "/job:worker"
  }
  EXPECT_EQ(g.get_operation_by_name("w_0").device(), "/job:ps/task:0");
  EXPECT_EQ(g.get_operation_by_name("b_0").device(), "/job:ps/task:1");
  EXPECT_EQ(g.get_operation_by_name("w_1").device(), "/job:ps/task:2");
  EXPECT_EQ(g.get_operation_by_name("b_1").device(), "/job:ps/task:0");
  EXPECT_EQ(producer(input_data).device(), "/job:worker");
  EXPECT_EQ(producer(layer_0).device(), "/job:worker");
  EXPECT_EQ(producer(producer(layer_0).inputs()[0]).device(), "/job:worker");  // the MatMul
  EXPECT_EQ(producer(layer_1).device(), "/job:worker");

  // On a cluster's devices: variables (and their reads, rule 2) on the ps tasks, the rest on
  // the worker.
  FakeDevice ps0("/job:ps/replica:0/task:0/device:CPU:0", DeviceType::kCPU);
  FakeDevice ps1("/job:ps/replica:0/task:1/device:CPU:0", DeviceType::kCPU);
  FakeDevice ps2("/job:ps/replica:0/task:2/device:CPU:0", DeviceType::kCPU);
  FakeDevice worker("/job:worker/replica:0/task:0/device:CPU:0", DeviceType::kCPU);
  auto where = place_all(g, {&ps0, &ps1, &ps2, &worker});
  EXPECT_EQ(where["w_0"], ps0.name());
  EXPECT_EQ(where["b_0"], ps1.name());
  EXPECT_EQ(where["w_1"], ps2.name());
  EXPECT_EQ(where["b_1"], ps0.name());
  EXPECT_EQ(where[producer(producer(producer(layer_0).inputs()[0]).inputs()[1]).name()], ps0.name());  // w_0's read
  EXPECT_EQ(where["input_data"], worker.name());
  EXPECT_EQ(where[producer(layer_1).name()], worker.name());

  // This process has no ps job: a run fails naming the first variable, unless soft placement.
  Session strict(g);
  const Tensor batch(std::vector<float>(8, 1.f), Shape{2, 4});
  const std::string error = error_of([&] { strict.run(layer_1, {{input_data, batch}}); });
  EXPECT_THAT(error, HasSubstr("Cannot assign a device for operation 'w_0' (VarHandleOp) with the"));
  EXPECT_THAT(error, HasSubstr("colocated with variable 'w_0'"));
  EXPECT_THAT(error, HasSubstr("requested on '/job:ps/task:0'"));
  SessionOptions soft;
  soft.allow_soft_placement = true;
  Session lenient(g, soft);
  lenient.run(std::vector<Fetch>{}, {}, {g.global_variables_initializer()});
  EXPECT_THAT(lenient.run(layer_1, {{input_data, batch}}).to_vector<float>(), ElementsAre(0.f, 0.f, 0.f, 0.f));
}

TEST(DeviceFunctionTest, ReplicaDeviceSetterLetsInnerScopesWin) {
  Graph g;
  {
    auto scope = g.as_default();
    auto setter = device(replica_device_setter(2, "/job:ps", "/job:worker/task:1"));
    Variable a(Tensor(1.f), "a");  // task:0
    {
      auto gpu = device("/device:GPU:0");
      Variable b(Tensor(1.f), "b");  // task:1, on its GPU
      constant(Tensor(1.f), "c");    // the worker's task, on its GPU
    }
    {
      auto other = device("/job:other");
      Variable d(Tensor(1.f), "d");  // another job: no ps task chosen
    }
    Variable e(Tensor(1.f), "e");  // the counter did not move for d: task:0
  }
  EXPECT_EQ(g.get_operation_by_name("a").device(), "/job:ps/task:0");
  EXPECT_EQ(g.get_operation_by_name("b").device(), "/job:ps/task:1/device:GPU:0");
  EXPECT_EQ(g.get_operation_by_name("c").device(), "/job:worker/task:1/device:GPU:0");
  EXPECT_EQ(g.get_operation_by_name("d").device(), "/job:other");
  EXPECT_EQ(g.get_operation_by_name("e").device(), "/job:ps/task:0");
  EXPECT_THAT(error_of([] { replica_device_setter(1, "/job:ps/bad"); }), HasSubstr("[replica_device_setter] ps_device"));
  // Eagerly a device function does nothing (as in TensorFlow 2).
  auto setter = device(replica_device_setter(2));
  EXPECT_FLOAT_EQ((Tensor(1.f) + 1.f).item<float>(), 2.f);
}

}  // namespace
}  // namespace tapeflow
