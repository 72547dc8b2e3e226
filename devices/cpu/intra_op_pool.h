// A CPU device's own intra-op pool. CPU:0 uses the process-wide pool (devices/cpu/thread_pool.h);
// each further CPU device of a process (SessionOptions::device_count["CPU"] = N) has one of its
// own, so kernels of two devices split their work over separate threads.
//
//   std::shared_ptr<IntraOpPool> pool = make_intra_op_pool(2);
//   {
//     ScopedIntraOpPool use(pool.get());   // this thread's parallel_for now uses `pool`
//     run_kernel(...);
//   }
//
// The pool a thread uses is thread-local; a null pool means the process-wide one. A pool must
// outlive every scope that uses it (DeviceManager keeps device pools for the whole process).
#pragma once

#include <memory>

namespace tapeflow {

struct IntraOpPool;

// A pool of `threads` threads of work (the caller runs one block, so threads - 1 workers).
std::shared_ptr<IntraOpPool> make_intra_op_pool(int threads);
int intra_op_pool_threads(const IntraOpPool& pool);

// Makes `pool` this thread's intra-op pool while alive (null: the process-wide pool).
class ScopedIntraOpPool {
 public:
  explicit ScopedIntraOpPool(IntraOpPool* pool);
  ~ScopedIntraOpPool();
  ScopedIntraOpPool(const ScopedIntraOpPool&) = delete;
  ScopedIntraOpPool& operator=(const ScopedIntraOpPool&) = delete;

 private:
  IntraOpPool* previous_;
};

}  // namespace tapeflow
