#include "graph/gradients.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "graph/graph.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"
#include "graph/scopes.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {

using Span = absl::Span<const Tensor>;

bool differentiable(const Node& n) { return n.op->differentiable; }

GradFn gradient_function(const Node& n) { return find_gradient(n.op->type); }

bool compatible(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (a.dim(i) >= 0 && b.dim(i) >= 0 && a.dim(i) != b.dim(i)) return false;
  return true;
}

Tensor sum_of(const std::vector<Tensor>& terms) {
  Tensor total = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) total = add(total, terms[i]);
  return total;
}

// While alive: the context names ops under "<current scope>/<node>_grad" (TensorFlow's
// name_scope(op.name + "_grad"); a node name may contain '/', which name_scope() refuses).
class GradScope {
 public:
  GradScope(GraphBuildingContext& ctx, const std::string& node_name) : ctx_(ctx), saved_(ctx.name_stack()) {
    const std::string base = absl::StrCat(node_name, "_grad");
    ctx.set_name_stack(ctx.graph().state()->unique_name(saved_.empty() ? base : absl::StrCat(saved_, "/", base)));
  }
  ~GradScope() { ctx_.set_name_stack(saved_); }
  GradScope(const GradScope&) = delete;
  GradScope& operator=(const GradScope&) = delete;

 private:
  GraphBuildingContext& ctx_;
  std::string saved_;
};

// Gradient nodes are named after their op types even inside a caller's op_name() scope.
class ClearOpNames {
 public:
  explicit ClearOpNames(GraphBuildingContext& ctx) : ctx_(ctx) { std::swap(saved_, ctx.op_names()); }
  ~ClearOpNames() { std::swap(saved_, ctx_.op_names()); }
  ClearOpNames(const ClearOpNames&) = delete;
  ClearOpNames& operator=(const ClearOpNames&) = delete;

 private:
  GraphBuildingContext& ctx_;
  std::vector<std::string> saved_;
};

std::string describe_tensor(const Tensor& t) {
  return t.is_symbolic() ? absl::StrCat("tensor '", t.name(), "'") : std::string("a concrete (eager) tensor");
}

}  // namespace

// Note [Gradient seeds]: the default seed is ones_like(y), not ones(shape): it makes every
// gradient node depend on y, and so run after every variable read that y depends on. A train
// op relies on that: each update is built from gradients, so it cannot overwrite a variable
// before the forward pass (and the backward pass, which reuses the forward reads) has read it.
// TensorFlow's seed, fill(shape(y), 1), has the same dependency.

