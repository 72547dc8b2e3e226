// CPU kernel of MatMul (eager/ops/matmul.cc): batched, with broadcast batch dims.
//
// Note [MatMul paths]: float and double products go to OpenBLAS unless they are tiny; integer
// products, and float products under ~16^3 multiply-adds (where OpenBLAS's per-call overhead
// dominates), run on Eigen. Eigen is built here for baseline x86-64 (SSE2) while OpenBLAS picks
// AVX2/AVX-512 kernels at run time, so OpenBLAS wins from about 16x16x16 up (measured on the
// 2-core dev machine: 64^3 Eigen 27us vs OpenBLAS 16us, 256^3 2.0ms vs 0.6ms). A matrix-vector
// shape (one output row or column) uses gemv: OpenBLAS's gemm is 2-4x slower than gemv there.
// Threads: one product is threaded by OpenBLAS, or split over the intra-op pool (Note [BLAS
// threads] in blas.h); the entries of a batch of small products are spread over the pool. Eigen tasks (batch entries, and row blocks of one large integer
// product) are spread over the intra-op pool too.
#include "devices/cpu/blas.h"

#include <Eigen/Core>
#include <algorithm>
#include <limits>
#include <vector>

#include "devices/cpu/register.h"
#include "devices/functors.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

constexpr int64_t kBlasMinWork = 16 * 16 * 16;  // Note [MatMul paths]

template <typename T> using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// C[r0:r1, :] = op(A)[r0:r1, :] * op(B) for one matrix; a and b as stored (row-major).
template <typename T>
void eigen_gemm(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb, int64_t r0,
                int64_t r1) {
  if constexpr (std::is_integral_v<T>) {
    // Note [Integer wrap-around]: Eigen's integer product overflows as signed C++ arithmetic
    // (undefined); integer products are rare and small, so a plain loop in wrapping arithmetic.
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum = functors::wrap_add(sum, functors::wrap_mul(ta ? a[p * m + i] : a[i * k + p], tb ? b[j * k + p] : b[p * n + j]));
        c[i * n + j] = sum;
      }
    return;
  }
  Eigen::Map<const RowMajor<T>> A(a, ta ? k : m, ta ? m : k);
  Eigen::Map<const RowMajor<T>> B(b, tb ? n : k, tb ? k : n);
  Eigen::Map<RowMajor<T>> C(c + r0 * n, r1 - r0, n);
  const int64_t rows = r1 - r0;
  if (!ta && !tb) C.noalias() = A.middleRows(r0, rows) * B;
  else if (!ta) C.noalias() = A.middleRows(r0, rows) * B.transpose();
  else if (!tb) C.noalias() = A.middleCols(r0, rows).transpose() * B;
  else C.noalias() = A.middleCols(r0, rows).transpose() * B.transpose();
}

// One product on OpenBLAS (devices/cpu/blas.h), split over the intra-op pool when large.
template <typename T>
void blas_product(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  if (m == 1) {
    // c = x op(B) with x = op(A)'s one row, contiguous in a either way: c = op(B)^T x.
    if (tb) gemv<T>(false, n, k, b, a, c);  // b stored [n, k]
    else gemv<T>(true, k, n, b, a, c);      // b stored [k, n]
  } else if (n == 1) {
    // c = op(A) x with x = op(B)'s one column, contiguous in b either way.
    if (ta) gemv<T>(true, k, m, a, b, c);  // a stored [k, m]
    else gemv<T>(false, m, k, a, b, c);    // a stored [m, k]
  } else {
    gemm<T>(ta, tb, m, n, k, T(1), a, b, T(0), c);
  }
}

