// Gradient functions: one per differentiable op type, written with the public op API so the
// backward pass is itself recorded by outer tapes (higher-order gradients) and will trace into
// graphs unchanged.
//
//   GradList mul_grad(const GradInputs& op, absl::Span<const Tensor> grads) {
//     const Tensor& g = grads[0];
//     return {unbroadcast(g * op.inputs[1], op.inputs[0].shape()),
//             unbroadcast(g * op.inputs[0], op.inputs[1].shape())};
//   }
//
// A gradient function returns one Tensor per op input; an empty Tensor means "no gradient"
// (integer inputs, indices, shapes, or an input the tape does not need: GradInputs::needs).
// grads has one entry per op output; an output the target does not depend on gets zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/attr.h"
#include "eager/op_def.h"
#include "eager/tensor.h"

namespace tapeflow {

struct GradInputs {
  const OpDef& op;
  absl::Span<const Tensor> inputs;
  absl::Span<const Tensor> outputs;
  const AttrMap& attrs;
  // Bit i: the tape wants input i's gradient (it leads to a source). A gradient function may
  // return an empty Tensor for the others instead of computing them (TensorFlow's
  // skip_input_indices); computing them anyway is only slower. Inputs from 64 on are wanted.
  uint64_t wanted = ~uint64_t{0};
  bool needs(size_t i) const { return i >= 64 || ((wanted >> i) & 1) != 0; }
};

// One gradient per op input; inline storage for the common one or two inputs (a backward pass
// of small ops would otherwise allocate a std::vector per op).
using GradList = absl::InlinedVector<Tensor, 2>;
using GradFn = GradList (*)(const GradInputs& op, absl::Span<const Tensor> grads);

// The gradient of op_type, or nullptr. The first call registers every built-in gradient.
GradFn find_gradient(std::string_view op_type);
// Adds the gradient of an op type defined above the tape layer (the call op of a traced
// function, graph/function_gradient.cc). Thread-safe; built-in gradients take precedence.
void register_gradient(std::string_view op_type, GradFn fn);

class GradientRegistry {
 public:
  void add(std::string_view op_type, GradFn fn);
  GradFn find(std::string_view op_type) const;

 private:
  std::vector<std::pair<std::string, GradFn>> fns_;
};

// One registration function per op family (tape/gradients/<family>.cc).
void register_unary_gradients(GradientRegistry& r);
void register_activation_gradients(GradientRegistry& r);
void register_binary_gradients(GradientRegistry& r);
void register_math_gradients(GradientRegistry& r);
void register_where_gradients(GradientRegistry& r);
void register_cast_gradients(GradientRegistry& r);
void register_array_gradients(GradientRegistry& r);
void register_reduction_gradients(GradientRegistry& r);
void register_scan_gradients(GradientRegistry& r);
void register_matmul_gradients(GradientRegistry& r);
void register_conv_gradients(GradientRegistry& r);
void register_pool_gradients(GradientRegistry& r);
void register_scatter_gradients(GradientRegistry& r);
void register_sorting_gradients(GradientRegistry& r);

// Sums grad over the axes that broadcasting added or stretched, so it has `shape` again.
Tensor unbroadcast(const Tensor& grad, const Shape& shape);

}  // namespace tapeflow
