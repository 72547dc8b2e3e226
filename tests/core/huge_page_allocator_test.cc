// HugePageAllocator: large blocks are 2 MiB-aligned and usable end to end, small ones ordinary;
// a hash table built on it grows across the threshold and keeps its entries.
#include "core/huge_page_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"

namespace tapeflow {
namespace {

TEST(HugePageAllocatorTest, LargeBlocksAreHugePageAlignedAndWholeSmallOnesOrdinary) {
  HugePageAllocator<uint64_t> alloc;
  const size_t n = (size_t{5} << 20) / sizeof(uint64_t) + 3;  // not a multiple of 2 MiB
  uint64_t* large = alloc.allocate(n);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % (size_t{2} << 20), 0u);
  for (size_t i = 0; i < n; ++i) large[i] = i * 7;
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += large[i] - i * 7;
  EXPECT_EQ(sum, 0u);
  alloc.deallocate(large, n);

  uint64_t* small = alloc.allocate(10);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % alignof(uint64_t), 0u);
  small[9] = 42;
  EXPECT_EQ(small[9], 42u);
  alloc.deallocate(small, 10);
}

TEST(HugePageAllocatorTest, AHashTableGrowsAcrossTheThresholdAndKeepsItsEntries) {
  absl::flat_hash_map<std::string, int, absl::Hash<std::string>, std::equal_to<std::string>,
                      HugePageAllocator<std::pair<const std::string, int>>>
      table;
  for (int i = 0; i < 200'000; ++i) table.emplace("node_" + std::to_string(i), i);  // slots pass 2 MiB
  ASSERT_EQ(table.size(), 200'000u);
  for (int i = 0; i < 200'000; i += 997) EXPECT_EQ(table.at("node_" + std::to_string(i)), i);
  EXPECT_FALSE(table.contains("node_200000"));
  table.clear();
  table.rehash(0);  // gives the large block back through deallocate
  EXPECT_TRUE(table.empty());
}

}  // namespace
}  // namespace tapeflow
