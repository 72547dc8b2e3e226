#include "eager/ops/conv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cpu/blas.h"
#include "devices/cpu/thread_pool.h"
#include "eager/op_def.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/random.h"
#include "eager/ops/reduction.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

// ---- a naive reference: the definition, loop by loop, accumulated in double ----

struct Conv {
  int64_t n, h, w, cin, kh, kw, cout, sh, sw;
  bool same;
  int64_t oh() const { return same ? (h + sh - 1) / sh : (h - kh + sh) / sh; }
  int64_t ow() const { return same ? (w + sw - 1) / sw : (w - kw + sw) / sw; }
  int64_t pad_top() const { return same ? std::max<int64_t>((oh() - 1) * sh + kh - h, 0) / 2 : 0; }
  int64_t pad_left() const { return same ? std::max<int64_t>((ow() - 1) * sw + kw - w, 0) / 2 : 0; }
  std::vector<int64_t> input_shape() const { return {n, h, w, cin}; }
  std::vector<int64_t> filter_shape() const { return {kh, kw, cin, cout}; }
  std::vector<int64_t> output_shape() const { return {n, oh(), ow(), cout}; }
  std::vector<int64_t> strides() const { return {sh, sw}; }
  const char* padding() const { return same ? "SAME" : "VALID"; }

  // Calls fn(input index, filter index, output index) for every multiply-add of the conv.
  template <typename Fn> void for_each_tap(Fn fn) const {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oy = 0; oy < oh(); ++oy)
        for (int64_t ox = 0; ox < ow(); ++ox)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t y = oy * sh - pad_top() + i, x = ox * sw - pad_left() + j;
              if (y < 0 || y >= h || x < 0 || x >= w) continue;
              for (int64_t ci = 0; ci < cin; ++ci)
                for (int64_t co = 0; co < cout; ++co)
                  fn(((b * h + y) * w + x) * cin + ci, ((i * kw + j) * cin + ci) * cout + co,
                     ((b * oh() + oy) * ow() + ox) * cout + co);
            }
  }
  std::vector<double> forward(const std::vector<double>& x, const std::vector<double>& f) const {
    std::vector<double> y(n * oh() * ow() * cout, 0.0);
    for_each_tap([&](int64_t xi, int64_t fi, int64_t yi) { y[yi] += x[xi] * f[fi]; });
    return y;
  }
  std::vector<double> backprop_input(const std::vector<double>& f, const std::vector<double>& dy) const {
    std::vector<double> dx(n * h * w * cin, 0.0);
    for_each_tap([&](int64_t xi, int64_t fi, int64_t yi) { dx[xi] += f[fi] * dy[yi]; });
    return dx;
  }
  std::vector<double> backprop_filter(const std::vector<double>& x, const std::vector<double>& dy) const {
    std::vector<double> df(kh * kw * cin * cout, 0.0);
    for_each_tap([&](int64_t xi, int64_t fi, int64_t yi) { df[fi] += x[xi] * dy[yi]; });
    return df;
  }
};

std::vector<double> random_values(int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& e : v) e = dist(gen);
  return v;
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// A tensor of dtype T holding values (converted).
template <typename T> Tensor make(const std::vector<double>& values, const std::vector<int64_t>& dims) {
  return Tensor(std::vector<T>(values.begin(), values.end()), Shape(dims));
}

template <typename T> std::vector<double> values_of(const Tensor& t) {
  const std::vector<T> v = t.to_vector<T>();
  return std::vector<double>(v.begin(), v.end());
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << what << " at " << i;
}

std::string describe(const Conv& c) {
  return absl::StrCat("n", c.n, " ", c.h, "x", c.w, "x", c.cin, " k", c.kh, "x", c.kw, "->", c.cout, " s", c.sh, ",",
                      c.sw, " ", c.padding());
}

