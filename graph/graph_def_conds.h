// TensorFlow 1's tf.cond (Switch, Merge) whose predicate is known only when the graph runs,
// rewritten as TensorFlow 2's If over two library functions before import.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "eager/tensor.h"
#include "graph/graph_def.h"
#include "graph/graph_def_v1_functions.h"

namespace tapeflow::graph_def_internal {

// Note [TF1 conds as If]: Note [Control flow v1 in a GraphDef] resolves a tf.cond whose
// predicate is a constant (or a default, or a concrete tensor of input_map) by pruning the branch
// it does not take. A predicate computed from the inputs (x > 0, a Placeholder) is known only
// when the graph runs, and tapeflow's executor has no dead tensors to let Switch and Merge decide
// then; so the import rewrites such a cond as TensorFlow's functionalize pass does:
// - each node gets the branches it is on, a list of (predicate, side) from the outermost cond
//   in: a Switch's output k adds (its predicate, k), a Merge of the two sides of one predicate
//   removes it, any other node is on the longest list among its inputs (a node reading two
//   different branches, or both sides of one, is an error naming it);
// - the deepest conds are rewritten first: the Switches, branch nodes and Merges of one cond
//   (connected through their edges) become an `If` on the Switches' predicate. Its inputs are
//   the Switches' data inputs (the pivot Switch(pred, pred) too: its side is an Identity of
//   the predicate in the branch), `then_branch` the nodes of side 1, `else_branch` those of
//   side 0, each returning its side's input of every Merge; branch nodes nothing reads (an
//   Assert) are control outputs. Each Merge stays under its own name as an Identity of the If's
//   output, so names and return elements outside the cond keep their meaning;
// - outer conds follow, with the inner If among their branch nodes (at most kMaxCondNesting).
//   A cond whose branch holds a TensorFlow 1 while loop waits until the loop is a While, and a
//   cond inside a loop is an If before the loop is rewritten: functionalize_v1_control_flow
//   alternates the two rewrites, innermost first, as TensorFlow's pass does.
// Named after the first Merge's scope ("cond/Merge" -> If "cond", functions "cond_true" and
// "cond_false"; a scope that is no node name gives "cond"). The predicate's value is read the way the resolver reads it: through Identity,
// Snapshot, LogicalNot and PlaceholderWithDefault to a Const or a concrete input_map tensor;
// those conds, and Switches on a loop's LoopCond, are left for the resolver and Note [TF1 while
// loops]. A Merge's output 1 (value_index) read by a node, or a branch node reading an outer
// tensor without a Switch, is an error naming the node.
inline constexpr int kMaxCondNesting = 32;

// One pass: the deepest conds of a run-time predicate in `graph_def` rewritten (those holding a
// while loop wait for Note [TF1 while loops]), their functions added to graph_def's library;
// false when none was. `mapped`: input_map by "name:index"; `names`: shared with the loop rewrite.
absl::StatusOr<bool> rewrite_deepest_v1_conds(GraphDef& graph_def, const std::map<std::string, Tensor>& mapped,
                                              NameAllocator& names);

}  // namespace tapeflow::graph_def_internal
