#include "eager/ops/binary.h"
#include "eager/ops/math.h"

#include <cmath>
#include <limits>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "eager/ops/activation.h"
#include "eager/ops/unary.h"

namespace tapeflow {
namespace {

TEST(BinaryTest, AddBroadcastsRowsAndKeepsDType) {
  Tensor a = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
  Tensor b = {10.f, 20.f, 30.f};
  Tensor c = a + b;
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(BinaryTest, WeakScalarTakesTensorDType) {
  Tensor a = {1.f, 2.f};
  Tensor c = a * 2;
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{2, 4}));
}

TEST(BinaryTest, IncompatibleShapesNameOpInputsAndLine) {
  Tensor a = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
  Tensor b = {1.f, 2.f};
  int line = 0;
  try {
    line = __LINE__; Tensor c = a + b;
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[add]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2,3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("binary_test.cc:" + std::to_string(e.location().line())), std::string::npos) << msg;
    EXPECT_EQ(static_cast<int>(e.location().line()), line);
  }
}

TEST(BinaryTest, IntegerDivisionByZeroIsAnError) {
  Tensor a = {4, 5};
  Tensor b = {2, 0};
  EXPECT_THROW(div(a, b), InvalidArgumentError);
  EXPECT_EQ(floor_div(Tensor{-7, 7}, Tensor{2, -2}).to_vector<int32_t>(), (std::vector<int32_t>{-4, -4}));
  EXPECT_EQ(mod(Tensor{-7, 7}, Tensor{2, -2}).to_vector<int32_t>(), (std::vector<int32_t>{1, -1}));
}

TEST(BinaryTest, ReluAndPrinting) {
  Tensor a = {-1.f, 0.5f, 2.f};
  EXPECT_EQ(relu(a).to_vector<float>(), (std::vector<float>{0, 0.5f, 2}));
  std::ostringstream os;
  os << Tensor{{1, 2}, {3, 4}};
  EXPECT_EQ(os.str(), "tapeflow.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)");
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BinaryValuesTest, ArithmeticFamily) {
  Tensor a = {6.0, -7.0, 2.0};
  Tensor b = {4.0, 2.0, -0.5};
  EXPECT_THAT(sub(a, b).to_vector<double>(), ElementsAre(2.0, -9.0, 2.5));
  EXPECT_THAT(mul(a, b).to_vector<double>(), ElementsAre(24.0, -14.0, -1.0));
  EXPECT_THAT(div(a, b).to_vector<double>(), ElementsAre(1.5, -3.5, -4.0));
  EXPECT_THAT(floor_div(a, b).to_vector<double>(), ElementsAre(1.0, -4.0, -4.0));
  EXPECT_THAT(mod(a, b).to_vector<double>(), ElementsAre(2.0, 1.0, -0.0));
  EXPECT_THAT(pow(Tensor{2.0, 9.0}, Tensor{3.0, 0.5}).to_vector<double>(), ElementsAre(8.0, 3.0));
  EXPECT_THAT(pow(Tensor{2, -3}, 3).to_vector<int32_t>(), ElementsAre(8, -27));
  EXPECT_THAT(maximum(a, b).to_vector<double>(), ElementsAre(6.0, 2.0, 2.0));
  EXPECT_THAT(minimum(a, b).to_vector<double>(), ElementsAre(4.0, -7.0, -0.5));
  EXPECT_THAT((Tensor{7, -7} / Tensor{2, 2}).to_vector<int32_t>(), ElementsAre(3, -3));  // truncates
  const auto inf = div(Tensor{1.f}, Tensor{0.f}).item<float>();
  EXPECT_TRUE(std::isinf(inf));
}

TEST(BinaryValuesTest, NaNPropagatesThroughMaximum) {
  const double nan = std::nan("");
  EXPECT_TRUE(std::isnan(maximum(Tensor{nan}, Tensor{1.0}).item<double>()));
  EXPECT_TRUE(std::isnan(minimum(Tensor{1.0}, Tensor{nan}).item<double>()));
}

TEST(BinaryValuesTest, BroadcastColumnAgainstRowAndScalars) {
  Tensor col = {{1}, {2}, {3}};        // [3,1]
  Tensor row = {{10, 20, 30, 40}};     // [1,4]
  Tensor s = col + row;
  EXPECT_EQ(s.shape(), (Shape{3, 4}));
  EXPECT_THAT(s.to_vector<int32_t>(), ElementsAre(11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43));
  EXPECT_THAT((2 - Tensor{1.f, 5.f}).to_vector<float>(), ElementsAre(1.f, -3.f));  // weak left operand
  EXPECT_THAT((Tensor{3.f} * Tensor{1.f, 2.f}).to_vector<float>(), ElementsAre(3.f, 6.f));
  Tensor scalar = Tensor(5) + Tensor(6);
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.item<int32_t>(), 11);
}

