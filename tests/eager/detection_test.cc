// non_max_suppression with TensorFlow's rules: TensorFlow's own three-cluster example, the
// score threshold, the output limit, corner order, ties, boxes of no area, NaN scores, empty
// input, errors, and a run as a graph node with an unknown number of boxes. Then
// combined_non_max_suppression: per class, merged by score, limited, padded and clipped.
#include "eager/ops/detection.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Three clusters of boxes (y1, x1, y2, x2): around x = 0 (scores 0.9, 0.75, 0.6), x = 10
// (0.95, 0.5) and x = 100 (0.3). Neighbours within a cluster overlap with IoU 0.9 / 1.1 = 0.82.
const Tensor kBoxes(std::vector<float>{0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f,
                                       0, 100, 1, 101},
                    Shape{6, 4});
const Tensor kScores({0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});

std::vector<int32_t> kept(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::kInt32);
  return t.to_vector<int32_t>();
}

TEST(NonMaxSuppressionTest, KeepsOneBoxPerClusterByScore) {
  EXPECT_THAT(kept(non_max_suppression(kBoxes, kScores, 3, 0.5f)), ElementsAre(3, 0, 5));
  EXPECT_THAT(kept(non_max_suppression(kBoxes, kScores, 2, 0.5f)), ElementsAre(3, 0));  // the limit
  EXPECT_THAT(kept(non_max_suppression(kBoxes, kScores, 6, 0.5f, 0.4f)), ElementsAre(3, 0));  // 0.3 <= 0.4
  EXPECT_THAT(kept(non_max_suppression(kBoxes, kScores, 0, 0.5f)), IsEmpty());
  // IoU 0.82 is not above 0.9 (nothing suppressed), and above 0 (every overlap suppressed).
  EXPECT_THAT(kept(non_max_suppression(kBoxes, kScores, 10, 0.9f)), ElementsAre(3, 0, 1, 2, 4, 5));
  EXPECT_THAT(kept(non_max_suppression(kBoxes, kScores, 10, 0.f)), ElementsAre(3, 0, 5));
  // Corners in the other order name the same boxes.
  std::vector<float> flipped = kBoxes.to_vector<float>();
  for (size_t i = 0; i < flipped.size(); i += 4) std::swap(flipped[i], flipped[i + 2]);
  EXPECT_THAT(kept(non_max_suppression(Tensor(flipped, Shape{6, 4}), kScores, 3, 0.5f)), ElementsAre(3, 0, 5));
}

TEST(NonMaxSuppressionTest, TiesNoAreaNanAndEmpty) {
  // Equal scores: the lower index first. A box of no area (index 1, a line) overlaps nothing. A
  // NaN score is never above the threshold.
  const Tensor boxes(std::vector<float>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 5, 5, 6, 6}, Shape{4, 4});
  EXPECT_THAT(kept(non_max_suppression(boxes, Tensor({0.5f, 0.5f, 0.5f, std::nanf("")}), 10, 0.5f)),
              ElementsAre(0, 1));
  EXPECT_THAT(kept(non_max_suppression(zeros({0, 4}), zeros({0}), 5)), IsEmpty());
}

TEST(NonMaxSuppressionTest, ErrorsNameTheInput) {
  EXPECT_THAT(error_of([] { non_max_suppression(kBoxes, kScores, 3, 1.5f); }),
              HasSubstr("[non_max_suppression] iou_threshold must be in [0, 1], got 1.5"));
  EXPECT_THAT(error_of([] { non_max_suppression(kBoxes, kScores, -1); }),
              HasSubstr("[non_max_suppression] max_output_size must be in [0, 2^31), got -1"));
  EXPECT_THAT(error_of([] { non_max_suppression(zeros({6, 5}), kScores, 3); }),
              HasSubstr("[non_max_suppression] input 'boxes' must have shape [num_boxes, 4], got [6,5]"));
  EXPECT_THAT(error_of([] { non_max_suppression(kBoxes, zeros({5}), 3); }),
              HasSubstr("input 'scores' must have shape [num_boxes] = [6], got [5]"));
  EXPECT_THAT(error_of([] { non_max_suppression(cast(kBoxes, DType::kFloat64), kScores, 3); }),
              HasSubstr("input 'boxes' has dtype float64"));
}

