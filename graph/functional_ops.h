// Control flow whose choice is made at run time: cond and while_loop (TensorFlow's tf.cond and
// tf.while_loop), and the nodes they build, TensorFlow 2's If (StatelessIf), While
// (StatelessWhile) and Case (StatelessCase), which run functions chosen or repeated at run time.
//
//   Tensor y = cond(greater(reduce_sum(x), 0.f), [&] { return x * 2.f; }, [&] { return x - 1.f; });
//   std::vector<Tensor> r = while_loop(
//       [](const std::vector<Tensor>& v) { return less(v[0], 10); },
//       [](const std::vector<Tensor>& v) { return std::vector<Tensor>{v[0] + 1, v[1] * 2.f}; },
//       {Tensor(0), x});
//
// Eagerly they run the chosen function now (the tape records its ops). In a graph or a traced
// function they trace each function into a body of its own (Note [Functional control flow]):
// the tensors of the graph around it that a body uses become extra arguments, and a variable it
// reads is read in the graph around it, once, before the node, and passed in (so a body has no
// variables; updating one inside is an UnimplementedError). A call that fails leaves the graph
// around it as it was (Note [Reads after the trace], functional_ops.cc). The node runs one branch, or the
// loop, when a Session runs it. import_graph_def reads the same nodes from TensorFlow's
// GraphDefs; to_graph_def writes them, with their functions in the library.
//
//   // A frozen TensorFlow 2 model whose tf.function had `if tf.reduce_sum(x) > 0:` or a
//   // tf.while_loop: its GraphDef holds StatelessIf / StatelessWhile nodes and a library.
//   Graph g = graph_from_graph_def(read_graph_def("model.pb"));
//   Session sess(g);
//   sess.run(g.get_tensor_by_name("Identity:0"), {{g.get_tensor_by_name("x:0"), x}});
//
// Note [Functional control flow]
// - Each function a node runs is a FunctionBody: a graph of its own whose argument Placeholders
//   have the node's input dtypes and shapes (a While's: its loop variables' shapes, from
//   output_shapes where TensorFlow wrote them) and whose results are the function's.
//   import_graph_def builds one from a FunctionDef (the call inlined into that graph, Note
//   [Inlined function calls]; one body per function, attrs and argument specs, reused); cond and
//   while_loop trace one from a C++ function. A function that runs itself, bodies nested deeper
//   than kMaxFunctionNesting (counted through reused bodies), or more than kMaxFunctionNodes
//   nodes or kMaxFunctionBytes bytes of bodies in one import are errors before the graph changes.
// - A Session compiles each body once per plan into a plan of its own (shared by every node that
//   runs it) and runs it sequentially inside the node's step; a body's random ops keep their own
//   counters in the Session. If runs then_branch when its condition is true (TensorFlow's rule:
//   a scalar is true when nonzero, any other tensor when it has elements), Case branches[i] (the
//   last one when i is out of range), While its body while cond is true. Each body's arguments,
//   each iteration's values and the results are checked against their dtypes and shapes; the
//   run's RunOptions::timeout_in_ms holds inside bodies and between iterations (a loop from an
//   untrusted graph need not end).
// - Variables are not passed into bodies (TensorFlow passes resource handles; a frozen graph has
//   none): an imported DT_RESOURCE argument or variable op in a body is an UnimplementedError; a
//   traced body's variable reads happen before the node (above).
// - A body with side effects (Print, Assert) makes a stateful If / While, which runs even when
//   nothing reads it; otherwise the node is StatelessIf / StatelessWhile.
// - Graph gradients through If and Case recompute the branch that ran (Note [If gradient]);
//   through While, the loop runs again keeping each iteration's variables and a second loop
//   goes back over them (Note [While gradient]). Eagerly the tape differentiates the functions
//   that ran.
#pragma once

#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "graph/graph.h"

