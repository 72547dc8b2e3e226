// main() for benchmarks run under mpirun: every rank runs every benchmark (a collective needs all
// of them, with fixed iteration counts), rank 0 alone prints.
#pragma once

#include <benchmark/benchmark.h>

#include <vector>

namespace tapeflow_bench {

inline void run_benchmarks_reporting_on_rank0(int* argc, char** argv, int rank) {
  class NullReporter : public benchmark::BenchmarkReporter {
   public:
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>&) override {}
  };
  benchmark::Initialize(argc, argv);
  NullReporter quiet;
  if (rank == 0) benchmark::RunSpecifiedBenchmarks();
  else benchmark::RunSpecifiedBenchmarks(&quiet);
  benchmark::Shutdown();
}

}  // namespace tapeflow_bench