// Odd sizes, strides 1-3, both paddings, the copy-free paths (1x1 at stride 1, whole-image
// filters) and 1x1 at stride 2, which must not take them.
const std::vector<Conv> kCases = {
    {2, 5, 5, 3, 3, 3, 4, 1, 1, true},   {2, 5, 5, 3, 3, 3, 4, 1, 1, false}, {1, 7, 6, 2, 3, 2, 3, 2, 2, true},
    {1, 7, 6, 2, 3, 2, 3, 2, 2, false},  {3, 9, 7, 1, 5, 5, 2, 2, 3, true},  {3, 9, 7, 1, 5, 5, 2, 3, 2, false},
    {2, 4, 4, 5, 1, 1, 3, 1, 1, true},   {2, 4, 4, 5, 1, 1, 3, 1, 1, false}, {2, 5, 5, 3, 1, 1, 2, 2, 2, true},
    {2, 5, 3, 2, 5, 3, 4, 1, 1, false},  {2, 5, 3, 2, 5, 3, 4, 2, 2, true},  {1, 1, 1, 3, 3, 3, 2, 1, 1, true},
    {1, 6, 6, 2, 4, 4, 2, 1, 1, true},   {2, 3, 8, 2, 2, 4, 1, 1, 3, true},
};

TEST(Conv2DTest, HandComputedValues) {
  const Tensor x = make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  const Tensor ones = make<float>({1, 1, 1, 1}, {2, 2, 1, 1});
  // Sums of 2x2 windows; SAME on 3x3 with a 2x2 filter pads one zero row/column after.
  EXPECT_EQ(conv2d(x, ones, {1, 1}, "VALID").to_vector<float>(), (std::vector<float>{12, 16, 24, 28}));
  EXPECT_EQ(conv2d(x, ones, {1, 1}, "SAME").to_vector<float>(),
            (std::vector<float>{12, 16, 9, 24, 28, 15, 15, 17, 9}));
  EXPECT_EQ(conv2d(x, ones, {2, 2}, "SAME").to_vector<float>(), (std::vector<float>{12, 9, 15, 9}));
  EXPECT_EQ(conv2d(x, ones, {1, 2, 2, 1}, "VALID").to_vector<float>(), (std::vector<float>{12}));
  // SAME with a 3x3 filter pads one on every side: the center tap of a cross filter.
  const Tensor cross = make<float>({0, 1, 0, 1, 1, 1, 0, 1, 0}, {3, 3, 1, 1});
  EXPECT_EQ(conv2d(x, cross, {1, 1}, "SAME").to_vector<float>(),
            (std::vector<float>{7, 11, 11, 17, 25, 23, 19, 29, 23}));
  // Channels: out[co] = sum_ci x[ci] * f[ci, co].
  const Tensor xc = make<double>({1, 2}, {1, 1, 1, 2});
  const Tensor fc = make<double>({1, 2, 3, 4, 5, 6}, {1, 1, 2, 3});
  const Tensor y = conv2d(xc, fc, {1, 1}, "SAME");
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 3}));
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{9, 12, 15}));
}

TEST(Conv2DTest, MatchesNaiveReference) {
  uint32_t seed = 1;
  for (const Conv& c : kCases) {
    const auto x = random_values(product(c.input_shape()), seed++);
    const auto f = random_values(product(c.filter_shape()), seed++);
    const auto dy = random_values(product(c.output_shape()), seed++);
    const std::string what = describe(c);
    // float64: the same sums in another order.
    const Tensor y = conv2d(make<double>(x, c.input_shape()), make<double>(f, c.filter_shape()), c.strides(),
                            c.padding());
    ASSERT_EQ(y.shape(), Shape(c.output_shape())) << what;
    expect_near_all(values_of<double>(y), c.forward(x, f), 1e-12, what);
    expect_near_all(values_of<double>(conv2d_backprop_input(c.input_shape(), make<double>(f, c.filter_shape()),
                                                            make<double>(dy, c.output_shape()), c.strides(),
                                                            c.padding())),
                    c.backprop_input(f, dy), 1e-12, what + " backprop_input");
    expect_near_all(values_of<double>(conv2d_backprop_filter(make<double>(x, c.input_shape()), c.filter_shape(),
                                                             make<double>(dy, c.output_shape()), c.strides(),
                                                             c.padding())),
                    c.backprop_filter(x, dy), 1e-12, what + " backprop_filter");
    // float32.
    const Tensor yf = conv2d(make<float>(x, c.input_shape()), make<float>(f, c.filter_shape()), c.strides(),
                             c.padding());
    EXPECT_EQ(yf.dtype(), DType::kFloat32);
    expect_near_all(values_of<float>(yf), c.forward(x, f), 1e-5, what + " float32");
    expect_near_all(values_of<float>(conv2d_backprop_input(c.input_shape(), make<float>(f, c.filter_shape()),
                                                           make<float>(dy, c.output_shape()), c.strides(),
                                                           c.padding())),
                    c.backprop_input(f, dy), 1e-5, what + " float32 backprop_input");
  }
}

