// Tracing: `function(f)` turns a C++ callable written against Tensor into a graph, as
// tf.function does. The first call for each input signature (dtypes and shapes) runs f once
// with symbolic tensors, recording its ops into a graph (a concrete function); later calls
// with that signature run the graph through the executor.
//
//   Variable w(random_normal({784, 10}), "w");
//   auto predict = tapeflow::function([&](const Tensor& x) { return softmax(matmul(x, w)); });
//   Tensor p = predict(batch);            // traces, then runs the graph
//   Tensor q = predict(other_batch);      // same shape: runs the cached graph
//   predict.trace_count();                // 1
//
//   // The graph, for a Session (deployment):
//   ConcreteFunction& cf = predict.get_concrete_function({{DType::kFloat32, {-1, 784}}});
//   Session sess(cf.graph());
//   sess.run(cf.outputs()[0], {{cf.inputs()[0], batch}});
//
// Semantics (TensorFlow's):
// - Host code in f runs once per trace; only ops become graph nodes. Variable updates and
//   print() are side effects that run on every call (and keep their program order).
// - Outer eager tensors used inside are captured by reference (the graph holds the same
//   buffer; captured_inputs() lists them); one-element tensors become constants. Outer
//   variables are captured: calls read and update the variables themselves.
// - Creating a Variable inside f is an error; create it outside, or inside init_scope().
// - Each new signature retraces; after FunctionOptions::warn_after_traces traces a warning
//   names the call site and what changed ("argument 1: shape [8,128] -> [9,128]").
//   reduce_retracing relaxes the dims that changed to unknown, so one trace serves them all.
// - Under a GradientTape a call is one recorded op; its gradient is itself a traced graph
//   (built with gradients() from the same gradient functions as the tape), and calls of that
//   backward function are recorded too, so nested tapes give higher-order gradients. The
//   backward pass sees the variable values the call read (a function that assigns a variable
//   and then reads it again is differentiated as if the reads saw the value before the call).
// - Called while another graph is being built (inside another trace, or with a Graph as
//   default), f's ops are simply added to that graph.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/errors.h"
#include "eager/context.h"
#include "graph/graph.h"
#include "graph/session.h"

namespace tapeflow {

struct FunctionOptions {
  std::string name = "function";
  // Relax dims that differ from an earlier trace of the same rank to unknown (-1).
  bool reduce_retracing = false;
  // Warn (to stderr) on every trace after this many.
  int warn_after_traces = 5;
};

class ConcreteFunction {
 public:
  const Graph& graph() const { return graph_; }
  // The argument placeholders, in order.
  const std::vector<Tensor>& inputs() const { return inputs_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }
  const std::vector<TensorSpec>& signature() const { return signature_; }
  // The outer tensors the graph captured (by reference) and their placeholders in the graph.
  std::vector<Tensor> captured_inputs() const;
  std::vector<Variable> captured_variables() const;
  // Variable updates and prints: run on every call.
  std::vector<Operation> side_effects() const;
  const std::string& name() const { return name_; }

  // Runs the graph on concrete args; under a GradientTape, records one differentiable op.
  std::vector<Tensor> operator()(const std::vector<Tensor>& args,
                                 std::source_location loc = std::source_location::current()) {
    return call(args, {}, loc);
  }
  // The same, with more feeds (any feedable tensor of the graph).
  std::vector<Tensor> call(const std::vector<Tensor>& args, const FeedList& extra_feeds, std::source_location loc);

