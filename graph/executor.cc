#include "graph/executor.h"

#include <atomic>
#include <chrono>
#include <iostream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "devices/cpu/thread_pool.h"
#include "devices/device_manager.h"
#include "eager/check_numerics.h"
#include "eager/context.h"
#include "eager/ops/binary.h"
#include "devices/cpu/intra_op_pool.h"
#include "graph/functional_ops.h"
#include "graph/graph_ops.h"
#include "graph/placer.h"
#include "graph/rendezvous.h"

namespace tapeflow {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void throw_node_error(const Node& node, const absl::Status& status) {
  // The kernel's message, then where the node came from: the user's line is the node's.
  const std::string msg(status.message());
  throw_status(absl::Status(status.code(), absl::StrCat(msg, "\n  in ", describe_node(node))), node.loc);
}

PlanStep::Kind kind_of(const Node& node) {
  using K = PlanStep::Kind;
  const OpDef* op = node.op;
  // A captured input (a placeholder with a value) reads as a constant unless it is fed.
  if (op == &kConstOp || (op == &kPlaceholderOp && node.value.defined())) return K::kConst;
  if (is_functional_op(op)) return K::kFunctional;
  if (op == &kNoOp || op == &kVarHandleOp) return K::kNoOp;
  if (op == &kPrintOp) return K::kPrint;
  if (op == &kAssertOp) return K::kAssert;
  if (op == &kReadVariableOp) return K::kRead;
  if (op == &kAssignVariableOp) return K::kAssign;
  if (op == &kAssignAddVariableOp) return K::kAssignAdd;
  if (op == &kAssignSubVariableOp) return K::kAssignSub;
  return op->forward_input >= 0 ? K::kView : K::kKernel;
}

}  // namespace

// ---- compile ----