// An image whose column matrix passes 1M elements (64x64 pixels x 400) takes chunks of output
// rows (40 rows of 64x400 columns per chunk, so chunk edges fall inside images) instead of one
// image at a time; and a 1x1 conv longer than one direct-GEMM chunk.
TEST(Conv2DTest, ChunkedColumnsMatchReference) {
  uint32_t seed = 11;
  for (const Conv& c : {Conv{2, 64, 64, 16, 5, 5, 8, 1, 1, true}, Conv{5, 64, 64, 64, 1, 1, 2, 1, 1, true}}) {
    const auto x = random_values(product(c.input_shape()), seed++);
    const auto f = random_values(product(c.filter_shape()), seed++);
    const auto dy = random_values(product(c.output_shape()), seed++);
    const Tensor xt = make<double>(x, c.input_shape()), ft = make<double>(f, c.filter_shape());
    const Tensor dyt = make<double>(dy, c.output_shape());
    const std::string what = describe(c);
    expect_near_all(values_of<double>(conv2d(xt, ft, c.strides(), c.padding())), c.forward(x, f), 1e-10, what);
    expect_near_all(values_of<double>(conv2d_backprop_input(c.input_shape(), ft, dyt, c.strides(), c.padding())),
                    c.backprop_input(f, dy), 1e-10, what + " backprop_input");
    expect_near_all(values_of<double>(conv2d_backprop_filter(xt, c.filter_shape(), dyt, c.strides(), c.padding())),
                    c.backprop_filter(x, dy), 1e-9, what + " backprop_filter");
  }
}

// Note [Per-image convolutions]: each pool thread takes a block of images and calls OpenBLAS
// single-threaded, whether or not OpenBLAS threads products of its own (set_blas_threads); the
// filter gradient's per-block partial sums are added in a fixed order.
TEST(Conv2DTest, PerImagePathMatchesReferenceWithEitherBlasThreading) {
  const Conv c{5, 9, 8, 8, 3, 3, 16, 1, 1, true};  // K = 72: past the small-K loops
  const auto x = random_values(product(c.input_shape()), 400);
  const auto f = random_values(product(c.filter_shape()), 401);
  const auto dy = random_values(product(c.output_shape()), 402);
  for (int blas : {1, 2}) {
    cpu::set_blas_threads(blas);
    const std::string what = absl::StrCat(describe(c), ", OpenBLAS threads ", blas);
    const Tensor xt = make<float>(x, c.input_shape()), ft = make<float>(f, c.filter_shape());
    const Tensor dyt = make<float>(dy, c.output_shape());
    expect_near_all(values_of<float>(conv2d(xt, ft, c.strides(), c.padding())), c.forward(x, f), 1e-4, what);
    expect_near_all(values_of<float>(conv2d_backprop_input(c.input_shape(), ft, dyt, c.strides(), c.padding())),
                    c.backprop_input(f, dy), 1e-4, what + " backprop_input");
    const Tensor df = conv2d_backprop_filter(xt, c.filter_shape(), dyt, c.strides(), c.padding());
    expect_near_all(values_of<float>(df), c.backprop_filter(x, dy), 1e-3, what + " backprop_filter");
    EXPECT_EQ(conv2d_backprop_filter(xt, c.filter_shape(), dyt, c.strides(), c.padding()).to_vector<float>(),
              df.to_vector<float>())
        << what;
    EXPECT_EQ(cpu::blas_threads(), blas) << "the kernels give OpenBLAS its thread count back";
    const Tensor dfd = conv2d_backprop_filter(make<double>(x, c.input_shape()), c.filter_shape(),
                                              make<double>(dy, c.output_shape()), c.strides(), c.padding());
    expect_near_all(values_of<double>(dfd), c.backprop_filter(x, dy), 1e-12, what + " float64 backprop_filter");
  }
  cpu::set_blas_threads(1);
}

