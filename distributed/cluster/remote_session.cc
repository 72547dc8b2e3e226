#include "distributed/cluster/remote_session.h"

#include <atomic>
#include <future>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "distributed/cluster/grpc_client.h"
#include "distributed/cluster/master.h"
#include "distributed/cluster/worker_service.h"

namespace tapeflow::cluster {

namespace {

using Clock = std::chrono::steady_clock;

std::string address_of(const std::string& target) { return target.substr(std::string("grpc://").size()); }

// The cluster as the target server knows it, and which task the target is.
struct TargetStatus {
  ClusterSpec cluster;
  std::string job;
  int task = 0;
};

absl::StatusOr<TargetStatus> get_status(const std::string& address, int64_t timeout_ms) {
  auto stub = stub_for(address);
  grpc::ClientContext context;
  prepare_context(context, timeout_ms);
  GetStatusRequest request;
  GetStatusResponse response;
  absl::Status s = from_grpc(stub->GetStatus(&context, request, &response));
  if (!s.ok())
    return absl::Status(s.code(), absl::StrCat("the target ", address, " did not answer GetStatus: ", s.message()));
  std::map<std::string, std::vector<std::string>> jobs;
  for (const JobDef& job : response.cluster().job()) {
    std::vector<std::string>& tasks = jobs[job.name()];
    tasks.resize(job.tasks_size());
    for (const auto& [t, a] : job.tasks())
      if (t >= 0 && t < job.tasks_size()) tasks[static_cast<size_t>(t)] = a;
  }
  TargetStatus out;
  try {
    out.cluster = ClusterSpec(std::move(jobs));
  } catch (const Error& e) {
    return e.status();
  }
  out.job = response.job();
  out.task = response.task();
  return out;
}

// Transport failures (as opposed to an op's own error) make the next run register again.
bool transport_failure(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded ||
         code == absl::StatusCode::kNotFound || code == absl::StatusCode::kCancelled ||
         code == absl::StatusCode::kUnknown || code == absl::StatusCode::kAborted;
}

class GrpcSession final : public RemoteSession {
 public:
  GrpcSession(const Graph& graph, const SessionOptions& options)
      : graph_(graph), target_(options.target), address_(address_of(options.target)) {
    if (address_.empty() || address_.find(':') == std::string::npos)
      throw InvalidArgumentError(absl::StrCat("[Session] target '", target_, "' is not grpc://host:port"), {});
  }
  ~GrpcSession() override { close(); }

  std::vector<Tensor> run(const RemoteRunRequest& request) override;
  void close() override;

 private:
  struct Registered {
    uint64_t version = 0;
    ClusterPartition partition;
    std::vector<std::string> handles;  // per task; "" where the task has no nodes
  };
  // The registration for the graph as it is now (registering it when needed).
  std::shared_ptr<const Registered> registered(int64_t timeout_ms, std::source_location loc);
  void deregister(const Registered& r);