TEST(BinaryValuesTest, ComparisonsAndLogic) {
  Tensor a = {1, 2, 3};
  Tensor b = {3, 2, 1};
  EXPECT_THAT(equal(a, b).to_vector<bool>(), ElementsAre(false, true, false));
  EXPECT_THAT(not_equal(a, b).to_vector<bool>(), ElementsAre(true, false, true));
  EXPECT_THAT(less(a, b).to_vector<bool>(), ElementsAre(true, false, false));
  EXPECT_THAT(less_equal(a, b).to_vector<bool>(), ElementsAre(true, true, false));
  EXPECT_THAT(greater(a, b).to_vector<bool>(), ElementsAre(false, false, true));
  EXPECT_THAT(greater_equal(a, 2).to_vector<bool>(), ElementsAre(false, true, true));
  EXPECT_EQ(less(a, b).dtype(), DType::kBool);
  Tensor p = {true, true, false, false};
  Tensor q = {true, false, true, false};
  EXPECT_THAT(logical_and(p, q).to_vector<bool>(), ElementsAre(true, false, false, false));
  EXPECT_THAT(logical_or(p, q).to_vector<bool>(), ElementsAre(true, true, true, false));
  EXPECT_THAT(equal(p, q).to_vector<bool>(), ElementsAre(true, false, false, true));
}

TEST(BinaryValuesTest, ClipByValue) {
  EXPECT_THAT(clip_by_value(Tensor{-5.f, 0.5f, 9.f}, 0, 1).to_vector<float>(), ElementsAre(0.f, 0.5f, 1.f));
  try {
    clip_by_value(Tensor{1.f}, 2, 1);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[clip_by_value]"));
  }
}

TEST(BinaryErrorsTest, EachClassOfBadInput) {
  EXPECT_THROW(less(Tensor{true}, Tensor{false}), InvalidArgumentError);         // dtype
  EXPECT_THROW(logical_and(Tensor{1}, Tensor{0}), InvalidArgumentError);        // dtype
  EXPECT_THROW(add(Tensor{true}, Tensor{true}), InvalidArgumentError);          // dtype
  try {
    pow(Tensor{2}, Tensor{-1});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[pow] Integers to negative integer powers are not allowed"));
  }
  try {
    mod(Tensor{int64_t{5}}, Tensor{int64_t{0}});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[mod] Integer division by zero"));
  }
  // INT_MIN / -1 wraps instead of trapping.
  EXPECT_EQ(div(Tensor{std::numeric_limits<int32_t>::min()}, Tensor{-1}).item<int32_t>(),
            std::numeric_limits<int32_t>::min());
  EXPECT_THROW(add(Tensor(), Tensor{1}), InvalidArgumentError);
}

TEST(BinaryErrorsTest, FailedOpLeavesInputsUnchanged) {
  Tensor a = {1, 2};
  Tensor b = {0, 1};
  EXPECT_THROW(div(a, b), InvalidArgumentError);
  EXPECT_THAT(a.to_vector<int32_t>(), ElementsAre(1, 2));
  EXPECT_THAT(b.to_vector<int32_t>(), ElementsAre(0, 1));
}

// Note [Weak scalar cache]: equal C++ scalars on one device share one immutable tensor.
TEST(WeakScalarTest, EqualScalarsShareOneTensorAndValuesStayRight) {
  const Tensor x = {1.f, 2.f};
  const Tensor a = x * 0.5f, b = x * 0.5f;
  EXPECT_THAT(a.to_vector<float>(), ::testing::ElementsAre(0.5f, 1.f));
  EXPECT_THAT(b.to_vector<float>(), ::testing::ElementsAre(0.5f, 1.f));
  // The scalar the second product used is the first one's: no new allocation for it.
  Allocator* alloc = x.device()->allocator();
  const int64_t before = alloc->stats().num_allocs;
  const Tensor c = x * 0.5f;
  EXPECT_EQ(alloc->stats().num_allocs - before, 1);  // the output only
  // Other values, dtypes and integer scalars get their own tensors, with the right values.
  EXPECT_THAT((x * 0.25f).to_vector<float>(), ::testing::ElementsAre(0.25f, 0.5f));
  const Tensor xd = {1.0, 2.0};
  EXPECT_THAT((xd * 0.5f).to_vector<double>(), ::testing::ElementsAre(0.5, 1.0));
  const Tensor xi = {3, 4};
  EXPECT_THAT((xi * 2).to_vector<int32_t>(), ::testing::ElementsAre(6, 8));
  EXPECT_THAT((xi + true).to_vector<int32_t>(), ::testing::ElementsAre(4, 5));
  // Many distinct scalars cycle through the cache and stay correct.
  for (int i = 0; i < 100; ++i) ASSERT_EQ((x + static_cast<float>(i)).to_vector<float>()[1], 2.f + static_cast<float>(i));
}

// Note [Operand refers]: an Operand made from a named tensor refers to it; a copy owns a handle.
TEST(OperandTest, CopiesOwnTheirTensorAndTemporariesAreKept) {
  Tensor t = {1.f, 2.f};
  const Operand refers = t;
  const Operand copy = refers;  // owns a handle to {1, 2}
  t = Tensor{5.f, 6.f};
  EXPECT_THAT(copy.resolve("test", nullptr).to_vector<float>(), ::testing::ElementsAre(1.f, 2.f));
  EXPECT_THAT(refers.resolve("test", nullptr).to_vector<float>(), ::testing::ElementsAre(5.f, 6.f));
  const Operand owned = t + 1.f;  // a temporary is owned
  EXPECT_THAT(owned.resolve("test", nullptr).to_vector<float>(), ::testing::ElementsAre(6.f, 7.f));
  EXPECT_FALSE(owned.is_weak());
  EXPECT_TRUE(Operand(2.f).is_weak());
}

}  // namespace
}  // namespace tapeflow
