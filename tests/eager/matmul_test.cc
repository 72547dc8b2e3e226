#include "eager/ops/matmul.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"
#include "devices/cpu/blas.h"
#include "devices/cpu/thread_pool.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

// Deterministic values in [-1, 1) (or small integers) for a tensor of the given shape.
template <typename T> std::vector<T> pattern(int64_t n, int64_t seed) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = (i * 2654435761 + seed * 40503) % 2001;
    if constexpr (std::is_floating_point_v<T>) v[i] = static_cast<T>(r - 1000) / T(1000);
    else v[i] = static_cast<T>(r % 21 - 10);
  }
  return v;
}

// op(A) * op(B) for row-major A, B by the definition, accumulated in double.
template <typename T>
std::vector<double> naive(const std::vector<T>& a, const std::vector<T>& b, int64_t m, int64_t n, int64_t k,
                          bool ta, bool tb) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = ta ? a[p * m + i] : a[i * k + p];
        const double bv = tb ? b[j * k + p] : b[p * n + j];
        s += av * bv;
      }
      c[i * n + j] = s;
    }
  return c;
}

TEST(MatMulTest, SmallValuesAndTransposeFlags) {
  Tensor a = {{1.f, 2.f}, {3.f, 4.f}};
  Tensor b = {{5.f, 6.f}, {7.f, 8.f}};
  Tensor c = matmul(a, b);
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(matmul(a, b, true, false).to_vector<float>(), (std::vector<float>{26, 30, 38, 44}));
  EXPECT_EQ(matmul(a, b, false, true).to_vector<float>(), (std::vector<float>{17, 23, 39, 53}));
  EXPECT_EQ(matmul(a, b, true, true).to_vector<float>(), (std::vector<float>{23, 31, 34, 46}));
}

TEST(MatMulTest, NonSquareAllDTypes) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  EXPECT_EQ(matmul(Tensor{{1, 2, 3}, {4, 5, 6}}, Tensor{{7, 8}, {9, 10}, {11, 12}}).to_vector<int32_t>(),
            (std::vector<int32_t>{58, 64, 139, 154}));
  Tensor a64 = Tensor(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor b64 = Tensor(std::vector<int64_t>{7, 8, 9, 10, 11, 12}, Shape{3, 2});
  Tensor c64 = matmul(a64, b64);
  EXPECT_EQ(c64.dtype(), DType::kInt64);
  EXPECT_EQ(c64.to_vector<int64_t>(), (std::vector<int64_t>{58, 64, 139, 154}));
  Tensor cd = matmul(Tensor{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, Tensor{{7.0, 8.0}, {9.0, 10.0}, {11.0, 12.0}});
  EXPECT_EQ(cd.dtype(), DType::kFloat64);
  EXPECT_EQ(cd.to_vector<double>(), (std::vector<double>{58, 64, 139, 154}));
  // a [3,2] used as a^T: [[1,4],[2,5],[3,6]]^T = [[1,2,3],[4,5,6]].
  EXPECT_EQ(matmul(Tensor{{1, 4}, {2, 5}, {3, 6}}, Tensor{{7, 8}, {9, 10}, {11, 12}}, true).to_vector<int32_t>(),
            (std::vector<int32_t>{58, 64, 139, 154}));
  // Matrix times a column: [2,3] x [3,1].
  Tensor col = matmul(Tensor{{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}, Tensor{{1.f}, {0.f}, {-1.f}});
  EXPECT_EQ(col.shape(), (Shape{2, 1}));
  EXPECT_EQ(col.to_vector<float>(), (std::vector<float>{-2, -2}));
}

TEST(MatMulTest, BatchDimsBroadcast) {
  // [2,1,3,4] x [5,4,2] -> [2,5,3,2]: a's batch entry i pairs with each of b's five matrices.
  const std::vector<float> av = pattern<float>(2 * 3 * 4, 1), bv = pattern<float>(5 * 4 * 2, 2);
  Tensor c = matmul(Tensor(av, Shape{2, 1, 3, 4}), Tensor(bv, Shape{5, 4, 2}));
  EXPECT_EQ(c.shape(), (Shape{2, 5, 3, 2}));
  const std::vector<float> got = c.to_vector<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j) {
      std::vector<float> am(av.begin() + i * 12, av.begin() + (i + 1) * 12);
      std::vector<float> bm(bv.begin() + j * 8, bv.begin() + (j + 1) * 8);
      const std::vector<double> want = naive(am, bm, 3, 2, 4, false, false);
      for (int e = 0; e < 6; ++e) EXPECT_NEAR(got[(i * 5 + j) * 6 + e], want[e], 1e-5) << i << "," << j;
    }
  // A plain matrix broadcasts against a batch, with both transpose flags: op(a) is [3,4] (a is
  // [4,3]) and op(b) is [2,4,2] (b is [2,2,4]).
  const std::vector<int32_t> ai = pattern<int32_t>(12, 3), bi = pattern<int32_t>(16, 4);
  Tensor ci = matmul(Tensor(ai, Shape{4, 3}), Tensor(bi, Shape{2, 2, 4}), true, true);
  EXPECT_EQ(ci.shape(), (Shape{2, 3, 2}));
  const std::vector<int32_t> goti = ci.to_vector<int32_t>();
  for (int j = 0; j < 2; ++j) {
    std::vector<int32_t> bm(bi.begin() + j * 8, bi.begin() + (j + 1) * 8);
    const std::vector<double> want = naive(ai, bm, 3, 2, 4, true, true);
    for (int e = 0; e < 6; ++e) EXPECT_EQ(goti[j * 6 + e], want[e]) << j;
  }
}

// 300x200 * 200x100 goes to OpenBLAS; checked against the definition in double.
TEST(MatMulTest, LargeFloatMatchesNaiveLoop) {
  const int64_t m = 300, k = 200, n = 100;
  for (int flags = 0; flags < 4; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    const std::vector<float> av = pattern<float>(m * k, 5 + flags), bv = pattern<float>(k * n, 9 + flags);
    Tensor c = matmul(Tensor(av, ta ? Shape{k, m} : Shape{m, k}), Tensor(bv, tb ? Shape{n, k} : Shape{k, n}), ta, tb);
    ASSERT_EQ(c.shape(), (Shape{m, n}));
    const std::vector<float> got = c.to_vector<float>();
    const std::vector<double> want = naive(av, bv, m, n, k, ta, tb);
    double max_rel = 0;
    for (size_t i = 0; i < got.size(); ++i)
      max_rel = std::max(max_rel, std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i])));
    EXPECT_LT(max_rel, 1e-5) << "transpose_a=" << ta << " transpose_b=" << tb;
  }
}

