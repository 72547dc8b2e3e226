#include "eager/context.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "devices/device_manager.h"
#include "eager/check_numerics.h"
#include "eager/symbolic.h"

namespace tapeflow {

namespace {

struct DeviceScopeEntry {
  DeviceSpec spec;             // merged with the enclosing scopes
  Device* resolved = nullptr;  // the local device, found on first eager use
};

// Note [Shape cache]: an eager loop calls the same op on the same dtypes and shapes over and
// over, and shape inference (the specs it takes, the StatusOr it returns) was a fifth of a
// 1-element add. Shape functions are pure in their input specs and attributes, so for calls
// without attributes each thread keeps the last result per op (direct-mapped on the OpDef's
// address) and reuses it when the inputs' dtypes and shapes are the same.
struct InferredSpecs {
  static constexpr int kMaxInputs = 3;
  const OpDef* op = nullptr;
  int num_inputs = 0;
  std::array<TensorSpec, kMaxInputs> inputs;
  OutputSpecs outputs;

  bool matches(const OpDef& o, absl::Span<const Tensor> in) const {
    if (op != &o || num_inputs != static_cast<int>(in.size())) return false;
    for (int i = 0; i < num_inputs; ++i)
      if (inputs[i].dtype != in[i].dtype() || inputs[i].shape != in[i].shape()) return false;
    return true;
  }
};
constexpr int kShapeCacheBits = 4;

struct ThreadState {
  ExecutionContext* context = nullptr;
  std::vector<OpObserver*> observers;
  std::vector<DeviceScopeEntry> device_scopes;
  int paused = 0;  // PauseObservers depth
  std::array<InferredSpecs, size_t{1} << kShapeCacheBits> shape_cache;  // Note [Shape cache]
};

InferredSpecs* shape_cache_entry(ThreadState& ts, const OpCall& call) {
  if (!call.attrs.empty() || call.inputs.size() > InferredSpecs::kMaxInputs) return nullptr;
  const auto bits = reinterpret_cast<uintptr_t>(&call.op) * uintptr_t{0x9E3779B97F4A7C15ull};
  return &ts.shape_cache[bits >> (sizeof(uintptr_t) * 8 - kShapeCacheBits)];
}

// Set when this thread's ThreadState is destroyed: a static GradientTape destroyed later at exit
// (easy to make in a REPL) must not touch it.
thread_local bool thread_state_destroyed = false;
// Every op reads the thread state at least twice: a plain pointer needs no guard check (Note
// [Pool TLS] in core/small_object_pool.cc says why it keeps the default TLS model).
thread_local ThreadState* t_state = nullptr;

struct OwnedThreadState : ThreadState {
  ~OwnedThreadState() {
    t_state = nullptr;
    thread_state_destroyed = true;
  }
};

[[gnu::noinline]] ThreadState& make_thread_state() {
  thread_local OwnedThreadState state;
  t_state = &state;
  return state;
}

ThreadState& thread_state() {
  if (ThreadState* s = t_state) return *s;
  return make_thread_state();
}

[[noreturn]] void throw_op_error(const OpCall& call, const absl::Status& status) {
  throw_status(with_op_prefix(status, call.op.api_name), call.loc);
}

// Note [Eager device choice]: an explicit device scope wins; otherwise the op runs where its
// largest input lives (so a weak scalar made on CPU:0 does not drag the work off CPU:1);
// ops without inputs run on CPU:0. Inputs elsewhere are copied, and the copy is counted.
Device* choose_device(const OpCall& call, ThreadState& ts) {
  if (!ts.device_scopes.empty()) {
    DeviceScopeEntry& scope = ts.device_scopes.back();
    if (scope.resolved == nullptr) {
      auto found = DeviceManager::global().find(scope.spec);
      if (!found.ok()) throw_op_error(call, found.status());
      scope.resolved = *found;
    }
    return scope.resolved;
  }
  if (call.inputs.empty()) return DeviceManager::global().cpu(0);
  Device* first = call.inputs[0].device();
  bool one_device = true;  // the common case: no sizes to compare
  for (const Tensor& t : call.inputs.subspan(1)) one_device = one_device && t.device() == first;
  if (one_device) return first;
  Device* best = nullptr;
  int64_t best_size = -1;
  for (const Tensor& t : call.inputs) {
    if (t.num_elements() > best_size) { best_size = t.num_elements(); best = t.device(); }
  }
  return best ? best : DeviceManager::global().cpu(0);
}

KernelFn find_kernel(const OpCall& call, Device* device, DType dtype) {
  // The OpDef's own cache first, inline: resolve_kernel's StatusOr is for the first call.
  KernelFn fn = call.op.kernel_cache[static_cast<int>(device->type())][static_cast<int>(dtype)].load(
      std::memory_order_acquire);
  if (fn) return fn;
  absl::StatusOr<KernelFn> found = resolve_kernel(call.op, device->type(), dtype);
  if (!found.ok()) throw_op_error(call, found.status());
  return *found;
}

// The kernel's view of a call's inputs, each on the device the op runs on.
struct KernelInputs {
  absl::InlinedVector<DeviceTensor, 4> moved;  // inputs copied to the device
  absl::InlinedVector<const DeviceTensor*, 4> ptrs;
};

class EagerContext final : public ExecutionContext {
  // Runs the op's shape function; the result goes into `entry` (the call's shape-cache slot) or,
  // for a call the cache does not keep, into a per-thread scratch entry.
  static InferredSpecs* infer_specs(const OpCall& call, InferredSpecs* entry) {
    thread_local InferredSpecs uncached;
    absl::InlinedVector<TensorSpec, 4> specs;
    specs.reserve(call.inputs.size());
    for (const Tensor& t : call.inputs) specs.push_back(TensorSpec{t.dtype(), t.shape()});
    InferenceContext ictx{call.op.api_name, specs, call.attrs};
    absl::StatusOr<OutputSpecs> outs = infer_outputs(call.op, ictx);
    if (!outs.ok()) throw_op_error(call, outs.status());
    InferredSpecs* out = entry ? entry : &uncached;
    out->op = entry ? &call.op : nullptr;  // the scratch entry never matches
    out->num_inputs = static_cast<int>(specs.size());
    if (entry)
      for (size_t i = 0; i < specs.size(); ++i) out->inputs[i] = std::move(specs[i]);
    out->outputs = *std::move(outs);
    return out;
  }

