#include "graph/graph_context.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/device_functions.h"
#include "graph/graph_ops.h"

namespace tapeflow {

GraphBuildingContext::GraphBuildingContext(Graph graph, ExecutionContext* enclosing) : graph_(std::move(graph)) {
  // Re-entering the same graph keeps the name scope (TensorFlow keeps one name stack per graph
  // and thread).
  if (auto* outer = dynamic_cast<GraphBuildingContext*>(enclosing); outer && outer->graph_ == graph_)
    name_stack_ = outer->name_stack_;
}

GraphBuildingContext* current_graph_context() { return dynamic_cast<GraphBuildingContext*>(&current_context()); }

int GraphBuildingContext::add_op(const OpDef& op, std::vector<TensorRef> inputs, AttrMap attrs, OutputSpecs outputs,
                                 std::source_location loc, std::string_view base_name,
                                 std::vector<int> extra_control) {
  std::string base(!op_names_.empty() ? std::string_view(op_names_.back())
                   : !base_name.empty() ? base_name
                                        : std::string_view(op.type));
  Node node;
  node.name = graph_.state()->unique_name(name_stack_.empty() ? base : absl::StrCat(name_stack_, "/", base));
  node.op = &op;
  node.attrs = std::move(attrs);
  node.outputs = std::move(outputs);
  node.requested_device = current_device_spec();
  apply_device_functions(node);  // replica_device_setter and friends (graph/device_functions.h)
  node.loc = loc;
  // Control dependencies of every enclosing scope, except ops this node already reads.
  std::vector<int> control = std::move(extra_control);
  for (const auto& scope : control_scopes_) control.insert(control.end(), scope.begin(), scope.end());
  std::sort(control.begin(), control.end());
  control.erase(std::unique(control.begin(), control.end()), control.end());
  std::erase_if(control, [&](int c) {
    return std::any_of(inputs.begin(), inputs.end(), [&](const TensorRef& r) { return r.node == c; });
  });
  node.inputs.assign(inputs.begin(), inputs.end());
  node.control_inputs = std::move(control);
  return graph_.state()->add_node(std::move(node));
}

TensorRef GraphBuildingContext::input_ref(const Tensor& t, int index, const char* api, std::source_location loc) {
  if (!t.defined())
    throw InvalidArgumentError(absl::StrCat("[", api, "] input ", index, " is ", t.empty_reason()), loc);
  if (!t.is_symbolic()) return convert_concrete(t, loc);
  if (t.symbolic().graph.get() != graph_.state().get()) return convert_foreign(t, index, api, loc);
  adopt_implicit_read_location(t.symbolic().node, loc);
  return TensorRef{t.symbolic().node, t.symbolic().output};
}

TensorRef GraphBuildingContext::convert_foreign(const Tensor& t, int index, const char* api, std::source_location loc) {
  throw InvalidArgumentError(absl::StrCat("[", api, "] input ", index, " is tensor '", t.name(),
                                          "' of another graph; an op's inputs must come from the graph being built"),
                             loc);
}

// Note [Implicit reads] (eager/variable.h): a read made by Variable's conversion to Tensor has
// no user line of its own; it takes the line of the first op that consumes it.
void GraphBuildingContext::adopt_implicit_read_location(int node_id, std::source_location loc) {
  Node& node = graph_.state()->mutable_node(node_id);
  const std::source_location implicit = Variable::implicit_read_location();
  // Compared by line and function: a header's file_name() differs between translation units
  // that reach it by different include paths.
  if (node.op == &kReadVariableOp && node.loc.line() == implicit.line() &&
      std::string_view(node.loc.function_name()) == implicit.function_name())
    node.loc = loc;
}

TensorRef GraphBuildingContext::convert_concrete(const Tensor& t, std::source_location loc) {
  AttrMap attrs{{"dtype", t.dtype()}, {"shape", t.shape()}};
  const int id = add_op(kConstOp, {}, std::move(attrs), single_output(t.dtype(), t.shape()), loc, "Const");
  graph_.state()->mutable_node(id).value = t;
  return TensorRef{id, 0};
}

TensorList GraphBuildingContext::execute(const OpCall& call) {
  const OpDef& op = call.op;
  if (op.num_inputs >= 0 && static_cast<int>(call.inputs.size()) != op.num_inputs)
    throw_status(with_op_prefix(absl::InvalidArgumentError(absl::StrCat("expected ", op.num_inputs, " inputs, got ",
                                                                        call.inputs.size())),
                                op.api_name),
                 call.loc);
  // Shapes first, so a bad call adds nothing to the graph (not even Const nodes).
  absl::InlinedVector<TensorSpec, 4> specs;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    if (!t.defined())
      throw InvalidArgumentError(absl::StrCat("[", op.api_name, "] input ", i, " is ", t.empty_reason()), call.loc);
    specs.push_back(TensorSpec{t.dtype(), t.shape()});
  }
  InferenceContext ictx{op.api_name, specs, call.attrs};
  absl::StatusOr<OutputSpecs> outs = infer_outputs(op, ictx);
  if (!outs.ok()) throw_status(with_op_prefix(outs.status(), op.api_name), call.loc);
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    if (t.is_symbolic() && t.symbolic().graph.get() != graph_.state().get() && !captures_foreign())
      throw InvalidArgumentError(
          absl::StrCat("[", op.api_name, "] input ", i, " is tensor '", t.name(),
                       "' of another graph; an op's inputs must come from the graph being built"),
          call.loc);
  }
  std::vector<TensorRef> inputs;
  inputs.reserve(call.inputs.size());
  for (size_t i = 0; i < call.inputs.size(); ++i)
    inputs.push_back(input_ref(call.inputs[i], static_cast<int>(i), op.api_name, call.loc));
  const int id = add_op(op, std::move(inputs), call.attrs, *outs, call.loc);
  TensorList result;
  for (int i = 0; i < static_cast<int>(outs->size()); ++i) result.push_back(graph_.state()->tensor({id, i}));
  // A tape recording while the graph is built (inside a traced function) sees the node too.
  if (has_op_observers()) notify_op(call, result);
  return result;
}