std::unique_ptr<Plan> Plan::compile(const Graph& graph, const Request& request, const SessionOptions& options,
                                    std::source_location loc, const std::vector<Device*>* devices) {
  auto plan = std::make_unique<Plan>();
  plan->graph_ = graph;
  const std::vector<const Node*> nodes = graph.state()->snapshot();
  const int n = static_cast<int>(nodes.size());

  absl::flat_hash_map<TensorRef, int> fed;  // ref -> feed index
  for (size_t i = 0; i < request.feeds.size(); ++i) fed[request.feeds[i]] = static_cast<int>(i);

  // Prune: what the fetches and targets need, not walking past fed tensors.
  std::vector<char> needed(static_cast<size_t>(n), 0);
  std::vector<int> stack;
  for (const FetchSpec& f : request.fetches) {
    if (f.kind == PlanFetch::Kind::kTensor && !fed.contains(f.ref)) stack.push_back(f.ref.node);
    if (f.kind == PlanFetch::Kind::kOperation) stack.push_back(f.node);
  }
  for (int t : request.targets) stack.push_back(t);
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (needed[id]) continue;
    needed[id] = 1;
    for (const TensorRef& in : nodes[id]->inputs)
      if (!fed.contains(in)) stack.push_back(in.node);
    // A fed placeholder counts as run: the control edges out of it wait on the feed, as in
    // TensorFlow (which moves them onto the node that receives the fed value).
    for (int c : nodes[id]->control_inputs)
      if (nodes[c]->op != &kPlaceholderOp || !fed.contains(TensorRef{c, 0})) stack.push_back(c);
  }

  // A placeholder that must run was not fed.
  std::vector<std::string> unfed;
  int first_unfed = -1;
  for (int id = 0; id < n; ++id)
    if (needed[id] && nodes[id]->op == &kPlaceholderOp && !nodes[id]->value.defined()) {
      unfed.push_back(describe_node(*nodes[id]));
      if (first_unfed < 0) first_unfed = id;
    }
  if (!unfed.empty()) {
    const Node& first = *nodes[first_unfed];
    throw InvalidArgumentError(
        absl::StrCat("[Session.run] You must feed a value for placeholder tensor '", first.name, ":0' with dtype ",
                     dtype_name(first.outputs[0].dtype), " and shape ", first.outputs[0].shape.to_string(),
                     ". Unfed placeholders this run needs: ", absl::StrJoin(unfed, "; ")),
        loc);
  }

  // Placement (graph/placer.h): throws, before anything runs, when a node has no device.
  const std::vector<Device*> own_devices = devices ? std::vector<Device*>{} : session_devices(options);
  const std::vector<Device*>& device_list = devices ? *devices : own_devices;
  const std::vector<Device*> placed = place_nodes(nodes, needed, device_list, options.allow_soft_placement);
  if (options.log_device_placement) {
    std::string log;
    for (int id = 0; id < n; ++id)
      if (placed[id]) absl::StrAppend(&log, placement_log_line(*nodes[id], *placed[id]), "\n");
    std::cerr << log;
  }
  auto lane_of = [&](const Device* d) {
    return static_cast<int>(std::find(device_list.begin(), device_list.end(), d) - device_list.begin());
  };

  // Slots: each needed node's outputs, then each feed (then each _Recv's, as they are made).
  std::vector<int> first_slot(static_cast<size_t>(n), -1);
  int slots = 0;
  for (int id = 0; id < n; ++id)
    if (needed[id]) { first_slot[id] = slots; slots += static_cast<int>(nodes[id]->outputs.size()); }
  plan->feed_slots_.resize(request.feeds.size());
  for (size_t i = 0; i < request.feeds.size(); ++i) plan->feed_slots_[i] = slots++;
  auto slot_of = [&](const TensorRef& r) {
    auto it = fed.find(r);
    return it != fed.end() ? plan->feed_slots_[it->second] : first_slot[r.node] + r.index;
  };

  std::vector<int> step_of(static_cast<size_t>(n), -1);
  absl::flat_hash_map<std::pair<int, const Device*>, int> recv_slot;  // (slot, device) -> its _Recv's slot
  for (int id = 0; id < n; ++id) {
    if (!needed[id]) continue;
    const Node& node = *nodes[id];
    PlanStep step;
    step.node = &node;
    step.kind = kind_of(node);
    step.device = placed[id];
    step.lane = lane_of(step.device);
    step.intra_pool = DeviceManager::global().intra_op_pool(step.device);
    plan->device_pools_ |= step.intra_pool != nullptr;
    step.first_output = first_slot[id];
    step.num_outputs = static_cast<int>(node.outputs.size());
    step.static_shapes = true;
    // Output shapes recorded at build time hold at run time only when every input's shape was
    // fully known too (a fed value may fill unknown dims with anything).
    for (const TensorSpec& o : node.outputs) step.static_shapes &= o.shape.is_fully_defined();
    for (const TensorRef& in : node.inputs)
      step.static_shapes &= nodes[in.node]->outputs[in.index].shape.is_fully_defined();
    for (const TensorRef& in : node.inputs) step.inputs.push_back(slot_of(in));
    if (step.kind == PlanStep::Kind::kKernel) {
      // Constants on this device feed the kernel directly.
      step.direct_inputs.assign(step.inputs.size(), nullptr);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const TensorRef& in = node.inputs[i];
        if (fed.contains(in) || step_of[in.node] < 0) continue;
        const PlanStep& src = plan->steps_[step_of[in.node]];
        if (src.kind == PlanStep::Kind::kConst && src.device == step.device && src.node->value.device() == step.device) {
          step.direct_inputs[i] = &src.node->value.device_tensor();
          step.inputs[i] = -1;
        }
      }
      // The placer chose a device with a kernel (rule 3).
      absl::StatusOr<KernelFn> fn = resolve_kernel(*node.op, step.device->type(), kernel_dtype(node, nodes));
      if (!fn.ok()) throw_node_error(node, with_op_prefix(fn.status(), node.op->api_name));
      step.kernel = *fn;
      step.random = node.op->stateful && node.attrs.has("seed2");
      step.reuse_input = node.op->elementwise;
    }
    if (step.kind == PlanStep::Kind::kFunctional) step.functional = compile_functional(node, options, device_list, loc);
    // Note [Partitions]: an input made on another device comes through a _Send/_Recv pair.
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorRef& in = node.inputs[i];
      if (step.inputs[i] < 0 || fed.contains(in) || placed[in.node] == step.device) continue;
      const std::pair<int, const Device*> key{step.inputs[i], step.device};
      auto it = recv_slot.find(key);
      if (it == recv_slot.end())
        it = recv_slot.emplace(key, plan->add_transfer(in, step_of[in.node], step.device, step.lane, step.inputs[i], slots))
                 .first;
      step.inputs[i] = it->second;
    }
    step_of[id] = static_cast<int>(plan->steps_.size());
    plan->steps_.push_back(std::move(step));
  }
  plan->num_slots_ = slots;

  // Fetches; fetched and fed slots are never released or written into.
  plan->slot_pinned_.assign(static_cast<size_t>(slots), false);
  for (int s : plan->feed_slots_) plan->slot_pinned_[s] = true;
  for (const FetchSpec& f : request.fetches) {
    PlanFetch pf;
    pf.kind = f.kind;
    if (f.kind == PlanFetch::Kind::kTensor) {
      pf.slot = slot_of(f.ref);
      plan->slot_pinned_[pf.slot] = true;
    }
    pf.variable = f.variable;
    plan->fetches_.push_back(std::move(pf));
  }

  // Constants that no step reads through a slot, and nobody fetches or targets, need no step.
  {
    std::vector<char> slot_read(static_cast<size_t>(slots), 0);
    for (const PlanStep& step : plan->steps_)
      for (int s : step.inputs) if (s >= 0) slot_read[s] = 1;
    absl::flat_hash_set<int> requested(request.targets.begin(), request.targets.end());
    for (const FetchSpec& f : request.fetches) if (f.kind == PlanFetch::Kind::kOperation) requested.insert(f.node);
    std::vector<PlanStep> kept;
    kept.reserve(plan->steps_.size());
    std::fill(step_of.begin(), step_of.end(), -1);
    for (PlanStep& step : plan->steps_) {
      if (step.kind == PlanStep::Kind::kConst && !slot_read[step.first_output] &&
          !plan->slot_pinned_[step.first_output] && !requested.contains(step.node->id)) {
        plan->direct_consts_.emplace_back(step.node, step.device);
        continue;
      }
      if (step.node->id >= 0) step_of[step.node->id] = static_cast<int>(kept.size());
      kept.push_back(std::move(step));
    }
    plan->steps_ = std::move(kept);
  }

  // With check_numerics on, every node's own output is checked: nothing runs fused (the session
  // keys its plans by the flag).
  if (!check_numerics_enabled()) {
    plan->fuse_matmul_updates();
    plan->fuse_bias_activations();  // before the chains: an epilogue is one pass, in place
    plan->fuse_elementwise_chains();
  }

  // Last uses, consumer counts, and the dependency structure for parallel runs.
  std::vector<int> last_use(static_cast<size_t>(slots), -1);
  plan->slot_uses_.assign(static_cast<size_t>(slots), 0);
  std::vector<int> level(plan->steps_.size(), 0);
  std::vector<int> kernels_per_level(plan->steps_.size() + 1, 0);  // a level is below the step count
  int widest = 0;
  std::vector<int> slot_producer(static_cast<size_t>(slots), -1);
  for (int i = 0; i < static_cast<int>(plan->steps_.size()); ++i)
    for (int o = 0; o < plan->steps_[i].num_outputs; ++o) slot_producer[plan->steps_[i].first_output + o] = i;
  for (int i = 0; i < static_cast<int>(plan->steps_.size()); ++i) {
    PlanStep& step = plan->steps_[i];
    // A fused member reads its inputs when its chain runs, at the chain's last step.
    const int reads_at = step.fused_into >= 0 ? step.fused_into : i;
    for (int s : step.inputs)
      if (s >= 0) { last_use[s] = std::max(last_use[s], reads_at); ++plan->slot_uses_[s]; }
    // Predecessors: the producers of the slots it reads (a _Recv has none: it waits for its
    // _Send in the rendezvous) and its control inputs.
    std::vector<int> preds;
    for (int s : step.inputs) if (s >= 0 && slot_producer[s] >= 0) preds.push_back(slot_producer[s]);
    for (int c : step.node->control_inputs) if (step_of[c] >= 0) preds.push_back(step_of[c]);
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (int p : preds) {
      plan->steps_[p].successors.push_back(i);
      level[i] = std::max(level[i], level[p] + 1);
    }
    step.num_predecessors = static_cast<int>(preds.size());
    if (preds.empty()) plan->roots_.push_back(i);
    if (step.kind == PlanStep::Kind::kKernel) widest = std::max(widest, ++kernels_per_level[level[i]]);
  }
  for (int s = 0; s < slots; ++s)
    if (last_use[s] >= 0 && !plan->slot_pinned_[s]) plan->steps_[last_use[s]].release.push_back(s);
  plan->parallel_ = options.inter_op_parallelism_threads != 1 && widest >= 2;
  return plan;
}

