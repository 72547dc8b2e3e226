// The graph-building execution context: while it is the current context, every op call adds
// a node (scoped unique name, requested device, control dependencies, the caller's line) and
// returns symbolic tensors whose dtypes and shapes come from the op's own shape function.
// Graph::as_default() pushes one; a trace (graph/function.h) pushes a subclass that captures
// outer tensors and variables instead of embedding them.
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "eager/context.h"
#include "graph/graph.h"

namespace tapeflow {

class GraphBuildingContext : public ExecutionContext {
 public:
  // `enclosing` is the context this one is pushed over (for inheriting the name scope of the
  // same graph); may be null.
  GraphBuildingContext(Graph graph, ExecutionContext* enclosing);
  ~GraphBuildingContext() override = default;

  TensorList execute(const OpCall& call) override;
  GraphVariableInfo create_variable(const Variable& variable, const Tensor& initial_value,
                                    std::source_location loc) override;
  Tensor read_variable(const Variable& variable, std::source_location loc) override;
  Tensor update_variable(const Variable& variable, VariableUpdate kind, const Tensor& value,
                         std::source_location loc) override;

  const Graph& graph() const { return graph_; }

  // Adds a node of `op` with the current scopes applied: named `base_name` (or the op_name
  // scope's name, else op.type) under the name scope, with the device scope's spec and the
  // control dependencies. Returns its id.
  int add_op(const OpDef& op, std::vector<TensorRef> inputs, AttrMap attrs, OutputSpecs outputs,
             std::source_location loc, std::string_view base_name = {}, std::vector<int> extra_control = {});

  // An op input as an edge of this graph: a symbolic tensor of this graph as it is; a
  // concrete tensor through convert_concrete; a tensor of another graph is an error.
  TensorRef input_ref(const Tensor& t, int index, const char* api, std::source_location loc);

  // Throws what read_variable would throw for `variable` (a variable of another graph), adding
  // nothing: a cond, switch_case or while_loop body checks its reads with it as it traces and
  // makes them only once the whole call has traced (Note [Reads after the trace]).
  virtual void check_readable(const Variable& variable, std::source_location loc) const;

  // Node `id` has a side effect and no output anyone needs (an Assert): a trace runs it on every
  // call of its function (Note [Automatic control deps]); a plain graph runs what depends on it.
  virtual void note_side_effect(int /*id*/) {}

  // ---- scopes (graph/scopes.h drives these) ----
  const std::string& name_stack() const { return name_stack_; }
  void set_name_stack(std::string stack) { name_stack_ = std::move(stack); }
  std::vector<std::string>& op_names() { return op_names_; }
  std::vector<std::vector<int>>& control_scopes() { return control_scopes_; }
  // The resource container of variables made now ("": the default; ContainerScope sets it).
  const std::string& container() const { return container_; }
  void set_container(std::string name) { container_ = std::move(name); }

 protected:
  // A concrete (eager) tensor used by an op: a Const node sharing its buffer. A trace
  // overrides this to capture it as an input.
  virtual TensorRef convert_concrete(const Tensor& t, std::source_location loc);
  // A symbolic tensor of another graph used by an op: an InvalidArgumentError. A cond or
  // while_loop body overrides this to capture a tensor of the graph around it as an argument.
  virtual TensorRef convert_foreign(const Tensor& t, int index, const char* api, std::source_location loc);
  virtual bool captures_foreign() const { return false; }
  // The handle node of a variable of another origin (an eager variable used in this graph):
  // one "VarHandleOp" node per variable, bound to it, so runs read and update it.
  virtual int capture_variable(const Variable& variable, std::source_location loc);

 private:
  void adopt_implicit_read_location(int node_id, std::source_location loc);
  int handle_node(const Variable& variable, const char* api, std::source_location loc);

  Graph graph_;
  std::string name_stack_;
  std::vector<std::string> op_names_;
  std::vector<std::vector<int>> control_scopes_;
  std::string container_;
  absl::flat_hash_map<int64_t, int> captured_variables_;  // Variable::id() -> handle node
};

// The current context when it builds a graph; null when ops run eagerly.
GraphBuildingContext* current_graph_context();

// Keeps a graph the thread's default while alive (Graph::as_default()).
class GraphDefaultGuard {
 public:
  explicit GraphDefaultGuard(const Graph& graph);
  ~GraphDefaultGuard();
  GraphDefaultGuard(const GraphDefaultGuard&) = delete;
  GraphDefaultGuard& operator=(const GraphDefaultGuard&) = delete;

 private:
  std::unique_ptr<GraphBuildingContext> context_;
  ContextGuard guard_;
};

}  // namespace tapeflow
