// Internal to libtapeflow_mpi: the process-wide MPI state every collective shares, and the
// agreement check each one starts with (Note [Collective agreement] in mpi_state.cc).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string_view>

#include <mpi.h>

#include "absl/status/status.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace tapeflow::mpi::internal {

// Held around every MPI call tapeflow makes (MPI runs at MPI_THREAD_SERIALIZED).
std::mutex& mpi_mutex();

// OK when MPI is initialised and not yet finalised; FailedPrecondition naming `op` otherwise.
absl::Status check_initialized(std::string_view op);

// What a rank is about to do, as the fixed-length record every collective all-reduces first.
enum class CollectiveKind : int64_t { kAllReduce = 1, kBroadcast = 2, kBarrier = 3 };
struct CollectiveSignature {
  CollectiveKind kind;
  DType dtype = DType::kFloat32;
  Shape shape;
  int64_t op_or_root = 0;  // all_reduce: merge_op * 2 + (final_op == Div); broadcast: the root
  int64_t group_key = 0;
  int64_t instance_key = 0;
};

// Checks that every rank of the world passes an equal signature; InvalidArgument naming `op`
// and the field that differs (on every rank: all see the same maximum and minimum). Call with
// mpi_mutex() held.
absl::Status check_agreement(std::string_view op, const CollectiveSignature& mine);

// The MPI datatype of a dtype MPI can reduce (float32, float64, int32, int64, uint8), else
// MPI_DATATYPE_NULL.
MPI_Datatype mpi_datatype(DType dtype);

}  // namespace tapeflow::mpi::internal