// ---- variables ----

GraphVariableInfo GraphBuildingContext::create_variable(const Variable& variable, const Tensor& initial_value,
                                                        std::source_location loc) {
  if (initial_value.is_symbolic() && initial_value.symbolic().graph.get() != graph_.state().get())
    throw InvalidArgumentError(absl::StrCat("[Variable] Variable '", variable.name(), "': the initial value '",
                                            initial_value.name(), "' belongs to another graph"),
                               loc);
  // Note [Graph variables]: "v" (the variable), "v/initial_value" (a concrete initial value) and
  // "v/Assign" (its initializer), as TensorFlow names them; made outside any control scope.
  std::vector<std::vector<int>> saved_control;
  std::swap(saved_control, control_scopes_);
  std::vector<std::string> saved_names;
  std::swap(saved_names, op_names_);
  AttrMap attrs{{"dtype", variable.dtype()}, {"shape", variable.shape()}, {"trainable", variable.trainable()}};
  AttrMap handle_attrs = attrs;  // the container is the handle's alone (TensorFlow's VarHandleOp attr)
  handle_attrs.set("container", container_);
  const int handle = add_op(kVarHandleOp, {}, std::move(handle_attrs), {}, loc, variable.name());
  graph_.state()->mutable_node(handle).variable = variable;
  const std::string saved_stack = name_stack_;
  name_stack_ = graph_.state()->node(handle).name;
  op_names_.push_back("initial_value");
  TensorRef init = input_ref(initial_value, 0, "Variable", loc);
  op_names_.back() = "Assign";
  const int initializer = add_op(kAssignVariableOp, {init}, attrs, single_output(variable.dtype(), variable.shape()),
                                 loc, {}, {handle});
  graph_.state()->mutable_node(initializer).variable = variable;
  name_stack_ = saved_stack;
  op_names_ = std::move(saved_names);
  control_scopes_ = std::move(saved_control);
  graph_.state()->add_variable(variable.id(), {handle, initializer});
  graph_.add_to_collection(GraphKeys::kGlobalVariables, variable);
  if (variable.trainable()) graph_.add_to_collection(GraphKeys::kTrainableVariables, variable);

  GraphVariableInfo info{graph_.state(), handle, initializer};
  return info;
}

