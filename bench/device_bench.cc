// Several CPU devices in one process (SessionOptions::device_count, Note [Partitions]): a graph
// of two independent chains of matrix products, chain A pinned to /device:CPU:0 and chain B to
// /device:CPU:1, run by a Session with two CPU devices, beside the same graph run by a Session
// with one device (soft placement puts both chains on CPU:0). The two are interleaved in each
// iteration (one run of each), so machine noise hits both alike; the counter "speedup" is the
// one-device time over the two-device time (target >= 1.7x on a 2-core machine).
//
// Arg: the one-device Session's inter_op_parallelism_threads (0: one per core, the default,
// so its two chains already run side by side; 1: one chain after the other).
// Each device's intra-op pool has the process-wide size, one thread per core by default; with
// TAPEFLOW_INTRA_OP_THREADS=1 in the environment every pool has one thread (set before CPU:1
// and its pool exist), so each device computes on one core: the configuration where two
// devices can double the throughput of one.
//
// Run: ./build/bench/device_bench --benchmark_min_time=2
//      TAPEFLOW_INTRA_OP_THREADS=1 ./build/bench/device_bench --benchmark_min_time=2
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "devices/cpu/thread_pool.h"
#include "tapeflow.h"

namespace tf = tapeflow;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSize = 256;   // each product is [kSize, kSize] x [kSize, kSize]
constexpr int kChain = 8;    // products per chain

struct TwoChains {
  tf::Graph g;
  std::vector<tf::Tensor> outputs;
  TwoChains() {
    const tf::Tensor w = tf::random_normal({kSize, kSize}, 0, 1.0 / kSize, tf::DType::kFloat32, 7);
    const tf::Tensor x0 = tf::random_normal({kSize, kSize}, 0, 1, tf::DType::kFloat32, 8);
    auto scope = g.as_default();
    for (const char* dev : {"/device:CPU:0", "/device:CPU:1"}) {
      auto d = tf::device(dev);
      tf::Tensor x = tf::constant(x0), weights = tf::constant(w);
      for (int i = 0; i < kChain; ++i) x = tf::matmul(x, weights);
      outputs.push_back(x);
    }
  }
};

double run_ms(tf::Session& sess, const std::vector<tf::Tensor>& fetches) {
  const auto t0 = Clock::now();
  std::vector<tf::Fetch> f(fetches.begin(), fetches.end());
  benchmark::DoNotOptimize(sess.run(f));
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void BM_TwoMatmulChains_TwoDevicesVsOne(benchmark::State& state) {
  TwoChains m;
  tf::SessionOptions two;
  two.device_count["CPU"] = 2;
  tf::Session on_two(m.g, two);
  tf::SessionOptions one;
  one.allow_soft_placement = true;
  one.inter_op_parallelism_threads = static_cast<int>(state.range(0));
  tf::Session on_one(m.g, one);
  run_ms(on_two, m.outputs);  // plans compiled, buffers cached
  run_ms(on_one, m.outputs);
  double ms_two = 0, ms_one = 0;
  for (auto _ : state) {
    ms_two += run_ms(on_two, m.outputs);
    ms_one += run_ms(on_one, m.outputs);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["ms_two_devices"] = ms_two / n;
  state.counters["ms_one_device"] = ms_one / n;
  state.counters["speedup"] = ms_one / ms_two;
  state.counters["cores"] = static_cast<double>(std::thread::hardware_concurrency());
  state.counters["intra_threads"] = static_cast<double>(tf::intra_op_threads());
}
BENCHMARK(BM_TwoMatmulChains_TwoDevicesVsOne)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (const char* n = std::getenv("TAPEFLOW_INTRA_OP_THREADS")) tf::set_intra_op_threads(std::atoi(n));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
