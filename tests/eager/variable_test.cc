#include "eager/variable.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "core/errors.h"
#include "devices/device_manager.h"
#include "eager/context.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/unary.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;

TEST(VariableTest, HoldsItsInitialValueAndProperties) {
  Variable w(Tensor{{1.f, 2.f}, {3.f, 4.f}}, "w");
  EXPECT_EQ(w.name(), "w");
  EXPECT_TRUE(w.trainable());
  EXPECT_EQ(w.dtype(), DType::kFloat32);
  EXPECT_EQ(w.shape(), (Shape{2, 2}));
  EXPECT_THAT(w.read().to_vector<float>(), ElementsAre(1.f, 2.f, 3.f, 4.f));
  EXPECT_THAT(w.device()->name(), EndsWith("CPU:0"));

  Variable step(0, "step", /*trainable=*/false);
  EXPECT_FALSE(step.trainable());
  EXPECT_EQ(step.dtype(), DType::kInt32);
  EXPECT_EQ(step.shape(), Shape{});

  Variable braced({1.f, 2.f, 3.f}, "braced");
  EXPECT_EQ(braced.shape(), (Shape{3}));

  Variable unnamed(zeros({3}));
  EXPECT_EQ(unnamed.name(), "Variable");
  EXPECT_TRUE(unnamed.trainable());
}

TEST(VariableTest, CopiesAliasTheSameState) {
  Variable a(Tensor{1, 2}, "a");
  Variable b = a;
  EXPECT_EQ(a.id(), b.id());
  b.assign(Tensor{5, 6});
  EXPECT_THAT(a.read().to_vector<int32_t>(), ElementsAre(5, 6));
  Variable c(Tensor{1, 2}, "a");
  EXPECT_NE(c.id(), a.id());
}

TEST(VariableTest, AssignReplacesTheValueAndEarlierReadsKeepTheirs) {
  Variable v(Tensor{1.0, 2.0}, "v");
  Tensor before = v.read();
  v.assign(Tensor{3.0, 4.0});
  EXPECT_THAT(v.read().to_vector<double>(), ElementsAre(3.0, 4.0));
  EXPECT_THAT(before.to_vector<double>(), ElementsAre(1.0, 2.0));
  v.assign({7.0, 8.0});
  EXPECT_THAT(v.read().to_vector<double>(), ElementsAre(7.0, 8.0));
  Variable s(1.5f, "s");
  s.assign(2);  // a plain scalar takes the variable's dtype
  EXPECT_EQ(s.read().item<float>(), 2.f);
}

TEST(VariableTest, AssignWithWrongDTypeOrShapeNamesBothAndKeepsTheValue) {
  Variable v(Tensor{1.f, 2.f}, "weights");
  try {
    v.assign(Tensor{1.0, 2.0, 3.0});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("[assign]"));
    EXPECT_THAT(msg, HasSubstr("'weights'"));
    EXPECT_THAT(msg, HasSubstr("float32"));
    EXPECT_THAT(msg, HasSubstr("[2]"));
    EXPECT_THAT(msg, HasSubstr("float64"));
    EXPECT_THAT(msg, HasSubstr("[3]"));
  }
  try {
    v.assign(Tensor{{1.f, 2.f}});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("shape [1,2]"));
  }
  EXPECT_THROW(v.assign(Tensor()), InvalidArgumentError);
  EXPECT_THROW(v.assign(1.5), InvalidArgumentError);  // a scalar is not shape [2]
  EXPECT_THAT(v.read().to_vector<float>(), ElementsAre(1.f, 2.f));

  Variable i(Tensor{1, 2}, "counts");
  EXPECT_THROW(i.assign({1.5f, 2.f}), InvalidArgumentError);
  EXPECT_THAT(i.read().to_vector<int32_t>(), ElementsAre(1, 2));
}

TEST(VariableTest, AssignAddAndSub) {
  Variable v(Tensor{{1.f, 2.f}, {3.f, 4.f}}, "v");
  v.assign_add(Tensor{{10.f, 20.f}, {30.f, 40.f}});
  EXPECT_THAT(v.read().to_vector<float>(), ElementsAre(11.f, 22.f, 33.f, 44.f));
  v.assign_sub(1);  // a weak scalar broadcasts
  EXPECT_THAT(v.read().to_vector<float>(), ElementsAre(10.f, 21.f, 32.f, 43.f));
  v.assign_add(Tensor{100.f, 200.f});  // a row broadcasts over the rows
  EXPECT_THAT(v.read().to_vector<float>(), ElementsAre(110.f, 221.f, 132.f, 243.f));

  Variable step(int64_t{0}, "step", false);
  for (int i = 0; i < 3; ++i) step.assign_add(1);
  EXPECT_EQ(step.read().item<int64_t>(), 3);
  step.assign_sub(5);
  EXPECT_EQ(step.read().item<int64_t>(), -2);
}

