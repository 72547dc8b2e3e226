#include "devices/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"

namespace tapeflow {

// Note [Buffer reuse]: a fresh 64 MB block from the system page-faults on first touch, which
// costs more than the elementwise kernel writing it. Keeping freed blocks keyed by their
// rounded size means a steady-state eager loop reuses warm memory. The cache is bounded by
// max_cached_bytes and released on demand.

// Note [Poisoned cache]: a cached block is memory the program freed, but to AddressSanitizer it
// is still a live allocation, so a use-after-free of tensor data through the in-place and
// buffer-reuse paths would go unseen. Under ASan a host block is poisoned when it enters the
// cache and unpoisoned when it is handed out again (or returned to the system); device memory
// is never touched.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define TF_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define TF_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
constexpr bool kPoisonCache = true;
#else
#define TF_POISON(p, n) ((void)(p), (void)(n))
#define TF_UNPOISON(p, n) ((void)(p), (void)(n))
constexpr bool kPoisonCache = false;
#endif

namespace {
size_t round_up(size_t bytes) {
  if (bytes == 0) bytes = 1;
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}
void* host_alloc(size_t bytes) { return std::aligned_alloc(kBufferAlignment, bytes); }
void host_free(void* p) { std::free(p); }
}  // namespace

std::string AllocatorStats::to_string() const {
  return absl::StrCat("allocs=", num_allocs, " in_use=", bytes_in_use, " peak=", peak_bytes_in_use,
                      " cached=", bytes_cached, " cache_hits=", cache_hits);
}

CachingAllocator::CachingAllocator(std::string name, size_t max_cached_bytes, RawAlloc raw_alloc,
                                   RawFree raw_free)
    : name_(std::move(name)),
      max_cached_bytes_(max_cached_bytes),
      host_memory_(!raw_alloc && !raw_free),
      raw_alloc_(raw_alloc ? std::move(raw_alloc) : RawAlloc(host_alloc)),
      raw_free_(raw_free ? std::move(raw_free) : RawFree(host_free)) {}

bool CachingAllocator::poisons_cached_blocks() { return kPoisonCache; }

CachingAllocator::~CachingAllocator() { release_cache(); }

void CachingAllocator::SpinLock::lock() {
  for (int spins = 0;; ++spins) {
    if (!locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire)) return;
    if (spins >= 64) std::this_thread::yield();  // the holder may be descheduled
  }
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t size = round_up(bytes);
  {
    Lock lock(mu_);
    if (limit_bytes_ && stats_.bytes_in_use + static_cast<int64_t>(size) > static_cast<int64_t>(limit_bytes_))
      return nullptr;
    ++stats_.num_allocs;
    stats_.bytes_in_use += size;  // reserved now so the limit holds; the peak only on success
    std::vector<void*>& blocks = blocks_of(size);
    if (!blocks.empty()) {
      void* p = blocks.back();
      blocks.pop_back();
      stats_.bytes_cached -= size;
      ++stats_.cache_hits;
      stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
      if (host_memory_) TF_UNPOISON(p, size);
      return p;
    }
  }
  void* p = raw_alloc_(size);
  if (p == nullptr) {
    // Give the cache back to the system and try once more before reporting exhaustion.
    release_cache();
    p = raw_alloc_(size);
  }
  Lock lock(mu_);
  if (p == nullptr) {
    --stats_.num_allocs;
    stats_.bytes_in_use -= size;
  } else {
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  }
  return p;
}

void CachingAllocator::deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  const size_t size = round_up(bytes);
  {
    Lock lock(mu_);
    stats_.bytes_in_use -= size;
    if (stats_.bytes_cached + static_cast<int64_t>(size) <= static_cast<int64_t>(max_cached_bytes_)) {
      blocks_of(size).push_back(ptr);
      stats_.bytes_cached += size;
      if (host_memory_) TF_POISON(ptr, size);
      return;
    }
  }
  raw_free_(ptr);
}

AllocatorStats CachingAllocator::stats() const {
  Lock lock(mu_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  Lock lock(mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

void CachingAllocator::release_cache() {
  std::vector<void*> blocks;
  {
    Lock lock(mu_);
    for (std::vector<void*>& list : small_blocks_) {
      blocks.insert(blocks.end(), list.begin(), list.end());
      list.clear();
    }
    for (auto& [size, list] : large_blocks_) blocks.insert(blocks.end(), list.begin(), list.end());
    large_blocks_.clear();
    stats_.bytes_cached = 0;
  }
  for (void* p : blocks) raw_free_(p);  // free() takes poisoned blocks back (ASan repoisons them)
}

void CachingAllocator::set_limit(size_t limit_bytes) {
  Lock lock(mu_);
  limit_bytes_ = limit_bytes;
}

}  // namespace tapeflow
