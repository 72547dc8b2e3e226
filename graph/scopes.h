// Graph-building scopes, as RAII guards where Python has `with` blocks:
//
//   {
//     auto outer = name_scope("outer");        // ops: "outer/c", scopes: "outer/inner"
//     auto n = op_name("answer");              // ops made here are named "answer", "answer_1"...
//     auto deps = control_dependencies({update});  // ops made here run after `update`
//     auto c = container("exp1");              // variables made here live in container "exp1"
//   }
//
// While no graph is being built (eager execution) they do nothing, as in TensorFlow 2.
// (Device scopes are eager's: tapeflow::device("/job:ps/task:0") records a requested device
// on each node built inside it.)
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "graph/graph.h"

namespace tapeflow {

class GraphBuildingContext;

class NameScope {
 public:
  NameScope(std::string_view name, std::source_location loc);
  ~NameScope();
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;
  // The scope's full, uniquified name ("outer/inner_1"); "" outside a graph.
  const std::string& name() const { return scope_; }

 private:
  GraphBuildingContext* ctx_ = nullptr;
  std::string previous_;
  std::string scope_;
};

// Opens name scope `name` (uniquified: a second "inner" in one scope is "inner_1"). A name
// ending in "/" re-enters that exact scope; "" returns to the top level.
[[nodiscard]] NameScope name_scope(std::string_view name, std::source_location loc = std::source_location::current());

class OpNameScope {
 public:
  OpNameScope(std::string_view name);
  ~OpNameScope();
  OpNameScope(const OpNameScope&) = delete;
  OpNameScope& operator=(const OpNameScope&) = delete;

 private:
  GraphBuildingContext* ctx_ = nullptr;
};

// Names the ops created while alive (TensorFlow's `name=` argument): one op gets exactly
// `name` (uniquified); several get name, name_1, ...
[[nodiscard]] OpNameScope op_name(std::string_view name);

// What control_dependencies accepts: an operation or a tensor (its producing operation).
class ControlInput {
 public:
  ControlInput(const Operation& op) : op_(op) {}
  ControlInput(const Tensor& t) : tensor_(t) {}
  Operation op(std::source_location loc) const;

 private:
  Operation op_;
  Tensor tensor_;
};

class ControlDependencies {
 public:
  ControlDependencies(const std::vector<ControlInput>& inputs, std::source_location loc);
  ~ControlDependencies();
  ControlDependencies(const ControlDependencies&) = delete;
  ControlDependencies& operator=(const ControlDependencies&) = delete;

 private:
  GraphBuildingContext* ctx_ = nullptr;
};

// Ops created while alive run only after every op in `inputs` (nested scopes add up).
[[nodiscard]] ControlDependencies control_dependencies(
    const std::vector<ControlInput>& inputs, std::source_location loc = std::source_location::current());

class ContainerScope {
 public:
  ContainerScope(std::string_view name, std::source_location loc);
  ~ContainerScope();
  ContainerScope(const ContainerScope&) = delete;
  ContainerScope& operator=(const ContainerScope&) = delete;

 private:
  GraphBuildingContext* ctx_ = nullptr;
  std::string previous_;
};
// Variables created while alive live in resource container `name` (TensorFlow's
// tf.container): their VarHandleOp carries it as the attr "container", and
// Session::reset(target, {name}) clears only that container's variables on a cluster. "" is the
// default container; scopes nest, the innermost wins. A name must match
// [A-Za-z0-9.][A-Za-z0-9_.\-/]* (TensorFlow's rule): InvalidArgumentError otherwise. Eager: no
// effect, as in TensorFlow 2.
[[nodiscard]] ContainerScope container(std::string_view name,
                                       std::source_location loc = std::source_location::current());

}  // namespace tapeflow
