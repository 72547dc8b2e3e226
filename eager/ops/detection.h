// Detection heads' post-processing: non-maximum suppression with TensorFlow's rules
// (tf.image.non_max_suppression, a NonMaxSuppressionV3 node).
//
//   Tensor boxes = ...;    // float32 [num_boxes, 4], each (y1, x1, y2, x2), any two corners
//   Tensor scores = ...;   // float32 [num_boxes]
//   Tensor keep = non_max_suppression(boxes, scores, /*max_output_size=*/10, /*iou_threshold=*/0.5f);
//   Tensor kept_boxes = gather(boxes, keep);
//
// The boxes scoring above score_threshold are taken by descending score (a tie: the lower index
// first); each is kept unless its intersection over union with a box kept before is above
// iou_threshold, until max_output_size are kept. A box of zero area overlaps nothing. The
// result is the int32 indices of the kept boxes, in the order kept; its length is known only
// when it runs (an unknown dim in a graph). max_output_size must be >= 0 and iou_threshold in
// [0, 1] (InvalidArgumentError naming the value). Not differentiable.
#pragma once

#include <cstdint>
#include <limits>
#include <source_location>

#include "eager/tensor.h"

namespace tapeflow {

Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_output_size, float iou_threshold = 0.5f,
                           float score_threshold = -std::numeric_limits<float>::infinity(),
                           std::source_location loc = std::source_location::current());

}  // namespace tapeflow
