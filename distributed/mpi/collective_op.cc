// all_reduce: the CollectiveReduce op, its CPU kernels (MPI_Allreduce) and its gradient.
//
// Note [CollectiveReduce]
// The op takes TensorFlow's name and attributes (CollectiveReduce: T, merge_op "Add" | "Min" |
// "Max", final_op "Id" | "Div", group_key, instance_key) rather than Horovod's HorovodAllreduce:
// TensorFlow's op is part of the framework tapeflow follows, so a GraphDef holding it reads as
// TensorFlow's own (TF also requires group_size and subdiv_offsets, which we do not write: the
// group's communicator fixes them, Note [Groups] in mpi_state.h), while Horovod's is a plugin op whose attributes are its own. The
// definition lives here, above the op registry's layer: libtapeflow knows nothing of MPI, and
// libtapeflow_mpi adds the op, its kernels and its gradient to the process-wide registries when
// it loads (a static registrar, register_collective_ops; Context and all_reduce call it too, so
// a static link that drops the registrar still works). The op is stateful: a graph must neither
// constant-fold it (a constant input still needs the other ranks) nor merge two identical calls
// (each is a separate collective every rank issues).
//
// Gradient: y = sum over ranks r of x_r, the same y on every rank, so d(sum_r L_r)/dx_r is the
// sum over ranks of each rank's incoming gradient: the all-reduce (sum) of g; for the mean, the
// mean of g. Min and max have none (UnimplementedError).
#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "distributed/mpi/collective.h"
#include "distributed/mpi/mpi_state.h"
#include "eager/context.h"
#include "eager/op_def.h"
#include "graph/graph.h"
#include "graph/graph_context.h"
#include "graph/scopes.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {

using mpi::internal::check_agreement;
using mpi::internal::check_initialized;
using mpi::internal::CollectiveKind;
using mpi::internal::CollectiveSignature;
using mpi::internal::mpi_datatype;
using mpi::internal::mpi_mutex;

constexpr const char* kMergeOps[] = {"Add", "Min", "Max"};

// merge_op's index in kMergeOps, or -1.
int merge_index(const std::string& merge) {
  for (int i = 0; i < 3; ++i) if (merge == kMergeOps[i]) return i;
  return -1;
}

absl::StatusOr<OutputSpecs> collective_reduce_shape(const InferenceContext& ctx) {
  const DType dt = ctx.inputs[0].dtype;
  if (mpi_datatype(dt) == MPI_DATATYPE_NULL)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] MPI cannot reduce dtype ", dtype_name(dt),
                                                   " (float32, float64, int32, int64 and uint8 can)"));
  const std::string merge = ctx.attrs.get_or<std::string>("merge_op", "Add");
  const std::string final_op = ctx.attrs.get_or<std::string>("final_op", "Id");
  if (merge_index(merge) < 0)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] merge_op '", merge, "' is not Add, Min or Max"));
  if (final_op != "Id" && final_op != "Div")
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] final_op '", final_op, "' is not Id or Div"));
  if (final_op == "Div" && !is_floating(dt))
    return absl::InvalidArgumentError(
        absl::StrCat("[", ctx.op, "] the mean needs a floating dtype; got ", dtype_name(dt)));
  if (absl::Status s = mpi::internal::check_group_known(ctx.op, ctx.attrs.get_or<int64_t>("group_key", 0)); !s.ok())
    return s;
  return single_output(dt, ctx.inputs[0].shape);
}

OpDef kCollectiveReduce{.type = "CollectiveReduce", .api_name = "all_reduce", .num_inputs = 1,
                        .infer = collective_reduce_shape, .stateful = true, .differentiable = true,
                        .tf_form = "T=in0 merge_op:string final_op:string group_key:int instance_key:int"};

// Divides in place by the group's size (final_op "Div"). One thread: the pass is memory-bound,
// and the other cores are the other ranks'. With parallel_for the 13 MB mean ran at 0.69x of
// MPI_Allreduce plus a one-thread division; on one thread, 0.86-0.95x (bench/mpi_bench.cc,
// BM_AllReduceBesideMpiAllreduce, two ranks on a loaded 2-core machine).
template <typename T>
void divide(T* data, int64_t n, int size) {
  const T d = static_cast<T>(size);
  for (int64_t i = 0; i < n; ++i) data[i] /= d;
}

