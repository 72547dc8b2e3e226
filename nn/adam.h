// Adam, as keras.optimizers.Adam (with Keras's epsilon-hat form of the bias correction).
//
//   nn::Adam opt(/*learning_rate=*/0.001);
//   opt.apply_gradients({{grad, w}});
//
// At step t = iterations() + 1, with slots "<w>/m" and "<w>/v" starting at 0:
//   lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
//   m = beta_1 * m + (1 - beta_1) * g
//   v = beta_2 * v + (1 - beta_2) * g^2
//   w -= lr_t * m / (sqrt(v) + epsilon)
// lr_t is computed in double precision (on the host; in a graph, float64 ops on the iterations
// variable), then applied in the variable's dtype.
#pragma once

#include <source_location>
#include <string_view>

#include "nn/optimizer.h"

namespace tapeflow::nn {

class Adam : public Optimizer {
 public:
  // beta_1 and beta_2 must be in [0, 1), epsilon >= 0 (InvalidArgumentError otherwise).
  explicit Adam(LearningRate learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7,
                std::string_view name = "Adam", std::source_location loc = std::source_location::current());

  double beta_1() const { return beta_1_; }
  double beta_2() const { return beta_2_; }
  double epsilon() const { return epsilon_; }

  std::vector<std::string> slot_names() const override { return {"m", "v"}; }

 protected:
  void update_step(const Tensor& gradient, Variable& var, const Step& step) override;

 private:
  double beta_1_;
  double beta_2_;
  double epsilon_;
};

}  // namespace tapeflow::nn
