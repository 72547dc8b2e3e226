// Gradients of If, Case, While and their Stateless forms (Note [If gradient], Note [While gradient]).
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "eager/ops/reduction.h"
#include "graph/functional_ops.h"
#include "graph/gradients.h"
#include "graph/graph_context.h"
#include "graph/graph_def.h"
#include "graph/graph_ops.h"
#include "graph/scopes.h"
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
// zeros in every branch (branches return alike) and no gradient outside. While: Note [While
// gradient].

// TensorFlow's truth value as a bool scalar (an imported If or While may decide on a number or a
// tensor).
Tensor truth(const Tensor& c) {
  return c.dtype() == DType::kBool && c.shape().rank() == 0 ? c
         : c.shape().rank() == 0                           ? not_equal(c, zeros_like(c))
                                                           : greater(size(c), 0);
}

// A body's results on `values`, its graph imported where the graph is being built.
std::vector<Tensor> run_body(const FunctionBody& body, const std::vector<Tensor>& values) {
  GraphBuildingContext* ctx = current_graph_context();
  const GraphState& g = *body.graph.state();
  std::map<std::string, Tensor> input_map;
  for (size_t k = 0; k < values.size(); ++k) input_map[absl::StrCat(g.node(body.args[k].node).name, ":0")] = values[k];
  std::vector<std::string> returns;
  for (const TensorRef& r : body.results) returns.push_back(absl::StrCat(g.node(r.node).name, ":", r.index));
  const std::vector<ImportedElement> imported = import_graph_def(ctx->graph(), to_graph_def(body.graph), input_map, returns, "forward");
  std::vector<Tensor> out;
  for (size_t j = 0; j < body.results.size(); ++j) {
    // A result that is an argument is its value (the import returns the placeholder it replaced).
    const auto arg = std::find_if(body.args.begin(), body.args.end(), [&](const TensorRef& a) { return a.node == body.results[j].node; });
    out.push_back(arg != body.args.end() ? values[static_cast<size_t>(arg - body.args.begin())] : std::get<Tensor>(imported[j]));
  }
  return out;
}

// The gradients recompute a body, so a body whose values a second run would not repeat (a random
// op draws new numbers) would be differentiated at other values than those it computed: such a
// body is refused, naming the node. Prints and asserts only run again.
void refuse_unrepeatable(const FunctionBody& body, const Node& node, int depth = 0) {
  const GraphState& g = *body.graph.state();
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (is_functional_op(n.op)) {
      if (depth < 64)
        for (const std::shared_ptr<const FunctionBody>& inner : n.functions()) refuse_unrepeatable(*inner, node, depth + 1);
      continue;
    }
    if (!n.op->stateful || n.op == &kPlaceholderOp || n.op == &kNoOp || n.op == &kPrintOp || n.op == &kAssertOp) continue;
    throw UnimplementedError(absl::StrCat("[gradients] node '", n.name, "' (", n.op->type, ") in function '", body.name,
                                          "' of node '", node.name, "' (", node.op->type, ") would compute other values "
                                          "when the gradient runs the function again (Note [If gradient]); tapeflow "
                                          "differentiates control flow whose functions have no random or stateful ops"));
  }
}

// The node's functions: `count` of them (0: at least one). The builders and the importer make
// them so; anything else is a bug, not a silent zero gradient.
const std::vector<std::shared_ptr<const FunctionBody>>& functions_of(const Node& node, size_t count) {
  const std::vector<std::shared_ptr<const FunctionBody>>& bodies = node.functions();
  if (count == 0 ? bodies.empty() : bodies.size() != count)
    throw InternalError(absl::StrCat("[gradients] node '", node.name, "' (", node.op->type, ") runs ", bodies.size(),
                                     " functions, not ", count == 0 ? std::string("at least one") : std::to_string(count)));
  return bodies;
}

