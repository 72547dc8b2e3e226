#include "graph/session.h"

#include <iostream>

#include <thread>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cpu/thread_pool.h"
#include "eager/check_numerics.h"
#include "eager/context.h"
#include "graph/executor.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"
#include "graph/placer.h"
#include "graph/remote_session.h"

namespace tapeflow {

namespace {

TensorRef ref_of(const Graph& graph, const Tensor& t, const char* what, std::source_location loc) {
  if (!t.defined()) throw InvalidArgumentError(absl::StrCat("[Session.run] a ", what, " is an empty tensor"), loc);
  if (!t.is_symbolic())
    throw InvalidArgumentError(absl::StrCat("[Session.run] a ", what,
                                            " is a concrete (eager) tensor, not a tensor of the session's graph"),
                               loc);
  if (t.symbolic().graph.get() != graph.state().get())
    throw InvalidArgumentError(absl::StrCat("[Session.run] Tensor '", t.name(), "' (", what,
                                            ") is not an element of this session's graph: it belongs to ",
                                            t.symbolic().graph->describe(), "; the session runs ",
                                            graph.describe()),
                               loc);
  return TensorRef{t.symbolic().node, t.symbolic().output};
}

thread_local InteractiveSession* g_default_session = nullptr;

}  // namespace

Session::Session(SessionOptions options) : Session(get_default_graph(), std::move(options)) {}

Session::Session(std::string target, const Graph& graph, SessionOptions options)
    : Session(graph, [&] {
        options.target = std::move(target);
        return std::move(options);
      }()) {}

Session::Session(const Graph& graph, SessionOptions options)
    : graph_(graph), options_(std::move(options)), state_(std::make_unique<SessionState>()) {
  if (options_.gpu_options.per_process_gpu_memory_fraction <= 0 ||
      options_.gpu_options.per_process_gpu_memory_fraction > 1)
    throw InvalidArgumentError(absl::StrCat("[Session] gpu_options.per_process_gpu_memory_fraction must be in (0, 1], got ",
                                            options_.gpu_options.per_process_gpu_memory_fraction),
                               {});
  if (!options_.target.empty()) {  // Note [Remote sessions] in graph/remote_session.h
    remote_ = make_remote_session(graph_, options_, {});
    return;
  }
  if (options_.intra_op_parallelism_threads > 0) set_intra_op_threads(options_.intra_op_parallelism_threads);
  devices_ = session_devices(options_);
  int inter = options_.inter_op_parallelism_threads;
  if (inter == 0) inter = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The caller's thread runs steps too, so a pool of inter - 1 threads gives `inter` at once.
  // Several devices: one pool per device, so each partition has threads of its own.
  if (inter > 1)
    for (size_t d = 0; d < devices_.size(); ++d) {
      pools_.push_back(std::make_unique<InterOpPool>(inter - 1));
      pool_ptrs_.push_back(pools_.back().get());
    }
}

Session::~Session() = default;

std::vector<Tensor> Session::run(const std::vector<Fetch>& fetches, const FeedList& feeds,
                                 const std::vector<Operation>& targets, const RunOptions* options,
                                 RunMetadata* metadata, std::source_location loc) {
  // Build the request and its signature; validate feeds (dtype and shape) first.
  Plan::Request request;
  std::string key;
  std::vector<Tensor> feed_values;
  feed_values.reserve(feeds.size());
  for (const auto& [tensor, operand] : feeds) {
    const TensorRef ref = ref_of(graph_, tensor, "feed key", loc);
    if (!graph_.state()->is_feedable(ref)) {
      const std::string why = graph_.state()->why_not_feedable(ref);
      throw InvalidArgumentError(absl::StrCat("[Session.run] Tensor '", tensor.name(), "' may not be fed", why.empty() ? "" : ": ", why), loc);
    }
    const DType want = tensor.dtype();
    Tensor value = operand.resolve("Session.run", &want);
    if (!value.defined() || value.is_symbolic())
      throw InvalidArgumentError(absl::StrCat("[Session.run] the value fed for '", tensor.name(),
                                              "' must be a concrete tensor"),
                                 loc);
    if (value.dtype() != want)
      throw InvalidArgumentError(absl::StrCat("[Session.run] Cannot feed a value of dtype ", dtype_name(value.dtype()),
                                              " for Tensor '", tensor.name(), "', which has dtype ", dtype_name(want)),
                                 loc);
    if (!value.shape().is_compatible_with(tensor.shape()))
      throw InvalidArgumentError(absl::StrCat("[Session.run] Cannot feed value of shape ", value.shape().to_string(),
                                              " for Tensor '", tensor.name(), "', which has shape ",
                                              tensor.shape().to_string()),
                                 loc);
    for (const TensorRef& seen : request.feeds)
      if (seen == ref)
        throw InvalidArgumentError(absl::StrCat("[Session.run] Tensor '", tensor.name(), "' is fed twice"), loc);
    request.feeds.push_back(ref);
    feed_values.push_back(std::move(value));
    absl::StrAppend(&key, "f", ref.node, ":", ref.index, ";");
  }
  for (const Fetch& f : fetches) {
    Plan::FetchSpec spec;
    if (f.variable()) {
      const Variable& v = *f.variable();
      const GraphVariableInfo* info = v.graph_info();
      if (info && !graph_.state()->variable_nodes_of(v.id()))
        throw InvalidArgumentError(absl::StrCat("[Session.run] Variable '", v.name(),
                                                "' is not an element of this session's graph"),
                                   loc);
      spec.kind = PlanFetch::Kind::kVariable;
      spec.variable = v;
      absl::StrAppend(&key, "v", v.id(), ";");
    } else if (f.operation().defined()) {
      if (!(f.operation().graph() == graph_))
        throw InvalidArgumentError(absl::StrCat("[Session.run] Operation '", f.operation().name(),
                                                "' is not an element of this session's graph: it belongs to ",
                                                f.operation().graph().describe(), "; the session runs ",
                                                graph_.describe()),
                                   loc);
      spec.kind = PlanFetch::Kind::kOperation;
      spec.node = f.operation().id();
      absl::StrAppend(&key, "o", spec.node, ";");
    } else {
      spec.ref = ref_of(graph_, f.tensor(), "fetch", loc);
      absl::StrAppend(&key, "t", spec.ref.node, ":", spec.ref.index, ";");
    }
    request.fetches.push_back(std::move(spec));
  }
  for (const Operation& t : targets) {
    if (!t.defined() || !(t.graph() == graph_))
      throw InvalidArgumentError("[Session.run] a target operation is not an element of this session's graph", loc);
    request.targets.push_back(t.id());
    absl::StrAppend(&key, "g", t.id(), ";");
  }

  if (remote_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) throw FailedPreconditionError("[Session.run] Attempted to use a closed Session", loc);
    }
    RemoteRunRequest remote;
    remote.feeds = request.feeds;
    remote.feed_values = std::move(feed_values);
    for (const Plan::FetchSpec& spec : request.fetches) {
      RemoteFetch f;
      f.kind = spec.kind == PlanFetch::Kind::kTensor      ? RemoteFetch::Kind::kTensor
               : spec.kind == PlanFetch::Kind::kOperation ? RemoteFetch::Kind::kOperation
                                                          : RemoteFetch::Kind::kVariable;
      f.ref = spec.ref;
      f.node = spec.node;
      if (spec.kind == PlanFetch::Kind::kVariable) {
        const auto nodes = graph_.state()->variable_nodes_of(spec.variable->id());
        if (!nodes)
          throw InvalidArgumentError(absl::StrCat("[Session.run] variable '", spec.variable->name(),
                                                  "' is not a variable of this session's graph"),
                                     loc);
        f.node = nodes->handle;
      }
      remote.fetches.push_back(f);
    }
    remote.targets = request.targets;
    remote.options = options;
    remote.metadata = metadata;
    remote.loc = loc;
    return remote_->run(remote);
  }
  if (check_numerics_enabled()) key += "checked;";  // an unfused plan (Plan::compile)
  std::shared_ptr<const Plan> plan;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) throw FailedPreconditionError("[Session.run] Attempted to use a closed Session", loc);
    auto it = plans_.find(key);
    if (it != plans_.end()) plan = it->second;
  }
  if (!plan) {
    std::shared_ptr<const Plan> compiled = Plan::compile(graph_, request, options_, loc, &devices_);
    std::lock_guard<std::mutex> lock(mu_);
    plan = plans_.try_emplace(key, std::move(compiled)).first->second;
  }
  warn_if_graph_grew(loc);
  // Kernels run eagerly underneath; tapes must not record the executor's own work.
  ContextGuard eager(&eager_context());
  PauseObservers no_recording;
  return plan->run(feed_values, *state_, pool_ptrs_, options, metadata, loc);
}