  // Checks the inputs and infers the outputs. The result is a reference into this thread's
  // cache: nothing before the outputs are allocated runs another eager op on this thread
  // (copies and kernels live in the device layer).
  static const OutputSpecs& prepare(const OpCall& call, ThreadState& ts) {
    const OpDef& op = call.op;
    if (op.num_inputs >= 0 && static_cast<int>(call.inputs.size()) != op.num_inputs)
      throw_op_error(call, absl::InvalidArgumentError(absl::StrCat(
          "expected ", op.num_inputs, " inputs, got ", call.inputs.size())));
    for (size_t i = 0; i < call.inputs.size(); ++i) {
      const Tensor& t = call.inputs[i];
      if (!t.defined())  // Note [Unconnected gradients]: empty_reason() names one
        throw_op_error(call, absl::InvalidArgumentError(absl::StrCat("input ", i, " is ", t.empty_reason())));
      if (!t.device_tensor().buffer)
        throw_op_error(call, absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " is a symbolic graph tensor; eager ops need concrete values "
            "(run the graph in a Session)")));
    }
    InferredSpecs* cached = shape_cache_entry(ts, call);
    if (cached == nullptr || !cached->matches(op, call.inputs)) cached = infer_specs(call, cached);
    return cached->outputs;
  }

  static void gather_inputs(const OpCall& call, Device* device, KernelInputs& in) {
    for (const Tensor& t : call.inputs) {
      if (t.device() == device) { in.ptrs.push_back(&t.device_tensor()); continue; }
      in.moved.reserve(call.inputs.size());  // keep pointers stable
      auto copy = DeviceManager::global().copy_to(t.device_tensor(), device);
      if (!copy.ok()) throw_op_error(call, copy.status());
      in.moved.push_back(*std::move(copy));
      in.ptrs.push_back(&in.moved.back());
    }
  }

