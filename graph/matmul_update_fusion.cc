// Note [MatMul update]: a gradient step on a dense layer's weights, traced, is
//   MatMul(x, dy, transpose_a) -> Mul(., lr) -> AssignSubVariableOp(w, .)
// three kernels, two temporaries the size of w, and a product that starts by clearing its output.
// When the plan holds that pattern (each intermediate read once, by the next step, never fetched
// or fed; static shapes equal to the variable's; one device with a MatMulUpdate kernel), the
// assignment step runs the whole update as one MatMulUpdate kernel (eager/ops/training.h): w
// copied, then the product accumulated onto the copy with alpha = -lr. The MatMul and Mul steps
// are skipped (fused_away) and their inputs are read, and released, at the assignment.
//
// At the commit: when nothing else in the run reads or writes that variable after the update,
// and nobody reads the update's result, the update waits until every other step has succeeded
// and then accumulates straight into the variable's storage, with no copy, if nothing else
// holds it (Variable::write_in_place; a graph variable's value in the Session likewise). A
// failed run has then written nothing, as Note [Executor] promises; the product's inputs stay
// alive (pinned) until the commit. Otherwise the update runs in its place as above. The one gap:
// when a later commit update must fall back to a copy (its variable's value is shared) and that
// copy's allocation fails, the in-place updates before it have been written.
// With several concurrent runs on one Session each accumulates its own product into the
// variable (none is lost), where the copying form lets the last commit win.
//
// Measured on the MLP step (bench/graph_bench BM_MlpStep_Traced; full trace in a Session): the
// three steps took 64 + 71 us besides the product. This is a graph-only gain: eager execution
// cannot know that a product will only be scaled and subtracted from a variable.
#include <chrono>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/kernel_registry.h"
#include "eager/ops/binary.h"
#include "eager/ops/matmul.h"
#include "graph/executor.h"

