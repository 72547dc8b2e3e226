#include "devices/allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

namespace tapeflow {
namespace {

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kBufferAlignment == 0; }

TEST(AllocatorTest, StatsCountAllocationsInRoundedBytes) {
  CachingAllocator a("test");
  EXPECT_EQ(a.name(), "test");
  void* p = a.allocate(100);  // rounded up to 128
  void* q = a.allocate(64);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.bytes_in_use, 128 + 64);
  EXPECT_EQ(s.peak_bytes_in_use, 192);
  EXPECT_EQ(s.cache_hits, 0);
  a.deallocate(p, 100);
  s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 64);
  EXPECT_EQ(s.peak_bytes_in_use, 192);  // the peak stays
  EXPECT_EQ(s.bytes_cached, 128);
  a.deallocate(q, 64);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  EXPECT_EQ(a.stats().to_string(), "allocs=2 in_use=0 peak=192 cached=192 cache_hits=0");
}

TEST(AllocatorTest, EveryBufferIs64ByteAligned) {
  CachingAllocator a("test");
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{3}, size_t{63}, size_t{65}, size_t{1000}, size_t{1} << 20}) {
    void* p = a.allocate(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_TRUE(aligned(p)) << bytes << " bytes at " << p;
    blocks.emplace_back(p, bytes);
  }
  EXPECT_EQ(a.stats().bytes_in_use, 64 + 64 + 64 + 64 + 128 + 1024 + (1 << 20));
  for (auto [p, n] : blocks) a.deallocate(p, n);
  // Cached blocks come back aligned too.
  void* p = a.allocate(1000);
  EXPECT_TRUE(aligned(p));
  a.deallocate(p, 1000);
}

TEST(AllocatorTest, FreedBlocksAreReusedForTheSameRoundedSize) {
  CachingAllocator a("test");
  void* p = a.allocate(1000);
  a.deallocate(p, 1000);
  void* q = a.allocate(1020);  // same rounded size (1024): the cached block
  EXPECT_EQ(q, p);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.cache_hits, 1);
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.bytes_cached, 0);
  void* r = a.allocate(2000);  // another size: fresh memory
  EXPECT_NE(r, q);
  EXPECT_EQ(a.stats().cache_hits, 1);
  a.deallocate(q, 1020);
  a.deallocate(r, 2000);
  EXPECT_EQ(a.stats().bytes_cached, 1024 + 2048);
  a.release_cache();
  EXPECT_EQ(a.stats().bytes_cached, 0);
}

TEST(AllocatorTest, SmallAndLargeBlocksAreCachedBySize) {
  // Sizes up to 64 KiB sit in an array indexed by size, larger ones in a map: both reuse.
  CachingAllocator a("test");
  const size_t sizes[] = {1, 65, 64 << 10, (64 << 10) + 1, 1 << 20};  // distinct rounded sizes
  std::vector<void*> first;
  for (size_t n : sizes) first.push_back(a.allocate(n));
  for (size_t i = 0; i < first.size(); ++i) a.deallocate(first[i], sizes[i]);
  const int64_t cached = a.stats().bytes_cached;
  EXPECT_EQ(cached, 64 + 128 + (64 << 10) + (64 << 10) + 64 + (1 << 20));
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(a.allocate(sizes[i]), first[i]) << sizes[i];
  EXPECT_EQ(a.stats().cache_hits, 5);
  EXPECT_EQ(a.stats().bytes_cached, 0);
  for (size_t i = 0; i < first.size(); ++i) a.deallocate(first[i], sizes[i]);
  a.release_cache();
  EXPECT_EQ(a.stats().bytes_cached, 0);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
}

TEST(AllocatorTest, LimitReturnsNullptrAndLeavesStatsAlone) {
  CachingAllocator a("test");
  a.set_limit(256);
  void* p = a.allocate(200);  // 256 bytes: exactly the limit
  ASSERT_NE(p, nullptr);
  const AllocatorStats before = a.stats();
  EXPECT_EQ(a.allocate(1), nullptr);
  const AllocatorStats after = a.stats();
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  EXPECT_EQ(after.bytes_in_use, 256);
  EXPECT_EQ(after.peak_bytes_in_use, 256);
  a.deallocate(p, 200);
  void* q = a.allocate(128);  // room again
  EXPECT_NE(q, nullptr);
  a.deallocate(q, 128);
  a.set_limit(0);  // no limit
  void* big = a.allocate(1 << 20);
  EXPECT_NE(big, nullptr);
  a.deallocate(big, 1 << 20);
}