// Float convolutions with at most 32 taps per output take register-blocked loops instead of
// OpenBLAS (Note [Small-K convolutions]): blocks of 4 pixels x 32 channels, with tails in both,
// taps in fours with a tail, and 256-pixel chunks whose edges fall inside images. The tutorial's
// first layer (28x28x1, 5x5 -> 32, SAME) is the first case.
TEST(Conv2DTest, SmallKFloatPathsMatchReference) {
  const std::vector<Conv> cases = {
      {3, 28, 28, 1, 5, 5, 32, 1, 1, true},  {2, 13, 11, 3, 3, 3, 64, 1, 1, true},
      {2, 13, 11, 3, 3, 3, 40, 2, 1, false}, {1, 9, 30, 2, 2, 3, 33, 1, 2, true},
      {2, 7, 7, 4, 2, 2, 31, 1, 1, false},   {1, 5, 5, 2, 4, 4, 32, 3, 3, true},
  };
  uint32_t seed = 300;
  for (const Conv& c : cases) {
    ASSERT_LE(c.kh * c.kw * c.cin, 32);
    const auto x = random_values(product(c.input_shape()), seed++);
    const auto f = random_values(product(c.filter_shape()), seed++);
    const auto dy = random_values(product(c.output_shape()), seed++);
    const Tensor xt = make<float>(x, c.input_shape()), ft = make<float>(f, c.filter_shape());
    const Tensor dyt = make<float>(dy, c.output_shape());
    const std::string what = describe(c);
    const Tensor y = conv2d(xt, ft, c.strides(), c.padding());
    EXPECT_EQ(y.dtype(), DType::kFloat32);
    ASSERT_EQ(y.shape(), Shape(c.output_shape())) << what;
    expect_near_all(values_of<float>(y), c.forward(x, f), 1e-5, what);
    // The filter's gradient sums over every pixel of the batch (up to ~2,400 terms here).
    const Tensor df = conv2d_backprop_filter(xt, c.filter_shape(), dyt, c.strides(), c.padding());
    ASSERT_EQ(df.shape(), Shape(c.filter_shape())) << what;
    expect_near_all(values_of<float>(df), c.backprop_filter(x, dy), 2e-4, what + " backprop_filter");
    // Deterministic: the partial sums of the pool's blocks are added in a fixed order.
    EXPECT_EQ(conv2d_backprop_filter(xt, c.filter_shape(), dyt, c.strides(), c.padding()).to_vector<float>(),
              df.to_vector<float>())
        << what;
  }
}

