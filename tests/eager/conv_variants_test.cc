// Conv2D with dilations, DepthwiseConv2dNative and conv2d_transpose: values against
// hand-computed references (a dilated convolution is the plain one with a zero-inserted
// filter; depthwise is one conv2d per channel), shapes, dtypes, error messages, and each op
// traced and run in a Session with unknown dims. Gradients: tests/tape/gradient_check_test.cc.
#include "eager/ops/conv_variants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/conv.h"
#include "eager/ops/creation.h"
#include "eager/ops/random.h"
#include "eager/ops/reduction.h"
#include "eager/ops/unary.h"
#include "graph/graph.h"
#include "graph/graph_def.h"
#include "graph/graph_ops.h"
#include "tape/gradient_tape.h"
#include "tests/support/contexts.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Tensor rnd(std::vector<int64_t> shape, int64_t seed) {
  return random_uniform(Shape(shape), -1, 1, DType::kFloat64, seed);
}

// The filter with dh - 1 zero rows and dw - 1 zero columns between its taps.
Tensor zero_inserted(const Tensor& f, int64_t dh, int64_t dw) {
  const Shape& s = f.shape();
  const int64_t kh = s.dim(0), kw = s.dim(1), ci = s.dim(2), co = s.dim(3);
  const int64_t eh = (kh - 1) * dh + 1, ew = (kw - 1) * dw + 1;
  const std::vector<double> v = f.to_vector<double>();
  std::vector<double> out(static_cast<size_t>(eh * ew * ci * co), 0.0);
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      for (int64_t e = 0; e < ci * co; ++e) out[((i * dh) * ew + j * dw) * ci * co + e] = v[(i * kw + j) * ci * co + e];
  return Tensor(out, Shape{eh, ew, ci, co});
}

// The taps of a zero-inserted filter's gradient: the dilated filter's gradient.
Tensor taps_of(const Tensor& g, int64_t kh, int64_t kw, int64_t dh, int64_t dw) {
  const Shape& s = g.shape();
  const int64_t ew = s.dim(1), cc = s.dim(2) * s.dim(3);
  const std::vector<double> v = g.to_vector<double>();
  std::vector<double> out;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      for (int64_t e = 0; e < cc; ++e) out.push_back(v[((i * dh) * ew + j * dw) * cc + e]);
  return Tensor(out, Shape{kh, kw, s.dim(2), s.dim(3)});
}

// depthwise_conv2d as one conv2d per input channel, concatenated in channel-major order.
Tensor per_channel(const Tensor& x, const Tensor& f, std::vector<int64_t> strides, const char* padding,
                   std::vector<int64_t> dilations) {
  std::vector<Tensor> parts;
  for (int64_t c = 0; c < x.shape().dim(3); ++c)
    parts.push_back(conv2d(slice(x, {0, 0, 0, c}, {-1, -1, -1, 1}), slice(f, {0, 0, c, 0}, {-1, -1, 1, -1}), strides,
                           padding, dilations));
  return concat(parts, 3);
}

struct Geometry {
  std::vector<int64_t> strides, dilations;
  const char* padding;
};
const Geometry kGeometries[] = {
    {{1, 1}, {2, 2}, "SAME"}, {{1, 1}, {2, 3}, "VALID"}, {{2, 2}, {2, 1}, "SAME"}, {{1, 2}, {3, 2}, "VALID"},
    {{1, 1, 1, 1}, {1, 2, 2, 1}, "SAME"},
};

TEST(DilatedConv2DTest, EqualsTheConvolutionWithAZeroInsertedFilter) {
  const Tensor x = rnd({2, 9, 8, 3}, 1), f = rnd({3, 2, 3, 4}, 2);
  for (const Geometry& g : kGeometries) {
    SCOPED_TRACE(g.padding);
    const int64_t dh = g.dilations[g.dilations.size() == 4 ? 1 : 0], dw = g.dilations[g.dilations.size() == 4 ? 2 : 1];
    const Tensor wide = zero_inserted(f, dh, dw);
    const Tensor y = conv2d(x, f, g.strides, g.padding, g.dilations);
    expect_close(y, conv2d(x, wide, g.strides, g.padding), 1e-12);
    const Tensor dy = rnd(y.shape().as_vector(), 3);
    expect_close(conv2d_backprop_input({2, 9, 8, 3}, f, dy, g.strides, g.padding, g.dilations),
                 conv2d_backprop_input({2, 9, 8, 3}, wide, dy, g.strides, g.padding), 1e-12);
    expect_close(conv2d_backprop_filter(x, {3, 2, 3, 4}, dy, g.strides, g.padding, g.dilations),
                 taps_of(conv2d_backprop_filter(x, wide.shape().as_vector(), dy, g.strides, g.padding), 3, 2, dh, dw),
                 1e-12);
  }
}