// The branches' gradient functions, for the float inputs in `wanted` (input 0 is the selector).
std::vector<BranchFn> branch_gradients(const GradInputs& op, absl::Span<const Tensor> grads, const std::vector<size_t>& wanted,
                                       const std::vector<std::shared_ptr<const FunctionBody>>& bodies) {
  std::vector<BranchFn> out;
  for (const std::shared_ptr<const FunctionBody>& b : bodies) {
    out.push_back(BranchFn([&op, grads, &wanted, body = b] {
      std::vector<Tensor> args;  // the inputs, in the graph being built
      std::vector<Source> xs;
      for (size_t k = 1; k < op.inputs.size(); ++k) {
        args.push_back(identity(op.inputs[k]));
        if (std::find(wanted.begin(), wanted.end(), k) != wanted.end()) xs.emplace_back(args.back());
      }
      const std::vector<Tensor> results = run_body(*body, args);
      std::vector<Tensor> ys, dys;
      for (size_t k = 0; k < results.size(); ++k) {
        if (!is_floating(results[k].dtype()) || !grads[k].defined()) continue;
        ys.push_back(results[k]);
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

// Note [While gradient]
// A While's gradient runs the loop again, stacking each iteration's loop variables (history[k]
// holds x_0 ... x_n of variable k, n the iterations), then a second loop from the last iteration
// to the first: at iteration i it recomputes the body on x_i and takes gradients() of its float
// results, weighted by the gradients so far, with respect to its float arguments. What the loop
// reads unchanged (a capture, passed through as a loop variable) has no history (it is the input
// at every iteration) and collects its gradient through the body's identity for it. The price is
// the forward loop twice and the body once more per iteration, and memory for every iteration's
// changing variables, each iteration copying the history so far (TensorFlow keeps the
// intermediates in stacks instead); a body's prints and asserts run again. Not differentiated,
// with a typed error: a loop variable that changes shape between iterations (when it runs), and
// a body with random or other stateful ops (refuse_unrepeatable).
GradList while_gradient(const GradInputs& op, absl::Span<const Tensor> grads) {
  GradList out(op.inputs.size());
  if (op.outputs.empty()) return out;
  const Node& node = producer(op.outputs[0]).node();
  const size_t m = op.inputs.size();
  std::vector<size_t> floats;  // the float loop variables
  bool wanted = false;
  for (size_t k = 0; k < m; ++k)
    if (is_floating(op.inputs[k].dtype())) {
      floats.push_back(k);
      wanted = wanted || op.needs(k);
    }
  if (!wanted) return out;
  const std::vector<std::shared_ptr<const FunctionBody>>& bodies = functions_of(node, 2);
  const FunctionBody& cond_body = *bodies[0];
  const FunctionBody& body = *bodies[1];
  refuse_unrepeatable(cond_body, node);
  refuse_unrepeatable(body, node);
  auto vars = [m](const std::vector<Tensor>& v, size_t from) {
    return std::vector<Tensor>(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(from + m));
  };
  // The variables the body changes get a history; one it returns unchanged (a capture, a limit)
  // is its input at every iteration.
  std::vector<size_t> changing;
  for (size_t k = 0; k < m; ++k)
    if (!(k < body.results.size() && k < body.args.size() && body.results[k] == body.args[k])) changing.push_back(k);
  // 1. The loop again: [count, x..., history of each changing variable...].
  std::vector<Tensor> init{Tensor(int32_t{0})};
  std::vector<Shape> invariants{Shape{}};
  for (size_t k = 0; k < m; ++k) {
    init.push_back(op.inputs[k]);
    invariants.push_back(node.outputs[k].shape);
  }
  for (size_t k : changing) {
    init.push_back(expand_dims(op.inputs[k], 0));
    Shape stacked{-1};
    for (int d = 0; d < node.outputs[k].shape.rank(); ++d) stacked.push_back(node.outputs[k].shape.dim(d));
    invariants.push_back(stacked);
  }
  const std::vector<Tensor> forward = while_loop(
      [&](const std::vector<Tensor>& v) { return truth(run_body(cond_body, vars(v, 1))[0]); },
      [&](const std::vector<Tensor>& v) {
        const std::vector<Tensor> x = run_body(body, vars(v, 1));
        std::vector<Tensor> next{v[0] + 1};
        next.insert(next.end(), x.begin(), x.end());
        for (size_t h = 0; h < changing.size(); ++h) {
          const size_t k = changing[h];
          const Tensor& history = v[1 + m + h];
          if (node.outputs[k].shape.is_fully_defined()) {
            next.push_back(concat({history, expand_dims(x[k], 0)}, 0));
            continue;
          }
          // The history stacks values of one shape: a variable that changes shape is refused when it runs.
          const Operation same = assert_that(reduce_all(equal(shape(x[k]), shape(v[1 + k]))), {shape(v[1 + k]), shape(x[k])},
                                             absl::StrCat("the gradient of ", node.op->type, " '", node.name, "' needs loop "
                                                          "variable ", k, " to keep its shape between iterations (Note "
                                                          "[While gradient]); it went from"),
                                             -1);
          auto after = control_dependencies({same});
          next.push_back(concat({history, expand_dims(x[k], 0)}, 0));
        }
        return next;
      },
      init, {.name = "While_grad_forward", .shape_invariants = invariants});
  // 2. Back from the last iteration: [i, g...] for the float variables.
  std::vector<Tensor> back_init{forward[0]};
  std::vector<Shape> back_invariants{Shape{}};
  for (size_t k : floats) {
    back_init.push_back(grads[k].defined() ? grads[k] : zeros_like(op.outputs[k]));
    back_invariants.push_back(node.outputs[k].shape);
  }
  const std::vector<Tensor> back = while_loop(
      [](const std::vector<Tensor>& v) { return greater(v[0], 0); },
      [&](const std::vector<Tensor>& v) {
        const Tensor i = v[0] - 1;
        std::vector<Tensor> x;
        std::vector<Source> xs;
        for (size_t k = 0, h = 0; k < m; ++k) {  // x_i, the input of iteration i
          const bool changes = h < changing.size() && changing[h] == k;
          x.push_back(identity(changes ? gather(forward[1 + m + h++], i) : op.inputs[k]));
          if (is_floating(x.back().dtype())) xs.emplace_back(x.back());
        }
        const std::vector<Tensor> y = run_body(body, x);
        std::vector<Tensor> ys, dys;
        for (size_t j = 0; j < floats.size(); ++j) {
          ys.push_back(y[floats[j]]);
          dys.push_back(v[1 + j]);
        }
        std::vector<Tensor> next{i};
        for (const Tensor& g : gradients(ys, xs, dys, Unconnected::kZero)) next.push_back(g);
        return next;
      },
      back_init, {.name = "While_grad", .shape_invariants = back_invariants});
  for (size_t j = 0; j < floats.size(); ++j)
    if (op.needs(floats[j])) out[floats[j]] = back[1 + j];
  return out;
}

// If, StatelessIf, Case and StatelessCase.
GradList branches_gradient(const GradInputs& op, absl::Span<const Tensor> grads) {
  GradList out(op.inputs.size());
  if (op.outputs.empty()) return out;
  const Node& node = producer(op.outputs[0]).node();
  std::vector<size_t> wanted;  // the float inputs (after the selector) whose gradient is asked
  for (size_t k = 1; k < op.inputs.size(); ++k)
    if (is_floating(op.inputs[k].dtype()) && op.needs(k)) wanted.push_back(k);
  if (wanted.empty()) return out;
  const bool is_case = node.op == &kCaseOp || node.op == &kStatelessCaseOp;
  const std::vector<std::shared_ptr<const FunctionBody>>& bodies = functions_of(node, is_case ? 0 : 2);
  for (const std::shared_ptr<const FunctionBody>& b : bodies) refuse_unrepeatable(*b, node);
  const std::vector<BranchFn> fns = branch_gradients(op, grads, wanted, bodies);
  const Tensor& c = op.inputs[0];
  std::vector<Tensor> g;
  if (is_case) g = switch_case(c, fns, "Case_grad");
  else g = cond(truth(c), fns[0], fns[1], "If_grad");
  for (size_t i = 0; i < wanted.size(); ++i) out[wanted[i]] = g[i];
  return out;
}

}  // namespace

void register_functional_gradients() {
  static std::once_flag registered;  // the gradient lives above tape/, so it registers itself
  std::call_once(registered, [] {
    for (const OpDef* op : {&kIfOp, &kStatelessIfOp, &kCaseOp, &kStatelessCaseOp}) register_gradient(op->type, branches_gradient);
    register_gradient(kWhileOp.type, while_gradient);
    register_gradient(kStatelessWhileOp.type, while_gradient);
  });
}

}  // namespace tapeflow
