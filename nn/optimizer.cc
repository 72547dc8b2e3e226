#include "nn/optimizer.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "devices/device_manager.h"
#include "eager/context.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/ops/math.h"
#include "eager/ops/unary.h"
#include "eager/ops/where.h"
#include "graph/function.h"
#include "graph/gradients.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"
#include "graph/scopes.h"
#include "tape/gradient_tape.h"

namespace tapeflow::nn {

// ---- schedules ----

ExponentialDecay::ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate, bool staircase,
                                   std::source_location loc)
    : initial_(initial_learning_rate), decay_steps_(decay_steps), decay_rate_(decay_rate), staircase_(staircase) {
  if (decay_steps <= 0)
    throw InvalidArgumentError(absl::StrCat("[ExponentialDecay] decay_steps must be positive, got ", decay_steps), loc);
}

double ExponentialDecay::operator()(int64_t step) const {
  double p = static_cast<double>(step) / static_cast<double>(decay_steps_);
  if (staircase_) p = std::floor(p);
  return initial_ * std::pow(decay_rate_, p);
}

Tensor LearningRateSchedule::at_step(const Tensor&) const {
  throw UnimplementedError(
      "[LearningRateSchedule] this schedule has no graph form: override at_step(const Tensor& step) with graph ops "
      "to train in a graph",
      {});
}

Tensor ExponentialDecay::at_step(const Tensor& step) const {
  // The same operations as operator(), in float64 (its kernels round as the host does).
  Tensor p = cast(step, DType::kFloat64) / static_cast<double>(decay_steps_);
  if (staircase_) p = floor(p);
  return initial_ * pow(decay_rate_, p);
}

CosineDecay::CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha, std::source_location loc)
    : initial_(initial_learning_rate), decay_steps_(decay_steps), alpha_(alpha) {
  if (decay_steps <= 0)
    throw InvalidArgumentError(absl::StrCat("[CosineDecay] decay_steps must be positive, got ", decay_steps), loc);
  if (!(alpha >= 0 && alpha <= 1))
    throw InvalidArgumentError(absl::StrCat("[CosineDecay] alpha must be in [0, 1], got ", alpha), loc);
}

double CosineDecay::operator()(int64_t step) const {
  const double t = static_cast<double>(std::min(step, decay_steps_)) / static_cast<double>(decay_steps_);
  return initial_ * ((1 - alpha_) * 0.5 * (1 + std::cos(std::numbers::pi * t)) + alpha_);
}

Tensor CosineDecay::at_step(const Tensor& step) const {
  Tensor t = minimum(cast(step, DType::kFloat64), static_cast<double>(decay_steps_)) /
             static_cast<double>(decay_steps_);
  return initial_ * ((1 - alpha_) * 0.5 * (1.0 + cos(std::numbers::pi * t)) + alpha_);
}

PiecewiseConstantDecay::PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values,
                                               std::source_location loc)
    : boundaries_(std::move(boundaries)), values_(std::move(values)) {
  if (values_.size() != boundaries_.size() + 1)
    throw InvalidArgumentError(absl::StrCat("[PiecewiseConstantDecay] values must have one more element than "
                                            "boundaries, got ",
                                            values_.size(), " values and ", boundaries_.size(), " boundaries"),
                               loc);
  for (size_t i = 1; i < boundaries_.size(); ++i) {
    if (boundaries_[i] <= boundaries_[i - 1])
      throw InvalidArgumentError(absl::StrCat("[PiecewiseConstantDecay] boundaries must be strictly increasing, got [",
                                              absl::StrJoin(boundaries_, ", "), "]"),
                                 loc);
  }
}

double PiecewiseConstantDecay::operator()(int64_t step) const {
  // The first boundary >= step closes the interval step falls in.
  const auto it = std::lower_bound(boundaries_.begin(), boundaries_.end(), step);
  return values_[static_cast<size_t>(it - boundaries_.begin())];
}

