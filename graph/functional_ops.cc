#include "graph/functional_ops.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/binary.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"

namespace tapeflow {

namespace {

// Their output specs come from the functions they run, which the shape function cannot see:
// import_graph_def sets them on the node (Note [Functional control flow]).
absl::StatusOr<OutputSpecs> made_by_import(const InferenceContext& ctx) {
  return absl::FailedPreconditionError(absl::StrCat(
      "[", ctx.op, "] nodes that run functions are made by import_graph_def from a GraphDef and its library"));
}

}  // namespace

// Stateful: never folded, deduplicated or pruned away from what they compute; the executor
// runs them itself (graph/functional_run.cc), and graph_def_functional.cc reads and writes
// their TensorFlow attrs. Differentiable: their gradients are registered by
// register_functional_gradients (graph/functional_gradient.cc).
#define TAPEFLOW_FUNCTIONAL_OP(var, type_name, api, form)                                                   \
  OpDef var{.type = type_name, .api_name = api, .num_inputs = -1, .infer = made_by_import, .stateful = true, \
            .differentiable = true, .tf_form = form};
TAPEFLOW_FUNCTIONAL_OP(kIfOp, "If", "if", "")
TAPEFLOW_FUNCTIONAL_OP(kStatelessIfOp, "StatelessIf", "if", "")
TAPEFLOW_FUNCTIONAL_OP(kWhileOp, "While", "while", "parallel_iterations:int=10")
TAPEFLOW_FUNCTIONAL_OP(kStatelessWhileOp, "StatelessWhile", "while", "parallel_iterations:int=10")
TAPEFLOW_FUNCTIONAL_OP(kCaseOp, "Case", "case", "")
TAPEFLOW_FUNCTIONAL_OP(kStatelessCaseOp, "StatelessCase", "case", "")
#undef TAPEFLOW_FUNCTIONAL_OP

FunctionalKind functional_kind(const OpDef* op) {
  if (op == &kIfOp || op == &kStatelessIfOp) return FunctionalKind::kIf;
  if (op == &kWhileOp || op == &kStatelessWhileOp) return FunctionalKind::kWhile;
  if (op == &kCaseOp || op == &kStatelessCaseOp) return FunctionalKind::kCase;
  return FunctionalKind::kNone;
}

const OpDef* find_functional_op(std::string_view type) {
  for (const OpDef* op : {&kIfOp, &kStatelessIfOp, &kWhileOp, &kStatelessWhileOp, &kCaseOp, &kStatelessCaseOp})
    if (type == op->type) return op;
  return nullptr;
}

bool truth_value(const Tensor& t) {
  if (t.shape().rank() != 0) return t.num_elements() > 0;
  bool result = false;
  dispatch_dtype(t.dtype(), [&]<typename T>() { result = t.item<T>() != T(0); });
  return result;
}

int case_branch(const Tensor& index, int branches) {
  const int32_t i = index.item<int32_t>();
  return i >= 0 && i < branches ? i : branches - 1;
}

std::vector<TensorSpec> arg_specs(const FunctionBody& body) {
  std::vector<TensorSpec> out;
  for (const TensorRef& a : body.args) out.push_back(body.graph.state()->node(a.node).outputs[0]);
  return out;
}

std::vector<TensorSpec> result_specs(const FunctionBody& body) {
  std::vector<TensorSpec> out;
  for (const TensorRef& r : body.results) out.push_back(body.graph.state()->node(r.node).outputs[static_cast<size_t>(r.index)]);
  return out;
}

// ---- cond and while_loop ----

namespace {

std::atomic<int64_t> next_body_id{1};

// A Placeholder of `spec` in the context's graph.
TensorRef add_placeholder(GraphBuildingContext& ctx, const TensorSpec& spec, std::string_view name, std::source_location loc) {
  return TensorRef{ctx.add_op(kPlaceholderOp, {}, AttrMap{{"dtype", spec.dtype}, {"shape", spec.shape}},
                              single_output(spec.dtype, spec.shape), loc, name),
                   0};
}

// Note [Reads after the trace]: a variable a body reads is read in the graph around it and
// passed in as an argument. The read is added to that graph only when every body of the call
// has traced and checked: a body that throws, or branches that return different dtypes, leave
// the graph around them as it was (a read made while tracing stayed in it, reading for nobody).
// Meanwhile the body holds a placeholder of the variable's dtype and shape, one per variable
// however often it reads it; the branches of one call share one read.

// A tensor of the graph around a body that the body uses: `tensor`, or, until the body's call
// has traced, the read of `variable` (tensor undefined) under the device scope of the body's
// read, `device`.
struct Capture {
  Tensor tensor;
  std::optional<Variable> variable;
  std::source_location loc;
  std::string device;
};

// The context a body is traced in (Note [Functional control flow]): tensors of the graph around
// it become arguments (captures), a variable is read around it and passed in (Note [Reads after
// the trace]), side effects (prints, asserts) are gathered for the body's call node.
class BodyContext final : public GraphBuildingContext {
 public:
  BodyContext(Graph body, GraphBuildingContext& outer, const char* api)
      : GraphBuildingContext(std::move(body), nullptr), outer_(outer), api_(api) {}