// Batches of large float matrices (BLAS per matrix), batches of small ones (Eigen, parallel
// over the batch), and a large integer product (Eigen, parallel over row blocks).
TEST(MatMulTest, BatchedAndIntegerPathsMatchNaiveLoop) {
  {
    const std::vector<double> av = pattern<double>(3 * 70 * 80, 1), bv = pattern<double>(80 * 60, 2);
    const std::vector<double> got = matmul(Tensor(av, Shape{3, 70, 80}), Tensor(bv, Shape{80, 60})).to_vector<double>();
    for (int e = 0; e < 3; ++e) {
      std::vector<double> am(av.begin() + e * 5600, av.begin() + (e + 1) * 5600);
      const std::vector<double> want = naive(am, bv, 70, 60, 80, false, false);
      for (int i = 0; i < 4200; ++i) ASSERT_NEAR(got[e * 4200 + i], want[i], 1e-10) << e << "," << i;
    }
  }
  {
    const std::vector<float> av = pattern<float>(64 * 8 * 5, 3), bv = pattern<float>(64 * 5 * 8, 4);
    const std::vector<float> got = matmul(Tensor(av, Shape{64, 8, 5}), Tensor(bv, Shape{64, 5, 8})).to_vector<float>();
    for (int e = 0; e < 64; ++e) {
      std::vector<float> am(av.begin() + e * 40, av.begin() + (e + 1) * 40);
      std::vector<float> bm(bv.begin() + e * 40, bv.begin() + (e + 1) * 40);
      const std::vector<double> want = naive(am, bm, 8, 8, 5, false, false);
      for (int i = 0; i < 64; ++i) ASSERT_NEAR(got[e * 64 + i], want[i], 1e-5) << e << "," << i;
    }
  }
  {
    const int64_t m = 130, k = 70, n = 90;
    const std::vector<int32_t> av = pattern<int32_t>(m * k, 5), bv = pattern<int32_t>(n * k, 6);
    const std::vector<int32_t> got = matmul(Tensor(av, Shape{m, k}), Tensor(bv, Shape{n, k}), false, true).to_vector<int32_t>();
    const std::vector<double> want = naive(av, bv, m, n, k, false, true);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
  }
}