struct Plan::RunContext {
  const std::vector<Tensor>* feeds;
  SessionState* state;
  const RunOptions* options = nullptr;
  std::unique_ptr<Rendezvous> rendezvous;  // Note [Partitions]: only when the plan has transfers
  std::vector<DeviceTensor> slots;
  std::unique_ptr<std::atomic<int>[]> uses_left;  // parallel mode
  std::mutex overlay_mu;
  VariableOverlay overlay;  // writes of this run
  bool tracing = false;
  Clock::time_point start;
  std::mutex stats_mu;
  StepStats stats;
};

// ---- elementwise fusion ----

namespace {
constexpr int64_t kFusionTile = 16384;               // elements per tile: stays in L2 between ops
constexpr int64_t kFusionMinElements = 4 * kFusionTile;

bool fusable(const PlanStep& step) {
  return step.kind == PlanStep::Kind::kKernel && !step.fused_away && step.fused.empty() && step.node->op->elementwise &&
         step.static_shapes && step.num_outputs == 1 && !step.random &&
         step.node->outputs[0].shape.num_elements() >= kFusionMinElements;
}
}  // namespace

void Plan::fuse_elementwise_chains() {
  const int n = static_cast<int>(steps_.size());
  // Who reads each slot (through a slot, not a direct constant).
  std::vector<int> readers(static_cast<size_t>(num_slots_), 0), reader(static_cast<size_t>(num_slots_), -1);
  for (int i = 0; i < n; ++i)
    for (int s : steps_[i].inputs)
      if (s >= 0) { ++readers[s]; reader[s] = i; }
  // Every other input of a member is the chain's full shape, a single element, or broadcast
  // along the leading dims (a bias over rows: its dims are the chain's trailing dims). All
  // broadcast inputs of a chain cover the same trailing elements (`inner`), so a tile of whole
  // rows lines up with them.
  auto inputs_ok = [&](const PlanStep& step, const Shape& shape, DType dtype, int chained_slot, int64_t& inner) {
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      if (step.inputs[k] == chained_slot && chained_slot >= 0) continue;
      const TensorRef& ref = step.node->inputs[k];
      const TensorSpec& spec = graph_.state()->node(ref.node).outputs[ref.index];
      if (spec.dtype != dtype && step.node->op->kernel_dtype_input >= 0) return false;
      if (spec.shape == shape || spec.shape.num_elements() == 1) continue;
      const int lead = shape.rank() - spec.shape.rank();
      if (lead <= 0) return false;
      for (int d = 0; d < spec.shape.rank(); ++d)
        if (spec.shape.dim(d) != shape.dim(lead + d)) return false;
      const int64_t covered = spec.shape.num_elements();
      if (inner != 1 && inner != covered) return false;
      if (covered > kFusionTile) return false;
      inner = covered;
    }
    return true;
  };
  std::vector<char> taken(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    if (taken[i] || !fusable(steps_[i])) continue;
    const Shape shape = steps_[i].node->outputs[0].shape;
    const DType dtype = steps_[i].node->outputs[0].dtype;
    int64_t inner = 1;
    if (!inputs_ok(steps_[i], shape, dtype, -1, inner)) continue;
    std::vector<int> chain{i};
    for (;;) {
      const PlanStep& last = steps_[chain.back()];
      const int out = last.first_output;
      if (slot_pinned_[out] || readers[out] != 1) break;
      const int next = reader[out];
      const PlanStep& cand = steps_[next];
      if (taken[next] || !fusable(cand) || cand.device != last.device || cand.node->outputs[0].shape != shape ||
          cand.node->outputs[0].dtype != dtype)
        break;
      int64_t cand_inner = inner;
      if (!inputs_ok(cand, shape, dtype, out, cand_inner)) break;
      inner = cand_inner;
      // The slot must feed the candidate once (x * x would need the tile twice; it still works,
      // but keep the rule simple).
      if (std::count(cand.inputs.begin(), cand.inputs.end(), out) != 1) break;
      chain.push_back(next);
    }
    if (chain.size() < 2) continue;
    for (int m : chain) taken[m] = 1;
    for (size_t k = 0; k + 1 < chain.size(); ++k) {
      steps_[chain[k]].fused_away = true;
      steps_[chain[k]].fused_into = chain.back();
    }
    steps_[chain.back()].fused = chain;
    steps_[chain.back()].fused_inner = inner;
  }
}

