#include "eager/ops/reduction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "core/errors.h"
#include "eager/ops/binary.h"
#include "eager/ops/unary.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

// 0, 1, ..., n-1 as the given dtype and shape.
template <typename T> Tensor iota(const Shape& shape) {
  std::vector<T> v(static_cast<size_t>(shape.num_elements()));
  std::iota(v.begin(), v.end(), T(0));
  return Tensor(v, shape);
}

// The same values as float32, shaped [300, 7, 50].
Tensor cast_for_test(const std::vector<double>& v) {
  return Tensor(std::vector<float>(v.begin(), v.end()), Shape{300, 7, 50});
}

TEST(ReductionTest, SumAllAndPerAxis) {
  Tensor x = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
  Tensor all = reduce_sum(x);
  EXPECT_EQ(all.shape(), Shape{});
  EXPECT_EQ(all.dtype(), DType::kFloat32);
  EXPECT_EQ(all.item<float>(), 21.f);
  EXPECT_EQ(reduce_sum(x, {0}).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(reduce_sum(x, {1}).to_vector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(reduce_sum(x, {-1}).shape(), Shape{2});
  Tensor kept = reduce_sum(x, {-1}, /*keepdims=*/true);
  EXPECT_EQ(kept.shape(), (Shape{2, 1}));
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(reduce_sum(x, Axes::all(), true).shape(), (Shape{1, 1}));
  EXPECT_EQ(reduce_sum(x, {0, 1}).item<float>(), 21.f);
}

TEST(ReductionTest, NonAdjacentAxesAndKeepdims) {
  Tensor x = iota<int32_t>(Shape{2, 3, 4});  // x[i][j][k] = 12i + 4j + k
  EXPECT_EQ(reduce_sum(x, {0, 2}).to_vector<int32_t>(), (std::vector<int32_t>{60, 92, 124}));
  EXPECT_EQ(reduce_sum(x, {0, 1}).to_vector<int32_t>(), (std::vector<int32_t>{60, 66, 72, 78}));
  Tensor mid = reduce_sum(x, {1}, true);
  EXPECT_EQ(mid.shape(), (Shape{2, 1, 4}));
  EXPECT_EQ(mid.to_vector<int32_t>(), (std::vector<int32_t>{12, 15, 18, 21, 48, 51, 54, 57}));
  Tensor outer = reduce_max(x, {0, 2}, true);
  EXPECT_EQ(outer.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(outer.to_vector<int32_t>(), (std::vector<int32_t>{15, 19, 23}));
  EXPECT_EQ(reduce_min(x, {-1}).to_vector<int32_t>(), (std::vector<int32_t>{0, 4, 8, 12, 16, 20}));
  EXPECT_EQ(reduce_sum(x).item<int32_t>(), 276);
}

TEST(ReductionTest, MaxMinProdValuesAndDTypes) {
  Tensor x = {{1.5, -2.0, 3.0}, {4.0, 5.0, -6.0}};
  EXPECT_EQ(reduce_max(x, {1}).to_vector<double>(), (std::vector<double>{3, 5}));
  EXPECT_EQ(reduce_min(x, {0}).to_vector<double>(), (std::vector<double>{1.5, -2, -6}));
  EXPECT_EQ(reduce_prod(x, {1}).to_vector<double>(), (std::vector<double>{-9, -120}));
  EXPECT_EQ(reduce_max(x).dtype(), DType::kFloat64);
  Tensor i64 = Tensor(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(reduce_prod(i64).item<int64_t>(), 720);
  EXPECT_EQ(reduce_prod(i64, {1}).to_vector<int64_t>(), (std::vector<int64_t>{6, 120}));
  Tensor u8 = Tensor(std::vector<uint8_t>{200, 100, 7}, Shape{3});
  EXPECT_EQ(reduce_sum(u8).item<uint8_t>(), 51);  // (200 + 100 + 7) mod 256, as TensorFlow
  EXPECT_EQ(reduce_max(u8).item<uint8_t>(), 200);
  EXPECT_EQ(reduce_min(u8).item<uint8_t>(), 7);
  // Signed overflow wraps rather than being undefined.
  Tensor big = Tensor(std::vector<int32_t>{std::numeric_limits<int32_t>::max(), 1}, Shape{2});
  EXPECT_EQ(reduce_sum(big).item<int32_t>(), std::numeric_limits<int32_t>::min());
}

TEST(ReductionTest, ReducingOnlySizeOneAxesCopies) {
  Tensor x = {{1.f, 2.f, 3.f}};
  Tensor s = reduce_sum(x, {0});
  EXPECT_EQ(s.shape(), Shape{3});
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  Tensor scalar = 4.f;
  EXPECT_EQ(reduce_max(scalar).item<float>(), 4.f);
  EXPECT_EQ(reduce_sum(scalar, Axes::all(), true).shape(), Shape{});
}

TEST(ReductionTest, NaNPropagatesThroughMaxAndMin) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = {1.f, nan, 3.f};
  EXPECT_TRUE(std::isnan(reduce_max(x).item<float>()));
  EXPECT_TRUE(std::isnan(reduce_min(x).item<float>()));
  Tensor cols = {{1.f, 2.f}, {nan, 0.f}, {5.f, 1.f}};
  std::vector<float> m = reduce_max(cols, {0}).to_vector<float>();
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_EQ(m[1], 2.f);
}

TEST(ReductionTest, EmptyAxes) {
  Tensor e = Tensor(std::vector<float>{}, Shape{2, 0});
  EXPECT_EQ(reduce_sum(e, {1}).to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_EQ(reduce_prod(e, {1}).to_vector<float>(), (std::vector<float>{1, 1}));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(reduce_max(e, {1}).to_vector<float>(), (std::vector<float>{-inf, -inf}));
  EXPECT_EQ(reduce_min(e, {1}).to_vector<float>(), (std::vector<float>{inf, inf}));
  EXPECT_EQ(reduce_sum(e, {0}).shape(), Shape{0});  // a kept empty axis: an empty result
  EXPECT_TRUE(std::isnan(reduce_mean(e).item<float>()));

  Tensor ei = Tensor(std::vector<int32_t>{}, Shape{2, 0});
  EXPECT_EQ(reduce_sum(ei, {1}).to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
  std::string msg = error_of([&] { reduce_max(ei, {1}); });
  EXPECT_THAT(msg, HasSubstr("[reduce_max]"));
  EXPECT_THAT(msg, HasSubstr("empty axis 1"));
  EXPECT_THAT(error_of([&] { reduce_min(ei); }), HasSubstr("[reduce_min]"));
  EXPECT_THAT(error_of([&] { reduce_mean(ei); }), HasSubstr("[reduce_mean]"));
  // Reducing a non-empty axis of an empty tensor is fine for integers too.
  EXPECT_EQ(reduce_max(ei, {0}).shape(), Shape{0});
}

TEST(ReductionTest, Mean) {
  Tensor x = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
  EXPECT_FLOAT_EQ(reduce_mean(x).item<float>(), 3.5f);
  EXPECT_EQ(reduce_mean(x, {0}).to_vector<float>(), (std::vector<float>{2.5f, 3.5f, 4.5f}));
  Tensor kept = reduce_mean(x, {1}, true);
  EXPECT_EQ(kept.shape(), (Shape{2, 1}));
  EXPECT_EQ(kept.to_vector<float>(), (std::vector<float>{2, 5}));
  // Integers divide as integers, truncating toward zero (as tf.reduce_mean).
  Tensor i = {{1, 2}, {3, 5}, {-3, 0}};
  Tensor mi = reduce_mean(i, {1});
  EXPECT_EQ(mi.dtype(), DType::kInt32);
  EXPECT_EQ(mi.to_vector<int32_t>(), (std::vector<int32_t>{1, 4, -1}));
  EXPECT_EQ(reduce_mean(Tensor{{1.0, 2.0}}).dtype(), DType::kFloat64);
}

TEST(ReductionTest, AxisErrorsNameAxisAndRank) {
  Tensor x = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
  std::string msg = error_of([&] { reduce_sum(x, {2}); });
  EXPECT_THAT(msg, HasSubstr("[reduce_sum]"));
  EXPECT_THAT(msg, HasSubstr("axis 2"));
  EXPECT_THAT(msg, HasSubstr("rank 2"));
  msg = error_of([&] { reduce_max(x, {-3}); });
  EXPECT_THAT(msg, HasSubstr("[reduce_max]"));
  EXPECT_THAT(msg, HasSubstr("axis -3"));
  msg = error_of([&] { reduce_sum(x, {1, -1}); });
  EXPECT_THAT(msg, HasSubstr("[reduce_sum]"));
  EXPECT_THAT(msg, HasSubstr("axis -1 is repeated"));
  EXPECT_THAT(msg, HasSubstr("rank 2"));
  msg = error_of([&] { reduce_mean(x, {0, 0}); });
  EXPECT_THAT(msg, HasSubstr("[reduce_mean]"));
  EXPECT_THAT(msg, HasSubstr("repeated"));
  EXPECT_THAT(error_of([&] { reduce_mean(x, {5}); }), HasSubstr("[reduce_mean] axis 5"));
  EXPECT_THAT(error_of([&] { reduce_prod(x, {7}); }), HasSubstr("[reduce_prod] axis 7"));
}

TEST(ReductionTest, DTypeErrors) {
  Tensor b = Tensor(std::vector<bool>{true, false}, Shape{2});
  std::string msg = error_of([&] { reduce_sum(b); });
  EXPECT_THAT(msg, HasSubstr("[reduce_sum]"));
  EXPECT_THAT(msg, HasSubstr("bool"));
  Tensor u8 = Tensor(std::vector<uint8_t>{1, 2}, Shape{2});
  EXPECT_THAT(error_of([&] { reduce_prod(u8); }), HasSubstr("[reduce_prod] input 'x' has dtype uint8"));
  EXPECT_THAT(error_of([&] { reduce_mean(u8); }), HasSubstr("[reduce_mean] input 'x' has dtype uint8"));
  EXPECT_THAT(error_of([&] { argmax(b, 0); }), HasSubstr("[argmax]"));
}

// float32 sums of 1e6 elements: a running float sum of 0.1f drifts by ~1% (100958.34); the
// pairwise sum stays within a few ulps of the exact value.
TEST(ReductionTest, LargeFloatSumIsAccurate) {
  const int64_t n = 1000000;
  Tensor x = Tensor(std::vector<float>(n, 0.1f), Shape{n});
  const double exact = static_cast<double>(0.1f) * n;  // 100000.0014901161
  EXPECT_NEAR(reduce_sum(x).item<float>(), exact, exact * 1e-6);

  // Varied values, and the column-wise path (reducing the leading axis of [250000, 4]).
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7919) % 1000) * 0.001f + 0.5f;
  std::vector<double> col_exact(4, 0.0);
  double all_exact = 0;
  for (int64_t i = 0; i < n; ++i) { col_exact[i % 4] += v[i]; all_exact += v[i]; }
  Tensor y = Tensor(v, Shape{n / 4, 4});
  EXPECT_NEAR(reduce_sum(y).item<float>(), all_exact, all_exact * 1e-6);
  std::vector<float> cols = reduce_sum(y, {0}).to_vector<float>();
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(cols[j], col_exact[j], col_exact[j] * 1e-6) << j;
  EXPECT_NEAR(reduce_mean(y).item<float>(), all_exact / n, all_exact / n * 1e-6);
}

// Every subset of axes of a 4-d tensor, against a direct loop (exact in int64).
TEST(ReductionTest, EveryAxisSubsetMatchesReference) {
  const Shape shape{3, 4, 5, 6};
  std::vector<int64_t> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((i * 37) % 101) - 50;
  Tensor x = Tensor(v, shape);
  for (int subset = 0; subset < 16; ++subset) {
    std::vector<int64_t> axes;
    Shape out;
    for (int d = 0; d < 4; ++d) {
      if (subset & (1 << d)) axes.push_back(d);
      else out.push_back(shape.dim(d));
    }
    if (axes.empty()) continue;  // {} means every axis
    std::vector<int64_t> sum(static_cast<size_t>(out.num_elements()), 0);
    std::vector<int64_t> mx(sum.size(), std::numeric_limits<int64_t>::lowest());
    int64_t idx[4];
    for (idx[0] = 0; idx[0] < 3; ++idx[0])
      for (idx[1] = 0; idx[1] < 4; ++idx[1])
        for (idx[2] = 0; idx[2] < 5; ++idx[2])
          for (idx[3] = 0; idx[3] < 6; ++idx[3]) {
            int64_t o = 0;
            for (int d = 0; d < 4; ++d)
              if (!(subset & (1 << d))) o = o * shape.dim(d) + idx[d];
            const int64_t val = v[((idx[0] * 4 + idx[1]) * 5 + idx[2]) * 6 + idx[3]];
            sum[o] += val;
            mx[o] = std::max(mx[o], val);
          }
    Tensor s = reduce_sum(x, axes);
    EXPECT_EQ(s.shape(), out) << subset;
    EXPECT_EQ(s.to_vector<int64_t>(), sum) << subset;
    EXPECT_EQ(reduce_max(x, axes).to_vector<int64_t>(), mx) << subset;
  }
}

// Shapes large enough for the parallel and chunked paths.
TEST(ReductionTest, LargeShapesMatchReference) {
  const int64_t a = 64, b = 300, c = 50;
  std::vector<int32_t> v(static_cast<size_t>(a * b * c));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>((i * 13) % 17);
  Tensor x = Tensor(v, Shape{a, b, c});
  std::vector<int32_t> mid(a * c, 0), ends(b, 0), lead(b * c, 0);
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k) {
        const int32_t val = v[(i * b + j) * c + k];
        mid[i * c + k] += val;
        ends[j] += val;
        lead[j * c + k] += val;
      }
  EXPECT_EQ(reduce_sum(x, {1}).to_vector<int32_t>(), mid);
  EXPECT_EQ(reduce_sum(x, {0, 2}).to_vector<int32_t>(), ends);
  EXPECT_EQ(reduce_sum(x, {0}).to_vector<int32_t>(), lead);
  Tensor f = Tensor(std::vector<double>(v.begin(), v.end()), Shape{a * b * c});
  EXPECT_EQ(reduce_sum(f).item<double>(), std::accumulate(ends.begin(), ends.end(), 0.0));
  EXPECT_EQ(reduce_max(f).item<double>(), 16.0);
}

TEST(ReductionTest, ArgMaxArgMin) {
  Tensor x = {{1.f, 5.f, 5.f}, {7.f, 2.f, 7.f}};
  Tensor am = argmax(x, 1);
  EXPECT_EQ(am.dtype(), DType::kInt64);
  EXPECT_EQ(am.shape(), Shape{2});
  EXPECT_EQ(am.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));  // first index on ties
  EXPECT_EQ(argmax(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(argmin(x, -1).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  Tensor am32 = argmin(x, 0, DType::kInt32);
  EXPECT_EQ(am32.dtype(), DType::kInt32);
  EXPECT_EQ(am32.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0}));
  // The middle axis of a 3-d tensor (column-wise scan): y[i][j][k] = 12i + 4j + k grows with j.
  Tensor y = iota<int32_t>(Shape{2, 3, 4});
  EXPECT_EQ(argmax(y, 1).to_vector<int64_t>(), std::vector<int64_t>(8, 2));
  EXPECT_EQ(argmin(y, 1).shape(), (Shape{2, 4}));
  Tensor u8 = Tensor(std::vector<uint8_t>{3, 9, 9, 1}, Shape{4});
  EXPECT_EQ(argmax(u8, 0).item<int64_t>(), 1);
  EXPECT_EQ(argmin(u8, 0).item<int64_t>(), 3);
}

TEST(ReductionTest, ArgMaxNaNWinsAsNumPy) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = {1.0, nan, 3.0, nan};
  EXPECT_EQ(argmax(x, 0).item<int64_t>(), 1);
  EXPECT_EQ(argmin(x, 0).item<int64_t>(), 1);
  Tensor cols = {{1.0, 2.0}, {nan, 0.0}, {5.0, nan}};
  EXPECT_EQ(argmax(cols, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}

// Long rows are scanned block by block (1024 elements): ties and NaNs across blocks.
TEST(ReductionTest, ArgMaxLongRows) {
  std::vector<float> v(5000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 97);
  v[1500] = v[3000] = 500.f;   // tie in two different blocks: the first wins
  v[2100] = v[4999] = -500.f;
  EXPECT_EQ(argmax(Tensor(v, Shape{5000}), 0).item<int64_t>(), 1500);
  EXPECT_EQ(argmin(Tensor(v, Shape{5000}), 0).item<int64_t>(), 2100);
  v[4000] = v[4500] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(argmax(Tensor(v, Shape{5000}), 0).item<int64_t>(), 4000);
  EXPECT_EQ(argmin(Tensor(v, Shape{5000}), 0).item<int64_t>(), 4000);
}

// Every axis of a 3-d tensor with many ties, against a direct scan, for both output types.
TEST(ReductionTest, ArgMaxMatchesReference) {
  const int64_t dims[3] = {300, 7, 50};
  std::vector<double> v(300 * 7 * 50);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7919) % 23);
  Tensor x = Tensor(v, Shape{300, 7, 50});
  Tensor xf = cast_for_test(v);
  for (int axis = 0; axis < 3; ++axis) {
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= dims[d];
    for (int d = axis + 1; d < 3; ++d) inner *= dims[d];
    std::vector<int64_t> want_max, want_min;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t bmax = 0, bmin = 0;
        for (int64_t r = 1; r < dims[axis]; ++r) {
          const double val = v[(o * dims[axis] + r) * inner + i];
          if (val > v[(o * dims[axis] + bmax) * inner + i]) bmax = r;
          if (val < v[(o * dims[axis] + bmin) * inner + i]) bmin = r;
        }
        want_max.push_back(bmax);
        want_min.push_back(bmin);
      }
    EXPECT_EQ(argmax(x, axis).to_vector<int64_t>(), want_max) << axis;
    EXPECT_EQ(argmin(x, axis).to_vector<int64_t>(), want_min) << axis;
    const std::vector<int32_t> got32 = argmax(xf, axis, DType::kInt32).to_vector<int32_t>();
    EXPECT_EQ(std::vector<int64_t>(got32.begin(), got32.end()), want_max) << axis;
    EXPECT_EQ(argmin(xf, axis).to_vector<int64_t>(), want_min) << axis;
  }
}

