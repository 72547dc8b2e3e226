// Optimizers: the base class, learning rates and learning-rate schedules (Keras semantics).
//
//   nn::Adam opt(/*learning_rate=*/0.01);
//   Variable w(Tensor{1.f, 2.f}, "w");
//   Tensor g = ...;                        // a gradient, e.g. from a GradientTape
//   opt.apply_gradients({{g, w}});         // w updated in place; opt.iterations() == 1
//   Tensor loss = opt.minimize([&] { return reduce_sum(square(w)); }, {w});  // tape + apply
//
//   nn::SGD decayed(nn::ExponentialDecay(/*initial=*/0.1, /*decay_steps=*/100, /*decay_rate=*/0.96));
//   decayed.learning_rate();               // the schedule's value at iterations()
//
// An optimizer updates Variables given gradients as Tensors. A pair whose gradient is an
// empty Tensor (defined() false) is skipped, as TensorFlow skips None gradients. Each step
// runs on the variable's device with the public ops, through Variable::assign*, so it works
// wherever the variable lives. Per-variable state ("slot" variables: momentum, m, v, ...) is
// created on a variable's first update: zeros like the variable, on its device,
// non-trainable, named "<variable>/<slot>".
//
// Optimizers are not copyable (they own slot state, as a Python optimizer object does).
// apply_gradients may be called from several threads: calls on one optimizer are serialised.
//
// In a graph, minimize(loss) (or apply_gradients while a graph is built, e.g. inside a traced
// function, or with symbolic gradients) builds the backward pass and the updates and returns
// one train op to run in a Session, as TensorFlow 1 does:
//
//   auto scope = g.as_default();
//   Tensor loss = reduce_mean(square(matmul(x, w) + b - y));
//   Operation train = opt.minimize(loss);          // all trainable variables of g
//   Operation init = g.global_variables_initializer();  // after minimize: covers the slots
//   sess.run(init);
//   for (...) sess.run(train, {{x, xs}, {y, ys}});
//
// What changes per step lives in the graph then: a non-trainable int64 variable
// "<name>/iterations" per graph (iterations_variable(g)), incremented by the train op after the
// updates, from which learning-rate schedules and Adam's bias correction are computed with
// graph ops. Slots are graph variables ("w/m"), initialized by the graph's initializers. The
// eager counter iterations() does not count graph steps (they live in each Session).
// Inside a traced function (graph/function.h) slots and the counter are made in init_scope():
// eager variables the trace captures, so each call of the traced step updates them
// (traced_iterations()), as tf.function with a Keras optimizer does.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "eager/operand.h"
#include "eager/tensor.h"
#include "eager/variable.h"
#include "graph/graph.h"

namespace tapeflow::nn {

// A learning rate that depends on the optimizer's step (iterations(), from 0).
class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  virtual double operator()(int64_t step) const = 0;
  // The same rule with graph ops, for graph-mode training: `step` is an int64 scalar tensor (the
  // iterations variable's value) and the result a float64 scalar tensor. The default throws
  // UnimplementedError: a schedule that is only a host function cannot run inside a graph.
  virtual Tensor at_step(const Tensor& step) const;
};

// initial_learning_rate * decay_rate ^ (step / decay_steps); with staircase the exponent is
// floor(step / decay_steps), so the rate drops in steps. decay_steps must be positive.
class ExponentialDecay final : public LearningRateSchedule {
 public:
  ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate, bool staircase = false,
                   std::source_location loc = std::source_location::current());
  double operator()(int64_t step) const override;
  Tensor at_step(const Tensor& step) const override;

 private:
  double initial_;
  int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
};

// values[0] while step <= boundaries[0], values[1] while boundaries[0] < step <= boundaries[1],
// ..., values.back() after the last boundary. boundaries must be strictly increasing and
// values.size() == boundaries.size() + 1.
class PiecewiseConstantDecay final : public LearningRateSchedule {
 public:
  PiecewiseConstantDecay(std::vector<int64_t> boundaries, std::vector<double> values,
                         std::source_location loc = std::source_location::current());
  double operator()(int64_t step) const override;
  Tensor at_step(const Tensor& step) const override;

