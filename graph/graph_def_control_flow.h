// TensorFlow 1's control flow (Switch, Merge: tf.cond, Keras' learning phase) in a GraphDef,
// resolved while importing when its predicates are constants.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "eager/tensor.h"
#include "proto/graph.pb.h"

namespace tapeflow::graph_def_internal {

// Note [Control flow v1 in a GraphDef]: TensorFlow 1's tf.cond is a Switch per tensor the
// branches read (output 0 goes to the false branch, output 1 to the true one; the other output
// is "dead"), the branches, and a Merge that forwards whichever input is alive. Every node with
// a dead input (data or control) is dead too, except Merge. Frozen Keras models carry them for
// the learning phase (BatchNormalization, Dropout: `keras_learning_phase`, a
// PlaceholderWithDefault of false).
//
// tapeflow's executor has no dead tensors, so the import resolves them, as Grappler does for a
// constant predicate: where each Switch's predicate is a constant (a Const, a concrete tensor of
// input_map, or the default of a PlaceholderWithDefault, through Identity and LogicalNot), the
// branch it does not take is pruned, each Switch becomes an Identity of its data input (under its
// name, so "cond/Switch:1" reads "cond/Switch:0"), and each Merge an Identity of its live input
// (its output 1, value_index, a Const "<merge>/value_index"). What is left imports as usual.
// - A PlaceholderWithDefault whose default chose a branch may not be fed afterwards (the
//   choice is made): Session::run refuses it and says how to import the other branch
//   (input_map={"keras_learning_phase:0": Tensor(true)}).
// - A predicate known only when the graph runs is read in one case, tf.Assert's AssertGuard,
//   where running both branches is what the graph means (Note [Assert guards],
//   graph_def_control_flow.cc); otherwise it is a typed error naming the Switch, as are a while
//   loop (Enter, Exit, NextIteration, LoopCond), a Merge of more than one live input that is not
//   such a guard's join, and a return element on a pruned branch.
// - The same rewrite gives each Assert its DT_STRING data (a dtype tapeflow has not) as attrs
//   (assert_that, graph/graph_ops.h); the DT_STRING Consts only Asserts read are left out.
// The import runs the rewrite only when its plain plan failed on one of these.
// Switch, Merge, and a while loop's Enter, Exit, NextIteration, LoopCond (Note [TF1 while loops]).
bool is_v1_control_flow_type(std::string_view op_type);

struct ResolvedControlFlow {
  proto::GraphDef graph_def;                   // no Switch or Merge, the dead branches pruned
  // The caller's, renamed as the nodes are ("cond/Switch:1" is "cond/Switch:0"); input_map
  // keys of pruned tensors are dropped, return elements on them are an error.
  std::map<std::string, Tensor> input_map;
  std::vector<std::string> return_elements;
  struct DecidedByDefault {
    std::string tensor;  // "keras_learning_phase:0"
    std::string why;     // prevent_feeding's reason
  };
  std::vector<DecidedByDefault> decided_by_default;
};

// What the resolver cannot read, rewritten into functions: each tf.cond of a run-time predicate
// as an If (Note [TF1 conds as If]), then each while loop as a While (Note [TF1 while loops]).
// The result's library is `library` plus their functions; nullopt when there is neither.
absl::StatusOr<std::optional<proto::GraphDef>> functionalize_v1_control_flow(const proto::GraphDef& graph_def,
                                                                            const proto::FunctionDefLibrary& library,
                                                                            const std::map<std::string, Tensor>& input_map);

absl::StatusOr<ResolvedControlFlow> resolve_v1_control_flow(const proto::GraphDef& graph_def,
                                                           const std::map<std::string, Tensor>& input_map,
                                                           const std::vector<std::string>& return_elements);

}  // namespace tapeflow::graph_def_internal
