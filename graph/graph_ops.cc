#include "graph/graph_ops.h"

#include "core/checked_size.h"

#include <iostream>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_context.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {

absl::StatusOr<OutputSpecs> spec_from_attrs(const InferenceContext& ctx) {
  return single_output(ctx.attrs.get<DType>("dtype"), ctx.attrs.get<Shape>("shape"));
}
absl::StatusOr<OutputSpecs> no_outputs(const InferenceContext&) { return OutputSpecs{}; }
absl::StatusOr<OutputSpecs> like_input0(const InferenceContext& ctx) {
  if (ctx.inputs.empty()) return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] needs at least one input"));
  return single_output(ctx.inputs[0].dtype, ctx.inputs[0].shape);
}

GraphBuildingContext& graph_context_or_throw(const char* api, std::source_location loc) {
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr)
    throw FailedPreconditionError(absl::StrCat("[", api, "] is a graph op: call it while a graph is being built "
                                               "(auto scope = graph.as_default();)"),
                                  loc);
  return *ctx;
}

}  // namespace

OpDef kPlaceholderOp{.type = "Placeholder", .api_name = "placeholder", .num_inputs = 0, .infer = spec_from_attrs,
                     .stateful = true, .differentiable = false, .tf_form = "dtype:type shape:shape"};
// Const: the value travels in TensorFlow's "value" attr (graph/graph_def.cc), the shape with it.
OpDef kConstOp{.type = "Const", .api_name = "constant", .num_inputs = 0, .infer = spec_from_attrs,
               .differentiable = false, .tf_form = "dtype:type -shape"};
OpDef kNoOp{.type = "NoOp", .api_name = "no_op", .num_inputs = 0, .infer = no_outputs, .differentiable = false};
OpDef kPrintOp{.type = "Print", .api_name = "print", .num_inputs = -1, .infer = like_input0, .stateful = true,
               .differentiable = true,
    .tf_form = "T=in0 U=ins1 message:string="};
// The variable ops in TensorFlow's resource form: Note [Variables in a GraphDef] (graph/graph_def.h).
OpDef kVarHandleOp{.type = "VarHandleOp", .api_name = "Variable", .num_inputs = 0, .infer = no_outputs,
                   .stateful = true, .differentiable = false, .tf_form = "dtype:type shape:shape container:string= trainable>_trainable:bool=true"};
OpDef kReadVariableOp{.type = "ReadVariableOp", .api_name = "read", .num_inputs = 0, .infer = spec_from_attrs,
                      .stateful = true, .differentiable = false, .tf_form = "dtype:type -shape"};
OpDef kAssignVariableOp{.type = "AssignVariableOp", .api_name = "assign", .num_inputs = 1, .infer = like_input0,
                        .stateful = true, .differentiable = false, .tf_form = "dtype:type -shape"};
OpDef kAssignAddVariableOp{.type = "AssignAddVariableOp", .api_name = "assign_add", .num_inputs = 1,
                           .infer = like_input0, .stateful = true, .differentiable = false,
                           .tf_form = "dtype:type -shape"};
OpDef kAssignSubVariableOp{.type = "AssignSubVariableOp", .api_name = "assign_sub", .num_inputs = 1,
                           .infer = like_input0, .stateful = true, .differentiable = false,
                           .tf_form = "dtype:type -shape"};

const OpDef* find_graph_op(std::string_view type) {
  for (const OpDef* op : {&kPlaceholderOp, &kConstOp, &kNoOp, &kPrintOp, &kVarHandleOp, &kReadVariableOp,
                          &kAssignVariableOp, &kAssignAddVariableOp, &kAssignSubVariableOp})
    if (type == op->type) return op;
  return nullptr;
}

const OpDef* find_any_op(std::string_view type) {
  const OpDef* op = find_graph_op(type);
  return op ? op : OpRegistry::global().find(type);
}

Tensor placeholder(DType dtype, const Shape& shape, std::string_view name, std::source_location loc) {
  GraphBuildingContext& ctx = graph_context_or_throw("placeholder", loc);
  // -1 is an unknown dim; any other negative dim, or known dims too large, is a mistake.
  if (absl::Status st = checked_num_elements(shape.dims(), /*allow_unknown=*/true).status(); !st.ok())
    throw InvalidArgumentError(absl::StrCat("[placeholder] ", st.message(), " (use -1 for an unknown dimension)"), loc);
  const int id = ctx.add_op(kPlaceholderOp, {}, AttrMap{{"dtype", dtype}, {"shape", shape}},
                            single_output(dtype, shape), loc, name);
  return ctx.graph().state()->tensor({id, 0});
}

Tensor constant(const Tensor& value, std::string_view name, std::source_location loc) {
  if (!value.defined()) throw InvalidArgumentError("[constant] the value is an empty tensor", loc);
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr || value.is_symbolic()) return value;
  const int id = ctx->add_op(kConstOp, {}, AttrMap{{"dtype", value.dtype()}, {"shape", value.shape()}},
                             single_output(value.dtype(), value.shape()), loc, name);
  ctx->graph().state()->mutable_node(id).value = value;
  return ctx->graph().state()->tensor({id, 0});
}

Operation no_op(std::string_view name, std::source_location loc) { return group({}, name, loc); }

Operation group(const std::vector<Operation>& ops, std::string_view name, std::source_location loc) {
  GraphBuildingContext& ctx = graph_context_or_throw("group", loc);
  std::vector<int> control;
  for (const Operation& op : ops) {
    if (op.graph() != ctx.graph())
      throw InvalidArgumentError(absl::StrCat("[group] operation '", op.name(), "' belongs to another graph"), loc);
    control.push_back(op.id());
  }
  const int id = ctx.add_op(kNoOp, {}, {}, {}, loc, name, std::move(control));
  return Operation(ctx.graph().state(), id);
}

namespace {
// Print passes input 0 through, so its gradient does too (the printed data gets none).
GradList print_grad(const GradInputs& op, absl::Span<const Tensor> grads) {
  GradList out(op.inputs.size());
  out[0] = grads[0];
  return out;
}
}  // namespace

Tensor print(const Tensor& x, const std::vector<Tensor>& data, std::string_view message, std::source_location loc) {
  static std::once_flag registered;  // the gradient lives above tape/, so it registers itself
  std::call_once(registered, [] { register_gradient(kPrintOp.type, print_grad); });
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr) {
    std::string line(message);
    for (const Tensor& t : data) absl::StrAppend(&line, line.empty() ? "" : " ", t.to_string());
    std::cerr << line << "\n";
    return x;
  }
  std::vector<Tensor> inputs{x};
  inputs.insert(inputs.end(), data.begin(), data.end());
  AttrMap attrs{{"message", std::string(message)}};
  return execute_single(kPrintOp, inputs, attrs, loc);
}

}  // namespace tapeflow