  std::vector<Capture>& captured() { return captured_; }           // outer tensors, in order
  GraphBuildingContext& outer() const { return outer_; }
  std::vector<TensorRef>& placeholders() { return placeholders_; }  // their arguments here
  std::vector<int>& side_effects() { return side_effects_; }
  void note_side_effect(int id) override { side_effects_.push_back(id); }

  TensorList execute(const OpCall& call) override {
    TensorList out = GraphBuildingContext::execute(call);
    if (&call.op == &kPrintOp) side_effects_.push_back(out[0].symbolic().node);
    return out;
  }
  Tensor read_variable(const Variable& variable, std::source_location loc) override {
    check_readable(variable, loc);
    const auto [it, fresh] = read_index_.try_emplace(variable.id(), placeholders_.size());
    if (fresh) {
      captured_.push_back(Capture{Tensor(), variable, loc, in_device_scope() ? current_device_spec().to_string() : ""});
      placeholders_.push_back(add_placeholder(*this, TensorSpec{variable.dtype(), variable.shape()}, "capture", loc));
    }
    return graph().state()->tensor(placeholders_[it->second]);
  }
  void check_readable(const Variable& variable, std::source_location loc) const override {
    outer_.check_readable(variable, loc);
  }
  Tensor update_variable(const Variable& variable, VariableUpdate, const Tensor&, std::source_location loc) override {
    throw UnimplementedError(absl::StrCat("[", api_, "] Variable '", variable.name(), "' is updated inside a ", api_,
                                          " body; tapeflow's bodies read variables but do not update them: update "
                                          "it outside, from the ", api_, "'s results"),
                             loc);
  }
  GraphVariableInfo create_variable(const Variable& variable, const Tensor&, std::source_location loc) override {
    throw InvalidArgumentError(absl::StrCat("[", api_, "] Variable '", variable.name(), "' is created inside a ", api_,
                                            " body; create it outside"),
                               loc);
  }

 protected:
  TensorRef convert_foreign(const Tensor& t, int, const char*, std::source_location loc) override { return capture(t, loc); }
  bool captures_foreign() const override { return true; }

 private:
  TensorRef capture(const Tensor& outer, std::source_location loc) {
    const SymbolicRef& s = outer.symbolic();
    const auto key = std::make_tuple(s.graph.get(), s.node, s.output);
    if (const auto it = index_.find(key); it != index_.end()) return placeholders_[it->second];
    index_.emplace(key, placeholders_.size());
    captured_.push_back(Capture{outer, std::nullopt, loc, ""});
    placeholders_.push_back(add_placeholder(*this, TensorSpec{outer.dtype(), outer.shape()}, "capture", loc));
    return placeholders_.back();
  }

