// ResizeBilinear and ResizeNearestNeighbor with TensorFlow's coordinate rules (legacy,
// align_corners, half_pixel_centers) and their gradient ops: values from TF's documented
// formulas, the gradients as adjoints, shapes, dtypes, errors, and each op traced and run in a
// Session with unknown dims. Numeric gradient checks: tests/tape/gradient_check_test.cc.
#include "eager/ops/resize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/ops/random.h"
#include "eager/ops/reduction.h"
#include "tests/support/contexts.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor rnd(std::vector<int64_t> shape, int64_t seed) {
  return random_uniform(Shape(shape), -1, 1, DType::kFloat64, seed);
}

// out[y, x] = 2 * r[y] + r[x] for the 2x2 image {{0, 1}, {2, 3}} (value 2 * row + col), where r
// holds the source coordinates after clamping.
std::vector<float> plane(const std::vector<float>& r) {
  std::vector<float> out;
  for (float y : r)
    for (float x : r) out.push_back(2 * y + x);
  return out;
}

TEST(ResizeBilinearTest, TensorflowsThreeCoordinateRules) {
  const Tensor img(std::vector<float>{0, 1, 2, 3}, Shape{1, 2, 2, 1});
  // Legacy: y * 0.5 = 0, 0.5, 1, 1.5 (upper pixel clamped to 1, so 1.5 reads row 1).
  EXPECT_THAT(resize_bilinear(img, {4, 4}).to_vector<float>(),
              testing::Pointwise(testing::FloatEq(), plane({0, 0.5f, 1, 1})));
  // Half-pixel: (y + 0.5) * 0.5 - 0.5 = -0.25, 0.25, 0.75, 1.25, clamped into [0, 1].
  EXPECT_THAT(resize_bilinear(img, {4, 4}, false, true).to_vector<float>(),
              testing::Pointwise(testing::FloatEq(), plane({0, 0.25f, 0.75f, 1})));
  // Align corners: y * (2 - 1) / (4 - 1).
  EXPECT_THAT(resize_bilinear(img, {4, 4}, true).to_vector<float>(),
              testing::Pointwise(testing::FloatNear(1e-6), plane({0, 1 / 3.f, 2 / 3.f, 1})));
  const Tensor big = resize_bilinear(zeros({2, 5, 7, 3}, DType::kFloat64), {3, 4});
  EXPECT_EQ(big.shape(), (Shape{2, 3, 4, 3}));
  EXPECT_EQ(big.dtype(), DType::kFloat64);
}

// TensorFlow's dtypes: a decoded uint8 (or int) image resizes bilinearly in float32 and comes
// out float32; nearest keeps the dtype.
TEST(ResizeBilinearTest, IntegerImagesInterpolateInFloat32) {
  const Tensor img(std::vector<uint8_t>{0, 255, 10, 20}, Shape{1, 2, 2, 1});
  const Tensor up = resize_bilinear(img, {2, 4});
  EXPECT_EQ(up.dtype(), DType::kFloat32);
  // Columns at x * 0.5 = 0, 0.5, 1, 1.5 (clamped): no wrap of 255 - 0 in uint8.
  EXPECT_THAT(up.to_vector<float>(), ElementsAre(0, 127.5f, 255, 255, 10, 15, 20, 20));
  const Tensor wide(std::vector<int64_t>{-3, 5, int64_t{1} << 40, 7}, Shape{1, 2, 2, 1});
  const Tensor half = resize_bilinear(wide, {1, 1}, /*align_corners=*/false, /*half_pixel_centers=*/true);
  EXPECT_EQ(half.dtype(), DType::kFloat32);
  EXPECT_THAT(half.to_vector<float>(), ElementsAre(static_cast<float>((-3 + 5 + (int64_t{1} << 40) + 7) / 4.0)));
  EXPECT_THAT(resize_bilinear(cast(img, DType::kInt32), {2, 4}).to_vector<float>(), testing::Pointwise(testing::FloatEq(), up.to_vector<float>()));
  const Tensor near = resize_nearest_neighbor(img, {4, 4});
  EXPECT_EQ(near.dtype(), DType::kUInt8);
  EXPECT_THAT(near.to_vector<uint8_t>(), ElementsAre(0, 0, 255, 255, 0, 0, 255, 255, 10, 10, 20, 20, 10, 10, 20, 20));
  EXPECT_EQ(resize_nearest_neighbor(cast(img, DType::kInt64), {1, 1}).to_vector<int64_t>(), std::vector<int64_t>{0});
}

