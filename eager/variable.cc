#include "eager/variable.h"

#include <atomic>
#include <mutex>
#include <optional>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/device_manager.h"
#include "devices/kernel_registry.h"
#include "eager/context.h"
#include "eager/ops/binary.h"

namespace tapeflow {

struct Variable::State {
  // Fixed at construction, read without the lock.
  std::string name;
  bool trainable;
  DType dtype;
  Shape shape;
  Device* device;
  int64_t id;
  std::source_location created_at;

  // Set for a variable created while building a graph. Its initial value is found through the
  // graph (the initializer's input), not held here: the graph holds this state (collections,
  // nodes), so a symbolic tensor here would keep the graph alive forever.
  std::optional<GraphVariableInfo> graph;

  mutable std::mutex mu;
  Tensor value;  // guarded by mu (eager variables)
};

namespace {

std::atomic<int64_t> next_variable_id{1};

void check_concrete(const char* api, const std::string& name, const char* what, const Tensor& t,
                    std::source_location loc) {
  if (!t.defined())
    throw InvalidArgumentError(absl::StrCat("[", api, "] Variable '", name, "': the ", what, " is ", t.empty_reason()),
                               loc);
  if (!t.device_tensor().buffer)
    throw InvalidArgumentError(absl::StrCat("[", api, "] Variable '", name, "': the ", what,
                                            " is a symbolic graph tensor; eager variables need concrete values"),
                               loc);
}

// t on `device`, copied there when it lives elsewhere.
Tensor on_device(const Tensor& t, Device* device, const char* api, std::source_location loc) {
  if (t.device() == device) return t;
  auto copy = DeviceManager::global().copy_to(t.device_tensor(), device);
  if (!copy.ok()) throw_status(with_op_prefix(copy.status(), api), loc);
  return Tensor::from_device_tensor(*std::move(copy));
}

// Note [In-place update]: when nothing but the variable holds its value (no reader kept a
// handle, no tape saved it, no graph slot has it), assign_add / assign_sub write into the value's
// buffer, as TensorFlow's resource variables update in place: no new buffer, and the weights stay
// in cache. The lock is held while the kernel runs, so a reader waits and then sees the new value;
// anyone holding the old value keeps the functional path (their tensor never changes). The delta
// has the variable's dtype, shape and device here, so the kernel cannot fail. Measured on the MLP
// step (784x256 weights): the subtraction's new 800 KB buffer and its pass over cold memory.
KernelFn in_place_kernel(bool adding, const Tensor& d, const Shape& shape, Device* device, DType dtype) {
  if (d.shape() != shape || d.device() != device) return nullptr;
  return KernelRegistry::global().find(adding ? "Add" : "Sub", device->type(), dtype);
}

}  // namespace

Variable::Variable(const Tensor& initial_value, std::string_view name, bool trainable, std::source_location loc)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.name = std::string(name.empty() ? std::string_view("Variable") : name);
  if (!initial_value.defined())
    throw InvalidArgumentError(absl::StrCat("[Variable] Variable '", s.name, "': the initial value is an empty tensor"),
                               loc);
  s.trainable = trainable;
  s.dtype = initial_value.dtype();
  s.shape = initial_value.shape();
  s.id = next_variable_id.fetch_add(1, std::memory_order_relaxed);
  s.created_at = loc;
  ExecutionContext& ctx = current_context();
  if (!ctx.is_eager()) {
    // Note [Graph variables]: the graph adds the variable's node and initializer; the value
    // lives in each Session, so nothing is allocated here.
    if (!s.shape.is_fully_defined())
      throw InvalidArgumentError(absl::StrCat("[Variable] Variable '", s.name, "': the initial value's shape ",
                                              s.shape.to_string(), " is not fully defined"),
                                 loc);
    s.device = nullptr;
    s.graph = ctx.create_variable(*this, initial_value, loc);
    if (auto g = s.graph->graph.lock()) s.name = g->node_name(s.graph->handle_node);
    return;
  }
  check_concrete("Variable", s.name, "initial value", initial_value, loc);
  s.device = initial_value.device();
  const DeviceSpec scope = current_device_spec();
  if (!scope.empty()) {
    auto found = DeviceManager::global().find(scope);
    if (!found.ok()) throw_status(with_op_prefix(found.status(), "Variable"), loc);
    s.device = *found;
  }
  s.value = on_device(initial_value, s.device, "Variable", loc);
}