TEST(NonMaxSuppressionTest, RunsAsAGraphNodeOverUnknownBoxes) {
  auto detect = function([](const Tensor& boxes, const Tensor& scores) {
    const Tensor keep = non_max_suppression(boxes, scores, 3, 0.5f);
    EXPECT_EQ(keep.shape(), Shape({-1}));
    return gather(boxes, keep);
  });
  ConcreteFunction& cf = detect.get_concrete_function({{DType::kFloat32, {-1, 4}}, {DType::kFloat32, {-1}}});
  const Tensor picked = cf({kBoxes, kScores})[0];
  EXPECT_EQ(picked.shape(), (Shape{3, 4}));
  EXPECT_THAT(picked.to_vector<float>(), ElementsAre(0, 10, 1, 11, 0, 0, 1, 1, 0, 100, 1, 101));
  // Scores of another length than the boxes pass the graph's static shapes, not the run's.
  EXPECT_THAT(error_of([&] { cf({kBoxes, zeros({4})}); }),
              HasSubstr("[non_max_suppression] input 'scores' must have shape [num_boxes] = [6], got [4]"));
}

// Boxes A (0, 0, 1, 1), B (0, 0.5, 1, 1.5) with IoU 1/3 with A, and C far away; scores 0.9,
// 0.8, 0.75. Soft NMS with sigma 0.5 scales B by exp(-(1/3)^2 / (2 * 0.5)) once A is selected.
const Tensor kSoftBoxes(std::vector<float>{0, 0, 1, 1, 0, 0.5f, 1, 1.5f, 5, 5, 6, 6}, Shape{3, 4});
const Tensor kSoftScores({0.9f, 0.8f, 0.75f});

TEST(NonMaxSuppressionWithScoresTest, SoftNmsRescoresInsteadOfDropping) {
  const float b = 0.8f * std::exp(-1.f / 9);  // 0.7159
  // Hard NMS at IoU 0.3 drops B; soft NMS rescores it, so C (0.75) comes before it.
  const NmsWithScores hard = non_max_suppression_with_scores(kSoftBoxes, kSoftScores, 5, 0.3f);
  EXPECT_THAT(kept(hard.selected_indices), ElementsAre(0, 2));
  EXPECT_THAT(hard.selected_scores.to_vector<float>(), ElementsAre(0.9f, 0.75f));
  EXPECT_EQ(hard.valid_outputs.item<int32_t>(), 2);
  const NmsWithScores soft = non_max_suppression_with_scores(kSoftBoxes, kSoftScores, 5, 0.3f, 0.f, 0.5f);
  EXPECT_THAT(kept(soft.selected_indices), ElementsAre(0, 2, 1));
  const std::vector<float> s = soft.selected_scores.to_vector<float>();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], 0.9f);
  EXPECT_EQ(s[1], 0.75f);
  EXPECT_NEAR(s[2], b, 1e-6);
  // A rescored box at or below the score threshold is dropped; the limit counts selections.
  EXPECT_THAT(kept(non_max_suppression_with_scores(kSoftBoxes, kSoftScores, 5, 0.3f, 0.72f, 0.5f).selected_indices),
              ElementsAre(0, 2));
  EXPECT_THAT(kept(non_max_suppression_with_scores(kSoftBoxes, kSoftScores, 2, 0.3f, 0.f, 0.5f).selected_indices),
              ElementsAre(0, 2));
  // Padded to the limit with zeros; the static shape is the limit.
  const NmsWithScores padded = non_max_suppression_with_scores(kSoftBoxes, kSoftScores, 5, 0.3f, 0.f, 0.5f, true);
  EXPECT_THAT(kept(padded.selected_indices), ElementsAre(0, 2, 1, 0, 0));
  EXPECT_EQ(padded.selected_scores.shape(), (Shape{5}));
  EXPECT_EQ(padded.selected_scores.to_vector<float>()[4], 0.f);
  EXPECT_EQ(padded.valid_outputs.item<int32_t>(), 3);
  // Without soft NMS it is non_max_suppression with the kept scores.
  const NmsWithScores plain = non_max_suppression_with_scores(kBoxes, kScores, 4, 0.5f);
  EXPECT_EQ(kept(plain.selected_indices), kept(non_max_suppression(kBoxes, kScores, 4, 0.5f)));
  EXPECT_THAT(plain.selected_scores.to_vector<float>(), ElementsAre(0.95f, 0.9f, 0.3f));
  EXPECT_THAT(error_of([] { non_max_suppression_with_scores(kSoftBoxes, kSoftScores, 5, 0.3f, 0.f, -1.f); }),
              HasSubstr("[non_max_suppression_with_scores] soft_nms_sigma must be non-negative, got -1"));
  EXPECT_THAT(error_of([] { non_max_suppression_with_scores(kSoftBoxes, kSoftScores, -1); }),
              HasSubstr("[non_max_suppression_with_scores] max_output_size must be in [0, 2^31), got -1"));
}

