// An allocator for the few large tables whose accesses are random: blocks of kHugePageMinBytes
// or more are aligned to 2 MiB and marked MADV_HUGEPAGE, so the kernel can back them with
// transparent huge pages ("madvise" is the usual THP setting, Debian's among them). With 4 KiB
// pages, each lookup in a table of several MiB is a TLB miss as well as a cache miss: for the
// graph's name tables of a 100k-node import (then 5 MB each) that was a third of the time spent
// adding its nodes (Note [Linear import], graph/graph_def_import.cc). A large block is rounded up to whole 2 MiB
// pages; smaller blocks come from std::allocator. Where THP is off the advice is ignored and the
// block is an ordinary one.
//
//   absl::flat_hash_set<uint64_t, Hash, Eq, HugePageAllocator<uint64_t>> slots;   // core/string_index.h
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace tapeflow {

namespace internal {
inline constexpr size_t kHugePageMinBytes = size_t{2} << 20;
void* huge_page_allocate(size_t bytes);  // throws std::bad_alloc
void huge_page_deallocate(void* p) noexcept;
}  // namespace internal

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n * sizeof(T) >= internal::kHugePageMinBytes) return static_cast<T*>(internal::huge_page_allocate(n * sizeof(T)));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) >= internal::kHugePageMinBytes) internal::huge_page_deallocate(p);
    else std::allocator<T>().deallocate(p, n);
  }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

}  // namespace tapeflow
