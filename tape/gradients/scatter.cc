// Gradients of the scatter family (eager/ops/scatter.cc), TensorFlow's formulas, with public
// ops: gather_nd and scatter_nd are each other's gradient, and tensor_scatter_update passes the
// gradient through where it kept the tensor and to the updates where it wrote them.
#include "core/errors.h"
#include "eager/ops/creation.h"
#include "eager/ops/scatter.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

// Each gathered slice came from one place of params: add it back there (repeats add up).
Grads gather_nd_grad(const GradInputs& op, Span g) {
  if (!op.inputs[0].shape().is_fully_defined())
    throw InvalidArgumentError("[gather_nd] its gradient needs the shape of 'params' known, got " +
                               op.inputs[0].shape().to_string());
  return {scatter_nd(op.inputs[1], g[0], op.inputs[0].shape().as_vector()), Tensor()};
}
Grads scatter_nd_grad(const GradInputs& op, Span g) { return {Tensor(), gather_nd(g[0], op.inputs[0])}; }
// The tensor's gradient is g with the overwritten slices zeroed; the updates' is g at them.
// Like TensorFlow's, every one of repeated indices receives g, though only one update is kept.
Grads tensor_scatter_update_grad(const GradInputs& op, Span g) {
  const Tensor& indices = op.inputs[1];
  Grads out = {Tensor(), Tensor(), Tensor()};
  if (op.needs(0)) out[0] = tensor_scatter_update(g[0], indices, zeros_like(op.inputs[2]));
  if (op.needs(2)) out[2] = gather_nd(g[0], indices);
  return out;
}
}  // namespace

void register_scatter_gradients(GradientRegistry& r) {
  r.add("GatherNd", gather_nd_grad);
  r.add("ScatterNd", scatter_nd_grad);
  r.add("TensorScatterUpdate", tensor_scatter_update_grad);
}

}  // namespace tapeflow