  GraphBuildingContext& outer_;
  const char* api_;
  std::vector<Capture> captured_;
  std::vector<TensorRef> placeholders_;
  absl::flat_hash_map<std::tuple<const void*, int, int>, size_t> index_;
  absl::flat_hash_map<int64_t, size_t> read_index_;  // Variable::id() -> its capture
  std::vector<int> side_effects_;
};

struct Traced {
  std::shared_ptr<FunctionBody> body;
  std::vector<Capture> captured;
  std::vector<TensorRef> capture_placeholders;
};

Traced trace_body(const std::string& name, const std::vector<TensorSpec>& args, const LoopBodyFn& fn,
                  GraphBuildingContext& outer, const char* api, std::source_location loc) {
  Traced t;
  t.body = std::make_shared<FunctionBody>();
  t.body->name = name;
  BodyContext ctx(t.body->graph, outer, api);
  ContextGuard guard(&ctx);
  std::vector<Tensor> values;
  for (size_t k = 0; k < args.size(); ++k) {
    t.body->args.push_back(add_placeholder(ctx, args[k], absl::StrCat("arg_", k), loc));
    values.push_back(t.body->graph.state()->tensor(t.body->args.back()));
  }
  const std::vector<Tensor> results = fn(values);
  for (size_t k = 0; k < results.size(); ++k) t.body->results.push_back(ctx.input_ref(results[k], static_cast<int>(k), api, loc));
  if (!ctx.side_effects().empty()) t.body->call = ctx.add_op(kNoOp, {}, {}, {}, loc, "side_effects", ctx.side_effects());
  t.captured = ctx.captured();
  t.capture_placeholders = ctx.placeholders();
  return t;
}

// Throws what ctx.input_ref would throw for `t`, input `index` of a node of ctx's graph, adding
// nothing: undefined, or of a graph that is neither ctx's nor one around the bodies ctx is in.
void check_input(const GraphBuildingContext& ctx, const Tensor& t, size_t index, const char* api, std::source_location loc) {
  if (!t.defined()) throw InvalidArgumentError(absl::StrCat("[", api, "] input ", index, " is ", t.empty_reason()), loc);
  if (!t.is_symbolic() || t.symbolic().graph.get() == ctx.graph().state().get()) return;
  if (const auto* body = dynamic_cast<const BodyContext*>(&ctx)) return check_input(body->outer(), t, index, api, loc);
  throw InvalidArgumentError(absl::StrCat("[", api, "] input ", index, " is tensor '", t.name(),
                                          "' of another graph; an op's inputs must come from the graph being built"),
                             loc);
}

// The captures of every body, in one order; each body gets an argument for each (a placeholder
// nobody reads where it did not capture the tensor). `first_input`: the node's input the first
// capture will be, for messages. Called once every body has traced and checked, and before the
// node's other inputs are added: the captures are checked, then the variables the bodies read
// are read, in `outer` (Note [Reads after the trace]). A body may hold one tensor twice (a
// tensor of the body around it and a read of the variable that body read): two arguments then.
std::vector<Tensor> unite_captures(std::vector<Traced>& traced, GraphBuildingContext& outer, size_t first_input,
                                   const char* api, std::source_location loc) {
  size_t input = first_input;
  for (const Traced& t : traced)
    for (const Capture& c : t.captured)
      if (!c.variable) check_input(outer, c.tensor, input++, api, loc);
  absl::flat_hash_map<int64_t, Tensor> reads;
  for (Traced& t : traced)
    for (Capture& c : t.captured)
      if (c.variable) {
        auto [it, fresh] = reads.try_emplace(c.variable->id());
        if (fresh) {
          std::optional<DeviceScope> on;
          if (!c.device.empty()) on.emplace(c.device, c.loc);
          it->second = outer.read_variable(*c.variable, c.loc);
        }
        c.tensor = it->second;
      }
  using Key = std::tuple<const void*, int, int>;
  auto key = [](const Tensor& t) { return Key(t.symbolic().graph.get(), t.symbolic().node, t.symbolic().output); };
  std::vector<Tensor> all;
  absl::flat_hash_map<Key, std::vector<size_t>> slots;  // a tensor's places in `all`: as many as a body holds it
  std::vector<std::vector<size_t>> slot_of(traced.size());
  for (size_t b = 0; b < traced.size(); ++b) {
    absl::flat_hash_map<Key, size_t> held;
    for (const Capture& c : traced[b].captured) {
      std::vector<size_t>& places = slots[key(c.tensor)];
      const size_t j = held[key(c.tensor)]++;
      if (j == places.size()) {
        places.push_back(all.size());
        all.push_back(c.tensor);
      }
      slot_of[b].push_back(places[j]);
    }
  }
  for (size_t b = 0; b < traced.size(); ++b) {
    Traced& t = traced[b];
    std::vector<TensorRef> placeholder_of(all.size(), TensorRef{-1, 0});
    for (size_t k = 0; k < t.captured.size(); ++k) placeholder_of[slot_of[b][k]] = t.capture_placeholders[k];
    GraphBuildingContext adder(t.body->graph, nullptr);
    for (size_t k = 0; k < all.size(); ++k) {
      if (placeholder_of[k].node < 0)
        placeholder_of[k] = add_placeholder(adder, TensorSpec{all[k].dtype(), all[k].shape()}, "capture", loc);
      t.body->args.push_back(placeholder_of[k]);
    }
    t.capture_placeholders = std::move(placeholder_of);
  }
  return all;
}

void check_pred(const Tensor& pred, const char* api, const char* what, std::source_location loc) {
  if (!pred.defined()) throw InvalidArgumentError(absl::StrCat("[", api, "] ", what, " is ", pred.empty_reason()), loc);
  if (pred.dtype() != DType::kBool || pred.shape().rank() != 0)
    throw InvalidArgumentError(absl::StrCat("[", api, "] ", what, " must be a bool scalar, not ", dtype_name(pred.dtype()), " ",
                                            pred.shape().to_string()),
                               loc);
}

std::string describe_specs(absl::Span<const TensorSpec> specs) {
  std::vector<std::string> parts;
  for (const TensorSpec& s : specs) parts.push_back(absl::StrCat(dtype_name(s.dtype), " ", s.shape.to_string()));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

// A body with side effects (a print, an assert) makes the node TensorFlow's stateful If / While,
// which a trace runs on every call (Note [Automatic control deps]) even when nothing reads it.
int add_functional_node(GraphBuildingContext& ctx, const OpDef& stateless, const OpDef& stateful,
                        const std::vector<Tensor>& inputs, OutputSpecs outputs,
                        std::vector<std::shared_ptr<const FunctionBody>> bodies, AttrMap attrs, std::string_view name,
                        std::source_location loc) {
  register_functional_gradients();
  const bool side_effects = std::any_of(bodies.begin(), bodies.end(), [](const auto& b) { return b->call >= 0; });
  const OpDef& op = side_effects ? stateful : stateless;
  std::vector<TensorRef> refs;
  for (size_t k = 0; k < inputs.size(); ++k) refs.push_back(ctx.input_ref(inputs[k], static_cast<int>(k), op.api_name, loc));
  const int id = ctx.add_op(op, std::move(refs), std::move(attrs), std::move(outputs), loc, name);
  ctx.graph().state()->mutable_node(id).set_functions(std::move(bodies));
  if (side_effects) ctx.note_side_effect(id);
  return id;
}

// A traced body's function name: "tapeflow_<name>_<role>_<n>", unique in the process, in the
// characters TensorFlow allows, and apart from TensorFlow's own "cond_true_7".
std::string function_name(std::string_view name, std::string_view role, int64_t id) {
  std::string out = "tapeflow_";
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  absl::StrAppend(&out, "_", absl::string_view(role.data(), role.size()), "_", id);
  return out;
}

}  // namespace

namespace {

// Branches traced into one node that runs one of them (cond's If, switch_case's Case): each
// returns as many tensors of the same dtypes and ranks; an output's dim is what all agree on
// (-1 elsewhere). `what[b]`: branch b in messages; `roles[b]`: in its function's name.
std::vector<Tensor> branch_node(GraphBuildingContext& ctx, const Tensor& selector, const std::vector<BranchFn>& fns,
                                const std::vector<std::string>& what, const std::vector<std::string>& roles,
                                const OpDef& stateless, const OpDef& stateful, std::string_view name, const char* api,
                                std::source_location loc) {
  const int64_t id = next_body_id++;
  std::vector<Traced> traced;
  std::vector<std::shared_ptr<const FunctionBody>> bodies;
  for (size_t b = 0; b < fns.size(); ++b) {
    traced.push_back(trace_body(function_name(name, roles[b], id), {},
                                LoopBodyFn([&](const std::vector<Tensor>&) { return fns[b](); }), ctx, api, loc));
    bodies.push_back(traced.back().body);
  }
  const std::vector<TensorSpec> first = result_specs(*traced[0].body);
  OutputSpecs outputs(first.begin(), first.end());
  for (size_t b = 1; b < traced.size(); ++b) {
    const std::vector<TensorSpec> other = result_specs(*traced[b].body);
    bool same = other.size() == first.size();
    for (size_t k = 0; same && k < first.size(); ++k)
      same = first[k].dtype == other[k].dtype && first[k].shape.rank() == other[k].shape.rank();
    if (!same)
      throw InvalidArgumentError(absl::StrCat("[", api, "] ", what[0], " returns ", describe_specs(first), " and ", what[b],
                                              " returns ", describe_specs(other), "; ", fns.size() == 2 ? "both" : "all",
                                              " must return as many tensors, of the same dtypes and ranks"),
                                 loc);
    for (size_t k = 0; k < first.size(); ++k)
      for (int d = 0; d < first[k].shape.rank(); ++d)
        if (outputs[k].shape.dim(d) != other[k].shape.dim(d)) outputs[k].shape.set_dim(d, -1);
  }
  check_input(ctx, selector, 0, api, loc);
  std::vector<Tensor> inputs{selector};
  for (const Tensor& c : unite_captures(traced, ctx, 1, api, loc)) inputs.push_back(c);
  const size_t n = first.size();
  const int node = add_functional_node(ctx, stateless, stateful, inputs, std::move(outputs), std::move(bodies), {}, name, loc);
  std::vector<Tensor> out;
  for (size_t k = 0; k < n; ++k) out.push_back(ctx.graph().state()->tensor(TensorRef{node, static_cast<int>(k)}));
  return out;
}

}  // namespace

std::vector<Tensor> cond(const Tensor& pred, const BranchFn& true_fn, const BranchFn& false_fn, std::string_view name,
                         std::source_location loc) {
  check_pred(pred, "cond", "the predicate", loc);
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr) return truth_value(pred) ? true_fn() : false_fn();
  return branch_node(*ctx, pred, {true_fn, false_fn}, {"true_fn", "false_fn"}, {"true", "false"}, kStatelessIfOp, kIfOp,
                     name, "cond", loc);
}

std::vector<Tensor> switch_case(const Tensor& index, const std::vector<BranchFn>& branch_fns, std::string_view name,
                                std::source_location loc) {
  if (!index.defined())
    throw InvalidArgumentError(absl::StrCat("[switch_case] the branch index is ", index.empty_reason()), loc);
  if (index.dtype() != DType::kInt32 || index.shape().rank() != 0)
    throw InvalidArgumentError(absl::StrCat("[switch_case] the branch index must be an int32 scalar, not ",
                                            dtype_name(index.dtype()), " ", index.shape().to_string()),
                               loc);
  if (branch_fns.empty()) throw InvalidArgumentError("[switch_case] needs at least one branch", loc);
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr) return branch_fns[static_cast<size_t>(case_branch(index, static_cast<int>(branch_fns.size())))]();
  std::vector<std::string> what, roles;
  for (size_t b = 0; b < branch_fns.size(); ++b) {
    what.push_back(absl::StrCat("branch_fns[", b, "]"));
    roles.push_back(absl::StrCat("branch", b));
  }
  return branch_node(*ctx, index, branch_fns, what, roles, kStatelessCaseOp, kCaseOp, name, "switch_case", loc);
}

