#include "graph/graph_ops.h"

#include "core/checked_size.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <mutex>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "graph/functional_ops.h"
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

// Condition one bool; texts that decode, at increasing positions within the data.
absl::StatusOr<OutputSpecs> assert_spec(const InferenceContext& ctx) {
  if (ctx.inputs.empty()) return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] needs a condition"));
  if (ctx.inputs[0].dtype != DType::kBool || ctx.inputs[0].shape.rank() != 0)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] the condition must be a bool scalar, not ",
                                                   dtype_name(ctx.inputs[0].dtype), " ", ctx.inputs[0].shape.to_string()));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> texts,
                      graph_ops_internal::decode_texts(ctx.attrs.get_or<std::string>("texts", "")));
  const std::vector<int64_t> at = ctx.attrs.get_or<std::vector<int64_t>>("text_positions", {});
  const int64_t items = static_cast<int64_t>(ctx.inputs.size() - 1 + texts.size());
  bool ordered = at.size() == texts.size();
  for (size_t k = 0; ordered && k < at.size(); ++k) ordered = at[k] >= 0 && at[k] < items && (k == 0 || at[k] > at[k - 1]);
  if (!ordered)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] attr 'text_positions' must give each of the ", texts.size(),
                                                   " texts an increasing position among the ", items, " data items"));
  return OutputSpecs{};
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
// TensorFlow's Assert: T lists the data's dtypes; its DT_STRING data (which tapeflow has not)
// are attrs here, written back as DT_STRING Consts (graph_def.cc) and read from them
// (Note [Control flow v1 in a GraphDef]).
OpDef kAssertOp{.type = "Assert", .api_name = "assert_that", .num_inputs = -1, .infer = assert_spec, .stateful = true,
                .differentiable = false,
    .tf_form = "T=ins1 summarize:int=3 texts>_texts:string= text_positions>_text_positions:ints=[]"};
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
  for (const OpDef* op : {&kPlaceholderOp, &kConstOp, &kNoOp, &kPrintOp, &kAssertOp, &kVarHandleOp, &kReadVariableOp,
                          &kAssignVariableOp, &kAssignAddVariableOp, &kAssignSubVariableOp})
    if (type == op->type) return op;
  return find_functional_op(type);
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

Operation assert_that(const Tensor& condition, const std::vector<Tensor>& data, std::string_view message,
                      int64_t summarize, std::string_view name, std::source_location loc) {
  std::vector<Tensor> inputs{condition};
  inputs.insert(inputs.end(), data.begin(), data.end());
  AttrMap attrs{{"summarize", summarize}};
  if (!message.empty()) {
    attrs.set("texts", graph_ops_internal::encode_texts({std::string(message)}));
    attrs.set("text_positions", std::vector<int64_t>{0});
  }
  // Checked before anything is added to a graph (input_ref may add a Const or a capture).
  std::vector<TensorSpec> specs;
  for (const Tensor& t : inputs) {
    if (!t.defined()) throw InvalidArgumentError(absl::StrCat("[assert_that] an input is ", t.empty_reason()), loc);
    specs.push_back({t.dtype(), t.shape()});
  }
  throw_if_error(with_op_prefix(assert_spec(InferenceContext{"assert_that", specs, attrs}).status(), "assert_that"), loc);
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr) {
    if (!condition.item<bool>(loc)) throw InvalidArgumentError(graph_ops_internal::assertion_message(attrs, data), loc);
    return Operation();
  }
  std::vector<TensorRef> refs;
  for (size_t i = 0; i < inputs.size(); ++i) refs.push_back(ctx->input_ref(inputs[i], static_cast<int>(i), "assert_that", loc));
  const int id = ctx->add_op(kAssertOp, std::move(refs), std::move(attrs), {}, loc, name);
  ctx->note_side_effect(id);
  return Operation(ctx->graph().state(), id);
}

