#include "distributed/cluster/master.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "devices/device_spec.h"
#include "distributed/cluster/worker_service.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"

namespace tapeflow::cluster {

namespace {

struct Input {
  std::string node;
  int index = 0;
  bool control = false;
  std::string tensor() const { return absl::StrCat(node, ":", index); }
};

absl::StatusOr<Input> parse_input(const std::string& s) {
  Input in;
  std::string_view v = s;
  if (!v.empty() && v[0] == '^') {
    in.control = true;
    in.node = std::string(v.substr(1));
    return in;
  }
  const size_t colon = v.rfind(':');
  if (colon != std::string_view::npos) {
    const std::string_view digits = v.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), in.index);
    if (ec != std::errc() || end != digits.data() + digits.size())
      return absl::InvalidArgumentError(absl::StrCat("input '", s, "' is not node:index"));
    v = v.substr(0, colon);
  }
  in.node = std::string(v);
  return in;
}

// A Placeholder NodeDef named `name` for a tensor of `dtype` and `shape`, written by the
// exporter itself so its attrs are exactly what the importer reads.
absl::StatusOr<proto::NodeDef> placeholder_def(const std::string& name, DType dtype, const Shape& shape) {
  try {
    Graph g;
    {
      auto scope = g.as_default();
      placeholder(dtype, shape, "p");
    }
    GraphDef def = to_graph_def(g);
    proto::NodeDef node = def.node(0);
    node.set_name(name);
    return node;
  } catch (const Error& e) {
    return e.status();
  }
}

// dtype and shape of output `index` of def node `name`: from the graph, or (for the Consts the
// exporter adds) from the NodeDef.
absl::StatusOr<std::pair<DType, Shape>> output_spec(const Graph& graph, const GraphDef& def,
                                                    const std::map<std::string, int>& index, const Input& in) {
  const int id = graph.state()->find(in.node);
  if (id >= 0) {
    const Node& node = graph.state()->node(id);
    if (in.index < static_cast<int>(node.outputs.size()))
      return std::make_pair(node.outputs[in.index].dtype, node.outputs[in.index].shape);
  }
  const proto::NodeDef& n = def.node(index.at(in.node));
  if (n.op() == "Const" && in.index == 0 && n.attr().contains("value")) {
    const auto& value = n.attr().at("value").tensor();
    TF_ASSIGN_OR_RETURN(DType dt, graph_def_internal::from_proto_dtype(value.dtype()));
    std::vector<int64_t> dims;
    for (const auto& d : value.tensor_shape().dim()) dims.push_back(d.size());
    const Shape shape(dims);
    return std::pair<DType, Shape>(dt, shape);  // copied: moving the temporary trips GCC 12's -Wmaybe-uninitialized
  }
  return absl::InternalError(absl::StrCat("no output spec for '", in.tensor(), "'"));
}

}  // namespace

