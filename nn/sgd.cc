#include "nn/sgd.h"

#include "eager/ops/binary.h"
#include "eager/ops/training.h"

namespace tapeflow::nn {

SGD::SGD(LearningRate learning_rate, double momentum, bool nesterov, std::string_view name, std::source_location loc)
    : Optimizer(name, std::move(learning_rate)), momentum_(momentum), nesterov_(nesterov) {
  check_hyperparameter(momentum >= 0 && momentum <= 1, "momentum", "[0, 1]", momentum, loc);
}

void SGD::update_step(const Tensor& gradient, Variable& var, const Step& step) {
  // The scalars are weak: they take the variable's dtype, as Keras casts them.
  if (momentum_ == 0) {
    apply_gradient_descent(var, step.learning_rate.as_operand(var.dtype()), gradient);  // one pass, in place
    return;
  }
  const Tensor scaled = gradient * step.learning_rate.as_operand(var.dtype());
  Variable velocity = slot(var, "momentum");
  const Tensor v = velocity * momentum_ - scaled;
  velocity.assign(v);
  var.assign_add(nesterov_ ? v * momentum_ - scaled : v);
}

}  // namespace tapeflow::nn
