// Issue 17's repros: sizes that used to wrap, integer arithmetic that used to be undefined,
// empty handles that used to crash. Each is a typed error (or a defined, documented value).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <limits>

#include "core/checked_size.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kHuge = int64_t{1} << 62;

TEST(HostileInputTest, HugeTensorsAreResourceExhaustedBeforeAnythingIsAllocated) {
  EXPECT_THAT(error_of<ResourceExhaustedError>([] { zeros({kHuge}); }),
              AllOf(HasSubstr("[fill]"), HasSubstr("shape [4611686018427387904]"), HasSubstr("hostile_input_test.cc:")));
  EXPECT_THAT(error_of<ResourceExhaustedError>([] { range<int64_t>(INT64_MIN, 0, 2); }), HasSubstr("[range]"));
  EXPECT_THAT(error_of<ResourceExhaustedError>([] { linspace(0, 1, kHuge); }), HasSubstr("[linspace]"));
  EXPECT_THAT(error_of<ResourceExhaustedError>([] { pad(Tensor{1.f, 2.f}, {{1, kHuge}}); }), HasSubstr("[pad]"));
  EXPECT_THAT(error_of<ResourceExhaustedError>(
                  [] { unsorted_segment_sum(Tensor{1.f, 2.f}, Tensor{0, 1}, kHuge); }),
              HasSubstr("[unsorted_segment_sum]"));
  EXPECT_THAT(error_of<ResourceExhaustedError>([] { one_hot(Tensor{0, 1}, kHuge); }), HasSubstr("[one_hot]"));
  EXPECT_THAT(error_of<ResourceExhaustedError>([] { Tensor::from_host(DType::kFloat32, Shape{kHuge}, nullptr); }),
              AllOf(HasSubstr("[tensor]"), HasSubstr("hostile_input_test.cc:")));
}

TEST(HostileInputTest, ShapeFunctionsRefuseOverflowingShapes) {
  const Tensor x = zeros({2, 2});
  EXPECT_THAT(error_of([&] { pad(x, {{0, INT64_MAX}, {0, 0}}); }), HasSubstr("overflow dimension 0"));
  EXPECT_THAT(error_of([&] { tile(x, {kHuge, 4}); }), HasSubstr("overflows dimension 0 of size 2"));
  EXPECT_THAT(error_of([&] { reshape(zeros({0}), {kHuge, kHuge, 0}); }), HasSubstr("overflows int64"));
  EXPECT_THAT(error_of([&] { slice(x, {1, 0}, {INT64_MAX, 2}); }), HasSubstr("out of bounds"));
}

TEST(HostileInputTest, AConfigurableLimitRefusesLargeTensorsNamingTheOp) {
  const int64_t saved = max_tensor_bytes();
  set_max_tensor_bytes(4096);
  std::string message = error_of<ResourceExhaustedError>([] { ones({2048}); });
  set_max_tensor_bytes(saved);
  EXPECT_THAT(message, AllOf(HasSubstr("[fill]"), HasSubstr("float32 tensor of shape [2048] needs 8192 bytes"),
                             HasSubstr("over the limit of 4096 bytes")));
  EXPECT_EQ(ones({2048}).num_elements(), 2048);
}

TEST(HostileInputTest, SplitCountsAreBounded) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(error_of([] { split(zeros({0}), 2147483647); }), HasSubstr("[split] num_split 2147483647 is more than"));
  EXPECT_THAT(error_of([] { split(zeros({0}), 20000000); }), HasSubstr("[split]"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // not 28 s and 7 GB
  EXPECT_EQ(split(zeros({0}), 3).size(), 3u);  // a few empty pieces are fine, as in TensorFlow
  EXPECT_EQ(split(zeros({6}), 6).size(), 6u);
}

TEST(HostileInputTest, IntegerArithmeticWrapsAround) {
  const int32_t mn = INT32_MIN, mx = INT32_MAX;
  EXPECT_EQ(add(Tensor(mx), Tensor(1)).item<int32_t>(), mn);
  EXPECT_EQ(sub(Tensor(mn), Tensor(1)).item<int32_t>(), mx);
  EXPECT_EQ(mul(Tensor(int64_t{1} << 62), Tensor(int64_t{4})).item<int64_t>(), 0);
  EXPECT_THAT(neg(Tensor{mn, 5}).to_vector<int32_t>(), ElementsAre(mn, -5));
  EXPECT_THAT(abs(Tensor{mn, -5}).to_vector<int32_t>(), ElementsAre(mn, 5));
  EXPECT_EQ(square(Tensor(65536)).item<int32_t>(), 0);
  EXPECT_EQ(pow(Tensor(2), Tensor(40)).item<int32_t>(), 0);
  EXPECT_EQ(pow(Tensor(3), Tensor(21)).item<int32_t>(), static_cast<int32_t>(static_cast<uint32_t>(10460353203ull)));
  EXPECT_EQ(floor_div(Tensor(mn), Tensor(-1)).item<int32_t>(), mn);
  EXPECT_EQ(matmul(Tensor({{mx, 1}}), Tensor({{1}, {1}})).item<int32_t>(), mn);
  EXPECT_THAT(unsorted_segment_sum(Tensor{mx, 1}, Tensor{0, 0}, 1).to_vector<int32_t>(), ElementsAre(mn));
}

// Float-to-integer casts of NaN, infinities and huge values: CastTest.FloatToIntegerSaturatesAtTheLimits.

TEST(HostileInputTest, EmptyHandlesGiveTypedErrors) {
  Tensor empty;
  EXPECT_THAT(error_of([&] { (void)empty.dtype(); }), HasSubstr("[tensor] The tensor is empty"));
  EXPECT_THAT(error_of([&] { (void)empty.rank(); }), HasSubstr("[tensor] The tensor is empty"));
  EXPECT_THAT(error_of([&] { (void)empty.shape(); }), HasSubstr("[tensor] The tensor is empty"));
  EXPECT_FALSE(empty.defined());
  Operation op;
  EXPECT_FALSE(op.defined());
  const char* expected = "[Operation] This Operation is empty";
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { (void)op.name(); }), HasSubstr(expected));
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { (void)op.type(); }), HasSubstr(expected));
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { (void)op.num_outputs(); }), HasSubstr(expected));
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { (void)op.output(0); }), HasSubstr(expected));
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { (void)op.inputs(); }), HasSubstr(expected));
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { (void)op.graph(); }), HasSubstr(expected));
}

TEST(HostileInputTest, PlaceholderDimsBelowMinusOneAreErrors) {
  Graph g;
  auto scope = g.as_default();
  EXPECT_THAT(error_of([] { placeholder(DType::kFloat32, {-5, 3}); }),
              AllOf(HasSubstr("[placeholder]"), HasSubstr("negative dimension (-5)"), HasSubstr("hostile_input_test.cc:")));
  EXPECT_EQ(placeholder(DType::kFloat32, {-1, 3}).shape(), (Shape{-1, 3}));
  EXPECT_EQ(g.num_nodes(), 1);  // the failed call added nothing
}

}  // namespace
}  // namespace tapeflow