void Plan::run_fused(const PlanStep& step, RunContext& rc) const {
  const auto t0 = rc.tracing ? Clock::now() : Clock::time_point();
  std::vector<DeviceTensor>& slots = rc.slots;
  const Node& last = *step.node;
  const TensorSpec& spec = last.outputs[0];
  const int64_t n = spec.shape.num_elements();
  const size_t esize = dtype_size(spec.dtype);
  auto out = step.device->allocate(spec.dtype, spec.shape);
  if (!out.ok()) throw_node_error(last, out.status());
  slots[step.first_output] = *std::move(out);
  const DeviceTensor& result = slots[step.first_output];

  // Where each member's inputs come from: the previous member (its tile), a full-shape tensor
  // (the same tile of it) or a single element (as a scalar).
  const int64_t inner = step.fused_inner;
  const int64_t tile = std::max<int64_t>(1, kFusionTile / inner) * inner;  // whole rows
  const int64_t tiles = (n + tile - 1) / tile;
  // A tile's shape: [rows, inner] when inputs broadcast over rows, else flat.
  auto tile_shape = [&](int64_t len) { return inner > 1 ? Shape{len / inner, inner} : Shape{len}; };
  std::mutex error_mu;
  absl::Status error;
  parallel_for(tiles, tile * static_cast<int64_t>(step.fused.size()), [&](int64_t t0, int64_t t1) {
    DeviceTensor scratch[2];
    for (auto& sc : scratch) {
      auto a = step.device->allocate(spec.dtype, Shape{tile});
      if (!a.ok()) { std::lock_guard<std::mutex> lock(error_mu); error = a.status(); return; }
      sc = *std::move(a);
    }
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t off = t * tile, len = std::min(tile, n - off);
      int previous_slot = -1;
      for (size_t m = 0; m < step.fused.size(); ++m) {
        const PlanStep& member = steps_[step.fused[m]];
        absl::InlinedVector<DeviceTensor, 3> views;
        absl::InlinedVector<const DeviceTensor*, 3> inputs;
        for (size_t k = 0; k < member.inputs.size(); ++k) {
          const int s = member.inputs[k];
          if (s >= 0 && s == previous_slot) {
            const DeviceTensor& prev = scratch[(m + 1) % 2];
            views.push_back(DeviceTensor{prev.buffer, 0, prev.dtype, tile_shape(len)});
            continue;
          }
          const DeviceTensor& full = s >= 0 ? slots[s] : *member.direct_inputs[k];
          const int64_t count = full.shape.num_elements();
          if (count == 1)
            views.push_back(DeviceTensor{full.buffer, full.offset, full.dtype, Shape{1}});  // broadcasts over the tile
          else if (count == n)
            views.push_back(DeviceTensor{full.buffer, full.offset + static_cast<size_t>(off) * esize, full.dtype,
                                         tile_shape(len)});
          else  // broadcast over rows: the same `inner` elements for every row
            views.push_back(DeviceTensor{full.buffer, full.offset, full.dtype, Shape{inner}});
        }
        for (const DeviceTensor& v : views) inputs.push_back(&v);
        const bool last_member = m + 1 == step.fused.size();
        const DeviceTensor& target = last_member ? result : scratch[m % 2];
        DeviceTensor output{target.buffer, last_member ? static_cast<size_t>(off) * esize : 0, spec.dtype,
                            tile_shape(len)};
        KernelContext kctx{member.device, member.node->op->api_name, absl::MakeConstSpan(inputs.data(), inputs.size()),
                           absl::MakeSpan(&output, 1), member.node->attrs};
        absl::Status st = member.kernel(kctx);
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(error_mu);
          error = with_op_prefix(st, member.node->op->api_name);
          return;
        }
        previous_slot = member.first_output;
      }
    }
  });
  if (!error.ok()) throw_node_error(last, error);
  if (rc.tracing) record_stats(step, rc, t0);
}

// Note [Bias and activation epilogue] (graph/bias_activation_fusion.cc): the product, then the
// bias and the activation in place over it.
void Plan::run_bias_activation(const PlanStep& step, RunContext& rc) const {
  const auto t0 = rc.tracing ? Clock::now() : Clock::time_point();
  const FusedBiasActivation& f = *step.bias_activation;
  const PlanStep& head = steps_[f.head];
  const PlanStep& add = steps_[f.add];
  run_kernel(head, rc);  // the product, into the head's own slot (its errors name its node)
  std::vector<DeviceTensor>& slots = rc.slots;
  DeviceTensor product = std::move(slots[head.first_output]);
  const int bias_slot = add.inputs[f.bias_input];
  const DeviceTensor* bias = bias_slot >= 0 ? &slots[bias_slot] : add.direct_inputs[f.bias_input];
  if (!bias->buffer) throw_node_error(*add.node, absl::InternalError("an input was released before its use"));
  DeviceTensor moved;
  if (bias->device() != step.device) {  // a captured eager variable on another device
    auto copy = DeviceManager::global().copy_to(*bias, step.device);
    if (!copy.ok()) throw_node_error(*add.node, copy.status());
    moved = *std::move(copy);
    bias = &moved;
  }
  const DeviceTensor* inputs[2] = {&product, bias};
  KernelContext ctx{step.device, add.node->op->api_name, inputs, absl::MakeSpan(&product, 1), f.attrs};
  if (absl::Status st = f.kernel(ctx); !st.ok()) throw_node_error(*add.node, with_op_prefix(st, add.node->op->api_name));
  slots[step.first_output] = std::move(product);
  if (rc.tracing) record_stats(step, rc, t0);
}

// ---- run ----


void record_variable_update(VariableOverlay& overlay, const Variable& variable, const Tensor& current,
                            const Tensor& next, bool subtract, const Tensor* delta) {
  auto [it, inserted] = overlay.try_emplace(variable.id(), PendingWrite(variable));
  PendingWrite& w = it->second;
  if (inserted) w.base = current;
  w.value = next;
  if (w.assigned) return;  // installed as a whole value
  if (delta != nullptr) w.deltas.emplace_back(subtract, *delta);
  else w.deltas_exact = false;
}

namespace {
// The committed value `latest` with w's updates applied again (another run committed first).
Tensor reapply(const PendingWrite& w, Tensor latest) {
  if (!w.deltas_exact) return add(latest, sub(w.value, w.base));
  for (const auto& [subtract, delta] : w.deltas) latest = subtract ? sub(latest, delta) : add(latest, delta);
  return latest;
}
}  // namespace

void commit_variable_writes(VariableOverlay& overlay, SessionState& state) {
  if (overlay.empty()) return;
  PauseObservers no_recording;  // the commit is not part of any tape's computation
  {
    std::lock_guard<std::mutex> lock(state.mu);
    for (auto& [id, w] : overlay) {
      if (w.variable.graph_info() == nullptr) continue;
      Tensor& committed = state.variables[id];
      if (w.assigned || !committed.defined() || committed.impl() == w.base.impl()) committed = w.value;
      else committed = reapply(w, committed);
    }
  }
  for (auto& [id, w] : overlay) {
    if (w.variable.graph_info() != nullptr) continue;
    if (w.assigned) {
      w.variable.assign(w.value);
      continue;
    }
    Tensor expected = w.base, desired = w.value;
    while (!w.variable.compare_and_set(expected, desired)) {
      expected = w.variable.read();
      desired = reapply(w, expected);
    }
  }
}