// Note [In-place update]: with nobody else holding the value, the update reuses its buffer;
// a value someone holds never changes under them.
TEST(VariableTest, UpdatesWriteInPlaceOnlyIntoAValueNobodyElseHolds) {
  Variable w(Tensor{{1.f, 2.f}, {3.f, 4.f}}, "w");
  const void* storage = w.read().device_tensor().data<float>();
  w.assign_sub(Tensor{{1.f, 1.f}, {1.f, 1.f}});
  EXPECT_EQ(w.read().device_tensor().data<float>(), storage);
  EXPECT_THAT(w.read().to_vector<float>(), ElementsAre(0.f, 1.f, 2.f, 3.f));

  const Tensor held = w.read();  // a reader keeps the old value: the update makes a new one
  w.assign_add(Tensor{{10.f, 10.f}, {10.f, 10.f}});
  EXPECT_THAT(held.to_vector<float>(), ElementsAre(0.f, 1.f, 2.f, 3.f));
  EXPECT_THAT(w.read().to_vector<float>(), ElementsAre(10.f, 11.f, 12.f, 13.f));
  EXPECT_NE(w.read().device_tensor().data<float>(), held.device_tensor().data<float>());

  // A view of the value (reshape shares the buffer) counts as a holder too.
  const Tensor view = reshape(w.read(), {4});
  w.assign_sub(Tensor{{10.f, 10.f}, {10.f, 10.f}});
  EXPECT_THAT(view.to_vector<float>(), ElementsAre(10.f, 11.f, 12.f, 13.f));
  EXPECT_THAT(w.read().to_vector<float>(), ElementsAre(0.f, 1.f, 2.f, 3.f));
}

TEST(VariableTest, AssignAddErrorsLeaveTheValue) {
  Variable v(Tensor{1.f, 2.f}, "bias");
  try {
    v.assign_add(Tensor{{1.f, 2.f}, {3.f, 4.f}});  // would broadcast the variable to [2,2]
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("[assign_add] Variable 'bias' has dtype float32 and shape [2]"));
    EXPECT_THAT(msg, HasSubstr("float32 and shape [2,2]"));
  }
  try {
    v.assign_sub(Tensor{1, 2});
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("[assign_sub] Variable 'bias'"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("int32"));
  }
  EXPECT_THROW(v.assign_add(Tensor{1.f, 2.f, 3.f}), InvalidArgumentError);
  EXPECT_THAT(v.read().to_vector<float>(), ElementsAre(1.f, 2.f));
}

TEST(VariableTest, VariablesAreOperands) {
  Variable v(Tensor{1.f, 2.f, 3.f}, "v");
  Tensor x = {10.f, 20.f, 30.f};
  EXPECT_THAT((v * 2).to_vector<float>(), ElementsAre(2.f, 4.f, 6.f));
  EXPECT_THAT(add(v, x).to_vector<float>(), ElementsAre(11.f, 22.f, 33.f));
  EXPECT_THAT((x - v).to_vector<float>(), ElementsAre(9.f, 18.f, 27.f));
  EXPECT_THAT((v + v).to_vector<float>(), ElementsAre(2.f, 4.f, 6.f));
  EXPECT_THAT(zeros_like(v).to_vector<float>(), ElementsAre(0.f, 0.f, 0.f));
  v.assign_add(v);  // reads first, then updates
  EXPECT_THAT(v.read().to_vector<float>(), ElementsAre(2.f, 4.f, 6.f));
}

TEST(VariableTest, ConcurrentAssignAddLosesNoUpdates) {
  Variable counter(0, "counter", false);
  constexpr int kThreads = 4, kPerThread = 250;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([counter]() mutable {  // copies of the handle share the state
      for (int i = 0; i < kPerThread; ++i) counter.assign_add(1);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter.read().item<int32_t>(), kThreads * kPerThread);
}

TEST(VariableTest, EmptyInitialValueIsAnError) {
  try {
    Variable v{Tensor(), "broken"};
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("[Variable] Variable 'broken'"));
  }
}

TEST(VariableTest, LivesOnTheDeviceOfTheScope) {
  DeviceManager::global().set_num_cpu_devices(2);
  Tensor init = {1.f, 2.f};  // on CPU:0
  std::optional<Variable> v;
  {
    auto scope = device("/device:CPU:1");
    v.emplace(init, "placed");
  }
  EXPECT_THAT(v->device()->name(), EndsWith("CPU:1"));
  EXPECT_THAT(v->read().device_name(), EndsWith("CPU:1"));
  v->assign(Tensor{5.f, 6.f});  // made on CPU:0, stored on CPU:1
  EXPECT_THAT(v->read().device_name(), EndsWith("CPU:1"));
  v->assign_add(Tensor{1.f, 1.f});
  EXPECT_THAT(v->read().device_name(), EndsWith("CPU:1"));
  EXPECT_THAT(v->read().to_vector<float>(), ElementsAre(6.f, 7.f));
}

TEST(VariableTest, Prints) {
  Variable v(Tensor{1, 2}, "w");
  std::ostringstream os;
  os << v;
  EXPECT_THAT(os.str(), HasSubstr("tapeflow.Variable 'w'"));
  EXPECT_THAT(os.str(), HasSubstr("[1 2]"));
}

}  // namespace
}  // namespace tapeflow
