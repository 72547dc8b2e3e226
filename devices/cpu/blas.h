// The BLAS library (OpenBLAS) behind the CPU matrix products (MatMul, Conv2D and its gradients),
// run on the intra-op pool (devices/cpu/thread_pool.h).
//
//   cpu::gemm<float>(/*ta=*/false, /*tb=*/true, m, n, k, 1.f, a, b, /*beta=*/0.f, c);  // c = a b^T
//
// Note [BLAS threads]: OpenBLAS threads each product itself by default, with as many threads
// as the intra-op pool (set_intra_op_threads sets both). With set_blas_threads(1), gemm and
// gemv split a large product into row or column blocks over the intra-op pool instead, one
// single-threaded OpenBLAS call per block. Measured against libtorch in the same process
// (bench/libtorch_compare, 2 cores): OpenBLAS's threading gave the MLP step 0.69-0.71x
// libtorch's against 0.82-1.02x split over the pool (our pool's sleeping worker wakes late
// for a product between small ops), and the CNN step 1.00-1.06x against 0.99-1.00x. On the
// AVX-512 machine (2026-11-24, one process alternating the two settings) the split measured
// faster for the training steps (CNN 42.8-44.4 ms against 47.2-47.8, MLP 388-434 us against
// 427-444) but slower for a lone 256^3 product (112-182 GFLOP/s against 188: the worker's
// wake-up); a helper thread that kept spinning fixed that (198 GFLOP/s) yet slowed the MLP
// step by a third. So the default stays OpenBLAS's threads.
#pragma once

#include <cstdint>

namespace tapeflow::cpu {

// Gives OpenBLAS the intra-op pool's thread count; called when CPU kernels register.
void init_blas();
// OpenBLAS's own thread count (at least 1); Note [BLAS threads].
void set_blas_threads(int n);
int blas_threads();

// C[m, n] = alpha op(A) op(B) + beta C, all row-major and contiguous (lda, ldb, ldc are the stored
// row lengths); float and double. Dimensions must fit in int. Note [BLAS threads]. With beta = 0,
// C's old contents are ignored (NaN included).
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c);

// y = op(M) x for M stored [rows, cols] row-major; float and double. Note [BLAS threads].
template <typename T>
void gemv(bool trans, int64_t rows, int64_t cols, const T* mat, const T* x, T* y);

}  // namespace tapeflow::cpu
