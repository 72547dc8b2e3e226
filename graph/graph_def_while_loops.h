// TensorFlow 1's while loops (Enter, Merge, Switch, LoopCond, NextIteration, Exit) in a
// GraphDef, rewritten as TensorFlow 2's While over two library functions before import.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "graph/graph_def.h"
#include "graph/graph_def_v1_functions.h"

namespace tapeflow::graph_def_internal {

// Note [TF1 while loops]: tf.while_loop in TensorFlow 1 is a frame of nodes. Per loop variable
// k: Enter_k (attr frame_name, is_constant false) takes the initial value into the frame,
// Merge_k(Enter_k, NextIteration_k) is the value at the top of each iteration, the condition's
// nodes read the Merges and end in the frame's one LoopCond, Switch_k(Merge_k, LoopCond) sends
// the value to the body (output 1) or out of the loop (output 0, read by Exit_k), and
// NextIteration_k takes the body's new value back to Merge_k. A tensor of the enclosing frame the
// loop only reads comes in through an Enter with is_constant true.
//
// tapeflow's executor has no frames, so the import rewrites each loop as TensorFlow's own
// functionalize pass does, into a `While` node (Note [Functional control flow]):
// - its inputs: the loop variables' initial values (the Enters' inputs), then the values read
//   from outside (the constant Enters' inputs), passed through the body unchanged; the Enters'
//   control inputs become the While's;
// - `cond`: the nodes LoopCond's input depends on, a function of all the inputs (a Merge and a
//   constant Enter read as the argument they stand for);
// - `body`: the frame's other nodes, returning the NextIterations' inputs and the unchanged
//   values from outside (Switch_k:1 and Merge_k read as argument k); body nodes nothing in the
//   loop reads (an Assert, a Print) are its control outputs, so they still run;
// - each Exit_k stays under its own name as an Identity of the While's output k, so names,
//   input_map and return elements outside the loop keep their meaning.
// Named after the frame ("while/while_context" -> node "while", functions "while_cond" and
// "while_body", each uniquified; a frame name that is no node name gives "while"). Loop variables keep their rank and may change dims between
// iterations (a frozen GraphDef does not hold tf.while_loop's shape_invariants), unless the
// Merge carries `_output_shapes`. Nested loops are rewritten innermost first (at most
// kMaxLoopNesting deep). Anything that is not this structure (a loop variable without its
// Switch, two LoopConds, a node reading two frames, an Enter into a frame from another frame than
// its other Enters, Ref variants) is a typed error naming the loop and the node. Conds and loops
// inside each other are rewritten innermost first (Note [TF1 conds as If]).
inline constexpr int kMaxLoopNesting = 32;

// One pass: each innermost loop of `graph_def` (a frame holding no other) rewritten, its
// functions added to graph_def's library; false when it has no loops. `names`: shared with the
// cond rewrite (functionalize_v1_control_flow, graph/graph_def_control_flow.h, runs both).
absl::StatusOr<bool> rewrite_innermost_v1_loops(GraphDef& graph_def, NameAllocator& names);

}  // namespace tapeflow::graph_def_internal