namespace {

Tensor read_variable_value(const Variable& v, SessionState& state,
                           VariableOverlay& overlay, std::mutex& overlay_mu,
                           const Plan& plan, const Node& node) {
  {
    std::lock_guard<std::mutex> lock(overlay_mu);
    auto it = overlay.find(v.id());
    if (it != overlay.end()) return it->second.value;
  }
  if (v.graph_info() == nullptr) return v.read();  // a captured eager variable
  {
    std::lock_guard<std::mutex> lock(state.mu);
    auto it = state.variables.find(v.id());
    if (it != state.variables.end()) return it->second;
  }
  // List every uninitialized variable this plan reads, with the line that created it.
  std::vector<std::string> missing;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    absl::flat_hash_map<int64_t, bool> seen;
    for (const PlanStep& s : plan.steps()) {
      if (s.kind != PlanStep::Kind::kRead) continue;
      const Variable& var = *s.node->variable;
      if (var.graph_info() == nullptr || state.variables.contains(var.id()) || seen[var.id()]) continue;
      seen[var.id()] = true;
      missing.push_back(absl::StrCat("'", var.name(), "' (created at ", var.created_at().file_name(), ":",
                                     var.created_at().line(), ")"));
    }
  }
  throw_status(absl::FailedPreconditionError(absl::StrCat(
                   "[Session.run] Attempting to use uninitialized value ", v.name(),
                   ". Uninitialized variables this run reads: ", absl::StrJoin(missing, ", "),
                   ". Run their initializers first (global_variables_initializer())\n  in ", describe_node(node))),
               node.loc);
}

}  // namespace

namespace {
// The tensor a _Recv got, on the _Recv's device.
void store_received(const PlanStep& step, const absl::Status& status, const DeviceTensor& value, DeviceTensor& slot) {
  if (!status.ok()) throw_node_error(*step.node, status);
  auto copy = DeviceManager::global().copy_to(value, step.device);
  if (!copy.ok()) throw_node_error(*step.node, copy.status());
  slot = *std::move(copy);
}
}  // namespace

void Plan::run_step(const PlanStep& step, RunContext& rc) const {
  if (step.fused_away) return;  // runs inside its chain's last step
  // A device with an intra-op pool of its own runs its kernels there (Note [Partitions]).
  std::optional<ScopedIntraOpPool> pool_scope;
  if (device_pools_) pool_scope.emplace(step.intra_pool);
  if (step.bias_activation) return run_bias_activation(step, rc);
  if (!step.fused.empty() && !step.matmul_update) return run_fused(step, rc);
  const Node& node = *step.node;
  std::vector<DeviceTensor>& slots = rc.slots;
  const auto t0 = rc.tracing ? Clock::now() : Clock::time_point();
  auto input_tensor = [&](int i) { return Tensor::from_device_tensor(slots[step.inputs[i]]); };
  auto set_output = [&](const Tensor& t) { slots[step.first_output] = t.device_tensor(); };
  auto write_variable = [&](const Tensor& value) {
    std::lock_guard<std::mutex> lock(rc.overlay_mu);
    PendingWrite& w = rc.overlay.try_emplace(node.variable->id(), PendingWrite(*node.variable)).first->second;
    w.value = value;
    w.base = Tensor();
    w.assigned = true;
    w.deltas.clear();
  };
  switch (step.kind) {
    case PlanStep::Kind::kSend: {
      const DeviceTensor& value = slots[step.inputs[0]];
      if (!value.buffer) throw_node_error(node, absl::InternalError("an input was released before its use"));
      if (absl::Status st = rc.rendezvous->send(transfers_[step.transfer].key, value); !st.ok()) throw_node_error(node, st);
      break;
    }
    case PlanStep::Kind::kRecv: {
      // A sequential run: the _Send ran before (Note [Partitions]), so the callback runs now.
      bool received = false;
      absl::Status got;
      DeviceTensor value;
      rc.rendezvous->recv_async(transfers_[step.transfer].key, [&](const absl::Status& st, const DeviceTensor& t) {
        received = true;
        got = st;
        value = t;
      });
      if (!received) throw_node_error(node, absl::InternalError("the _Recv ran before its _Send"));
      store_received(step, got, value, slots[step.first_output]);
      break;
    }
    case PlanStep::Kind::kConst: {
      const DeviceTensor& v = node.value.device_tensor();
      if (v.device() == step.device) {
        slots[step.first_output] = v;
      } else {
        auto copy = DeviceManager::global().copy_to(v, step.device);
        if (!copy.ok()) throw_node_error(node, copy.status());
        slots[step.first_output] = *std::move(copy);
      }
      break;
    }
    case PlanStep::Kind::kNoOp:
      break;
    case PlanStep::Kind::kPrint: {
      std::string line = node.attrs.get_or<std::string>("message", "");
      for (size_t i = 1; i < step.inputs.size(); ++i)
        absl::StrAppend(&line, line.empty() ? "" : " ", input_tensor(static_cast<int>(i)).to_string());
      std::cerr << line << "\n";
      slots[step.first_output] = slots[step.inputs[0]];
      break;
    }
    case PlanStep::Kind::kAssert: {
      if (input_tensor(0).item<bool>()) break;
      std::vector<Tensor> data;
      for (size_t i = 1; i < step.inputs.size(); ++i) data.push_back(input_tensor(static_cast<int>(i)));
      throw_node_error(node, absl::InvalidArgumentError(graph_ops_internal::assertion_message(node.attrs, data)));
    }
    case PlanStep::Kind::kRead:
      set_output(read_variable_value(*node.variable, *rc.state, rc.overlay, rc.overlay_mu, *this, node));
      break;
    case PlanStep::Kind::kAssign: {
      const Tensor value = input_tensor(0);
      if (value.shape() != node.variable->shape())
        throw_node_error(node, absl::InvalidArgumentError(absl::StrCat(
                                   "[assign] Variable '", node.variable->name(), "' has shape ",
                                   node.variable->shape().to_string(), "; cannot assign a value of shape ",
                                   value.shape().to_string())));
      write_variable(value);
      set_output(value);
      break;
    }
    case PlanStep::Kind::kAssignAdd:
    case PlanStep::Kind::kAssignSub: {
      if (step.matmul_update && step.matmul_update->at_commit) break;  // runs in place at the commit
      const Tensor current = read_variable_value(*node.variable, *rc.state, rc.overlay, rc.overlay_mu, *this, node);
      Tensor next, delta;
      const bool subtract = step.kind == PlanStep::Kind::kAssignSub;
      if (step.matmul_update) {
        absl::StatusOr<Tensor> updated = run_matmul_update(step, current, slots);
        if (!updated.ok()) throw_node_error(node, updated.status());
        next = *std::move(updated);
      } else {
        try {
          delta = input_tensor(0);
          next = subtract ? sub(current, delta, node.loc) : add(current, delta, node.loc);
        } catch (const Error& e) {
          throw_node_error(node, absl::InvalidArgumentError(e.what()));
        }
      }
      if (next.shape() != node.variable->shape())
        throw_node_error(node, absl::InvalidArgumentError(absl::StrCat(
                                   "[", node.op->api_name, "] Variable '", node.variable->name(), "' has shape ",
                                   node.variable->shape().to_string(), "; the update has shape ",
                                   next.shape().to_string())));
      {
        std::lock_guard<std::mutex> lock(rc.overlay_mu);
        record_variable_update(rc.overlay, *node.variable, current, next, subtract,
                               step.matmul_update ? nullptr : &delta);
      }
      set_output(next);
      break;
    }
    case PlanStep::Kind::kView:
    case PlanStep::Kind::kKernel:
      run_kernel(step, rc);
      break;
    case PlanStep::Kind::kFunctional: {
      std::vector<Tensor> inputs;
      for (size_t i = 0; i < step.inputs.size(); ++i) inputs.push_back(input_tensor(static_cast<int>(i)));
      std::optional<Clock::time_point> deadline;
      if (rc.options && rc.options->timeout_in_ms > 0) deadline = rc.start + std::chrono::milliseconds(rc.options->timeout_in_ms);
      const std::vector<Tensor> outputs =
          run_functional(*step.functional, node, std::move(inputs), *rc.state, rc.options, deadline);
      for (size_t k = 0; k < outputs.size(); ++k) slots[static_cast<size_t>(step.first_output) + k] = outputs[k].device_tensor();
      break;
    }
  }
  if (rc.tracing) record_stats(step, rc, t0);
}

