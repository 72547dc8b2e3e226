#include "distributed/mpi/mpi_state.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tapeflow::mpi::internal {

std::mutex& mpi_mutex() {
  static std::mutex* mu = new std::mutex();  // never destroyed: collectives may run at exit
  return *mu;
}

absl::Status check_initialized(std::string_view op) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);  // both may be called before MPI_Init and after MPI_Finalize
  MPI_Finalized(&finalized);
  if (initialized && !finalized) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "[", absl::string_view(op.data(), op.size()), "] MPI is ",
      finalized ? "already finalised" : "not initialised",
      ": create a tapeflow::mpi::Context first (and start the program with mpirun)"));
}

MPI_Datatype mpi_datatype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return MPI_FLOAT;
    case DType::kFloat64: return MPI_DOUBLE;
    case DType::kInt32: return MPI_INT32_T;
    case DType::kInt64: return MPI_INT64_T;
    case DType::kUInt8: return MPI_UINT8_T;
    default: return MPI_DATATYPE_NULL;
  }
}

// Note [Collective agreement]
// MPI matches collectives by their order on a communicator and trusts the caller on counts
// and types: a rank passing 10 floats against another's 12, or one rank broadcasting while
// the other all-reduces, hangs or corrupts memory. So every collective starts by all-reducing a
// fixed-length record of what this rank is about to do (kind, dtype, op or root, group,
// instance key, rank, element count, a hash of the dims) as [record, -record] under MPI_MAX:
// one 128-byte all-reduce gives every rank the maximum and the minimum of each field, and a
// field whose maximum differs from its minimum is a disagreement, seen by all ranks at once, so
// all of them fail with the same InvalidArgumentError instead of one hanging. Its cost is one
// small-message latency per collective (a few microseconds on loopback; bench/mpi_bench.cc
// measures it within all_reduce's time). Collectives that agree but are issued in a different
// order with equal signatures cannot be told apart: instance_key is there for that.
absl::Status check_agreement(std::string_view op, const CollectiveSignature& mine, MPI_Comm comm) {
  constexpr int kFields = 8;
  static const char* const kNames[kFields] = {"collective (all_reduce, broadcast, barrier or new_group)", "dtype",
                                              "reduction or root", "group_key", "instance_key",
                                              "rank (number of dims)", "number of elements", "shape"};
  uint64_t dims_hash = 1469598103934665603ull;  // FNV-1a over the dims
  for (int64_t d : mine.shape.dims()) dims_hash = (dims_hash ^ static_cast<uint64_t>(d)) * 1099511628211ull;
  const int64_t fields[kFields] = {static_cast<int64_t>(mine.kind), static_cast<int64_t>(mine.dtype),
                                   mine.op_or_root, mine.group_key, mine.instance_key, mine.shape.rank(),
                                   mine.shape.num_elements(), static_cast<int64_t>(dims_hash >> 2)};
  int64_t send[2 * kFields], recv[2 * kFields];
  for (int i = 0; i < kFields; ++i) {
    // Clamped so negation cannot overflow (a user's instance_key may be anything).
    const int64_t v = std::max<int64_t>(fields[i], -INT64_MAX);
    send[i] = v;
    send[kFields + i] = -v;
  }
  const int rc = MPI_Allreduce(send, recv, 2 * kFields, MPI_INT64_T, MPI_MAX, comm);
  const std::string name(op);
  if (rc != MPI_SUCCESS) return absl::InternalError(absl::StrCat("[", name, "] MPI_Allreduce failed (", rc, ")"));
  for (int i = 0; i < kFields; ++i) {
    if (recv[i] == -recv[kFields + i]) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "[", name, "] the ranks disagree on the ", kNames[i], ": this rank has dtype ", dtype_name(mine.dtype),
        " and shape ", mine.shape.to_string(), " (every rank must call the same collectives in the same order "
        "with the same dtypes, shapes and attributes)"));
  }
  return absl::OkStatus();
}

std::map<int64_t, GroupState>& groups() {
  static auto* g = new std::map<int64_t, GroupState>();  // never destroyed (collectives at exit)
  return *g;
}

int64_t& next_group_key() {
  static int64_t key = 1;
  return key;
}

namespace {
std::string ranks_text(const std::vector<int>& ranks) {
  return absl::StrCat("{", absl::StrJoin(ranks, ", "), "}");
}
}  // namespace

absl::Status check_group_known(std::string_view op, int64_t key) {
  if (key == 0) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mpi_mutex());
  if (groups().count(key)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "[", absl::string_view(op.data(), op.size()), "] group_key ", key,
      " names no group of this process (make groups with mpi::new_group; they end with MPI)"));
}

absl::StatusOr<MPI_Comm> group_comm(std::string_view op, int64_t key) {
  if (key == 0) return MPI_COMM_WORLD;
  const std::string name(op);
  auto it = groups().find(key);
  if (it == groups().end())
    return absl::InvalidArgumentError(absl::StrCat(
        "[", name, "] group_key ", key, " names no group of this process (make groups with mpi::new_group; they end with MPI)"));
  if (it->second.comm == MPI_COMM_NULL) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return absl::InvalidArgumentError(absl::StrCat("[", name, "] rank ", me, " is not a member of group ", key,
                                                   " (world ranks ", ranks_text(it->second.ranks),
                                                   "): only its members may call its collectives"));
  }
  return it->second.comm;
}

void free_groups() {
  for (auto& [key, group] : groups())
    if (group.comm != MPI_COMM_NULL) MPI_Comm_free(&group.comm);
  groups().clear();
}

}  // namespace tapeflow::mpi::internal
