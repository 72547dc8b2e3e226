#include "graph/function.h"

#include <atomic>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/device_manager.h"
#include "graph/graph_context.h"
#include "graph/function_gradient.h"
#include "graph/graph_ops.h"

namespace tapeflow {

namespace {

std::atomic<int64_t> next_function_id{1};

// The context a trace pushes: a graph-building context that captures outer tensors and
// variables, refuses new variables, and orders side effects (Note [Automatic control deps]).
class TracingContext final : public GraphBuildingContext {
 public:
  TracingContext(Graph graph, ExecutionContext* outer, std::string function_name)
      : GraphBuildingContext(std::move(graph), nullptr), outer_(outer), function_name_(std::move(function_name)) {}

  ExecutionContext* outer() const { return outer_; }
  std::vector<ConcreteFunction::Capture>& captures() { return captures_; }
  std::vector<int>& side_effects() { return side_effects_; }
  void note_side_effect(int id) override { side_effects_.push_back(id); }

  TensorList execute(const OpCall& call) override {
    if (&call.op != &kPrintOp) return GraphBuildingContext::execute(call);
    // Prints keep their program order.
    control_scopes().push_back(last_print_ >= 0 ? std::vector<int>{last_print_} : std::vector<int>{});
    TensorList out;
    try {
      out = GraphBuildingContext::execute(call);
    } catch (...) {
      control_scopes().pop_back();
      throw;
    }
    control_scopes().pop_back();
    last_print_ = out[0].symbolic().node;
    side_effects_.push_back(last_print_);
    return out;
  }

  GraphVariableInfo create_variable(const Variable& variable, const Tensor&, std::source_location loc) override {
    throw InvalidArgumentError(
        absl::StrCat("[function '", function_name_, "'] Variable '", variable.name(),
                     "' is created inside a traced function. Create variables outside the function (they are then "
                     "captured), or inside init_scope() so they are created once, eagerly"),
        loc);
  }

  // Note [Automatic control deps]: a read waits for the variable's last update; an update
  // waits for every read and update of that variable before it. Program order is kept even
  // when the executor runs independent nodes in parallel.
  Tensor read_variable(const Variable& variable, std::source_location loc) override {
    VariableOrder& order = order_[variable.id()];
    Tensor t = with_control(order.last_update >= 0 ? std::vector<int>{order.last_update} : std::vector<int>{},
                            [&] { return GraphBuildingContext::read_variable(variable, loc); });
    order.reads.push_back(t.symbolic().node);
    return t;
  }

  Tensor update_variable(const Variable& variable, VariableUpdate kind, const Tensor& value,
                         std::source_location loc) override {
    VariableOrder& order = order_[variable.id()];
    std::vector<int> deps = order.reads;
    if (order.last_update >= 0) deps.push_back(order.last_update);
    Tensor t = with_control(deps, [&] { return GraphBuildingContext::update_variable(variable, kind, value, loc); });
    order.last_update = t.symbolic().node;
    order.reads.clear();
    side_effects_.push_back(order.last_update);
    return t;
  }

 protected:
  // Note [Captures]: one-element tensors (C++ scalars in expressions) become constants; larger
  // outer tensors become placeholders holding the outer tensor (same buffer), listed as the
  // function's captured inputs.
  TensorRef convert_concrete(const Tensor& t, std::source_location loc) override {
    if (t.num_elements() <= 1) return GraphBuildingContext::convert_concrete(t, loc);
    auto it = captured_.find(t.impl());
    if (it != captured_.end()) return it->second;
    const int id = add_op(kPlaceholderOp, {}, AttrMap{{"dtype", t.dtype()}, {"shape", t.shape()}, {"captured", true}},
                          single_output(t.dtype(), t.shape()), loc, "capture");
    graph().state()->mutable_node(id).value = t;
    const TensorRef ref{id, 0};
    captured_[t.impl()] = ref;
    captures_.push_back({t, graph().state()->tensor(ref)});
    return ref;
  }