TEST(DilatedConv2DTest, HandComputedValuesAndShapes) {
  // 1x5 image 1..5, a 1x2 filter {1, 10} dilated by 2: y[i] = x[i] + 10 x[i + 2].
  const Tensor x(std::vector<float>{1, 2, 3, 4, 5}, Shape{1, 1, 5, 1});
  const Tensor f(std::vector<float>{1, 10}, Shape{1, 2, 1, 1});
  EXPECT_EQ(conv2d(x, f, {1, 1}, "VALID", {1, 2}).to_vector<float>(), (std::vector<float>{31, 42, 53}));
  // SAME: effective width 3, pad 1 left and 1 right: {0 + 10*2, 1 + 10*3, ..., 4 + 10*0, 5 + 0}.
  EXPECT_EQ(conv2d(x, f, {1, 1}, "SAME", {1, 2}).to_vector<float>(), (std::vector<float>{20, 31, 42, 53, 4}));
  EXPECT_EQ(conv2d(x, f, {1, 1}, "SAME", {1, 2}).dtype(), DType::kFloat32);
  EXPECT_EQ(conv2d(zeros({2, 10, 10, 3}), zeros({3, 3, 3, 5}), {1, 1}, "VALID", {3, 2}).shape(), (Shape{2, 4, 6, 5}));
}

TEST(DilatedConv2DTest, ErrorsNameTheOpAndTheInput) {
  const Tensor x = zeros({1, 5, 5, 1}), f = zeros({3, 3, 1, 1});
  EXPECT_THAT(error_of([&] { conv2d(x, f, {1, 1}, "SAME", {2, 2, 2, 2}); }),
              HasSubstr("[conv2d] dilations [2,2,2,2] must be 1 in the batch and channel dimensions"));
  EXPECT_THAT(error_of([&] { conv2d(x, f, {1, 1}, "SAME", {0, 1}); }), HasSubstr("[conv2d] dilations [0,1] must be positive"));
  EXPECT_THAT(error_of([&] { conv2d(x, f, {1, 1}, "VALID", {3, 3}); }),
              HasSubstr("[conv2d] filter window 3x3 (7x7 dilated) of 'filter' [3,3,1,1] is larger than input 'input'"));
}

TEST(DepthwiseConv2DTest, EqualsOneConv2DPerChannel) {
  const Tensor x = rnd({2, 7, 6, 3}, 4), f = rnd({3, 2, 3, 2}, 5);
  for (const Geometry& g : kGeometries) {
    SCOPED_TRACE(g.padding);
    const Tensor y = depthwise_conv2d(x, f, g.strides, g.padding, g.dilations);
    expect_close(y, per_channel(x, f, g.strides, g.padding, g.dilations), 1e-12);
    // The backprops against the tape's gradient of the per-channel composition.
    const Tensor dy = rnd(y.shape().as_vector(), 6);
    GradientTape tape(/*persistent=*/true);
    tape.watch(x);
    tape.watch(f);
    const Tensor loss = reduce_sum(per_channel(x, f, g.strides, g.padding, g.dilations) * dy);
    expect_close(depthwise_conv2d_backprop_input({2, 7, 6, 3}, f, dy, g.strides, g.padding, g.dilations),
                 tape.gradient(loss, {x})[0], 1e-12);
    expect_close(depthwise_conv2d_backprop_filter(x, {3, 2, 3, 2}, dy, g.strides, g.padding, g.dilations),
                 tape.gradient(loss, {f})[0], 1e-12);
  }
}