absl::StatusOr<ClusterPartition> partition_for_cluster(const Graph& graph, const ClusterSpec& cluster,
                                                       const std::string& default_job, int default_task) {
  ClusterPartition p;
  std::map<std::pair<std::string, int>, int> task_index;
  for (const auto& [job, addresses] : cluster.as_map())
    for (size_t t = 0; t < addresses.size(); ++t) {
      task_index[{job, static_cast<int>(t)}] = static_cast<int>(p.tasks.size());
      p.tasks.push_back(TaskInfo{job, static_cast<int>(t), addresses[t]});
    }
  auto default_it = task_index.find({default_job, default_task});
  if (default_it == task_index.end())
    return absl::InvalidArgumentError(absl::StrCat("the target ", task_name(default_job, default_task),
                                                   " is not in its own cluster ", cluster.to_string()));
  try {
    p.def = to_graph_def(graph);
  } catch (const Error& e) {
    return e.status();
  }
  const int n = p.def.node_size();
  p.task_of.assign(n, -1);
  p.level_of.assign(n, 0);
  for (int i = 0; i < n; ++i) p.index[p.def.node(i).name()] = i;
  for (int i = 0; i < n; ++i) {
    const proto::NodeDef& node = p.def.node(i);
    std::vector<Input> inputs;
    for (const std::string& s : node.input()) {
      TF_ASSIGN_OR_RETURN(Input in, parse_input(s));
      auto it = p.index.find(in.node);
      if (it == p.index.end() || it->second >= i)
        return absl::InternalError(absl::StrCat("node '", node.name(), "' reads '", s, "', not an earlier node"));
      inputs.push_back(std::move(in));
    }
    // Note [Cluster placement].
    int task = -1;
    if (!inputs.empty() && !inputs[0].control && p.def.node(p.index[inputs[0].node]).op() == "VarHandleOp")
      task = p.task_of[p.index[inputs[0].node]];
    if (task < 0) {
      absl::StatusOr<DeviceSpec> spec = DeviceSpec::parse(node.device());
      if (!spec.ok()) return spec.status();
      if (spec->job) {
        auto it = task_index.find({*spec->job, spec->task.value_or(0)});
        if (it == task_index.end())
          return absl::InvalidArgumentError(absl::StrCat(
              "node '", node.name(), "' (", node.op(), ") requests device '", node.device(), "', but the cluster (",
              cluster.to_string(), ") has no ", task_name(*spec->job, spec->task.value_or(0))));
        task = it->second;
      } else {
        task = default_it->second;
      }
    }
    p.task_of[i] = task;
    int level = 0;
    for (const Input& in : inputs) {
      const int src = p.index[in.node];
      level = std::max(level, p.level_of[src] + (p.task_of[src] != task ? 1 : 0));
    }
    p.level_of[i] = level;
    p.num_levels = std::max(p.num_levels, level + 1);
  }
  // The partitions: Placeholders for data from other tasks first, then the task's nodes.
  p.partitions.resize(p.tasks.size());
  std::vector<std::vector<proto::NodeDef>> nodes(p.tasks.size());
  for (int i = 0; i < n; ++i) {
    const int task = p.task_of[i];
    proto::NodeDef node = p.def.node(i);
    node.clear_device();
    node.clear_input();
    for (const std::string& s : p.def.node(i).input()) {
      const Input in = *parse_input(s);
      const int src = p.index[in.node];
      if (in.control) {
        if (p.task_of[src] == task && p.level_of[src] == p.level_of[i]) node.add_input(s);
        continue;
      }
      if (p.task_of[src] == task) {
        node.add_input(s);
        continue;
      }
      auto [it, added] = p.recv_names.try_emplace({task, in.tensor()}, absl::StrCat("cluster_recv/", in.node, "/", in.index));
      if (added) {
        TF_ASSIGN_OR_RETURN(auto spec, output_spec(graph, p.def, p.index, in));
        TF_ASSIGN_OR_RETURN(proto::NodeDef ph, placeholder_def(it->second, spec.first, spec.second));
        *p.partitions[task].add_node() = std::move(ph);
      }
      node.add_input(it->second);
    }
    nodes[task].push_back(std::move(node));
  }
  for (size_t t = 0; t < p.tasks.size(); ++t) {
    if (nodes[t].empty()) {
      p.partitions[t].clear_node();
      continue;
    }
    *p.partitions[t].mutable_versions() = p.def.versions();
    if (p.def.has_library()) *p.partitions[t].mutable_library() = p.def.library();  // the functions If / While nodes run
    for (proto::NodeDef& node : nodes[t]) *p.partitions[t].add_node() = std::move(node);
  }
  return p;
}

