// Graph-runtime benchmarks, each beside the reference it is judged against in the same run:
//   - a function of 200 small elementwise ops (mul, add, sub, relu in turn) on a 1-element
//     float32 tensor: run eagerly, and built once into a Graph and replayed with Session::run.
//     Both report "ns_per_op" (per function-level op; relu is a composite of one Maximum);
//   - y = relu(x * w + b) over 16M floats replayed in a Session, beside eager execution and a
//     std::memcpy of the same 64 MiB. bytes = x read + y written, the same count for all three,
//     so bytes_per_second reads as a ratio to memcpy (the target is >= 0.5x);
//   - chains of 10k and 100k Add nodes: graph building (ns per node), the first Session::run
//     (plan compile + run, ns per node) and later runs (ns per node);
//   - one MLP training step (batch 64, 784-256-10, relu, softmax cross-entropy, SGD): eager
//     with a GradientTape, and the same step traced with function() and replayed (target: the
//     replayed step at most 0.8x the eager one);
//   - tutorial 04's CNN forward pass, batch 64, eagerly and traced with function() and replayed;
//   - the 200-op function traced with function() and called (the tf.function path).
//
// Run: ./build/bench/graph_bench --benchmark_min_time=0.2
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_models.h"
#include "tapeflow.h"

namespace tf = tapeflow;
namespace bench = tapeflow_bench;

namespace {

using Clock = std::chrono::steady_clock;

// Wall time of the timed regions, for counters in plain nanoseconds (Google Benchmark's
// inverted-rate counters print seconds with an "s" unit, which reads badly for "ns_per_op").
struct Stopwatch {
  Clock::duration total{};
  Clock::time_point started;
  void start() { started = Clock::now(); }
  void stop() { total += Clock::now() - started; }
  // Nanoseconds per unit of work: total / (iterations * units).
  double ns_per(const benchmark::State& state, double units) const {
    const double ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(total).count());
    return ns / (static_cast<double>(state.iterations()) * units);
  }
};

// ---- 1. 200 small ops: eager vs a replayed graph ----

constexpr int kSmallOps = 200;

tf::Tensor small_ops(tf::Tensor x) {
  for (int i = 0; i < kSmallOps; ++i) {
    switch (i % 4) {
      case 0: x = x * 1.0001f; break;
      case 1: x = x + 0.5f; break;
      case 2: x = x - 0.25f; break;
      default: x = tf::relu(x); break;
    }
  }
  return x;
}

// Times `run` (one pass of the small-op function) and reports ns per op.
template <typename Run> void time_small_ops(benchmark::State& state, Run&& run) {
  Stopwatch sw;
  sw.start();
  for (auto _ : state) {
    tf::Tensor y = run();
    benchmark::DoNotOptimize(y);
  }
  sw.stop();
  state.counters["ns_per_op"] = sw.ns_per(state, kSmallOps);
}

void BM_SmallOps_Eager(benchmark::State& state) {
  tf::Tensor x = tf::Tensor({1.f});
  time_small_ops(state, [&] { return small_ops(x); });
}
BENCHMARK(BM_SmallOps_Eager)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_SmallOps_GraphSession(benchmark::State& state) {
  tf::Graph g;
  tf::Tensor x, y;
  {
    auto scope = g.as_default();
    x = tf::placeholder(tf::DType::kFloat32, {1}, "x");
    y = small_ops(x);
  }
  tf::SessionOptions options;
  options.inter_op_parallelism_threads = static_cast<int>(state.range(0));
  tf::Session sess(g, options);
  const tf::Tensor value = tf::Tensor({1.f});
  sess.run(y, {{x, value}});  // compiles the plan; the loop replays it
  Stopwatch sw;
  sw.start();
  for (auto _ : state) {
    tf::Tensor out = sess.run(y, {{x, value}});
    benchmark::DoNotOptimize(out);
  }
  sw.stop();
  state.counters["ns_per_op"] = sw.ns_per(state, kSmallOps);
  state.counters["graph_nodes"] = g.num_nodes();
}
// Arg: inter-op threads (0 = default, one per core; 1 = the caller's thread only).
BENCHMARK(BM_SmallOps_GraphSession)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

