// The eager layer's view of a graph. A symbolic Tensor names an output of a graph node
// ("node:index"); the graph itself lives in graph/ (a higher layer), which implements the small
// interface below so that tensors, variables and messages can refer to it without including it.
#pragma once

#include <memory>
#include <source_location>
#include <string>

namespace tapeflow {

class Tensor;

class GraphBase {
 public:
  virtual ~GraphBase() = default;
  // The node's unique name ("outer/c_1") and its op type ("MatMul").
  virtual std::string node_name(int node) const = 0;
  virtual std::string node_type(int node) const = 0;
  // The tensor feeding input `index` of `node` (a symbolic tensor of this graph).
  virtual Tensor node_input(int node, int index) const = 0;
  // Which graph this is, for messages: "the graph created at model.cc:12".
  virtual std::string describe() const = 0;
};

// Where a symbolic tensor comes from: output `output` of node `node` in `graph`.
struct SymbolicRef {
  std::shared_ptr<GraphBase> graph;  // keeps the graph alive while its tensors are
  int node = -1;
  int output = 0;
};

// A variable created while a graph was being built: its value lives in each Session that runs
// the graph. The graph is held weakly, because the graph holds the variable (collections).
struct GraphVariableInfo {
  std::weak_ptr<GraphBase> graph;
  int handle_node = -1;       // the variable's own node ("v")
  int initializer_node = -1;  // "v/Assign", run by the initializers
};

class Tensor;

// Evaluates a symbolic tensor in the default session. The graph layer installs it (the first
// InteractiveSession does), since eager code cannot see Sessions.
using EvalHook = Tensor (*)(const Tensor& t, std::source_location loc);
void set_eval_hook(EvalHook hook);
EvalHook eval_hook();

}  // namespace tapeflow