  // Fills `outputs` (as many as `outs`): a view of an input, or fresh buffers the kernel writes.
  static void run(const OpCall& call, Device* device, const KernelInputs& in, const OutputSpecs& outs,
                  absl::Span<DeviceTensor> outputs) {
    const OpDef& op = call.op;
    if (op.forward_input >= 0) {
      // A view: same buffer, new shape (reshape, expand_dims, squeeze, identity).
      const Shape& shape = outs[0].shape;
      outputs[0] = *in.ptrs[op.forward_input];
      outputs[0].shape = shape;
      return;
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      outputs[i].dtype = outs[i].dtype;
      outputs[i].shape = outs[i].shape;
      if (op.kernel_allocates_output && !outs[i].shape.is_fully_defined()) continue;  // Note [Data-dependent output shapes]
      if (absl::Status st = device->allocate_buffer(outputs[i]); !st.ok()) throw_op_error(call, st);
    }
    const DType key = op.kernel_dtype_input >= 0 ? call.inputs[op.kernel_dtype_input].dtype() : outs[0].dtype;
    KernelFn fn = find_kernel(call, device, key);
    KernelContext kctx{device, op.api_name, absl::MakeConstSpan(in.ptrs.data(), in.ptrs.size()), outputs,
                       call.attrs};
    absl::Status st = fn(kctx);
    if (!st.ok()) throw_op_error(call, st);
    if (op.kernel_allocates_output)
      for (const DeviceTensor& o : outputs)
        if (!o.buffer) throw_op_error(call, absl::InternalError("the kernel left an output unallocated"));
    if (check_numerics_enabled()) [[unlikely]] {
      st = internal::check_outputs_finite(outputs, absl::MakeConstSpan(in.ptrs.data(), in.ptrs.size()));
      if (!st.ok()) throw_op_error(call, st);
    }
  }

  static void notify(const OpCall& call, ThreadState& ts, absl::Span<const Tensor> outputs) {
    if (!ts.observers.empty() && ts.paused == 0) notify_op(call, outputs);
  }

 public:
  bool is_eager() const override { return true; }

  TensorList execute(const OpCall& call) override {
    ThreadState& ts = thread_state();  // one TLS lookup per call
    const OutputSpecs& outs = prepare(call, ts);
    Device* device = choose_device(call, ts);
    KernelInputs in;
    gather_inputs(call, device, in);
    absl::InlinedVector<DeviceTensor, 2> outputs(outs.size());
    run(call, device, in, outs, absl::MakeSpan(outputs));
    TensorList result;
    for (auto& o : outputs) result.push_back(Tensor::from_device_tensor(std::move(o), call.loc));
    notify(call, ts, result);
    return result;
  }

  // One output (most ops): the kernel writes straight into the returned tensor's storage.
  Tensor execute_one(const OpCall& call) override {
    ThreadState& ts = thread_state();
    const OutputSpecs& outs = prepare(call, ts);
    if (outs.size() != 1) return ExecutionContext::execute_one(call);
    Device* device = choose_device(call, ts);
    KernelInputs in;
    gather_inputs(call, device, in);
    DeviceTensor* storage = nullptr;
    Tensor result = Tensor::make_output(call.loc, &storage);
    run(call, device, in, outs, absl::MakeSpan(storage, 1));
    notify(call, ts, absl::MakeConstSpan(&result, 1));
    return result;
  }
};

}  // namespace

GraphVariableInfo ExecutionContext::create_variable(const Variable&, const Tensor&, std::source_location loc) {
  throw InternalError("[Variable] this execution context cannot create graph variables", loc);
}
Tensor ExecutionContext::read_variable(const Variable&, std::source_location loc) {
  throw InternalError("[Variable] this execution context cannot read graph variables", loc);
}
Tensor ExecutionContext::execute_one(const OpCall& call) {
  TensorList out = execute(call);
  if (out.empty())
    throw InternalError(absl::StrCat("[", call.op.api_name, "] has no output to return"), call.loc);
  return std::move(out[0]);
}
Tensor ExecutionContext::update_variable(const Variable&, VariableUpdate, const Tensor&, std::source_location loc) {
  throw InternalError("[Variable] this execution context cannot update graph variables", loc);
}

