// Image resizing with TensorFlow 1.x's kernels and coordinate rules (ResizeBilinear,
// ResizeNearestNeighbor) and their gradients.
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

#undef TF_SL

}  // namespace tapeflow