  Graph graph_;
  std::string target_;
  std::string address_;
  std::mutex mu_;
  std::shared_ptr<const Registered> registered_;
  std::mt19937_64 rng_{std::random_device{}()};
};

std::shared_ptr<const GrpcSession::Registered> GrpcSession::registered(int64_t timeout_ms, std::source_location loc) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t version = graph_.state()->version();
  if (registered_ && registered_->version == version) return registered_;
  if (registered_) deregister(*registered_);
  registered_.reset();
  absl::StatusOr<TargetStatus> status = get_status(address_, timeout_ms > 0 ? timeout_ms : 30'000);
  if (!status.ok()) throw_status(absl::Status(status.status().code(), absl::StrCat("[Session.run] ", status.status().message())), loc);
  absl::StatusOr<ClusterPartition> partition = partition_for_cluster(graph_, status->cluster, status->job, status->task);
  if (!partition.ok())
    throw_status(absl::Status(partition.status().code(), absl::StrCat("[Session.run] ", partition.status().message())), loc);
  auto r = std::make_shared<Registered>();
  r->version = version;
  r->partition = std::move(*partition);
  r->handles.resize(r->partition.tasks.size());
  for (size_t t = 0; t < r->partition.tasks.size(); ++t) {
    if (r->partition.partitions[t].node_size() == 0) continue;
    const TaskInfo& task = r->partition.tasks[t];
    grpc::ClientContext context;
    prepare_context(context, timeout_ms > 0 ? timeout_ms : 60'000);
    RegisterGraphRequest req;
    *req.mutable_graph_def() = r->partition.partitions[t];
    RegisterGraphResponse resp;
    absl::Status s = from_grpc(stub_for(task.address)->RegisterGraph(&context, req, &resp));
    if (!s.ok()) {
      if (transport_failure(s.code())) forget_channel(task.address);
      deregister(*r);
      throw_status(absl::Status(s.code(), absl::StrCat("[Session.run] ", task.name(), " (", task.address,
                                                       ") failed while registering its partition (RegisterGraph): ",
                                                       s.message())),
                   loc);
    }
    r->handles[t] = resp.graph_handle();
  }
  registered_ = r;
  return r;
}

void GrpcSession::deregister(const Registered& r) {
  for (size_t t = 0; t < r.handles.size(); ++t) {
    if (r.handles[t].empty()) continue;
    grpc::ClientContext context;
    prepare_context(context, 2'000);
    DeregisterGraphRequest req;
    req.set_graph_handle(r.handles[t]);
    DeregisterGraphResponse resp;
    (void)stub_for(r.partition.tasks[t].address)->DeregisterGraph(&context, req, &resp);  // best effort
  }
}

void GrpcSession::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (registered_) deregister(*registered_);
  registered_.reset();
}

std::vector<Tensor> GrpcSession::run(const RemoteRunRequest& request) {
  const std::source_location loc = request.loc;
  const int64_t timeout_ms = request.options ? request.options->timeout_in_ms : 0;
  const Clock::time_point start = Clock::now();
  auto remaining_ms = [&]() -> int64_t {
    if (timeout_ms <= 0) return 0;
    const int64_t spent = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    return std::max<int64_t>(1, timeout_ms - spent);
  };
  std::shared_ptr<const Registered> reg = registered(timeout_ms, loc);
  absl::StatusOr<StepPlan> plan = plan_step(reg->partition, graph_, request);
  if (!plan.ok()) throw_status(absl::Status(plan.status().code(), absl::StrCat("[Session.run] ", plan.status().message())), loc);
  int64_t step_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    step_id = static_cast<int64_t>(rng_() >> 1);
  }
  const bool trace = request.options && request.options->trace_level != RunOptions::TraceLevel::kNoTrace;
  std::vector<std::vector<RunGraphResponse>> replies(plan->rounds.size());
  absl::Status failure;
  for (size_t r = 0; r < plan->rounds.size() && failure.ok(); ++r) {
    std::vector<StepCall>& round = plan->rounds[r];
    replies[r].resize(round.size());
    std::vector<absl::Status> statuses(round.size());
    auto one = [&](size_t c) {
      StepCall& call = round[c];
      const TaskInfo& task = reg->partition.tasks[call.task];
      call.request.set_graph_handle(reg->handles[call.task]);
      call.request.set_step_id(step_id);
      call.request.set_timeout_in_ms(remaining_ms());
      call.request.set_trace(trace);
      grpc::ClientContext context;
      prepare_context(context, remaining_ms());
      absl::Status s = from_grpc(stub_for(task.address)->RunGraph(&context, call.request, &replies[r][c]));
      if (!s.ok()) {
        const std::string what = absl::StrCat(" while running level ", call.level, " of step ", step_id, " (RunGraph)");
        statuses[c] = s.code() == absl::StatusCode::kDeadlineExceeded
                          ? absl::DeadlineExceededError(absl::StrCat("[Session.run] ", task.name(), " (", task.address,
                                                                     ") did not answer within the run's timeout of ",
                                                                     timeout_ms, " ms", what))
                          : absl::Status(s.code(), absl::StrCat("[Session.run] ", task.name(), " (", task.address,
                                                                ") failed", what, ": ", s.message()));
      }
    };
    if (round.size() == 1) {
      one(0);
    } else {
      std::vector<std::future<void>> pending;
      for (size_t c = 0; c < round.size(); ++c) pending.push_back(std::async(std::launch::async, one, c));
      for (auto& f : pending) f.get();
    }
    for (const absl::Status& s : statuses)
      if (!s.ok() && failure.ok()) failure = s;
  }
  // Drop the step's kept tensors (Note [Cluster protocol]); best effort, bounded.
  {
    std::vector<std::future<void>> cleanups;
    for (int t : plan->tasks_with_keeps)
      cleanups.push_back(std::async(std::launch::async, [&, t] {
        grpc::ClientContext context;
        prepare_context(context, 2'000);
        CleanupStepRequest req;
        req.set_step_id(step_id);
        CleanupStepResponse resp;
        (void)stub_for(reg->partition.tasks[t].address)->CleanupStep(&context, req, &resp);
      }));
  }  // waited for here
  if (!failure.ok()) {
    if (transport_failure(failure.code())) {  // Note [Recovery]
      for (const TaskInfo& task : reg->partition.tasks) forget_channel(task.address);
      std::lock_guard<std::mutex> lock(mu_);
      if (registered_ == reg) registered_.reset();
    }
    throw_status(failure, loc);
  }
  if (trace && request.metadata) {
    for (size_t r = 0; r < replies.size(); ++r)
      for (size_t c = 0; c < replies[r].size(); ++c) {
        const TaskInfo& task = reg->partition.tasks[plan->rounds[r][c].task];
        for (const NodeStats& s : replies[r][c].step_stats()) {
          NodeExecStats stats;
          stats.node_name = s.node_name();
          stats.op = s.op();
          stats.device = task_device_name(task.job, task.task);
          stats.start_micros = s.start_micros();
          stats.duration_nanos = s.duration_nanos();
          request.metadata->step_stats.nodes.push_back(std::move(stats));
        }
      }
  }
  if (request.options && request.options->output_partition_graphs && request.metadata) {
    for (size_t t = 0; t < reg->partition.tasks.size(); ++t) {
      const GraphDef& part = reg->partition.partitions[t];
      if (part.node_size() == 0) continue;
      PartitionGraph pg;
      pg.device = task_device_name(reg->partition.tasks[t].job, reg->partition.tasks[t].task);
      for (const proto::NodeDef& n : part.node())
        pg.nodes.push_back(absl::StrCat(n.name(), " = ", n.op(), "(", absl::StrJoin(n.input(), ", "), ")"));
      request.metadata->partition_graphs.push_back(std::move(pg));
    }
  }
  std::vector<Tensor> out(request.fetches.size());
  for (size_t f = 0; f < request.fetches.size(); ++f) {
    const FetchSource& src = plan->fetches[f];
    if (src.kind == FetchSource::Kind::kFed) {
      out[f] = request.feed_values[src.feed];
    } else if (src.kind == FetchSource::Kind::kCall) {
      const NamedTensor& t = replies[src.round][src.call].recv(src.position);
      absl::StatusOr<Tensor> value = tensor_from_wire(t.tensor());
      if (!value.ok()) throw_status(value.status(), loc);
      out[f] = *value;
    }
  }
  return out;
}

void reset_containers(const std::string& target, const std::vector<std::string>& containers) {
  absl::StatusOr<TargetStatus> status = get_status(address_of(target), 30'000);
  if (!status.ok())
    throw_status(absl::Status(status.status().code(), absl::StrCat("[Session.reset] ", status.status().message())), {});
  ResetRequest req;
  for (const std::string& c : containers) req.add_container(c);
  for (const auto& [job, addresses] : status->cluster.as_map())
    for (size_t t = 0; t < addresses.size(); ++t) {
      grpc::ClientContext context;
      prepare_context(context, 30'000);
      ResetResponse resp;
      absl::Status s = from_grpc(stub_for(addresses[t])->Reset(&context, req, &resp));
      if (!s.ok())
        throw_status(absl::Status(s.code(), absl::StrCat("[Session.reset] ", task_name(job, static_cast<int>(t)), " (",
                                                         addresses[t], "): ", s.message())),
                     {});
    }
}

}  // namespace

void register_grpc_sessions() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_remote_session_factory(
        "grpc://",
        [](const Graph& graph, const SessionOptions& options) -> std::unique_ptr<RemoteSession> {
          return std::make_unique<GrpcSession>(graph, options);
        },
        &reset_containers);
  });
}

namespace {
// Registered when libtapeflow_cluster is loaded (graph/remote_session.h).
[[maybe_unused]] const bool g_registered = (register_grpc_sessions(), true);
}  // namespace

}  // namespace tapeflow::cluster
