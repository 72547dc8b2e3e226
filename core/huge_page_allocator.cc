#include "core/huge_page_allocator.h"

#include <sys/mman.h>

#include <cstdlib>

namespace tapeflow::internal {

void* huge_page_allocate(size_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;  // aligned_alloc wants a multiple
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
  ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: a failure leaves ordinary pages
  return p;
}

void huge_page_deallocate(void* p) noexcept { std::free(p); }

}  // namespace tapeflow::internal
