// Gradients of max_pool and avg_pool, and of their gradient primitives (for second-order
// gradients): avg_pool_grad is linear with avg_pool as its adjoint; max_pool_grad and
// max_pool_grad_grad are each other's adjoints in their grad input.
#include "eager/ops/creation.h"
#include "eager/ops/pool.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;
using Ints = std::vector<int64_t>;

const Ints& ksize(const GradInputs& op) { return op.attrs.get<Ints>("ksize"); }
const Ints& strides(const GradInputs& op) { return op.attrs.get<Ints>("strides"); }
const std::string& padding(const GradInputs& op) { return op.attrs.get<std::string>("padding"); }
std::string data_format(const GradInputs& op) { return op.attrs.get_or<std::string>("data_format", "NHWC"); }

Grads max_pool_grad_fn(const GradInputs& op, Span g) {
  return {max_pool_grad(op.inputs[0], op.outputs[0], g[0], ksize(op), strides(op), padding(op), data_format(op))};
}
// max_pool_grad is linear in grad, with max_pool_grad_grad as its adjoint (and the reverse),
// and piecewise constant in orig_input and orig_output (the routing changes only at ties):
// zeros there, as for sign and floor.
Grads max_pool_grad_grad_fn(const GradInputs& op, Span g) {
  return {zeros_like(op.inputs[0]), zeros_like(op.inputs[1]),
          max_pool_grad_grad(op.inputs[0], op.inputs[1], g[0], ksize(op), strides(op), padding(op), data_format(op))};
}
Grads max_pool_grad_grad_grad(const GradInputs& op, Span g) {
  return {zeros_like(op.inputs[0]), zeros_like(op.inputs[1]),
          max_pool_grad(op.inputs[0], op.inputs[1], g[0], ksize(op), strides(op), padding(op), data_format(op))};
}
Grads avg_pool_grad_fn(const GradInputs& op, Span g) {
  return {avg_pool_grad(op.inputs[0].shape().as_vector(), g[0], ksize(op), strides(op), padding(op), data_format(op))};
}
Grads avg_pool_grad_grad(const GradInputs& op, Span g) {
  return {avg_pool(g[0], ksize(op), strides(op), padding(op), data_format(op))};
}
}  // namespace

void register_pool_gradients(GradientRegistry& r) {
  r.add("MaxPool", max_pool_grad_fn);
  r.add("MaxPoolGrad", max_pool_grad_grad_fn);
  r.add("MaxPoolGradGrad", max_pool_grad_grad_grad);
  r.add("AvgPool", avg_pool_grad_fn);
  r.add("AvgPoolGrad", avg_pool_grad_grad);
}

}  // namespace tapeflow
