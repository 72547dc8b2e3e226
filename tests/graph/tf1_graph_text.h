// Pieces of TensorFlow 1.x's text format for hand-written GraphDefs: nodes, and the nodes
// tf.while_loop and tf.cond make, as TensorFlow 1.15 prints them.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tapeflow::tf1_text {

// One node of TensorFlow's text format.
inline std::string node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& attrs = "") {
  std::string ins;
  for (const std::string& in : inputs) absl::StrAppend(&ins, " input: \"", in, "\"");
  return absl::StrCat("node { name: \"", name, "\" op: \"", op, "\"", ins, " ", attrs, " }\n");
}
inline std::string type_attr(const std::string& dtype) { return absl::StrCat("attr { key: \"T\" value { type: ", dtype, " } }"); }
inline std::string enter(const std::string& name, const std::string& input, const std::string& dtype, const std::string& frame,
                  bool constant) {
  return node(name, "Enter", {input},
              absl::StrCat(type_attr(dtype), " attr { key: \"frame_name\" value { s: \"", frame, "\" } }",
                           " attr { key: \"is_constant\" value { b: ", constant ? "true" : "false", " } }",
                           " attr { key: \"parallel_iterations\" value { i: 10 } }"));
}
inline std::string int_const(const std::string& name, int v, const std::string& control = "") {
  return node(name, "Const", control.empty() ? std::vector<std::string>{} : std::vector<std::string>{"^" + control},
              absl::StrCat("attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
                           "dtype: DT_INT32 tensor_shape { } int_val: ", v, " } } }"));
}
// The nodes tf.while_loop makes for loop variable `var` ("", "_1", ...) of the loop under `scope`.
inline std::string loop_var(const std::string& scope, const std::string& var, const std::string& init, const std::string& dtype) {
  const std::string s = scope + "/";
  return enter(s + "Enter" + var, init, dtype, s + "while_context", false) +
         node(s + "Merge" + var, "Merge", {s + "Enter" + var, s + "NextIteration" + var},
              "attr { key: \"N\" value { i: 2 } } " + type_attr(dtype)) +
         node(s + "Switch" + var, "Switch", {s + "Merge" + var, s + "LoopCond"},
              type_attr(dtype) + " attr { key: \"_class\" value { list { s: \"loc:@" + s + "Merge" + var + "\" } } }") +
         node(s + "Identity" + var, "Identity", {s + "Switch" + var + ":1"}, type_attr(dtype)) +
         node(s + "Exit" + var, "Exit", {s + "Switch" + var}, type_attr(dtype));
}
// `text` with the first `from` replaced by `to`.
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("replaced: '" + from + "' is not in the text");
  return text.replace(at, from.size(), to);
}
inline std::string next_iteration(const std::string& scope, const std::string& var, const std::string& value, const std::string& dtype) {
  return node(scope + "/NextIteration" + var, "NextIteration", {value}, type_attr(dtype));
}

// The head TensorFlow 1's tf.cond makes under `scope` for predicate `pred`: the pivot
// Switch(pred, pred), its sides switch_t and switch_f, and pred_id, which the data Switches read.
inline std::string cond_head(const std::string& scope, const std::string& pred) {
  return node(scope + "/Switch", "Switch", {pred, pred}, type_attr("DT_BOOL")) +
         node(scope + "/switch_t", "Identity", {scope + "/Switch:1"}, type_attr("DT_BOOL")) +
         node(scope + "/switch_f", "Identity", {scope + "/Switch"}, type_attr("DT_BOOL")) +
         node(scope + "/pred_id", "Identity", {pred}, type_attr("DT_BOOL"));
}
inline std::string float_const(const std::string& name, float v, const std::string& control = "") {
  return node(name, "Const", control.empty() ? std::vector<std::string>{} : std::vector<std::string>{"^" + control},
              absl::StrCat("attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"value\" value { tensor { "
                           "dtype: DT_FLOAT tensor_shape { } float_val: ", v, " } } }"));
}
inline std::string switch_of(const std::string& name, const std::string& data, const std::string& pred,
                             const std::string& dtype) {
  return node(name, "Switch", {data, pred}, type_attr(dtype));
}
inline std::string merge(const std::string& name, const std::string& false_side, const std::string& true_side,
                         const std::string& dtype) {
  return node(name, "Merge", {false_side, true_side}, "attr { key: \"N\" value { i: 2 } } " + type_attr(dtype));
}

}  // namespace tapeflow::tf1_text
