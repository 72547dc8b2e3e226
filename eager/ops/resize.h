// Image resizing with TensorFlow 1.x's kernels and coordinate rules (ResizeBilinear,
// ResizeNearestNeighbor, CropAndResize) and their gradients.
//
//   Tensor img = random_uniform({1, 4, 4, 3});
//   resize_bilinear(img, {8, 8});                                  // legacy (asymmetric) rule
//   resize_bilinear(img, {8, 8}, false, /*half_pixel_centers=*/true);   // tf.image.resize's rule
//   resize_nearest_neighbor(img, {2, 2}, /*align_corners=*/true);
//
// images are [N, H, W, C]; size is {new_height, new_width} (>= 0; an empty output for 0).
// With scale = in / out (align_corners and out > 1: (in - 1) / (out - 1)), output pixel y reads
// input coordinate
//   legacy:             y * scale
//   half_pixel_centers: (y + 0.5) * scale - 0.5
// Bilinear interpolates between floor(coordinate) (at least 0) and the next pixel (at most
// in - 1); nearest takes min(floor(y * scale), in - 1) (legacy; round(y * scale) with
// align_corners) or min(floor((y + 0.5) * scale), in - 1) (half_pixel_centers). align_corners
// and half_pixel_centers together are an InvalidArgumentError, as in TensorFlow. Images of
// any numeric dtype (uint8 as decoded); resize_nearest_neighbor keeps it, resize_bilinear
// interpolates in float32 and returns float32, as TensorFlow does, except for float64 images:
// float64 (TensorFlow: float32), so float64 gradient checks keep their precision. The
// gradients take float32 and float64.
#pragma once

#include <cstdint>
#include <source_location>
#include <string_view>
#include <vector>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()

Tensor resize_bilinear(const Tensor& images, std::vector<int64_t> size, bool align_corners = false,
                       bool half_pixel_centers = false, TF_SL);
Tensor resize_nearest_neighbor(const Tensor& images, std::vector<int64_t> size, bool align_corners = false,
                               bool half_pixel_centers = false, TF_SL);

// d/d images of sum(resize_bilinear(images) * grads), images of original_image's shape (its
// values are not read). Primitive (TensorFlow's ResizeBilinearGrad).
Tensor resize_bilinear_grad(const Tensor& grads, const Tensor& original_image, bool align_corners = false,
                            bool half_pixel_centers = false, TF_SL);
// d/d images of sum(resize_nearest_neighbor(images) * grads) for images of spatial size
// {height, width}. Primitive (TensorFlow's ResizeNearestNeighborGrad).
Tensor resize_nearest_neighbor_grad(const Tensor& grads, std::vector<int64_t> size, bool align_corners = false,
                                    bool half_pixel_centers = false, TF_SL);

// tf.image.crop_and_resize (a CropAndResize node): for each box, a crop of one image resized to
// crop_size {crop_height, crop_width} (each >= 1), as the ROI heads of detection models take them.
//
//   Tensor boxes(std::vector<float>{0, 0, 0.5f, 0.5f,  0.2f, 0.1f, 1, 0.9f}, Shape{2, 4});
//   Tensor box_indices(std::vector<int32_t>{0, 0}, Shape{2});
//   Tensor crops = crop_and_resize(images, boxes, box_indices, {7, 7});   // [2, 7, 7, depth]
//
// images [batch, height, width, depth] (height, width >= 1; any numeric dtype); boxes
// [num_boxes, 4], each (y1, x1, y2, x2) in normalized coordinates: y maps to y * (height - 1),
// so [0, 1] spans the image (y1 > y2 flips the crop; outside [0, 1] is allowed); box_indices
// [num_boxes] int32, the image of each box, in [0, batch) (InvalidArgumentError otherwise).
// Crop row i samples image row y1 * (height - 1) + i * (y2 - y1) * (height - 1) / (crop_height - 1),
// or (y1 + y2) / 2 * (height - 1) when crop_height is 1; columns alike. A sample outside the
// image is extrapolation_value; method "bilinear" interpolates the four pixels around it,
// "nearest" takes the closest one (ties away from zero). The crops are float32 (TensorFlow's
// arithmetic, bit for bit) but float64 for float64 images, and boxes may be float64 too
// (TensorFlow: float32 only), so float64 gradient checks keep their precision. Differentiable
// in images (floating) and in boxes: the bilinear sample moves with its box; a nearest one does
// not (its gradient in boxes is zero, where TensorFlow returns the bilinear one).
Tensor crop_and_resize(const Tensor& images, const Tensor& boxes, const Tensor& box_indices,
                       std::vector<int64_t> crop_size, std::string_view method = "bilinear",
                       float extrapolation_value = 0.f, TF_SL);

// d/d images of sum(crop_and_resize(images, boxes, box_indices, ...) * grads) for images of
// image_size, an int32 [4] tensor (tf.shape(images)): samples outside the image add nothing.
// The result has `dtype` (float32 or float64); its shape is image_size's value, so a graph
// knows only its depth before it runs. Primitive (TensorFlow's CropAndResizeGradImage).
// Its gradient in grads is crop_and_resize; in boxes it is not implemented (UnimplementedError,
// as TensorFlow has none).
Tensor crop_and_resize_grad_image(const Tensor& grads, const Tensor& boxes, const Tensor& box_indices,
                                  const Tensor& image_size, DType dtype, std::string_view method = "bilinear",
                                  TF_SL);
// d/d boxes of sum(crop_and_resize(images, boxes, box_indices, ..., "bilinear") * grads), of
// boxes' dtype. Primitive (TensorFlow's CropAndResizeGradBoxes; bilinear only, as there). Its
// own gradient is not implemented (UnimplementedError, as TensorFlow has none).
Tensor crop_and_resize_grad_boxes(const Tensor& grads, const Tensor& images, const Tensor& boxes,
                                  const Tensor& box_indices, TF_SL);

#undef TF_SL

}  // namespace tapeflow
