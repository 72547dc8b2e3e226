// Gradients of If, Case and their Stateless forms (Note [If gradient]).
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "graph/functional_ops.h"
#include "graph/gradients.h"
#include "graph/graph_context.h"
#include "graph/graph_def.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {

// Note [If gradient]
// The gradient of an If is an If on the same condition (of a Case, a Case on the same index):
// each branch recomputes its forward branch on the node's inputs (the body's graph imported into
// the gradient branch under "forward", its arguments mapped to the inputs) and takes gradients()
// of its float results, weighted by the incoming gradients, with respect to the float inputs the
// caller wants. So the branch that ran forward is the one differentiated, with the same gradient
// functions as everywhere else; the price is the branch's forward computed again (TensorFlow
// instead makes the forward node output its intermediates). An input without a gradient gets
// zeros in every branch (branches return alike) and no gradient outside. While has no gradient:
// differentiating a loop needs its iterations' intermediates, which tapeflow does not keep.
//
// The branches' gradient functions, for input 0 (the selector) and the float inputs in `wanted`.
std::vector<BranchFn> branch_gradients(const GradInputs& op, absl::Span<const Tensor> grads, const std::vector<size_t>& wanted,
                                       const std::vector<std::shared_ptr<const FunctionBody>>& bodies) {
  std::vector<BranchFn> out;
  for (const std::shared_ptr<const FunctionBody>& b : bodies) {
    out.push_back(BranchFn([&op, grads, &wanted, body = b] {
      GraphBuildingContext* ctx = current_graph_context();
      const GraphState& forward = *body->graph.state();
      std::map<std::string, Tensor> input_map;
      std::vector<Source> xs;
      for (size_t k = 1; k < op.inputs.size(); ++k) {
        const Tensor arg = identity(op.inputs[k]);  // the input, in the graph being built
        input_map[absl::StrCat(forward.node(body->args[k - 1].node).name, ":0")] = arg;
        if (std::find(wanted.begin(), wanted.end(), k) != wanted.end()) xs.emplace_back(arg);
      }
      std::vector<std::string> returns;
      for (const TensorRef& r : body->results) returns.push_back(absl::StrCat(forward.node(r.node).name, ":", r.index));
      const std::vector<ImportedElement> results =
          import_graph_def(ctx->graph(), to_graph_def(body->graph), input_map, returns, "forward");
      std::vector<Tensor> ys, dys;
      for (size_t k = 0; k < results.size(); ++k) {
        const Tensor& y = std::get<Tensor>(results[k]);
        if (!is_floating(y.dtype()) || !grads[k].defined()) continue;
        ys.push_back(y);
        dys.push_back(identity(grads[k]));
      }
      std::vector<Tensor> g;
      if (!ys.empty()) g = gradients(ys, xs, dys, Unconnected::kZero);
      else
        for (const Source& x : xs) g.push_back(zeros_like(*x.tensor()));
      return g;
    }));
  }
  return out;
}

// If, StatelessIf, Case and StatelessCase.
GradList branches_gradient(const GradInputs& op, absl::Span<const Tensor> grads) {
  GradList out(op.inputs.size());
  if (op.outputs.empty()) return out;
  const Node& node = producer(op.outputs[0]).node();
  const std::vector<std::shared_ptr<const FunctionBody>>& bodies = node.functions();
  std::vector<size_t> wanted;  // the float inputs (after the selector) whose gradient is asked
  for (size_t k = 1; k < op.inputs.size(); ++k)
    if (is_floating(op.inputs[k].dtype()) && op.needs(k)) wanted.push_back(k);
  if (wanted.empty() || bodies.empty()) return out;
  const std::vector<BranchFn> fns = branch_gradients(op, grads, wanted, bodies);
  const Tensor& c = op.inputs[0];
  std::vector<Tensor> g;
  if (node.op == &kCaseOp || node.op == &kStatelessCaseOp) {
    g = switch_case(c, fns, "Case_grad");
  } else {
    if (bodies.size() != 2) return out;
    // TensorFlow's truth value as a bool scalar (an imported If may branch on a number or a tensor).
    const Tensor pred = c.dtype() == DType::kBool && c.shape().rank() == 0 ? c
                        : c.shape().rank() == 0                           ? not_equal(c, zeros_like(c))
                                                                          : greater(size(c), 0);
    g = cond(pred, fns[0], fns[1], "If_grad");
  }
  for (size_t i = 0; i < wanted.size(); ++i) out[wanted[i]] = g[i];
  return out;
}

}  // namespace

void register_functional_gradients() {
  static std::once_flag registered;  // the gradient lives above tape/, so it registers itself
  std::call_once(registered, [] {
    for (const OpDef* op : {&kIfOp, &kStatelessIfOp, &kCaseOp, &kStatelessCaseOp}) register_gradient(op->type, branches_gradient);
  });
}

}  // namespace tapeflow