TEST(DepthwiseConv2DTest, HandComputedValuesShapesAndDtypes) {
  // Two channels, multiplier 2: channel 0 scaled by {1, 2}, channel 1 by {3, 4} (1x1 filter).
  const Tensor x(std::vector<float>{1, 10, 2, 20}, Shape{1, 1, 2, 2});
  const Tensor f(std::vector<float>{1, 2, 3, 4}, Shape{1, 1, 2, 2});
  const Tensor y = depthwise_conv2d(x, f, {1, 1}, "VALID");
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 4}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 30, 40, 2, 4, 60, 80}));
  EXPECT_EQ(depthwise_conv2d(zeros({3, 9, 9, 4}, DType::kFloat64), zeros({3, 3, 4, 3}, DType::kFloat64), {2, 2}, "SAME")
                .shape(),
            (Shape{3, 5, 5, 12}));
  EXPECT_EQ(depthwise_conv2d(zeros({1, 9, 9, 4}), zeros({3, 3, 4, 1}), {1, 1}, "VALID", {1, 2, 2, 1}).shape(),
            (Shape{1, 5, 5, 4}));
  EXPECT_EQ(depthwise_conv2d(zeros({1, 4, 4, 0}), zeros({2, 2, 0, 3}), {1, 1}, "SAME").shape(), (Shape{1, 4, 4, 0}));
}

TEST(DepthwiseConv2DTest, ErrorsNameTheOpAndTheInput) {
  const Tensor x = zeros({1, 5, 5, 3});
  EXPECT_THAT(error_of([&] { depthwise_conv2d(x, zeros({3, 3, 2, 1}), {1, 1}, "SAME"); }),
              HasSubstr("[depthwise_conv2d] 'input' [1,5,5,3] has 3 channels but 'filter' [3,3,2,1] expects 2 input "
                        "channels"));
  EXPECT_THAT(error_of([&] { depthwise_conv2d(zeros({5, 5, 3}), zeros({3, 3, 3, 1}), {1, 1}, "SAME"); }),
              HasSubstr("[depthwise_conv2d] 'input' must have rank 4 [batch, height, width, channels], got shape [5,5,3]"));
  EXPECT_THAT(error_of([&] { depthwise_conv2d(x, zeros({3, 3, 3}), {1, 1}, "SAME"); }),
              HasSubstr("[depthwise_conv2d] 'filter' must have rank 4"));
  EXPECT_THAT(error_of([&] { depthwise_conv2d(x, zeros({3, 3, 3, 1}), {1, 1}, "SAME", {1, 2, 2, 2}); }),
              HasSubstr("[depthwise_conv2d] dilations [1,2,2,2] must be 1 in the batch and channel dimensions"));
  EXPECT_THAT(error_of([&] { depthwise_conv2d(x, zeros({3, 3, 3, 1}), {1, 1}, "FULL"); }),
              HasSubstr("[depthwise_conv2d] padding must be \"SAME\" or \"VALID\""));
  EXPECT_THAT(error_of([&] { depthwise_conv2d(x, zeros({3, 3, 3, 1}, DType::kFloat64), {1, 1}, "SAME"); }),
              HasSubstr("[depthwise_conv2d] 'input' and 'filter' must have the same dtype, got float32 and float64"));
  EXPECT_THAT(error_of([&] { depthwise_conv2d(zeros({1, 5, 5, 3}, DType::kInt32), zeros({3, 3, 3, 1}, DType::kInt32),
                                              {1, 1}, "SAME"); }),
              HasSubstr("[depthwise_conv2d]"));
  EXPECT_THAT(error_of([&] { depthwise_conv2d_backprop_input({1, 5, 5, 3}, zeros({3, 3, 3, 1}), zeros({1, 4, 4, 3}),
                                                             {1, 1}, "SAME"); }),
              HasSubstr("[depthwise_conv2d_backprop_input] 'out_backprop' has shape [1,4,4,3] but depthwise_conv2d of "
                        "input [1,5,5,3]"));
}

