// TensorFlow 2's control flow over functions: If (StatelessIf), While (StatelessWhile) and Case
// (StatelessCase) nodes run functions of a GraphDef's library, chosen or repeated at run time.
// import_graph_def reads them (Note [Functional control flow]); a Session runs them; to_graph_def
// writes them back with the functions they run.
//
//   // A frozen TensorFlow 2 model whose tf.function had `if tf.reduce_sum(x) > 0:` or a
//   // tf.while_loop: its GraphDef holds StatelessIf / StatelessWhile nodes and a library.
//   Graph g = graph_from_graph_def(read_graph_def("model.pb"));
//   Session sess(g);
//   sess.run(g.get_tensor_by_name("Identity:0"), {{g.get_tensor_by_name("x:0"), x}});
//
// Note [Functional control flow]
// - Each function a node runs is a FunctionBody: the function imported into a graph of its own,
//   its arguments Placeholders with the node's input dtypes and shapes (a While's: its loop
//   variables' shapes, from output_shapes where TensorFlow wrote them), its results the
//   IdentityN that inlining a call leaves (Note [Inlined function calls]). Nested If / While
//   nodes in a body get bodies of their own; a function that runs itself, nesting deeper than
//   kMaxFunctionNesting, or bodies of more than kMaxFunctionNodes nodes in all, are errors.
// - A Session compiles each body into a plan of its own and runs it sequentially inside the
//   node's step, with per-plan random counters. If runs then_branch when its condition is true
//   (TensorFlow's rule: a scalar is true when nonzero or a non-empty string, any other tensor
//   when it has elements), Case branches[i] (the last one when i is out of range), While its
//   body while cond is true, checking each iteration's values against the loop variables'
//   dtypes and shapes and the run's RunOptions::timeout_in_ms (a loop from an untrusted graph
//   need not end).
// - Variables are not passed into bodies (TensorFlow passes resource handles; a frozen graph
//   has none): a DT_RESOURCE argument, or a variable op in a body, is an UnimplementedError.
// - The tape does not differentiate these nodes: they come from inference graphs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "proto/graph.pb.h"

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

// One function a functional node runs, imported as a graph (Note [Functional control flow]).
struct FunctionBody {
  proto::NameAttrList func;         // the function's name and attr values, as the node named it
  Graph graph;
  std::vector<TensorRef> args;      // the argument Placeholders, in order
  std::vector<TensorRef> results;   // the results, in order
  int call = -1;                    // the node holding the results and control_rets: run it
  // The library the function came from (one per import, shared), for to_graph_def.
  std::shared_ptr<const proto::FunctionDefLibrary> library;
};

// TensorFlow's truth value of If's condition and While's cond result.
bool truth_value(const Tensor& t);
// Case's branch for `index` (a scalar int32) among `branches`: the last one when out of range.
int case_branch(const Tensor& index, int branches);

}  // namespace tapeflow