absl::StatusOr<StepPlan> plan_step(const ClusterPartition& p, const Graph& graph, const RemoteRunRequest& request) {
  const int n = p.def.node_size();
  auto def_index = [&](int graph_node) -> absl::StatusOr<int> {
    const std::string& name = graph.state()->node(graph_node).name;
    auto it = p.index.find(name);
    if (it == p.index.end())
      return absl::FailedPreconditionError(absl::StrCat("node '", name, "' was added after the graph was partitioned"));
    return it->second;
  };
  auto tensor_name = [&](const TensorRef& r) { return absl::StrCat(graph.state()->node(r.node).name, ":", r.index); };
  std::map<std::string, int> fed;  // "node:i" -> feed index
  for (size_t f = 0; f < request.feeds.size(); ++f) fed[tensor_name(request.feeds[f])] = static_cast<int>(f);

  // What the run needs, walking back from fetches and targets, stopping at fed tensors.
  std::vector<char> needed(n, 0);
  std::vector<int> stack;
  StepPlan plan;
  plan.fetches.resize(request.fetches.size());
  for (size_t f = 0; f < request.fetches.size(); ++f) {
    const RemoteFetch& fetch = request.fetches[f];
    if (fetch.kind == RemoteFetch::Kind::kTensor) {
      if (auto it = fed.find(tensor_name(fetch.ref)); it != fed.end()) {
        plan.fetches[f].kind = FetchSource::Kind::kFed;
        plan.fetches[f].feed = it->second;
        continue;
      }
      TF_ASSIGN_OR_RETURN(int i, def_index(fetch.ref.node));
      stack.push_back(i);
    } else {
      TF_ASSIGN_OR_RETURN(int i, def_index(fetch.node));
      stack.push_back(i);
    }
  }
  for (int t : request.targets) {
    TF_ASSIGN_OR_RETURN(int i, def_index(t));
    stack.push_back(i);
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (needed[i]) continue;
    needed[i] = 1;
    for (const std::string& s : p.def.node(i).input()) {
      const Input in = *parse_input(s);
      if (!in.control && fed.contains(in.tensor())) continue;
      stack.push_back(p.index.at(in.node));
    }
  }

  // One call per (level, task) with needed nodes.
  std::map<std::pair<int, int>, StepCall> calls;
  auto call_for = [&](int level, int task) -> StepCall& {
    StepCall& c = calls[{level, task}];
    c.level = level;
    c.task = task;
    return c;
  };
  std::set<std::pair<std::pair<int, int>, std::string>> fed_in, pulled, kept;  // dedupe per call
  std::set<int> keeping_tasks;
  for (int i = 0; i < n; ++i) {
    if (!needed[i]) continue;
    const int task = p.task_of[i], level = p.level_of[i];
    StepCall& call = call_for(level, task);
    call.request.add_target(p.def.node(i).name());
    for (const std::string& s : p.def.node(i).input()) {
      const Input in = *parse_input(s);
      if (in.control) continue;
      const int src = p.index.at(in.node);
      // A variable's handle is not a value: the op runs where its variable lives (Note
      // [Cluster placement]), and its partition holds the VarHandleOp.
      if (p.def.node(src).op() == "VarHandleOp") continue;
      const std::string name = p.task_of[src] == task ? in.tensor() : p.recv_names.at({task, in.tensor()});
      if (auto it = fed.find(in.tensor()); it != fed.end()) {
        if (!fed_in.insert({{level, task}, name}).second) continue;
        NamedTensor* send = call.request.add_send();
        send->set_name(name);
        TF_RETURN_IF_ERROR(tensor_to_wire(request.feed_values[it->second], send->mutable_tensor()));
        continue;
      }
      if (p.level_of[src] == level) continue;  // computed in this call
      if (pulled.insert({{level, task}, name}).second) {
        RemoteInput* recv = call.request.add_recv();
        recv->set_name(name);
        recv->set_address(p.task_of[src] == task ? "" : p.tasks[p.task_of[src]].address);
        recv->set_key(in.tensor());
      }
      if (kept.insert({{p.level_of[src], p.task_of[src]}, in.tensor()}).second) {
        call_for(p.level_of[src], p.task_of[src]).request.add_keep(in.tensor());
        keeping_tasks.insert(p.task_of[src]);
      }
    }
  }
  // Fetches (after the calls exist).
  std::vector<std::pair<int, std::string>> fetch_names(request.fetches.size());
  for (size_t f = 0; f < request.fetches.size(); ++f) {
    const RemoteFetch& fetch = request.fetches[f];
    if (plan.fetches[f].kind == FetchSource::Kind::kFed) continue;
    if (fetch.kind == RemoteFetch::Kind::kOperation) continue;  // a target; nothing comes back
    TF_ASSIGN_OR_RETURN(int i, def_index(fetch.kind == RemoteFetch::Kind::kTensor ? fetch.ref.node : fetch.node));
    fetch_names[f] = {i, fetch.kind == RemoteFetch::Kind::kTensor ? tensor_name(fetch.ref)
                                                                   : absl::StrCat("var:", p.def.node(i).name())};
  }
  // Number the rounds and calls, then point each fetch at its call.
  std::map<std::pair<int, int>, std::pair<int, int>> where;  // (level, task) -> (round, call)
  int previous_level = -1;
  for (auto& [key, call] : calls) {
    if (key.first != previous_level) {
      plan.rounds.emplace_back();
      previous_level = key.first;
    }
    where[key] = {static_cast<int>(plan.rounds.size()) - 1, static_cast<int>(plan.rounds.back().size())};
    plan.rounds.back().push_back(std::move(call));
  }
  std::map<int, int> last_level;  // task -> its last level with a call this step
  for (const auto& [key, w] : where) last_level[key.second] = std::max(last_level[key.second], key.first);
  for (size_t f = 0; f < request.fetches.size(); ++f) {
    if (fetch_names[f].second.empty()) continue;
    const int i = fetch_names[f].first;
    // A variable's value after the run: read by the task's last call of the step.
    const bool variable = request.fetches[f].kind == RemoteFetch::Kind::kVariable;
    const int level = variable ? last_level.at(p.task_of[i]) : p.level_of[i];
    const auto [round, c] = where.at({level, p.task_of[i]});
    RunGraphRequest& r = plan.rounds[round][c].request;
    plan.fetches[f] = FetchSource{FetchSource::Kind::kCall, -1, round, c, r.fetch_size()};
    r.add_fetch(fetch_names[f].second);
  }
  plan.tasks_with_keeps.assign(keeping_tasks.begin(), keeping_tasks.end());
  return plan;
}

}  // namespace tapeflow::cluster
