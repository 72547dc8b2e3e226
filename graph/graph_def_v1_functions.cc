#include "graph/graph_def_v1_functions.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "graph/tf_output_args.h"

namespace tapeflow::graph_def_internal {

absl::Status V1Index::build(const GraphDef& def) {
  const int n = def.node_size();
  for (int i = 0; i < n; ++i)
    if (!by_name.emplace(def.node(i).name(), i).second)
      return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] two nodes are named '", def.node(i).name(), "'"));
  inputs.resize(static_cast<size_t>(n));
  consumers.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    for (const std::string& in : def.node(i).input()) {
      V1Edge e;
      std::string_view src = in;
      if (!in.empty() && in[0] == '^') {
        src.remove_prefix(1);
        e.index = -1;
      } else {
        std::tie(src, e.index) = split_tensor_name(in);
      }
      const auto it = by_name.find(src);
      if (it == by_name.end())
        return node_error(def.node(i), absl::StatusCode::kNotFound, absl::StrCat("input '", in, "' names no node of the GraphDef"));
      e.src = it->second;
      ++consumers[static_cast<size_t>(e.src)];
      inputs[static_cast<size_t>(i)].push_back(e);
    }
  }
  return absl::OkStatus();
}

bool controls_last(const V1Index& index) {
  for (const std::vector<V1Edge>& edges : index.inputs) {
    bool control = false;
    for (const V1Edge& e : edges) {
      if (!e.control() && control) return false;
      control = control || e.control();
    }
  }
  return true;
}

bool is_back_edge(const GraphDef& def, int consumer, const V1Edge& e) {
  const std::string& src = def.node(e.src).op();
  return def.node(consumer).op() == "Merge" && (src == "NextIteration" || src == "RefNextIteration");
}

absl::StatusOr<std::vector<int>> order_without_back_edges(const GraphDef& def, const V1Index& index) {
  std::vector<int> first_edge{0}, srcs;
  for (int i = 0; i < def.node_size(); ++i) {
    for (const V1Edge& e : index.inputs[static_cast<size_t>(i)])
      if (!is_back_edge(def, i, e)) srcs.push_back(e.src);
    first_edge.push_back(static_cast<int>(srcs.size()));
  }
  return inputs_first_order(def, first_edge, [&](int k) { return srcs[static_cast<size_t>(k)]; });
}

std::optional<std::string> function_output_name(const proto::NodeDef& src, int index) {
  const std::vector<OutputArg>* args = tf_output_args(src.op());
  if (args == nullptr) return absl::StrCat(src.name(), ":output:", index);
  const auto arg = output_arg_of(*args, index);
  if (!arg) return std::nullopt;
  return absl::StrCat(src.name(), ":", absl::string_view(arg->first.data(), arg->first.size()), ":", arg->second);
}

absl::Status add_function_nodes(const GraphDef& def, const V1Index& index, const std::vector<int>& nodes,
                                absl::FunctionRef<absl::StatusOr<std::string>(int reader, const V1Edge& e)> data_input,
                                absl::FunctionRef<void(int src)> other_control, const std::vector<int>& side_effects,
                                proto::FunctionDef& fn) {
  const absl::flat_hash_set<int> in_fn(nodes.begin(), nodes.end());
  for (int n : nodes) {
    proto::NodeDef& nd = *fn.add_node_def();
    nd = def.node(n);
    nd.clear_input();
    for (const V1Edge& e : index.inputs[static_cast<size_t>(n)]) {
      if (e.control()) {
        if (in_fn.contains(e.src)) nd.add_input(absl::StrCat("^", def.node(e.src).name()));
        else other_control(e.src);
        continue;
      }
      absl::StatusOr<std::string> t = data_input(n, e);
      if (!t.ok()) return t.status();
      nd.add_input(*std::move(t));
    }
    keep_colocations(nd, index, [&](int c) { return in_fn.contains(c); });
  }
  proto::OpDef& sig = *fn.mutable_signature();
  for (int n : side_effects) {
    const std::string key = absl::StrCat("side_effect_", sig.control_output_size());
    sig.add_control_output(key);
    (*fn.mutable_control_ret())[key] = def.node(n).name();
  }
  return absl::OkStatus();
}

void keep_colocations(proto::NodeDef& node, const V1Index& index, absl::FunctionRef<bool(int)> kept) {
  const auto it = node.mutable_attr()->find("_class");
  if (it == node.mutable_attr()->end() || !it->second.has_list()) return;
  auto& entries = *it->second.mutable_list()->mutable_s();
  const auto gone = [&](const std::string& entry) {
    if (!entry.starts_with("loc:@")) return false;
    const auto n = index.by_name.find(std::string_view(entry).substr(5));
    return n == index.by_name.end() || !kept(n->second);
  };
  entries.erase(std::remove_if(entries.begin(), entries.end(), gone), entries.end());
  if (entries.empty()) node.mutable_attr()->erase(it);
}

void emit_rewritten(const GraphDef& def, const V1Index& index, const std::vector<bool>& removed,
                    std::vector<std::vector<proto::NodeDef>>& before, std::vector<proto::NodeDef>& at_end, GraphDef& out) {
  absl::flat_hash_set<std::string> again;  // removed names the rewrite uses again (an Exit's, a Merge's)
  for (const std::vector<proto::NodeDef>& nodes : before)
    for (const proto::NodeDef& nd : nodes) again.insert(nd.name());
  for (const proto::NodeDef& nd : at_end) again.insert(nd.name());
  const auto kept = [&](int n) { return !removed[static_cast<size_t>(n)] || again.contains(def.node(n).name()); };
  for (int i = 0; i < def.node_size(); ++i) {
    for (proto::NodeDef& nd : before[static_cast<size_t>(i)]) *out.add_node() = std::move(nd);
    if (removed[static_cast<size_t>(i)]) continue;
    proto::NodeDef* nd = out.add_node();
    *nd = def.node(i);
    keep_colocations(*nd, index, kept);
  }
  for (proto::NodeDef& nd : at_end) *out.add_node() = std::move(nd);
}

bool is_v1_loop_type(std::string_view t) {
  return t == "Enter" || t == "Exit" || t == "NextIteration" || t == "LoopCond" || t == "RefEnter" || t == "RefExit" ||
         t == "RefNextIteration";
}

std::string NameAllocator::take(const std::string& base, absl::FunctionRef<bool(const std::string&)> taken) {
  int& k = next_[base];  // 0: the base itself is still to try
  for (;; ++k) {
    std::string name = k == 0 ? base : absl::StrCat(base, "_", k);
    if (!taken(name) && used_.insert(name).second) {
      ++k;
      return name;
    }
  }
}

std::string NameAllocator::function_name(std::string_view scope, std::string_view suffix) {
  std::string base;
  for (char c : scope) base.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (base.empty() || !std::isalpha(static_cast<unsigned char>(base[0]))) base.insert(0, "f_");
  base.append(suffix);
  return take(base, [](const std::string&) { return false; });
}

std::string argument_name(const std::string& base, const V1Index& index, absl::flat_hash_map<std::string, std::string>& names) {
  auto [it, fresh] = names.try_emplace(base);
  if (fresh) {
    it->second = base;
    for (int k = 1; index.by_name.contains(it->second); ++k) it->second = absl::StrCat(base, "_", k);
  }
  return it->second;
}

}  // namespace tapeflow::graph_def_internal