  // ---- internals shared with the tracer and the gradient ----
  struct Capture {
    Tensor value;        // the outer tensor
    Tensor placeholder;  // its node in the graph
  };
  ConcreteFunction(std::string name, Graph graph, std::vector<Tensor> inputs, std::vector<Tensor> outputs,
                   std::vector<TensorSpec> signature, std::vector<Capture> captures, std::vector<int> side_effects);
  int64_t id() const { return id_; }
  // The backward function (built on first use): inputs (forward args..., output grads...);
  // outputs the defined gradients for the forward args, then captured tensors, then captured
  // variables; backward_output_of_input() maps each of those to its output (-1: none).
  ConcreteFunction& backward();
  const std::vector<int>& backward_output_of_input();
  const std::vector<Capture>& captures() const { return captures_; }
  // Per captured variable: its read nodes in this graph.
  const std::vector<std::pair<Variable, std::vector<Tensor>>>& variable_reads() const { return variable_reads_; }

 private:
  std::vector<Tensor> run(const std::vector<Tensor>& args, const FeedList& extra_feeds, std::source_location loc);
  void ensure_backward();

  std::string name_;
  int64_t id_;
  Graph graph_;
  std::vector<Tensor> inputs_, outputs_;
  std::vector<TensorSpec> signature_;
  std::vector<Capture> captures_;
  std::vector<Operation> side_effects_;
  std::vector<std::pair<Variable, std::vector<Tensor>>> variable_reads_;  // per captured variable
  std::unique_ptr<Session> session_;
  std::mutex backward_mu_;
  std::shared_ptr<ConcreteFunction> backward_;
  std::vector<int> backward_output_of_input_;
};

// The type-erased part of Function<F>: the trace cache and the retracing bookkeeping.
class FunctionCore {
 public:
  using Body = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  explicit FunctionCore(FunctionOptions options) : options_(std::move(options)) {}

  std::vector<Tensor> call(const std::vector<Tensor>& args, const Body& body, std::source_location loc);
  ConcreteFunction& concrete(const std::vector<TensorSpec>& signature, const Body& body, std::source_location loc);
  int trace_count() const;
  const FunctionOptions& options() const { return options_; }

 private:
  std::shared_ptr<ConcreteFunction> trace(const std::vector<TensorSpec>& signature, const Body& body,
                                          std::source_location loc);
  // body(args), with "while tracing '<name>' called at <loc>" added to an error it throws.
  std::vector<Tensor> traced_body(const Body& body, const std::vector<Tensor>& args, std::source_location loc) const;
  std::shared_ptr<ConcreteFunction> lookup(const std::vector<TensorSpec>& signature, std::source_location loc,
                                           const Body& body);

  FunctionOptions options_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<ConcreteFunction>> traces_;  // in trace order
  int trace_count_ = 0;
};

// One argument of a traced call: anything a Tensor can be made from; it also records the
// caller's line (for retracing warnings and errors).
struct CallArg {
  template <typename T>
    requires std::is_constructible_v<Tensor, const T&>
  CallArg(const T& v, std::source_location l = std::source_location::current()) : tensor(v), loc(l) {}
  Tensor tensor;
  std::source_location loc;
};

namespace internal {
[[noreturn]] void throw_unconstructed_function(std::source_location loc);
// Calls fn with args[0..N) as Tensors when fn accepts N Tensors.
template <typename F, size_t... I>
auto invoke_n(F& fn, const std::vector<Tensor>& args, std::index_sequence<I...>) {
  return fn(args[I]...);
}
template <typename R> std::vector<Tensor> to_tensor_list(R&& r) {
  if constexpr (std::is_convertible_v<R, Tensor>) return {Tensor(r)};
  else return std::vector<Tensor>(r.begin(), r.end());
}
template <typename F, size_t N> std::vector<Tensor> call_body(F& fn, const std::vector<Tensor>& args) {
  using R = decltype(invoke_n(fn, args, std::make_index_sequence<N>{}));
  if constexpr (std::is_void_v<R>) {
    invoke_n(fn, args, std::make_index_sequence<N>{});
    return {};
  } else {
    return to_tensor_list(invoke_n(fn, args, std::make_index_sequence<N>{}));
  }
}
template <typename... T> using TensorFor = Tensor;
template <typename F, size_t... I> constexpr bool invocable_n(std::index_sequence<I...>) {
  return std::is_invocable_v<F&, decltype((void(I), std::declval<const Tensor&>()))...>;
}
}  // namespace internal

template <typename F>
class Function {
 public:
  explicit Function(F fn, FunctionOptions options = {})
      : fn_(std::make_shared<F>(std::move(fn))), core_(std::make_shared<FunctionCore>(std::move(options))) {}