namespace {
// A graph variable used while no graph is being built, or the reverse handled by the context.
bool in_graph_mode(const std::optional<GraphVariableInfo>& graph) {
  return graph.has_value() || !current_context().is_eager();
}

ExecutionContext& graph_context_for(const Variable& v, const char* api, std::source_location loc) {
  ExecutionContext& ctx = current_context();
  if (ctx.is_eager())
    throw FailedPreconditionError(
        absl::StrCat("[", api, "] Variable '", v.name(),
                     "' belongs to a graph: its value lives in each Session that runs the graph "
                     "(fetch it with session.run(v), or use it while the graph is the default)"),
        loc);
  return ctx;
}
}  // namespace

const GraphVariableInfo* Variable::graph_info() const { return state_->graph ? &*state_->graph : nullptr; }

Tensor Variable::initial_value() const {
  if (!state_->graph) return read();
  std::shared_ptr<GraphBase> graph = state_->graph->graph.lock();
  return graph ? graph->node_input(state_->graph->initializer_node, 0) : Tensor();
}

Tensor Variable::read(std::source_location loc) const {
  if (in_graph_mode(state_->graph)) return graph_context_for(*this, "read", loc).read_variable(*this, loc);
  Tensor value;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    value = state_->value;
  }
  // A tape watches trainable variables when they are read (Note [Variable reads]).
  if (has_op_observers()) notify_variable_read(*this, value);
  return value;
}

const std::source_location& Variable::created_at() const { return state_->created_at; }

namespace {
[[noreturn]] void throw_mismatch(const char* api, const std::string& name, DType dtype, const Shape& shape,
                                 const char* what, DType got_dtype, const Shape& got_shape,
                                 std::source_location loc) {
  throw InvalidArgumentError(absl::StrCat("[", api, "] Variable '", name, "' has dtype ", dtype_name(dtype),
                                          " and shape ", shape.to_string(), "; cannot ", what, " a value of dtype ",
                                          dtype_name(got_dtype), " and shape ", got_shape.to_string()),
                             loc);
}
}  // namespace

Tensor Variable::assign(const Operand& value, std::source_location loc) {
  State& s = *state_;
  const Tensor v = value.resolve("assign", &s.dtype);
  if (v.defined() && in_graph_mode(s.graph)) {
    if (v.dtype() != s.dtype || !v.shape().is_compatible_with(s.shape))
      throw_mismatch("assign", s.name, s.dtype, s.shape, "assign", v.dtype(), v.shape(), loc);
    return graph_context_for(*this, "assign", loc).update_variable(*this, VariableUpdate::kAssign, v, loc);
  }
  check_concrete("assign", s.name, "value", v, loc);
  if (v.dtype() != s.dtype || v.shape() != s.shape)
    throw_mismatch("assign", s.name, s.dtype, s.shape, "assign", v.dtype(), v.shape(), loc);
  Tensor stored = on_device(v, s.device, "assign", loc);
  std::lock_guard<std::mutex> lock(s.mu);
  s.value = stored;
  return stored;
}