// Note [Growing graph]: a graph that gains nodes between runs is TensorFlow users' classic leak
// (an op built inside the training loop). The session says so once, with the count and the
// line that added the first new node; the run itself goes on.
void Session::warn_if_graph_grew(std::source_location loc) {
  const int nodes = graph_.num_nodes();
  int first_new = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (nodes_at_first_run_ < 0) nodes_at_first_run_ = nodes;
    if (warned_growth_ || nodes <= nodes_at_first_run_) return;
    warned_growth_ = true;
    first_new = nodes_at_first_run_;
  }
  const Node& node = graph_.state()->node(first_new);
  std::cerr << "[Session.run] warning: the graph grew by " << nodes - first_new << " nodes since this session's "
            << "first run (the first, '" << node.name << "' (" << node.op->type << "), was added at "
            << format_location(node.loc) << "; this run is at " << format_location(loc)
            << "). A graph that grows in a loop leaks memory: build ops once, feed values each run. "
               "(Printed once per session.)\n";
}

Tensor Session::run(const Fetch& fetch, const FeedList& feeds, std::source_location loc) {
  return std::move(run(std::vector<Fetch>{fetch}, feeds, {}, nullptr, nullptr, loc)[0]);
}

Tensor Session::run(const Fetch& fetch, const FeedList& feeds, const RunOptions& options, RunMetadata* metadata,
                    std::source_location loc) {
  return std::move(run(std::vector<Fetch>{fetch}, feeds, {}, &options, metadata, loc)[0]);
}