absl::Status collective_reduce_kernel(KernelContext& ctx) {
  if (absl::Status s = check_initialized(ctx.op); !s.ok()) return s;
  const DeviceTensor& in = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  const std::string merge = ctx.attrs.get_or<std::string>("merge_op", "Add");
  const bool div = ctx.attrs.get_or<std::string>("final_op", "Id") == "Div";
  const int merge_i = merge_index(merge);
  const MPI_Op op = merge_i == 1 ? MPI_MIN : merge_i == 2 ? MPI_MAX : MPI_SUM;
  const MPI_Datatype type = mpi_datatype(in.dtype);
  int size = 1;
  {
    std::lock_guard<std::mutex> lock(mpi_mutex());
    // Note [Groups] (mpi_state.h): a non-member fails here, before any MPI call.
    absl::StatusOr<MPI_Comm> comm = mpi::internal::group_comm(ctx.op, ctx.attrs.get_or<int64_t>("group_key", 0));
    if (!comm.ok()) return comm.status();
    const CollectiveSignature mine{.kind = CollectiveKind::kAllReduce, .dtype = in.dtype, .shape = in.shape,
                                   .op_or_root = merge_i * 2 + (div ? 1 : 0),
                                   .group_key = ctx.attrs.get_or<int64_t>("group_key", 0),
                                   .instance_key = ctx.attrs.get_or<int64_t>("instance_key", 0)};
    if (absl::Status s = check_agreement(ctx.op, mine, *comm); !s.ok()) return s;
    MPI_Comm_size(*comm, &size);
    const int64_t n = in.num_elements();
    const size_t elem = dtype_size(in.dtype);
    for (int64_t done = 0; done < n;) {  // MPI counts are int: chunks of 2^30 elements
      const int chunk = static_cast<int>(std::min<int64_t>(n - done, int64_t{1} << 30));
      const int rc = MPI_Allreduce(static_cast<const char*>(in.raw()) + done * elem,
                                   static_cast<char*>(out.raw()) + done * elem, chunk, type, op, *comm);
      if (rc != MPI_SUCCESS) return absl::InternalError(absl::StrCat("MPI_Allreduce failed (", rc, ")"));
      done += chunk;
    }
  }
  if (div) {
    if (in.dtype == DType::kFloat32) divide(out.data<float>(), out.num_elements(), size);
    else divide(out.data<double>(), out.num_elements(), size);
  }
  return absl::OkStatus();
}

// Note [Collective order in graphs]
// MPI matches collectives by the order each rank issues them, but a Session's executor runs
// independent nodes in whatever order its threads reach them, which differs between ranks (and
// two nodes may even run at once). So, as TensorFlow's tf.function adds automatic control
// dependencies between stateful ops, each CollectiveReduce node made in a graph gets a control
// dependency on the previous one made in the same graph (kept in the graph's collection
// kOrderCollection): the nodes then run in the order the program made them, which is the same
// on every rank. Without it, the agreement check turns a reordering into an error on every
// rank, but a collective already dispatched on another thread could then wait for ever (the
// first version of the Session test did). Nodes imported from a GraphDef are not chained.
constexpr const char* kOrderCollection = "_collective_order";

// Runs or records one CollectiveReduce (all_reduce and its gradient both come here).
Tensor collective_reduce(const Tensor& x, const AttrMap& attrs, std::source_location loc) {
  const Tensor inputs[1] = {x};
  GraphBuildingContext* graph_ctx = current_graph_context();
  if (graph_ctx == nullptr) return execute_single(kCollectiveReduce, inputs, attrs, loc);
  Graph graph = graph_ctx->graph();
  const std::vector<CollectionItem> previous = graph.get_collection(kOrderCollection);
  std::optional<ControlDependencies> after_previous;
  if (!previous.empty()) after_previous.emplace(std::vector<ControlInput>{std::get<Tensor>(previous.back())}, loc);
  Tensor y = execute_single(kCollectiveReduce, inputs, attrs, loc);
  graph.add_to_collection(kOrderCollection, y);
  return y;
}

GradList collective_reduce_grad(const GradInputs& op, absl::Span<const Tensor> g) {
  const std::string merge = op.attrs.get_or<std::string>("merge_op", "Add");
  if (merge != "Add")
    throw UnimplementedError(absl::StrCat("[all_reduce] has no gradient for merge_op ", merge, " (only sum and mean)"));
  // The same reduction, group and instance.
  return {collective_reduce(g[0], op.attrs, std::source_location::current())};
}

// Note [Static registrar]: libtapeflow's registries are filled by explicit calls from inside
// libtapeflow; an op defined in another library adds itself when that library loads.
struct Registrar {
  Registrar() { mpi::register_collective_ops(); }
} registrar;

}  // namespace

Tensor all_reduce(const Tensor& x, ReduceOp op, Group group, int64_t instance_key, std::source_location loc) {
  mpi::register_collective_ops();
  const char* merge = op == ReduceOp::kMin ? "Min" : op == ReduceOp::kMax ? "Max" : "Add";
  const char* final_op = op == ReduceOp::kMean ? "Div" : "Id";
  return collective_reduce(x,
                           AttrMap{{"merge_op", std::string(merge)}, {"final_op", std::string(final_op)},
                                   {"group_key", group.key}, {"instance_key", instance_key}},
                           loc);
}

void mpi::register_collective_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpRegistry::global().add(kCollectiveReduce);
    KernelRegistry& kernels = KernelRegistry::global();
    for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8})
      kernels.add(kCollectiveReduce.type, DeviceType::kCPU, dt, collective_reduce_kernel);
    register_gradient(kCollectiveReduce.type, collective_reduce_grad);
  });
}

}  // namespace tapeflow
