// CropAndResize (tf.image.crop_and_resize) and its two gradient ops: values from TensorFlow's
// documented sampling rule on images whose values are a linear function of the pixel (so
// bilinear samples are exact), extrapolation, flipped boxes, nearest rounding, dtypes, errors,
// the gradient ops as adjoints and derivatives, and each op traced and run in a Session with
// unknown dims. Numeric gradient checks: tests/tape/gradient_check_test.cc.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/ops/random.h"
#include "eager/ops/reduction.h"
#include "eager/ops/resize.h"
#include "tape/gradient_tape.h"
#include "tests/support/contexts.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// A [1, 3, 3, 1] image whose pixel (y, x) is 3y + x, so a bilinear sample at (y, x) is 3y + x.
Tensor ramp(DType dtype = DType::kFloat32) {
  return cast(Tensor(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8}, Shape{1, 3, 3, 1}), dtype);
}
Tensor boxes(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size()) / 4;
  return Tensor(std::move(v), Shape{n, 4});
}
Tensor indices(std::vector<int32_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor(std::move(v), Shape{n});
}
Tensor rnd(std::vector<int64_t> shape, double lo, double hi, int64_t seed) {
  return random_uniform(Shape(shape), lo, hi, DType::kFloat64, seed);
}

TEST(CropAndResizeTest, BilinearSamplesFollowTensorflowsRule) {
  // The whole image at its own size; its top-left quarter at 3x3 (rows and columns 0, 0.5, 1).
  EXPECT_THAT(crop_and_resize(ramp(), boxes({0, 0, 1, 1}), indices({0}), {3, 3}).to_vector<float>(),
              ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_THAT(crop_and_resize(ramp(), boxes({0, 0, 0.5f, 0.5f}), indices({0}), {3, 3}).to_vector<float>(),
              ElementsAre(0, 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4));
  // y1 > y2 and x1 > x2 flip the crop; a crop of one row or column samples the box's middle.
  EXPECT_THAT(crop_and_resize(ramp(), boxes({1, 1, 0, 0}), indices({0}), {2, 2}).to_vector<float>(),
              ElementsAre(8, 6, 2, 0));
  EXPECT_THAT(crop_and_resize(ramp(), boxes({0, 0, 1, 1}), indices({0}), {1, 1}).to_vector<float>(), ElementsAre(4));
  EXPECT_THAT(crop_and_resize(ramp(), boxes({0, 0.25f, 1, 0.25f}), indices({0}), {3, 1}).to_vector<float>(),
              ElementsAre(0.5f, 3.5f, 6.5f));
  // Between pixels in both axes: (0.75 * 2, 0.25 * 2) = (1.5, 0.5) -> 5.
  EXPECT_THAT(crop_and_resize(ramp(), boxes({0.75f, 0.25f, 0.75f, 0.25f}), indices({0}), {1, 1}).to_vector<float>(),
              ElementsAre(5));
}

TEST(CropAndResizeTest, SamplesOutsideTheImageTakeTheExtrapolationValue) {
  // Rows -2, 0, 2 of column 1: the first is outside.
  EXPECT_THAT(crop_and_resize(ramp(), boxes({-1, 0, 1, 1}), indices({0}), {3, 1}, "bilinear", -7).to_vector<float>(),
              ElementsAre(-7, 1, 7));
  // Columns 0, 2, 4 of row 0, nearest: the last is outside; the default value is 0.
  EXPECT_THAT(crop_and_resize(ramp(), boxes({0, 0, 0, 2}), indices({0}), {1, 3}, "nearest").to_vector<float>(),
              ElementsAre(0, 2, 0));
  EXPECT_THAT(crop_and_resize(ramp(), boxes({0, 0, 0, 2}), indices({0}), {1, 3}, "nearest", -3).to_vector<float>(),
              ElementsAre(0, 2, -3));
  // A NaN or infinite coordinate samples nothing.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_THAT(crop_and_resize(ramp(), boxes({nan, 0, 1, 1, 0, -inf, 1, 1}), indices({0, 0}), {1, 1}, "bilinear", 9)
                  .to_vector<float>(),
              ElementsAre(9, 9));
}

TEST(CropAndResizeTest, NearestRoundsHalfAwayFromZero) {
  // Samples 0, 0.5, 1 in each axis: 0.5 reads pixel 1.
  EXPECT_THAT(crop_and_resize(ramp(), boxes({0, 0, 0.5f, 0.5f}), indices({0}), {3, 3}, "nearest").to_vector<float>(),
              ElementsAre(0, 1, 1, 3, 4, 4, 3, 4, 4));
}

