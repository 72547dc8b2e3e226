// RMSprop, as keras.optimizers.RMSprop.
//
//   nn::RMSprop opt(/*learning_rate=*/0.001, /*rho=*/0.9);
//   opt.apply_gradients({{grad, w}});
//
// With slots "<w>/velocity", "<w>/average_gradient" (centered only) and "<w>/momentum"
// (momentum > 0 only), all starting at 0:
//   velocity = rho * velocity + (1 - rho) * g^2
//   centered: average_gradient = rho * average_gradient + (1 - rho) * g
//             denominator = velocity - average_gradient^2 + epsilon
//   otherwise denominator = velocity + epsilon
//   increment = lr * g / sqrt(denominator)
//   momentum > 0: momentum = momentum_coef * momentum + increment; w -= momentum
//   otherwise:    w -= increment
#pragma once

#include <source_location>
#include <string_view>

#include "nn/optimizer.h"

namespace tapeflow::nn {

class RMSprop : public Optimizer {
 public:
  // rho must be in [0, 1), momentum in [0, 1], epsilon >= 0 (InvalidArgumentError otherwise).
  explicit RMSprop(LearningRate learning_rate = 0.001, double rho = 0.9, double momentum = 0.0, double epsilon = 1e-7,
                   bool centered = false, std::string_view name = "RMSprop",
                   std::source_location loc = std::source_location::current());

  double rho() const { return rho_; }
  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }
  bool centered() const { return centered_; }

  std::vector<std::string> slot_names() const override;

 protected:
  void update_step(const Tensor& gradient, Variable& var, const Step& step) override;

 private:
  double rho_;
  double momentum_;
  double epsilon_;
  bool centered_;
};

}  // namespace tapeflow::nn
