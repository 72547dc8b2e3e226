#include "devices/cpu/blas.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "devices/cpu/thread_pool.h"

namespace tapeflow::cpu {

namespace {

// Below this many multiply-adds per block a second thread costs more than it saves (the
// blocks pack their shared operand twice): OpenBLAS's own threading threshold is 64^3 in all.
constexpr int64_t kMinWorkPerBlock = 64 * 64 * 64;

// How many blocks to split `work` multiply-adds with `extent` rows or columns to share out.
int64_t block_count(int64_t work, int64_t extent) {
  // At least one block (std::clamp would be undefined for an empty extent).
  return std::max<int64_t>(1, std::min<int64_t>({intra_op_threads(), work / kMinWorkPerBlock, extent}));
}

// Note [Zeroed C]: with beta = 0 OpenBLAS first clears C in its own "beta" pass, which measured
// slower than memset plus beta = 1 (784x256x64, as the MLP's weight gradient: 420-530 us against
// 320-400 us; perf showed sgemm_beta at 12% of a traced MLP step). So C is cleared here.
template <typename T>
void blas_gemm(bool ta, bool tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta,
               T* c, int ldc) {
  if (beta == T(0)) {
    for (int r = 0; r < m; ++r) std::memset(c + static_cast<int64_t>(r) * ldc, 0, sizeof(T) * static_cast<size_t>(n));
    beta = T(1);
  }
  const auto trans_a = ta ? CblasTrans : CblasNoTrans, trans_b = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    cblas_dgemm(CblasRowMajor, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
void blas_gemv(bool trans, int rows, int cols, const T* mat, int ld, const T* x, T* y) {
  const auto t = trans ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) cblas_sgemv(CblasRowMajor, t, rows, cols, 1.f, mat, ld, x, 1, 0.f, y, 1);
  else cblas_dgemv(CblasRowMajor, t, rows, cols, 1.0, mat, ld, x, 1, 0.0, y, 1);
}

}  // namespace

void init_blas() { openblas_set_num_threads(1); }
void set_blas_threads(int n) { openblas_set_num_threads(std::max(1, n)); }
int blas_threads() { return openblas_get_num_threads(); }
const char* blas_core_name() { return openblas_get_corename(); }

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c) {
  const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n), ldc = static_cast<int>(n);
  const int64_t work = m * n * k;
  // Split the longer side of C: rows take a row block of op(A), columns a column block of op(B).
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n;
  // OpenBLAS threading itself (set_blas_threads(n > 1)) takes each product whole (Note [BLAS threads]).
  const int64_t blocks = openblas_get_num_threads() > 1 ? 1 : block_count(work, extent);
  if (blocks == 1) {
    blas_gemm<T>(ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, lda, b, ldb, beta, c,
                 ldc);
    return;
  }
  const int64_t per_block = (extent + blocks - 1) / blocks;
  parallel_for(blocks, work / blocks, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t lo = p * per_block, hi = std::min(extent, lo + per_block);
      if (lo >= hi) continue;
      const int len = static_cast<int>(hi - lo);
      if (by_rows) {  // op(A) rows lo..hi: A's rows, or A's columns when transposed
        blas_gemm<T>(ta, tb, len, static_cast<int>(n), static_cast<int>(k), alpha, ta ? a + lo : a + lo * k, lda, b,
                     ldb, beta, c + lo * n, ldc);
      } else {        // op(B) columns lo..hi: B's columns, or B's rows when transposed
        blas_gemm<T>(ta, tb, static_cast<int>(m), len, static_cast<int>(k), alpha, a, lda, tb ? b + lo * k : b + lo,
                     ldb, beta, c + lo, ldc);
      }
    }
  });
}

template <typename T>
void gemm_on_this_thread(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta,
                         T* c) {
  blas_gemm<T>(ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
               static_cast<int>(ta ? m : k), b, static_cast<int>(tb ? k : n), beta, c, static_cast<int>(n));
}

namespace {
struct SingleThreadedState {
  std::mutex mu;
  int holders = 0;
  int saved_threads = 1;
};
SingleThreadedState& single_threaded_state() {
  static SingleThreadedState* state = new SingleThreadedState;  // never destroyed: used at exit
  return *state;
}
}  // namespace

SingleThreadedBlas::SingleThreadedBlas() {
  SingleThreadedState& s = single_threaded_state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.holders++ == 0) {
    s.saved_threads = openblas_get_num_threads();
    if (s.saved_threads != 1) openblas_set_num_threads(1);
  }
}

SingleThreadedBlas::~SingleThreadedBlas() {
  SingleThreadedState& s = single_threaded_state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (--s.holders == 0 && s.saved_threads != 1) openblas_set_num_threads(s.saved_threads);
}

template <typename T>
void gemv(bool trans, int64_t rows, int64_t cols, const T* mat, const T* x, T* y) {
  const int64_t out = trans ? cols : rows;  // y's length
  const int64_t blocks = openblas_get_num_threads() > 1 ? 1 : block_count(rows * cols, out);
  const int64_t per_block = (out + blocks - 1) / blocks;
  parallel_for(blocks, rows * cols / blocks, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t lo = p * per_block, hi = std::min(out, lo + per_block);
      if (lo >= hi) continue;
      const int len = static_cast<int>(hi - lo);
      if (trans)  // y[lo:hi] = M[:, lo:hi]^T x
        blas_gemv<T>(true, static_cast<int>(rows), len, mat + lo, static_cast<int>(cols), x, y + lo);
      else        // y[lo:hi] = M[lo:hi, :] x
        blas_gemv<T>(false, len, static_cast<int>(cols), mat + lo * cols, static_cast<int>(cols), x, y + lo);
    }
  });
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, const float*, float, float*);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, const double*, double,
                           double*);
template void gemm_on_this_thread<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, const float*,
                                         float, float*);
template void gemm_on_this_thread<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*,
                                          const double*, double, double*);
template void gemv<float>(bool, int64_t, int64_t, const float*, const float*, float*);
template void gemv<double>(bool, int64_t, int64_t, const double*, const double*, double*);

}  // namespace tapeflow::cpu
