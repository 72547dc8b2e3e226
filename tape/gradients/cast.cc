// Gradient of cast: cast back to the input's dtype; none into an integer or bool input.
#include "eager/ops/cast.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
GradList cast_grad(const GradInputs& op, absl::Span<const Tensor> g) {
  const DType in = op.inputs[0].dtype();
  if (!is_floating(in) || !is_floating(g[0].dtype())) return {Tensor()};
  return {cast(g[0], in)};
}
}  // namespace

void register_cast_gradients(GradientRegistry& r) { r.add("Cast", cast_grad); }

}  // namespace tapeflow
