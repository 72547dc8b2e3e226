#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "core/errors.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/where.h"
#include "graph/graph_def.h"
#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(WhereTest, SelectsWithBroadcastingAndWeakScalar) {
  Tensor x = {{1.f, -2.f}, {-3.f, 4.f}};
  Tensor r = where(greater(x, 0), x, 0.5f);
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_THAT(r.to_vector<float>(), ElementsAre(1.f, 0.5f, 0.5f, 4.f));
  // A [2,1] condition against [1,3] values gives [2,3].
  Tensor c = {{true}, {false}};
  Tensor a = {{1, 2, 3}};
  Tensor b = {{7, 8, 9}};
  Tensor s = where(c, a, b);
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  EXPECT_THAT(s.to_vector<int32_t>(), ElementsAre(1, 2, 3, 7, 8, 9));
}

// Every row loop of the kernel (both branches full, either one a scalar, a broadcast row) on a
// tensor large enough to be split over the intra-op pool, against the rule element by element.
TEST(WhereTest, LargeTensorsTakeEveryRowLoop) {
  const int64_t rows = 96, cols = 300;
  std::vector<float> xs(rows * cols), ys(rows * cols);
  std::vector<uint8_t> cs(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    xs[i] = static_cast<float>(i);
    ys[i] = -static_cast<float>(i);
    cs[i] = (i * 7) % 3 == 0;
  }
  const Tensor x(xs, Shape{rows, cols}), y(ys, Shape{rows, cols});
  const Tensor c = cast(Tensor(std::vector<uint8_t>(cs), Shape{rows, cols}), DType::kBool);
  const Tensor row = Tensor(std::vector<float>(xs.begin(), xs.begin() + cols), Shape{cols});
  struct Case { const char* name; Tensor x, y; std::function<float(int64_t)> x_at, y_at; };
  const Case cases[] = {
      {"both full", x, y, [&](int64_t i) { return xs[i]; }, [&](int64_t i) { return ys[i]; }},
      {"y scalar", x, Tensor(0.5f), [&](int64_t i) { return xs[i]; }, [](int64_t) { return 0.5f; }},
      {"x scalar", Tensor(0.5f), y, [](int64_t) { return 0.5f; }, [&](int64_t i) { return ys[i]; }},
      {"x a row", row, y, [&](int64_t i) { return xs[i % cols]; }, [&](int64_t i) { return ys[i]; }},
  };
  for (const Case& k : cases) {
    const std::vector<float> got = where(c, k.x, k.y).to_vector<float>();
    ASSERT_EQ(got.size(), xs.size()) << k.name;
    for (int64_t i = 0; i < rows * cols; ++i)
      ASSERT_EQ(got[i], cs[i] ? k.x_at(i) : k.y_at(i)) << k.name << " at " << i;
  }
}

TEST(WhereTest, Errors) {
  Tensor x = {1.f, 2.f};
  try {
    where(Tensor{1, 0}, x, x);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[where] input 'condition' has dtype int32"));
  }
  try {
    where(Tensor{true, false, true}, x, x);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[where] input 'condition' [3]"));
  }
  EXPECT_THROW(where(Tensor{true, false}, x, Tensor{1, 2}), InvalidArgumentError);
}

TEST(CastTest, ConvertsEveryDirection) {
  EXPECT_THAT(cast(Tensor{1.7f, -1.7f, 0.f}, DType::kInt32).to_vector<int32_t>(), ElementsAre(1, -1, 0));
  EXPECT_THAT(cast(Tensor{0.f, 2.f}, DType::kBool).to_vector<bool>(), ElementsAre(false, true));
  EXPECT_THAT(cast(Tensor{true, false}, DType::kFloat64).to_vector<double>(), ElementsAre(1.0, 0.0));
  Tensor i64 = cast(Tensor{1, 2}, DType::kInt64);
  EXPECT_EQ(i64.dtype(), DType::kInt64);
  EXPECT_THAT(i64.to_vector<int64_t>(), ElementsAre(1, 2));
  EXPECT_THAT(cast(Tensor{uint8_t{255}}, DType::kFloat32).to_vector<float>(), ElementsAre(255.f));
}