std::vector<Tensor> while_loop(const LoopCondFn& cond_fn, const LoopBodyFn& body_fn, std::vector<Tensor> loop_vars,
                               const WhileOptions& options, std::source_location loc) {
  const size_t n = loop_vars.size();
  auto check_body = [&](const std::vector<TensorSpec>& got, const std::vector<TensorSpec>& want) {
    bool fits = got.size() == want.size();
    for (size_t k = 0; fits && k < got.size(); ++k) fits = got[k].dtype == want[k].dtype && got[k].shape.is_compatible_with(want[k].shape);
    if (!fits)
      throw InvalidArgumentError(absl::StrCat("[while_loop] body_fn takes ", describe_specs(want), " and returns ",
                                              describe_specs(got), "; it must return as many tensors, of the same dtypes "
                                              "and shapes (WhileOptions::shape_invariants says which dims may change)"),
                                 loc);
  };
  std::vector<TensorSpec> vars;
  for (size_t k = 0; k < n; ++k) {
    if (!loop_vars[k].defined())
      throw InvalidArgumentError(absl::StrCat("[while_loop] loop variable ", k, " is ", loop_vars[k].empty_reason()), loc);
    vars.push_back(TensorSpec{loop_vars[k].dtype(), loop_vars[k].shape()});
  }
  if (!options.shape_invariants.empty()) {
    if (options.shape_invariants.size() != n)
      throw InvalidArgumentError(absl::StrCat("[while_loop] ", options.shape_invariants.size(), " shape invariants for ", n,
                                              " loop variables"),
                                 loc);
    for (size_t k = 0; k < n; ++k) {
      if (!vars[k].shape.is_compatible_with(options.shape_invariants[k]))
        throw InvalidArgumentError(absl::StrCat("[while_loop] loop variable ", k, " has shape ", vars[k].shape.to_string(),
                                                ", which its shape invariant ", options.shape_invariants[k].to_string(),
                                                " does not allow"),
                                   loc);
      vars[k].shape = options.shape_invariants[k];
    }
  }
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr) {  // eagerly: the loop itself
    for (int64_t i = 0; options.maximum_iterations < 0 || i < options.maximum_iterations; ++i) {
      const Tensor c = cond_fn(loop_vars);
      check_pred(c, "while_loop", "cond_fn's result", loc);
      if (!c.item<bool>()) break;
      std::vector<Tensor> next = body_fn(loop_vars);
      std::vector<TensorSpec> got;
      for (const Tensor& t : next) got.push_back(TensorSpec{t.dtype(), t.shape()});
      check_body(got, vars);
      loop_vars = std::move(next);
    }
    return loop_vars;
  }
  // TensorFlow's form: with maximum_iterations, a counter and the limit are the first two loop
  // variables, and cond also asks counter < limit.
  const bool counted = options.maximum_iterations >= 0;
  const size_t first = counted ? 2 : 0;
  std::vector<TensorSpec> all;
  if (counted) all = {TensorSpec{DType::kInt32, Shape{}}, TensorSpec{DType::kInt32, Shape{}}};
  all.insert(all.end(), vars.begin(), vars.end());
  auto user_vars = [&](const std::vector<Tensor>& v) { return std::vector<Tensor>(v.begin() + static_cast<std::ptrdiff_t>(first), v.begin() + static_cast<std::ptrdiff_t>(first + n)); };
  const int64_t id = next_body_id++;
  std::vector<Traced> traced;
  traced.push_back(trace_body(function_name(options.name, "cond", id), all, [&](const std::vector<Tensor>& v) {
    Tensor c = cond_fn(user_vars(v));
    check_pred(c, "while_loop", "cond_fn's result", loc);
    if (counted) c = logical_and(c, less(v[0], v[1]));
    return std::vector<Tensor>{c};
  }, *ctx, "while_loop", loc));
  traced.push_back(trace_body(function_name(options.name, "body", id), all, [&](const std::vector<Tensor>& v) {
    std::vector<Tensor> next = body_fn(user_vars(v));
    if (counted) next.insert(next.begin(), {v[0] + 1, v[1]});
    return next;
  }, *ctx, "while_loop", loc));
  {
    std::vector<TensorSpec> got = result_specs(*traced[1].body);
    if (counted && got.size() >= 2) got.erase(got.begin(), got.begin() + 2);
    check_body(got, vars);
  }
  for (size_t k = 0; k < n; ++k) check_input(*ctx, loop_vars[k], first + k, "while_loop", loc);
  const std::vector<Tensor> captured = unite_captures(traced, *ctx, first + n, "while_loop", loc);
  // The captures are loop variables too, passed through unchanged.
  for (const TensorRef& p : traced[1].capture_placeholders) traced[1].body->results.push_back(p);
  std::vector<Tensor> inputs;
  if (counted) inputs = {Tensor(int32_t{0}), Tensor(static_cast<int32_t>(std::min<int64_t>(options.maximum_iterations, INT32_MAX)))};
  inputs.insert(inputs.end(), loop_vars.begin(), loop_vars.end());
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  OutputSpecs outputs(all.begin(), all.end());
  for (const Tensor& c : captured) outputs.push_back(TensorSpec{c.dtype(), c.shape()});
  const int node = add_functional_node(*ctx, kStatelessWhileOp, kWhileOp, inputs, outputs, {traced[0].body, traced[1].body},
                                       AttrMap{{"parallel_iterations", int64_t{10}}}, options.name, loc);
  std::vector<Tensor> out;
  for (size_t k = 0; k < n; ++k) out.push_back(ctx->graph().state()->tensor(TensorRef{node, static_cast<int>(first + k)}));
  return out;
}

}  // namespace tapeflow