 private:
  struct VariableOrder {
    int last_update = -1;
    std::vector<int> reads;
  };
  template <typename Fn> Tensor with_control(std::vector<int> deps, Fn fn) {
    control_scopes().push_back(std::move(deps));
    try {
      Tensor t = fn();
      control_scopes().pop_back();
      return t;
    } catch (...) {
      control_scopes().pop_back();
      throw;
    }
  }

  ExecutionContext* outer_;
  std::string function_name_;
  std::vector<ConcreteFunction::Capture> captures_;
  absl::flat_hash_map<const TensorImpl*, TensorRef> captured_;
  std::vector<int> side_effects_;
  absl::flat_hash_map<int64_t, VariableOrder> order_;
  int last_print_ = -1;
};

// "argument 1: shape [8,128] -> [9,128]" for each argument that differs.
std::string what_changed(const std::vector<TensorSpec>& before, const std::vector<TensorSpec>& now) {
  std::vector<std::string> parts;
  if (before.size() != now.size())
    return absl::StrCat("number of arguments ", before.size(), " -> ", now.size());
  for (size_t i = 0; i < now.size(); ++i) {
    if (before[i].dtype != now[i].dtype)
      parts.push_back(absl::StrCat("argument ", i + 1, ": dtype ", dtype_name(before[i].dtype), " -> ",
                                   dtype_name(now[i].dtype)));
    else if (before[i].shape != now[i].shape)
      parts.push_back(absl::StrCat("argument ", i + 1, ": shape ", before[i].shape.to_string(), " -> ",
                                   now[i].shape.to_string()));
  }
  return absl::StrJoin(parts, "; ");
}

bool same_signature(const std::vector<TensorSpec>& a, const std::vector<TensorSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dtype != b[i].dtype || a[i].shape != b[i].shape) return false;
  return true;
}

bool matches(const std::vector<TensorSpec>& traced, const std::vector<TensorSpec>& sig) {
  if (traced.size() != sig.size()) return false;
  for (size_t i = 0; i < sig.size(); ++i)
    if (traced[i].dtype != sig[i].dtype || traced[i].shape.rank() != sig[i].shape.rank() ||
        !traced[i].shape.is_compatible_with(sig[i].shape))
      return false;
  return true;
}

thread_local int g_trace_depth = 0;

}  // namespace

// ---- ConcreteFunction ----

