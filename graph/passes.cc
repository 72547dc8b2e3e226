#include "graph/passes.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/executor.h"
#include "graph/graph_ops.h"

namespace tapeflow {

namespace {

// Copies the kept nodes of a source graph into a new graph, in id order (so the copy is
// topologically ordered too), and records old -> new ids.
class Rewriter {
 public:
  Rewriter(const Graph& source, const char* pass)
      : source_(source), pass_(pass), nodes_(source.state()->snapshot()), map_(nodes_.size(), -1) {}

  const std::vector<const Node*>& nodes() const { return nodes_; }
  int size() const { return static_cast<int>(nodes_.size()); }
  int mapped(int old) const { return map_[static_cast<size_t>(old)]; }
  GraphState& target() { return *graph_.state(); }

  // The source node with inputs and control inputs remapped (not yet added).
  Node remapped(const Node& old) const {
    Node node = old;
    for (TensorRef& in : node.inputs) in.node = mapped(in.node);
    node.control_inputs = remap_control(old.control_inputs);
    return node;
  }
  // Old control-input ids -> new ids, sorted and without duplicates (their order means nothing).
  std::vector<int> remap_control(const std::vector<int>& old) const {
    std::vector<int> out;
    out.reserve(old.size());
    for (int c : old) out.push_back(mapped(c));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  // Adds `node` (already remapped) as the image of source node `old`.
  int add(int old, Node node) {
    const int id = graph_.state()->add_node(std::move(node));
    map_[static_cast<size_t>(old)] = id;
    return id;
  }
  int copy(int old) { return add(old, remapped(*nodes_[static_cast<size_t>(old)])); }
  void alias(int old, int new_id) { map_[static_cast<size_t>(old)] = new_id; }

  // Carries over the graph's variable list, collections and prevent_feeding marks for what
  // remains, and returns the result.
  PassResult finish() {
    GraphState& src = *source_.state();
    GraphState& dst = *graph_.state();
    for (int handle : src.variable_nodes()) {
      if (handle >= size() || mapped(handle) < 0) continue;
      const int64_t id = src.node(handle).variable->id();
      auto nodes = src.variable_nodes_of(id);
      const bool has_init = nodes && nodes->initializer >= 0 && nodes->initializer < size();
      dst.add_variable(id, {mapped(handle), has_init ? mapped(nodes->initializer) : -1});
    }
    for (const std::string& key : src.collection_keys()) {
      for (CollectionItem& item : src.get_collection(key)) {
        if (auto* t = std::get_if<Tensor>(&item)) {
          const int n = t->symbolic().node;
          if (n >= size() || mapped(n) < 0) continue;
          item = dst.tensor({mapped(n), t->symbolic().output});
        } else if (auto* op = std::get_if<Operation>(&item)) {
          if (op->id() >= size() || mapped(op->id()) < 0) continue;
          item = Operation(graph_.state(), mapped(op->id()));
        } else if (auto* v = std::get_if<Variable>(&item)) {
          auto nodes = src.variable_nodes_of(v->id());
          if (nodes && (nodes->handle >= size() || mapped(nodes->handle) < 0)) continue;
        }
        dst.add_to_collection(key, std::move(item));
      }
    }
    for (int old = 0; old < size(); ++old) {
      if (mapped(old) < 0) continue;
      const int outputs = static_cast<int>(dst.node(mapped(old)).outputs.size());
      for (int i = 0; i < outputs && i < static_cast<int>(nodes_[old]->outputs.size()); ++i)
        if (!src.is_feedable({old, i})) dst.prevent_feeding({mapped(old), i}, src.why_not_feedable({old, i}));
    }
    PassResult result;
    result.graph = graph_;
    result.nodes_before = size();
    result.nodes_after = dst.num_nodes();
    result.source = source_;
    result.pass = pass_;
    result.node_map = std::move(map_);
    return result;
  }

 private:
  Graph source_;
  const char* pass_;
  std::vector<const Node*> nodes_;
  std::vector<int> map_;
  Graph graph_;
};

// The node id of `op` in `g`; InvalidArgumentError naming `api` and `what` otherwise.
int node_in(const Graph& g, const Operation& op, const char* api, const char* what) {
  if (!op.defined() || !(op.graph() == g))
    throw InvalidArgumentError(absl::StrCat("[", api, "] the ", what, " is not an operation of this graph"), {});
  return op.id();
}

std::vector<char> keep_flags(const Graph& g, const std::vector<Operation>& keep, const char* api) {
  std::vector<char> flags(static_cast<size_t>(g.num_nodes()), 0);
  for (const Operation& op : keep) flags[static_cast<size_t>(node_in(g, op, api, "op to keep"))] = 1;
  return flags;
}

Node const_node(const Node& like, const Tensor& value, std::vector<int> control) {
  Node node;
  node.name = like.name;
  node.op = &kConstOp;
  node.attrs = AttrMap{{"dtype", value.dtype()}, {"shape", value.shape()}};
  node.outputs = single_output(value.dtype(), value.shape());
  node.requested_device = like.requested_device;
  node.loc = like.loc;
  node.imported = like.imported;
  node.value = value;
  node.control_inputs = std::move(control);
  return node;
}

}  // namespace

// ---- PassResult ----

Tensor PassResult::map(const Tensor& old) const {
  if (!old.defined() || !old.is_symbolic() || old.symbolic().graph.get() != source.state().get())
    throw InvalidArgumentError(absl::StrCat("[PassResult.map] the tensor is not a tensor of the graph that ", pass,
                                            " read"),
                               {});
  const SymbolicRef& ref = old.symbolic();
  if (ref.node >= static_cast<int>(node_map.size()) || node_map[ref.node] < 0)
    throw NotFoundError(absl::StrCat("[PassResult.map] ", pass, " removed tensor '", old.name(), "'"), {});
  return graph.state()->tensor({node_map[ref.node], ref.output});
}

Operation PassResult::map(const Operation& old) const {
  if (!old.defined() || !(old.graph() == source))
    throw InvalidArgumentError(
        absl::StrCat("[PassResult.map] the operation is not an operation of the graph that ", pass, " read"), {});
  if (!contains(old))
    throw NotFoundError(absl::StrCat("[PassResult.map] ", pass, " removed operation '", old.name(), "'"), {});
  return Operation(graph.state(), node_map[old.id()]);
}

std::vector<Tensor> PassResult::map(const std::vector<Tensor>& old) const {
  std::vector<Tensor> out;
  out.reserve(old.size());
  for (const Tensor& t : old) out.push_back(map(t));
  return out;
}

bool PassResult::contains(const Operation& old) const {
  return old.defined() && old.graph() == source && old.id() < static_cast<int>(node_map.size()) &&
         node_map[old.id()] >= 0;
}

PassResult chain(const PassResult& first, const PassResult& second) {
  if (!(second.source == first.graph))
    throw InvalidArgumentError(absl::StrCat("[chain] ", second.pass, " did not read the graph that ", first.pass,
                                            " produced"),
                               {});
  PassResult out;
  out.graph = second.graph;
  out.source = first.source;
  out.pass = absl::StrCat(first.pass, " + ", second.pass);
  out.nodes_before = first.nodes_before;
  out.nodes_after = second.nodes_after;
  out.node_map.resize(first.node_map.size(), -1);
  for (size_t i = 0; i < first.node_map.size(); ++i) {
    const int mid = first.node_map[i];
    if (mid >= 0 && mid < static_cast<int>(second.node_map.size())) out.node_map[i] = second.node_map[mid];
  }
  return out;
}

// ---- prune ----

PassResult prune(const Graph& g, const std::vector<Tensor>& fetches, const std::vector<Operation>& targets) {
  Rewriter rw(g, "prune");
  std::vector<char> needed(static_cast<size_t>(rw.size()), 0);
  std::vector<int> stack;
  for (const Tensor& t : fetches) {
    if (!t.defined() || !t.is_symbolic() || t.symbolic().graph.get() != g.state().get() ||
        t.symbolic().node >= rw.size())
      throw InvalidArgumentError(absl::StrCat("[prune] fetch '", t.defined() ? t.name() : std::string("<empty>"),
                                              "' is not a tensor of this graph"),
                                 {});
    stack.push_back(t.symbolic().node);
  }
  for (const Operation& op : targets) stack.push_back(node_in(g, op, "prune", "target"));
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (needed[id]) continue;
    needed[id] = 1;
    const Node& node = *rw.nodes()[id];
    for (const TensorRef& in : node.inputs) if (!needed[in.node]) stack.push_back(in.node);
    for (int c : node.control_inputs) if (!needed[c]) stack.push_back(c);
  }
  for (int id = 0; id < rw.size(); ++id)
    if (needed[id]) rw.copy(id);
  return rw.finish();
}

// ---- constant folding ----

namespace {

bool foldable_op(const OpDef* op) {
  // Graph-only ops (placeholders, Const, NoOp, Print, variable ops) are run by the executor
  // itself, never by a kernel; stateful ops must run each time.
  return op != nullptr && !op->stateful && find_graph_op(op->type) == nullptr;
}

// Runs `node` on these input values in a one-node graph, with the executor (so the same
// kernels, views and shape inference as a Session), on CPU. nullopt when it fails.
std::optional<Tensor> evaluate(const Node& node, const std::vector<Tensor>& inputs) {
  Graph tiny;
  GraphState& st = *tiny.state();
  Node op = node;
  op.id = -1;
  op.control_inputs.clear();
  op.requested_device = DeviceSpec{};
  op.variable.reset();
  for (size_t k = 0; k < inputs.size(); ++k) {
    Node c = const_node(node, inputs[k], {});
    c.name = absl::StrCat(node.name, "/input_", k);
    c.requested_device = DeviceSpec{};
    op.inputs[k] = TensorRef{st.add_node(std::move(c)), 0};
  }
  const int id = st.add_node(std::move(op));
  Plan::Request request;
  request.fetches.push_back(Plan::FetchSpec{PlanFetch::Kind::kTensor, TensorRef{id, 0}, -1, std::nullopt});
  SessionOptions options;
  options.inter_op_parallelism_threads = 1;
  options.device_count["GPU"] = 0;  // fold on CPU:0, where the constants live
  try {
    std::unique_ptr<Plan> plan = Plan::compile(tiny, request, options, node.loc);
    SessionState state;
    std::vector<Tensor> out = plan->run({}, state, {}, nullptr, nullptr, node.loc);
    if (out.size() != 1 || !out[0].defined()) return std::nullopt;
    return out[0];
  } catch (const Error&) {
    return std::nullopt;  // left to fail (or not be needed) at run time
  }
}

}  // namespace

PassResult fold_constants(const Graph& g, const FoldOptions& options) {
  Rewriter rw(g, "fold_constants");
  const int n = rw.size();
  const std::vector<char> keep = keep_flags(g, options.keep, "fold_constants");
  const auto& nodes = rw.nodes();

  // Consumers of each node, and which nodes are some node's control input.
  std::vector<int> consumers(static_cast<size_t>(n), 0);
  std::vector<char> control_source(static_cast<size_t>(n), 0);
  for (const Node* node : nodes) {
    for (const TensorRef& in : node->inputs) ++consumers[in.node];
    for (int c : node->control_inputs) control_source[c] = 1;
  }

  // Note [Folding]: in id (topological) order, a node is constant when it is a Const or is
  // folded; `control` gathers the control inputs of the constants it was computed from, which
  // its Const keeps so that it still runs after them. A constant whose consumers are all
  // constant is dropped (decided once its last consumer is seen, so values are freed early).
  std::vector<char> constant(static_cast<size_t>(n), 0), folded(static_cast<size_t>(n), 0),
      dropped(static_cast<size_t>(n), 0);
  std::vector<Tensor> value(static_cast<size_t>(n));
  std::vector<std::vector<int>> control(static_cast<size_t>(n));
  std::vector<int> pending = consumers;
  std::vector<int> nonconstant_consumers(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const Node& node = *nodes[i];
    if (node.op == &kConstOp && node.value.defined()) {
      constant[i] = 1;
      value[i] = node.value;
      control[i] = node.control_inputs;
    } else if (foldable_op(node.op) && node.outputs.size() == 1 && !node.value.defined() &&
               std::all_of(node.inputs.begin(), node.inputs.end(), [&](const TensorRef& in) { return constant[in.node]; })) {
      std::vector<Tensor> inputs;
      for (const TensorRef& in : node.inputs) inputs.push_back(value[in.node]);
      std::optional<Tensor> result = evaluate(node, inputs);
      if (result && static_cast<int64_t>(result->num_elements() * dtype_size(result->dtype())) <=
                        options.max_constant_bytes) {
        constant[i] = folded[i] = 1;
        value[i] = *std::move(result);
        std::vector<int>& ctl = control[i];
        ctl = node.control_inputs;
        for (const TensorRef& in : node.inputs) ctl.insert(ctl.end(), control[in.node].begin(), control[in.node].end());
        std::sort(ctl.begin(), ctl.end());
        ctl.erase(std::unique(ctl.begin(), ctl.end()), ctl.end());
      }
    }
    for (const TensorRef& in : node.inputs) {
      if (!constant[i]) ++nonconstant_consumers[in.node];
      if (--pending[in.node] > 0) continue;
      const int d = in.node;
      dropped[d] = constant[d] && nonconstant_consumers[d] == 0 && !control_source[d] && !keep[d];
      if (dropped[d]) {
        value[d] = Tensor();
        std::vector<int>().swap(control[d]);
      }
    }
  }

  for (int i = 0; i < n; ++i) {
    if (dropped[i]) continue;
    if (folded[i]) rw.add(i, const_node(*nodes[i], value[i], rw.remap_control(control[i])));
    else rw.copy(i);
    value[i] = Tensor();
  }
  return rw.finish();
}

// ---- common-subexpression elimination ----

namespace {

// A Const's bytes, read in place on host memory or copied otherwise.
std::string_view const_bytes(const Tensor& t, std::string& storage) {
  const DeviceTensor& dt = t.device_tensor();
  if (!dt.buffer || dt.bytes() == 0) return {};
  if (dt.device()->host_accessible()) return std::string_view(static_cast<const char*>(dt.raw()), dt.bytes());
  storage.resize(dt.bytes());
  t.copy_to_host(storage.data());
  return storage;
}

bool attrs_equal(const AttrMap& a, const AttrMap& b) {
  if (a.items().size() != b.items().size()) return false;
  for (const auto& [name, v] : a.items()) {
    const AttrValue* w = b.find(name);
    if (w == nullptr || !(*w == v)) return false;
  }
  return true;
}

// Equal nodes are interchangeable: same op, inputs, control inputs (both sorted), device,
// colocation and attrs; Consts also need equal values.
bool same_node(const Node& a, const Node& b) {
  if (a.op != b.op || a.inputs != b.inputs || a.control_inputs != b.control_inputs ||
      !(a.requested_device == b.requested_device) || a.colocate_with() != b.colocate_with() ||
      a.functions() != b.functions() ||
      a.outputs.size() != b.outputs.size() ||
      !attrs_equal(a.attrs, b.attrs))
    return false;
  if (a.op != &kConstOp) return true;
  if (a.value.dtype() != b.value.dtype() || a.value.shape() != b.value.shape()) return false;
  std::string sa, sb;
  return const_bytes(a.value, sa) == const_bytes(b.value, sb);
}

size_t node_hash(const Node& node) {
  // Attrs hash independently of their order: a sum of per-attr hashes.
  size_t attrs = 0;
  for (const auto& [name, v] : node.attrs.items()) attrs += absl::HashOf(name, attr_value_to_string(v));
  size_t h = absl::HashOf(node.op, node.inputs, node.control_inputs, node.requested_device.to_string(), attrs);
  if (node.op == &kConstOp) {
    std::string storage;
    h = absl::HashOf(h, const_bytes(node.value, storage));
  }
  return h;
}

}  // namespace

PassResult eliminate_common_subexpressions(const Graph& g, const std::vector<Operation>& keep_ops) {
  Rewriter rw(g, "eliminate_common_subexpressions");
  const std::vector<char> keep = keep_flags(g, keep_ops, "eliminate_common_subexpressions");
  // Note [CSE]: nodes are visited in topological order with inputs already remapped, so a
  // node whose inputs were merged meets its twin here and merges too (whole chains collapse).
  absl::flat_hash_map<size_t, absl::InlinedVector<int, 1>> seen;  // hash -> new ids
  for (int i = 0; i < rw.size(); ++i) {
    const Node& old = *rw.nodes()[i];
    Node node = rw.remapped(old);
    const bool mergeable = !old.op->stateful && (old.op == &kConstOp ? old.value.defined() : !old.value.defined());
    if (!mergeable) {
      rw.add(i, std::move(node));
      continue;
    }
    const size_t h = node_hash(node);
    absl::InlinedVector<int, 1>& bucket = seen[h];
    int twin = -1;
    if (!keep[i])
      for (int candidate : bucket)
        if (same_node(rw.target().node(candidate), node)) { twin = candidate; break; }
    if (twin >= 0) {
      rw.alias(i, twin);
    } else {
      bucket.push_back(rw.add(i, std::move(node)));
    }
  }
  return rw.finish();
}

}  // namespace tapeflow
