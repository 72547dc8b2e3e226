// SGD: gradient descent with optional (Nesterov) momentum, as keras.optimizers.SGD.
//
//   nn::SGD opt(/*learning_rate=*/0.1, /*momentum=*/0.9);
//   opt.apply_gradients({{grad, w}});
//
// Without momentum: w -= lr * g. With momentum (slot "<w>/momentum", starting at 0):
//   velocity = momentum * velocity - lr * g
//   w += velocity                              (plain)
//   w += momentum * velocity - lr * g          (nesterov, with the updated velocity)
#pragma once

#include <source_location>
#include <string_view>

#include "nn/optimizer.h"

namespace tapeflow::nn {

class SGD : public Optimizer {
 public:
  // momentum must be in [0, 1] (InvalidArgumentError otherwise).
  explicit SGD(LearningRate learning_rate = 0.01, double momentum = 0.0, bool nesterov = false,
               std::string_view name = "SGD", std::source_location loc = std::source_location::current());

  double momentum() const { return momentum_; }
  bool nesterov() const { return nesterov_; }

  std::vector<std::string> slot_names() const override {
    return momentum_ > 0 ? std::vector<std::string>{"momentum"} : std::vector<std::string>{};
  }

 protected:
  void update_step(const Tensor& gradient, Variable& var, const Step& step) override;

 private:
  double momentum_;
  bool nesterov_;
};

}  // namespace tapeflow::nn
