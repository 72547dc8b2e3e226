// SpaceToBatchND and BatchToSpaceND: TensorFlow's documented examples, the two as inverses, the
// atrous convolution TensorFlow 1 builds from them, other dtypes and ranks, errors, and each op
// traced and run in a Session with unknown dims. Numeric gradient checks:
// tests/tape/gradient_check_test.cc.
#include "eager/ops/space_batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/conv.h"
#include "eager/ops/creation.h"
#include "eager/ops/random.h"
#include "tests/support/contexts.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

Tensor ramp(std::vector<int64_t> shape) {
  const Shape s(shape);
  return reshape(range<float>(1, static_cast<float>(s.num_elements()) + 1), shape);
}

// The examples of tf.space_to_batch_nd's documentation, and back through tf.batch_to_space_nd.
TEST(SpaceToBatchNdTest, TensorflowsDocumentedExamples) {
  // [1, 2, 2, 3], block 2x2: each pixel becomes a batch entry.
  const Tensor pixels = space_to_batch_nd(ramp({1, 2, 2, 3}), {2, 2}, {{0, 0}, {0, 0}});
  EXPECT_EQ(pixels.shape(), (Shape{4, 1, 1, 3}));
  EXPECT_THAT(pixels.to_vector<float>(), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
  // [1, 4, 4, 1]: batch entry (i, j) holds the pixels at rows i, i + 2 and columns j, j + 2.
  const Tensor grid = space_to_batch_nd(ramp({1, 4, 4, 1}), {2, 2}, {{0, 0}, {0, 0}});
  EXPECT_EQ(grid.shape(), (Shape{4, 2, 2, 1}));
  EXPECT_THAT(grid.to_vector<float>(), ElementsAre(1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16));
  // [2, 2, 4, 1], paddings (0, 0), (2, 0): the zero columns land in front; the output batch is
  // block position major, input batch minor.
  const Tensor x = ramp({2, 2, 4, 1});
  const Tensor padded = space_to_batch_nd(x, {2, 2}, {{0, 0}, {2, 0}});
  EXPECT_EQ(padded.shape(), (Shape{8, 1, 3, 1}));
  EXPECT_THAT(padded.to_vector<float>(),
              ElementsAre(0, 1, 3, 0, 9, 11, 0, 2, 4, 0, 10, 12, 0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16));
  const Tensor back = batch_to_space_nd(padded, {2, 2}, {{0, 0}, {2, 0}});
  EXPECT_EQ(back.shape(), x.shape());
  EXPECT_EQ(back.to_vector<float>(), x.to_vector<float>());
}

// tf.nn.atrous_conv2d as TensorFlow 1 writes it: a dilated convolution is the plain one on the
// space-to-batch rearranged input (each batch entry one phase of the dilation), moved back.
TEST(SpaceToBatchNdTest, AtrousConvolutionIsTheDilatedOne) {
  const Tensor x = random_uniform(Shape{2, 9, 9, 3}, -1, 1, DType::kFloat32, 5);
  const Tensor k = random_uniform(Shape{3, 3, 3, 4}, -1, 1, DType::kFloat32, 6);
  const Tensor dilated = conv2d(x, k, {1, 1}, "VALID", {2, 2});  // [2, 5, 5, 4]
  const Tensor phases = space_to_batch_nd(x, {2, 2}, {{0, 1}, {0, 1}});  // [8, 5, 5, 3]
  const Tensor atrous = batch_to_space_nd(conv2d(phases, k, {1, 1}, "VALID"), {2, 2}, {{0, 1}, {0, 1}});
  EXPECT_EQ(atrous.shape(), dilated.shape());
  expect_close(atrous, dilated, 1e-5);
}

TEST(SpaceToBatchNdTest, AnyDtypeRankAndNumberOfBlockedDims) {
  // One blocked dim of a [2, 6] int64 matrix; the trailing dims of a rank-5 uint8 tensor move whole.
  const Tensor seq(std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{2, 6});
  const Tensor s = space_to_batch_nd(seq, {3}, {{1, 2}});
  EXPECT_EQ(s.shape(), (Shape{6, 3}));
  EXPECT_THAT(s.to_vector<int64_t>(), ElementsAre(0, 3, 6, 0, 9, 12, 1, 4, 0, 7, 10, 0, 2, 5, 0, 8, 11, 0));
  EXPECT_EQ(batch_to_space_nd(s, {3}, {{1, 2}}).to_vector<int64_t>(), seq.to_vector<int64_t>());
  const Tensor bytes = cast(ramp({1, 2, 4, 2, 3}), DType::kUInt8);
  const Tensor moved = space_to_batch_nd(bytes, {2, 2}, {{0, 0}, {0, 0}});
  EXPECT_EQ(moved.shape(), (Shape{4, 1, 2, 2, 3}));
  EXPECT_EQ(moved.dtype(), DType::kUInt8);
  EXPECT_THAT(moved.to_vector<uint8_t>(), ElementsAreArray<uint8_t>({1, 2, 3, 4, 5, 6, 13, 14, 15, 16, 17, 18, 7, 8,
                                                                      9, 10, 11, 12, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                                                                      28, 29, 30, 37, 38, 39, 40, 41, 42, 31, 32, 33,
                                                                      34, 35, 36, 43, 44, 45, 46, 47, 48}));
  EXPECT_EQ(batch_to_space_nd(moved, {2, 2}, {{0, 0}, {0, 0}}).to_vector<uint8_t>(), bytes.to_vector<uint8_t>());
  // No blocked dims: a copy. An empty batch: an empty result of the right shape.
  EXPECT_EQ(space_to_batch_nd(seq, {}, {}).to_vector<int64_t>(), seq.to_vector<int64_t>());
  EXPECT_EQ(space_to_batch_nd(zeros({0, 4, 2}), {2}, {{0, 0}}).shape(), (Shape{0, 2, 2}));
  EXPECT_EQ(batch_to_space_nd(zeros({6, 0, 2}), {3}, {{0, 0}}).shape(), (Shape{2, 0, 2}));
}

TEST(SpaceToBatchNdTest, ErrorsNameTheOpAndTheProblem) {
  const Tensor x = zeros({1, 5, 4, 1});
  EXPECT_THAT(error_of([&] { space_to_batch_nd(x, {2, 2}, {{0, 0}, {0, 0}}); }),
              HasSubstr("[space_to_batch_nd] spatial dim 0 of input [1,5,4,1] padded by (0, 0) must be divisible by "
                        "block_shape[0] = 2"));
  EXPECT_THAT(error_of([&] { space_to_batch_nd(x, {2, 0}, {{1, 0}, {0, 0}}); }),
              HasSubstr("[space_to_batch_nd] block_shape [2,0] must hold positive sizes"));
  EXPECT_THAT(error_of([&] { space_to_batch_nd(x, {2}, {{1, 0}, {0, 0}}); }),
              HasSubstr("[space_to_batch_nd] paddings has 2 (before, after) pairs but block_shape [2] has 1 entries"));
  EXPECT_THAT(error_of([&] { space_to_batch_nd(x, {1, 1, 1, 1}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}}); }),
              HasSubstr("[space_to_batch_nd] input of shape [1,5,4,1] must have rank at least 5"));
  EXPECT_THAT(error_of([&] { space_to_batch_nd(x, {1}, {{-1, 1}}); }),
              HasSubstr("[space_to_batch_nd] paddings [-1,1] must be non-negative"));
  EXPECT_THAT(error_of([&] { batch_to_space_nd(zeros({6, 2, 2, 1}), {2, 2}, {{0, 0}, {0, 0}}); }),
              HasSubstr("[batch_to_space_nd] the batch 6 of input [6,2,2,1] must be divisible by prod(block_shape) = 4"));
  EXPECT_THAT(error_of([&] { batch_to_space_nd(zeros({4, 2, 2, 1}), {2, 2}, {{3, 2}, {0, 0}}); }),
              HasSubstr("[batch_to_space_nd] crops (3, 2) of spatial dim 0 exceed its size 4 = 2 * block_shape[0]"));
  EXPECT_THAT(error_of([&] { space_to_batch_nd(zeros({3, 2, 2}), {int64_t{1} << 62, 4}, {{0, 0}, {0, 0}}); }),
              HasSubstr("must hold positive sizes whose product fits in int64"));
}

TEST(SpaceToBatchNdTest, TracedAndSessionRunsMatchEagerWithUnknownDims) {
  const Tensor x = random_uniform(Shape{2, 6, 5, 3}, -1, 1, DType::kFloat32, 9);
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) {
        return batch_to_space_nd(space_to_batch_nd(v[0], {3, 2}, {{0, 0}, {1, 0}}) * 2.f, {3, 2}, {{0, 0}, {1, 0}});
      },
      {x}, {Shape{-1, 6, -1, 3}}, Shape{-1, 6, -1, 3});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return space_to_batch_nd(v[0], {3, 2}, {{0, 0}, {1, 0}}); }, {x},
      {Shape{2, 6, 5, -1}}, Shape{12, 2, 3, -1});
}

}  // namespace
}  // namespace tapeflow