 private:
  std::vector<int64_t> boundaries_;
  std::vector<double> values_;
};

// Keras's CosineDecay: initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * t)) + alpha) with
// t = min(step, decay_steps) / decay_steps, so the rate falls from the initial one to
// alpha * initial along half a cosine and stays there. decay_steps must be positive and alpha
// in [0, 1].
class CosineDecay final : public LearningRateSchedule {
 public:
  CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha = 0.0,
              std::source_location loc = std::source_location::current());
  double operator()(int64_t step) const override;
  Tensor at_step(const Tensor& step) const override;

 private:
  double initial_;
  int64_t decay_steps_;
  double alpha_;
};

// What an optimizer's learning_rate argument accepts: a number or a schedule (taken by value,
// or shared through a shared_ptr).
class LearningRate {
 public:
  LearningRate(double value) : value_(value) {}
  template <std::derived_from<LearningRateSchedule> S>
  LearningRate(S schedule) : schedule_(std::make_shared<S>(std::move(schedule))) {}
  template <std::derived_from<LearningRateSchedule> S>
  LearningRate(std::shared_ptr<S> schedule) : schedule_(std::move(schedule)) {}

  double at(int64_t step) const { return schedule_ ? (*schedule_)(step) : value_; }
  // In a graph: the schedule's at_step(step), or the constant as a float64 scalar.
  Tensor at(const Tensor& step) const;
  bool is_schedule() const { return schedule_ != nullptr; }

 private:
  double value_ = 0;
  std::shared_ptr<const LearningRateSchedule> schedule_;
};

using GradientsAndVariables = std::vector<std::pair<Tensor, Variable>>;

// A number that may change from step to step: a host value when the optimizer runs eagerly; in
// a graph, a float64 scalar tensor the train op computes when it runs.
class StepValue {
 public:
  StepValue(double value) : value_(value) {}
  explicit StepValue(Tensor value) : tensor_(std::move(value)) {}

  bool is_tensor() const { return tensor_.defined(); }
  double value() const { return value_; }
  // The tensor, or the host value as a float64 scalar.
  Tensor as_tensor() const;
  // As an operand of an update of a `dtype` variable: the host value as a weak scalar (it takes
  // the other operand's dtype, as Keras casts hyperparameters), or the tensor cast to dtype.
  Operand as_operand(DType dtype) const;

 private:
  double value_ = 0;
  Tensor tensor_;
};