void Session::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (remote_ && !closed_) remote_->close();
  closed_ = true;
  plans_.clear();
  std::lock_guard<std::mutex> state_lock(state_->mu);
  state_->variables.clear();
}

namespace {
void check_session_variable(const Graph& graph, const Variable& v, const char* api, std::source_location loc) {
  const GraphVariableInfo* info = v.graph_info();
  if (info == nullptr || info->graph.lock().get() != graph.state().get())
    throw InvalidArgumentError(absl::StrCat("[Session.", api, "] variable '", v.name(), "' is not a variable of ",
                                            "this session's graph", info == nullptr ? " (it is an eager variable)" : ""),
                               loc);
}
}  // namespace

std::vector<Tensor> Session::variable_values(const std::vector<Variable>& variables, std::source_location loc) const {
  for (const Variable& v : variables) check_session_variable(graph_, v, "variable_values", loc);
  if (remote_)
    throw UnimplementedError("[Session.variable_values] not available on a remote target: fetch the variables "
                             "with run() instead", loc);
  if (closed()) throw FailedPreconditionError("[Session.variable_values] the session is closed", loc);
  std::vector<Tensor> out;
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const Variable& v : variables) {
    const auto it = state_->variables.find(v.id());
    if (it == state_->variables.end())
      throw FailedPreconditionError(absl::StrCat("[Session.variable_values] Attempting to use uninitialized value ",
                                                 v.name(), " (created at ", format_location(v.created_at()), ")"),
                                    loc);
    out.push_back(it->second);
  }
  return out;
}

void Session::set_variable_values(const std::vector<std::pair<Variable, Tensor>>& values, std::source_location loc) {
  for (const auto& [v, t] : values) {
    check_session_variable(graph_, v, "set_variable_values", loc);
    if (!t.defined() || t.is_symbolic())
      throw InvalidArgumentError(absl::StrCat("[Session.set_variable_values] the value for variable '", v.name(),
                                              "' is not a concrete tensor"),
                                 loc);
    if (t.dtype() != v.dtype() || !t.shape().is_fully_defined() || !v.shape().is_compatible_with(t.shape()))
      throw InvalidArgumentError(absl::StrCat("[Session.set_variable_values] variable '", v.name(), "' has dtype ",
                                              dtype_name(v.dtype()), " and shape ", v.shape().to_string(),
                                              "; the value has dtype ", dtype_name(t.dtype()), " and shape ",
                                              t.shape().to_string()),
                                 loc);
  }
  if (remote_)
    throw UnimplementedError("[Session.set_variable_values] not available on a remote target: assign the "
                             "variables with a graph op instead", loc);
  if (closed()) throw FailedPreconditionError("[Session.set_variable_values] the session is closed", loc);
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& [v, t] : values) state_->variables[v.id()] = t;
}

void Session::reset(const std::string& target, const std::vector<std::string>& containers, std::source_location loc) {
  reset_remote_containers(target, containers, loc);
}

bool Session::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

int Session::num_cached_plans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(plans_.size());
}

// ---- InteractiveSession and the shortcuts ----

InteractiveSession::InteractiveSession(SessionOptions options) : InteractiveSession(get_default_graph(), std::move(options)) {}

InteractiveSession::InteractiveSession(const Graph& graph, SessionOptions options)
    : Session(graph, std::move(options)),
      previous_(g_default_session),
      graph_scope_(std::make_unique<GraphDefaultGuard>(graph)) {
  g_default_session = this;
  disable_growth_warning();
  // Tensor::eval() lives in the eager layer; it reaches the default session through this hook.
  set_eval_hook([](const Tensor& t, std::source_location loc) { return eval(t, {}, nullptr, loc); });
}

InteractiveSession::~InteractiveSession() {
  graph_scope_.reset();
  g_default_session = previous_;
}

Session* default_session() { return g_default_session; }

namespace {
Session& session_or_default(Session* session, const char* api, std::source_location loc) {
  if (session) return *session;
  if (g_default_session) return *g_default_session;
  throw FailedPreconditionError(absl::StrCat("[", api, "] no session given and no default session "
                                             "(create an InteractiveSession, or pass a Session)"),
                                loc);
}
}  // namespace

Tensor eval(const Tensor& t, const FeedList& feeds, Session* session, std::source_location loc) {
  if (t.defined() && !t.is_symbolic()) return t;  // a concrete tensor is its own value
  return session_or_default(session, "eval", loc).run(t, feeds, loc);
}

void Operation::run(std::source_location loc) const { tapeflow::run(*this, {}, nullptr, loc); }

void run(const Operation& op, const FeedList& feeds, Session* session, std::source_location loc) {
  session_or_default(session, "run", loc).run(std::vector<Fetch>{}, feeds, {op}, nullptr, nullptr, loc);
}

}  // namespace tapeflow