std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<Source>& xs,
                              const std::vector<Tensor>& grad_ys, Unconnected unconnected, std::source_location loc) {
  if (ys.empty()) throw InvalidArgumentError("[gradients] ys is empty: give at least one tensor to differentiate", loc);
  if (!grad_ys.empty() && grad_ys.size() != ys.size())
    throw InvalidArgumentError(absl::StrCat("[gradients] got ", grad_ys.size(), " grad_ys for ", ys.size(),
                                            " ys; pass one per y, or none"),
                               loc);

  // The graph: the one being built, else the ys' own (entered for the new nodes).
  std::optional<GraphDefaultGuard> entered;
  if (current_graph_context() == nullptr) {
    if (!ys[0].defined() || !ys[0].is_symbolic())
      throw InvalidArgumentError(absl::StrCat("[gradients] ys[0] is ", ys[0].defined() ? describe_tensor(ys[0]) : "empty",
                                              "; gradients() differentiates graph tensors (eagerly, use a "
                                              "GradientTape)"),
                                 loc);
    entered.emplace(std::static_pointer_cast<GraphState>(ys[0].symbolic().graph)->handle());
  }
  GraphBuildingContext& ctx = *current_graph_context();
  const std::shared_ptr<GraphState>& state = ctx.graph().state();

  auto ref_of = [&](const Tensor& t, const char* what, size_t i) {
    if (!t.defined()) throw InvalidArgumentError(absl::StrCat("[gradients] ", what, "[", i, "] is an empty tensor"), loc);
    if (!t.is_symbolic() || t.symbolic().graph.get() != state.get())
      throw InvalidArgumentError(absl::StrCat("[gradients] ", what, "[", i, "] is ", describe_tensor(t),
                                              ", which is not a tensor of the graph being built"),
                                 loc);
    return TensorRef{t.symbolic().node, t.symbolic().output};
  };
  std::vector<TensorRef> y_refs;
  for (size_t i = 0; i < ys.size(); ++i) y_refs.push_back(ref_of(ys[i], "ys", i));
  for (size_t i = 0; i < grad_ys.size(); ++i) {
    const Tensor& g = grad_ys[i];
    if (!g.defined()) continue;  // this y gets ones
    if (g.is_symbolic()) ref_of(g, "grad_ys", i);
    if (g.dtype() != ys[i].dtype() || !compatible(g.shape(), ys[i].shape()))
      throw InvalidArgumentError(absl::StrCat("[gradients] grad_ys[", i, "] has dtype ", dtype_name(g.dtype()),
                                              " and shape ", g.shape().to_string(), "; ys[", i, "] ('",
                                              ys[i].name(), "') has dtype ", dtype_name(ys[i].dtype()),
                                              " and shape ", ys[i].shape().to_string()),
                                 loc);
  }

  // Only the nodes that exist now: the backward nodes added below are not walked.
  const std::vector<const Node*> nodes = state->snapshot();
  const int num_nodes = static_cast<int>(nodes.size());

  // Each source's tensors: the tensor itself, or every read of the variable.
  std::vector<std::vector<TensorRef>> source_refs(xs.size());
  absl::flat_hash_set<TensorRef> x_refs;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (const Tensor* t = xs[i].tensor()) {
      source_refs[i].push_back(ref_of(*t, "xs", i));
    } else {
      const Variable& v = *xs[i].variable();
      // A graph variable must be bound to this graph (created here, or carried over by a pass).
      if (v.graph_info() != nullptr && !state->variable_nodes_of(v.id()))
        throw InvalidArgumentError(absl::StrCat("[gradients] xs[", i, "] is Variable '", v.name(),
                                                "' of another graph than the one being built"),
                                   loc);
      for (const Node* n : nodes)
        if (n->op == &kReadVariableOp && n->variable && n->variable->id() == v.id()) source_refs[i].push_back({n->id, 0});
    }
    for (const TensorRef& r : source_refs[i])
      if (is_floating(nodes[r.node]->outputs[r.index].dtype)) x_refs.insert(r);
  }

  // Forward from the sources: tensors that depend on one through differentiable ops.
  int first = num_nodes;
  for (const TensorRef& r : x_refs) first = std::min(first, r.node);
  std::vector<char> from_x(num_nodes, 0);  // every floating output of the node depends on a source
  auto reached = [&](TensorRef r) {
    return x_refs.contains(r) || (from_x[r.node] && is_floating(nodes[r.node]->outputs[r.index].dtype));
  };
  for (int id = first; id < num_nodes; ++id) {
    const Node& n = *nodes[id];
    if (!differentiable(n)) continue;
    from_x[id] = std::any_of(n.inputs.begin(), n.inputs.end(), reached);
  }
  // Backward from the ys: the nodes they depend on.
  int last = -1;
  for (const TensorRef& r : y_refs) last = std::max(last, r.node);
  std::vector<char> to_y(num_nodes, 0);
  for (const TensorRef& r : y_refs) to_y[r.node] = 1;
  for (int id = last; id >= first; --id)
    if (to_y[id])
      for (const TensorRef& in : nodes[id]->inputs) to_y[in.node] = 1;

  ClearOpNames clear_names(ctx);
  auto scope = name_scope("gradients", loc);

  // Gradients received by each tensor, summed when the tensor's producer is reached.
  absl::flat_hash_map<TensorRef, std::vector<Tensor>> pending;
  for (size_t i = 0; i < ys.size(); ++i) {
    if (!is_floating(ys[i].dtype())) continue;  // integer and bool ys carry no gradient
    Tensor seed;
    if (!grad_ys.empty() && grad_ys[i].defined())
      seed = grad_ys[i].is_symbolic() ? grad_ys[i] : constant(grad_ys[i], absl::StrCat("grad_ys_", i), loc);
    else
      seed = ones_like(ys[i], loc);  // Note [Gradient seeds]
    pending[y_refs[i]].push_back(seed);
  }
  auto take_sum = [&](TensorRef r) -> Tensor {
    auto it = pending.find(r);
    if (it == pending.end()) return Tensor();
    if (it->second.size() > 1) it->second = {sum_of(it->second)};
    return it->second[0];
  };

  for (int id = last; id >= first; --id) {
    if (!from_x[id] || !to_y[id]) continue;
    const Node& node = *nodes[id];
    const int num_outputs = static_cast<int>(node.outputs.size());
    std::vector<Tensor> out_grads(num_outputs);
    bool any = false;
    for (int o = 0; o < num_outputs; ++o) {
      out_grads[o] = take_sum({id, o});
      any = any || out_grads[o].defined();
    }
    if (!any) continue;
    const GradFn fn = gradient_function(node);
    if (fn == nullptr)
      throw NotFoundError(absl::StrCat("[gradients] No gradient is defined for ", describe_node(node),
                                       ", which lies between the ys and the xs. Register one in tape/gradients/, or "
                                       "cut the path with stop_gradient()"),
                          loc);
    std::vector<Tensor> inputs, outputs;
    GradList in_grads;
    for (const TensorRef& r : node.inputs) inputs.push_back(state->tensor(r));
    for (int o = 0; o < num_outputs; ++o) outputs.push_back(state->tensor({id, o}));
    {
      GradScope grad_scope(ctx, node.name);
      for (int o = 0; o < num_outputs; ++o)
        if (!out_grads[o].defined()) out_grads[o] = zeros_like(outputs[o], loc);
      // Only inputs that lead to a source need a gradient (TensorFlow's skip_input_indices).
      uint64_t wanted = 0;
      for (size_t i = 0; i < node.inputs.size() && i < 64; ++i)  // inputs from 64 on are always wanted
        if (reached(node.inputs[i])) wanted |= uint64_t{1} << i;
      GradInputs op{*node.op, inputs, outputs, node.attrs};
      op.wanted = wanted;
      try {
        in_grads = fn(op, out_grads);
      } catch (Error& e) {  // building the gradient failed: say whose gradient, as the tape does
        e.add_context(absl::StrCat("while building the gradient of ", describe_node(node), " asked at ",
                                   format_location(loc)));
        throw;
      }
    }
    for (size_t i = 0; i < inputs.size() && i < in_grads.size(); ++i) {
      const Tensor& g = in_grads[i];
      if (!g.defined() || !reached(node.inputs[i])) continue;
      if (g.dtype() != inputs[i].dtype() || !compatible(g.shape(), inputs[i].shape()))
        throw InternalError(absl::StrCat("[gradients] the gradient function of ", describe_node(node),
                                         " returned dtype ", dtype_name(g.dtype()), " and shape ",
                                         g.shape().to_string(), " for input ", i, ", which has dtype ",
                                         dtype_name(inputs[i].dtype()), " and shape ",
                                         inputs[i].shape().to_string()),
                            loc);
      pending[node.inputs[i]].push_back(g);
    }
  }

  std::vector<Tensor> result(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<Tensor> terms;
    for (const TensorRef& r : source_refs[i])
      if (Tensor g = take_sum(r); g.defined()) terms.push_back(g);
    if (!terms.empty()) {
      result[i] = sum_of(terms);
      continue;
    }
    const Tensor* t = xs[i].tensor();
    const std::string what = t ? describe_tensor(*t) : absl::StrCat("Variable '", xs[i].variable()->name(), "'");
    if (unconnected == Unconnected::kNone) {
      // Note [Unconnected gradients] in eager/tensor.h: empty, but an op given it says whose it is.
      result[i] = Tensor::none_gradient({static_cast<int>(i), what, loc});
      continue;
    }
    if (unconnected == Unconnected::kZero) {
      // Zeros of a known shape need no input (and so no feed); otherwise zeros_like(x).
      const Shape& shape = t ? t->shape() : xs[i].variable()->shape();
      const DType dtype = t ? t->dtype() : xs[i].variable()->dtype();
      result[i] = shape.is_fully_defined() ? zeros(shape, dtype, loc) : zeros_like(*t, loc);
      continue;
    }
    throw InvalidArgumentError(absl::StrCat("[gradients] xs[", i, "] (", what, ") is not connected to the ys",
                                            source_refs[i].empty() ? ": the graph never reads the variable" : ""),
                               loc);
  }
  return result;
}

}  // namespace tapeflow