Tensor PiecewiseConstantDecay::at_step(const Tensor& step) const {
  // From the last interval back: the first boundary >= step picks the value.
  Tensor rate(values_.back());
  for (size_t i = boundaries_.size(); i-- > 0;) rate = where(less_equal(step, boundaries_[i]), values_[i], rate);
  return rate;
}

Tensor LearningRate::at(const Tensor& step) const { return schedule_ ? schedule_->at_step(step) : Tensor(value_); }

Tensor StepValue::as_tensor() const { return tensor_.defined() ? tensor_ : Tensor(value_); }

Operand StepValue::as_operand(DType dtype) const {
  if (!tensor_.defined()) return Operand(value_);
  // The returned Operand must own its tensor (Note [Operand refers]).
  Tensor value = tensor_.dtype() == dtype ? tensor_ : cast(tensor_, dtype);
  return Operand(std::move(value));
}

// ---- Optimizer ----

Optimizer::Optimizer(std::string_view name, LearningRate learning_rate)
    : name_(name), learning_rate_(std::move(learning_rate)) {}

int64_t Optimizer::iterations() const {
  std::lock_guard lock(mu_);
  return iterations_;
}

double Optimizer::learning_rate() const {
  std::lock_guard lock(mu_);
  return learning_rate_.at(iterations_);
}

void Optimizer::set_learning_rate(LearningRate learning_rate) {
  std::lock_guard lock(mu_);
  learning_rate_ = std::move(learning_rate);
}

std::optional<Variable> Optimizer::get_slot(const Variable& var, std::string_view slot) const {
  std::lock_guard lock(mu_);
  const auto it = slots_.find(std::make_pair(var.id(), std::string(slot)));
  if (it == slots_.end()) return std::nullopt;
  return it->second;
}

std::vector<Variable> Optimizer::variables() const {
  std::lock_guard lock(mu_);
  return slot_order_;
}

void Optimizer::build(const std::vector<Variable>& var_list) {
  const std::vector<std::string> names = slot_names();
  std::lock_guard lock(mu_);
  for (const Variable& var : var_list)
    for (const std::string& name : names) slot(var, name);
}

void Optimizer::set_iterations(int64_t iterations, std::source_location loc) {
  if (iterations < 0)
    throw InvalidArgumentError(absl::StrCat("[", name_, "] iterations must be >= 0, got ", iterations), loc);
  std::lock_guard lock(mu_);
  iterations_ = iterations;
}

std::optional<Variable> Optimizer::iterations_variable(const Graph& graph) const {
  std::lock_guard lock(mu_);
  for (const auto& [g, v] : graph_iterations_)
    if (g.lock() == graph.state()) return v;
  return std::nullopt;
}

std::optional<Variable> Optimizer::traced_iterations() const {
  std::lock_guard lock(mu_);
  return traced_iterations_;
}

Variable Optimizer::step_variable() {
  // Made outside any trace, as the slots are: in the graph made default, or eagerly (traced
  // steps capture that variable and increment it on every call).
  auto outside_traces = init_scope();
  const std::string name = absl::StrCat(name_, "/iterations");
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr) {
    if (!traced_iterations_) traced_iterations_.emplace(Tensor(int64_t{0}), name, /*trainable=*/false);
    return *traced_iterations_;
  }
  const Graph graph = ctx->graph();
  std::erase_if(graph_iterations_, [](const auto& entry) { return entry.first.expired(); });
  for (const auto& [g, v] : graph_iterations_)
    if (g.lock() == graph.state()) return v;
  auto top = name_scope("");
  Variable created(Tensor(int64_t{0}), name, /*trainable=*/false);
  graph_iterations_.emplace_back(graph.state(), created);
  return created;
}

