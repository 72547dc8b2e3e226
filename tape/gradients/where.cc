// Gradient of where (Select): the upstream gradient flows to the branch that was taken.
#include "eager/ops/where.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
GradList select_grad(const GradInputs& op, absl::Span<const Tensor> g) {
  const Tensor& c = op.inputs[0];
  return {Tensor(), unbroadcast(where(c, g[0], 0), op.inputs[1].shape()),
          unbroadcast(where(c, 0, g[0]), op.inputs[2].shape())};
}
}  // namespace

void register_where_gradients(GradientRegistry& r) { r.add("Select", select_grad); }

}  // namespace tapeflow