TEST(Conv2DTransposeTest, IsConv2DBackpropInputAndSpreadsEachPixel) {
  // Stride 2, a 2x2 filter of ones, VALID: each input pixel becomes a 2x2 block of its value.
  const Tensor x(std::vector<float>{1, 2, 3, 4}, Shape{1, 2, 2, 1});
  const Tensor y = conv2d_transpose(x, ones({2, 2, 1, 1}), {1, 4, 4, 1}, {2, 2}, "VALID");
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  const Tensor xs = rnd({2, 3, 3, 4}, 7), f = rnd({3, 3, 2, 4}, 8);
  expect_close(conv2d_transpose(xs, f, {2, 6, 6, 2}, {2, 2}, "SAME"),
               conv2d_backprop_input({2, 6, 6, 2}, f, xs, {2, 2}, "SAME"), 0);
  // Adjoint of conv2d: <conv2d(a, f), b> == <a, conv2d_transpose(b, f)>.
  const Tensor a = rnd({2, 6, 6, 2}, 9);
  EXPECT_NEAR(reduce_sum(conv2d(a, f, {2, 2}, "SAME") * xs).item<double>(),
              reduce_sum(a * conv2d_transpose(xs, f, {2, 6, 6, 2}, {2, 2}, "SAME")).item<double>(), 1e-10);
  EXPECT_THAT(error_of([&] { conv2d_transpose(xs, f, {2, 6, 6, 3}, {2, 2}, "SAME"); }),
              HasSubstr("'input_shape' [2,6,6,3] has 3 channels but 'filter' [3,3,2,4] expects 2 input channels"));
}

TEST(ConvVariantsContextTest, TracedAndSessionRunsMatchEagerWithUnknownDims) {
  const Tensor x = rnd({2, 7, 6, 3}, 10);
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return conv2d(v[0], v[1], {1, 1}, "SAME", {2, 2}); }, {x, rnd({3, 3, 3, 4}, 11)},
      {Shape{-1, -1, -1, 3}, Shape{3, 3, 3, 4}}, Shape{-1, -1, -1, 4});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return depthwise_conv2d(v[0], v[1], {2, 2}, "SAME", {1, 1}); },
      {x, rnd({3, 3, 3, 2}, 12)}, {Shape{-1, 7, 6, -1}, Shape{3, 3, 3, 2}}, Shape{-1, 4, 3, 6});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) {
        return depthwise_conv2d_backprop_input({2, 7, 6, 3}, v[0], v[1], {1, 1}, "VALID", {2, 1});
      },
      {rnd({2, 2, 3, 2}, 13), rnd({2, 5, 5, 6}, 14)}, {Shape{2, 2, 3, 2}, Shape{-1, 5, 5, 6}}, Shape{2, 7, 6, 3});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) {
        return depthwise_conv2d_backprop_filter(v[0], {2, 2, 3, 2}, v[1], {1, 1}, "VALID", {2, 1});
      },
      {x, rnd({2, 5, 5, 6}, 15)}, {Shape{-1, 7, 6, 3}, Shape{-1, -1, -1, 6}}, Shape{2, 2, 3, 2});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return conv2d_transpose(v[0], v[1], {2, 14, 12, 2}, {2, 2}, "SAME"); },
      {x, rnd({3, 3, 2, 3}, 16)}, {Shape{-1, 7, 6, 3}, Shape{3, 3, 2, 3}}, Shape{2, 14, 12, 2});
}

// ---- data_format NCHW (Note [NCHW kernels], devices/cpu/nchw.h) ----

Tensor to_nchw(const Tensor& t) { return transpose(t, {0, 3, 1, 2}); }
Tensor to_nhwc(const Tensor& t) { return transpose(t, {0, 2, 3, 1}); }
std::vector<int64_t> nchw_dims(const Shape& nhwc) { return {nhwc.dim(0), nhwc.dim(3), nhwc.dim(1), nhwc.dim(2)}; }
// A 2-entry {h, w} window in TensorFlow's NCHW form {1, 1, h, w}.
std::vector<int64_t> nchw_window(const std::vector<int64_t>& hw) { return {1, 1, hw[0], hw[1]}; }