// ---- 2. relu(x * w + b) over 16M floats ----

constexpr int64_t kRows = 4096, kCols = 4096;                               // 16M floats, 64 MiB
constexpr int64_t kChainBytes = 2 * kRows * kCols * int64_t(sizeof(float));  // x read + y written

struct ReluChainData {
  tf::Tensor x = tf::random_uniform({kRows, kCols}, -1.f, 1.f, tf::DType::kFloat32, 3);
  tf::Tensor w = tf::random_uniform({kCols}, -1.f, 1.f, tf::DType::kFloat32, 4);
  tf::Tensor b = tf::random_uniform({kCols}, -1.f, 1.f, tf::DType::kFloat32, 5);
};

void BM_ReluChain_GraphSession(benchmark::State& state) {
  ReluChainData d;
  tf::Graph g;
  tf::Tensor x, y;
  {
    auto scope = g.as_default();
    x = tf::placeholder(tf::DType::kFloat32, {kRows, kCols}, "x");
    y = tf::relu(x * d.w + d.b);  // w and b become Const nodes sharing their buffers
  }
  tf::Session sess(g);
  sess.run(y, {{x, d.x}});
  for (auto _ : state) {
    tf::Tensor out = sess.run(y, {{x, d.x}});
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * kChainBytes);
}
BENCHMARK(BM_ReluChain_GraphSession)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ReluChain_Eager(benchmark::State& state) {
  ReluChainData d;
  { tf::Tensor warm = tf::relu(d.x * d.w + d.b); }  // fills the allocator's cache, as the graph's first run does
  for (auto _ : state) {
    tf::Tensor y = tf::relu(d.x * d.w + d.b);
    benchmark::DoNotOptimize(y);
  }
  state.SetBytesProcessed(state.iterations() * kChainBytes);
}
BENCHMARK(BM_ReluChain_Eager)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ReluChain_memcpy(benchmark::State& state) {
  std::vector<float> src(size_t(kRows * kCols), 1.f), dst(size_t(kRows * kCols));
  std::memcpy(dst.data(), src.data(), src.size() * sizeof(float));  // first touch of dst's pages
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size() * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * kChainBytes);
}
BENCHMARK(BM_ReluChain_memcpy)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- 3. large graphs: chains of adds ----

struct Chain {
  tf::Graph graph;
  tf::Tensor end;
};

Chain build_chain(int64_t nodes) {
  Chain c;
  auto scope = c.graph.as_default();
  tf::Tensor one = tf::constant(tf::Tensor(1.f), "one");
  tf::Tensor x = tf::constant(tf::Tensor(0.f), "start");
  for (int64_t i = 0; i < nodes; ++i) x = x + one;
  c.end = x;
  return c;
}

