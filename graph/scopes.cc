#include "graph/scopes.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_context.h"

namespace tapeflow {

NameScope::NameScope(std::string_view name, std::source_location loc) : ctx_(current_graph_context()) {
  if (ctx_ == nullptr) return;
  previous_ = ctx_->name_stack();
  if (name.empty()) {
    scope_.clear();
  } else if (name.back() == '/') {
    scope_ = std::string(name.substr(0, name.size() - 1));
  } else {
    if (name.find('/') != std::string_view::npos)
      throw InvalidArgumentError(absl::StrCat("[name_scope] '", std::string(name),
                                              "' contains '/': nest scopes instead, or end the name with '/' to "
                                              "re-enter an existing scope"),
                                 loc);
    scope_ = ctx_->graph().state()->unique_name(previous_.empty() ? std::string(name)
                                                                  : absl::StrCat(previous_, "/", std::string(name)));
  }
  ctx_->set_name_stack(scope_);
}

NameScope::~NameScope() {
  if (ctx_) ctx_->set_name_stack(previous_);
}

NameScope name_scope(std::string_view name, std::source_location loc) { return NameScope(name, loc); }

OpNameScope::OpNameScope(std::string_view name) : ctx_(current_graph_context()) {
  if (ctx_) ctx_->op_names().emplace_back(name);
}
OpNameScope::~OpNameScope() {
  if (ctx_) ctx_->op_names().pop_back();
}
OpNameScope op_name(std::string_view name) { return OpNameScope(name); }

Operation ControlInput::op(std::source_location loc) const {
  if (op_.defined()) return op_;
  if (!tensor_.defined()) throw InvalidArgumentError("[control_dependencies] an input is an empty tensor", loc);
  return producer(tensor_, loc);
}

ControlDependencies::ControlDependencies(const std::vector<ControlInput>& inputs, std::source_location loc)
    : ctx_(current_graph_context()) {
  if (ctx_ == nullptr) return;  // eager: ops already run in program order
  std::vector<int> ids;
  for (const ControlInput& in : inputs) {
    Operation op = in.op(loc);
    if (op.graph() != ctx_->graph())
      throw InvalidArgumentError(
          absl::StrCat("[control_dependencies] operation '", op.name(), "' belongs to another graph"), loc);
    ids.push_back(op.id());
  }
  ctx_->control_scopes().push_back(std::move(ids));
}

ControlDependencies::~ControlDependencies() {
  if (ctx_) ctx_->control_scopes().pop_back();
}

ControlDependencies control_dependencies(const std::vector<ControlInput>& inputs, std::source_location loc) {
  return ControlDependencies(inputs, loc);
}

namespace {
// TensorFlow's container names: [A-Za-z0-9.][A-Za-z0-9_.\-/]*, or "" (the default).
bool valid_container_name(std::string_view name) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(alnum(c) || c == '.' || (i > 0 && (c == '_' || c == '-' || c == '/')))) return false;
  }
  return true;
}
}  // namespace

ContainerScope::ContainerScope(std::string_view name, std::source_location loc) {
  if (!valid_container_name(name))
    throw InvalidArgumentError(absl::StrCat("[container] '", std::string(name),
                                            "' is not a container name: letters, digits and '.' first, then also "
                                            "'_', '-' and '/'"),
                               loc);
  ctx_ = current_graph_context();
  if (ctx_ == nullptr) return;
  previous_ = ctx_->container();
  ctx_->set_container(std::string(name));
}

ContainerScope::~ContainerScope() {
  if (ctx_) ctx_->set_container(std::move(previous_));
}

ContainerScope container(std::string_view name, std::source_location loc) { return ContainerScope(name, loc); }

}  // namespace tapeflow
