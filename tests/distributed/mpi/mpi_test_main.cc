// main() of the MPI tests. Under mpirun every rank runs every test (collectives need all
// ranks), each asserting on its own values; mpirun exits non-zero when any rank fails, so ctest
// fails then too. With --no-mpi the program runs alone and never initialises MPI (the
// precondition tests: MpiNotInitialized.*).
#include <cstring>
#include <iostream>

#include <gtest/gtest.h>

#include "distributed/mpi/collective.h"

namespace {
// Ranks other than 0 print only their failures, each marked with the rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::cerr << "[rank " << rank_ << "] " << (r.file_name() ? r.file_name() : "?") << ":" << r.line_number()
                << ": failure\n" << r.summary() << std::endl;
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  bool no_mpi = false;
  for (int i = 1; i < argc; ++i) no_mpi |= std::strcmp(argv[i], "--no-mpi") == 0;
  ::testing::InitGoogleTest(&argc, argv);
  if (no_mpi) {
    ::testing::GTEST_FLAG(filter) = "MpiNotInitialized.*";
    return RUN_ALL_TESTS();
  }
  tapeflow::mpi::Context mpi(&argc, &argv);
  // MpiGroup* need four ranks: ctest's mpi_groups runs them with --gtest_filter=MpiGroup*.
  if (::testing::GTEST_FLAG(filter) == "*") ::testing::GTEST_FLAG(filter) = "-MpiNotInitialized.*:MpiGroup*";
  // Only rank 0 prints gtest's progress; the others print their failures.
  if (const int rank = tapeflow::mpi::rank(); rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  return RUN_ALL_TESTS();
}