Variable Optimizer::slot(const Variable& var, std::string_view slot) {
  std::lock_guard lock(mu_);
  auto key = std::make_pair(var.id(), std::string(slot));
  if (const auto it = slots_.find(key); it != slots_.end()) return it->second;
  const std::string name = absl::StrCat(var.name(), "/", absl::string_view(slot.data(), slot.size()));
  // Slots are created once, outside any trace (as tf.init_scope): in the graph being built
  // with Graph::as_default(), else eagerly, next to their variable.
  auto outside_traces = init_scope();
  std::optional<Variable> made;
  if (building_graph()) {
    // A graph variable beside var ("w/m", not inside the update's name scope), initialized from
    // a concrete zeros constant ("w/m/initial_value").
    Tensor zero;
    {
      ContextGuard eager(&eager_context());
      zero = zeros(var.shape(), var.dtype());
    }
    auto top = name_scope("");
    made.emplace(zero, name, /*trainable=*/false);
  } else {
    std::optional<DeviceScope> on_device;
    if (var.device() != nullptr) on_device.emplace(var.device()->name(), std::source_location::current());
    made.emplace(zeros(var.shape(), var.dtype()), name, /*trainable=*/false);
  }
  Variable created = *made;
  slots_.emplace(std::move(key), created);
  slot_order_.push_back(created);
  return created;
}

void Optimizer::check_hyperparameter(bool ok, std::string_view what, std::string_view range, double value,
                                     std::source_location loc) const {
  if (ok) return;
  throw InvalidArgumentError(absl::StrCat("[", name_, "] ", absl::string_view(what.data(), what.size()), " must be in ",
                                          absl::string_view(range.data(), range.size()), ", got ", value),
                             loc);
}

namespace {

[[noreturn]] void throw_no_gradients(const GradientsAndVariables& grads_and_vars, std::source_location loc) {
  std::vector<std::string> names;
  for (const auto& pair : grads_and_vars) names.push_back(pair.second.name());
  throw InvalidArgumentError(
      absl::StrCat("[apply_gradients] No gradients provided for any variable: [", absl::StrJoin(names, ", "), "]"),
      loc);
}

// Checks one (gradient, variable) pair with a defined gradient.
void check_pair(const Tensor& grad, const Variable& var, std::source_location loc) {
  if (!is_floating(var.dtype()))
    throw InvalidArgumentError(
        absl::StrCat("[apply_gradients] Variable '", var.name(), "' has dtype ", dtype_name(var.dtype()),
                     "; optimizers update floating-point variables only"),
        loc);
  if (grad.is_symbolic() && current_context().is_eager())
    throw InvalidArgumentError(absl::StrCat("[apply_gradients] the gradient for variable '", var.name(),
                                            "' is a symbolic graph tensor; eager optimizers need concrete values"),
                               loc);
  if (grad.dtype() != var.dtype() || grad.shape() != var.shape())
    throw InvalidArgumentError(
        absl::StrCat("[apply_gradients] the gradient for variable '", var.name(), "' has dtype ",
                     dtype_name(grad.dtype()), " and shape ", grad.shape().to_string(), "; the variable has dtype ",
                     dtype_name(var.dtype()), " and shape ", var.shape().to_string()),
        loc);
}

// grad on `dev`, copied there when it lives elsewhere.
Tensor on_device(const Tensor& grad, Device* dev, std::source_location loc) {
  if (grad.device() == dev || grad.is_symbolic() || dev == nullptr) return grad;
  auto copy = DeviceManager::global().copy_to(grad.device_tensor(), dev);
  if (!copy.ok()) throw_status(with_op_prefix(copy.status(), "apply_gradients"), loc);
  return Tensor::from_device_tensor(*std::move(copy));
}

}  // namespace

