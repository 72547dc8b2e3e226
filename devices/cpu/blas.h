// The BLAS library (OpenBLAS) behind the CPU matrix products (MatMul, Conv2D and its gradients),
// run on the intra-op pool (devices/cpu/thread_pool.h).
//
//   cpu::gemm<float>(/*ta=*/false, /*tb=*/true, m, n, k, 1.f, a, b, /*beta=*/0.f, c);  // c = a b^T
//
// Note [BLAS threads]: OpenBLAS runs single-threaded, and gemm and gemv split a large product
// into row or column blocks over the intra-op pool, one OpenBLAS call per block: every CPU kernel
// then shares one set of threads. set_blas_threads(n > 1) hands the threading of each product to
// OpenBLAS instead. Why the split is the default: after a threaded product OpenBLAS's workers spin
// (sched_yield) for ~2^28 cycles (OPENBLAS_THREAD_TIMEOUT, read only when OpenBLAS loads) and
// take the CPU from the pool's workers in the kernels that follow. Measured 2026-11-25 on 2 cores
// (Zen 5), one process alternating the settings (OpenBLAS threads / split): CNN training step
// 54-60 / 41-43 ms, MLP step 597-605 / 492-504 us, matmul 1024^3 179-189 / 197-202 GFLOP/s,
// 2048^3 198-200 / 200-204, 256^3 155-158 / 146-153 (the pool's worker wakes later than
// OpenBLAS's spinning one); again in separate processes: eager MLP step 596-649 / 495-569 us, while
// the traced step, whose elementwise work is fused, measured the same either way (423-488 /
// 430-488 us). With OpenBLAS's threads, a conv's im2col on the pool and its product
// on OpenBLAS's threads also hand work back and forth (Note [Per-image convolutions]). On the
// Zen 4 machine of 2026-11-24 the split measured CNN 42.8-44.4 ms against 47.2-47.8 and MLP
// 388-434 us against 427-444, and a lone 256^3 product 112-182 against 188 GFLOP/s.
#pragma once

#include <cstdint>

namespace tapeflow::cpu {

// Makes OpenBLAS single-threaded (Note [BLAS threads]); called when CPU kernels register.
void init_blas();
// OpenBLAS's own thread count (at least 1; default 1); Note [BLAS threads].
void set_blas_threads(int n);
int blas_threads();
// The kernel set OpenBLAS chose for this CPU ("Haswell", "SkylakeX", ...); the environment
// variable OPENBLAS_CORETYPE overrides its choice when the library loads. For benchmark reports.
const char* blas_core_name();

// C[m, n] = alpha op(A) op(B) + beta C, all row-major and contiguous (lda, ldb, ldc are the stored
// row lengths); float and double. Dimensions must fit in int. Note [BLAS threads]. With beta = 0,
// C's old contents are ignored (NaN included).
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c);

// The same product on the calling thread alone, for kernels that share their own work out over
// the pool (hold a SingleThreadedBlas meanwhile, so that OpenBLAS does not thread each call).
template <typename T>
void gemm_on_this_thread(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta,
                         T* c);

// While one exists on any thread, OpenBLAS runs each product on the thread that calls it: the
// first holder saves OpenBLAS's thread count and sets 1, the last one restores it.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;
};

// y = op(M) x for M stored [rows, cols] row-major; float and double. Note [BLAS threads].
template <typename T>
void gemv(bool trans, int64_t rows, int64_t cols, const T* mat, const T* x, T* y);

}  // namespace tapeflow::cpu