// A kernel (or view) step: its output specs, inputs moved to its device, outputs allocated (or
// an input buffer reused), then the kernel. Errors name the step's node.
void Plan::run_kernel(const PlanStep& step, RunContext& rc) const {
  const Node& node = *step.node;
  std::vector<DeviceTensor>& slots = rc.slots;
  // Output specs: known at plan time, or inferred from this run's input shapes.
  OutputSpecs dynamic;
  if (!step.static_shapes) {
    absl::InlinedVector<TensorSpec, 4> specs;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const DeviceTensor& t = step.inputs[i] >= 0 ? slots[step.inputs[i]] : *step.direct_inputs[i];
      specs.push_back(TensorSpec{t.dtype, t.shape});
    }
    InferenceContext ictx{node.op->api_name, specs, node.attrs};
    absl::StatusOr<OutputSpecs> outs = infer_outputs(*node.op, ictx);
    if (!outs.ok()) throw_node_error(node, with_op_prefix(outs.status(), node.op->api_name));
    dynamic = *std::move(outs);
  }
  const OutputSpecs& out_specs = step.static_shapes ? node.outputs : dynamic;
  if (step.kind == PlanStep::Kind::kView) {
    DeviceTensor view = slots[step.inputs[node.op->forward_input]];
    view.shape = out_specs[0].shape;
    slots[step.first_output] = std::move(view);
    return;
  }
  // Inputs on another device are copied to the step's device.
  absl::InlinedVector<const DeviceTensor*, 4> inputs;
  absl::InlinedVector<DeviceTensor, 3> moved;  // copies from other devices (stable: capacity 3)
  if (step.inputs.size() > 3) moved.reserve(step.inputs.size());
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const int s = step.inputs[i];
    if (s < 0) { inputs.push_back(step.direct_inputs[i]); continue; }
    if (!slots[s].buffer) throw_node_error(node, absl::InternalError("an input was released before its use"));
    if (slots[s].device() == step.device) { inputs.push_back(&slots[s]); continue; }
    auto copy = DeviceManager::global().copy_to(slots[s], step.device);
    if (!copy.ok()) throw_node_error(node, copy.status());
    moved.push_back(*std::move(copy));
    inputs.push_back(&moved.back());
  }
  DeviceTensor* outputs = &slots[step.first_output];
  for (int o = 0; o < step.num_outputs; ++o) {
    const TensorSpec& spec = out_specs[o];
    if (o == 0 && step.reuse_input) {
      // Write into an input buffer that nothing else holds any more.
      bool reused = false;
      for (size_t i = 0; i < step.inputs.size() && !reused; ++i) {
        const int s = step.inputs[i];
        if (s < 0 || slot_pinned_[s] || inputs[i] != &slots[s]) continue;  // constants, fetches, copies
        const DeviceTensor& in = slots[s];
        const bool last_use = rc.uses_left ? rc.uses_left[s].load(std::memory_order_acquire) == 1
                                           : std::find(step.release.begin(), step.release.end(), s) != step.release.end();
        if (last_use && in.buffer.use_count() == 1 && in.dtype == spec.dtype && in.offset == 0 &&
            in.num_elements() == spec.shape.num_elements()) {
          outputs[0].buffer = in.buffer;
          outputs[0].offset = 0;
          outputs[0].dtype = spec.dtype;
          outputs[0].shape = spec.shape;
          reused = true;
        }
      }
      if (reused) continue;
    }
    if (node.op->kernel_allocates_output && !spec.shape.is_fully_defined()) {
      outputs[o] = DeviceTensor{nullptr, 0, spec.dtype, spec.shape};  // Note [Data-dependent output shapes]
      continue;
    }
    auto t = step.device->allocate(spec.dtype, spec.shape);
    if (!t.ok()) throw_node_error(node, t.status());
    outputs[o] = *std::move(t);
  }
  AttrMap seeded;
  const AttrMap* attrs = &node.attrs;
  if (step.random) {
    // Note [Random nodes]: each run of a random node in one Session draws new numbers.
    uint64_t count;
    {
      std::lock_guard<std::mutex> lock(rc.state->mu);
      count = rc.state->random_counts[node.id]++;
    }
    seeded = node.attrs;
    seeded.set("seed2", node.attrs.get<int64_t>("seed2") ^ static_cast<int64_t>(count * 0x9E3779B97F4A7C15ull));
    attrs = &seeded;
  }
  KernelContext kctx{step.device, node.op->api_name, absl::MakeConstSpan(inputs.data(), inputs.size()),
                     absl::MakeSpan(outputs, static_cast<size_t>(step.num_outputs)), *attrs};
  absl::Status st = step.kernel(kctx);
  if (!st.ok()) throw_node_error(node, with_op_prefix(st, node.op->api_name));
  if (node.op->kernel_allocates_output)
    for (int o = 0; o < step.num_outputs; ++o)
      if (!outputs[o].buffer) throw_node_error(node, absl::InternalError("the kernel left an output unallocated"));
  if (check_numerics_enabled()) [[unlikely]] {
    st = internal::check_outputs_finite(absl::MakeConstSpan(outputs, static_cast<size_t>(step.num_outputs)),
                                        absl::MakeConstSpan(inputs.data(), inputs.size()));
    if (!st.ok()) throw_node_error(node, with_op_prefix(st, node.op->api_name));
  }
}

