#include "eager/ops/pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/op_def.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/reduction.h"
#include "eager/ops/array.h"
#include "eager/ops/random.h"
#include "graph/graph_def.h"
#include "tests/support/contexts.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// ---- a naive reference, straight from the definition ----

struct Pool {
  int64_t n, h, w, c, kh, kw, sh, sw;
  bool same;
  int64_t oh() const { return same ? (h + sh - 1) / sh : (h - kh + sh) / sh; }
  int64_t ow() const { return same ? (w + sw - 1) / sw : (w - kw + sw) / sw; }
  int64_t pad_top() const { return same ? std::max<int64_t>((oh() - 1) * sh + kh - h, 0) / 2 : 0; }
  int64_t pad_left() const { return same ? std::max<int64_t>((ow() - 1) * sw + kw - w, 0) / 2 : 0; }
  std::vector<int64_t> input_shape() const { return {n, h, w, c}; }
  std::vector<int64_t> output_shape() const { return {n, oh(), ow(), c}; }
  std::vector<int64_t> ksize() const { return {kh, kw}; }
  std::vector<int64_t> strides() const { return {sh, sw}; }
  const char* padding() const { return same ? "SAME" : "VALID"; }

  // Input indices of output element o's window (real elements only), in row-major window order.
  std::vector<int64_t> window(int64_t o) const {
    const int64_t ch = o % c, ox = o / c % ow(), oy = o / c / ow() % oh(), b = o / c / ow() / oh();
    std::vector<int64_t> taps;
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        const int64_t y = oy * sh - pad_top() + i, x = ox * sw - pad_left() + j;
        if (y >= 0 && y < h && x >= 0 && x < w) taps.push_back(((b * h + y) * w + x) * c + ch);
      }
    return taps;
  }
  int64_t outputs() const { return n * oh() * ow() * c; }
  std::vector<double> max(const std::vector<double>& x) const {
    std::vector<double> y;
    for (int64_t o = 0; o < outputs(); ++o) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t i : window(o)) m = std::max(m, x[i]);
      y.push_back(m);
    }
    return y;
  }
  std::vector<double> avg(const std::vector<double>& x) const {
    std::vector<double> y;
    for (int64_t o = 0; o < outputs(); ++o) {
      const auto taps = window(o);
      double s = 0;
      for (int64_t i : taps) s += x[i];
      y.push_back(s / static_cast<double>(taps.size()));
    }
    return y;
  }
};

std::string describe(const Pool& p) {
  return absl::StrCat("n", p.n, " ", p.h, "x", p.w, "x", p.c, " k", p.kh, "x", p.kw, " s", p.sh, ",", p.sw, " ",
                      p.padding());
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// Distinct values (a shuffled ramp plus noise), so every window has one clear maximum.
std::vector<double> distinct_values(int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<double> v(static_cast<size_t>(count));
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), gen);
  std::uniform_real_distribution<double> noise(0.0, 0.001);
  for (double& e : v) e = (e - static_cast<double>(count) / 2) * 0.01 + noise(gen);
  return v;
}

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

const std::vector<Pool> kCases = {
    {2, 5, 5, 3, 2, 2, 2, 2, true}, {2, 5, 5, 3, 2, 2, 2, 2, false}, {1, 7, 6, 2, 3, 3, 1, 1, true},
    {1, 7, 6, 2, 3, 3, 2, 1, false}, {3, 4, 9, 1, 3, 2, 3, 2, true},  {2, 3, 3, 40, 3, 3, 1, 1, true},
    {1, 6, 6, 1, 6, 6, 1, 1, false}, {2, 5, 7, 3, 1, 1, 2, 3, true},  {1, 2, 2, 2, 4, 4, 1, 1, true},
};

