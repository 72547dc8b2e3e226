// Detection heads' post-processing: non-maximum suppression with TensorFlow's rules
// (tf.image.non_max_suppression, a NonMaxSuppressionV3 node; and per class over a batch,
// tf.image.combined_non_max_suppression, a CombinedNonMaxSuppression node, below).
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

// tf.image.non_max_suppression_with_scores (a NonMaxSuppressionV5 node): the same selection with
// the selected boxes' scores, and soft NMS (Bodla et al. 2017) when soft_nms_sigma > 0: instead
// of dropping a box that overlaps a selected one, its score is scaled by exp(-iou^2 / (2 sigma))
// for each selected box, and it is selected later if it still scores above score_threshold (its
// scaled score is the one returned). With pad_to_max_output_size the indices and scores are
// padded with zeros to max_output_size. soft_nms_sigma must be >= 0 (InvalidArgumentError).
struct NmsWithScores {
  Tensor selected_indices;  // int32 [selected] (or [max_output_size] when padded)
  Tensor selected_scores;   // float32, as selected_indices
  Tensor valid_outputs;     // int32 scalar: how many were selected
};
NmsWithScores non_max_suppression_with_scores(const Tensor& boxes, const Tensor& scores, int64_t max_output_size,
                                              float iou_threshold = 0.5f,
                                              float score_threshold = -std::numeric_limits<float>::infinity(),
                                              float soft_nms_sigma = 0.f, bool pad_to_max_output_size = false,
                                              std::source_location loc = std::source_location::current());

// tf.image.combined_non_max_suppression: for each image of a batch, non_max_suppression of each
// class on its own (at most max_output_size_per_class boxes each), then the kept boxes of every
// class by descending score (a tie: the lower class, then the earlier kept), at most
// max_total_size of them.
//
//   auto det = combined_non_max_suppression(boxes, scores, /*max_output_size_per_class=*/100,
//                                           /*max_total_size=*/100, 0.5f, 0.05f);
//   // det.boxes [batch, 100, 4], det.scores / det.classes [batch, 100], det.valid_detections [batch]
//
// boxes float32 [batch, num_boxes, q, 4], each (y1, x1, y2, x2), q 1 (one box for every class)
// or num_classes; scores float32 [batch, num_boxes, num_classes]. Each image's detections fill
// the first valid_detections rows; the rest are zeros. The detections' count is max_total_size,
// or with pad_per_class min(max_total_size, max_output_size_per_class * num_classes).
// clip_boxes clamps the coordinates written to [0, 1] (the selection uses the boxes as given).
// max_output_size_per_class and max_total_size must be positive (TensorFlow's rule),
// iou_threshold in [0, 1]: InvalidArgumentError naming the value. Not differentiable.
struct CombinedNms {
  Tensor boxes;             // float32 [batch, detections, 4]
  Tensor scores;            // float32 [batch, detections]
  Tensor classes;           // float32 [batch, detections], the class index
  Tensor valid_detections;  // int32 [batch]
};
CombinedNms combined_non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_output_size_per_class,
                                         int64_t max_total_size, float iou_threshold = 0.5f,
                                         float score_threshold = -std::numeric_limits<float>::infinity(),
                                         bool pad_per_class = false, bool clip_boxes = true,
                                         std::source_location loc = std::source_location::current());

}  // namespace tapeflow