TEST(AllocatorTest, CacheIsBoundedByMaxCachedBytes) {
  CachingAllocator none("none", /*max_cached_bytes=*/0);
  void* p = none.allocate(64);
  none.deallocate(p, 64);
  EXPECT_EQ(none.stats().bytes_cached, 0);
  none.deallocate(none.allocate(64), 64);
  EXPECT_EQ(none.stats().cache_hits, 0);

  CachingAllocator small("small", /*max_cached_bytes=*/128);
  void* a = small.allocate(128);
  void* b = small.allocate(128);
  small.deallocate(a, 128);
  small.deallocate(b, 128);  // would pass the bound: freed to the system
  EXPECT_EQ(small.stats().bytes_cached, 128);
}

// A raw allocator that counts, and fails on request, to see what reaches the system.
struct RawCounter {
  static inline int allocs = 0, frees = 0;
  static inline bool fail = false;
  static void* alloc(size_t bytes) {
    if (fail) return nullptr;
    ++allocs;
    return std::aligned_alloc(kBufferAlignment, bytes);
  }
  static void free(void* p) { ++frees; std::free(p); }
};

TEST(AllocatorTest, RawHooksAndExhaustion) {
  RawCounter::allocs = RawCounter::frees = 0;
  RawCounter::fail = false;
  {
    CachingAllocator a("raw", size_t{1} << 20, &RawCounter::alloc, &RawCounter::free);
    void* p = a.allocate(64);
    a.deallocate(p, 64);
    a.deallocate(a.allocate(64), 64);  // a cache hit: no system call
    EXPECT_EQ(RawCounter::allocs, 1);
    EXPECT_EQ(RawCounter::frees, 0);
    a.release_cache();
    EXPECT_EQ(RawCounter::frees, 1);

    // The system is out of memory: nullptr, and the stats as they were.
    void* keep = a.allocate(64);
    const AllocatorStats before = a.stats();
    RawCounter::fail = true;
    EXPECT_EQ(a.allocate(4096), nullptr);
    RawCounter::fail = false;
    const AllocatorStats after = a.stats();
    EXPECT_EQ(after.num_allocs, before.num_allocs);
    EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
    EXPECT_EQ(after.peak_bytes_in_use, before.peak_bytes_in_use);
    a.deallocate(keep, 64);
  }
  // The destructor returns the cache to the system.
  EXPECT_EQ(RawCounter::frees, RawCounter::allocs);
}

TEST(AllocatorTest, ConcurrentUseKeepsStatsConsistent) {
  CachingAllocator a("threads");
  constexpr int kThreads = 4, kIters = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&a, t] {
      for (int i = 0; i < kIters; ++i) {
        const size_t bytes = 64 * (1 + (i + t) % 4);
        void* p = a.allocate(bytes);
        static_cast<char*>(p)[bytes - 1] = 1;
        a.deallocate(p, bytes);
      }
    });
  }
  for (auto& th : threads) th.join();
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_allocs, kThreads * kIters);
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_LE(s.peak_bytes_in_use, kThreads * 256);
  EXPECT_GT(s.cache_hits, 0);
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {
// Note [Poisoned cache]: under AddressSanitizer, reading a buffer after it went back to the cache
// is reported as a use-after-poison; elsewhere the cache is plain memory.
TEST(AllocatorTest, CachedBlocksArePoisonedUnderAddressSanitizer) {
#if defined(__SANITIZE_ADDRESS__)
  ASSERT_TRUE(CachingAllocator::poisons_cached_blocks());
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        CachingAllocator a("test");
        auto* p = static_cast<volatile float*>(a.allocate(256));
        p[3] = 1.f;
        a.deallocate(const_cast<float*>(p), 256);  // cached, poisoned
        (void)p[3];                                // a use after free of tensor data
      },
      "use-after-poison");
  CachingAllocator a("test");
  void* p = a.allocate(256);
  a.deallocate(p, 256);
  float* q = static_cast<float*>(a.allocate(256));  // handed out again: usable
  EXPECT_EQ(static_cast<void*>(q), p);
  q[3] = 2.f;
  EXPECT_EQ(q[3], 2.f);
  a.deallocate(q, 256);
#else
  EXPECT_FALSE(CachingAllocator::poisons_cached_blocks());
  GTEST_SKIP() << "poisoning needs an AddressSanitizer build (the asan preset runs this test)";
#endif
}
}  // namespace
}  // namespace tapeflow