TEST(CropAndResizeTest, BoxIndicesPickTheImageAndDtypesFollowTheImages) {
  const Tensor two = concat({ramp(), ramp() + 100.f}, 0);
  const Tensor crops = crop_and_resize(two, boxes({0, 0, 1, 1, 0, 0, 1, 1}), indices({1, 0}), {1, 2});
  EXPECT_EQ(crops.shape(), (Shape{2, 1, 2, 1}));
  EXPECT_THAT(crops.to_vector<float>(), ElementsAre(103, 105, 3, 5));
  // Integer images sample in float32; float64 images (and boxes) stay float64.
  const Tensor from_bytes = crop_and_resize(ramp(DType::kUInt8), boxes({0, 0, 0.5f, 0.5f}), indices({0}), {2, 2});
  EXPECT_EQ(from_bytes.dtype(), DType::kFloat32);
  EXPECT_THAT(from_bytes.to_vector<float>(), ElementsAre(0, 1, 3, 4));
  const Tensor wide = crop_and_resize(ramp(DType::kFloat64), Tensor(std::vector<double>{0, 0, 0.1, 0.1}, Shape{1, 4}),
                                      indices({0}), {2, 2});
  EXPECT_EQ(wide.dtype(), DType::kFloat64);
  EXPECT_NEAR(wide.to_vector<double>()[3], 0.8, 1e-15);  // (0.2, 0.2) -> 3 * 0.2 + 0.2
  EXPECT_EQ(crop_and_resize(zeros({2, 5, 6, 3}), zeros({0, 4}), indices({}), {4, 7}).shape(), (Shape{0, 4, 7, 3}));
}

TEST(CropAndResizeTest, ErrorsNameTheOpAndTheInput) {
  const Tensor one = boxes({0, 0, 1, 1});
  EXPECT_THAT(error_of([&] { crop_and_resize(ramp(), one, indices({1}), {2, 2}); }),
              HasSubstr("[crop_and_resize] box_indices[0] = 1 is outside [0, 1), the images' batch"));
  EXPECT_THAT(error_of([&] { crop_and_resize(ramp(), one, indices({-1}), {2, 2}); }),
              HasSubstr("box_indices[0] = -1 is outside [0, 1)"));
  EXPECT_THAT(error_of([&] { crop_and_resize(ramp(), zeros({1, 3}), indices({0}), {2, 2}); }),
              HasSubstr("[crop_and_resize] 'boxes' must have shape [num_boxes, 4], got [1,3]"));
  EXPECT_THAT(error_of([&] { crop_and_resize(ramp(), one, indices({0, 0}), {2, 2}); }),
              HasSubstr("'boxes' [1,4], 'box_indices' [2] must agree in num_boxes"));
  EXPECT_THAT(error_of([&] { crop_and_resize(ramp(), one, Tensor(std::vector<int64_t>{0}, Shape{1}), {2, 2}); }),
              HasSubstr("[crop_and_resize] input 'box_indices' has dtype int64"));
  EXPECT_THAT(error_of([&] { crop_and_resize(ramp(), one, indices({0}), {0, 2}); }),
              HasSubstr("[crop_and_resize] crop_size [0,2] must be positive"));
  EXPECT_THAT(error_of([&] { crop_and_resize(ramp(), one, indices({0}), {2, 2}, "bicubic"); }),
              HasSubstr("[crop_and_resize] method must be \"bilinear\" or \"nearest\", got \"bicubic\""));
  EXPECT_THAT(error_of([&] { crop_and_resize(zeros({1, 0, 3, 1}), one, indices({0}), {2, 2}); }),
              HasSubstr("[crop_and_resize] 'images' [1,0,3,1] has an empty height or width"));
  EXPECT_THAT(error_of([&] { crop_and_resize(zeros({3, 3, 1}), one, indices({0}), {2, 2}); }),
              HasSubstr("'images' must have rank 4"));
  const Tensor g = zeros({1, 2, 2, 1});
  EXPECT_THAT(error_of([&] {
                crop_and_resize_grad_image(g, one, indices({0}), Tensor(std::vector<int32_t>{1, 3, 3, 2}, Shape{4}),
                                           DType::kFloat32);
              }),
              HasSubstr("[crop_and_resize_grad_image] image_size [1,3,3,2] must be 4 positive dims"));
  EXPECT_THAT(error_of([&] {
                crop_and_resize_grad_image(g, one, indices({0}), Tensor(std::vector<int32_t>{1, 3, 3, 1}, Shape{4}),
                                           DType::kInt32);
              }),
              HasSubstr("[crop_and_resize_grad_image] dtype must be float32 or float64, got int32"));
  EXPECT_THAT(error_of([&] { crop_and_resize_grad_boxes(zeros({1, 2, 2, 2}), ramp(), one, indices({0})); }),
              HasSubstr("[crop_and_resize_grad_boxes] 'grads' [1,2,2,2] and 'images' [1,3,3,1] must agree in depth"));
  // Nothing changed: the inputs still hold their values.
  EXPECT_THAT(one.to_vector<float>(), ElementsAre(0, 0, 1, 1));
}

