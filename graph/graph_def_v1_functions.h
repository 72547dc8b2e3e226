// What the rewrites of TensorFlow 1's control flow into functions share: an index of a
// GraphDef's edges, and the names a FunctionDef gives node outputs (Note [TF1 while loops],
// Note [TF1 conds as If]).
#pragma once

#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph_def.h"

namespace tapeflow::graph_def_internal {

struct V1Edge {
  int src = -1;
  int index = 0;  // -1: a control input
  bool control() const { return index < 0; }
};

// Every node's inputs as edges, and how many inputs name each node. Two nodes of one name or an
// input naming no node is an error.
struct V1Index {
  absl::flat_hash_map<std::string_view, int> by_name;
  std::vector<std::vector<V1Edge>> inputs;
  std::vector<int> consumers;
  absl::Status build(const GraphDef& def);
};

// Whether every node's control inputs come after its data inputs (as the import requires).
bool controls_last(const V1Index& index);

// A while loop's back edge: a NextIteration's into its Merge.
bool is_back_edge(const GraphDef& def, int consumer, const V1Edge& e);
// The nodes in an order where each comes after its inputs, back edges left out
// (inputs_first_order: a cycle through other edges is an error naming its nodes).
absl::StatusOr<std::vector<int>> order_without_back_edges(const GraphDef& def, const V1Index& index);

// "node:out_arg:k", how a FunctionDef names output `index` of `src` (TensorFlow's output arg
// names, graph/tf_output_args.h; "output" for an op type the table lacks); nullopt when the op has
// no such output.
std::optional<std::string> function_output_name(const proto::NodeDef& src, int index);

// Adds `nodes` of `def` to fn's body: a control input from another of them is kept, one from any
// other node is handed to `other_control`; a data input is named by `data_input` (an argument,
// or function_output_name of one of the nodes). Then each of `side_effects` as a control_ret
// ("side_effect_<k>"), so that the function runs it.
absl::Status add_function_nodes(const GraphDef& def, const V1Index& index, const std::vector<int>& nodes,
                                absl::FunctionRef<absl::StatusOr<std::string>(int reader, const V1Edge& e)> data_input,
                                absl::FunctionRef<void(int src)> other_control, const std::vector<int>& side_effects,
                                proto::FunctionDef& fn);

// Drops the "_class" entries ("loc:@x") of `node` that name a node `kept` refuses (or none).
void keep_colocations(proto::NodeDef& node, const V1Index& index, absl::FunctionRef<bool(int)> kept);

// out's nodes: def's except the `removed` ones (their "_class" entries naming removed nodes
// dropped, unless the name comes back among the new nodes), each of before[i] ahead of node i,
// and at_end after them all.
void emit_rewritten(const GraphDef& def, const V1Index& index, const std::vector<bool>& removed,
                    std::vector<std::vector<proto::NodeDef>>& before, std::vector<proto::NodeDef>& at_end, GraphDef& out);

bool is_v1_loop_type(std::string_view op_type);  // Enter, Exit, NextIteration, LoopCond (and Ref*)

// The names the rewrites hand out (If and While nodes, their functions), unique among each other
// and what `reserve` was given; each base's next suffix is kept, so many names of one base cost
// linear time.
class NameAllocator {
 public:
  void reserve(std::string name) { used_.insert(std::move(name)); }
  // `base`, or base_k for the least k not handed out that `taken` does not refuse.
  std::string take(const std::string& base, absl::FunctionRef<bool(const std::string&)> taken);
  // A function name of TensorFlow's characters from a name scope ("while/while" ->
  // "while_while") with `suffix` appended.
  std::string function_name(std::string_view scope, std::string_view suffix);

 private:
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_map<std::string, int> next_;
};

// A node name TensorFlow accepts ([A-Za-z0-9.][A-Za-z0-9_./>-]*). Inline: the import checks
// every node's name with it (Note [Linear import]; out of line it cost 5-7% of the import).
inline bool valid_node_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                    (i > 0 && (c == '_' || c == '/' || c == '-' || c == '>'));
    if (!ok) return false;
  }
  return true;
}

// A function argument's name: `base`, or base_k naming no node of the GraphDef, the same for one
// base within one pass (cached in `names`).
std::string argument_name(const std::string& base, const V1Index& index, absl::flat_hash_map<std::string, std::string>& names);

}  // namespace tapeflow::graph_def_internal
