#include "devices/cpu/thread_pool.h"

#define EIGEN_USE_THREADS
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "devices/cpu/intra_op_pool.h"

namespace tapeflow {

struct IntraOpPool {
  int threads;
  std::unique_ptr<Eigen::ThreadPool> pool;
  std::unique_ptr<Eigen::ThreadPoolDevice> device;
  explicit IntraOpPool(int n) : threads(n) {
    // The caller runs one block itself, so n threads of work need n - 1 pool workers.
    pool = std::make_unique<Eigen::ThreadPool>(std::max(1, n - 1));
    device = std::make_unique<Eigen::ThreadPoolDevice>(pool.get(), n);
  }
};

namespace {

using Pool = IntraOpPool;
// The pool of the device whose kernel this thread runs (devices/cpu/intra_op_pool.h); null: the
// process-wide pool.
thread_local Pool* thread_pool_override = nullptr;

std::mutex& pool_mutex() { static std::mutex mu; return mu; }
// Replaced pools are kept alive (never freed) so a kernel racing with set_intra_op_threads
// never touches a destroyed pool; they are few and small.
std::atomic<Pool*>& current_pool() { static std::atomic<Pool*> p{nullptr}; return p; }

Pool& get_pool() {
  Pool* p = current_pool().load(std::memory_order_acquire);  // lock-free on the hot path
  if (p) return *p;
  std::lock_guard<std::mutex> lock(pool_mutex());
  p = current_pool().load(std::memory_order_acquire);
  if (!p) {
    p = new Pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    current_pool().store(p, std::memory_order_release);
  }
  return *p;
}

// The pool this thread's kernels use.
Pool& active_pool() { return thread_pool_override ? *thread_pool_override : get_pool(); }

}  // namespace

std::shared_ptr<IntraOpPool> make_intra_op_pool(int threads) { return std::make_shared<IntraOpPool>(std::max(1, threads)); }
int intra_op_pool_threads(const IntraOpPool& pool) { return pool.threads; }
ScopedIntraOpPool::ScopedIntraOpPool(IntraOpPool* pool) : previous_(thread_pool_override) { thread_pool_override = pool; }
ScopedIntraOpPool::~ScopedIntraOpPool() { thread_pool_override = previous_; }

int intra_op_threads() { return active_pool().threads; }

void set_intra_op_threads(int n) {
  n = std::max(1, n);
  std::lock_guard<std::mutex> lock(pool_mutex());
  static std::vector<Pool*>* retired = new std::vector<Pool*>();  // reachable, not leaked
  if (Pool* old = current_pool().load()) retired->push_back(old);
  current_pool().store(new Pool(n), std::memory_order_release);
}

namespace {

// Note [Waking the pool]: on these machines (2 vCPUs under a hypervisor) a thread asleep in a
// futex takes ~80 us to wake. Measured with the eager matmul of the MLP step (64x784 by
// 784x256, split over 2 threads): 127 us when the pool's worker was still awake from the previous
// product, 209 us after a 200 us pause, when Eigen's pool had put it to sleep; a step of several
// products pays that each time. So a worker that finishes its block polls for the next
// parallel_for for up to kLingerMicros before it returns to Eigen's pool (where it would sleep),
// and the caller, done with its own block, polls for the others for up to kSpinWaitMicros before
// it blocks.
constexpr auto kLingerMicros = std::chrono::microseconds(500);
constexpr auto kSpinWaitMicros = std::chrono::microseconds(300);

// Bumped by each parallel_for_blocks before it schedules: the end of a lingering worker's wait.
std::atomic<uint64_t> work_epoch{0};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `done` until it holds or `limit` passes; true when it held. After the first
// kPauseMicros it yields between polls, so that a thread waiting for this CPU (an inter-op
// thread, another process) gets it.
constexpr auto kPauseMicros = std::chrono::microseconds(20);
template <typename Done>
bool poll_for(std::chrono::microseconds limit, Done done) {
  const auto start = std::chrono::steady_clock::now();
  bool yielding = false;
  for (int i = 1;; ++i) {
    if (done()) return true;
    if (yielding) std::this_thread::yield();
    else cpu_relax();
    if (yielding || i % 64 == 0) {  // a yield costs more than a clock read
      const auto waited = std::chrono::steady_clock::now() - start;
      if (waited >= limit) return false;
      yielding = waited >= kPauseMicros;
    }
  }
}

}  // namespace

void parallel_for_blocks(int64_t n, int64_t cost_per_element,
                         absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  const int64_t total_cost = n * std::max<int64_t>(1, cost_per_element);
  if (total_cost < 2 * kMinCostPerBlock) { fn(0, n); return; }  // too small to split
  Pool& pool = active_pool();
  // Nested in a pool task (a batched product whose entries split again): run inline. A worker
  // that queued blocks and waited for them could wait on its own queue for ever.
  if (pool.pool->CurrentThreadId() != -1) { fn(0, n); return; }
  const int64_t blocks = std::min<int64_t>({pool.threads, total_cost / kMinCostPerBlock, n});
  if (blocks <= 1) { fn(0, n); return; }
  const int64_t per_block = (n + blocks - 1) / blocks;
  Eigen::Barrier barrier(static_cast<unsigned>(blocks - 1));
  std::atomic<int64_t> finished{0};
  const uint64_t epoch = work_epoch.fetch_add(1, std::memory_order_acq_rel) + 1;
  for (int64_t b = 1; b < blocks; ++b) {
    const int64_t begin = b * per_block, end = std::min(n, begin + per_block);
    pool.pool->Schedule([&fn, &barrier, &finished, begin, end, epoch] {
      if (begin < end) fn(begin, end);
      finished.fetch_add(1, std::memory_order_release);
      barrier.Notify();  // the last touch of the caller's frame: it may return from here on
      poll_for(kLingerMicros, [epoch] { return work_epoch.load(std::memory_order_acquire) != epoch; });
    });
  }
  fn(0, std::min(n, per_block));
  poll_for(kSpinWaitMicros, [&] { return finished.load(std::memory_order_acquire) == blocks - 1; });
  barrier.Wait();  // returns at once when every block has notified
}

const Eigen::ThreadPoolDevice& eigen_thread_pool_device() { return *active_pool().device; }

}  // namespace tapeflow