TEST(NchwConvTest, EveryConvOpEqualsItsNhwcFormBetweenTransposes) {
  const Tensor x = rnd({2, 7, 6, 3}, 30), f = rnd({3, 2, 3, 4}, 31), fd = rnd({3, 2, 3, 2}, 32);
  for (const Geometry& g : {Geometry{{1, 1}, {1, 1}, "SAME"}, Geometry{{2, 1}, {1, 1}, "VALID"},
                            Geometry{{1, 2}, {2, 1}, "SAME"}, Geometry{{2, 2}, {2, 2}, "VALID"}}) {
    SCOPED_TRACE(absl::StrCat(g.padding, " strides ", g.strides[0], "x", g.strides[1], " dilations ", g.dilations[0],
                              "x", g.dilations[1]));
    const Tensor xn = to_nchw(x);
    const Tensor y = conv2d(x, f, g.strides, g.padding, g.dilations);
    const Tensor yn = conv2d(xn, f, g.strides, g.padding, g.dilations, "NCHW");
    EXPECT_EQ(yn.shape(), Shape(nchw_dims(y.shape())));
    expect_close(to_nhwc(yn), y, 1e-12);
    // TensorFlow's 4-entry windows read in the layout's order.
    expect_close(conv2d(xn, f, nchw_window(g.strides), g.padding, nchw_window(g.dilations), "NCHW"), yn, 0);
    const Tensor dy = rnd(y.shape().as_vector(), 33);
    expect_close(to_nhwc(conv2d_backprop_input(nchw_dims(x.shape()), f, to_nchw(dy), g.strides, g.padding,
                                               g.dilations, "NCHW")),
                 conv2d_backprop_input(x.shape().as_vector(), f, dy, g.strides, g.padding, g.dilations), 1e-12);
    expect_close(conv2d_backprop_filter(xn, f.shape().as_vector(), to_nchw(dy), g.strides, g.padding, g.dilations,
                                        "NCHW"),
                 conv2d_backprop_filter(x, f.shape().as_vector(), dy, g.strides, g.padding, g.dilations), 1e-12);

    const Tensor z = depthwise_conv2d(x, fd, g.strides, g.padding, g.dilations);
    const Tensor zn = depthwise_conv2d(xn, fd, g.strides, g.padding, g.dilations, "NCHW");
    EXPECT_EQ(zn.shape(), Shape(nchw_dims(z.shape())));
    expect_close(to_nhwc(zn), z, 1e-12);
    const Tensor dz = rnd(z.shape().as_vector(), 34);
    expect_close(to_nhwc(depthwise_conv2d_backprop_input(nchw_dims(x.shape()), fd, to_nchw(dz), g.strides, g.padding,
                                                         g.dilations, "NCHW")),
                 depthwise_conv2d_backprop_input(x.shape().as_vector(), fd, dz, g.strides, g.padding, g.dilations),
                 1e-12);
    expect_close(depthwise_conv2d_backprop_filter(xn, fd.shape().as_vector(), to_nchw(dz), g.strides, g.padding,
                                                  g.dilations, "NCHW"),
                 depthwise_conv2d_backprop_filter(x, fd.shape().as_vector(), dz, g.strides, g.padding, g.dilations),
                 1e-12);
  }
  // float32 too, and a transposed convolution back to the NCHW input's shape.
  const Tensor x32 = cast(x, DType::kFloat32), f32 = cast(f, DType::kFloat32);
  const Tensor y32 = conv2d(to_nchw(x32), f32, {2, 2}, "SAME", {1, 1}, "NCHW");
  EXPECT_EQ(y32.dtype(), DType::kFloat32);
  expect_close(to_nhwc(y32), conv2d(x32, f32, {2, 2}, "SAME"), 1e-5);
  const Tensor back = conv2d_transpose(y32, f32, {2, 3, 7, 6}, {2, 2}, "SAME", {1, 1}, "NCHW");
  expect_close(to_nhwc(back), conv2d_transpose(to_nhwc(y32), f32, {2, 7, 6, 3}, {2, 2}, "SAME"), 1e-5);
}

TEST(NchwConvTest, GradientsFollowTheLayout) {
  const Tensor x = rnd({1, 2, 5, 4}, 40), f = rnd({3, 3, 2, 3}, 41), fd = rnd({2, 2, 2, 2}, 42);
  GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  tape.watch(f);
  tape.watch(fd);
  const Tensor y = reduce_sum(square(conv2d(x, f, {1, 2}, "SAME", {1, 1}, "NCHW")));
  const Tensor z = reduce_sum(square(depthwise_conv2d(x, fd, {1, 1}, "VALID", {2, 1}, "NCHW")));
  GradientTape ref(/*persistent=*/true);
  const Tensor xh = to_nhwc(x);
  ref.watch(xh);
  ref.watch(f);
  ref.watch(fd);
  const Tensor yh = reduce_sum(square(conv2d(xh, f, {1, 2}, "SAME")));
  const Tensor zh = reduce_sum(square(depthwise_conv2d(xh, fd, {1, 1}, "VALID", {2, 1})));
  expect_close(y, yh, 1e-12);
  expect_close(z, zh, 1e-12);
  expect_close(to_nhwc(tape.gradient(y, x)), ref.gradient(yh, xh), 1e-12);
  expect_close(tape.gradient(y, f), ref.gradient(yh, f), 1e-12);
  expect_close(to_nhwc(tape.gradient(z, x)), ref.gradient(zh, xh), 1e-12);
  expect_close(tape.gradient(z, fd), ref.gradient(zh, fd), 1e-12);
}