namespace tapeflow {

// TensorFlow's six types, each its own op as in TensorFlow (the Stateless ones promise their
// functions have no side effects; tapeflow runs both alike).
extern OpDef kIfOp;              // "If": then_branch or else_branch on inputs 1...
extern OpDef kStatelessIfOp;     // "StatelessIf"
extern OpDef kWhileOp;           // "While": body while cond, on the loop variables
extern OpDef kStatelessWhileOp;  // "StatelessWhile"
extern OpDef kCaseOp;            // "Case": branches[input 0] on inputs 1...
extern OpDef kStatelessCaseOp;   // "StatelessCase"

enum class FunctionalKind { kNone, kIf, kWhile, kCase };
FunctionalKind functional_kind(const OpDef* op);
inline bool is_functional_op(const OpDef* op) { return functional_kind(op) != FunctionalKind::kNone; }
// The functional op of this type, or null.
const OpDef* find_functional_op(std::string_view type);

inline constexpr int kMaxFunctionNesting = 32;
inline constexpr int64_t kMaxFunctionNodes = 1'000'000;
inline constexpr int64_t kMaxFunctionBytes = int64_t{1} << 30;  // of the bodies' NodeDefs, in all

struct FunctionDefSource;  // graph/graph_def_functional.h

// One function a functional node runs, as a graph (Note [Functional control flow]).
struct FunctionBody {
  std::string name;                 // the function's name (in a GraphDef's library)
  Graph graph;
  std::vector<TensorRef> args;      // the argument Placeholders, in order
  std::vector<TensorRef> results;   // the results, in order
  int call = -1;                    // the node that waits for its side effects: run it (-1: none)
  // The FunctionDef it was imported from (null for a body tapeflow traced), for to_graph_def.
  std::shared_ptr<const FunctionDefSource> source;
};
// The specs of a body's arguments and of its results, in order.
std::vector<TensorSpec> arg_specs(const FunctionBody& body);
std::vector<TensorSpec> result_specs(const FunctionBody& body);

// ---- the API ----

using BranchFn = std::function<std::vector<Tensor>()>;
// tf.cond: true_fn() when pred (a bool scalar) is true, else false_fn(). Both return the same
// number of tensors with the same dtypes (an InvalidArgumentError otherwise); in a graph, an
// output's shape is what both branches agree on (-1 where their dims differ). `name` names the
// node (under the current name scope).
std::vector<Tensor> cond(const Tensor& pred, const BranchFn& true_fn, const BranchFn& false_fn,
                         std::string_view name = "cond", std::source_location loc = std::source_location::current());
// The same for branches that return one Tensor.
template <typename TrueFn, typename FalseFn>
  requires std::is_convertible_v<std::invoke_result_t<TrueFn&>, Tensor> &&
           std::is_convertible_v<std::invoke_result_t<FalseFn&>, Tensor>
Tensor cond(const Tensor& pred, TrueFn&& true_fn, FalseFn&& false_fn, std::string_view name = "cond",
            std::source_location loc = std::source_location::current()) {
  return cond(pred, BranchFn([&] { return std::vector<Tensor>{Tensor(true_fn())}; }),
              BranchFn([&] { return std::vector<Tensor>{Tensor(false_fn())}; }), name, loc)[0];
}

// tf.switch_case: branch_fns[index]() for an int32 scalar index; an index out of range runs the
// last branch (TensorFlow's default). Every branch returns as many tensors of the same dtypes
// and ranks, as cond's do; in a graph the node is TensorFlow's Case (StatelessCase).
std::vector<Tensor> switch_case(const Tensor& index, const std::vector<BranchFn>& branch_fns,
                                std::string_view name = "switch_case",
                                std::source_location loc = std::source_location::current());

struct WhileOptions {
  std::string name = "while";
  // At most this many iterations (TensorFlow's maximum_iterations); -1: no limit.
  int64_t maximum_iterations = -1;
  // In a graph: the shape each loop variable keeps (-1 where a dim may change between
  // iterations); empty: the loop variables' own shapes.
  std::vector<Shape> shape_invariants = {};
};
using LoopCondFn = std::function<Tensor(const std::vector<Tensor>&)>;
using LoopBodyFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
// tf.while_loop: while cond_fn(vars) (a bool scalar) is true, vars = body_fn(vars); returns vars.
// body_fn returns as many tensors as it takes, with the same dtypes and shapes (or shapes that
// fit shape_invariants).
std::vector<Tensor> while_loop(const LoopCondFn& cond_fn, const LoopBodyFn& body_fn, std::vector<Tensor> loop_vars,
                               const WhileOptions& options = {},
                               std::source_location loc = std::source_location::current());

// Registers the gradients of If, Case, While and their Stateless forms
// (graph/functional_gradient.cc, Note [If gradient], Note [While gradient]); building any such
// node calls it, as does import_graph_def.
void register_functional_gradients();

// TensorFlow's truth value of If's condition and While's cond result.
bool truth_value(const Tensor& t);
// Case's branch for `index` (a scalar int32) among `branches`: the last one when out of range.
int case_branch(const Tensor& index, int branches);

}  // namespace tapeflow