Operation Optimizer::apply_gradients(const GradientsAndVariables& grads_and_vars, std::source_location loc) {
  if (building_graph() || std::any_of(grads_and_vars.begin(), grads_and_vars.end(),
                                      [](const auto& pair) { return pair.first.is_symbolic(); }))
    return apply_in_graph(grads_and_vars, loc);
  // Validate (and move gradients to their variables' devices) first, so a bad pair leaves every
  // variable and slot as it was.
  GradientsAndVariables ready;
  for (const auto& [grad, var] : grads_and_vars) {
    if (!grad.defined()) continue;
    check_pair(grad, var, loc);
    ready.emplace_back(on_device(grad, var.device(), loc), var);
  }
  if (ready.empty()) throw_no_gradients(grads_and_vars, loc);

  std::lock_guard lock(mu_);
  const Step step{learning_rate_.at(iterations_), static_cast<double>(iterations_ + 1)};
  for (auto& [grad, var] : ready) {
    // Every op of the update runs where the variable lives, whatever the caller's scope.
    std::optional<DeviceScope> on_device;
    if (var.device() != nullptr) on_device.emplace(var.device()->name(), loc);
    update_step(grad, var, step);
  }
  ++iterations_;
  return Operation();
}

namespace {

bool compatible(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i)
    if (a.dim(i) >= 0 && b.dim(i) >= 0 && a.dim(i) != b.dim(i)) return false;
  return true;
}

// "update_w" for variable "dense/w": one name scope per variable's update.
std::string update_scope(const Variable& var) {
  std::string name = absl::StrCat("update_", var.name());
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

}  // namespace

Operation Optimizer::apply_in_graph(const GradientsAndVariables& grads_and_vars, std::source_location loc) {
  // The graph: the one being built, else the gradients' own.
  std::optional<GraphDefaultGuard> entered;
  if (!building_graph()) {
    for (const auto& pair : grads_and_vars)
      if (pair.first.is_symbolic()) {
        entered.emplace(producer(pair.first).graph());
        break;
      }
  }
  GraphBuildingContext& ctx = *current_graph_context();
  const Graph graph = ctx.graph();
  GradientsAndVariables ready;
  for (const auto& [grad, var] : grads_and_vars) {
    if (!grad.defined()) continue;
    if (!is_floating(var.dtype()))
      throw InvalidArgumentError(
          absl::StrCat("[apply_gradients] Variable '", var.name(), "' has dtype ", dtype_name(var.dtype()),
                       "; optimizers update floating-point variables only"),
          loc);
    if (grad.is_symbolic() && grad.symbolic().graph.get() != graph.state().get())
      throw InvalidArgumentError(absl::StrCat("[apply_gradients] the gradient for variable '", var.name(),
                                              "' is tensor '", grad.name(), "' of another graph than the one being built"),
                                 loc);
    if (var.graph_info() != nullptr && !graph.state()->variable_nodes_of(var.id()))
      throw InvalidArgumentError(absl::StrCat("[apply_gradients] Variable '", var.name(),
                                              "' belongs to another graph than the one being built"),
                                 loc);
    if (grad.dtype() != var.dtype() || !compatible(grad.shape(), var.shape()))
      throw InvalidArgumentError(
          absl::StrCat("[apply_gradients] the gradient for variable '", var.name(), "' has dtype ",
                       dtype_name(grad.dtype()), " and shape ", grad.shape().to_string(), "; the variable has dtype ",
                       dtype_name(var.dtype()), " and shape ", var.shape().to_string()),
          loc);
    ready.emplace_back(grad, var);
  }
  if (ready.empty()) throw_no_gradients(grads_and_vars, loc);

  std::lock_guard lock(mu_);
  Variable iterations = step_variable();
  auto scope = name_scope(name_, loc);
  // Note [Graph steps]: the per-step values come from the iterations variable; its read feeds
  // the updates, and the increment runs after them (control dependencies), so every update of
  // one run sees the same step.
  const Tensor count = iterations.read(loc);
  const Step step{learning_rate_.is_schedule() ? StepValue(learning_rate_.at(count)) : StepValue(learning_rate_.at(0)),
                  StepValue(cast(count, DType::kFloat64) + 1.0)};
  std::vector<ControlInput> updates;
  for (auto& [grad, var] : ready) {
    auto var_scope = name_scope(update_scope(var), loc);
    const int first = graph.num_nodes();
    update_step(grad, var, step);
    // The update's effects: its variable assignments, not the initializers of slots it made.
    for (int id = first; id < graph.num_nodes(); ++id) {
      const Node& node = graph.state()->node(id);
      const bool assigns = node.op == &kAssignVariableOp || node.op == &kAssignAddVariableOp ||
                           node.op == &kAssignSubVariableOp;
      if (!assigns || !node.variable) continue;
      const auto bound = graph.state()->variable_nodes_of(node.variable->id());
      if (!(bound && bound->initializer == id)) updates.emplace_back(Operation(graph.state(), id));
    }
  }
  const Tensor one = constant(Tensor(int64_t{1}), "one", loc);
  auto deps = control_dependencies(updates, loc);
  auto named = op_name("train");
  return producer(iterations.assign_add(one, loc), loc);
}