// Checks matmul(a, b, ta, tb) for batched a [batch, op(a) stored dims] and b against the
// definition, b broadcast when it has rank 2.
template <typename T>
void check_batched(int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool b_batched, double tol) {
  const std::vector<T> av = pattern<T>(batch * m * k, m + n), bv = pattern<T>((b_batched ? batch : 1) * k * n, k);
  Shape as = ta ? Shape{batch, k, m} : Shape{batch, m, k};
  Shape bs = tb ? Shape{n, k} : Shape{k, n};
  if (b_batched) bs.insert(0, batch);
  Tensor c = matmul(Tensor(av, as), Tensor(bv, bs), ta, tb);
  ASSERT_EQ(c.shape(), (Shape{batch, m, n}));
  const std::vector<T> got = c.to_vector<T>();
  for (int64_t e = 0; e < batch; ++e) {
    std::vector<T> am(av.begin() + e * m * k, av.begin() + (e + 1) * m * k);
    const int64_t bo = b_batched ? e * k * n : 0;
    std::vector<T> bm(bv.begin() + bo, bv.begin() + bo + k * n);
    const std::vector<double> want = naive(am, bm, m, n, k, ta, tb);
    for (int64_t i = 0; i < m * n; ++i)
      ASSERT_NEAR(got[e * m * n + i], want[i], tol) << "batch " << e << " element " << i << " ta=" << ta << " tb=" << tb;
  }
}

// Matrix-vector shapes (gemv), and batches of products small enough that OpenBLAS runs them
// on the calling thread (spread over the pool), with every transpose combination.
TEST(MatMulTest, MatrixVectorAndBatchedBlasPaths) {
  for (int flags = 0; flags < 4; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    check_batched<float>(1, 1, 80, 100, ta, tb, false, 1e-4);    // row vector times matrix
    check_batched<double>(1, 90, 1, 100, ta, tb, false, 1e-10);  // matrix times column vector
    check_batched<float>(5, 1, 80, 100, ta, tb, true, 1e-4);     // batched gemv on the pool
    check_batched<double>(32, 24, 20, 24, ta, tb, true, 1e-10);  // batched gemm on the pool
    check_batched<float>(3, 70, 65, 80, ta, tb, false, 1e-4);    // OpenBLAS threads each product
    check_batched<int64_t>(6, 40, 33, 17, ta, tb, true, 0);      // Eigen
  }
}

TEST(MatMulTest, EmptyDims) {
  Tensor z = matmul(Tensor(std::vector<float>{}, Shape{2, 0}), Tensor(std::vector<float>{}, Shape{0, 3}));
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.f));
  EXPECT_EQ(matmul(Tensor(std::vector<float>{}, Shape{0, 3}), Tensor(std::vector<float>(12, 1.f), Shape{3, 4})).shape(),
            (Shape{0, 4}));
  EXPECT_EQ(matmul(Tensor(std::vector<int32_t>{}, Shape{0, 2, 3}), Tensor{{1, 2}, {3, 4}, {5, 6}}).shape(),
            (Shape{0, 2, 2}));
}

TEST(MatMulTest, Errors) {
  Tensor a = Tensor(std::vector<float>(6, 1.f), Shape{2, 3});
  Tensor b = Tensor(std::vector<float>(20, 1.f), Shape{4, 5});
  std::string msg = error_of([&] { matmul(a, b); });
  EXPECT_THAT(msg, HasSubstr("[matmul]"));
  EXPECT_THAT(msg, HasSubstr("[2,3]"));
  EXPECT_THAT(msg, HasSubstr("[4,5]"));
  EXPECT_THAT(msg, HasSubstr("transpose_a=false"));
  EXPECT_THAT(msg, HasSubstr("transpose_b=false"));
  msg = error_of([&] { matmul(a, a, false, false); });
  EXPECT_THAT(msg, HasSubstr("inner dimensions do not match"));
  EXPECT_EQ(matmul(a, a, false, true).shape(), (Shape{2, 2}));
  msg = error_of([&] { matmul(a, b, true, true); });
  EXPECT_THAT(msg, HasSubstr("transpose_a=true"));
  EXPECT_THAT(msg, HasSubstr("transpose_b=true"));

  EXPECT_THAT(error_of([&] { matmul(Tensor{1.f, 2.f}, a); }), HasSubstr("[matmul] input 'a' must have rank >= 2, got shape [2]"));
  EXPECT_THAT(error_of([&] { matmul(a, Tensor(1.f)); }), HasSubstr("input 'b' must have rank >= 2"));
  EXPECT_THAT(error_of([&] { matmul(a, Tensor{{1.0}, {2.0}, {3.0}}); }),
              HasSubstr("[matmul] inputs 'a' and 'b' must have the same dtype, got float32 and float64"));
  Tensor u8 = Tensor(std::vector<uint8_t>{1, 2, 3, 4}, Shape{2, 2});
  EXPECT_THAT(error_of([&] { matmul(u8, u8); }), HasSubstr("[matmul] input 'a' has dtype uint8"));
  msg = error_of([&] {
    matmul(Tensor(std::vector<float>(24, 1.f), Shape{2, 3, 4}), Tensor(std::vector<float>(60, 1.f), Shape{3, 4, 5}));
  });
  EXPECT_THAT(msg, HasSubstr("[matmul] batch dimensions"));
  EXPECT_THAT(msg, HasSubstr("[2,3,4]"));
  EXPECT_THAT(msg, HasSubstr("[3,4,5]"));
}