TEST(PoolTest, HandComputedValues) {
  std::vector<double> ramp16(16);
  std::iota(ramp16.begin(), ramp16.end(), 1.0);
  const Tensor x4 = make<float>(ramp16, {1, 4, 4, 1});
  EXPECT_EQ(max_pool(x4, {2, 2}, {2, 2}, "VALID").to_vector<float>(), (std::vector<float>{6, 8, 14, 16}));
  EXPECT_EQ(avg_pool(x4, {2, 2}, {2, 2}, "VALID").to_vector<float>(), (std::vector<float>{3.5, 5.5, 11.5, 13.5}));

  // SAME on 3x3 with 2x2 windows at stride 2 pads one row/column after: the last windows are
  // clipped and avg_pool divides by their real size (TF), not by 4.
  const Tensor x3 = make<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  EXPECT_EQ(max_pool(x3, {2, 2}, {2, 2}, "SAME").to_vector<double>(), (std::vector<double>{5, 6, 8, 9}));
  EXPECT_EQ(avg_pool(x3, {2, 2}, {2, 2}, "SAME").to_vector<double>(), (std::vector<double>{3, 4.5, 7.5, 9}));
  // 3x3 windows at stride 1, SAME: one padded row/column on every side.
  EXPECT_EQ(avg_pool(x3, {3, 3}, {1, 1}, "SAME").to_vector<double>(),
            (std::vector<double>{3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7}));
  EXPECT_EQ(max_pool(x3, {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME").to_vector<double>(),
            (std::vector<double>{5, 6, 6, 8, 9, 9, 8, 9, 9}));
  // Padding never counts as a 0: the maximum of negative values stays negative.
  const Tensor neg = make<double>({-1, -2, -3, -4, -5, -6, -7, -8, -9}, {1, 3, 3, 1});
  EXPECT_EQ(max_pool(neg, {3, 3}, {1, 1}, "SAME").to_vector<double>(),
            (std::vector<double>{-1, -1, -2, -1, -1, -2, -4, -4, -5}));
  // Channels pool independently.
  const Tensor xc = make<float>({1, 10, 2, 20, 3, 30, 4, 40}, {1, 2, 2, 2});
  EXPECT_EQ(max_pool(xc, {2, 2}, {1, 1}, "VALID").to_vector<float>(), (std::vector<float>{4, 40}));
  EXPECT_EQ(avg_pool(xc, {2, 2}, {1, 1}, "VALID").to_vector<float>(), (std::vector<float>{2.5, 25}));
}

TEST(PoolTest, MatchesNaiveReference) {
  uint32_t seed = 1;
  for (const Pool& p : kCases) {
    const auto x = distinct_values(product(p.input_shape()), seed++);
    const std::string what = describe(p);
    const Tensor xd = make<double>(x, p.input_shape());
    const Tensor m = max_pool(xd, p.ksize(), p.strides(), p.padding());
    ASSERT_EQ(m.shape(), Shape(p.output_shape())) << what;
    EXPECT_EQ(m.dtype(), DType::kFloat64);
    expect_near_all(values_of<double>(m), p.max(x), 0, what + " max");
    expect_near_all(values_of<double>(avg_pool(xd, p.ksize(), p.strides(), p.padding())), p.avg(x), 1e-12,
                    what + " avg");
    const Tensor xf = make<float>(x, p.input_shape());
    const Tensor mf = max_pool(xf, p.ksize(), p.strides(), p.padding());
    EXPECT_EQ(mf.dtype(), DType::kFloat32);
    expect_near_all(values_of<float>(mf), p.max(x), 1e-5, what + " max float32");
    expect_near_all(values_of<float>(avg_pool(xf, p.ksize(), p.strides(), p.padding())), p.avg(x), 1e-5,
                    what + " avg float32");
  }
}

// The grad ops are the derivatives of L(x) = sum(pool(x) * g): compare with central
// differences of L in float64 (inputs without ties, so max pooling is differentiable there).
TEST(PoolTest, GradsMatchFiniteDifferences) {
  uint32_t seed = 50;
  for (const Pool& p : kCases) {
    const auto x = distinct_values(product(p.input_shape()), seed++);
    const auto g = distinct_values(product(p.output_shape()), seed++);
    const Tensor gt = make<double>(g, p.output_shape());
    const Tensor xt = make<double>(x, p.input_shape());
    const std::string what = describe(p);
    const auto dmax = values_of<double>(
        max_pool_grad(xt, max_pool(xt, p.ksize(), p.strides(), p.padding()), gt, p.ksize(), p.strides(), p.padding()));
    const auto davg = values_of<double>(avg_pool_grad(p.input_shape(), gt, p.ksize(), p.strides(), p.padding()));
    auto loss = [&](const std::vector<double>& xv, bool use_max) {
      const Tensor xi = make<double>(xv, p.input_shape());
      const Tensor y = use_max ? max_pool(xi, p.ksize(), p.strides(), p.padding())
                               : avg_pool(xi, p.ksize(), p.strides(), p.padding());
      return reduce_sum(y * gt).item<double>();
    };
    const double eps = 1e-3;  // L is piecewise linear; value gaps (>= 0.009) exceed 2 * eps
    for (size_t i = 0; i < x.size(); ++i) {
      auto hi = x, lo = x;
      hi[i] += eps, lo[i] -= eps;
      ASSERT_NEAR(dmax[i], (loss(hi, true) - loss(lo, true)) / (2 * eps), 1e-8) << what << " max " << i;
      ASSERT_NEAR(davg[i], (loss(hi, false) - loss(lo, false)) / (2 * eps), 1e-8) << what << " avg " << i;
    }
  }
}

TEST(PoolTest, GradRouting) {
  // Ties: the first maximum in row-major window order takes the whole gradient.
  const Tensor flat = zeros({1, 2, 2, 1});
  EXPECT_EQ(max_pool_grad(flat, zeros({1, 1, 1, 1}), make<float>({5}, {1, 1, 1, 1}), {2, 2}, {2, 2}, "VALID")
                .to_vector<float>(),
            (std::vector<float>{5, 0, 0, 0}));
  const Tensor tie = make<float>({1, 3, 3, 2}, {1, 2, 2, 1});
  EXPECT_EQ(max_pool_grad(tie, zeros({1, 1, 1, 1}), make<float>({5}, {1, 1, 1, 1}), {2, 2}, {2, 2}, "VALID")
                .to_vector<float>(),
            (std::vector<float>{0, 5, 0, 0}));
  // Overlapping windows add up where they share a maximum.
  const Tensor row = make<double>({1, 3, 2}, {1, 1, 3, 1});
  const Tensor g = make<double>({1, 10}, {1, 1, 2, 1});
  const Tensor pooled = max_pool(row, {1, 2}, {1, 1}, "VALID");
  EXPECT_EQ(pooled.to_vector<double>(), (std::vector<double>{3, 3}));
  EXPECT_EQ(max_pool_grad(row, pooled, g, {1, 2}, {1, 1}, "VALID").to_vector<double>(),
            (std::vector<double>{0, 11, 0}));
  // avg_pool_grad spreads each gradient over the window's real elements: SAME 2x2 at stride 2
  // on 3x3 has windows of 4, 2, 2 and 1 elements.
  EXPECT_EQ(avg_pool_grad({1, 3, 3, 1}, make<double>({4, 2, 2, 1}, {1, 2, 2, 1}), {2, 2}, {2, 2}, "SAME")
                .to_vector<double>(),
            (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
}

TEST(PoolTest, OutputShapesAndUnknownDims) {
  const Tensor x = zeros({2, 7, 7, 3});
  EXPECT_EQ(max_pool(x, {3, 3}, {1, 1}, "VALID").shape(), (Shape{2, 5, 5, 3}));
  EXPECT_EQ(max_pool(x, {3, 3}, {2, 2}, "VALID").shape(), (Shape{2, 3, 3, 3}));
  EXPECT_EQ(avg_pool(x, {3, 3}, {1, 1}, "SAME").shape(), (Shape{2, 7, 7, 3}));
  EXPECT_EQ(avg_pool(x, {2, 2}, {2, 2}, "SAME").shape(), (Shape{2, 4, 4, 3}));
  EXPECT_EQ(max_pool(x, {1, 2, 3, 1}, {1, 3, 2, 1}, "SAME").shape(), (Shape{2, 3, 4, 3}));
  EXPECT_EQ(max_pool(zeros({0, 4, 4, 1}), {2, 2}, {2, 2}, "SAME").shape(), (Shape{0, 2, 2, 1}));
  EXPECT_EQ(avg_pool_grad({0, 4, 4, 1}, zeros({0, 2, 2, 1}), {2, 2}, {2, 2}, "SAME").shape(), (Shape{0, 4, 4, 1}));
  const OpDef* op = OpRegistry::global().find("MaxPool");
  ASSERT_NE(op, nullptr);
  const TensorSpec specs[1] = {{DType::kFloat32, Shape{-1, 28, -1, 32}}};
  const AttrMap attrs{{"ksize", std::vector<int64_t>{2, 2}},
                      {"strides", std::vector<int64_t>{2, 2}},
                      {"padding", std::string("VALID")}};
  auto out = op->infer(InferenceContext{"max_pool", specs, attrs});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape, (Shape{-1, 14, -1, 32}));
}

TEST(PoolTest, Errors) {
  const Tensor x = zeros({1, 4, 4, 2});
  std::string msg = error_of([] { max_pool(zeros({4, 4, 2}), {2, 2}, {2, 2}, "SAME"); });
  EXPECT_THAT(msg, HasSubstr("[max_pool] 'input' must have rank 4"));
  EXPECT_THAT(msg, HasSubstr("[4,4,2]"));
  EXPECT_THAT(error_of([&] { avg_pool(x, {2, 2}, {2, 2}, "valid"); }),
              HasSubstr("[avg_pool] padding must be \"SAME\" or \"VALID\", got \"valid\""));
  EXPECT_THAT(error_of([&] { max_pool(x, {2, 2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("[max_pool] ksize [2,2,2] must have 2 entries"));
  EXPECT_THAT(error_of([&] { max_pool(x, {0, 2}, {2, 2}, "SAME"); }), HasSubstr("ksize [0,2] must be positive"));
  EXPECT_THAT(error_of([&] { max_pool(x, {2, 2}, {1, 2, -1, 1}, "SAME"); }),
              HasSubstr("strides [1,2,-1,1] must be positive"));
  EXPECT_THAT(error_of([&] { max_pool(x, {1, 2, 2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("ksize [1,2,2,2] must be 1 in the batch and channel dimensions"));
  msg = error_of([&] { avg_pool(x, {2, 5}, {1, 1}, "VALID"); });
  EXPECT_THAT(msg, HasSubstr("[avg_pool] ksize [2,5] is larger than input 'input' [1,4,4,2] along its width (5 > 4)"));
  EXPECT_EQ(avg_pool(x, {2, 5}, {1, 1}, "SAME").shape(), (Shape{1, 4, 4, 2}));  // fine with SAME
  EXPECT_THAT(error_of([] { max_pool(zeros({1, 4, 4, 2}, DType::kInt32), {2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("[max_pool] input 'input' has dtype int32"));
  // Gradient ops check their inputs against the forward op's output shape.
  msg = error_of([&] { max_pool_grad(x, zeros({1, 2, 2, 2}), zeros({1, 3, 3, 2}), {2, 2}, {2, 2}, "SAME"); });
  EXPECT_THAT(msg, HasSubstr("[max_pool_grad] 'grad' has shape [1,3,3,2] but pooling input [1,4,4,2] with ksize "
                             "[2,2], strides [2,2] and SAME padding gives [1,2,2,2]"));
  EXPECT_THAT(error_of([&] { max_pool_grad(x, zeros({1, 4, 4, 2}), zeros({1, 2, 2, 2}), {2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("[max_pool_grad] 'orig_output' has shape [1,4,4,2]"));
  EXPECT_THAT(error_of([&] {
                max_pool_grad(x, zeros({1, 2, 2, 2}), zeros({1, 2, 2, 2}, DType::kFloat64), {2, 2}, {2, 2}, "SAME");
              }),
              HasSubstr("'orig_input' and 'grad' must have the same dtype"));
  EXPECT_THAT(error_of([] { avg_pool_grad({1, 4, 4}, zeros({1, 2, 2, 2}), {2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("[avg_pool_grad] orig_input_shape [1,4,4] must have 4 entries"));
  EXPECT_THAT(error_of([] { avg_pool_grad({1, 4, 4, 2}, zeros({1, 2, 2, 3}), {2, 2}, {2, 2}, "SAME"); }),
              HasSubstr("[avg_pool_grad] 'grad' has shape [1,2,2,3]"));
}

// ---- data_format NCHW (Note [NCHW kernels] in devices/cpu/nchw.h) ----

Tensor to_nchw(const Tensor& t) { return transpose(t, {0, 3, 1, 2}); }
Tensor to_nhwc(const Tensor& t) { return transpose(t, {0, 2, 3, 1}); }

TEST(PoolNchwTest, EqualsNhwcBetweenTransposesForEveryPoolOp) {
  const Tensor x = random_uniform(Shape{2, 7, 6, 3}, -1, 1, DType::kFloat64, 1);
  for (const char* padding : {"SAME", "VALID"}) {
    SCOPED_TRACE(padding);
    const std::vector<int64_t> k{3, 2}, s{2, 1};
    const Tensor ymax = max_pool(x, k, s, padding), yavg = avg_pool(x, k, s, padding);
    const Tensor xn = to_nchw(x);
    expect_close(to_nhwc(max_pool(xn, k, s, padding, "NCHW")), ymax, 0);
    expect_close(to_nhwc(avg_pool(xn, {1, 1, 3, 2}, {1, 1, 2, 1}, padding, "NCHW")), yavg, 1e-15);
    const Tensor g = random_uniform(ymax.shape(), -1, 1, DType::kFloat64, 2);
    expect_close(to_nhwc(max_pool_grad(xn, to_nchw(ymax), to_nchw(g), k, s, padding, "NCHW")),
                 max_pool_grad(x, ymax, g, k, s, padding), 0);
    expect_close(to_nhwc(avg_pool_grad({2, 3, 7, 6}, to_nchw(g), k, s, padding, "NCHW")),
                 avg_pool_grad({2, 7, 6, 3}, g, k, s, padding), 1e-15);
    expect_close(to_nhwc(max_pool_grad_grad(xn, to_nchw(ymax), xn, k, s, padding, "NCHW")),
                 max_pool_grad_grad(x, ymax, x, k, s, padding), 0);
  }
  EXPECT_EQ(max_pool(zeros({2, 3, 8, 8}), {2, 2}, {2, 2}, "VALID", "NCHW").shape(), (Shape{2, 3, 4, 4}));
  EXPECT_THAT(error_of([] { max_pool(zeros({2, 3, 8, 8}), {1, 2, 2, 1}, {1, 1}, "VALID", "NCHW"); }),
              HasSubstr("[max_pool] ksize [1,2,2,1] must be 1 in the batch and channel dimensions (NCHW: {1, 1, h, w})"));
  EXPECT_THAT(error_of([] { avg_pool(zeros({2, 3, 8, 8}), {2, 2}, {1, 1}, "VALID", "NHCW"); }),
              HasSubstr("[avg_pool] data_format must be \"NHWC\" or \"NCHW\", got \"NHCW\""));
  EXPECT_THAT(error_of([] { avg_pool(zeros({3, 8, 8}), {2, 2}, {1, 1}, "VALID", "NCHW"); }),
              HasSubstr("[avg_pool] 'input' must have rank 4 [batch, channels, height, width], got shape [3,8,8]"));
}

TEST(PoolNchwTest, OneNodeInTheGraphDefAndTheSameValuesTracedAndInASession) {
  const Tensor x = random_uniform(Shape{2, 3, 7, 6}, -1, 1, DType::kFloat64, 3);
  expect_same_in_every_context([](const std::vector<Tensor>& v) { return max_pool(v[0], {3, 3}, {2, 2}, "SAME", "NCHW"); },
                               {x}, {Shape{-1, 3, -1, -1}}, Shape{-1, 3, -1, -1});
  expect_same_in_every_context([](const std::vector<Tensor>& v) { return avg_pool(v[0], {2, 3}, {1, 2}, "VALID", "NCHW"); },
                               {x}, {Shape{-1, -1, 7, 6}}, Shape{-1, -1, 6, 2});
  Graph g;
  {
    auto scope = g.as_default();
    max_pool(placeholder(DType::kFloat32, Shape{-1, 3, 8, 8}, "x"), {2, 2}, {2, 2}, "SAME", "NCHW");
  }
  const std::string text = graph_def_to_text(to_graph_def(g));
  EXPECT_THAT(text, HasSubstr("op: \"MaxPool\""));
  EXPECT_THAT(text, HasSubstr("s: \"NCHW\""));
  EXPECT_THAT(text, Not(HasSubstr("Transpose")));
  // Read back: TensorFlow's [1, 1, 2, 2] stays an NCHW window.
  Graph h = graph_from_graph_def(to_graph_def(g));
  Session sess(h);
  const Tensor in = random_uniform(Shape{1, 3, 8, 8}, -1, 1, DType::kFloat32, 4);
  expect_close(sess.run(h.get_tensor_by_name("MaxPool:0"), {{h.get_tensor_by_name("x:0"), in}}),
               max_pool(in, {2, 2}, {2, 2}, "SAME", "NCHW"), 0);
}

}  // namespace
}  // namespace tapeflow
