// The executor: intermediates freed after their last use, elementwise ops writing into dying
// buffers, independent nodes on several threads, and one kernel path shared with eager.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include <set>

#include "tapeflow.h"

namespace tapeflow {
namespace {

TEST(ExecutorTest, IntermediatesAreFreedAfterTheirLastUse) {
  constexpr int64_t kN = 1 << 21;  // 8 MB of float32 per tensor
  constexpr int64_t kBytes = kN * 4;
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {kN}, "x");
    y = x;
    // reduce-then-broadcast steps are not elementwise, so each allocates a new buffer.
    for (int i = 0; i < 10; ++i) y = y * 1.5f + reduce_mean(y);
  }
  Tensor input = ones({kN});
  SessionOptions options;
  options.inter_op_parallelism_threads = 1;
  Session sess(g, options);
  Allocator* alloc = DeviceManager::global().cpu(0)->allocator();
  alloc->reset_peak();
  const int64_t before = alloc->stats().bytes_in_use;
  Tensor out = sess.run(y, {{x, input}});
  const int64_t peak = alloc->stats().peak_bytes_in_use - before;
  // 20 big intermediates are made; at most the live ones (input excluded) plus the result.
  EXPECT_LE(peak, 3 * kBytes);
  EXPECT_GE(peak, kBytes);
  // Every element stays equal, so each step is y * 1.5 + y = 2.5 y: 2.5^10 after ten.
  EXPECT_NEAR(out.at<float>({0}), std::pow(2.5, 10), 1e-5 * std::pow(2.5, 10));
  EXPECT_FLOAT_EQ(out.at<float>({0}), out.at<float>({kN - 1}));
  EXPECT_FLOAT_EQ(out.at<float>({kN / 2}), out.at<float>({0}));
}

TEST(ExecutorTest, ElementwiseChainsReuseOneBuffer) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {1000}, "x");
    y = relu(x * 2.f + 1.f) - 3.f;
  }
  SessionOptions options;
  options.inter_op_parallelism_threads = 1;
  Session sess(g, options);
  Tensor input = ones({1000});
  sess.run(y, {{x, input}});  // compiles the plan
  Allocator* alloc = DeviceManager::global().cpu(0)->allocator();
  const int64_t allocs_before = alloc->stats().num_allocs;
  Tensor out = sess.run(y, {{x, input}});
  EXPECT_EQ(alloc->stats().num_allocs - allocs_before, 1);  // x*2 allocates; the rest write in place
  EXPECT_FLOAT_EQ(out.at<float>({0}), 0.f);
  EXPECT_FLOAT_EQ(input.at<float>({0}), 1.f);  // the fed tensor is never written
}

TEST(ExecutorTest, IndependentNodesRunOnSeveralThreads) {
  Graph g;
  std::vector<Tensor> branches;
  Tensor x;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {256, 256}, "x");
    for (int i = 0; i < 8; ++i) branches.push_back(matmul(x, x * static_cast<float>(i)));
  }
  SessionOptions session_options;
  session_options.inter_op_parallelism_threads = 4;
  Session sess(g, session_options);
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  Tensor input = random_uniform({256, 256}, 0.0, 1.0, DType::kFloat32, 1);
  std::set<size_t> threads;
  for (int attempt = 0; attempt < 20 && threads.size() < 2; ++attempt) {
    RunMetadata md;
    std::vector<Fetch> fetches(branches.begin(), branches.end());
    auto out = sess.run(fetches, {{x, input}}, {}, &options, &md);
    for (const NodeExecStats& n : md.step_stats.nodes)
      if (n.op == "MatMul") threads.insert(n.thread_id);
    for (int i = 0; i < 8; ++i) {
      Tensor expected = matmul(input, input * static_cast<float>(i));
      ASSERT_EQ(out[i].to_vector<float>(), expected.to_vector<float>()) << "branch " << i;
    }
  }
  EXPECT_GE(threads.size(), 2u);
}

}  // namespace
}  // namespace tapeflow

namespace tapeflow {
namespace {

TEST(ExecutorTest, LargeElementwiseChainsRunFusedOverTiles) {
  constexpr int64_t kN = 100'003;  // not a multiple of the tile: the last tile is short
  Graph g;
  Tensor x, w, y, side;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {kN}, "x");
    w = placeholder(DType::kFloat32, {kN}, "w");
    y = relu(x * w + 0.5f) - 1.f;  // Mul, Add, Maximum, Sub: one fused chain
    side = x * 3.f;                  // x is also read elsewhere: not part of the chain
  }
  Tensor xv = random_uniform({kN}, -1.0, 1.0, DType::kFloat32, 1);
  Tensor wv = random_uniform({kN}, -1.0, 1.0, DType::kFloat32, 2);
  Session sess(g);
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata md;
  auto out = sess.run({y, side}, {{x, xv}, {w, wv}}, {}, &options, &md);
  EXPECT_EQ(out[0].to_vector<float>(), (relu(xv * wv + 0.5f) - 1.f).to_vector<float>());
  EXPECT_EQ(out[1].to_vector<float>(), (xv * 3.f).to_vector<float>());
  EXPECT_EQ(out[0].shape(), Shape({kN}));
}

TEST(ExecutorTest, FusedChainsBroadcastABiasOverRows) {
  Graph g;
  Tensor x, y;
  Tensor w = random_uniform({300}, -1.0, 1.0, DType::kFloat32, 3);
  Tensor b = random_uniform({300}, -1.0, 1.0, DType::kFloat32, 4);
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, 300}, "x");
    y = relu(x * w + b);
  }
  Tensor xv = random_uniform({701, 300}, -1.0, 1.0, DType::kFloat32, 5);  // 210,300 elements
  Session sess(g);
  EXPECT_EQ(sess.run(y, {{x, xv}}).to_vector<float>(), relu(xv * w + b).to_vector<float>());
}

}  // namespace
}  // namespace tapeflow
