#include "nn/adam.h"

#include <cmath>

#include "eager/context.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/training.h"
#include "eager/ops/unary.h"

namespace tapeflow::nn {

Adam::Adam(LearningRate learning_rate, double beta_1, double beta_2, double epsilon, std::string_view name,
           std::source_location loc)
    : Optimizer(name, std::move(learning_rate)), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {
  check_hyperparameter(beta_1 >= 0 && beta_1 < 1, "beta_1", "[0, 1)", beta_1, loc);
  check_hyperparameter(beta_2 >= 0 && beta_2 < 1, "beta_2", "[0, 1)", beta_2, loc);
  check_hyperparameter(epsilon >= 0, "epsilon", "[0, inf)", epsilon, loc);
}

namespace {
// lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), written once for host numbers (eager: std::pow and
// std::sqrt) and for float64 graph tensors (tapeflow::pow and sqrt, found by argument lookup).
template <typename T>
T corrected_rate(const T& lr, const T& t, double beta_1, double beta_2) {
  using std::pow;
  using std::sqrt;
  return lr * sqrt(1 - pow(beta_2, t)) / (1 - pow(beta_1, t));
}
// The fused kernel (eager/ops/training.h) where the variable's device has it; a graph variable
// is placed when the graph runs, on the CPU unless a device scope says otherwise.
bool use_fused_update(const Variable& var) {
  if (var.device() != nullptr) return has_fused_update_kernel(var.device(), var.dtype());
  const DeviceSpec spec = current_device_spec();
  return (!spec.device_type || *spec.device_type == "CPU") &&
         (var.dtype() == DType::kFloat32 || var.dtype() == DType::kFloat64);
}
}  // namespace

void Adam::update_step(const Tensor& gradient, Variable& var, const Step& step) {
  const StepValue& lr = step.learning_rate;
  const StepValue lr_t = lr.is_tensor() || step.t.is_tensor()
                             ? StepValue(corrected_rate(lr.as_tensor(), step.t.as_tensor(), beta_1_, beta_2_))
                             : StepValue(corrected_rate(lr.value(), step.t.value(), beta_1_, beta_2_));
  Variable m = slot(var, "m");
  Variable v = slot(var, "v");
  if (use_fused_update(var)) {
    const DType dtype = var.dtype();
    const Tensor rate = lr_t.as_operand(dtype).resolve("Adam", &dtype, var.device());
    apply_adam(var, m, v, gradient, rate, beta_1_, beta_2_, epsilon_);
    return;
  }
  const Tensor m_t = m * beta_1_ + gradient * (1 - beta_1_);
  const Tensor v_t = v * beta_2_ + square(gradient) * (1 - beta_2_);
  m.assign(m_t);
  v.assign(v_t);
  var.assign_sub(m_t * lr_t.as_operand(var.dtype()) / (sqrt(v_t) + epsilon_));
}

}  // namespace tapeflow::nn
