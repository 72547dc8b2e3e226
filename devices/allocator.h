// Allocator: device memory with statistics. Every buffer is 64-byte aligned.
//
// CachingAllocator keeps freed blocks by size and hands them out again, so an eager loop
// that allocates same-sized outputs each step touches warm pages instead of page-faulting
// fresh ones (see Note [Buffer reuse] in allocator.cc). Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace tapeflow {

inline constexpr size_t kBufferAlignment = 64;

struct AllocatorStats {
  int64_t num_allocs = 0;          // allocate() calls served
  int64_t bytes_in_use = 0;        // handed out and not yet freed
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_cached = 0;        // freed, kept for reuse
  int64_t cache_hits = 0;          // allocations served from the cache
  std::string to_string() const;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string name() const = 0;
  // Returns nullptr when memory is exhausted (the caller reports ResourceExhausted).
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;
  virtual AllocatorStats stats() const = 0;
  // Starts a new peak measurement: peak_bytes_in_use becomes bytes_in_use.
  virtual void reset_peak() {}
  // Returns cached blocks to the system.
  virtual void release_cache() {}
};

// Caches freed blocks of the raw allocator given by the two hooks (host memory by default).
// The hooks are std::function so a device allocator can capture its device index.
class CachingAllocator : public Allocator {
 public:
  using RawAlloc = std::function<void*(size_t bytes)>;
  using RawFree = std::function<void(void* ptr)>;
  // max_cached_bytes bounds what is kept; limit_bytes (0 = none) bounds bytes in use.
  explicit CachingAllocator(std::string name, size_t max_cached_bytes = size_t{1} << 31,
                            RawAlloc raw_alloc = nullptr, RawFree raw_free = nullptr);
  ~CachingAllocator() override;

  std::string name() const override { return name_; }
  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  AllocatorStats stats() const override;
  void reset_peak() override;
  void release_cache() override;
  void set_limit(size_t limit_bytes);
  // True when this build poisons cached host blocks for AddressSanitizer (Note [Poisoned cache]).
  static bool poisons_cached_blocks();

 private:
  // A test-and-test-and-set lock: every critical section here is a few loads and stores, and an
  // uncontended std::mutex costs more than the work it guards on a 1-element op.
  class SpinLock {
   public:
    void lock();
    void unlock() { locked_.store(false, std::memory_order_release); }
   private:
    std::atomic<bool> locked_{false};
  };
  using Lock = std::lock_guard<SpinLock>;
  // Freed blocks of one rounded size. Sizes up to kSmallBlockLimit index an array directly;
  // larger ones go through the map.
  static constexpr size_t kSmallBlockLimit = size_t{64} << 10;
  std::vector<void*>& blocks_of(size_t rounded) {
    return rounded <= kSmallBlockLimit ? small_blocks_[rounded / kBufferAlignment - 1] : large_blocks_[rounded];
  }

  std::string name_;
  size_t max_cached_bytes_;
  bool host_memory_;  // the default hooks (declared first: set before the hooks are moved in)
  RawAlloc raw_alloc_;
  RawFree raw_free_;
  mutable SpinLock mu_;
  AllocatorStats stats_;
  size_t limit_bytes_ = 0;
  std::array<std::vector<void*>, kSmallBlockLimit / kBufferAlignment> small_blocks_;
  absl::flat_hash_map<size_t, std::vector<void*>> large_blocks_;  // rounded size -> blocks
};

}  // namespace tapeflow
