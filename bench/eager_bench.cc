// Eager-runtime benchmarks, each beside the reference it is judged against in the same run:
//   - add of two 1-element float32 tensors (dispatch + output allocation), ns per op;
//   - matmul float32 at n = 256, 1024, 2048 beside raw Eigen and OpenBLAS cblas_sgemm (GFLOP/s);
//   - y = relu(x * w + b) over 16M floats as three eager ops beside memcpy of the same bytes
//     (bytes = x read + y written);
//   - a convolution in NHWC beside the same one in NCHW (the cost of the layout's transposes).
#include <cblas.h>

#include <cstring>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include "devices/cpu/blas.h"
#include "devices/cpu/thread_pool.h"
#include "tapeflow.h"

namespace tf = tapeflow;

namespace {

void BM_EagerAddScalar(benchmark::State& state) {
  tf::Tensor a = 1.f, b = 2.f;
  for (auto _ : state) {
    tf::Tensor c = tf::add(a, b);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EagerAddScalar);

// enable_check_numerics' cost: Arg(0) checks off (one relaxed load per op), Arg(1) on (a scan of
// every float output). Side by side in one run with BM_EagerAddScalar and the relu chain below.
void BM_EagerAddScalar_CheckNumerics(benchmark::State& state) {
  if (state.range(0)) tf::enable_check_numerics();
  tf::Tensor a = 1.f, b = 2.f;
  for (auto _ : state) {
    tf::Tensor c = tf::add(a, b);
    benchmark::DoNotOptimize(c);
  }
  tf::disable_check_numerics();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EagerAddScalar_CheckNumerics)->Arg(0)->Arg(1);

void set_gflops(benchmark::State& state, int64_t n) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_MatMul_tapeflow(benchmark::State& state) {
  const int64_t n = state.range(0);
  tf::Tensor a = tf::random_uniform({n, n}, -1.f, 1.f, tf::DType::kFloat32, 1);
  tf::Tensor b = tf::random_uniform({n, n}, -1.f, 1.f, tf::DType::kFloat32, 2);
  for (auto _ : state) {
    tf::Tensor c = tf::matmul(a, b);
    benchmark::DoNotOptimize(c);
  }
  set_gflops(state, n);
}

void BM_MatMul_Eigen(benchmark::State& state) {
  const int64_t n = state.range(0);
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat a = Mat::Random(n, n), b = Mat::Random(n, n), c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  set_gflops(state, n);
}

// Raw OpenBLAS at its best: threading each product itself over the pool's thread count (tapeflow
// keeps OpenBLAS single-threaded and splits products over its pool, Note [BLAS threads]).
void BM_MatMul_OpenBLAS(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n);
  tf::cpu::set_blas_threads(tapeflow::intra_op_threads());
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  tf::cpu::set_blas_threads(1);  // tapeflow's setting again
  set_gflops(state, n);
}

BENCHMARK(BM_MatMul_tapeflow)->Arg(256)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MatMul_Eigen)->Arg(256)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MatMul_OpenBLAS)->Arg(256)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMillisecond);

constexpr int64_t kRows = 4096, kCols = 4096;  // 16M floats, 64 MiB
constexpr int64_t kChainBytes = 2 * kRows * kCols * int64_t(sizeof(float));  // x read + y written

// The tutorial CNN's second convolution (batch 64, 14x14x32 -> 64 channels, 5x5 SAME) with
// data_format NHWC (Arg 0) and NCHW (Arg 1) side by side: NCHW runs the NHWC kernel between a
// transpose of the input and one of the output (Note [NCHW kernels]), so the gap is their cost.
void BM_Conv2D_Layout(benchmark::State& state) {
  const bool nchw = state.range(0) == 1;
  const tf::Shape shape = nchw ? tf::Shape{64, 32, 14, 14} : tf::Shape{64, 14, 14, 32};
  tf::Tensor x = tf::random_uniform(shape, -1.f, 1.f, tf::DType::kFloat32, 1);
  tf::Tensor w = tf::random_uniform({5, 5, 32, 64}, -1.f, 1.f, tf::DType::kFloat32, 2);
  for (auto _ : state) {
    tf::Tensor y = tf::conv2d(x, w, {1, 1}, "SAME", {1, 1}, nchw ? "NCHW" : "NHWC");
    benchmark::DoNotOptimize(y);
  }
  // 2 * output pixels * taps * in channels * out channels
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 64 * 14 * 14 * 25 * 32 * 64 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Conv2D_Layout)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ReluChain_tapeflow(benchmark::State& state) {
  tf::Tensor x = tf::random_uniform({kRows, kCols}, -1.f, 1.f, tf::DType::kFloat32, 3);
  tf::Tensor w = tf::random_uniform({kCols}, -1.f, 1.f, tf::DType::kFloat32, 4);
  tf::Tensor b = tf::random_uniform({kCols}, -1.f, 1.f, tf::DType::kFloat32, 5);
  for (auto _ : state) {
    tf::Tensor y = tf::relu(x * w + b);
    benchmark::DoNotOptimize(y);
  }
  state.SetBytesProcessed(state.iterations() * kChainBytes);
}
BENCHMARK(BM_ReluChain_tapeflow)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ReluChain_CheckNumerics(benchmark::State& state) {
  tf::CheckNumericsGuard checks;
  BM_ReluChain_tapeflow(state);
}
BENCHMARK(BM_ReluChain_CheckNumerics)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ReluChain_memcpy(benchmark::State& state) {
  std::vector<float> src(size_t(kRows * kCols), 1.f), dst(size_t(kRows * kCols));
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size() * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * kChainBytes);
}
BENCHMARK(BM_ReluChain_memcpy)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

// The OpenBLAS kernel set beside the results: it decides the matmul rows (README, Performance).
int main(int argc, char** argv) {
  benchmark::AddCustomContext("openblas_kernels", tf::cpu::blas_core_name());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
