#include "nn/optimizer.h"

#include "graph/function.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "devices/device_manager.h"
#include "eager/context.h"
#include "eager/ops/creation.h"
#include "graph/function.h"
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

Variable Optimizer::slot(const Variable& var, std::string_view slot) {
  std::lock_guard lock(mu_);
  auto key = std::make_pair(var.id(), std::string(slot));
  if (const auto it = slots_.find(key); it != slots_.end()) return it->second;
  // Slots are created once, outside any trace (as tf.init_scope), next to their variable.
  auto outside_traces = init_scope();
  std::optional<DeviceScope> on_device;
  if (var.device() != nullptr) on_device.emplace(var.device()->name(), std::source_location::current());
  Variable created(zeros(var.shape(), var.dtype()),
                   absl::StrCat(var.name(), "/", absl::string_view(slot.data(), slot.size())), /*trainable=*/false);
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

void Optimizer::apply_gradients(const GradientsAndVariables& grads_and_vars, std::source_location loc) {
  // Validate (and move gradients to their variables' devices) first, so a bad pair leaves every
  // variable and slot as it was.
  GradientsAndVariables ready;
  for (const auto& [grad, var] : grads_and_vars) {
    if (!grad.defined()) continue;
    check_pair(grad, var, loc);
    ready.emplace_back(on_device(grad, var.device(), loc), var);
  }
  if (ready.empty()) {
    std::vector<std::string> names;
    for (const auto& pair : grads_and_vars) names.push_back(pair.second.name());
    throw InvalidArgumentError(
        absl::StrCat("[apply_gradients] No gradients provided for any variable: [", absl::StrJoin(names, ", "), "]"),
        loc);
  }

  std::lock_guard lock(mu_);
  const double lr = learning_rate_.at(iterations_);
  for (auto& [grad, var] : ready) {
    // Every op of the update runs where the variable lives, whatever the caller's scope.
    std::optional<DeviceScope> on_device;
    if (var.device() != nullptr) on_device.emplace(var.device()->name(), loc);
    update_step(grad, var, lr);
  }
  ++iterations_;
}

void Optimizer::apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable>& vars,
                                std::source_location loc) {
  if (grads.size() != vars.size())
    throw InvalidArgumentError(absl::StrCat("[apply_gradients] got ", grads.size(), " gradients for ", vars.size(),
                                            " variables; the lists must have the same length"),
                               loc);
  GradientsAndVariables pairs;
  pairs.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) pairs.emplace_back(grads[i], vars[i]);
  apply_gradients(pairs, loc);
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

}  // namespace tapeflow::nn