TEST(ResizeNearestNeighborTest, TensorflowsThreeCoordinateRules) {
  const Tensor img = reshape(range<float>(0, 9), {1, 3, 3, 1});
  // Down 3 -> 2, scale 1.5. Legacy floor(y * 1.5) = 0, 1; align_corners (scale 2) round(y * 2)
  // = 0, 2; half-pixel floor((y + 0.5) * 1.5) = 0, 2.
  EXPECT_THAT(resize_nearest_neighbor(img, {2, 2}).to_vector<float>(), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(resize_nearest_neighbor(img, {2, 2}, true).to_vector<float>(), ElementsAre(0, 2, 6, 8));
  EXPECT_THAT(resize_nearest_neighbor(img, {2, 2}, false, true).to_vector<float>(), ElementsAre(0, 2, 6, 8));
  // Up 2 -> 3, scale 2/3. Legacy floor(0, .67, 1.33) = 0, 0, 1; half-pixel floor(.33, 1, 1.67)
  // = 0, 1, 1; align_corners (scale 1/2) round(0, .5, 1) = 0, 1, 1 (half away from zero).
  const Tensor two(std::vector<float>{0, 1, 2, 3}, Shape{1, 2, 2, 1});
  EXPECT_THAT(resize_nearest_neighbor(two, {3, 1}).to_vector<float>(), ElementsAre(0, 0, 2));
  // (Half-pixel reads column floor(0.5 * 2) = 1 of the width 2 -> 1 resize.)
  EXPECT_THAT(resize_nearest_neighbor(two, {3, 1}, false, true).to_vector<float>(), ElementsAre(1, 3, 3));
  EXPECT_THAT(resize_nearest_neighbor(two, {3, 1}, true).to_vector<float>(), ElementsAre(0, 2, 2));
  EXPECT_EQ(resize_nearest_neighbor(zeros({2, 5, 7, 3}), {10, 1}).shape(), (Shape{2, 10, 1, 3}));
}

TEST(ResizeGradTest, EachGradientOpIsTheAdjointOfItsResize) {
  for (int flags = 0; flags < 3; ++flags) {
    const bool align = flags == 1, half = flags == 2;
    SCOPED_TRACE(flags);
    for (const std::vector<int64_t>& size : {std::vector<int64_t>{7, 2}, std::vector<int64_t>{2, 9}}) {
      const Tensor x = rnd({2, 4, 5, 3}, 1 + flags), g = rnd({2, size[0], size[1], 3}, 7 + flags);
      EXPECT_NEAR(reduce_sum(resize_bilinear(x, size, align, half) * g).item<double>(),
                  reduce_sum(x * resize_bilinear_grad(g, x, align, half)).item<double>(), 1e-10);
      EXPECT_NEAR(reduce_sum(resize_nearest_neighbor(x, size, align, half) * g).item<double>(),
                  reduce_sum(x * resize_nearest_neighbor_grad(g, {4, 5}, align, half)).item<double>(), 1e-10);
    }
  }
  // Nearest 3x3 -> 2x2 (legacy): pixels 0, 1, 3, 4 each receive one gradient.
  const Tensor g(std::vector<float>{1, 2, 3, 4}, Shape{1, 2, 2, 1});
  EXPECT_THAT(resize_nearest_neighbor_grad(g, {3, 3}).to_vector<float>(), ElementsAre(1, 2, 0, 3, 4, 0, 0, 0, 0));
  EXPECT_EQ(resize_bilinear_grad(g, zeros({1, 5, 6, 1})).shape(), (Shape{1, 5, 6, 1}));
}

TEST(ResizeTest, ErrorsNameTheOpAndTheInput) {
  const Tensor img = zeros({1, 4, 4, 1});
  EXPECT_THAT(error_of([&] { resize_bilinear(img, {2, 2}, true, true); }),
              HasSubstr("[resize_bilinear] align_corners and half_pixel_centers cannot both be true"));
  EXPECT_THAT(error_of([&] { resize_nearest_neighbor(img, {0, 2}); }),
              HasSubstr("[resize_nearest_neighbor] size [0,2] must be positive"));
  EXPECT_THAT(error_of([&] { resize_bilinear(img, {2, 2, 2}); }),
              HasSubstr("[resize_bilinear] size [2,2,2] must have 2 entries {height, width}"));
  EXPECT_THAT(error_of([&] { resize_bilinear(zeros({4, 4, 1}), {2, 2}); }),
              HasSubstr("[resize_bilinear] 'images' must have rank 4 [batch, height, width, channels], got shape [4,4,1]"));
  EXPECT_THAT(error_of([&] { resize_bilinear(zeros({1, 0, 4, 1}), {2, 2}); }),
              HasSubstr("[resize_bilinear] 'images' [1,0,4,1] has an empty height or width"));
  EXPECT_THAT(error_of([&] { resize_bilinear(zeros({1, 4, 4, 1}, DType::kBool), {2, 2}); }),
              HasSubstr("[resize_bilinear] input 'images' has dtype bool"));
  EXPECT_THAT(error_of([&] { resize_nearest_neighbor_grad(zeros({1, 2, 2, 1}, DType::kInt32), {4, 4}); }),
              HasSubstr("[resize_nearest_neighbor_grad] input 'grads' has dtype int32"));
  EXPECT_THAT(error_of([&] { resize_bilinear_grad(zeros({1, 2, 2, 2}), img); }),
              HasSubstr("[resize_bilinear_grad] 'grads' [1,2,2,2] and 'original_image' [1,4,4,1] must agree"));
}

TEST(ResizeContextTest, TracedAndSessionRunsMatchEagerWithUnknownDims) {
  const Tensor x = rnd({2, 4, 5, 3}, 20);
  expect_same_in_every_context([](const std::vector<Tensor>& v) { return resize_bilinear(v[0], {7, 3}, false, true); },
                               {x}, {Shape{-1, -1, -1, 3}}, Shape{-1, 7, 3, 3});
  expect_same_in_every_context([](const std::vector<Tensor>& v) { return resize_nearest_neighbor(v[0], {7, 3}, true); },
                               {x}, {Shape{-1, 4, 5, -1}}, Shape{-1, 7, 3, -1});
  expect_same_in_every_context([](const std::vector<Tensor>& v) { return resize_bilinear_grad(v[0], v[1]); },
                               {rnd({2, 7, 3, 3}, 21), x}, {Shape{-1, 7, 3, 3}, Shape{2, 4, 5, 3}}, Shape{2, 4, 5, 3});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return resize_nearest_neighbor_grad(v[0], {4, 5}); }, {rnd({2, 7, 3, 3}, 22)},
      {Shape{-1, -1, -1, 3}}, Shape{-1, 4, 5, 3});
}

}  // namespace
}  // namespace tapeflow
