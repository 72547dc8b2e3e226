// Would a Gloo backend for all_reduce be faster than the Open MPI one? (issue 16: "an optional
// backend on Gloo ... if it measures better"). Gloo's allreduce (ring, TCP over loopback, its
// rendezvous through a FileStore) beside MPI_Allreduce on the same 13 MB buffer in the same run,
// alternating call by call; tapeflow's all_reduce runs at MPI_Allreduce's speed (mpi_bench).
//
//   mpirun --allow-run-as-root --oversubscribe -np 2 ./build/bench/gloo_bench
//
// Built only where Debian's libgloo-dev is installed (it is not a dependency of tapeflow).
// Counters: mpi_ms, gloo_ms (mean per call) and gloo_speed = mpi_ms / gloo_ms; above 1 would
// mean Gloo is the faster transport.
#include <benchmark/benchmark.h>
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <mpi.h>
#include <stdlib.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "distributed/mpi/collective.h"
#include "rank0_reports.h"

namespace {

constexpr int64_t kCnnParameters = 3275658;  // tutorial 04's CNN: 13.1 MB of float gradients

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// One Gloo context over the MPI world's processes: rank 0 makes a rendezvous directory and tells
// the others its name through MPI; every rank binds a TCP device to loopback.
std::shared_ptr<gloo::rendezvous::Context> make_gloo_context() {
  std::array<char, 256> dir{};
  if (world_rank() == 0) {
    std::string tmpl = std::filesystem::temp_directory_path() / "tapeflow_gloo_XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) MPI_Abort(MPI_COMM_WORLD, 1);
    std::strncpy(dir.data(), tmpl.c_str(), dir.size() - 1);
  }
  MPI_Bcast(dir.data(), static_cast<int>(dir.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  gloo::transport::tcp::attr attr("127.0.0.1");
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore files(dir.data());
  gloo::rendezvous::PrefixStore store("gloo_bench", files);
  auto context = std::make_shared<gloo::rendezvous::Context>(world_rank(), world_size());
  context->connectFullMesh(store, device);
  MPI_Barrier(MPI_COMM_WORLD);  // everyone is connected: the directory can go
  if (world_rank() == 0) std::filesystem::remove_all(dir.data());
  return context;
}

void BM_GlooAllreduceBesideMpiAllreduce(benchmark::State& state) {
  static std::shared_ptr<gloo::rendezvous::Context> context = make_gloo_context();
  const int64_t n = state.range(0);
  std::vector<float> in(static_cast<size_t>(n), 1.f), out(static_cast<size_t>(n)), gloo_buf(static_cast<size_t>(n));
  uint32_t tag = 0;
  const auto mpi_call = [&] {
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    benchmark::DoNotOptimize(out.data());
  };
  const auto gloo_call = [&] {
    gloo::AllreduceOptions opts(context);
    opts.setInput(in.data(), static_cast<size_t>(n));
    opts.setOutput(gloo_buf.data(), static_cast<size_t>(n));
    opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    opts.setTag(tag++);
    gloo::allreduce(opts);
    benchmark::DoNotOptimize(gloo_buf.data());
  };
  using Clock = std::chrono::steady_clock;
  double mpi_s = 0, gloo_s = 0;
  bool mpi_first = true;  // alternates, so neither always follows the other's stragglers
  for (auto _ : state) {
    const auto t0 = Clock::now();
    if (mpi_first) mpi_call(); else gloo_call();
    const auto t1 = Clock::now();
    if (mpi_first) gloo_call(); else mpi_call();
    const auto t2 = Clock::now();
    mpi_s += std::chrono::duration<double>(mpi_first ? t1 - t0 : t2 - t1).count();
    gloo_s += std::chrono::duration<double>(mpi_first ? t2 - t1 : t1 - t0).count();
    mpi_first = !mpi_first;
  }
  if (gloo_buf != out) state.SkipWithError("Gloo's sum differs from MPI_Allreduce's");
  const double iters = static_cast<double>(state.iterations());
  state.counters["mpi_ms"] = 1e3 * mpi_s / iters;
  state.counters["gloo_ms"] = 1e3 * gloo_s / iters;
  state.counters["gloo_speed"] = mpi_s / gloo_s;
  state.SetBytesProcessed(state.iterations() * n * 4 * 2);
}
BENCHMARK(BM_GlooAllreduceBesideMpiAllreduce)->Arg(kCnnParameters)->Arg(65536)->Arg(8)->Iterations(60)
    ->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  tapeflow::mpi::Context mpi(&argc, &argv);
  tapeflow_bench::run_benchmarks_reporting_on_rank0(&argc, argv, world_rank());
  return 0;
}