TEST(CropAndResizeGradTest, TheImageGradientIsTheAdjointOfTheCrop) {
  const Tensor x = rnd({2, 5, 4, 3}, -1, 1, 1);
  // Boxes inside, flipped, partly outside, and of one sample.
  const Tensor b = cast(boxes({0.1f, 0.2f, 0.9f, 0.7f, 0.8f, 0.9f, 0.05f, 0.1f, -0.3f, 0.4f, 1.2f, 1.5f, 0.3f, 0.3f,
                               0.6f, 0.8f}),
                        DType::kFloat64);
  const Tensor ind = indices({0, 1, 1, 0});
  for (const char* method : {"bilinear", "nearest"}) {
    SCOPED_TRACE(method);
    for (const std::vector<int64_t>& size : {std::vector<int64_t>{3, 4}, std::vector<int64_t>{1, 5}}) {
      const Tensor g = rnd({4, size[0], size[1], 3}, -1, 1, 2 + size[0]);
      const Tensor dx = crop_and_resize_grad_image(g, b, ind, shape(x), DType::kFloat64, method);
      EXPECT_EQ(dx.shape(), x.shape());
      EXPECT_NEAR(reduce_sum(crop_and_resize(x, b, ind, size, method, 5.0f) * g).item<double>() -
                      5.0 * reduce_sum(g * cast(equal(crop_and_resize(ones_like(x), b, ind, size, method), 0.0),
                                               DType::kFloat64))
                                .item<double>(),
                  reduce_sum(x * dx).item<double>(), 1e-12);
    }
  }
}

TEST(CropAndResizeGradTest, TheTapesBoxesGradientIsTheGradBoxesOp) {
  // One sample between pixels: moving y1 or y2 moves it by (height - 1) / 2 per unit.
  const Tensor b = cast(boxes({0.75f, 0.25f, 0.75f, 0.25f}), DType::kFloat64);
  const Tensor g(std::vector<double>{1.0}, Shape{1, 1, 1, 1});
  EXPECT_THAT(crop_and_resize_grad_boxes(g, ramp(DType::kFloat64), b, indices({0})).to_vector<double>(),
              ElementsAre(3.0, 1.0, 3.0, 1.0));  // d(3y + x)/dy1 = 3 * (3 - 1) / 2, d/dx1 = 1 * (3 - 1) / 2
  // On a random image: the tape's gradients in images and boxes are the two gradient ops'.
  const Tensor x = rnd({2, 5, 4, 3}, -1, 1, 60), up = rnd({2, 3, 2, 3}, -1, 1, 61);
  const Tensor two = Tensor(std::vector<double>{0.1, 0.2, 0.9, 0.7, 0.8, 0.9, 0.05, 0.1}, Shape{2, 4});
  {
    GradientTape t;
    t.watch(x);
    t.watch(two);
    const std::vector<Tensor> d = t.gradient(reduce_sum(crop_and_resize(x, two, indices({1, 0}), {3, 2}) * up),
                                             {Source(x), Source(two)});
    expect_close(d[0], crop_and_resize_grad_image(up, two, indices({1, 0}), shape(x), DType::kFloat64), 0);
    expect_close(d[1], crop_and_resize_grad_boxes(up, x, two, indices({1, 0})), 0);
  }
  GradientTape tape;
  tape.watch(b);
  const Tensor nearest = crop_and_resize(ramp(DType::kFloat64), b, indices({0}), {2, 2}, "nearest");
  EXPECT_THAT(tape.gradient(reduce_sum(nearest), b).to_vector<double>(), ElementsAre(0, 0, 0, 0));
  // The second derivative in boxes is refused, naming what is missing.
  GradientTape outer;
  outer.watch(b);
  GradientTape inner;
  inner.watch(b);
  const Tensor y = reduce_sum(crop_and_resize(ramp(DType::kFloat64), b, indices({0}), {2, 2}));
  const Tensor db = inner.gradient(y, b);
  EXPECT_THAT(error_of<UnimplementedError>([&] { outer.gradient(reduce_sum(db), b); }),
              HasSubstr("the gradient of CropAndResizeGradBoxes with respect to boxes is not implemented"));
}

