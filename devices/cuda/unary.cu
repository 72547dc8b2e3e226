// CUDA kernels of the unary elementwise family: the functors of devices/functors.h in a
// grid-stride loop. Registration is in elementwise.cc.
#include <cuda_runtime.h>

// Sign<uint8_t> compares an unsigned value with zero, by design (one functor for all types).
#pragma nv_diag_suppress 186

#include "devices/cuda/launch.h"
#include "devices/functors.h"

namespace tapeflow::cuda {

namespace {

template <typename T, typename Out, typename F>
__global__ void unary_kernel(const T* x, Out* y, int64_t n) {
  const F f{};
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) y[i] = f(x[i]);
}

}  // namespace

template <typename T, typename F>
int launch_unary(CUstream_st* stream, const T* x, T* y, int64_t n) {
  unary_kernel<T, T, F><<<grid_size(n), kBlockSize, 0, stream>>>(x, y, n);
  return static_cast<int>(cudaGetLastError());
}

template <typename T, typename F>
int launch_predicate(CUstream_st* stream, const T* x, bool* y, int64_t n) {
  unary_kernel<T, bool, F><<<grid_size(n), kBlockSize, 0, stream>>>(x, y, n);
  return static_cast<int>(cudaGetLastError());
}

// The instantiations elementwise.cc registers; a missing one is a link error.
#define TF_UNARY(T, F) template int launch_unary<T, functors::F>(CUstream_st*, const T*, T*, int64_t);
#define TF_UNARY_NUMERIC(F) TF_UNARY(float, F) TF_UNARY(double, F) TF_UNARY(int32_t, F) TF_UNARY(int64_t, F)
#define TF_UNARY_FLOATING(F) TF_UNARY(float, F) TF_UNARY(double, F)
TF_UNARY_NUMERIC(Neg)
TF_UNARY_NUMERIC(Abs)
TF_UNARY_NUMERIC(Sign)
TF_UNARY_NUMERIC(Square)
TF_UNARY(uint8_t, Abs)
TF_UNARY(uint8_t, Sign)
TF_UNARY(uint8_t, Square)
TF_UNARY_FLOATING(Sqrt)
TF_UNARY_FLOATING(Rsqrt)
TF_UNARY_FLOATING(Exp)
TF_UNARY_FLOATING(Log)
TF_UNARY_FLOATING(Log1p)
TF_UNARY_FLOATING(Tanh)
TF_UNARY_FLOATING(Sigmoid)
TF_UNARY_FLOATING(Floor)
TF_UNARY(bool, LogicalNot)
// The activation family (eager/ops/activation.cc), registered by elementwise.cc.
TF_UNARY_NUMERIC(Relu)
TF_UNARY_NUMERIC(Relu6)
TF_UNARY(uint8_t, Relu)
TF_UNARY(uint8_t, Relu6)
TF_UNARY_FLOATING(Elu)
TF_UNARY_FLOATING(Selu)
TF_UNARY_FLOATING(Softplus)
TF_UNARY_FLOATING(Softsign)
// The math family (eager/ops/math.cc), registered by elementwise.cc.
TF_UNARY_FLOATING(Reciprocal)
TF_UNARY_FLOATING(Expm1)
TF_UNARY_FLOATING(Sin)
TF_UNARY_FLOATING(Cos)
TF_UNARY_FLOATING(Tan)
TF_UNARY_FLOATING(Asin)
TF_UNARY_FLOATING(Acos)
TF_UNARY_FLOATING(Atan)
TF_UNARY_FLOATING(Sinh)
TF_UNARY_FLOATING(Cosh)
TF_UNARY_FLOATING(Asinh)
TF_UNARY_FLOATING(Acosh)
TF_UNARY_FLOATING(Atanh)
TF_UNARY_FLOATING(Erf)
TF_UNARY_FLOATING(Erfc)
TF_UNARY_FLOATING(Ceil)
TF_UNARY_NUMERIC(RoundHalfEven)
#define TF_PREDICATE(T, F) template int launch_predicate<T, functors::F>(CUstream_st*, const T*, bool*, int64_t);
TF_PREDICATE(float, IsNan) TF_PREDICATE(double, IsNan)
TF_PREDICATE(float, IsInf) TF_PREDICATE(double, IsInf)
TF_PREDICATE(float, IsFinite) TF_PREDICATE(double, IsFinite)
#undef TF_PREDICATE
#undef TF_UNARY_FLOATING
#undef TF_UNARY_NUMERIC
#undef TF_UNARY

}  // namespace tapeflow::cuda
