// Small-object pool: per-thread free lists of fixed-size blocks for the objects an eager op
// makes and drops on every call (a TensorImpl and a Buffer, each with its shared_ptr control
// block). Measured on the 1-element add: malloc + free of those two blocks cost about a fifth
// of the op; a free-list pop or push is a few instructions.
//
//   auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
//
// Blocks freed on another thread go to that thread's list (any thread may reuse any block).
// Each list keeps at most kMaxPooledPerClass blocks; the rest go back to the system, and a
// thread's lists are returned to the system when the thread ends.
#pragma once

#include <cstddef>
#include <new>

namespace tapeflow {

namespace internal {
inline constexpr size_t kPoolGranule = 16;
inline constexpr size_t kMaxPooledBytes = 256;
void* pool_allocate(size_t bytes);
void pool_deallocate(void* p, size_t bytes) noexcept;
// Blocks waiting in this thread's free lists, all classes together (tests observe the pool with it).
size_t pooled_block_count() noexcept;
}  // namespace internal

template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U> PoolAllocator(const PoolAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n == 1 && sizeof(T) <= internal::kMaxPooledBytes && alignof(T) <= alignof(std::max_align_t))
      return static_cast<T*>(internal::pool_allocate(sizeof(T)));
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1 && sizeof(T) <= internal::kMaxPooledBytes && alignof(T) <= alignof(std::max_align_t))
      internal::pool_deallocate(p, sizeof(T));
    else
      ::operator delete(p);
  }
  template <typename U> bool operator==(const PoolAllocator<U>&) const noexcept { return true; }
};

}  // namespace tapeflow