// Past 2^24 pixels a float32 coordinate can round up to the axis' length: TensorFlow's kernel
// would read (and its gradient write) one pixel past the row; here the last pixel is used.
TEST(CropAndResizeTest, CoordinatesRoundedPastTheLastPixelReadTheLastPixel) {
  const int64_t w = 16777220;  // float32(w - 1) == w
  std::vector<uint8_t> row(static_cast<size_t>(w), 0);
  row.back() = 7;
  const Tensor image(std::move(row), Shape{1, 1, w, 1});
  EXPECT_THAT(crop_and_resize(image, boxes({0, 0, 0, 1}), indices({0}), {1, 2}).to_vector<float>(), ElementsAre(0, 7));
  EXPECT_THAT(crop_and_resize(image, boxes({0, 1, 0, 1}), indices({0}), {1, 1}, "nearest").to_vector<float>(),
              ElementsAre(7));
  const Tensor g(std::vector<float>{1, 2}, Shape{1, 1, 2, 1});
  const Tensor dx = crop_and_resize_grad_image(
      g, boxes({0, 0, 0, 1}), indices({0}), Tensor(std::vector<int32_t>{1, 1, static_cast<int32_t>(w), 1}, Shape{4}),
      DType::kFloat32);
  EXPECT_EQ(dx.shape(), (Shape{1, 1, w, 1}));
  EXPECT_EQ(reduce_sum(dx).item<float>(), 3);
  EXPECT_EQ(slice(dx, {0, 0, w - 1, 0}, {1, 1, 1, 1}).item<float>(), 2);
  EXPECT_TRUE(std::isfinite(
      reduce_sum(crop_and_resize_grad_boxes(g, image, boxes({0, 0, 0, 1}), indices({0}))).item<float>()));
}

TEST(CropAndResizeContextTest, TracedAndSessionRunsMatchEagerWithUnknownDims) {
  const Tensor x = rnd({2, 5, 4, 3}, -1, 1, 30);
  const Tensor b = boxes({0.1f, 0.2f, 0.9f, 0.7f, 0.8f, 0.9f, 0.05f, 0.1f, -0.3f, 0.4f, 1.2f, 1.5f});
  const Tensor ind = indices({0, 1, 1});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return crop_and_resize(v[0], v[1], v[2], {3, 2}); }, {x, b, ind},
      {Shape{-1, -1, -1, 3}, Shape{-1, 4}, Shape{-1}}, Shape{-1, 3, 2, 3});
  // The image gradient's shape is image_size's value: a graph knows its depth only.
  const Tensor g = rnd({3, 3, 2, 3}, -1, 1, 31);
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) {
        return crop_and_resize_grad_image(v[0], v[1], v[2], Tensor(std::vector<int32_t>{2, 5, 4, 3}, Shape{4}),
                                          DType::kFloat64);
      },
      {g, b, ind}, {Shape{-1, 3, 2, 3}, Shape{3, 4}, Shape{3}}, Shape{-1, -1, -1, 3});
  expect_same_in_every_context(
      [&](const std::vector<Tensor>& v) { return crop_and_resize_grad_boxes(v[0], x, v[1], v[2]); }, {g, b, ind},
      {Shape{-1, 3, 2, 3}, Shape{-1, 4}, Shape{-1}}, Shape{-1, 4});
  // A traced training step: the tape's image gradient adds to another of unknown batch.
  auto step = function([&](const Tensor& images) {
    GradientTape tape;
    tape.watch(images);
    const Tensor loss = reduce_sum(crop_and_resize(images, b, ind, {3, 2}) * g) + reduce_sum(images * images);
    return tape.gradient(loss, images);
  });
  GradientTape eager;
  eager.watch(x);
  const Tensor loss = reduce_sum(crop_and_resize(x, b, ind, {3, 2}) * g) + reduce_sum(x * x);
  expect_close(step(x), eager.gradient(loss, x), 1e-12);
}

}  // namespace
}  // namespace tapeflow
