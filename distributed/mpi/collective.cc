// MPI's lifetime (Context), the world's rank and size, barrier and broadcast. all_reduce, an
// op, lives in collective_op.cc.
#include "distributed/mpi/collective.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "distributed/mpi/mpi_state.h"
#include "eager/context.h"

namespace tapeflow::mpi {

using internal::check_agreement;
using internal::check_initialized;
using internal::CollectiveKind;
using internal::CollectiveSignature;
using internal::mpi_mutex;

namespace {
// Live Contexts, and whether the first of them initialised MPI (so the last finalises it).
int g_contexts = 0;
bool g_we_initialized = false;
}  // namespace

Context::Context(int* argc, char*** argv, std::source_location loc) {
  register_collective_ops();
  std::lock_guard<std::mutex> lock(mpi_mutex());
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    throw FailedPreconditionError("[mpi::Context] MPI was finalised already and cannot be initialised again", loc);
  if (!initialized) {
    int provided = 0;
    const int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) throw InternalError(absl::StrCat("[mpi::Context] MPI_Init_thread failed (", rc, ")"), loc);
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      throw FailedPreconditionError(
          absl::StrCat("[mpi::Context] this MPI gives thread level ", provided, "; tapeflow needs MPI_THREAD_SERIALIZED"),
          loc);
    }
    g_we_initialized = true;
  }
  ++g_contexts;
}

Context::~Context() {
  std::lock_guard<std::mutex> lock(mpi_mutex());
  if (--g_contexts > 0 || !g_we_initialized) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

bool initialized() { return check_initialized("mpi").ok(); }

int rank(std::source_location loc) {
  throw_if_error(check_initialized("mpi::rank"), loc);
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size(std::source_location loc) {
  throw_if_error(check_initialized("mpi::size"), loc);
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void barrier(std::source_location loc) {
  throw_if_error(check_initialized("mpi::barrier"), loc);
  std::lock_guard<std::mutex> lock(mpi_mutex());
  // The agreement all-reduce is itself a barrier (nobody leaves it before everyone entered).
  throw_if_error(check_agreement("mpi::barrier", CollectiveSignature{.kind = CollectiveKind::kBarrier, .shape = Shape{}}), loc);
}

Tensor broadcast(const Tensor& x, int root, std::source_location loc) {
  constexpr const char* kOp = "mpi::broadcast";
  throw_if_error(check_initialized(kOp), loc);
  if (!x.defined() || x.is_symbolic() || !current_context().is_eager())
    throw InvalidArgumentError(absl::StrCat("[", kOp, "] runs eagerly only, on a concrete tensor"), loc);
  const int n = size(loc);
  if (root < 0 || root >= n)
    throw InvalidArgumentError(absl::StrCat("[", kOp, "] root ", root, " is not a rank of this world (size ", n, ")"),
                               loc);
  std::vector<char> host(static_cast<size_t>(x.num_elements()) * dtype_size(x.dtype()));
  if (!host.empty()) x.copy_to_host(host.data(), loc);
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    // Any dtype broadcasts (bytes), but dtype and shape must agree so every rank's buffer fits.
    throw_if_error(check_agreement(kOp, CollectiveSignature{.kind = CollectiveKind::kBroadcast, .dtype = x.dtype(),
                                                            .shape = x.shape(), .op_or_root = root}),
                   loc);
    for (size_t done = 0; done < host.size();) {  // MPI counts are int: chunks of 1 GiB
      const int chunk = static_cast<int>(std::min<size_t>(host.size() - done, size_t{1} << 30));
      const int rc = MPI_Bcast(host.data() + done, chunk, MPI_BYTE, root, MPI_COMM_WORLD);
      if (rc != MPI_SUCCESS) throw InternalError(absl::StrCat("[", kOp, "] MPI_Bcast failed (", rc, ")"), loc);
      done += static_cast<size_t>(chunk);
    }
  }
  return Tensor::from_host(x.dtype(), x.shape(), host.data(), x.device());
}

void broadcast_variables(const std::vector<Variable>& variables, int root, std::source_location loc) {
  for (const Variable& v : variables) {
    Variable copy = v;  // a handle: assigning through it updates the shared variable
    copy.assign(broadcast(v.read(loc), root, loc), loc);
  }
}

}  // namespace tapeflow::mpi
