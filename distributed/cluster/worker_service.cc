#include "distributed/cluster/worker_service.h"

#include <algorithm>
#include <charconv>
#include <future>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_def.h"
#include "graph/session.h"

namespace tapeflow::cluster {

namespace {

absl::Status status_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    return absl::Status(err.code(), err.message());
  } catch (const std::exception& err) {
    return absl::InternalError(err.what());
  }
}

absl::Status with_context(const absl::Status& s, std::string_view context) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(s.message(), " (", absl::string_view(context.data(), context.size()), ")"));
}

}  // namespace

struct Worker::GraphEntry {
  Graph graph;
  std::unique_ptr<Session> session;
  struct BoundVariable {
    std::string container, name;  // the VarHandleOp's container attr and name
    Variable variable;
  };
  std::vector<BoundVariable> variables;
  int64_t epoch = 0;  // the container's reset_epoch_ the session's variable values belong to
};

Worker::Worker(std::string name) : name_(std::move(name)) {}
Worker::~Worker() = default;

absl::Status tensor_to_wire(const Tensor& tensor, tapeflow::proto::TensorProto* out) {
  try {
    return graph_def_internal::tensor_to_proto(tensor, out);
  } catch (...) {
    return status_of(std::current_exception());
  }
}

absl::StatusOr<Tensor> tensor_from_wire(const tapeflow::proto::TensorProto& proto) {
  try {
    return graph_def_internal::tensor_from_proto(proto);
  } catch (...) {
    return status_of(std::current_exception());
  }
}

absl::Status Worker::register_graph(const RegisterGraphRequest& request, RegisterGraphResponse* response) {
  auto entry = std::make_shared<GraphEntry>();
  try {
    entry->graph = graph_from_graph_def(request.graph_def());
    entry->session = std::make_unique<Session>(entry->graph);
  } catch (...) {
    return with_context(status_of(std::current_exception()), absl::StrCat("registering a graph with ", name_));
  }
  for (const Node* node : entry->graph.state()->snapshot())
    if (node->variable && std::string_view(node->op->type) == "VarHandleOp")
      entry->variables.push_back({node->attrs.get_or<std::string>("container", ""), node->name, *node->variable});
  std::lock_guard<std::mutex> lock(mu_);
  const std::string handle = absl::StrCat("g", next_handle_++);
  graphs_[handle] = std::move(entry);
  response->set_graph_handle(handle);
  return absl::OkStatus();
}

absl::Status Worker::deregister_graph(const DeregisterGraphRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (graphs_.erase(request.graph_handle()) == 0)
    return absl::NotFoundError(absl::StrCat("graph handle '", request.graph_handle(), "' is not registered with ", name_));
  return absl::OkStatus();
}

namespace {

// "node:index" (or "node": index 0) of `graph` as a symbolic tensor.
absl::StatusOr<Tensor> tensor_named(const Graph& graph, const std::string& name, const std::string& task) {
  std::string node_name = name;
  int index = 0;
  const size_t colon = name.rfind(':');
  if (colon != std::string::npos) {
    const std::string digits = name.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || end != digits.data() + digits.size() || index < 0)
      return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a tensor name (node:index)"));
    node_name = node_name.substr(0, colon);
  }
  const int id = graph.state()->find(node_name);
  if (id < 0) return absl::NotFoundError(absl::StrCat("no node '", node_name, "' in the graph registered with ", task));
  if (index >= static_cast<int>(graph.state()->node(id).outputs.size()))
    return absl::InvalidArgumentError(absl::StrCat("node '", node_name, "' has no output ", index));
  return graph.state()->tensor(TensorRef{id, index});
}

}  // namespace

absl::Status Worker::run_graph(const RunGraphRequest& request, RunGraphResponse* response, const PullFn& pull,
                               const std::string& self_address) {
  try {  // nothing a request holds may escape as an exception (the gRPC edge would die)
    return run_graph_impl(request, response, pull, self_address);
  } catch (...) {
    return with_context(status_of(std::current_exception()), absl::StrCat("on ", name_));
  }
}