  template <typename... Rest>
  auto operator()(CallArg first, const Rest&... rest) {
    check_constructed(first.loc);
    constexpr size_t kN = 1 + sizeof...(Rest);
    std::vector<Tensor> args{first.tensor, Tensor(rest)...};
    auto out = core_->call(args, body<kN>(), first.loc);
    return result<kN>(std::move(out));
  }
  auto operator()(std::source_location loc = std::source_location::current()) {
    check_constructed(loc);
    return result<0>(core_->call({}, body<0>(), loc));
  }

  // The concrete function for these argument specs (traced if needed).
  ConcreteFunction& get_concrete_function(const std::vector<TensorSpec>& specs,
                                          std::source_location loc = std::source_location::current()) {
    check_constructed(loc);
    return core_->concrete(specs, any_arity_body(specs.size(), loc), loc);
  }
  int trace_count() const {
    check_constructed(std::source_location::current());
    return core_->trace_count();
  }

 private:
  // Note [Unconstructed Function]: a global Function whose constructor never ran (clang-repl
  // gives a global whose type names a lambda internal linkage, and a later input sees a
  // zero-filled copy of it) has null pointers: refuse it with a clear error, not a segfault.
  void check_constructed(std::source_location loc) const {
    if (!core_ || !fn_) internal::throw_unconstructed_function(loc);
  }
  template <size_t N> FunctionCore::Body body() {
    static_assert(internal::invocable_n<F>(std::make_index_sequence<N>{}),
                  "the traced callable does not accept this many Tensor arguments");
    return [fn = fn_](const std::vector<Tensor>& a) { return internal::call_body<F, N>(*fn, a); };
  }
  template <size_t N> auto result(std::vector<Tensor> out) {
    using R = decltype(internal::invoke_n(*fn_, std::declval<const std::vector<Tensor>&>(), std::make_index_sequence<N>{}));
    if constexpr (std::is_void_v<R>) return;
    else if constexpr (std::is_convertible_v<R, Tensor>) return out.at(0);
    else return out;
  }
  FunctionCore::Body any_arity_body(size_t n, std::source_location loc) {
    FunctionCore::Body b;
    auto try_n = [&]<size_t N>() {
      if constexpr (internal::invocable_n<F>(std::make_index_sequence<N>{}))
        if (n == N) b = [fn = fn_](const std::vector<Tensor>& a) { return internal::call_body<F, N>(*fn, a); };
    };
    [&]<size_t... I>(std::index_sequence<I...>) { (try_n.template operator()<I>(), ...); }(std::make_index_sequence<9>{});
    if (!b)
      throw InvalidArgumentError(absl::StrCat("[get_concrete_function] the function does not take ", n,
                                              " Tensor arguments"),
                                 loc);
    return b;
  }

  std::shared_ptr<F> fn_;
  std::shared_ptr<FunctionCore> core_;
};

template <typename F>
Function<std::decay_t<F>> function(F&& fn, FunctionOptions options = {}) {
  return Function<std::decay_t<F>>(std::forward<F>(fn), std::move(options));
}

// Ops and Variables created while alive go to the context outside every trace (eager, or the
// graph a Graph::as_default() made), as tf.init_scope: for state a traced function creates
// lazily on its first call (layers building their weights, optimizer slots).
class InitScope {
 public:
  InitScope();
  InitScope(const InitScope&) = delete;
  InitScope& operator=(const InitScope&) = delete;

 private:
  ContextGuard guard_;
};
[[nodiscard]] InitScope init_scope();

// True while a trace is being recorded on this thread.
bool tracing();

}  // namespace tapeflow
