#include "nn/rmsprop.h"

#include "eager/ops/binary.h"
#include "eager/ops/unary.h"

namespace tapeflow::nn {

RMSprop::RMSprop(LearningRate learning_rate, double rho, double momentum, double epsilon, bool centered,
                 std::string_view name, std::source_location loc)
    : Optimizer(name, std::move(learning_rate)),
      rho_(rho),
      momentum_(momentum),
      epsilon_(epsilon),
      centered_(centered) {
  check_hyperparameter(rho >= 0 && rho < 1, "rho", "[0, 1)", rho, loc);
  check_hyperparameter(momentum >= 0 && momentum <= 1, "momentum", "[0, 1]", momentum, loc);
  check_hyperparameter(epsilon >= 0, "epsilon", "[0, inf)", epsilon, loc);
}

std::vector<std::string> RMSprop::slot_names() const {
  std::vector<std::string> names{"velocity"};
  if (centered_) names.push_back("average_gradient");
  if (momentum_ > 0) names.push_back("momentum");
  return names;
}

void RMSprop::update_step(const Tensor& gradient, Variable& var, const Step& step) {
  Variable velocity = slot(var, "velocity");
  const Tensor vel = velocity * rho_ + square(gradient) * (1 - rho_);
  velocity.assign(vel);
  Tensor denominator;
  if (centered_) {
    Variable average = slot(var, "average_gradient");
    const Tensor avg = average * rho_ + gradient * (1 - rho_);
    average.assign(avg);
    denominator = vel - square(avg) + epsilon_;
  } else {
    denominator = vel + epsilon_;
  }
  const Tensor increment = gradient * step.learning_rate.as_operand(var.dtype()) / sqrt(denominator);
  if (momentum_ > 0) {
    Variable mom = slot(var, "momentum");
    const Tensor mom_t = mom * momentum_ + increment;
    mom.assign(mom_t);
    var.assign_sub(mom_t);
  } else {
    var.assign_sub(increment);
  }
}

}  // namespace tapeflow::nn
