// Gradients of the resize family. Each resize is linear in its images, with its grad op as the
// adjoint; each grad op is linear in its grads, with the resize as the adjoint (second order).
#include "eager/ops/creation.h"
#include "eager/ops/resize.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

bool align_corners(const GradInputs& op) { return op.attrs.get<bool>("align_corners"); }
bool half_pixel(const GradInputs& op) { return op.attrs.get<bool>("half_pixel_centers"); }
std::vector<int64_t> spatial(const Tensor& t) { return {t.shape().dim(1), t.shape().dim(2)}; }

Grads bilinear_grad(const GradInputs& op, Span g) {
  return {resize_bilinear_grad(g[0], op.inputs[0], align_corners(op), half_pixel(op))};
}
// Linear in grads; original_image only lends its shape.
Grads bilinear_grad_grad(const GradInputs& op, Span g) {
  return {resize_bilinear(g[0], spatial(op.inputs[0]), align_corners(op), half_pixel(op)), zeros_like(op.inputs[1])};
}
Grads nearest_grad(const GradInputs& op, Span g) {
  return {resize_nearest_neighbor_grad(g[0], spatial(op.inputs[0]), align_corners(op), half_pixel(op))};
}
Grads nearest_grad_grad(const GradInputs& op, Span g) {
  return {resize_nearest_neighbor(g[0], spatial(op.inputs[0]), align_corners(op), half_pixel(op))};
}
}  // namespace

void register_resize_gradients(GradientRegistry& r) {
  r.add("ResizeBilinear", bilinear_grad);
  r.add("ResizeBilinearGrad", bilinear_grad_grad);
  r.add("ResizeNearestNeighbor", nearest_grad);
  r.add("ResizeNearestNeighborGrad", nearest_grad_grad);
}

}  // namespace tapeflow