ConcreteFunction::ConcreteFunction(std::string name, Graph graph, std::vector<Tensor> inputs,
                                   std::vector<Tensor> outputs, std::vector<TensorSpec> signature,
                                   std::vector<Capture> captures, std::vector<int> side_effects)
    : name_(std::move(name)),
      id_(next_function_id.fetch_add(1)),
      graph_(std::move(graph)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      signature_(std::move(signature)),
      captures_(std::move(captures)) {
  for (int id : side_effects) side_effects_.emplace_back(graph_.state(), id);
  // The captured variables and their read nodes (the gradient feeds those reads).
  for (const Node* node : graph_.state()->snapshot()) {
    if (node->op != &kReadVariableOp) continue;
    const Variable& v = *node->variable;
    auto it = std::find_if(variable_reads_.begin(), variable_reads_.end(),
                           [&](const auto& e) { return e.first.id() == v.id(); });
    if (it == variable_reads_.end()) {
      variable_reads_.emplace_back(v, std::vector<Tensor>{});
      it = variable_reads_.end() - 1;
    }
    it->second.push_back(graph_.state()->tensor({node->id, 0}));
  }
  SessionOptions options;
  options.inter_op_parallelism_threads = 1;  // calls may come from pool threads; keep them inline
  // The trace recorded only requests (graph/placer.h); a call runs on this process's devices, with
  // soft placement, as TensorFlow 2's functions do.
  options.device_count["CPU"] = DeviceManager::global().num_devices(DeviceType::kCPU);
  options.allow_soft_placement = true;
  session_ = std::make_unique<Session>(graph_, options);
}

std::vector<Tensor> ConcreteFunction::captured_inputs() const {
  std::vector<Tensor> out;
  for (const Capture& c : captures_) out.push_back(c.value);
  return out;
}

std::vector<Variable> ConcreteFunction::captured_variables() const {
  std::vector<Variable> out;
  for (const auto& [v, reads] : variable_reads_) out.push_back(v);
  return out;
}

std::vector<Operation> ConcreteFunction::side_effects() const { return side_effects_; }

std::vector<Tensor> ConcreteFunction::run(const std::vector<Tensor>& args, const FeedList& extra_feeds,
                                          std::source_location loc) {
  if (args.size() != inputs_.size())
    throw InvalidArgumentError(absl::StrCat("[function '", name_, "'] expected ", inputs_.size(), " arguments, got ",
                                            args.size()),
                               loc);
  FeedList feeds;
  feeds.reserve(args.size() + extra_feeds.size());
  for (size_t i = 0; i < args.size(); ++i) feeds.emplace_back(inputs_[i], Operand(args[i], loc));
  feeds.insert(feeds.end(), extra_feeds.begin(), extra_feeds.end());
  std::vector<Fetch> fetches(outputs_.begin(), outputs_.end());
  return session_->run(fetches, feeds, side_effects_, nullptr, nullptr, loc);
}

std::vector<Tensor> ConcreteFunction::call(const std::vector<Tensor>& args, const FeedList& extra_feeds,
                                           std::source_location loc) {
  if (!has_op_observers()) return run(args, extra_feeds, loc);
  // Recorded as one op: inputs are the args, the captured tensors and the variables' values
  // (read here, so tapes watching those variables see the reads).
  std::vector<Tensor> inputs = args;
  for (const Capture& c : captures_) inputs.push_back(c.value);
  for (const auto& [v, reads] : variable_reads_) inputs.push_back(v.read(loc));
  std::vector<Tensor> outputs = run(args, extra_feeds, loc);
  record_function_call(*this, inputs, outputs, loc);
  return outputs;
}

void ConcreteFunction::ensure_backward() {
  std::lock_guard<std::mutex> lock(backward_mu_);
  if (backward_) return;
  BackwardFunction bw = build_backward(*this);
  backward_output_of_input_ = std::move(bw.output_of_input);
  backward_ = std::move(bw.fn);
}

ConcreteFunction& ConcreteFunction::backward() {
  ensure_backward();
  return *backward_;
}

const std::vector<int>& ConcreteFunction::backward_output_of_input() {
  ensure_backward();
  return backward_output_of_input_;
}

// ---- FunctionCore ----

int FunctionCore::trace_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return trace_count_;
}

std::shared_ptr<ConcreteFunction> FunctionCore::lookup(const std::vector<TensorSpec>& sig, std::source_location loc,
                                                       const Body& body) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = traces_.rbegin(); it != traces_.rend(); ++it)
      if (matches((*it)->signature(), sig)) return *it;
  }
  return trace(sig, body, loc);
}

std::vector<Tensor> FunctionCore::traced_body(const Body& body, const std::vector<Tensor>& args,
                                              std::source_location loc) const {
  try {
    return body(args);
  } catch (Error& e) {  // the same error, saying which trace it came from
    e.add_context(absl::StrCat("while tracing '", options_.name, "' called at ", format_location(loc)));
    throw;
  }
}