TEST(ReductionTest, ArgErrors) {
  Tensor x = {{1.f, 2.f}, {3.f, 4.f}};
  std::string msg = error_of([&] { argmax(x, 2); });
  EXPECT_THAT(msg, HasSubstr("[argmax]"));
  EXPECT_THAT(msg, HasSubstr("axis 2"));
  EXPECT_THAT(msg, HasSubstr("rank 2"));
  EXPECT_THAT(error_of([&] { argmin(x, 0, DType::kFloat32); }), HasSubstr("[argmin] output_type must be int32 or int64"));
  Tensor e = Tensor(std::vector<float>{}, Shape{3, 0});
  EXPECT_THAT(error_of([&] { argmax(e, 1); }), HasSubstr("[argmax] cannot reduce the empty axis 1"));
  EXPECT_EQ(argmax(e, 0).shape(), Shape{0});
  EXPECT_THAT(error_of([&] { argmax(Tensor(1.f), 0); }), HasSubstr("[argmax]"));
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {
// TensorFlow keeps axis=None (every axis) and axis=[] (none) apart; so does Axes.
TEST(ReductionTest, AnEmptyAxisListReducesNoneAndLeavingItOutReducesAll) {
  const Tensor x = {{1.f, 2.f}, {3.f, 4.f}};
  EXPECT_EQ(reduce_sum(x).item<float>(), 10.f);
  const Tensor none = reduce_sum(x, {});
  EXPECT_EQ(none.shape(), (Shape{2, 2}));
  EXPECT_EQ(none.to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  EXPECT_EQ(reduce_max(x, {}).shape(), (Shape{2, 2}));
  EXPECT_EQ(reduce_mean(x, {}).to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  EXPECT_EQ(reduce_prod(x, Axes::all()).item<float>(), 24.f);
  EXPECT_EQ(reduce_min(x, Axes::all(), /*keepdims=*/true).shape(), (Shape{1, 1}));
  const std::vector<int64_t> computed;  // a computed, empty list means none too
  EXPECT_EQ(reduce_sum(x, computed).shape(), (Shape{2, 2}));
}
// reduce_all / reduce_any: TensorFlow's All and Any, with Axes' two spellings.
TEST(ReductionTest, AllAndAnyOverAxes) {
  const Tensor b = {{true, false, true}, {true, true, true}};
  EXPECT_FALSE(reduce_all(b).item<bool>());
  EXPECT_TRUE(reduce_any(b).item<bool>());
  EXPECT_THAT(reduce_all(b, {1}).to_vector<bool>(), ::testing::ElementsAre(false, true));
  EXPECT_THAT(reduce_all(b, {0}).to_vector<bool>(), ::testing::ElementsAre(true, false, true));
  EXPECT_THAT(reduce_any(logical_not(b), {-1}, true).to_vector<bool>(), ::testing::ElementsAre(true, false));
  EXPECT_EQ(reduce_any(b, {-1}, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(reduce_all(b, {}).to_vector<bool>(), b.to_vector<bool>());  // axis=[]: none
  // Empty axes: the identities true and false.
  const Tensor empty = not_equal(Tensor(std::vector<int32_t>{}, Shape{0}), 0);
  EXPECT_TRUE(reduce_all(empty).item<bool>());
  EXPECT_FALSE(reduce_any(empty).item<bool>());
  // Long rows and a strided (column-wise) pass.
  std::vector<int32_t> many(5000, 1);
  many[4321] = 0;
  const Tensor m = not_equal(Tensor(many, Shape{50, 100}), 0);
  EXPECT_FALSE(reduce_all(m).item<bool>());
  EXPECT_EQ(reduce_sum(cast(logical_not(reduce_all(m, {0})), DType::kInt32)).item<int32_t>(), 1);
  EXPECT_EQ(reduce_sum(cast(reduce_any(logical_not(m), {1}), DType::kInt32)).item<int32_t>(), 1);
  EXPECT_THAT(error_of([] { reduce_any(Tensor{1.f}); }),
              ::testing::AllOf(HasSubstr("[reduce_any]"), HasSubstr("float32"), HasSubstr("reduction_test.cc:")));
  EXPECT_THAT(error_of([] { reduce_all(Tensor{true}, {1}); }), HasSubstr("[reduce_all]"));
}

}  // namespace
}  // namespace tapeflow
