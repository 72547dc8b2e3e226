// The execution context: where an op call goes. Every public op function packs its inputs and
// attributes into an OpCall and hands it to current_context(). The default context is eager
// (run the kernel now); the graph layer pushes a graph-building context with ContextGuard.
//
// Device scopes are RAII guards, as Python's `with tf.device(...)`:
//
//   {
//     auto scope = tapeflow::device("/device:CPU:1");
//     Tensor c = a + b;            // runs on CPU:1
//   }
#pragma once

#include <source_location>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/attr.h"
#include "devices/device_spec.h"
#include "eager/op_def.h"
#include "eager/tensor.h"

namespace tapeflow {

using TensorList = absl::InlinedVector<Tensor, 2>;

struct OpCall {
  const OpDef& op;
  absl::Span<const Tensor> inputs;
  const AttrMap& attrs;
  std::source_location loc;
};

class Variable;
struct GraphVariableInfo;

enum class VariableUpdate { kAssign, kAssignAdd, kAssignSub };

class ExecutionContext {
 public:
  virtual ~ExecutionContext() = default;
  // Runs or records the call; throws a tapeflow::Error naming the op and call site.
  virtual TensorList execute(const OpCall& call) = 0;
  // The call's first output (ops with one output, most of them): a context may skip the list.
  virtual Tensor execute_one(const OpCall& call);
  virtual bool is_eager() const { return false; }

  // Graph-building contexts turn variables into nodes (Variable calls these when
  // is_eager() is false; the eager context never receives them).
  // A new variable: adds its node and initializer.
  virtual GraphVariableInfo create_variable(const Variable& variable, const Tensor& initial_value,
                                            std::source_location loc);
  // A read of `variable` (created in this graph, or an eager variable the graph captures).
  virtual Tensor read_variable(const Variable& variable, std::source_location loc);
  // An update node; `value` was checked against the variable's dtype and shape.
  virtual Tensor update_variable(const Variable& variable, VariableUpdate kind, const Tensor& value,
                                 std::source_location loc);
};

// Receives every eagerly executed op and every variable read (the tape layer implements it;
// eager code cannot include tape/). Observers are per thread.
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  virtual void on_op(const OpCall& call, absl::Span<const Tensor> outputs) = 0;
  virtual void on_variable_read(const Variable& variable, const Tensor& value) = 0;
};

ExecutionContext& current_context();
ExecutionContext& eager_context();

// Pushes a context for this thread until destroyed.
class ContextGuard {
 public:
  explicit ContextGuard(ExecutionContext* ctx);
  ~ContextGuard();
  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;

 private:
  ExecutionContext* previous_;
};

void add_op_observer(OpObserver* observer);
void remove_op_observer(OpObserver* observer);
// True when some observer is registered and observation is not paused on this thread.
bool has_op_observers();
void notify_variable_read(const Variable& variable, const Tensor& value);

// Tells this thread's observers about an op (unless paused). The eager context calls it for
// every op; a graph-building context calls it too, so a GradientTape used inside a traced
// function records the symbolic ops and differentiates them into the same graph.
void notify_op(const OpCall& call, absl::Span<const Tensor> outputs);

// Hides this thread's observers while alive and restores them after: a trace must not show
// its graph-building to tapes that were recording outside it (tapes created inside see it).
class IsolateObservers {
 public:
  IsolateObservers();
  ~IsolateObservers();
  IsolateObservers(const IsolateObservers&) = delete;
  IsolateObservers& operator=(const IsolateObservers&) = delete;

 private:
  std::vector<OpObserver*> saved_;
  int saved_paused_;
};

// Pauses every observer on this thread while alive (variable updates, stop_recording).
class PauseObservers {
 public:
  PauseObservers();
  ~PauseObservers();
  PauseObservers(const PauseObservers&) = delete;
  PauseObservers& operator=(const PauseObservers&) = delete;
};

// Runs call through the current context; the one entry point of every op function.
TensorList execute(const OpCall& call);
Tensor execute_single(const OpDef& op, absl::Span<const Tensor> inputs, const AttrMap& attrs,
                      std::source_location loc);

// ---- device scopes ----
class DeviceScope {
 public:
  DeviceScope(std::string_view spec, std::source_location loc);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  size_t depth_;
};

// `auto scope = device("/device:CPU:1");` Parses and merges with the enclosing scope;
// a malformed spec throws InvalidArgumentError.
[[nodiscard]] DeviceScope device(std::string_view spec,
                                 std::source_location loc = std::source_location::current());

// The merged spec of the innermost device scope (empty outside any scope).
DeviceSpec current_device_spec();
// !current_device_spec().empty(), without copying the spec: true inside a device scope that
// names something.
bool in_device_scope();

// Where new constants go: the innermost device scope's local device, else CPU:0 (also when the
// scope names a device this process does not have; ops then report it).
Device* default_device();

}  // namespace tapeflow