absl::Status Worker::run_graph_impl(const RunGraphRequest& request, RunGraphResponse* response, const PullFn& pull,
                                    const std::string& self_address) {
  std::shared_ptr<GraphEntry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = graphs_.find(request.graph_handle());
    if (it == graphs_.end())
      return absl::NotFoundError(absl::StrCat("graph handle '", request.graph_handle(), "' is not registered with ",
                                              name_, " (the task may have restarted)"));
    entry = it->second;
  }
  const Graph& graph = entry->graph;
  FeedList feeds;
  for (const NamedTensor& send : request.send()) {
    TF_ASSIGN_OR_RETURN(Tensor fed, tensor_named(graph, send.name(), name_));
    absl::StatusOr<Tensor> value = tensor_from_wire(send.tensor());
    if (!value.ok()) return with_context(value.status(), absl::StrCat("the value fed for '", send.name(), "'"));
    feeds.emplace_back(fed, *value);
  }
  // Pulls from other tasks run at once, one thread each (each is a round trip of its own).
  std::vector<Tensor> pulled_into;
  std::vector<std::future<absl::StatusOr<Tensor>>> pulls;
  for (const RemoteInput& recv : request.recv()) {
    TF_ASSIGN_OR_RETURN(Tensor fed, tensor_named(graph, recv.name(), name_));
    pulled_into.push_back(fed);
    if (recv.address().empty() || recv.address() == self_address) {
      std::promise<absl::StatusOr<Tensor>> local;
      local.set_value(step_tensor(request.step_id(), recv.key()));
      pulls.push_back(local.get_future());
    } else {
      pulls.push_back(std::async(std::launch::async, pull, recv.address(), request.step_id(), recv.key(),
                                 request.timeout_in_ms()));
    }
  }
  absl::Status pull_failure;
  for (size_t i = 0; i < pulls.size(); ++i) {
    absl::StatusOr<Tensor> value = pulls[i].get();  // every future is waited for, even after a failure
    const RemoteInput& recv = request.recv(static_cast<int>(i));
    if (!value.ok() && pull_failure.ok())
      pull_failure = with_context(value.status(), absl::StrCat(name_, " receiving '", recv.key(), "' from ",
                                                              recv.address().empty() ? "itself" : recv.address()));
    if (value.ok()) feeds.emplace_back(pulled_into[i], *value);
  }
  if (!pull_failure.ok()) return pull_failure;
  std::vector<Fetch> fetches;
  for (const std::string& name : request.fetch()) {
    if (name.rfind("var:", 0) == 0) {
      const std::string var = name.substr(4);
      auto it = std::find_if(entry->variables.begin(), entry->variables.end(), [&](const auto& b) { return b.name == var; });
      if (it == entry->variables.end())
        return absl::NotFoundError(absl::StrCat("no variable '", var, "' in the graph registered with ", name_));
      fetches.emplace_back(it->variable);
      continue;
    }
    TF_ASSIGN_OR_RETURN(Tensor t, tensor_named(graph, name, name_));
    fetches.emplace_back(t);
  }
  for (const std::string& name : request.keep()) {
    TF_ASSIGN_OR_RETURN(Tensor t, tensor_named(graph, name, name_));
    fetches.emplace_back(t);
  }
  std::vector<Operation> targets;
  for (const std::string& name : request.target()) {
    const int id = graph.state()->find(name);
    if (id < 0) return absl::NotFoundError(absl::StrCat("no node '", name, "' in the graph registered with ", name_));
    targets.emplace_back(graph.state(), id);
  }
  RunOptions options;
  if (request.trace()) options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata metadata;
  std::vector<Tensor> outputs;
  try {
    if (entry->variables.empty()) {
      outputs = entry->session->run(fetches, feeds, targets, &options, &metadata);
    } else {
      // Note [Resource container]: values in, run, values out, under the container's lock.
      std::lock_guard<std::mutex> lock(container_mu_);
      if (entry->epoch != reset_epoch_) {
        entry->session = std::make_unique<Session>(graph);
        entry->epoch = reset_epoch_;
      }
      std::vector<std::pair<Variable, Tensor>> in;
      for (const auto& b : entry->variables)
        if (auto it = container_.find({b.container, b.name}); it != container_.end()) in.emplace_back(b.variable, it->second);
      entry->session->set_variable_values(in);
      outputs = entry->session->run(fetches, feeds, targets, &options, &metadata);
      for (const auto& b : entry->variables) {
        try {
          container_[{b.container, b.name}] = entry->session->variable_values({b.variable})[0];
        } catch (const FailedPreconditionError&) {  // not initialized (yet)
        }
      }
    }
  } catch (...) {
    return with_context(status_of(std::current_exception()), absl::StrCat("on ", name_));
  }
  const int num_fetches = request.fetch_size();
  for (int i = 0; i < num_fetches; ++i) {
    NamedTensor* out = response->add_recv();
    out->set_name(request.fetch(i));
    if (!outputs[i].defined()) continue;  // an operation
    TF_RETURN_IF_ERROR(tensor_to_wire(outputs[i], out->mutable_tensor()));
  }
  if (request.keep_size() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = steps_.begin(); it != steps_.end();)  // tables whose master never cleaned up
      it = now - it->second.created > kStepTtl ? steps_.erase(it) : std::next(it);
    StepTable& table = steps_[request.step_id()];
    if (table.tensors.empty()) table.created = now;
    for (int i = 0; i < request.keep_size(); ++i) table.tensors[request.keep(i)] = outputs[num_fetches + i];
  }
  for (const NodeExecStats& s : metadata.step_stats.nodes) {
    NodeStats* out = response->add_step_stats();
    out->set_node_name(s.node_name);
    out->set_op(s.op);
    out->set_device(s.device);
    out->set_start_micros(s.start_micros);
    out->set_duration_nanos(s.duration_nanos);
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Worker::step_tensor(int64_t step_id, const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto step = steps_.find(step_id);
  if (step != steps_.end())
    if (auto it = step->second.tensors.find(key); it != step->second.tensors.end()) return it->second;
  return absl::NotFoundError(absl::StrCat(name_, " holds no tensor '", key, "' for step ", step_id,
                                          " (the task may have restarted, or the step was cleaned up)"));
}

absl::Status Worker::cleanup_step(const CleanupStepRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  steps_.erase(request.step_id());
  return absl::OkStatus();
}

absl::Status Worker::reset(const ResetRequest& request) {
  std::lock_guard<std::mutex> lock(container_mu_);
  if (request.container_size() == 0) {
    container_.clear();
  } else {
    const std::set<std::string> named(request.container().begin(), request.container().end());
    std::erase_if(container_, [&](const auto& entry) { return named.contains(entry.first.first); });
  }
  // Every graph's Session starts afresh on its next run (Note [Resource container]): its copies
  // of the cleared variables must go too.
  ++reset_epoch_;
  return absl::OkStatus();
}

int Worker::num_graphs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(graphs_.size());
}

int Worker::num_steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(steps_.size());
}

int Worker::num_container_variables() const {
  std::lock_guard<std::mutex> lock(container_mu_);
  return static_cast<int>(container_.size());
}

int Worker::num_container_variables(const std::string& container) const {
  std::lock_guard<std::mutex> lock(container_mu_);
  return static_cast<int>(std::count_if(container_.begin(), container_.end(),
                                        [&](const auto& entry) { return entry.first.first == container; }));
}

}  // namespace tapeflow::cluster