template <typename Compute>
Tensor Variable::update(const char* api, const Operand& delta, Compute compute, std::source_location loc) {
  State& s = *state_;
  const Tensor d = delta.resolve(api, &s.dtype);
  const bool adding = api == std::string_view("assign_add");
  if (d.defined() && in_graph_mode(s.graph)) {
    auto broadcast = broadcast_shapes(s.shape, d.shape());
    if (d.dtype() != s.dtype || !broadcast.ok() || !broadcast->is_compatible_with(s.shape))
      throw_mismatch(api, s.name, s.dtype, s.shape, adding ? "add" : "subtract", d.dtype(), d.shape(), loc);
    return graph_context_for(*this, api, loc)
        .update_variable(*this, adding ? VariableUpdate::kAssignAdd : VariableUpdate::kAssignSub, d, loc);
  }
  check_concrete(api, s.name, "delta", d, loc);
  // Checked here, so the arithmetic below cannot fail and errors name the variable.
  auto broadcast = broadcast_shapes(s.shape, d.shape());
  if (d.dtype() != s.dtype || !broadcast.ok() || *broadcast != s.shape)
    throw_mismatch(api, s.name, s.dtype, s.shape, adding ? "add" : "subtract", d.dtype(), d.shape(), loc);
  if (const KernelFn kernel = in_place_kernel(adding, d, s.shape, s.device, s.dtype)) {
    const bool done = write_in_place([&](DeviceTensor& value) {
      const DeviceTensor* inputs[2] = {&value, &d.device_tensor()};
      KernelContext ctx{s.device, api, inputs, absl::MakeSpan(&value, 1), AttrMap()};
      (void)kernel(ctx);  // same dtype, shape and device: an elementwise kernel cannot fail here
    });
    if (done) {
      std::lock_guard<std::mutex> lock(s.mu);
      return s.value;
    }
  }
  // Optimistic read-modify-write: no lock is held while the kernel runs; if another update
  // landed meanwhile, recompute from the newer value. Updates are not differentiable, so
  // tapes do not record them.
  PauseObservers no_recording;
  for (;;) {
    Tensor current;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      current = s.value;
    }
    Tensor next = on_device(compute(current, d, loc), s.device, api, loc);
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.value.impl() == current.impl()) {
      s.value = next;
      return next;
    }
  }
}

bool Variable::write_in_place(absl::FunctionRef<void(DeviceTensor& value)> write) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.value.holds_storage_alone() || s.value.device() != s.device) return false;
  DeviceTensor storage = s.value.device_tensor();  // the same buffer
  write(storage);
  return true;
}

bool Variable::compare_and_set(const Tensor& expected, const Tensor& desired, std::source_location loc) {
  State& s = *state_;
  check_concrete("compare_and_set", s.name, "value", desired, loc);
  if (desired.dtype() != s.dtype || desired.shape() != s.shape)
    throw_mismatch("compare_and_set", s.name, s.dtype, s.shape, "assign", desired.dtype(), desired.shape(), loc);
  Tensor stored = on_device(desired, s.device, "compare_and_set", loc);
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.value.impl() != expected.impl()) return false;
  s.value = std::move(stored);
  return true;
}

Tensor Variable::assign_add(const Operand& delta, std::source_location loc) {
  return update("assign_add", delta,
         [](const Tensor& v, const Tensor& d, std::source_location l) { return add(v, d, l); }, loc);
}

Tensor Variable::assign_sub(const Operand& delta, std::source_location loc) {
  return update("assign_sub", delta,
         [](const Tensor& v, const Tensor& d, std::source_location l) { return sub(v, d, l); }, loc);
}

const std::string& Variable::name() const { return state_->name; }
bool Variable::trainable() const { return state_->trainable; }
DType Variable::dtype() const { return state_->dtype; }
const Shape& Variable::shape() const { return state_->shape; }
Device* Variable::device() const { return state_->device; }
int64_t Variable::id() const { return state_->id; }

std::string Variable::to_string() const {
  if (state_->graph)
    return absl::StrCat("<tapeflow.Variable '", state_->name, ":0' shape=", state_->shape.to_string(),
                        " dtype=", dtype_name(state_->dtype), ">");
  return absl::StrCat("<tapeflow.Variable '", state_->name, "' ", read().to_string(), ">");
}

std::ostream& operator<<(std::ostream& os, const Variable& v) { return os << v.to_string(); }

}  // namespace tapeflow
