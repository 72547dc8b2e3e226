// all_reduce (distributed/mpi/) beside MPI's own MPI_Allreduce on the same buffer, in the same
// run: the CNN of tutorials 04 and 08 has 3,275,658 float parameters (13.1 MB of gradients).
//
//   mpirun --allow-run-as-root --oversubscribe -np 2 ./build/bench/mpi_bench
//
// Every rank runs every benchmark with a fixed iteration count (a collective needs all ranks,
// and Google Benchmark's adaptive counts would differ between them); rank 0 reports. Compare
// bytes_per_second of BM_AllReduce* with BM_MpiAllreduce of the same size.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <chrono>
#include <vector>

#include "distributed/mpi/collective.h"
#include "rank0_reports.h"
#include "tapeflow.h"

using namespace tapeflow;

namespace {

constexpr int64_t kCnnParameters = 3275658;  // 832 + 51,264 + 3,213,312 + 10,250
constexpr int kIterations = 40;

// The raw baseline: MPI_Allreduce into a preallocated buffer (what a hand-written loop does).
void BM_MpiAllreduce(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> in(static_cast<size_t>(n), 1.f), out(static_cast<size_t>(n));
  for (auto _ : state) {
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * n * 4);
}

// tapeflow's op: the agreement check, a fresh output tensor and MPI_Allreduce into it.
void BM_AllReduceSum(benchmark::State& state) {
  Tensor x = ones({state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(all_reduce(x, ReduceOp::kSum));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// The same plus the division by the number of ranks (what data-parallel training uses).
void BM_AllReduceMean(benchmark::State& state) {
  Tensor x = ones({state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(all_reduce(x, ReduceOp::kMean));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// Tutorial 08's step: one mean all_reduce per gradient of the CNN (8 tensors, 13.1 MB).
void BM_AllReduceCnnGradients(benchmark::State& state) {
  const std::vector<Shape> shapes = {{5, 5, 1, 32}, {32}, {5, 5, 32, 64}, {64}, {3136, 1024}, {1024}, {1024, 10}, {10}};
  std::vector<Tensor> grads;
  for (const Shape& s : shapes) grads.push_back(ones(s));
  for (auto _ : state)
    for (const Tensor& g : grads) benchmark::DoNotOptimize(all_reduce(g, ReduceOp::kMean));
  state.SetBytesProcessed(state.iterations() * kCnnParameters * 4);
}

// Both on the same 13 MB, alternating call by call, so a change of machine load hits both alike:
// counters mpi_ms and tapeflow_ms (mean per call) and speed = mpi_ms / tapeflow_ms (the target
// is >= 0.9). The loop's own time is the pair's.
void BM_AllReduceBesideMpiAllreduce(benchmark::State& state) {
  const int64_t n = state.range(0);
  const ReduceOp op = state.range(1) == 0 ? ReduceOp::kSum : ReduceOp::kMean;
  std::vector<float> in(static_cast<size_t>(n), 1.f), out(static_cast<size_t>(n));
  Tensor x = ones({n});
  double mpi_s = 0, tapeflow_s = 0;
  using Clock = std::chrono::steady_clock;
  const auto mpi_call = [&] {
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (op == ReduceOp::kMean) for (float& v : out) v /= 2.f;  // MPI has no mean: the same division
    benchmark::DoNotOptimize(out.data());
  };
  const auto tapeflow_call = [&] { benchmark::DoNotOptimize(all_reduce(x, op)); };
  bool mpi_first = true;  // alternates, so neither always follows the other's stragglers
  for (auto _ : state) {
    auto t0 = Clock::now();
    if (mpi_first) mpi_call(); else tapeflow_call();
    auto t1 = Clock::now();
    if (mpi_first) tapeflow_call(); else mpi_call();
    auto t2 = Clock::now();
    mpi_s += std::chrono::duration<double>(mpi_first ? t1 - t0 : t2 - t1).count();
    tapeflow_s += std::chrono::duration<double>(mpi_first ? t2 - t1 : t1 - t0).count();
    mpi_first = !mpi_first;
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["mpi_ms"] = 1e3 * mpi_s / iters;
  state.counters["tapeflow_ms"] = 1e3 * tapeflow_s / iters;
  state.counters["speed"] = mpi_s / tapeflow_s;
  state.SetBytesProcessed(state.iterations() * n * 4 * 2);
}

BENCHMARK(BM_AllReduceBesideMpiAllreduce)->Args({kCnnParameters, 0})->Args({kCnnParameters, 1})->Iterations(100)
    ->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MpiAllreduce)->Arg(kCnnParameters)->Arg(8)->Iterations(kIterations)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllReduceSum)->Arg(kCnnParameters)->Arg(8)->Iterations(kIterations)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllReduceMean)->Arg(kCnnParameters)->Iterations(kIterations)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllReduceCnnGradients)->Iterations(kIterations)->UseRealTime()->Unit(benchmark::kMillisecond);
// The baseline again at the end, so a change of machine load during the run shows.
BENCHMARK(BM_MpiAllreduce)->Name("BM_MpiAllreduce_again")->Arg(kCnnParameters)->Iterations(kIterations)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  mpi::Context mpi(&argc, &argv);
  tapeflow_bench::run_benchmarks_reporting_on_rank0(&argc, argv, mpi::rank());
  return 0;
}
