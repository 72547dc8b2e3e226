// Launchers of the CUDA elementwise kernels. The kernels and the explicit instantiations of
// these templates live in unary.cu and binary.cu; the kernel wrappers that read a
// KernelContext (elementwise.cc) are plain C++, so nvcc never parses Abseil or Eigen and only
// the two .cu files need it.
//
// Each launcher enqueues on `stream` and returns the launch's cudaError_t as an int (0 is
// success); n > 0. F is a functor from devices/functors.h.
#pragma once

#include <cstdint>

#include "devices/cuda/broadcast_index.h"

struct CUstream_st;

namespace tapeflow::cuda {

inline constexpr int kBlockSize = 256;

// Blocks for a grid-stride loop over n elements: enough to fill any current GPU, capped so
// huge tensors loop instead of launching millions of blocks.
inline unsigned grid_size(int64_t n) {
  constexpr int64_t kMaxBlocks = 8192;
  const int64_t blocks = (n + kBlockSize - 1) / kBlockSize;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

// y[i] = F(x[i]).
template <typename T, typename F>
int launch_unary(CUstream_st* stream, const T* x, T* y, int64_t n);

// y[i] = F(x[i]) as a bool (IsNan, IsInf, IsFinite).
template <typename T, typename F>
int launch_predicate(CUstream_st* stream, const T* x, bool* y, int64_t n);

// z[i] = F(x[off0], y[off1]) with the offsets of output element i from idx.
template <typename T, typename Out, typename F>
int launch_binary(CUstream_st* stream, const T* x, const T* y, Out* z, int64_t n, const BroadcastIndexer<2>& idx);

}  // namespace tapeflow::cuda