namespace tapeflow {

namespace {

bool is_kernel_of(const PlanStep& step, std::string_view op_type) {
  return step.kind == PlanStep::Kind::kKernel && step.node->op->type == op_type && step.static_shapes &&
         !step.fused_away && step.num_outputs == 1 && !step.random;
}

}  // namespace

void Plan::fuse_matmul_updates() {
  const int n = static_cast<int>(steps_.size());
  std::vector<int> producer(static_cast<size_t>(num_slots_), -1), readers(static_cast<size_t>(num_slots_), 0);
  std::vector<char> has_control_successor(static_cast<size_t>(graph_.state()->num_nodes()), 0);
  for (int i = 0; i < n; ++i) {
    const PlanStep& step = steps_[i];
    for (int o = 0; o < step.num_outputs; ++o) producer[step.first_output + o] = i;
    for (int s : step.inputs) if (s >= 0) ++readers[s];
    for (int c : step.node->control_inputs) has_control_successor[c] = 1;
  }
  // The step producing `slot` when one step alone reads it and nothing waits on its node.
  auto sole_producer = [&](int slot) -> int {
    if (slot < 0 || slot_pinned_[slot] || readers[slot] != 1) return -1;
    const int p = producer[slot];
    return p >= 0 && steps_[p].node->id >= 0 && !has_control_successor[steps_[p].node->id] ? p : -1;  // a _Recv step (id -1) has no graph node
  };
  auto spec_of = [&](const PlanStep& step, int input) -> const TensorSpec& {
    const TensorRef& ref = step.node->inputs[input];
    return graph_.state()->node(ref.node).outputs[ref.index];
  };
  for (int u = 0; u < n; ++u) {
    PlanStep& update = steps_[u];
    if (update.kind != PlanStep::Kind::kAssignAdd && update.kind != PlanStep::Kind::kAssignSub) continue;
    const Variable& var = *update.node->variable;
    const int p = sole_producer(update.inputs[0]);
    if (p < 0 || !is_kernel_of(steps_[p], "Mul") || steps_[p].device != update.device) continue;
    PlanStep& scaling = steps_[p];
    // Mul(product, scale) or Mul(scale, product).
    int m = -1, scale_input = -1;
    for (int j = 0; j < 2 && m < 0; ++j) {
      const int candidate = sole_producer(scaling.inputs[j]);
      const TensorSpec& scale = spec_of(scaling, 1 - j);
      if (candidate < 0 || !is_kernel_of(steps_[candidate], "MatMul") || !scale.shape.is_fully_defined() ||
          scale.shape.num_elements() != 1 || scale.dtype != var.dtype())
        continue;
      m = candidate;
      scale_input = 1 - j;
    }
    if (m < 0) continue;
    PlanStep& product = steps_[m];
    const TensorSpec& out = product.node->outputs[0];
    if (product.device != update.device || out.dtype != var.dtype() || out.shape != var.shape() ||
        scaling.node->outputs[0].shape != var.shape() || spec_of(product, 0).shape.rank() != 2 ||
        spec_of(product, 1).shape.rank() != 2)
      continue;
    const KernelFn kernel = KernelRegistry::global().find("MatMulUpdate", update.device->type(), var.dtype());
    if (kernel == nullptr) continue;
    auto fused = std::make_shared<FusedMatMulUpdate>();
    fused->product = m;
    fused->scaling = p;
    fused->scale_input = scale_input;
    fused->kernel = kernel;
    fused->attrs = AttrMap{{"transpose_a", product.node->attrs.get<bool>("transpose_a")},
                           {"transpose_b", product.node->attrs.get<bool>("transpose_b")},
                           {"subtract", update.kind == PlanStep::Kind::kAssignSub}};
    for (PlanStep* member : {&product, &scaling}) {
      member->fused_away = true;
      member->fused_into = u;
    }
    update.fused = {m, p, u};
    fused->at_commit = can_wait_for_commit(u);
    if (fused->at_commit) {
      for (int s : {product.inputs[0], product.inputs[1], scaling.inputs[scale_input]})
        if (s >= 0) slot_pinned_[s] = true;  // read at the commit
      commit_updates_.push_back(u);
    }
    update.matmul_update = std::move(fused);
  }
}

// Whether update step u may run at the commit: nobody reads its result, no later step touches
// its variable, and the dimensions fit the BLAS interface (so the kernel cannot fail).
bool Plan::can_wait_for_commit(int u) const {
  const PlanStep& update = steps_[u];
  const Variable& var = *update.node->variable;
  if (slot_pinned_[update.first_output]) return false;
  for (const PlanStep& step : steps_)
    for (int s : step.inputs) if (s == update.first_output) return false;
  for (int i = u + 1; i < static_cast<int>(steps_.size()); ++i)
    if (steps_[i].node->variable && steps_[i].node->variable->id() == var.id()) return false;
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  for (int64_t d : var.shape().dims()) if (d > kIntMax) return false;
  return true;
}

absl::StatusOr<Tensor> Plan::run_matmul_update(const PlanStep& step, const Tensor& current,
                                               const std::vector<DeviceTensor>& slots) const {
  const FusedMatMulUpdate& f = *step.matmul_update;
  auto operand = [&](const PlanStep& st, int i) -> const DeviceTensor& {
    return st.inputs[i] >= 0 ? slots[st.inputs[i]] : *st.direct_inputs[i];
  };
  const DeviceTensor& a = operand(steps_[f.product], 0);
  const DeviceTensor& b = operand(steps_[f.product], 1);
  const DeviceTensor& scale = operand(steps_[f.scaling], f.scale_input);
  const DeviceTensor& var = current.device_tensor();
  if (!a.buffer || !b.buffer || !scale.buffer) return absl::InternalError("an input was released before its use");
  const bool subtract = f.attrs.get<bool>("subtract");
  if (var.device() == step.device && a.device() == step.device && b.device() == step.device &&
      scale.device() == step.device) {
    absl::StatusOr<DeviceTensor> out = step.device->allocate(var.dtype, var.shape);
    if (!out.ok()) return out.status();
    const DeviceTensor* inputs[4] = {&var, &a, &b, &scale};
    KernelContext ctx{step.device, "matmul_update", inputs, absl::MakeSpan(&*out, 1), f.attrs};
    absl::Status st = f.kernel(ctx);
    if (!st.ok()) return with_op_prefix(st, "matmul_update");
    return Tensor::from_device_tensor(*std::move(out));
  }
  // Operands on another device (a captured eager variable on a GPU): the ops the fusion
  // replaced, executed where their operands are.
  try {
    const bool ta = f.attrs.get<bool>("transpose_a"), tb = f.attrs.get<bool>("transpose_b");
    const Tensor delta = mul(matmul(Tensor::from_device_tensor(a), Tensor::from_device_tensor(b), ta, tb),
                             Tensor::from_device_tensor(scale));
    return subtract ? sub(current, delta) : add(current, delta);
  } catch (const Error& e) {
    return e.status();
  }
}

absl::Status Plan::run_commit_updates(const std::vector<DeviceTensor>& slots, VariableOverlay& overlay,
                                      SessionState& state, const Node** failed,
                                      std::vector<std::pair<int, int64_t>>* nanos) const {
  // Every graph variable these updates touch must have a value before any is written.
  for (int u : commit_updates_) {
    const Variable& var = *steps_[u].node->variable;
    if (var.graph_info() == nullptr || overlay.contains(var.id())) continue;
    std::lock_guard<std::mutex> lock(state.mu);
    if (state.variables.contains(var.id())) continue;
    *failed = steps_[u].node;
    return absl::FailedPreconditionError(absl::StrCat(
        "[Session.run] Attempting to use uninitialized value ", var.name(), " (created at ",
        var.created_at().file_name(), ":", var.created_at().line(),
        "). Run its initializer first (global_variables_initializer())"));
  }
  for (int u : commit_updates_) {
    const auto start = std::chrono::steady_clock::now();
    if (nanos) nanos->emplace_back(u, 0);
    const PlanStep& step = steps_[u];
    const FusedMatMulUpdate& f = *step.matmul_update;
    Variable var = *step.node->variable;
    auto operand = [&](const PlanStep& st, int i) -> const DeviceTensor& {
      return st.inputs[i] >= 0 ? slots[st.inputs[i]] : *st.direct_inputs[i];
    };
    const DeviceTensor& a = operand(steps_[f.product], 0);
    const DeviceTensor& b = operand(steps_[f.product], 1);
    const DeviceTensor& scale = operand(steps_[f.scaling], f.scale_input);
    auto accumulate = [&](DeviceTensor& value) {
      const DeviceTensor* inputs[4] = {&value, &a, &b, &scale};
      KernelContext ctx{step.device, "matmul_update", inputs, absl::MakeSpan(&value, 1), f.attrs};
      (void)f.kernel(ctx);  // shapes, dtypes and dimensions were checked when the plan was made
    };
    const bool on_device = a.device() == step.device && b.device() == step.device && scale.device() == step.device;
    bool done = false;
    if (on_device && !overlay.contains(var.id())) {
      if (var.graph_info() == nullptr) {
        done = var.write_in_place(accumulate);
      } else {
        std::lock_guard<std::mutex> lock(state.mu);
        auto it = state.variables.find(var.id());
        if (it != state.variables.end() && it->second.holds_storage_alone() && it->second.device() == step.device) {
          DeviceTensor storage = it->second.device_tensor();
          accumulate(storage);
          done = true;
        }
      }
    }
    auto record = [&] {
      if (nanos) nanos->back().second = (std::chrono::steady_clock::now() - start) / std::chrono::nanoseconds(1);
    };
    if (done) {
      record();
      continue;
    }
    // Shared storage (someone holds the value) or another device: a new value, committed with
    // the run's other writes.
    Tensor current;
    if (auto it = overlay.find(var.id()); it != overlay.end()) {
      current = it->second.value;
    } else if (var.graph_info() == nullptr) {
      current = var.read();
    } else {
      std::lock_guard<std::mutex> lock(state.mu);
      current = state.variables.at(var.id());  // checked above
    }
    absl::StatusOr<Tensor> next = run_matmul_update(step, current, slots);
    if (!next.ok()) {
      *failed = step.node;
      return next.status();
    }
    record_variable_update(overlay, var, current, *next, f.attrs.get_or<bool>("subtract", false), nullptr);
    record();
  }
  return absl::OkStatus();
}

}  // namespace tapeflow
