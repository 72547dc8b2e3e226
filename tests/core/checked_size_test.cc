// Note [Checked sizes]: one helper computes every count and byte size; huge shapes are typed
// errors, never wrapped products.
#include "core/checked_size.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>

#include "core/shape.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

TEST(CheckedSizeTest, ArithmeticReportsOverflowInsteadOfWrapping) {
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(checked_mul(int64_t{1} << 32, int64_t{1} << 31).has_value());
  EXPECT_FALSE(checked_add(INT64_MAX, 1).has_value());
  EXPECT_FALSE(checked_sub(INT64_MIN, 1).has_value());
  EXPECT_EQ(checked_add(INT64_MAX - 1, 1), INT64_MAX);
}

TEST(CheckedSizeTest, ElementCountsOfValidAndInvalidShapes) {
  EXPECT_EQ(*checked_num_elements({2, 3, 4}), 24);
  EXPECT_EQ(*checked_num_elements({}), 1);
  EXPECT_EQ(*checked_num_elements({5, 0, 7}), 0);
  // A zero dim does not make a product of huge dims safe (strides multiply them).
  absl::StatusOr<int64_t> huge = checked_num_elements({0xFFFFFFFF, 0xFFFFFFFF, 0});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(huge.status().message(), HasSubstr("shape [4294967295,4294967295,0] is too large"));
  EXPECT_THAT(checked_num_elements({3, -5}).status().message(), HasSubstr("negative dimension (-5)"));
  EXPECT_EQ(*checked_num_elements({-1, 784}, /*allow_unknown=*/true), -1);
  EXPECT_FALSE(checked_num_elements({-1, 784}).ok());
  EXPECT_FALSE(checked_num_elements({-2, 784}, /*allow_unknown=*/true).ok());
}

TEST(CheckedSizeTest, ByteSizesRespectTheConfigurableLimit) {
  EXPECT_EQ(*checked_tensor_bytes({10, 10}, DType::kFloat64), 800);
  absl::StatusOr<int64_t> wraps = checked_tensor_bytes({int64_t{1} << 62}, DType::kFloat32);
  ASSERT_FALSE(wraps.ok());
  EXPECT_EQ(wraps.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(wraps.status().message(), HasSubstr("float32 tensor of shape [4611686018427387904] needs more than 2^63"));
  const int64_t saved = max_tensor_bytes();
  set_max_tensor_bytes(1000);
  absl::StatusOr<int64_t> over = checked_tensor_bytes({251}, DType::kFloat32);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.status().message(), HasSubstr("needs 1004 bytes, over the limit of 1000 bytes"));
  EXPECT_EQ(*checked_tensor_bytes({250}, DType::kFloat32), 1000);
  set_max_tensor_bytes(saved);
}

TEST(CheckedSizeTest, ShapeArithmeticSaturatesInsteadOfOverflowing) {
  EXPECT_EQ((Shape{int64_t{1} << 40, int64_t{1} << 40}).num_elements(), INT64_MAX);
  EXPECT_EQ((Shape{int64_t{1} << 40, int64_t{1} << 40, 0}).num_elements(), 0);
  EXPECT_EQ(row_major_strides(Shape{2, int64_t{1} << 40, int64_t{1} << 40})[0], INT64_MAX);
}

}  // namespace
}  // namespace tapeflow
