// Gradients of SpaceToBatchND and BatchToSpaceND: each moves every element once (padding adds
// zeros, cropping drops elements), so the gradient is the other rearrangement of the upstream
// gradient, with the paddings as crops and the crops as paddings.
#include "eager/ops/space_batch.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;
using Ints = std::vector<int64_t>;

Grads space_to_batch_grad(const GradInputs& op, Span g) {
  return {batch_to_space_nd(g[0], op.attrs.get<Ints>("block_shape"), margin_pairs(op.attrs.get<Ints>("paddings")))};
}
Grads batch_to_space_grad(const GradInputs& op, Span g) {
  return {space_to_batch_nd(g[0], op.attrs.get<Ints>("block_shape"), margin_pairs(op.attrs.get<Ints>("crops")))};
}
}  // namespace

void register_space_batch_gradients(GradientRegistry& r) {
  r.add("SpaceToBatchND", space_to_batch_grad);
  r.add("BatchToSpaceND", batch_to_space_grad);
}

}  // namespace tapeflow