Operation Optimizer::apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable>& vars,
                                     std::source_location loc) {
  if (grads.size() != vars.size())
    throw InvalidArgumentError(absl::StrCat("[apply_gradients] got ", grads.size(), " gradients for ", vars.size(),
                                            " variables; the lists must have the same length"),
                               loc);
  GradientsAndVariables pairs;
  pairs.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) pairs.emplace_back(grads[i], vars[i]);
  return apply_gradients(pairs, loc);
}

Tensor Optimizer::minimize(const std::function<Tensor()>& loss, const std::vector<Variable>& var_list,
                           std::source_location loc) {
  Tensor value;
  std::vector<Tensor> grads;
  {
    // Only var_list is watched, so ops on other variables (and constants) are not recorded.
    GradientTape tape(/*persistent=*/false, /*watch_accessed_variables=*/false, loc);
    for (const Variable& v : var_list) tape.watch(v);
    value = loss();
    if (!value.defined()) throw InvalidArgumentError("[minimize] loss() returned an empty tensor", loc);
    if (!is_floating(value.dtype()))
      throw InvalidArgumentError(absl::StrCat("[minimize] loss() returned dtype ", dtype_name(value.dtype()),
                                              "; the loss must be floating point"),
                                 loc);
    // Watching the result makes a loss that depends on none of var_list a valid target whose
    // gradients are all empty, so apply_gradients reports it as Keras does (the tape itself
    // would reject an unrecorded target). It changes nothing for a recorded loss.
    tape.watch(value);
    grads = tape.gradient(value, var_list, Tensor(), Unconnected::kNone, loc);
  }
  apply_gradients(grads, var_list, loc);
  return value;
}

Operation Optimizer::minimize(const Tensor& loss, std::vector<Variable> var_list, std::source_location loc) {
  if (!loss.defined() || !loss.is_symbolic())
    throw InvalidArgumentError(absl::StrCat("[minimize] the loss is ", loss.defined() ? "a concrete tensor" : "empty",
                                            "; graph-mode minimize takes a graph tensor (eagerly, pass a function: "
                                            "minimize([&] { return loss_of(...); }, vars))"),
                               loc);
  if (!is_floating(loss.dtype()))
    throw InvalidArgumentError(absl::StrCat("[minimize] the loss '", loss.name(), "' has dtype ",
                                            dtype_name(loss.dtype()), "; the loss must be floating point"),
                               loc);
  std::optional<GraphDefaultGuard> entered;
  if (!building_graph()) entered.emplace(producer(loss, loc).graph());
  if (var_list.empty()) var_list = get_default_graph().trainable_variables();
  if (var_list.empty())
    throw InvalidArgumentError(absl::StrCat("[minimize] there is nothing to train: var_list is empty and the graph "
                                            "of '", loss.name(), "' has no trainable variables"),
                               loc);
  const std::vector<Tensor> grads = gradients({loss}, var_list, {}, Unconnected::kNone, loc);
  return apply_gradients(grads, var_list, loc);
}

}  // namespace tapeflow::nn
