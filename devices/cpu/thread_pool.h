// The intra-op thread pool CPU kernels share (Eigen's ThreadPool), and parallel_for.
//
//   parallel_for(n, /*cost_per_element=*/1, [&](int64_t begin, int64_t end) { ... });
//
// Small work runs inline on the caller; large work is split into one block per thread.
// The default thread count is the number of hardware threads; set_intra_op_threads changes
// it (call it while no kernel is running).
#pragma once

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace Eigen { class ThreadPoolDevice; }

namespace tapeflow {

int intra_op_threads();
void set_intra_op_threads(int n);

// Below this many cycles of work, threading costs more than it saves.
inline constexpr int64_t kMinCostPerBlock = int64_t{1} << 16;

// Splits [0, n) into one block per thread; parallel_for calls it for work worth splitting.
void parallel_for_blocks(int64_t n, int64_t cost_per_element,
                         absl::FunctionRef<void(int64_t begin, int64_t end)> fn);

// cost_per_element: rough cycles per element, so cheap ops need more elements to split.
// Inline so small work (most eager ops on small tensors) calls fn directly, with no
// type-erased call in between.
template <typename Fn>
inline void parallel_for(int64_t n, int64_t cost_per_element, Fn&& fn) {
  if (n <= 0) return;
  if (n * (cost_per_element > 1 ? cost_per_element : 1) < 2 * kMinCostPerBlock) {
    fn(int64_t{0}, n);
    return;
  }
  parallel_for_blocks(n, cost_per_element, fn);
}

// Eigen's device over the same pool, for Eigen-evaluated kernels (matrix products).
const Eigen::ThreadPoolDevice& eigen_thread_pool_device();

}  // namespace tapeflow
