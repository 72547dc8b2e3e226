// What the rewrites of TensorFlow 1's control flow into functions share: an index of a
// GraphDef's edges, and the names a FunctionDef gives node outputs (Note [TF1 while loops],
// Note [TF1 conds as If]).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
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

// "node:out_arg:k", how a FunctionDef names output `index` of `src` (TensorFlow's output arg
// names, graph/tf_output_args.h; "output" for an op type the table lacks); nullopt when the op has
// no such output.
std::optional<std::string> function_output_name(const proto::NodeDef& src, int index);

// Drops the "_class" entries ("loc:@x") of `node` that name a node `kept` refuses (or none).
void keep_colocations(proto::NodeDef& node, const V1Index& index, absl::FunctionRef<bool(int)> kept);

// out's nodes: def's except the `removed` ones (their "_class" entries naming removed nodes
// dropped), each of before[i] ahead of node i, and at_end after them all.
void emit_rewritten(const GraphDef& def, const V1Index& index, const std::vector<bool>& removed,
                    std::vector<std::vector<proto::NodeDef>>& before, std::vector<proto::NodeDef>& at_end, GraphDef& out);

// A function name of TensorFlow's characters made from a name scope ("while/while" ->
// "while_while"), unique among `used` (which it joins) with `suffix` appended.
std::string unique_function_name(std::string_view scope, std::string_view suffix, absl::flat_hash_set<std::string>& used);

// `base`, or base with '_' appended until it names no node (a function argument's name).
std::string argument_name(std::string base, const V1Index& index);

}  // namespace tapeflow::graph_def_internal
