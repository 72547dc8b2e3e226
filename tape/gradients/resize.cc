// Gradients of the resize family. Each resize is linear in its images, with its grad op as the
// adjoint; each grad op is linear in its grads, with the resize as the adjoint (second order).
// CropAndResize also moves with its boxes (CropAndResizeGradBoxes); the boxes' part of the
// second order is not implemented, as in TensorFlow, and says so.
#include <string>

#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/cast.h"
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

std::string method(const GradInputs& op) { return op.attrs.get<std::string>("method"); }
bool floating(const Tensor& t) { return t.dtype() == DType::kFloat32 || t.dtype() == DType::kFloat64; }

// Inputs images, boxes, box_indices. A nearest sample stays on its pixel while its box moves
// a little: zero in boxes (TensorFlow returns the bilinear gradient there too).
Grads crop_and_resize_grad(const GradInputs& op, Span g) {
  const Tensor& images = op.inputs[0];
  const Tensor& boxes = op.inputs[1];
  const Tensor& box_indices = op.inputs[2];
  Grads r(3);
  if (op.needs(0) && floating(images))
    r[0] = crop_and_resize_grad_image(g[0], boxes, box_indices, shape(images), images.dtype(), method(op));
  if (op.needs(1))
    r[1] = method(op) == "bilinear" ? crop_and_resize_grad_boxes(g[0], images, boxes, box_indices) : zeros_like(boxes);
  return r;
}

[[noreturn]] void throw_no_second_order(const GradInputs& op, const char* input) {
  throw UnimplementedError(std::string("the gradient of ") + op.op.type + " with respect to " + input +
                           " is not implemented (a second derivative of crop_and_resize in its boxes)");
}

// Inputs grads, boxes, box_indices, image_size: linear in grads, with crop_and_resize as the
// adjoint (samples outside the image give 0, the extrapolation value's derivative).
Grads crop_grad_image_grad(const GradInputs& op, Span g) {
  if (op.needs(1)) throw_no_second_order(op, "boxes");
  const Shape& grads = op.inputs[0].shape();
  Grads r(4);
  if (op.needs(0)) {
    r[0] = crop_and_resize(g[0], op.inputs[1], op.inputs[2], {grads.dim(1), grads.dim(2)}, method(op));
    if (r[0].dtype() != op.inputs[0].dtype()) r[0] = cast(r[0], op.inputs[0].dtype());
  }
  return r;
}

Grads crop_grad_boxes_grad(const GradInputs& op, Span) {
  throw_no_second_order(op, op.needs(1) ? "images" : op.needs(2) ? "boxes" : "grads");
}
}  // namespace

void register_resize_gradients(GradientRegistry& r) {
  r.add("ResizeBilinear", bilinear_grad);
  r.add("ResizeBilinearGrad", bilinear_grad_grad);
  r.add("ResizeNearestNeighbor", nearest_grad);
  r.add("ResizeNearestNeighborGrad", nearest_grad_grad);
  r.add("CropAndResize", crop_and_resize_grad);
  r.add("CropAndResizeGradImage", crop_grad_image_grad);
  r.add("CropAndResizeGradBoxes", crop_grad_boxes_grad);
}

}  // namespace tapeflow
