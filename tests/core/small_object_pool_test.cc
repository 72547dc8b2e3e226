#include "core/small_object_pool.h"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tapeflow {
namespace {

struct Payload {
  explicit Payload(int v) : value(v), text(std::to_string(v)) {}
  int value;
  std::string text;
};

#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer builds turn pooling off (to see use after free)
TEST(SmallObjectPoolTest, AFreedBlockIsHandedOutAgainOnTheSameThread) {
  void* p = internal::pool_allocate(48);
  internal::pool_deallocate(p, 48);
  EXPECT_EQ(internal::pool_allocate(40), p);  // 40 and 48 share the 48-byte class
  internal::pool_deallocate(p, 40);
}
#endif

TEST(SmallObjectPoolTest, SharedObjectsKeepTheirValues) {
  std::vector<std::shared_ptr<Payload>> objects;
  for (int i = 0; i < 1000; ++i) objects.push_back(std::allocate_shared<Payload>(PoolAllocator<Payload>(), i));
  objects.erase(objects.begin(), objects.begin() + 500);  // freed blocks are reused below
  for (int i = 1000; i < 1500; ++i) objects.push_back(std::allocate_shared<Payload>(PoolAllocator<Payload>(), i));
  for (size_t i = 0; i < objects.size(); ++i) {
    EXPECT_EQ(objects[i]->value, static_cast<int>(i) + 500);
    EXPECT_EQ(objects[i]->text, std::to_string(i + 500));
  }
}

TEST(SmallObjectPoolTest, BlocksMayBeFreedOnAnotherThreadAndAfterTheirThreadEnds) {
  std::vector<std::shared_ptr<Payload>> made;
  std::thread maker([&] {
    for (int i = 0; i < 100; ++i) made.push_back(std::allocate_shared<Payload>(PoolAllocator<Payload>(), i));
  });
  maker.join();  // the maker's free lists are gone; its objects live on
  for (int i = 0; i < 100; ++i) EXPECT_EQ(made[static_cast<size_t>(i)]->value, i);
  std::thread freer([&] { made.clear(); });  // freed into the freeing thread's lists
  freer.join();
  EXPECT_TRUE(made.empty());
}

TEST(SmallObjectPoolTest, LargeOrArrayRequestsGoToTheSystem) {
  // A pooled request, freed, waits in this thread's lists (unless pooling is off under ASan) ...
  PoolAllocator<int> ints;
  const size_t before = internal::pooled_block_count();
  int* one = ints.allocate(1);
  ints.deallocate(one, 1);
  const size_t after_one = internal::pooled_block_count();
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(after_one, before);
#else
  EXPECT_EQ(after_one, before + 1);
#endif
  // ... while a block too big for the classes, or an array, goes back to the system: the lists
  // do not grow, whatever the request's size rounds to.
  PoolAllocator<std::array<char, 512>> big;
  auto* p = big.allocate(1);
  p->fill('x');
  EXPECT_EQ((*p)[511], 'x');
  big.deallocate(p, 1);
  EXPECT_EQ(internal::pooled_block_count(), after_one);
  int* arr = ints.allocate(10);
  for (int i = 0; i < 10; ++i) arr[i] = i;
  EXPECT_EQ(arr[9], 9);
  ints.deallocate(arr, 10);
  EXPECT_EQ(internal::pooled_block_count(), after_one);
  PoolAllocator<char> chars;
  char* two = chars.allocate(2);  // 2 bytes would fit a class; arrays are never pooled
  chars.deallocate(two, 2);
  EXPECT_EQ(internal::pooled_block_count(), after_one);
}

}  // namespace
}  // namespace tapeflow