// The backprop ops are the derivatives of L(x, f) = sum(conv2d(x, f) * g): check them against
// central differences of L computed with conv2d itself, in float64.
TEST(Conv2DTest, BackpropMatchesFiniteDifferences) {
  const std::vector<Conv> cases = {{2, 5, 4, 2, 3, 2, 3, 2, 1, true},
                                   {2, 5, 4, 2, 3, 2, 3, 1, 2, false},
                                   {1, 4, 4, 3, 1, 1, 2, 1, 1, true},
                                   {1, 6, 5, 1, 2, 3, 2, 3, 2, true}};
  uint32_t seed = 100;
  for (const Conv& c : cases) {
    const auto x = random_values(product(c.input_shape()), seed++);
    const auto f = random_values(product(c.filter_shape()), seed++);
    const auto g = random_values(product(c.output_shape()), seed++);
    const Tensor gt = make<double>(g, c.output_shape());
    auto loss = [&](const std::vector<double>& xv, const std::vector<double>& fv) {
      const Tensor y = conv2d(make<double>(xv, c.input_shape()), make<double>(fv, c.filter_shape()), c.strides(),
                              c.padding());
      return reduce_sum(y * gt).item<double>();
    };
    const double eps = 1e-4;  // L is linear in x and in f: central differences are exact but for rounding
    const auto dx = values_of<double>(
        conv2d_backprop_input(c.input_shape(), make<double>(f, c.filter_shape()), gt, c.strides(), c.padding()));
    for (size_t i = 0; i < x.size(); ++i) {
      auto hi = x, lo = x;
      hi[i] += eps, lo[i] -= eps;
      ASSERT_NEAR(dx[i], (loss(hi, f) - loss(lo, f)) / (2 * eps), 1e-8) << describe(c) << " dx " << i;
    }
    const auto df = values_of<double>(
        conv2d_backprop_filter(make<double>(x, c.input_shape()), c.filter_shape(), gt, c.strides(), c.padding()));
    for (size_t i = 0; i < f.size(); ++i) {
      auto hi = f, lo = f;
      hi[i] += eps, lo[i] -= eps;
      ASSERT_NEAR(df[i], (loss(x, hi) - loss(x, lo)) / (2 * eps), 1e-8) << describe(c) << " df " << i;
    }
  }
}