// Element offsets of each batch entry's matrix in an input whose batch dims `in` broadcast to
// `out` (aligned at the right; size-1 dims repeat).
std::vector<int64_t> batch_offsets(absl::Span<const int64_t> out, absl::Span<const int64_t> in,
                                   int64_t matrix_size) {
  int64_t batch = 1;
  for (int64_t d : out) batch *= d;
  std::vector<int64_t> offsets(static_cast<size_t>(batch));
  const int rank = static_cast<int>(out.size()), shift = rank - static_cast<int>(in.size());
  std::vector<int64_t> strides(rank, 0);
  int64_t st = matrix_size;
  for (int i = rank - 1; i >= shift; --i) {
    const int64_t d = in[i - shift];
    strides[i] = d == 1 ? 0 : st;
    st *= d;
  }
  std::vector<int64_t> index(rank, 0);
  int64_t off = 0;
  for (int64_t e = 0; e < batch; ++e) {
    offsets[e] = off;
    for (int i = rank - 1; i >= 0; --i) {  // odometer increment
      off += strides[i];
      if (++index[i] < out[i]) break;
      off -= strides[i] * index[i];
      index[i] = 0;
    }
  }
  return offsets;
}

template <typename T>
absl::Status matmul_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& y = ctx.input(1);
  DeviceTensor& z = ctx.output(0);
  const bool ta = ctx.attrs.get<bool>("transpose_a"), tb = ctx.attrs.get<bool>("transpose_b");
  const int ra = x.shape.rank(), rb = y.shape.rank(), rz = z.shape.rank();
  const int64_t m = z.shape.dim(rz - 2), n = z.shape.dim(rz - 1);
  const int64_t k = x.shape.dim(ta ? ra - 2 : ra - 1);
  T* c = z.data<T>();
  if (z.num_elements() == 0) return absl::OkStatus();
  if (k == 0) {  // an empty sum: zeros
    std::fill(c, c + z.num_elements(), T(0));
    return absl::OkStatus();
  }
  const auto out_batch = z.shape.dims().subspan(0, rz - 2);
  const std::vector<int64_t> a_off = batch_offsets(out_batch, x.shape.dims().subspan(0, ra - 2), m * k);
  const std::vector<int64_t> b_off = batch_offsets(out_batch, y.shape.dims().subspan(0, rb - 2), k * n);
  const int64_t batch = static_cast<int64_t>(a_off.size());
  const T* a = x.data<T>();
  const T* b = y.data<T>();
  const int64_t work = m * n * k;  // multiply-adds per matrix

  if constexpr (std::is_floating_point_v<T>) {
    constexpr int64_t kIntMax = std::numeric_limits<int>::max();
    if (work >= kBlasMinWork && m <= kIntMax && n <= kIntMax && k <= kIntMax) {  // Note [MatMul paths]
      // Batch entries spread over the pool; each product splits itself only when it runs alone
      // (parallel_for runs nested blocks inline).
      parallel_for(batch, 2 * work, [&](int64_t begin, int64_t end) {
        for (int64_t e = begin; e < end; ++e) blas_product(a + a_off[e], b + b_off[e], c + e * m * n, m, n, k, ta, tb);
      });
      return absl::OkStatus();
    }
  }
  // Eigen: split large matrices into row blocks so one product still uses every thread.
  const int64_t row_block = batch >= intra_op_threads() ? m : std::max<int64_t>(16, (m + 7) / 8);
  const int64_t blocks_per_matrix = (m + row_block - 1) / row_block;
  parallel_for(batch * blocks_per_matrix, 2 * row_block * n * k, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t e = t / blocks_per_matrix, r0 = (t % blocks_per_matrix) * row_block;
      eigen_gemm(a + a_off[e], b + b_off[e], c + e * m * n, m, n, k, ta, tb, r0, std::min(m, r0 + row_block));
    }
  });
  return absl::OkStatus();
}

}  // namespace

void register_matmul_kernels(KernelRegistry& r) {
  init_blas();  // Note [BLAS threads]
  register_each<float, double, int32_t, int64_t>(r, "MatMul", DeviceType::kCPU,
                                                 []<typename T>() -> KernelFn { return matmul_kernel<T>; });
}

}  // namespace tapeflow::cpu
