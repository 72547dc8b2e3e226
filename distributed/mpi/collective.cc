// MPI's lifetime (Context), the world's rank and size, groups, barrier and broadcast.
// all_reduce, an op, lives in collective_op.cc.
#include "distributed/mpi/collective.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "distributed/mpi/mpi_state.h"
#include "eager/context.h"

namespace tapeflow::mpi {

using internal::check_agreement;
using internal::check_initialized;
using internal::CollectiveKind;
using internal::CollectiveSignature;
using internal::group_comm;
using internal::groups;
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
  if (finalized) return;
  internal::free_groups();  // communicators must be freed while MPI runs
  MPI_Finalize();
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

Group new_group(const std::vector<int>& ranks, std::source_location loc) {
  constexpr const char* kOp = "mpi::new_group";
  throw_if_error(check_initialized(kOp), loc);
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the sorted ranks, for the agreement
  for (int r : sorted) hash = (hash ^ static_cast<uint64_t>(static_cast<uint32_t>(r))) * 1099511628211ull;
  std::lock_guard<std::mutex> lock(mpi_mutex());
  int me = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int64_t key = internal::next_group_key();
  // Agreement first, so a list that is bad on one rank only fails everywhere, not hangs.
  throw_if_error(check_agreement(kOp, CollectiveSignature{.kind = CollectiveKind::kNewGroup, .dtype = DType::kInt32,
                                                          .shape = Shape{static_cast<int64_t>(sorted.size())},
                                                          .op_or_root = static_cast<int64_t>(hash >> 2),
                                                          .group_key = key}),
                 loc);
  if (sorted.empty()) throw InvalidArgumentError(absl::StrCat("[", kOp, "] a group needs at least one rank"), loc);
  if (sorted.front() < 0 || sorted.back() >= n)
    throw InvalidArgumentError(absl::StrCat("[", kOp, "] rank ", sorted.front() < 0 ? sorted.front() : sorted.back(),
                                            " is not a rank of this world (size ", n, ")"),
                               loc);
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
    throw InvalidArgumentError(absl::StrCat("[", kOp, "] rank ", *dup, " is listed twice"), loc);
  const bool member = std::binary_search(sorted.begin(), sorted.end(), me);
  MPI_Comm comm = MPI_COMM_NULL;
  // Split keyed by world rank: group ranks follow world order (sorted[i] is group rank i).
  const int rc = MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, me, &comm);
  if (rc != MPI_SUCCESS) throw InternalError(absl::StrCat("[", kOp, "] MPI_Comm_split failed (", rc, ")"), loc);
  groups()[key] = internal::GroupState{.comm = comm, .ranks = sorted};
  ++internal::next_group_key();
  return Group{.key = key};
}

namespace {
// The world ranks of `group`; errors name `op`.
std::vector<int> ranks_of(const char* op, Group group, std::source_location loc) {
  throw_if_error(check_initialized(op), loc);
  if (group.key == 0) {
    std::vector<int> all(static_cast<size_t>(size(loc)));
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return all;
  }
  std::lock_guard<std::mutex> lock(mpi_mutex());
  auto it = groups().find(group.key);
  if (it == groups().end())
    throw InvalidArgumentError(absl::StrCat("[", op, "] group_key ", group.key, " names no group of this process"), loc);
  return it->second.ranks;
}
}  // namespace

std::vector<int> group_ranks(Group group, std::source_location loc) { return ranks_of("mpi::group_ranks", group, loc); }

bool is_member(Group group, std::source_location loc) {
  const std::vector<int> ranks = ranks_of("mpi::is_member", group, loc);
  return std::binary_search(ranks.begin(), ranks.end(), rank(loc));
}

Tensor broadcast(const Tensor& x, int root, Group group, std::source_location loc) {
  constexpr const char* kOp = "mpi::broadcast";
  throw_if_error(check_initialized(kOp), loc);
  if (!x.defined() || x.is_symbolic() || !current_context().is_eager())
    throw InvalidArgumentError(absl::StrCat("[", kOp, "] runs eagerly only, on a concrete tensor"), loc);
  const std::vector<int> members = ranks_of(kOp, group, loc);
  const auto at = std::lower_bound(members.begin(), members.end(), root);
  if (at == members.end() || *at != root)
    throw InvalidArgumentError(
        absl::StrCat("[", kOp, "] root ", root, " is not a rank of ",
                     group.key == 0 ? absl::StrCat("this world (size ", members.size(), ")")
                                    : absl::StrCat("group ", group.key, " (world ranks {", absl::StrJoin(members, ", "), "})")),
        loc);
  const int group_root = static_cast<int>(at - members.begin());
  std::vector<char> host(static_cast<size_t>(x.num_elements()) * dtype_size(x.dtype()));
  if (!host.empty()) x.copy_to_host(host.data(), loc);
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    absl::StatusOr<MPI_Comm> comm = group_comm(kOp, group.key);
    throw_if_error(comm.status(), loc);
    // Any dtype broadcasts (bytes), but dtype and shape must agree so every rank's buffer fits.
    throw_if_error(check_agreement(kOp,
                                   CollectiveSignature{.kind = CollectiveKind::kBroadcast, .dtype = x.dtype(),
                                                       .shape = x.shape(), .op_or_root = root, .group_key = group.key},
                                   *comm),
                   loc);
    for (size_t done = 0; done < host.size();) {  // MPI counts are int: chunks of 1 GiB
      const int chunk = static_cast<int>(std::min<size_t>(host.size() - done, size_t{1} << 30));
      const int rc = MPI_Bcast(host.data() + done, chunk, MPI_BYTE, group_root, *comm);
      if (rc != MPI_SUCCESS) throw InternalError(absl::StrCat("[", kOp, "] MPI_Bcast failed (", rc, ")"), loc);
      done += static_cast<size_t>(chunk);
    }
  }
  return Tensor::from_host(x.dtype(), x.shape(), host.data(), x.device());
}

void broadcast_variables(const std::vector<Variable>& variables, int root, Group group, std::source_location loc) {
  for (const Variable& v : variables) {
    Variable copy = v;  // a handle: assigning through it updates the shared variable
    copy.assign(broadcast(v.read(loc), root, group, loc), loc);
  }
}

}  // namespace tapeflow::mpi