void BM_BigGraph_Build(benchmark::State& state) {
  const int64_t n = state.range(0);
  Stopwatch sw;
  for (auto _ : state) {
    sw.start();
    Chain c = build_chain(n);
    benchmark::DoNotOptimize(c.end);
    sw.stop();
    state.PauseTiming();
    c = Chain{};  // destroying the graph is not part of building it
    state.ResumeTiming();
  }
  state.counters["ns_per_node"] = sw.ns_per(state, static_cast<double>(n));
}
BENCHMARK(BM_BigGraph_Build)->Arg(10'000)->Arg(100'000)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_BigGraph_FirstRun(benchmark::State& state) {
  const int64_t n = state.range(0);
  Stopwatch sw;
  for (auto _ : state) {
    state.PauseTiming();
    std::optional<Chain> c = build_chain(n);
    std::optional<tf::Session> sess(std::in_place, c->graph);
    state.ResumeTiming();
    sw.start();
    tf::Tensor out = sess->run(c->end);
    benchmark::DoNotOptimize(out);
    sw.stop();
    state.PauseTiming();
    if (out.item<float>() != static_cast<float>(n)) state.SkipWithError("wrong sum");
    sess.reset();
    c.reset();
    state.ResumeTiming();
  }
  state.counters["ns_per_node"] = sw.ns_per(state, static_cast<double>(n));
}
BENCHMARK(BM_BigGraph_FirstRun)->Arg(10'000)->Arg(100'000)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_BigGraph_LaterRuns(benchmark::State& state) {
  const int64_t n = state.range(0);
  Chain c = build_chain(n);
  tf::Session sess(c.graph);
  if (sess.run(c.end).item<float>() != static_cast<float>(n)) state.SkipWithError("wrong sum");
  Stopwatch sw;
  sw.start();
  for (auto _ : state) {
    tf::Tensor out = sess.run(c.end);
    benchmark::DoNotOptimize(out);
  }
  sw.stop();
  state.counters["ns_per_node"] = sw.ns_per(state, static_cast<double>(n));
}
BENCHMARK(BM_BigGraph_LaterRuns)->Arg(10'000)->Arg(100'000)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- 4. the MLP training step, eager and traced ----

// The same step as tape_bench's (bench/bench_models.h), batch 64, 784-256-10. Compare the two
// with --benchmark_repetitions=8 --benchmark_enable_random_interleaving=true: interleaved
// repetitions see the same machine speed, where back-to-back runs drift apart on a shared host.
void BM_MlpStep_Eager(benchmark::State& state) {
  bench::Mlp m(64, 784, 256, 10);
  for (auto _ : state) {
    tf::Tensor loss = m.step(m.x, m.labels);
    benchmark::DoNotOptimize(loss);
  }
}
BENCHMARK(BM_MlpStep_Eager)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_MlpStep_Traced(benchmark::State& state) {
  bench::Mlp m(64, 784, 256, 10);
  auto step = tf::function([&](const tf::Tensor& x, const tf::Tensor& y) { return m.step(x, y); });
  step(m.x, m.labels);  // trace
  for (auto _ : state) {
    tf::Tensor loss = step(m.x, m.labels);
    benchmark::DoNotOptimize(loss);
  }
  if (step.trace_count() != 1) state.SkipWithError("retraced");
}
BENCHMARK(BM_MlpStep_Traced)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Tutorial 04's CNN forward pass in inference mode on a batch of 64: eagerly, and traced with
// function() and replayed, where each Conv2D / MatMul runs with its bias add and Relu as one step
// (Note [Bias and activation epilogue], graph/bias_activation_fusion.cc).
bench::Cnn& inference_cnn() {
  static bench::Cnn* c = bench::new_inference_cnn(64);
  return *c;
}

void BM_CnnForward_Eager(benchmark::State& state) {
  bench::Cnn& c = inference_cnn();
  for (auto _ : state) benchmark::DoNotOptimize(c.model(c.images));
}
BENCHMARK(BM_CnnForward_Eager)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CnnForward_Traced(benchmark::State& state) {
  bench::Cnn& c = inference_cnn();
  auto forward = tf::function([&](const tf::Tensor& images) { return c.model(images); });
  if (tf::reduce_max(tf::abs(forward(c.images) - c.model(c.images))).item<float>() != 0.f)
    state.SkipWithError("the traced forward pass and the eager one differ");
  for (auto _ : state) benchmark::DoNotOptimize(forward(c.images));
}
BENCHMARK(BM_CnnForward_Traced)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- 5. the 200-op function through function() ----

void BM_SmallOps_Function(benchmark::State& state) {
  tf::Tensor x = 1.f;
  auto f = tf::function([](const tf::Tensor& v) { return small_ops(v); });
  f(x);  // trace
  time_small_ops(state, [&] { return f(x); });
}
BENCHMARK(BM_SmallOps_Function)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