namespace graph_ops_internal {

std::string encode_texts(const std::vector<std::string>& texts) {
  std::string out;
  for (const std::string& t : texts) absl::StrAppend(&out, t.size(), ":", t);
  return out;
}

absl::StatusOr<std::vector<std::string>> decode_texts(std::string_view encoded) {
  std::vector<std::string> texts;
  while (!encoded.empty()) {
    const size_t colon = encoded.find(':');
    uint64_t length = 0;
    if (colon == std::string_view::npos ||
        !absl::SimpleAtoi(absl::string_view(encoded.data(), colon), &length) || length > encoded.size() - colon - 1)
      return absl::InvalidArgumentError("attr 'texts' must be \"<length>:<bytes>\" items");
    texts.emplace_back(encoded.substr(colon + 1, length));
    encoded.remove_prefix(colon + 1 + length);
  }
  return texts;
}

namespace {
// TensorFlow's FloatToBuffer / DoubleToBuffer: %.6g (float) or %.15g (double), or %.9g / %.17g
// when the shorter one does not read back as the same value.
template <typename F>
std::string float_text(F v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  constexpr bool kFloat = std::is_same_v<F, float>;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", kFloat ? 6 : 15, static_cast<double>(v));
  const F back = kFloat ? std::strtof(buf, nullptr) : static_cast<F>(std::strtod(buf, nullptr));
  if (back != v) std::snprintf(buf, sizeof buf, "%.*g", kFloat ? 9 : 17, static_cast<double>(v));
  return buf;
}

// TensorFlow's PrintOneDim: the values of dim d's entries from `index` on, each inner dim in
// brackets, until `limit` values are printed ("..." where a row is cut).
void print_dim(int d, const Shape& shape, int64_t limit, const std::function<std::string(int64_t)>& cell,
               int64_t& index, std::string& out) {
  if (index >= limit) return;
  const int64_t count = shape.dim(d);
  if (d == shape.rank() - 1) {
    for (int64_t i = 0; i < count; ++i) {
      if (index >= limit) {
        if (d != 0) out += "...";
        return;
      }
      if (i > 0) out += " ";
      out += cell(index++);
    }
    return;
  }
  for (int64_t i = 0; i < count && index < limit; ++i) {
    out += "[";
    print_dim(d + 1, shape, limit, cell, index, out);
    out += "]";
  }
}

// The first `summarize` values (all when negative), as TensorFlow's Tensor::SummarizeValue
// prints them: nested by rank ("[1 2][3 4]" for a 2x2 matrix), "..." after when cut.
std::string summarize_values(const Tensor& t, int64_t summarize) {
  const int64_t n = t.num_elements();
  const int64_t limit = summarize < 0 ? n : std::min(summarize, n);
  std::string out;
  dispatch_dtype(t.dtype(), [&]<typename T>() {
    const std::vector<T> values = t.to_vector<T>();
    const std::function<std::string(int64_t)> cell = [&](int64_t i) -> std::string {
      const T v = values[static_cast<size_t>(i)];
      if constexpr (std::is_same_v<T, bool>) return v ? "1" : "0";
      else if constexpr (std::is_floating_point_v<T>) return float_text(v);
      else if constexpr (std::is_signed_v<T>) return absl::StrCat(static_cast<int64_t>(v));
      else return absl::StrCat(static_cast<uint64_t>(v));
    };
    int64_t index = 0;
    if (t.shape().rank() == 0) {
      for (; index < limit; ++index) out += cell(index);
    } else {
      print_dim(0, t.shape(), limit, cell, index, out);
    }
  });
  if (n > limit) absl::StrAppend(&out, "...");
  return out;
}

// A DT_STRING scalar as SummarizeValue prints it: C-escaped (absl's Utf8SafeCEscape, as
// TensorFlow), or "..." when summarize is 0.
std::string summarize_text(const std::string& text, int64_t summarize) {
  return summarize == 0 ? std::string("...") : absl::Utf8SafeCEscape(text);
}

}  // namespace

std::string assertion_message(const AttrMap& attrs, absl::Span<const Tensor> data) {
  const absl::StatusOr<std::vector<std::string>> texts = decode_texts(attrs.get_or<std::string>("texts", ""));
  const std::vector<int64_t> at = attrs.get_or<std::vector<int64_t>>("text_positions", {});
  const int64_t summarize = attrs.get_or<int64_t>("summarize", 3);
  std::vector<std::string> items;
  size_t next_text = 0, next_tensor = 0;
  const size_t total = data.size() + (texts.ok() ? texts->size() : 0);
  for (size_t k = 0; k < total; ++k) {
    if (texts.ok() && next_text < at.size() && at[next_text] == static_cast<int64_t>(k) && next_text < texts->size())
      items.push_back(absl::StrCat("[", summarize_text((*texts)[next_text++], summarize), "]"));
    else if (next_tensor < data.size())
      items.push_back(absl::StrCat("[", summarize_values(data[next_tensor++], summarize), "]"));
  }
  return absl::StrCat("assertion failed: ", absl::StrJoin(items, " "));
}

}  // namespace graph_ops_internal

}  // namespace tapeflow