ExecutionContext& eager_context() {
  static EagerContext* ctx = new EagerContext();
  return *ctx;
}

ExecutionContext& current_context() {
  ExecutionContext* ctx = thread_state().context;
  return ctx ? *ctx : eager_context();
}

ContextGuard::ContextGuard(ExecutionContext* ctx) : previous_(thread_state().context) {
  thread_state().context = ctx;
}
ContextGuard::~ContextGuard() { thread_state().context = previous_; }

void add_op_observer(OpObserver* observer) { thread_state().observers.push_back(observer); }
void remove_op_observer(OpObserver* observer) {
  if (thread_state_destroyed) return;
  auto& obs = thread_state().observers;
  obs.erase(std::remove(obs.begin(), obs.end(), observer), obs.end());
}
bool has_op_observers() {
  const ThreadState& ts = thread_state();
  return !ts.observers.empty() && ts.paused == 0;
}

void notify_variable_read(const Variable& variable, const Tensor& value) {
  ThreadState& ts = thread_state();
  if (ts.paused) return;
  // Copy: an observer may add or remove observers (a tape created inside a callback).
  const absl::InlinedVector<OpObserver*, 4> observers(ts.observers.begin(), ts.observers.end());
  for (OpObserver* obs : observers) obs->on_variable_read(variable, value);
}

void notify_op(const OpCall& call, absl::Span<const Tensor> outputs) {
  ThreadState& ts = thread_state();
  if (ts.observers.empty() || ts.paused) return;
  // Copy (inline, no allocation): an observer may add or remove observers.
  const absl::InlinedVector<OpObserver*, 4> observers(ts.observers.begin(), ts.observers.end());
  for (OpObserver* obs : observers) obs->on_op(call, outputs);
}

IsolateObservers::IsolateObservers() {
  ThreadState& ts = thread_state();
  saved_.swap(ts.observers);
  saved_paused_ = ts.paused;
  ts.paused = 0;
}

IsolateObservers::~IsolateObservers() {
  ThreadState& ts = thread_state();
  ts.observers.swap(saved_);
  ts.paused = saved_paused_;
}

PauseObservers::PauseObservers() { ++thread_state().paused; }
PauseObservers::~PauseObservers() { --thread_state().paused; }

TensorList execute(const OpCall& call) { return current_context().execute(call); }

Tensor execute_single(const OpDef& op, absl::Span<const Tensor> inputs, const AttrMap& attrs,
                      std::source_location loc) {
  return current_context().execute_one(OpCall{op, inputs, attrs, loc});
}

DeviceScope::DeviceScope(std::string_view spec, std::source_location loc) {
  auto parsed = DeviceSpec::parse(spec);
  if (!parsed.ok()) throw_status(with_op_prefix(parsed.status(), "device"), loc);
  auto& scopes = thread_state().device_scopes;
  DeviceSpec merged = scopes.empty() ? *parsed : scopes.back().spec.merged_with(*parsed);
  scopes.push_back(DeviceScopeEntry{std::move(merged), nullptr});
  depth_ = scopes.size();
}

DeviceScope::~DeviceScope() {
  auto& scopes = thread_state().device_scopes;
  if (scopes.size() == depth_) scopes.pop_back();
}

DeviceScope device(std::string_view spec, std::source_location loc) { return DeviceScope(spec, loc); }

Device* default_device() {
  auto& scopes = thread_state().device_scopes;
  if (!scopes.empty()) {
    DeviceScopeEntry& scope = scopes.back();
    if (scope.resolved == nullptr) {
      auto found = DeviceManager::global().find(scope.spec);
      if (found.ok()) scope.resolved = *found;
    }
    if (scope.resolved) return scope.resolved;
  }
  return DeviceManager::global().cpu(0);
}

bool in_device_scope() {
  const auto& scopes = thread_state().device_scopes;
  return !scopes.empty() && !scopes.back().spec.empty();
}

DeviceSpec current_device_spec() {
  auto& scopes = thread_state().device_scopes;
  return scopes.empty() ? DeviceSpec{} : scopes.back().spec;
}

}  // namespace tapeflow
