// Internal to libtapeflow_mpi: the process-wide MPI state every collective shares, and the
// agreement check each one starts with (Note [Collective agreement] in mpi_state.cc).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <map>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace tapeflow::mpi::internal {

// Held around every MPI call tapeflow makes (MPI runs at MPI_THREAD_SERIALIZED).
std::mutex& mpi_mutex();

// OK when MPI is initialised and not yet finalised; FailedPrecondition naming `op` otherwise.
absl::Status check_initialized(std::string_view op);

// What a rank is about to do, as the fixed-length record every collective all-reduces first.
enum class CollectiveKind : int64_t { kAllReduce = 1, kBroadcast = 2, kBarrier = 3, kNewGroup = 4 };
struct CollectiveSignature {
  CollectiveKind kind;
  DType dtype = DType::kFloat32;
  Shape shape;
  int64_t op_or_root = 0;  // all_reduce: merge_op * 2 + (final_op == Div); broadcast: the root;
                           // new_group: a hash of the ranks
  int64_t group_key = 0;
  int64_t instance_key = 0;
};

// Checks that every rank of `comm` passes an equal signature; InvalidArgument naming `op` and
// the field that differs (on every rank: all see the same maximum and minimum). Call with
// mpi_mutex() held.
absl::Status check_agreement(std::string_view op, const CollectiveSignature& mine, MPI_Comm comm = MPI_COMM_WORLD);

// Note [Groups]: a group made by mpi::new_group is a communicator split from the world, known
// by a key every rank assigns in the same order (1, 2, ...; 0 is the world). Non-members keep
// the key with MPI_COMM_NULL, so they can name the group in their errors. The map is guarded by
// mpi_mutex(); the communicators are freed before MPI_Finalize.
struct GroupState {
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL on ranks outside the group
  std::vector<int> ranks;         // world ranks, ascending
};
std::map<int64_t, GroupState>& groups();
int64_t& next_group_key();

// The communicator of group `key` for this rank (MPI_COMM_WORLD for 0). InvalidArgument naming
// `op` for a key no group has, or a group this rank is not a member of (naming its ranks and
// this rank). Call with mpi_mutex() held and MPI initialised.
absl::StatusOr<MPI_Comm> group_comm(std::string_view op, int64_t key);
// OK when `key` names the world or a group made in this process (any rank may name it).
absl::Status check_group_known(std::string_view op, int64_t key);
// Frees every group's communicator and forgets the groups (before MPI_Finalize).
void free_groups();

// The MPI datatype of a dtype MPI can reduce (float32, float64, int32, int64, uint8), else
// MPI_DATATYPE_NULL.
MPI_Datatype mpi_datatype(DType dtype);

}  // namespace tapeflow::mpi::internal
