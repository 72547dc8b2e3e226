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

std::vector<std::pair<int64_t, int64_t>> pairs(const Ints& flat) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) out.emplace_back(flat[i], flat[i + 1]);
  return out;
}

Grads space_to_batch_grad(const GradInputs& op, Span g) {
  return {batch_to_space_nd(g[0], op.attrs.get<Ints>("block_shape"), pairs(op.attrs.get<Ints>("paddings")))};
}
Grads batch_to_space_grad(const GradInputs& op, Span g) {
  return {space_to_batch_nd(g[0], op.attrs.get<Ints>("block_shape"), pairs(op.attrs.get<Ints>("crops")))};
}
}  // namespace

void register_space_batch_gradients(GradientRegistry& r) {
  r.add("SpaceToBatchND", space_to_batch_grad);
  r.add("BatchToSpaceND", batch_to_space_grad);
}

}  // namespace tapeflow