TEST(MatMulTest, ProductsSplitOverTheIntraOpPoolGiveTheSameResult) {
  // Note [BLAS threads]: OpenBLAS runs single-threaded by default and a product is split into row
  // or column blocks over the pool; set_blas_threads(n > 1) lets OpenBLAS thread it instead.
  EXPECT_EQ(cpu::blas_threads(), 1);
  const std::vector<float> av = pattern<float>(96 * 130, 1), bv = pattern<float>(130 * 70, 2);
  const std::vector<double> want = naive(av, bv, 96, 70, 130, false, false);
  const std::vector<double> want_t = naive(bv, av, 70, 96, 130, true, true);  // (A B)^T = B^T A^T
  const std::vector<float> xv = pattern<float>(512, 3), mv = pattern<float>(512 * 300, 4);
  const std::vector<double> wv = naive(xv, mv, 1, 300, 512, false, false);
  const int before = intra_op_threads();
  for (int threads : {1, 2, 3}) {
    for (int blas : {1, 2}) {
      set_intra_op_threads(threads);
      EXPECT_EQ(cpu::blas_threads(), 1) << "the pool's size leaves OpenBLAS single-threaded";
      cpu::set_blas_threads(blas);
      const Tensor a(av, Shape{96, 130}), b(bv, Shape{130, 70});
      const std::vector<float> got = matmul(a, b).to_vector<float>();  // split by rows (96 >= 70)
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-3) << threads << " threads, OpenBLAS " << blas << ", " << i;
      // Wider than tall: split by columns, through the transposed operands.
      const std::vector<float> got_t = matmul(b, a, true, true).to_vector<float>();
      for (size_t i = 0; i < got_t.size(); ++i)
        ASSERT_NEAR(got_t[i], want_t[i], 1e-3) << threads << " threads, OpenBLAS " << blas << ", " << i;
      // A long matrix-vector product (x [1, 512] times [512, 300]) splits its output.
      const std::vector<float> gv = matmul(Tensor(xv, Shape{1, 512}), Tensor(mv, Shape{512, 300})).to_vector<float>();
      for (size_t i = 0; i < gv.size(); ++i)
        ASSERT_NEAR(gv[i], wv[i], 1e-3) << threads << " threads, OpenBLAS " << blas << ", " << i;
      cpu::set_blas_threads(1);
    }
  }
  cpu::set_blas_threads(0);  // clamped to 1
  EXPECT_EQ(cpu::blas_threads(), 1);
  set_intra_op_threads(before);
}

// While a SingleThreadedBlas lives on any thread, OpenBLAS runs single-threaded; the last one
// gone restores the count the first one found.
TEST(MatMulTest, SingleThreadedBlasRestoresTheCountItFound) {
  cpu::set_blas_threads(2);
  {
    const cpu::SingleThreadedBlas outer;
    EXPECT_EQ(cpu::blas_threads(), 1);
    {
      const cpu::SingleThreadedBlas inner;
      EXPECT_EQ(cpu::blas_threads(), 1);
    }
    EXPECT_EQ(cpu::blas_threads(), 1) << "the outer holder still lives";
  }
  EXPECT_EQ(cpu::blas_threads(), 2);
  cpu::set_blas_threads(1);
  { const cpu::SingleThreadedBlas single; }
  EXPECT_EQ(cpu::blas_threads(), 1);
}

}  // namespace
}  // namespace tapeflow