// What one step's update may depend on besides the gradient.
struct Step {
  StepValue learning_rate;  // this step's learning rate (a schedule evaluated at iterations)
  StepValue t;              // the step number counted from 1 (iterations + 1), for bias corrections
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One step: updates each variable whose gradient is defined, then increments iterations().
  // Everything is validated before anything changes: a gradient whose dtype or shape differs
  // from its variable's, a variable that is not floating point, or no defined gradient at all
  // is an InvalidArgumentError, and then no variable, slot or counter is touched.
  // Eagerly it returns an empty Operation. While a graph is being built, or when a gradient is
  // a graph tensor, it changes nothing now: it adds the updates to the graph and returns the
  // train op that runs them and then increments the graph's iterations variable.
  Operation apply_gradients(const GradientsAndVariables& grads_and_vars,
                            std::source_location loc = std::source_location::current());
  // The same with gradients and variables in two lists of equal length (as a tape returns them).
  Operation apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable>& vars,
                            std::source_location loc = std::source_location::current());

  // Keras's minimize: runs loss() under a fresh GradientTape that watches var_list (and records
  // nothing else), takes the gradients of the result for var_list and applies them as
  // apply_gradients does: a variable without a gradient is skipped, and no gradient at all (a
  // loss that depends on none of var_list) is the same InvalidArgumentError. Returns the loss.
  // An empty or non-floating loss is an InvalidArgumentError "[minimize] ..." before any update.
  Tensor minimize(const std::function<Tensor()>& loss, const std::vector<Variable>& var_list,
                  std::source_location loc = std::source_location::current());

  // Graph mode (TensorFlow 1's minimize): adds gradients({loss}, var_list) (graph/gradients.h)
  // and the updates to the loss's graph and returns the train op, "<name>/train" (scopes
  // uniquify it), which updates every variable with a gradient and then increments the graph's
  // iterations variable. var_list defaults to the graph's trainable_variables(). The slots it
  // creates join the graph's global variables, so an initializer built afterwards covers them.
  // InvalidArgumentError for a loss that is not a floating graph tensor, an empty var_list,
  // or a loss that depends on none of the variables.
  Operation minimize(const Tensor& loss, std::vector<Variable> var_list = {},
                     std::source_location loc = std::source_location::current());

  // Number of apply_gradients calls that updated variables.
  int64_t iterations() const;
  // The learning rate the next step uses (a schedule evaluated at iterations()).
  double learning_rate() const;
  void set_learning_rate(LearningRate learning_rate);
  const std::string& name() const { return name_; }

  // var's slot `slot` ("momentum", "m", ...), nullopt before var's first update or for a slot
  // this optimizer does not keep.
  std::optional<Variable> get_slot(const Variable& var, std::string_view slot) const;
  // Every slot variable, in creation order.
  std::vector<Variable> variables() const;

  // For checkpoints (saving/saver.h), so training resumes exactly where it stopped:
  // The names of the slots this optimizer keeps per variable ({"m", "v"} for Adam), in a fixed
  // order; they depend on the hyperparameters (SGD keeps "momentum" only when momentum > 0).
  virtual std::vector<std::string> slot_names() const { return {}; }
  // Keras's optimizer.build(var_list): creates, as zeros, every slot of slot_names() that each
  // variable lacks (slots made later, on the first update, would overwrite nothing restored).
  // Eager variables only (a graph's slots exist once minimize has built the train op).
  void build(const std::vector<Variable>& var_list);
  // Sets the eager step counter (iterations()), as restoring Keras's optimizer.iterations does:
  // learning-rate schedules and Adam's bias correction continue from `iterations`.
  // InvalidArgumentError when negative.
  void set_iterations(int64_t iterations, std::source_location loc = std::source_location::current());
  // The step counter of graph-mode training in `graph` ("<name>/iterations", int64), nullopt
  // before the first train op built there.
  std::optional<Variable> iterations_variable(const Graph& graph) const;
  // The same counter for steps run through traced functions (tapeflow::function) called
  // eagerly: an eager int64 variable "<name>/iterations" the traces capture and increment on
  // every call. nullopt before the first trace of an update.
  std::optional<Variable> traced_iterations() const;

 protected:
  Optimizer(std::string_view name, LearningRate learning_rate);

  // One variable's update, written with public ops and Variable::assign*, so that the same code
  // updates eagerly and builds graph updates. gradient has var's dtype and shape (in a graph,
  // shapes may be partially known). Eagerly the call runs inside a device scope of var's
  // device, step holds host numbers and iterations() is still the count before this step; in a
  // graph, step holds tensors computed from the iterations variable.
  virtual void update_step(const Tensor& gradient, Variable& var, const Step& step) = 0;

  // var's slot `slot`, created as zeros like var on first use (in a graph: a graph variable
  // named "<var>/<slot>" at the top name scope).
  Variable slot(const Variable& var, std::string_view slot);

  // InvalidArgumentError "[<name>] <what> must be in <range>, got <value>" unless ok.
  void check_hyperparameter(bool ok, std::string_view what, std::string_view range, double value,
                            std::source_location loc) const;

 private:
  std::string name_;
  LearningRate learning_rate_;
  int64_t iterations_ = 0;
  // Keyed by (Variable::id(), slot name).
  absl::flat_hash_map<std::pair<int64_t, std::string>, Variable> slots_;
  std::vector<Variable> slot_order_;
  // One iterations variable per graph trained in (graphs are held weakly).
  std::vector<std::pair<std::weak_ptr<GraphState>, Variable>> graph_iterations_;

  // The eager step counter of traced steps (see traced_iterations()).
  std::optional<Variable> traced_iterations_;

  Operation apply_in_graph(const GradientsAndVariables& grads_and_vars, std::source_location loc);
  Variable step_variable();
  // Serialises apply_gradients and guards the members above. Recursive, so update_step may
  // call iterations(), slot() and the other accessors.
  mutable std::recursive_mutex mu_;
};

}  // namespace tapeflow::nn