void Plan::record_stats(const PlanStep& step, RunContext& rc, Clock::time_point t0) const {
  const Node& node = *step.node;
  NodeExecStats ns;
  ns.node_name = node.name;
  ns.op = node.op->type;
  ns.device = step.device->name();
  ns.start_micros = std::chrono::duration_cast<std::chrono::microseconds>(t0 - rc.start).count();
  ns.duration_nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  ns.thread_id = std::hash<std::thread::id>()(std::this_thread::get_id());
  for (int o = 0; o < step.num_outputs; ++o) {
    const DeviceTensor& t = rc.slots[step.first_output + o];
    ns.output_shapes.push_back(t.shape);
    ns.output_bytes.push_back(t.buffer ? static_cast<int64_t>(t.bytes()) : 0);
  }
  if (!step.matmul_update)  // a MatMul update's members show as their op (matmul_update_fusion_test)
    for (int m : step.fused) ns.fused_nodes.push_back(steps_[m].node->name);
  std::lock_guard<std::mutex> lock(rc.stats_mu);
  rc.stats.nodes.push_back(std::move(ns));
}

void Plan::run_sequential(RunContext& rc) const {
  for (const PlanStep& step : steps_) {
    run_step(step, rc);
    for (int s : step.release) rc.slots[s].buffer.reset();
  }
}

void Plan::run_parallel(RunContext& rc, absl::Span<InterOpPool* const> pools) const {
  // Shared with the pool's tasks, which may still be returning when the last step is done.
  struct Shared {
    const Plan* plan;
    RunContext* rc;
    absl::Span<InterOpPool* const> pools;
    std::unique_ptr<std::atomic<int>[]> pending;
    std::atomic<int> remaining{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex mu;
    std::condition_variable cv;

    InterOpPool& pool_of(int step) const { return *pools[static_cast<size_t>(plan->steps_[step].lane) % pools.size()]; }

    void fail(std::exception_ptr e) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (failed.exchange(true)) return;
        error = std::move(e);
      }
      // Waiting _Recvs end (Note [Partitions]); their steps then count as done.
      if (rc->rendezvous) rc->rendezvous->start_abort(absl::AbortedError("[Session.run] another step failed"));
    }

    // Runs step i, then whatever it made ready: the first on its device inline, the rest on
    // their devices' pools. A _Recv registers with the rendezvous and goes on when the tensor
    // arrives (received: it has).
    static void process(const std::shared_ptr<Shared>& self, int i, bool received = false) {
      const Plan& plan = *self->plan;
      RunContext& rc = *self->rc;
      while (i >= 0) {
        const PlanStep& step = plan.steps_[i];
        if (step.kind == PlanStep::Kind::kRecv && !received) {
          rc.rendezvous->recv_async(plan.transfers_[step.transfer].key,
                                    [self, i](const absl::Status& st, const DeviceTensor& value) {
                                      // Not on the sender's thread: on the receiving device's pool.
                                      self->pool_of(i).schedule([self, i, st, value] {
                                        const PlanStep& recv = self->plan->steps_[i];
                                        if (!self->failed.load(std::memory_order_acquire)) {
                                          try {
                                            const auto t0 = Clock::now();
                                            store_received(recv, st, value, self->rc->slots[recv.first_output]);
                                            if (self->rc->tracing) self->plan->record_stats(recv, *self->rc, t0);
                                          } catch (...) {
                                            self->fail(std::current_exception());
                                          }
                                        }
                                        process(self, i, true);
                                      });
                                    });
          return;
        }
        received = false;
        if (step.kind != PlanStep::Kind::kRecv && !self->failed.load(std::memory_order_acquire)) {
          try {
            plan.run_step(step, rc);
          } catch (...) {
            self->fail(std::current_exception());
          }
        }
        // A fused chain releases its members' inputs when it has run, not when they are skipped.
        auto release_inputs = [&](const PlanStep& st) {
          for (int s : st.inputs)
            if (s >= 0 && rc.uses_left[s].fetch_sub(1, std::memory_order_acq_rel) == 1 && !plan.slot_pinned_[s])
              rc.slots[s].buffer.reset();
        };
        if (!step.fused.empty())
          for (int m : step.fused) release_inputs(plan.steps_[m]);
        else if (!step.fused_away)
          release_inputs(step);
        int next = -1;
        for (int succ : step.successors) {
          if (self->pending[succ].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
          if (next < 0 && plan.steps_[succ].lane == step.lane) next = succ;
          else self->pool_of(succ).schedule([self, succ] { process(self, succ); });
        }
        if (self->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          std::lock_guard<std::mutex> lock(self->mu);
          self->cv.notify_all();
        }
        i = next;
      }
    }
  };
  const int n = static_cast<int>(steps_.size());
  auto shared = std::make_shared<Shared>();
  shared->plan = this;
  shared->rc = &rc;
  shared->pools = pools;
  shared->pending.reset(new std::atomic<int>[n]);
  for (int i = 0; i < n; ++i) shared->pending[i].store(steps_[i].num_predecessors, std::memory_order_relaxed);
  shared->remaining.store(n);
  rc.uses_left.reset(new std::atomic<int>[num_slots_]);
  for (int s = 0; s < num_slots_; ++s) rc.uses_left[s].store(slot_uses_[s], std::memory_order_relaxed);

  for (size_t r = 1; r < roots_.size(); ++r)
    shared->pool_of(roots_[r]).schedule([shared, i = roots_[r]] { Shared::process(shared, i); });
  if (!roots_.empty()) Shared::process(shared, roots_[0]);
  while (shared->remaining.load(std::memory_order_acquire) > 0) {
    bool ran = false;
    for (InterOpPool* pool : pools) ran = ran || pool->try_run_one();
    if (ran) continue;
    std::unique_lock<std::mutex> lock(shared->mu);
    shared->cv.wait_for(lock, std::chrono::microseconds(200), [&] { return shared->remaining.load() == 0; });
  }
  std::lock_guard<std::mutex> lock(shared->mu);
  if (shared->error) std::rethrow_exception(shared->error);
}