TEST(NchwConvTest, ErrorsNameTheLayout) {
  const Tensor x = rnd({1, 3, 8, 8}, 50), f = rnd({3, 3, 3, 4}, 51);
  EXPECT_THAT(error_of([&] { conv2d(x, f, {1, 1}, "SAME", {1, 1}, "NHCW"); }),
              HasSubstr("[conv2d] data_format must be \"NHWC\" or \"NCHW\", got \"NHCW\""));
  EXPECT_THAT(error_of([&] { conv2d(rnd({3, 8, 8}, 52), f, {1, 1}, "SAME", {1, 1}, "NCHW"); }),
              HasSubstr("[conv2d] 'input' must have rank 4 [batch, channels, height, width] (data_format NCHW), got "
                        "shape [3,8,8]"));
  // NHWC's 4-entry strides are not NCHW's.
  EXPECT_THAT(error_of([&] { conv2d(x, f, {1, 2, 2, 1}, "SAME", {1, 1}, "NCHW"); }),
              HasSubstr("[conv2d] strides [1,2,2,1] must be 1 in the batch and channel dimensions (NCHW: {1, 1, h, w})"));
  // A channel mismatch names the shape the caller gave and the one it was read as.
  EXPECT_THAT(error_of([&] { conv2d(rnd({1, 8, 8, 3}, 53), f, {1, 1}, "SAME", {1, 1}, "NCHW"); }),
              HasSubstr("has 8 channels but 'filter' [3,3,3,4] expects 3 input channels (data_format NCHW: 'input' "
                        "[1,8,8,3] read as NHWC [1,8,3,8])"));
  EXPECT_THAT(error_of([&] {
                depthwise_conv2d_backprop_input({1, 3, 8, 8}, rnd({3, 3, 3, 1}, 54), rnd({1, 8, 8, 3}, 55), {1, 1},
                                                "SAME", {1, 1}, "NCHW");
              }),
              HasSubstr("[depthwise_conv2d_backprop_input] 'out_backprop' has shape [1,8,8,3] but depthwise_conv2d of "
                        "input [1,3,8,8]"));
}

TEST(NchwConvTest, TracedAndSessionRunsMatchEagerAndTheGraphDefSaysNchw) {
  const Tensor x = rnd({2, 3, 7, 6}, 60);
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return conv2d(v[0], v[1], {2, 1}, "SAME", {1, 1}, "NCHW"); },
      {x, rnd({3, 3, 3, 4}, 61)}, {Shape{-1, 3, -1, -1}, Shape{3, 3, 3, 4}}, Shape{-1, 4, -1, -1});
  expect_same_in_every_context(
      [](const std::vector<Tensor>& v) { return depthwise_conv2d(v[0], v[1], {1, 1}, "VALID", {2, 2}, "NCHW"); },
      {x, rnd({2, 2, 3, 2}, 62)}, {Shape{-1, 3, 7, 6}, Shape{2, 2, 3, 2}}, Shape{-1, 6, 5, 4});
  Graph g;
  {
    auto scope = g.as_default();
    conv2d(placeholder(DType::kFloat32, Shape{-1, 3, 8, 8}, "x"), constant(zeros({3, 3, 3, 4})), {2, 2}, "SAME",
           {1, 1}, "NCHW");
  }
  const std::string text = graph_def_to_text(to_graph_def(g));
  EXPECT_THAT(text, HasSubstr("s: \"NCHW\""));
  EXPECT_THAT(text, HasSubstr("key: \"strides\"\n    value {\n      list {\n        i: 1\n        i: 1\n        i: 2\n"
                              "        i: 2\n"));
  EXPECT_THAT(text, Not(HasSubstr("Transpose")));
  Graph h = graph_from_graph_def(to_graph_def(g));
  EXPECT_EQ(h.get_tensor_by_name("Conv2D:0").shape(), (Shape{-1, 4, 4, 4}));
}

}  // namespace
}  // namespace tapeflow
