#include "core/small_object_pool.h"

#include <cstdint>

namespace tapeflow::internal {

namespace {

constexpr size_t kClasses = kMaxPooledBytes / kPoolGranule;
constexpr int32_t kMaxPooledPerClass = 4096;

struct FreeBlock {
  FreeBlock* next;
};

struct ThreadLists {
  FreeBlock* heads[kClasses] = {};
  int32_t counts[kClasses] = {};
  ~ThreadLists();
};

// Note [Pool TLS]: the hot path reads one trivially destructible pointer (no guard variable to
// check). The initial-exec TLS model would make that read one instruction instead of a
// __tls_get_addr call, but a library loaded with dlopen (clang-repl does that) then fails with
// "cannot allocate memory in static TLS block": keep the default model. The library is built
// with TLS descriptors instead (Note [TLS descriptors] in CMakeLists.txt), which make the read
// a short call that returns the offset, and still work under dlopen.
thread_local ThreadLists* t_lists = nullptr;
// Set when this thread's lists are gone: a tensor destroyed later in thread exit (a static, or
// another thread_local's destructor) frees its blocks straight to the system.
thread_local bool t_lists_gone = false;

ThreadLists::~ThreadLists() {
  t_lists = nullptr;
  t_lists_gone = true;
  for (FreeBlock*& head : heads) {
    while (head) {
      FreeBlock* next = head->next;
      ::operator delete(head);
      head = next;
    }
  }
}

ThreadLists* thread_lists() {
  if (ThreadLists* lists = t_lists) return lists;
  if (t_lists_gone) return nullptr;
  thread_local ThreadLists owner;
  t_lists = &owner;
  return t_lists;
}

size_t class_of(size_t bytes) { return (bytes + kPoolGranule - 1) / kPoolGranule - 1; }

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooling = false;  // AddressSanitizer sees every block's use after free
#else
constexpr bool kPooling = true;
#endif

void* pool_allocate(size_t bytes) {
  const size_t c = class_of(bytes);
  if (ThreadLists* lists = kPooling ? thread_lists() : nullptr) {
    if (FreeBlock* b = lists->heads[c]) {
      lists->heads[c] = b->next;
      --lists->counts[c];
      return b;
    }
  }
  // Rounded up to the class size so any block of a class can serve any request of that class.
  return ::operator new((c + 1) * kPoolGranule);
}

void pool_deallocate(void* p, size_t bytes) noexcept {
  const size_t c = class_of(bytes);
  if (ThreadLists* lists = kPooling ? thread_lists() : nullptr) {
    if (lists->counts[c] < kMaxPooledPerClass) {
      lists->heads[c] = new (p) FreeBlock{lists->heads[c]};
      ++lists->counts[c];
      return;
    }
  }
  ::operator delete(p);
}

size_t pooled_block_count() noexcept {
  if (t_lists == nullptr) return 0;
  size_t total = 0;
  for (int32_t count : t_lists->counts) total += static_cast<size_t>(count);
  return total;
}

}  // namespace tapeflow::internal