std::vector<Tensor> Plan::run(const std::vector<Tensor>& feeds, SessionState& state,
                              absl::Span<InterOpPool* const> pools, const RunOptions* options, RunMetadata* metadata,
                              std::source_location) const {
  RunContext rc;
  rc.feeds = &feeds;
  rc.state = &state;
  rc.options = options;
  if (!transfers_.empty()) rc.rendezvous = std::make_unique<Rendezvous>();
  rc.slots.resize(static_cast<size_t>(num_slots_));
  rc.tracing = options && options->trace_level == RunOptions::TraceLevel::kFullTrace && metadata;
  rc.start = Clock::now();
  for (size_t i = 0; i < feeds.size(); ++i) rc.slots[feed_slots_[i]] = feeds[i].device_tensor();

  if (rc.tracing)
    for (const auto& [node, device] : direct_consts_) {
      NodeExecStats ns;  // its value is read in place: no time of its own
      ns.node_name = node->name;
      ns.op = node->op->type;
      ns.device = device->name();
      ns.output_shapes.push_back(node->value.shape());
      ns.output_bytes.push_back(static_cast<int64_t>(node->value.device_tensor().bytes()));
      rc.stats.nodes.push_back(std::move(ns));
    }
  const bool threads = !pools.empty() && std::all_of(pools.begin(), pools.end(), [](InterOpPool* p) { return p && p->size() > 0; });
  if (parallel_ && threads) run_parallel(rc, pools);
  else run_sequential(rc);
  const Node* failed = nullptr;
  std::vector<std::pair<int, int64_t>> commit_nanos;
  if (absl::Status st = run_commit_updates(rc.slots, rc.overlay, state, &failed, rc.tracing ? &commit_nanos : nullptr);
      !st.ok())
    throw_node_error(*failed, st);
  for (const auto& [u, nanos] : commit_nanos)  // the update ran at the commit: its real duration
    for (NodeExecStats& ns : rc.stats.nodes)
      if (ns.node_name == steps_[u].node->name) ns.duration_nanos += nanos;

  // The run succeeded: commit variable writes (Note [Atomic variable updates]).
  commit_variable_writes(rc.overlay, state);

  std::vector<Tensor> results;
  results.reserve(fetches_.size());
  for (const PlanFetch& f : fetches_) {
    switch (f.kind) {
      case PlanFetch::Kind::kTensor: results.push_back(Tensor::from_device_tensor(rc.slots[f.slot])); break;
      case PlanFetch::Kind::kOperation: results.emplace_back(); break;
      case PlanFetch::Kind::kVariable: {
        const Variable& v = *f.variable;
        if (v.graph_info() == nullptr) { results.push_back(v.read()); break; }
        std::lock_guard<std::mutex> lock(state.mu);
        auto it = state.variables.find(v.id());
        if (it == state.variables.end())
          throw FailedPreconditionError(
              absl::StrCat("[Session.run] Attempting to use uninitialized value ", v.name(), " (created at ",
                           v.created_at().file_name(), ":", v.created_at().line(), ")"),
              v.created_at());
        results.push_back(it->second);
        break;
      }
    }
  }
  if (metadata) {
    if (rc.tracing) metadata->step_stats = std::move(rc.stats);
    if (options && options->output_partition_graphs) metadata->partition_graphs = partition_graphs();
  }
  return results;
}

// ---- InterOpPool ----

InterOpPool::InterOpPool(int threads) {
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this] {
      for (;;) {
        std::function<void()> fn;
        {
          std::unique_lock<std::mutex> lock(mu_);
          cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
          if (stop_ && queue_.empty()) return;
          fn = std::move(queue_.back());
          queue_.pop_back();
        }
        fn();
      }
    });
}

InterOpPool::~InterOpPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void InterOpPool::schedule(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
  }
  cv_.notify_one();
}

bool InterOpPool::try_run_one() {
  std::function<void()> fn;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty()) return false;
    fn = std::move(queue_.back());
    queue_.pop_back();
  }
  fn();
  return true;
}

// ---- text forms ----

std::string StepStats::to_string() const {
  std::string out;
  for (const NodeExecStats& n : nodes) {
    std::vector<std::string> shapes;
    for (size_t i = 0; i < n.output_shapes.size(); ++i)
      shapes.push_back(absl::StrCat(n.output_shapes[i].to_string(), " ", n.output_bytes[i], "B"));
    absl::StrAppend(&out, n.node_name, " (", n.op, ") on ", n.device, ": start ", n.start_micros, "us, ",
                    n.duration_nanos, "ns, outputs [", absl::StrJoin(shapes, ", "), "]\n");
  }
  return out;
}

std::string PartitionGraph::to_string() const {
  return absl::StrCat("partition ", device, " {\n  ", absl::StrJoin(nodes, "\n  "), "\n}\n");
}

}  // namespace tapeflow
