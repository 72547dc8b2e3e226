// Variable: named, mutable state holding a Tensor (model weights, counters).
//
//   Variable w(random_normal({784, 10}), "w");   // trainable by default
//   Variable step(0, "step", /*trainable=*/false);
//   Tensor y = matmul(x, w) + 1;                  // ops read the variable (Operand)
//   w.assign_sub(0.01f * grad);                   // w := w - 0.01 * grad
//   step.assign_add(1);                           // a plain scalar takes the variable's dtype
//
// A Variable is a cheap handle to shared state: copying it aliases the same variable (as a
// Python reference does). The dtype and shape are fixed at construction; assigning a value
// of another dtype or shape is an InvalidArgumentError naming the variable and both, and
// leaves the value unchanged. assign* replace the stored tensor, so tensors read earlier keep
// their values.
//
// Placement: inside a device scope the initial value is copied to that device; otherwise the
// variable lives where its initial value does. Assigned values are copied to the variable's
// device.
//
// In a graph (while a Graph is the default, or inside a traced function) the same calls build
// nodes: the constructor adds the variable's node and its initializer, read() adds a read and
// returns a symbolic tensor, and assign* add update nodes and return their symbolic result
// (run it, or use it in control_dependencies). Such a variable's value lives in each Session.
//
// Thread-safety: all methods may be called concurrently. read() and assign() are atomic;
// assign_add/assign_sub are atomic read-modify-writes: in place under the lock when nothing
// else holds the value (Note [In-place update] in variable.cc), otherwise computed outside the
// lock and retried if another update landed in between.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "eager/operand.h"
#include "eager/symbolic.h"
#include "eager/tensor.h"

namespace tapeflow {

class Variable {
 public:
  // Throws InvalidArgumentError for an empty or symbolic initial value.
  explicit Variable(const Tensor& initial_value, std::string_view name = "Variable", bool trainable = true,
                    std::source_location loc = std::source_location::current());

  // The current value (a snapshot: later assignments do not change it); in a graph, a read node.
  Tensor read(std::source_location loc = std::source_location::current()) const;
  // Reads implicitly wherever a Tensor is expected: matmul(x, w). Note [Implicit reads]: a
  // conversion operator cannot take the caller's line, so it reads at implicit_read_location();
  // in a graph, that read node then takes the line of the first op that consumes it, the line
  // the user wrote (graph/graph_context.cc).
  operator Tensor() const { return read(implicit_read_location()); }
  static std::source_location implicit_read_location() { return std::source_location::current(); }

  // Replaces the value. value must have the variable's dtype (a plain scalar adopts it) and
  // shape. Returns the new value (in a graph: the update node's symbolic output).
  Tensor assign(const Operand& value, std::source_location loc = std::source_location::current());
  // value + delta and value - delta through the public ops add/sub; delta must have the
  // variable's dtype and broadcast to its shape.
  Tensor assign_add(const Operand& delta, std::source_location loc = std::source_location::current());
  Tensor assign_sub(const Operand& delta, std::source_location loc = std::source_location::current());

  // Runs `write` on the value's own storage under the variable's lock when nothing else holds
  // it (Note [In-place update]) and returns true; returns false, running nothing, otherwise.
  // `write` must keep the dtype and shape and must not fail part-way. For runtimes that fold an
  // update into one kernel (the graph executor's MatMul update, graph/matmul_update_fusion.cc).
  bool write_in_place(absl::FunctionRef<void(DeviceTensor& value)> write);

  // Replaces the value with `desired` when the stored value is still `expected` (the same
  // tensor, not merely equal values) and returns true; returns false, changing nothing,
  // otherwise. desired must have the variable's dtype and shape (InvalidArgumentError). For
  // runtimes that compute an update outside the lock (the graph executor's commit).
  bool compare_and_set(const Tensor& expected, const Tensor& desired,
                       std::source_location loc = std::source_location::current());

  // Set for a variable created while building a graph: its nodes there (null for eager ones).
  const GraphVariableInfo* graph_info() const;
  // The value a graph variable's initializer assigns (symbolic or concrete); for an eager
  // variable, its current value.
  Tensor initial_value() const;

  const std::string& name() const;
  bool trainable() const;
  DType dtype() const;
  const Shape& shape() const;
  Device* device() const;
  // Where the variable was created, for diagnostics.
  const std::source_location& created_at() const;
  // Unique per variable; copies of one handle share it.
  int64_t id() const;

  // "<tapeflow.Variable 'w' tapeflow.Tensor([1 2], shape=(2), dtype=float32)>"
  std::string to_string() const;

 private:
  struct State;
  template <typename Compute>
  Tensor update(const char* api, const Operand& delta, Compute compute, std::source_location loc);

  std::shared_ptr<State> state_;
};

std::ostream& operator<<(std::ostream& os, const Variable& v);

}  // namespace tapeflow
