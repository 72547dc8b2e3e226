// Uses the installed "mpi" component. Alone (no arguments) it needs no mpirun: all_reduce is
// registered, builds into a graph, and running it without MPI is the typed precondition error.
// With --run, under mpirun, every rank all-reduces its rank + 1.
#include <tapeflow/tapeflow.h>
#include "distributed/mpi/collective.h"

#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
  using namespace tapeflow;
  if (argc > 1 && std::strcmp(argv[1], "--run") == 0) {
    mpi::Context mpi(&argc, &argv);
    const Tensor sum = all_reduce(Tensor(float(mpi::rank() + 1)));
    if (mpi::rank() == 0) std::cout << "ranks " << mpi::size() << " sum " << sum.item<float>() << "\n";
    return 0;
  }
  std::cout << "initialized: " << mpi::initialized() << "\n";
  Graph g;
  {
    auto scope = g.as_default();
    all_reduce(placeholder(DType::kFloat32, {2}, "x"), ReduceOp::kMean);
  }
  std::cout << "graph ops: " << g.get_operations().back().type() << "\n";
  try {
    all_reduce(Tensor({1.f, 2.f}));
  } catch (const FailedPreconditionError& e) {
    std::cout << "caught: " << e.what() << "\n";
  }
  return 0;
}
