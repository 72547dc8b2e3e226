// Ops that exist for graphs: placeholders, named constants, no-ops and groups, print, and the
// variable ops. Their OpDefs sit here (graph layer); the executor runs them itself because
// they touch feeds, constants and per-Session variable state rather than a device kernel.
//
//   auto scope = g.as_default();
//   Tensor x = placeholder(DType::kFloat32, {-1, 784}, "x");   // batch size fed later
//   Tensor c = constant(Tensor(42.0f), "answer");              // node "answer"
//   Operation step = group({train_a, train_b}, "train");       // one target for both
#pragma once

#include <source_location>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include "eager/op_def.h"
#include "graph/graph.h"

namespace tapeflow {

extern OpDef kPlaceholderOp;       // "Placeholder": a value fed at run time
extern OpDef kConstOp;             // "Const": node.value
extern OpDef kNoOp;                // "NoOp": runs its control inputs
extern OpDef kPrintOp;             // "Print": prints its inputs, outputs input 0
extern OpDef kAssertOp;            // "Assert": fails the run when input 0 is false; no outputs
extern OpDef kVarHandleOp;         // "VarHandleOp": the variable itself (node.variable)
extern OpDef kReadVariableOp;      // "ReadVariableOp": the variable's value
extern OpDef kAssignVariableOp;    // "AssignVariableOp": stores input 0, outputs it
extern OpDef kAssignAddVariableOp; // "AssignAddVariableOp": value + input 0
extern OpDef kAssignSubVariableOp; // "AssignSubVariableOp": value - input 0

// The graph-only op of this type, or null.
const OpDef* find_graph_op(std::string_view type);
// Any op type: graph-only ops, then the OpRegistry.
const OpDef* find_any_op(std::string_view type);

// A value to be fed at run time (FailedPrecondition outside a graph). Unknown dims are -1.
Tensor placeholder(DType dtype, const Shape& shape, std::string_view name = "Placeholder",
                   std::source_location loc = std::source_location::current());
// In a graph: a Const node holding `value` (its buffer is shared, not copied). Eagerly:
// `value` itself.
Tensor constant(const Tensor& value, std::string_view name = "Const",
                std::source_location loc = std::source_location::current());
// An op that does nothing; with control inputs, it runs them.
Operation no_op(std::string_view name = "NoOp", std::source_location loc = std::source_location::current());
// A NoOp that depends on every op given (the producers of tensors may be passed as ops).
Operation group(const std::vector<Operation>& ops, std::string_view name = "group_deps",
                std::source_location loc = std::source_location::current());
// Prints `message` and the values of `data` each time it runs (to stderr, as tf.print), and
// returns `x` unchanged; in a graph it is a side effect that runs on every Session::run that
// needs its output. Eagerly it prints at once.
Tensor print(const Tensor& x, const std::vector<Tensor>& data, std::string_view message = "",
             std::source_location loc = std::source_location::current());

// TensorFlow's tf.debugging.Assert: when `condition` (one bool) is false, an InvalidArgumentError
// "assertion failed: [message] [1 2 3]", each item of `data` summarized by its first `summarize`
// values (all when negative) as TensorFlow prints them: nested by rank ("[[1 2][3 4]]"), floats
// in the fewest digits that read back, "..." where cut. Eagerly it checks at once and returns an undefined Operation. In a graph it adds an
// Assert node, with no outputs, that a Session runs where something depends on it (a target, or
// a control input: `auto deps = control_dependencies({check});`); a traced function runs it on
// every call. In a GraphDef it is TensorFlow's Assert, its message a DT_STRING Const.
Operation assert_that(const Tensor& condition, const std::vector<Tensor>& data, std::string_view message = "",
                      int64_t summarize = 3, std::string_view name = "Assert",
                      std::source_location loc = std::source_location::current());

namespace graph_ops_internal {
// An Assert's text items (TensorFlow's DT_STRING data) in attr "texts", each "<length>:<bytes>",
// at the data positions of attr "text_positions".
std::string encode_texts(const std::vector<std::string>& texts);
absl::StatusOr<std::vector<std::string>> decode_texts(std::string_view encoded);
// "assertion failed: [...] [...]" for an Assert's attrs and its data tensors (inputs 1...).
std::string assertion_message(const AttrMap& attrs, absl::Span<const Tensor> data);
}  // namespace graph_ops_internal

}  // namespace tapeflow