int GraphBuildingContext::capture_variable(const Variable& variable, std::source_location loc) {
  auto it = captured_variables_.find(variable.id());
  if (it != captured_variables_.end()) return it->second;
  std::vector<std::vector<int>> saved_control;
  std::swap(saved_control, control_scopes_);
  AttrMap attrs{{"dtype", variable.dtype()}, {"shape", variable.shape()}, {"captured", true}, {"container", std::string()}};
  const int handle = add_op(kVarHandleOp, {}, std::move(attrs), {}, loc, variable.name());
  control_scopes_ = std::move(saved_control);
  graph_.state()->mutable_node(handle).variable = variable;
  captured_variables_[variable.id()] = handle;
  return handle;
}

namespace {
[[noreturn]] void throw_foreign_variable(const Variable& variable, const char* api, std::source_location loc) {
  throw InvalidArgumentError(absl::StrCat("[", api, "] Variable '", variable.name(),
                                          "' belongs to another graph than the one being built"),
                             loc);
}
}  // namespace

int GraphBuildingContext::handle_node(const Variable& variable, const char* api, std::source_location loc) {
  if (auto nodes = graph_.state()->variable_nodes_of(variable.id())) return nodes->handle;
  if (variable.graph_info() == nullptr) return capture_variable(variable, loc);
  throw_foreign_variable(variable, api, loc);
}

void GraphBuildingContext::check_readable(const Variable& variable, std::source_location loc) const {
  if (variable.graph_info() != nullptr && !graph_.state()->variable_nodes_of(variable.id()))
    throw_foreign_variable(variable, "read", loc);
}

Tensor GraphBuildingContext::read_variable(const Variable& variable, std::source_location loc) {
  const int handle = handle_node(variable, "read", loc);
  AttrMap attrs{{"dtype", variable.dtype()}, {"shape", variable.shape()}};
  const int id = add_op(kReadVariableOp, {}, std::move(attrs), single_output(variable.dtype(), variable.shape()), loc,
                        {}, {handle});
  graph_.state()->mutable_node(id).variable = variable;
  Tensor value = graph_.state()->tensor({id, 0});
  if (has_op_observers()) notify_variable_read(variable, value);
  return value;
}

Tensor GraphBuildingContext::update_variable(const Variable& variable, VariableUpdate kind, const Tensor& value,
                                             std::source_location loc) {
  const char* api = kind == VariableUpdate::kAssign ? "assign" : kind == VariableUpdate::kAssignAdd ? "assign_add" : "assign_sub";
  const int handle = handle_node(variable, api, loc);
  const OpDef& op = kind == VariableUpdate::kAssign      ? kAssignVariableOp
                    : kind == VariableUpdate::kAssignAdd ? kAssignAddVariableOp
                                                         : kAssignSubVariableOp;
  TensorRef in = input_ref(value, 0, api, loc);
  AttrMap attrs{{"dtype", variable.dtype()}, {"shape", variable.shape()}};
  const int id = add_op(op, {in}, std::move(attrs), single_output(variable.dtype(), variable.shape()), loc, {},
                        {handle});
  graph_.state()->mutable_node(id).variable = variable;
  return graph_.state()->tensor({id, 0});
}

// ---- GraphDefaultGuard ----

GraphDefaultGuard::GraphDefaultGuard(const Graph& graph)
    : context_(std::make_unique<GraphBuildingContext>(graph, &current_context())), guard_(context_.get()) {}

GraphDefaultGuard::~GraphDefaultGuard() = default;

}  // namespace tapeflow
