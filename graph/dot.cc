#include "graph/dot.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/errors.h"
#include "graph/graph_def.h"
#include "graph/graph_ops.h"

namespace tapeflow {
namespace {

// A DOT quoted string: every id and attribute is quoted, so any node name is a valid id.
// Backslashes are doubled because Graphviz reads "\n", "\l", "\N" in labels as escapes.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': break;
      default: out += c;
    }
  }
  return out + "\"";
}

// Labels are joined with Graphviz's "\n" (centred line break) after each part is escaped.
std::string label(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    std::string q = quote(line);
    if (!out.empty()) out += "\\n";
    out += q.substr(1, q.size() - 2);
  }
  return "\"" + out + "\"";
}

std::string_view last_component(std::string_view name) {
  const size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

// One name scope: its nodes and its sub-scopes, both in node-id order (deterministic, and
// roughly the order the user wrote them).
struct Scope {
  std::string name;  // "inner" for "outer/inner"; "" for the root (Note [Linear DOT]: not the path)
  std::vector<int> nodes;
  std::vector<std::unique_ptr<Scope>> children;
  std::map<std::string, Scope*, std::less<>> by_name;

  Scope* child(std::string_view child_name) {
    if (auto it = by_name.find(child_name); it != by_name.end()) return it->second;
    auto scope = std::make_unique<Scope>();
    scope->name = std::string(child_name);
    Scope* raw = scope.get();
    children.push_back(std::move(scope));
    by_name.emplace(std::string(child_name), raw);
    return raw;
  }
};

// What the stats say about one node: the entry that ran it (its own, or its fused chain's).
struct NodeTiming {
  int64_t duration_nanos = 0;
  std::string device;
  std::string fused_into;  // set for a member of a fused chain other than the last
};

std::string format_duration(int64_t nanos) {
  if (nanos >= 1'000'000) return absl::StrFormat("%.2f ms", nanos / 1e6);
  if (nanos >= 1'000) return absl::StrFormat("%.1f us", nanos / 1e3);
  return absl::StrFormat("%d ns", nanos);
}

// What DotWriter draws, from a Graph (with dtypes and shapes) or straight from a GraphDef.
struct DotNode {
  std::string name, op, device;  // device: the requested one ("" when none)
};
struct DotEdge {
  enum class Style { kData, kControl, kConstant };
  int src = 0, dst = 0;  // indices into the node list
  Style style = Style::kData;
  std::string label;
};

class DotWriter {
 public:
  DotWriter(const std::vector<DotNode>& nodes, const std::vector<DotEdge>& edges, const DotOptions& options)
      : nodes_(nodes), edges_(edges) {
    if (options.step_stats) read_stats(*options.step_stats);
  }

  std::string write() {
    Scope root;
    for (size_t id = 0; id < nodes_.size(); ++id) {
      Scope* scope = &root;
      const std::string_view name = nodes_[id].name;
      for (size_t begin = 0, slash; (slash = name.find('/', begin)) != std::string_view::npos; begin = slash + 1)
        scope = scope->child(name.substr(begin, slash - begin));
      scope->nodes.push_back(static_cast<int>(id));
    }
    out_ = "digraph \"graph\" {\n";
    out_ += "  node [shape=box, fontname=\"Helvetica\"];\n";
    out_ += "  edge [fontname=\"Helvetica\", fontsize=10];\n";
    write_scope(root, 1);
    for (const DotEdge& e : edges_) write_edge(e);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  void read_stats(const StepStats& stats) {
    for (const NodeExecStats& s : stats.nodes) {
      if (s.duration_nanos < 0)
        throw InvalidArgumentError(absl::StrCat("[to_dot] step statistics of node '", s.node_name,
                                                "' have a negative duration (", s.duration_nanos, " ns)"));
      // Summed, so stats appended from several runs show the total.
      NodeTiming& t = timings_[s.node_name];
      t.duration_nanos += s.duration_nanos;
      t.device = s.device;
      const int64_t total = t.duration_nanos;  // `t` dangles once a member below is inserted
      // A fused chain's members have no entries of their own: they take the chain's colour.
      for (const std::string& member : s.fused_nodes) {
        if (member == s.node_name) continue;
        NodeTiming& m = timings_[member];
        m.duration_nanos += s.duration_nanos;
        m.device = s.device;
        m.fused_into = s.node_name;
      }
      max_nanos_ = std::max(max_nanos_, total);
    }
  }

  // Note [Linear DOT]: the text must grow with the graph, not with the square of its scope
  // depth (a 40 KB GraphDef of 20,000 nested scopes once gave 1.6 GB). So nothing written per
  // scope repeats its path: a cluster's id is "cluster_<n>" (n counts the clusters in writing
  // order: unique and deterministic), its label is its own name, and the indentation stops
  // growing at kMaxIndentDepth levels. Node ids are the full names, which the graph holds anyway.
  static constexpr int kMaxIndentDepth = 16;

  void write_scope(const Scope& scope, int depth) {
    const std::string indent(2 * std::min(depth, kMaxIndentDepth), ' ');
    for (int id : scope.nodes) write_node(nodes_[id], indent);
    for (const auto& child : scope.children) {
      // Graphviz draws a subgraph as a box only when its id starts with "cluster".
      absl::StrAppend(&out_, indent, "subgraph \"cluster_", ++clusters_, "\" {\n");
      absl::StrAppend(&out_, indent, "  label=", quote(child->name), ";\n");
      write_scope(*child, depth + 1);
      absl::StrAppend(&out_, indent, "}\n");
    }
  }

  void write_node(const DotNode& n, const std::string& indent) {
    std::vector<std::string> lines = {std::string(last_component(n.name)), n.op};
    std::string device = n.device;
    std::string attrs;
    if (auto it = timings_.find(n.name); it != timings_.end()) {
      const NodeTiming& t = it->second;
      lines.push_back(t.fused_into.empty() ? format_duration(t.duration_nanos)
                                           : "fused into " + std::string(last_component(t.fused_into)));
      if (!t.device.empty()) device = t.device;
      // White (fastest) to red (slowest) by saturation in HSV, which DOT accepts as "h s v".
      const double share = max_nanos_ > 0 ? static_cast<double>(t.duration_nanos) / max_nanos_ : 0.0;
      absl::StrAppend(&attrs, ", style=filled, fillcolor=", quote(absl::StrFormat("0.000 %.3f 1.000", share)));
    }
    std::string tooltip = device.empty() ? n.name : absl::StrCat(n.name, "\n", device);
    absl::StrAppend(&out_, indent, quote(n.name), " [label=", label(lines), ", tooltip=", quote(tooltip), attrs,
                    "];\n");
  }

  void write_edge(const DotEdge& e) {
    absl::StrAppend(&out_, "  ", quote(nodes_[e.src].name), " -> ", quote(nodes_[e.dst].name));
    switch (e.style) {
      case DotEdge::Style::kData: absl::StrAppend(&out_, " [label=", quote(e.label), "];\n"); break;
      case DotEdge::Style::kControl: out_ += " [style=dashed];\n"; break;
      case DotEdge::Style::kConstant: out_ += " [style=dotted, label=\"constant input\"];\n"; break;
    }
  }

  const std::vector<DotNode>& nodes_;
  const std::vector<DotEdge>& edges_;
  absl::flat_hash_map<std::string, NodeTiming> timings_;
  int64_t max_nanos_ = 0;
  int clusters_ = 0;
  std::string out_;
};

}  // namespace

std::string to_dot(const Graph& g, const DotOptions& options) {
  // One snapshot, so nodes added concurrently cannot appear half-way (their ids index it).
  const std::vector<const Node*> snapshot = g.state()->snapshot();
  std::vector<DotNode> nodes;
  nodes.reserve(snapshot.size());
  std::vector<DotEdge> edges;
  for (const Node* n : snapshot)
    nodes.push_back({n->name, n->op->type, n->requested_device.empty() ? "" : n->requested_device.to_string()});
  for (const Node* n : snapshot) {
    for (const TensorRef& in : n->inputs) {
      const Node& src = *snapshot[in.node];
      std::string text;
      if (in.index < static_cast<int>(src.outputs.size())) {
        const TensorSpec& spec = src.outputs[in.index];
        text = absl::StrCat(dtype_name(spec.dtype), " ", spec.shape.to_string());
      }
      // Output 0 is the usual case; other outputs say which one they are.
      if (in.index > 0) text = absl::StrCat(":", in.index, " ", text);
      edges.push_back({in.node, n->id, DotEdge::Style::kData, std::move(text)});
    }
    // A variable's handle is a control input of its reads and updates in tapeflow, and their
    // input 0 in TensorFlow (Note [Variables in a GraphDef]): drawn as the data edge it is.
    for (int c : n->control_inputs)
      edges.push_back(snapshot[c]->op == &kVarHandleOp ? DotEdge{c, n->id, DotEdge::Style::kData, "resource"}
                                                      : DotEdge{c, n->id, DotEdge::Style::kControl, ""});
  }
  // The Consts an imported node's constant inputs came from (Reshape's shape, Mean's axes):
  // tapeflow holds their values as attrs, TensorFlow as edges; dotted, so they do not float alone.
  for (const auto& [constant, consumer] : graph_def_internal::spare_constant_edges(*g.state(), snapshot))
    edges.push_back({constant, consumer, DotEdge::Style::kConstant, ""});
  return DotWriter(nodes, edges, options).write();
}

std::string graph_def_to_dot(const GraphDef& def, const DotOptions& options) {
  std::vector<DotNode> nodes;
  nodes.reserve(static_cast<size_t>(def.node_size()));
  absl::flat_hash_map<std::string_view, int> id_of;
  for (const proto::NodeDef& n : def.node()) {
    id_of.try_emplace(n.name(), static_cast<int>(nodes.size()));  // a duplicated name: its first node
    nodes.push_back({n.name(), n.op(), n.device()});
  }
  std::vector<DotEdge> edges;
  for (int i = 0; i < def.node_size(); ++i) {
    for (const std::string& input : def.node(i).input()) {
      const bool control = !input.empty() && input[0] == '^';
      std::string_view src = control ? std::string_view(input).substr(1) : std::string_view(input);
      std::string label;
      if (!control) {
        int index;
        std::tie(src, index) = graph_def_internal::split_tensor_name(src);
        if (index > 0) label = absl::StrCat(":", index);
      }
      const auto it = id_of.find(src);
      if (it == id_of.end()) continue;  // names no node: nothing to draw it from
      edges.push_back({it->second, i, control ? DotEdge::Style::kControl : DotEdge::Style::kData, std::move(label)});
    }
  }
  return DotWriter(nodes, edges, options).write();
}

}  // namespace tapeflow