// Note [Float to integer casts]: NaN -> 0, below the range -> lowest, above it -> highest, in
// range -> truncated. The asan preset builds with -fsanitize=float-cast-overflow, so a kernel
// that converted without the bounds check would stop this test there.
TEST(CastTest, FloatToIntegerSaturatesAtTheLimits) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor f = {nan, inf, -inf, 1e30f, -1e30f, 2147483648.f, -2147483648.f, 2147483520.f, -0.9f};
  EXPECT_THAT(cast(f, DType::kInt32).to_vector<int32_t>(),
              ElementsAre(0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2147483520, 0));
  EXPECT_THAT(cast(f, DType::kUInt8).to_vector<uint8_t>(), ElementsAre(0, 255, 0, 255, 0, 255, 0, 255, 0));
  EXPECT_THAT(cast(Tensor{255.9f, 256.f, -1.f}, DType::kUInt8).to_vector<uint8_t>(), ElementsAre(255, 255, 0));
  EXPECT_THAT(cast(Tensor{-2.7f, 2.7f, -0.5f}, DType::kInt32).to_vector<int32_t>(), ElementsAre(-2, 2, 0));  // truncated
  // 2^63 is the first double above int64's range; the double below it converts exactly.
  const Tensor d = {9223372036854775808.0, 9223372036854774784.0, -9223372036854775808.0, -1e300, 1e300, 9.3e18};
  EXPECT_THAT(cast(d, DType::kInt64).to_vector<int64_t>(),
              ElementsAre(INT64_MAX, int64_t{9223372036854774784}, INT64_MIN, INT64_MIN, INT64_MAX, INT64_MAX));
  EXPECT_EQ(cast(f, DType::kInt64).to_vector<int64_t>()[5], int64_t{2147483648});  // fits int64: exact
}

#if defined(TAPEFLOW_SANITIZE_BUILD)
// The sanitizer sees the class of bug the saturation avoids: a plain out-of-range conversion.
TEST(CastTest, SanitizerBuildsReportAnOutOfRangeFloatConversion) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  volatile double huge = 1e300;
  EXPECT_DEATH((void)static_cast<int>(huge), "outside the range of representable values");
}
#endif

TEST(BinaryTypesTest, MixedDTypesAreRejectedWithBothNamed) {
  try {
    add(Tensor{1.f}, Tensor{1});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[add] inputs 'x' and 'y' must have the same dtype, got float32 and int32"));
  }
}

TEST(BinaryTypesTest, WeakScalarThatDoesNotFitIsRejected) {
  try {
    add(Tensor{1, 2}, 2.5);
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[add] the scalar 2.5 cannot be converted to int32"));
  }
  EXPECT_THAT(add(Tensor{1, 2}, 2.0).to_vector<int32_t>(), ElementsAre(3, 4));
  EXPECT_THROW(add(Tensor{uint8_t{1}}, -1), InvalidArgumentError);
}

// where(condition) with one argument: TensorFlow's Where, whose row count only the kernel
// knows (Note [Data-dependent output shapes]), eagerly and in a Session.
TEST(WhereCoordinatesTest, CoordinatesOfTrueElements) {
  const Tensor c = where(Tensor{{true, false, true}, {false, false, true}});
  EXPECT_EQ(c.dtype(), DType::kInt64);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_THAT(c.to_vector<int64_t>(), ElementsAre(0, 0, 0, 2, 1, 2));
  EXPECT_THAT(where(Tensor{0.0, -1.5, 0.0, 2.0}).to_vector<int64_t>(), ElementsAre(1, 3));  // nonzero numbers
  EXPECT_EQ(where(Tensor{false, false}).shape(), (Shape{0, 1}));
  EXPECT_EQ(where(Tensor(true)).shape(), (Shape{1, 0}));  // a scalar: one row of no coordinates
  EXPECT_EQ(where(Tensor(0)).shape(), (Shape{0, 0}));
  // The result feeds later ops like any tensor.
  EXPECT_EQ(reduce_sum(where(greater(Tensor{3, 1, 4, 1, 5}, 2))).item<int64_t>(), 0 + 2 + 4);
  try {
    where(Tensor());
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[where]"));
    EXPECT_THAT(e.what(), HasSubstr("where_cast_test.cc:"));
  }
}

TEST(WhereCoordinatesTest, InAGraphTheRowCountIsUnknownUntilTheRun) {
  Graph g;
  Tensor x, idx, total;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1}, "x");
    idx = where(greater(x, 0.f));
    EXPECT_EQ(idx.shape(), (Shape{-1, 1}));
    total = reduce_sum(idx);
  }
  Session sess(g);
  EXPECT_THAT(sess.run(idx, {{x, Tensor{1.f, -2.f, 3.f}}}).to_vector<int64_t>(), ElementsAre(0, 2));
  EXPECT_EQ(sess.run(idx, {{x, Tensor{-1.f, -2.f}}}).shape(), (Shape{0, 1}));
  EXPECT_EQ(sess.run(total, {{x, Tensor{5.f, 5.f, 5.f, 5.f}}}).item<int64_t>(), 6);
  bool found = false;
  const GraphDef def = to_graph_def(g);
  for (const auto& n : def.node()) found |= n.op() == "Where";
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace tapeflow
