// Fused optimizer updates (TensorFlow's training ops, e.g. ApplyAdam): one kernel reads each
// element of the variable, its slots and its gradient once, where the same update written with
// elementwise ops makes ten passes and ten temporaries (measured: for the CNN's 3.2M-weight dense
// layer those passes were a fifth of a training step). Functional, as everything here: the new
// values are returned, and the optimizer assigns them.
//
//   auto [var_t, m_t, v_t] = adam_update(var, m, v, grad, lr_t, 0.9, 0.999, 1e-7);
//   Tensor w_t = matmul_update(w, x, dy, lr, /*transpose_a=*/true, false, /*subtract=*/true);
#pragma once

#include <array>
#include <source_location>

#include "eager/operand.h"
#include "eager/tensor.h"


namespace tapeflow {

class Variable;

// Adam's step with the bias-corrected rate lr_t (a scalar of var's dtype):
//   m_t = beta_1 m + (1 - beta_1) g;  v_t = beta_2 v + (1 - beta_2) g^2;
//   var_t = var - lr_t m_t / (sqrt(v_t) + epsilon).
// var, m, v and grad share one float dtype and shape. Returns {var_t, m_t, v_t}.
std::array<Tensor, 3> adam_update(const Tensor& var, const Tensor& m, const Tensor& v, const Tensor& grad,
                                  const Tensor& lr_t, double beta_1, double beta_2, double epsilon,
                                  std::source_location loc = std::source_location::current());

// TensorFlow's ApplyAdam: adam_update on three variables, written into their own storage when
// each holds its value alone (Note [In-place update]: no new buffers, half the memory traffic on
// a large layer); otherwise (a reader holds a value, another device, a graph being built) the
// functional adam_update and three assigns, with the same values. Errors as adam_update's.
void apply_adam(Variable& var, Variable& m, Variable& v, const Tensor& grad, const Tensor& lr_t, double beta_1,
                double beta_2, double epsilon, std::source_location loc = std::source_location::current());

// var + scale op(a) op(b), or var - scale op(a) op(b) with `subtract`: a gradient step whose
// gradient is a matrix product (a dense layer's weights: w - lr x^T dy) as one product that
// accumulates into a copy of var, without the product's temporary, its scaling and the
// subtraction. var, a and b are matrices of one float dtype; scale a scalar of that dtype.
// The graph executor folds MatMul -> Mul by a scalar -> AssignSub into it (Note [MatMul update]
// in graph/matmul_update_fusion.cc).
Tensor matmul_update(const Tensor& var, const Tensor& a, const Tensor& b, const Tensor& scale, bool transpose_a,
                     bool transpose_b, bool subtract, std::source_location loc = std::source_location::current());

// var - alpha delta (TensorFlow's ApplyGradientDescent, functional): alpha a scalar and delta
// a tensor of var's float dtype and shape.
Tensor gradient_descent_update(const Tensor& var, const Tensor& alpha, const Tensor& delta,
                               std::source_location loc = std::source_location::current());

// The plain gradient step on a variable, var -= alpha delta, as TensorFlow's SGD applies it: one
// pass over var's storage in place when nothing else holds its value (Note [In-place update]),
// where var.assign_sub(alpha * delta) makes a scaled temporary and a second pass. Otherwise
// (a reader holds the value, delta on another device, no kernel for the device, a graph being
// built) it is exactly var.assign_sub(delta * alpha), which a graph's executor fuses with the
// MatMul producing delta (Note [MatMul update]). alpha: a scalar (a C++ number adopts var's
// dtype); delta: var's dtype and shape, else InvalidArgumentError and var is unchanged.
// Returns the new value (in a graph, the update's symbolic output).
Tensor apply_gradient_descent(Variable& var, const Operand& alpha, const Tensor& delta,
                              std::source_location loc = std::source_location::current());

// True when the fused update has a kernel for tensors of `dtype` on `device` (CPU: float32 and
// float64); elsewhere an optimizer writes the same update with elementwise ops.
bool has_fused_update_kernel(const Device* device, DType dtype);

}  // namespace tapeflow
