// parallel_for: every element is visited exactly once, whoever runs the blocks (the caller or
// the pool's workers), from one caller or several at once.
#include "devices/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace tapeflow {
namespace {

// Large enough to split into one block per thread (the cost per element says so).
constexpr int64_t kElements = 1 << 16;
constexpr int64_t kCost = 64;

// Adds 1 to each element of `counts` through parallel_for; every count must end as `expected`.
void visit_each_once(std::vector<int>& counts) {
  parallel_for(static_cast<int64_t>(counts.size()), kCost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ++counts[static_cast<size_t>(i)];
  });
}

TEST(ParallelForTest, SmallWorkRunsInlineOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> ran_on;
  parallel_for(10, 1, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 10);
    ran_on.push_back(std::this_thread::get_id());
  });
  ASSERT_EQ(ran_on.size(), 1u);
  EXPECT_EQ(ran_on[0], caller);
}

TEST(ParallelForTest, LargeWorkVisitsEveryElementOnceAndUsesAnotherThread) {
  if (intra_op_threads() < 2) GTEST_SKIP() << "one intra-op thread: nothing to split";
  std::vector<int> counts(kElements, 0);
  std::atomic<int> other_threads{0};
  const std::thread::id caller = std::this_thread::get_id();
  parallel_for(kElements, kCost, [&](int64_t begin, int64_t end) {
    if (std::this_thread::get_id() != caller) ++other_threads;
    for (int64_t i = begin; i < end; ++i) ++counts[static_cast<size_t>(i)];
  });
  for (int c : counts) ASSERT_EQ(c, 1);
  EXPECT_GE(other_threads.load(), 1);
}

// A worker spins for a while after each block and then sleeps: work posted in either state
// (right away, and after it has surely gone to sleep) is done.
TEST(ParallelForTest, WorkIsDoneWhetherTheWorkersSpinOrSleep) {
  std::vector<int> counts(kElements, 0);
  for (int round = 0; round < 50; ++round) visit_each_once(counts);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  visit_each_once(counts);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  visit_each_once(counts);
  for (int c : counts) ASSERT_EQ(c, 52);
}

// The caller polls for the other blocks a while before it blocks (Note [Waking the pool]): a
// block that outlasts the polling, and one that ends within it, are both waited for.
TEST(ParallelForTest, TheCallerWaitsForBlocksSlowerThanItsPolling) {
  if (intra_op_threads() < 2) GTEST_SKIP() << "one intra-op thread: nothing to split";
  const std::thread::id caller = std::this_thread::get_id();
  for (const auto delay : {std::chrono::microseconds(50), std::chrono::microseconds(20'000)}) {
    std::atomic<int> slow_blocks_done{0}, slow_blocks{0};
    parallel_for(2, int64_t{1} << 30, [&](int64_t begin, int64_t end) {
      if (std::this_thread::get_id() == caller) return;
      ++slow_blocks;
      std::this_thread::sleep_for(delay);
      slow_blocks_done += static_cast<int>(end - begin);
    });
    EXPECT_EQ(slow_blocks.load(), 1) << "the second block runs on a worker";
    EXPECT_EQ(slow_blocks_done.load(), 1) << "returned before the worker's block ended (delay "
                                          << delay.count() << " us)";
  }
}

// Several callers at once (a Session's inter-op threads) share the pool; nobody's blocks are
// lost or run twice.
TEST(ParallelForTest, ConcurrentCallersEachGetTheirWholeRange) {
  constexpr int kCallers = 4, kRounds = 200;
  std::vector<std::vector<int>> counts(kCallers, std::vector<int>(kElements, 0));
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&counts, c] {
      for (int r = 0; r < kRounds; ++r) visit_each_once(counts[static_cast<size_t>(c)]);
    });
  for (std::thread& t : callers) t.join();
  for (const std::vector<int>& mine : counts)
    for (int v : mine) ASSERT_EQ(v, kRounds);
}

// A block that splits its own work again runs the inner loop inline on a pool worker instead of
// waiting on its own queue.
TEST(ParallelForTest, NestedCallsFinish) {
  std::vector<int> counts(kElements, 0);
  parallel_for(4, kElements * kCost, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t lo = part * kElements / 4, hi = (part + 1) * kElements / 4;
      parallel_for(hi - lo, kCost, [&](int64_t b, int64_t e) {
        for (int64_t i = lo + b; i < lo + e; ++i) ++counts[static_cast<size_t>(i)];
      });
    }
  });
  for (int c : counts) ASSERT_EQ(c, 1);
}

}  // namespace
}  // namespace tapeflow