// Four boxes in two pairs (IoU 0.82 within a pair), shared by two classes (q = 1):
//   box     0 (0, 0, .5, .5)   1 (0, .05, .5, .55)   2 (.5, .5, 1, 1)   3 (.5, .55, 1, 1.05)
//   class 0    0.9                0.8                    0.3                0.2
//   class 1    0.1                0.7                    0.6                0.65
// At IoU 0.5, class 0 keeps boxes 0 and 2, class 1 boxes 1 and 3; merged by score: (0, box 0,
// 0.9), (1, box 1, 0.7), (1, box 3, 0.65), (0, box 2, 0.3).
const Tensor kPairBoxes(std::vector<float>{0, 0, 0.5f, 0.5f, 0, 0.05f, 0.5f, 0.55f, 0.5f, 0.5f, 1, 1, 0.5f, 0.55f, 1, 1.05f},
                        Shape{1, 4, 1, 4});
const Tensor kPairScores(std::vector<float>{0.9f, 0.1f, 0.8f, 0.7f, 0.3f, 0.6f, 0.2f, 0.65f}, Shape{1, 4, 2});

TEST(CombinedNonMaxSuppressionTest, KeepsPerClassThenMergesByScore) {
  const CombinedNms d = combined_non_max_suppression(kPairBoxes, kPairScores, 10, 3, 0.5f);
  EXPECT_EQ(d.boxes.shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(d.classes.shape(), (Shape{1, 3}));
  EXPECT_THAT(d.scores.to_vector<float>(), ElementsAre(0.9f, 0.7f, 0.65f));
  EXPECT_THAT(d.classes.to_vector<float>(), ElementsAre(0, 1, 1));
  // Box 3's x2 = 1.05 is clipped to 1 in the output.
  EXPECT_THAT(d.boxes.to_vector<float>(), ElementsAre(0, 0, 0.5f, 0.5f, 0, 0.05f, 0.5f, 0.55f, 0.5f, 0.55f, 1, 1));
  EXPECT_THAT(d.valid_detections.to_vector<int32_t>(), ElementsAre(3));
  EXPECT_EQ(d.valid_detections.dtype(), DType::kInt32);
  // Room for six: four found, two rows of zeros; boxes as given without clipping.
  const CombinedNms all = combined_non_max_suppression(kPairBoxes, kPairScores, 10, 6, 0.5f, -1.f, false, false);
  EXPECT_THAT(all.scores.to_vector<float>(), ElementsAre(0.9f, 0.7f, 0.65f, 0.3f, 0, 0));
  EXPECT_THAT(all.classes.to_vector<float>(), ElementsAre(0, 1, 1, 0, 0, 0));
  EXPECT_FLOAT_EQ(all.boxes.to_vector<float>()[11], 1.05f);
  EXPECT_THAT(all.valid_detections.to_vector<int32_t>(), ElementsAre(4));
  // One per class, padded per class: min(6, 1 * 2) rows.
  const CombinedNms one = combined_non_max_suppression(kPairBoxes, kPairScores, 1, 6, 0.5f, -1.f, true);
  EXPECT_EQ(one.scores.shape(), (Shape{1, 2}));
  EXPECT_THAT(one.scores.to_vector<float>(), ElementsAre(0.9f, 0.7f));
  // A score threshold of 0.5 drops class 0's boxes 2 and 3 (0.3, 0.2) and class 1's box 0 (0.1).
  const CombinedNms high = combined_non_max_suppression(kPairBoxes, kPairScores, 10, 4, 0.5f, 0.5f);
  EXPECT_THAT(high.scores.to_vector<float>(), ElementsAre(0.9f, 0.7f, 0.65f, 0));
  EXPECT_THAT(high.valid_detections.to_vector<int32_t>(), ElementsAre(3));
}

TEST(CombinedNonMaxSuppressionTest, ClassBoxesBatchesAndTies) {
  // q = num_classes: each class has its own box per anchor. Image 1 scores class 1 only; a tie
  // of equal scores keeps the lower class first.
  const Tensor boxes(std::vector<float>{0, 0, 0.1f, 0.1f, 0.2f, 0.2f, 0.3f, 0.3f,   // image 0, anchor 0: class 0, class 1
                                        0.5f, 0.5f, 0.6f, 0.6f, 0.7f, 0.7f, 0.8f, 0.8f,  // anchor 1
                                        0, 0, 1, 1, 0, 0, 0.4f, 0.4f,  // image 1, anchor 0
                                        0, 0, 1, 1, 0.6f, 0.6f, 1, 1},  // anchor 1
                     Shape{2, 2, 2, 4});
  const Tensor scores(std::vector<float>{0.5f, 0.5f, 0.2f, 0.1f, 0, 0.4f, 0, 0.8f}, Shape{2, 2, 2});
  const CombinedNms d = combined_non_max_suppression(boxes, scores, 2, 3, 0.5f, 0.05f);
  EXPECT_EQ(d.boxes.shape(), (Shape{2, 3, 4}));
  EXPECT_THAT(d.classes.to_vector<float>(), ElementsAre(0, 1, 0, 1, 1, 0));
  EXPECT_THAT(d.scores.to_vector<float>(), ElementsAre(0.5f, 0.5f, 0.2f, 0.8f, 0.4f, 0));
  EXPECT_THAT(d.boxes.to_vector<float>(),
              ElementsAre(0, 0, 0.1f, 0.1f, 0.2f, 0.2f, 0.3f, 0.3f, 0.5f, 0.5f, 0.6f, 0.6f,  // image 0
                          0.6f, 0.6f, 1, 1, 0, 0, 0.4f, 0.4f, 0, 0, 0, 0));                // image 1
  EXPECT_THAT(d.valid_detections.to_vector<int32_t>(), ElementsAre(3, 2));
  // No boxes: every row is padding.
  const CombinedNms none = combined_non_max_suppression(zeros({2, 0, 1, 4}), zeros({2, 0, 3}), 5, 2);
  EXPECT_THAT(none.valid_detections.to_vector<int32_t>(), ElementsAre(0, 0));
  EXPECT_THAT(none.scores.to_vector<float>(), ElementsAre(0, 0, 0, 0));
}

// A box with NaN corners has a NaN IoU with every other: CombinedNonMaxSuppression keeps it (its
// per-class test is "IoU above the threshold"), as TensorFlow's does.
TEST(CombinedNonMaxSuppressionTest, ABoxWithNanCornersIsKept) {
  const float nan = std::nanf("");
  const Tensor boxes(std::vector<float>{0, 0, 1, 1, nan, 0, 1, 1}, Shape{1, 2, 1, 4});
  const Tensor scores(std::vector<float>{0.9f, 0.8f}, Shape{1, 2, 1});
  const CombinedNms d = combined_non_max_suppression(boxes, scores, 5, 5, 0.5f, 0.5f);
  EXPECT_THAT(d.valid_detections.to_vector<int32_t>(), ElementsAre(2));
  EXPECT_THAT(d.scores.to_vector<float>(), ElementsAre(0.9f, 0.8f, 0, 0, 0));
}

TEST(CombinedNonMaxSuppressionTest, ErrorsNameTheInput) {
  EXPECT_THAT(error_of([] { combined_non_max_suppression(zeros({1, 4, 3, 4}), zeros({1, 4, 2}), 5, 5); }),
              HasSubstr("[combined_non_max_suppression] dim 2 of 'boxes' [1,4,3,4] must be 1 or num_classes = 2"));
  EXPECT_THAT(error_of([] { combined_non_max_suppression(kPairBoxes, kPairScores, 5, 0); }),
              HasSubstr("[combined_non_max_suppression] max_total_size must be in [1, 2^31), got 0"));
  EXPECT_THAT(error_of([] { combined_non_max_suppression(kPairBoxes, kPairScores, -2, 5); }),
              HasSubstr("max_output_size_per_class must be in [1, 2^31), got -2"));
  EXPECT_THAT(error_of([] { combined_non_max_suppression(kPairBoxes, kPairScores, 5, 5, 1.5f); }),
              HasSubstr("[combined_non_max_suppression] iou_threshold must be in [0, 1], got 1.5"));
  EXPECT_THAT(error_of([] { combined_non_max_suppression(kPairBoxes, zeros({1, 3, 2}), 5, 5); }),
              HasSubstr("'boxes' [1,4,1,4] and 'scores' [1,3,2] must agree in batch and num_boxes"));
  EXPECT_THAT(error_of([] { combined_non_max_suppression(zeros({4, 1, 4}), zeros({1, 4, 2}), 5, 5); }),
              HasSubstr("input 'boxes' must have shape [batch, num_boxes, q, 4], got [4,1,4]"));
}

TEST(CombinedNonMaxSuppressionTest, RunsAsAGraphNodeOverUnknownBatchesAndBoxes) {
  auto detect = function([](const Tensor& boxes, const Tensor& scores) {
    const CombinedNms d = combined_non_max_suppression(boxes, scores, 10, 3, 0.5f);
    EXPECT_EQ(d.boxes.shape(), (Shape{-1, 3, 4}));
    EXPECT_EQ(d.valid_detections.shape(), (Shape{-1}));
    return d.scores;
  });
  ConcreteFunction& cf =
      detect.get_concrete_function({{DType::kFloat32, {-1, -1, 1, 4}}, {DType::kFloat32, {-1, -1, 2}}});
  EXPECT_THAT(cf({kPairBoxes, kPairScores})[0].to_vector<float>(), ElementsAre(0.9f, 0.7f, 0.65f));
}

}  // namespace
}  // namespace tapeflow