TEST(Conv2DTest, OutputShapes) {
  const Tensor x = zeros({2, 7, 7, 3});
  const Tensor f = zeros({3, 3, 3, 5});
  EXPECT_EQ(conv2d(x, f, {1, 1}, "VALID").shape(), (Shape{2, 5, 5, 5}));
  EXPECT_EQ(conv2d(x, f, {2, 2}, "VALID").shape(), (Shape{2, 3, 3, 5}));
  EXPECT_EQ(conv2d(x, f, {1, 1}, "SAME").shape(), (Shape{2, 7, 7, 5}));
  EXPECT_EQ(conv2d(x, f, {2, 2}, "SAME").shape(), (Shape{2, 4, 4, 5}));
  EXPECT_EQ(conv2d(x, f, {1, 3, 2, 1}, "SAME").shape(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(conv2d(zeros({1, 8, 6, 3}), zeros({4, 2, 3, 1}), {3, 3}, "VALID").shape(), (Shape{1, 2, 2, 1}));
  // Empty batch and zero channels.
  EXPECT_EQ(conv2d(zeros({0, 7, 7, 3}), f, {1, 1}, "SAME").shape(), (Shape{0, 7, 7, 5}));
  const Tensor no_channels = conv2d(zeros({1, 3, 3, 0}), zeros({2, 2, 0, 2}), {1, 1}, "VALID");
  EXPECT_EQ(no_channels.to_vector<float>(), std::vector<float>(8, 0.f));
  EXPECT_EQ(conv2d_backprop_filter(zeros({0, 4, 4, 2}), {3, 3, 2, 2}, zeros({0, 4, 4, 2}), {1, 1}, "SAME")
                .to_vector<float>(),
            std::vector<float>(36, 0.f));
}

// The shape function accepts unknown dims (graphs): they stay unknown where they matter.
TEST(Conv2DTest, ShapeFunctionWithUnknownDims) {
  const OpDef* op = OpRegistry::global().find("Conv2D");
  ASSERT_NE(op, nullptr);
  auto infer = [&](Shape input, Shape filter, const char* padding) {
    const TensorSpec specs[2] = {{DType::kFloat32, input}, {DType::kFloat32, filter}};
    const AttrMap attrs{{"strides", std::vector<int64_t>{2, 2}}, {"padding", std::string(padding)}};
    return op->infer(InferenceContext{"conv2d", specs, attrs});
  };
  EXPECT_EQ((*infer({-1, 28, 28, 1}, {5, 5, 1, 32}, "SAME"))[0].shape, (Shape{-1, 14, 14, 32}));
  EXPECT_EQ((*infer({-1, -1, 28, -1}, {5, 5, 1, 32}, "VALID"))[0].shape, (Shape{-1, -1, 12, 32}));
  EXPECT_EQ((*infer({8, 28, 28, 3}, {-1, 5, -1, -1}, "VALID"))[0].shape, (Shape{8, -1, 12, -1}));
  EXPECT_FALSE(infer({-1, 28, 28, 2}, {5, 5, 1, 32}, "SAME").ok());
}

TEST(Conv2DTest, Errors) {
  const Tensor x = zeros({1, 5, 5, 3});
  const Tensor f = zeros({3, 3, 3, 4});
  std::string msg = error_of([&] { conv2d(zeros({5, 5, 3}), f, {1, 1}, "SAME"); });
  EXPECT_THAT(msg, HasSubstr("[conv2d] 'input' must have rank 4"));
  EXPECT_THAT(msg, HasSubstr("[5,5,3]"));
  EXPECT_THAT(error_of([&] { conv2d(x, zeros({3, 3, 3}), {1, 1}, "SAME"); }),
              HasSubstr("[conv2d] 'filter' must have rank 4"));
  msg = error_of([&] { conv2d(x, zeros({3, 3, 2, 4}), {1, 1}, "SAME"); });
  EXPECT_THAT(msg, HasSubstr("[conv2d] 'input' [1,5,5,3] has 3 channels but 'filter' [3,3,2,4] expects 2"));
  EXPECT_THAT(error_of([&] { conv2d(x, f, {1, 1}, "same"); }),
              HasSubstr("[conv2d] padding must be \"SAME\" or \"VALID\", got \"same\""));
  EXPECT_THAT(error_of([&] { conv2d(x, f, {1, 1, 1}, "SAME"); }),
              HasSubstr("[conv2d] strides [1,1,1] must have 2 entries"));
  EXPECT_THAT(error_of([&] { conv2d(x, f, {0, 1}, "SAME"); }), HasSubstr("[conv2d] strides [0,1] must be positive"));
  EXPECT_THAT(error_of([&] { conv2d(x, f, {1, int64_t{1} << 40}, "SAME"); }),
              HasSubstr("must be at most 2147483647"));
  EXPECT_THAT(error_of([&] { conv2d(x, f, {2, 1, 1, 1}, "SAME"); }),
              HasSubstr("[conv2d] strides [2,1,1,1] must be 1 in the batch and channel dimensions"));
  msg = error_of([&] { conv2d(zeros({1, 2, 5, 3}), f, {1, 1}, "VALID"); });
  EXPECT_THAT(msg, HasSubstr("[conv2d] filter window 3x3"));
  EXPECT_THAT(msg, HasSubstr("is larger than input 'input' [1,2,5,3] along its height (3 > 2) with VALID padding"));
  EXPECT_EQ(conv2d(zeros({1, 2, 5, 3}), f, {1, 1}, "SAME").shape(), (Shape{1, 2, 5, 4}));  // fine with SAME
  EXPECT_THAT(error_of([&] { conv2d(x, zeros({3, 3, 3, 4}, DType::kFloat64), {1, 1}, "SAME"); }),
              HasSubstr("[conv2d] 'input' and 'filter' must have the same dtype, got float32 and float64"));
  EXPECT_THAT(error_of([&] { conv2d(zeros({1, 5, 5, 3}, DType::kInt32), f, {1, 1}, "SAME"); }),
              HasSubstr("[conv2d] input 'input' has dtype int32"));
  EXPECT_THAT(error_of([&] { conv2d(x, zeros({0, 3, 3, 4}), {1, 1}, "SAME"); }), HasSubstr("empty window"));

  // The backprop ops check out_backprop against the forward output shape.
  msg = error_of([&] { conv2d_backprop_input({1, 5, 5, 3}, f, zeros({1, 5, 5, 4}), {2, 2}, "SAME"); });
  EXPECT_THAT(msg, HasSubstr("[conv2d_backprop_input] 'out_backprop' has shape [1,5,5,4] but conv2d of input "
                             "[1,5,5,3] with filter [3,3,3,4], strides [2,2] and SAME padding gives [1,3,3,4]"));
  EXPECT_THAT(error_of([&] { conv2d_backprop_input({1, 5, 5}, f, zeros({1, 5, 5, 4}), {1, 1}, "SAME"); }),
              HasSubstr("[conv2d_backprop_input] input_shape [1,5,5] must have 4 entries"));
  EXPECT_THAT(error_of([&] { conv2d_backprop_input({1, 5, 5, 2}, f, zeros({1, 5, 5, 4}), {1, 1}, "SAME"); }),
              HasSubstr("'input_shape' [1,5,5,2] has 2 channels but 'filter' [3,3,3,4] expects 3"));
  msg = error_of([&] { conv2d_backprop_filter(x, {3, 3, 3, 4}, zeros({1, 3, 3, 5}), {1, 1}, "VALID"); });
  EXPECT_THAT(msg, HasSubstr("[conv2d_backprop_filter] 'out_backprop' has shape [1,3,3,5]"));
  EXPECT_THAT(error_of([&] { conv2d_backprop_filter(x, {3, 3, 3, -1}, zeros({1, 3, 3, 4}), {1, 1}, "VALID"); }),
              HasSubstr("filter_shape [3,3,3,-1] must have known, non-negative dims"));
  EXPECT_THAT(error_of([&] { conv2d_backprop_filter(x, {3, 3, 3, 4}, zeros({1, 3, 3, 4}), {1, 1}, "FULL"); }),
              HasSubstr("[conv2d_backprop_filter] padding"));
}

// Timing on the tutorial CNN's layers (batch 64, SAME): run with
//   ./tests/tapeflow_tests --gtest_also_run_disabled_tests --gtest_filter='*TutorialShapes*'
TEST(Conv2DTest, DISABLED_TimingTutorialShapes) {
  using Clock = std::chrono::steady_clock;
  auto ms_per_call = [](auto fn, int reps) {
    fn();  // warm up
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / reps;
  };
  for (const Conv& c : {Conv{64, 28, 28, 1, 5, 5, 32, 1, 1, true}, Conv{64, 14, 14, 32, 5, 5, 64, 1, 1, true}}) {
    const auto x = random_values(product(c.input_shape()), 1);
    const auto f = random_values(product(c.filter_shape()), 2);
    const auto dy = random_values(product(c.output_shape()), 3);
    const Tensor xt = make<float>(x, c.input_shape()), ft = make<float>(f, c.filter_shape());
    const Tensor dyt = make<float>(dy, c.output_shape());
    const double naive = ms_per_call([&] { c.forward(x, f); }, 1);
    const double gflop = 2.0 * product(c.output_shape()) * c.kh * c.kw * c.cin / 1e9;
    const int threads = intra_op_threads();
    for (int t : {threads, 1}) {
      set_intra_op_threads(t);  // also OpenBLAS's thread count
      const double fwd = ms_per_call([&] { conv2d(xt, ft, c.strides(), c.padding()); }, 20);
      const double bin =
          ms_per_call([&] { conv2d_backprop_input(c.input_shape(), ft, dyt, c.strides(), c.padding()); }, 20);
      const double bfl =
          ms_per_call([&] { conv2d_backprop_filter(xt, c.filter_shape(), dyt, c.strides(), c.padding()); }, 20);
      std::printf("%s, %d thread(s): conv2d %.2f ms (%.1f GFLOP/s), backprop_input %.2f ms, backprop_filter %.2f ms; "
                  "naive forward %.1f ms (%.0fx)\n",
                  describe(c).c_str(), t, fwd, gflop / fwd * 1e3, bin, bfl, naive, naive / fwd);
    }
    set_intra_op_threads(threads);
    expect_near_all(values_of<float>(conv2d(xt, ft, c.strides(), c.padding())), c.forward(x, f), 1e-3, "timing");
  }
}

}  // namespace
}  // namespace tapeflow