std::shared_ptr<ConcreteFunction> FunctionCore::trace(const std::vector<TensorSpec>& requested, const Body& body,
                                                      std::source_location loc) {
  std::vector<TensorSpec> sig = requested;
  std::vector<TensorSpec> previous;
  int count;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!traces_.empty()) previous = traces_.back()->signature();
    if (options_.reduce_retracing && previous.size() == sig.size()) {
      for (size_t i = 0; i < sig.size(); ++i) {
        if (previous[i].dtype != sig[i].dtype || previous[i].shape.rank() != sig[i].shape.rank()) continue;
        for (int d = 0; d < sig[i].shape.rank(); ++d)
          if (previous[i].shape.dim(d) != sig[i].shape.dim(d)) sig[i].shape.set_dim(d, -1);
      }
    }
    count = ++trace_count_;
  }
  if (count > options_.warn_after_traces && !previous.empty())
    std::cerr << "tapeflow: function '" << options_.name << "' has been traced " << count << " times (call at "
              << loc.file_name() << ":" << loc.line() << "); " << what_changed(previous, sig)
              << ". Retracing is expensive: pass tensors of one shape, or use FunctionOptions::reduce_retracing\n";

  Graph g;
  TracingContext ctx(g, &current_context(), options_.name);
  std::vector<Tensor> inputs, outputs;
  {
    IsolateObservers isolate;  // tapes outside see one call op, not the trace
    ContextGuard guard(&ctx);
    ++g_trace_depth;
    struct DepthGuard { ~DepthGuard() { --g_trace_depth; } } depth_guard;
    for (size_t i = 0; i < sig.size(); ++i)
      inputs.push_back(placeholder(sig[i].dtype, sig[i].shape, absl::StrCat("args_", i), loc));
    std::vector<Tensor> results = traced_body(body, inputs, loc);
    for (size_t i = 0; i < results.size(); ++i) {
      const Tensor& r = results[i];
      if (!r.defined())
        throw InvalidArgumentError(absl::StrCat("[function '", options_.name, "'] output ", i, " is an empty tensor"),
                                   loc);
      outputs.push_back(g.state()->tensor(ctx.input_ref(r, static_cast<int>(i), "function", loc)));
    }
  }
  auto cf = std::make_shared<ConcreteFunction>(options_.name, g, inputs, outputs, sig, ctx.captures(),
                                               ctx.side_effects());
  register_concrete_function(cf);
  std::lock_guard<std::mutex> lock(mu_);
  traces_.push_back(cf);
  return cf;
}

namespace internal {
void throw_unconstructed_function(std::source_location loc) {
  throw FailedPreconditionError(
      "[function] this Function object was never constructed (its initializer did not run). In clang-repl a "
      "global whose type names a lambda is never initialised: declare it `inline auto f = function(...);` "
      "or use tapeflow-repl, which does",
      loc);
}
}  // namespace internal

std::vector<Tensor> FunctionCore::call(const std::vector<Tensor>& args, const Body& body, std::source_location loc) {
  // Inside another trace, or with a Graph as default: add f's ops to that graph.
  if (!current_context().is_eager()) return traced_body(body, args, loc);
  std::vector<TensorSpec> sig;
  sig.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor& a = args[i];
    if (!a.defined())
      throw InvalidArgumentError(absl::StrCat("[function '", options_.name, "'] argument ", i + 1,
                                              " is an empty tensor"),
                                 loc);
    sig.push_back(TensorSpec{a.dtype(), a.shape()});
  }
  return (*lookup(sig, loc, body))(args, loc);
}

ConcreteFunction& FunctionCore::concrete(const std::vector<TensorSpec>& signature, const Body& body,
                                         std::source_location loc) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& cf : traces_)
      if (same_signature(cf->signature(), signature)) return *cf;
  }
  // An explicit signature is traced as given (unknown dims stay unknown).
  return *trace(signature, body, loc);
}

// ---- init_scope ----

namespace {
ExecutionContext* outside_traces() {
  ExecutionContext* ctx = &current_context();
  while (auto* t = dynamic_cast<TracingContext*>(ctx)) ctx = t->outer();
  return ctx;
}
}  // namespace

InitScope::InitScope() : guard_(outside_traces()) {}
InitScope init_scope() { return InitScope(); }

bool tracing() { return g_trace_depth > 0 && dynamic_cast<TracingContext*>(&current_context()) != nullptr; }

}  // namespace tapeflow
