// CUDA kernels of the binary elementwise family: the functors of devices/functors.h in a
// grid-stride loop, with NumPy broadcasting through a BroadcastIndexer computed on the host.
// Registration (and the integer division-by-zero check) is in elementwise.cc.
#include <cuda_runtime.h>

#include "devices/cuda/launch.h"
#include "devices/functors.h"

namespace tapeflow::cuda {

namespace {

template <typename T, typename Out, typename F>
__global__ void binary_kernel(const T* x, const T* y, Out* z, int64_t n, BroadcastIndexer<2> idx) {
  const F f{};
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    idx.offsets(i, off);
    z[i] = f(x[off[0]], y[off[1]]);
  }
}

}  // namespace

template <typename T, typename Out, typename F>
int launch_binary(CUstream_st* stream, const T* x, const T* y, Out* z, int64_t n, const BroadcastIndexer<2>& idx) {
  binary_kernel<T, Out, F><<<grid_size(n), kBlockSize, 0, stream>>>(x, y, z, n, idx);
  return static_cast<int>(cudaGetLastError());
}

// The instantiations elementwise.cc registers; a missing one is a link error.
#define TF_BINARY(T, Out, F)                                                                  \
  template int launch_binary<T, Out, functors::F>(CUstream_st*, const T*, const T*, Out*, int64_t, \
                                                  const BroadcastIndexer<2>&);
#define TF_BINARY_ARITH(F) \
  TF_BINARY(float, float, F) TF_BINARY(double, double, F) TF_BINARY(int32_t, int32_t, F) \
  TF_BINARY(int64_t, int64_t, F) TF_BINARY(uint8_t, uint8_t, F)
#define TF_BINARY_COMPARE(F) \
  TF_BINARY(float, bool, F) TF_BINARY(double, bool, F) TF_BINARY(int32_t, bool, F) \
  TF_BINARY(int64_t, bool, F) TF_BINARY(uint8_t, bool, F)
TF_BINARY_ARITH(Add)
TF_BINARY_ARITH(Sub)
TF_BINARY_ARITH(Mul)
TF_BINARY_ARITH(Maximum)
TF_BINARY_ARITH(Minimum)
TF_BINARY_ARITH(Div)
TF_BINARY_ARITH(FloorDiv)
TF_BINARY_ARITH(FloorMod)
TF_BINARY_ARITH(Pow)
TF_BINARY_COMPARE(Equal)
TF_BINARY_COMPARE(NotEqual)
TF_BINARY_COMPARE(Less)
TF_BINARY_COMPARE(LessEqual)
TF_BINARY_COMPARE(Greater)
TF_BINARY_COMPARE(GreaterEqual)
TF_BINARY(bool, bool, Equal)
TF_BINARY(bool, bool, NotEqual)
TF_BINARY(bool, bool, LogicalAnd)
TF_BINARY(bool, bool, LogicalOr)
// The activation family's gradient ops (eager/ops/activation.cc), registered by elementwise.cc.
TF_BINARY_ARITH(ReluGrad)
TF_BINARY_ARITH(Relu6Grad)
#define TF_BINARY_FLOATING(F) TF_BINARY(float, float, F) TF_BINARY(double, double, F)
TF_BINARY_FLOATING(EluGrad)
TF_BINARY_FLOATING(SeluGrad)
TF_BINARY_FLOATING(SoftplusGrad)
TF_BINARY_FLOATING(SoftsignGrad)
TF_BINARY_FLOATING(SigmoidGrad)
TF_BINARY_FLOATING(TanhGrad)
// The math family (eager/ops/math.cc); TruncateDiv runs Div's integer instantiations.
TF_BINARY_FLOATING(SquaredDifference)
TF_BINARY(int32_t, int32_t, SquaredDifference)
TF_BINARY(int64_t, int64_t, SquaredDifference)
TF_BINARY_FLOATING(DivNoNan)
TF_BINARY_FLOATING(Atan2)
TF_BINARY_FLOATING(Xlogy)
TF_BINARY_FLOATING(Xdivy)
TF_BINARY_FLOATING(TruncateMod)
TF_BINARY(int32_t, int32_t, TruncateMod)
TF_BINARY(int64_t, int64_t, TruncateMod)
#undef TF_BINARY_FLOATING
#undef TF_BINARY_COMPARE
#undef TF_BINARY_ARITH
#undef TF_BINARY

}  // namespace tapeflow::cuda
