// TensorFlow's output arg names of the op types tapeflow reads and writes: what a FunctionDef's
// inputs ("node:out_arg:index") and rets name (graph_def_functions.cc reads them,
// graph_def_function_writer.cc writes them).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tapeflow::graph_def_internal {

struct OutputArg {
  std::string_view name;
  bool list = false;  // a list of tensors (Split's "output": num_split * T): the node's remaining outputs
};

// The op type's output args in order (empty for ops without outputs), or null for an op type
// the table does not hold.
const std::vector<OutputArg>* tf_output_args(std::string_view tf_type);

// Node output `index` of an op with these args as (arg, index within it); nullopt past them.
std::optional<std::pair<std::string_view, int>> output_arg_of(const std::vector<OutputArg>& args, int index);
// The node output that (arg, index within it) names; -1 when the op has no such arg or index.
int output_index_of(const std::vector<OutputArg>& args, std::string_view arg, int index);

}  // namespace tapeflow::graph_def_internal
