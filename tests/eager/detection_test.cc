// non_max_suppression with TensorFlow's rules: TensorFlow's own three-cluster example, the
// score threshold, the output limit, corner order, ties, boxes of no area, NaN scores, empty
// input, errors, and a run as a graph node with an unknown number of boxes.
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

}  // namespace
}  // namespace tapeflow
