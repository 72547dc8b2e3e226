// CPU kernels of the detection family (eager/ops/detection.h): NonMaxSuppressionV3 and
// CombinedNonMaxSuppression with TensorFlow's arithmetic (its IOU and greedy selection in
// non_max_suppression_op.cc's order).
#include <algorithm>
#include <cmath>
#include <queue>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cpu/register.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

struct Box {
  float ymin, xmin, ymax, xmax, area;
};

// Either pair of opposite corners names the box.
Box box_at(const float* b) {
  Box r{std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3]), 0.f};
  r.area = (r.ymax - r.ymin) * (r.xmax - r.xmin);
  return r;
}

// Intersection over union; 0 when either box has no area.
float iou(const Box& a, const Box& b) {
  if (a.area <= 0 || b.area <= 0) return 0.f;
  const float h = std::max(std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin), 0.f);
  const float w = std::max(std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin), 0.f);
  const float inter = h * w;
  return inter / (a.area + b.area - inter);
}

// TensorFlow's selection over n boxes (box i at boxes + i * box_stride, its score at
// scores[i * score_stride]), in its order of operations: candidates scoring above
// score_threshold, highest score first (a tie: the lower index). With soft_nms_sigma 0 a
// candidate is dropped when its IOU with a selected box is above iou_threshold. With
// soft_nms_sigma > 0 (soft NMS, Bodla et al. 2017) each selected box it has not yet met scales
// its score by exp(-iou^2 / (2 sigma)), whatever the IOU; a candidate whose score changed goes
// back among the candidates if it is still above score_threshold. Until max_output are selected.
struct Selection {
  std::vector<int32_t> indices;
  std::vector<float> scores;  // as selected (rescored by soft NMS)
};

// plain_iou_test: CombinedNonMaxSuppression's per-class rule, which drops a candidate only when an
// IOU is above the threshold (a NaN IOU, from NaN corners, keeps it); V3 and V5 weigh the score
// by 0 there, as TensorFlow's kernels do.
Selection select_boxes(int64_t n, const float* boxes, int64_t box_stride, const float* scores, int64_t score_stride,
                       int64_t max_output, float iou_threshold, float score_threshold, float soft_nms_sigma = 0.f,
                       bool plain_iou_test = false) {
  struct Candidate {
    int64_t box;
    float score;
    size_t met = 0;  // selected boxes already compared with
  };
  auto lower = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.box > b.box);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)> queue(lower);
  for (int64_t i = 0; i < n; ++i)
    if (scores[i * score_stride] > score_threshold) queue.push(Candidate{i, scores[i * score_stride]});
  const bool soft = soft_nms_sigma > 0;
  const float scale = soft ? -0.5f / soft_nms_sigma : 0.f;
  Selection r;
  std::vector<Box> selected;
  while (static_cast<int64_t>(r.indices.size()) < max_output && !queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    const float original = c.score;
    const Box box = box_at(boxes + c.box * box_stride);
    bool dropped = false;
    for (size_t j = selected.size(); j-- > c.met;) {
      const float similarity = iou(box, selected[j]);
      if (plain_iou_test) {
        dropped = similarity > iou_threshold;
        if (dropped) break;
        continue;
      }
      c.score *= soft || similarity <= iou_threshold ? std::exp(scale * similarity * similarity) : 0.f;
      if (!soft && similarity > iou_threshold) {
        dropped = true;
        break;
      }
      if (c.score <= score_threshold) break;
    }
    c.met = selected.size();
    if (dropped) continue;
    if (c.score == original) {
      r.indices.push_back(static_cast<int32_t>(c.box));
      r.scores.push_back(c.score);
      selected.push_back(box);
    } else if (c.score > score_threshold) {
      queue.push(c);
    }
  }
  return r;
}

absl::Status check_iou_threshold(const KernelContext& ctx, float iou_threshold) {
  if (!(iou_threshold >= 0 && iou_threshold <= 1))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] iou_threshold must be in [0, 1], got ", iou_threshold));
  return absl::OkStatus();
}

// V3's and V5's boxes [n, 4] and scores [n] (inputs 0 and 1, checked to agree when run) and their
// thresholds iou_threshold and score_threshold (inputs iou_at and iou_at + 1).
struct NmsInputs {
  int64_t n;
  const float* boxes;
  const float* scores;
  float iou_threshold, score_threshold;
};

absl::StatusOr<NmsInputs> nms_inputs(const KernelContext& ctx, int iou_at) {
  const DeviceTensor& boxes = ctx.input(0);
  const DeviceTensor& scores = ctx.input(1);
  const int64_t n = boxes.shape.dim(0);
  if (scores.shape.dim(0) != n)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] 'scores' has ", scores.shape.dim(0),
                                                   " entries for ", n, " boxes"));
  const NmsInputs r{n, boxes.data<float>(), scores.data<float>(), *ctx.input(iou_at).data<float>(),
                    *ctx.input(iou_at + 1).data<float>()};
  TF_RETURN_IF_ERROR(check_iou_threshold(ctx, r.iou_threshold));
  return r;
}

absl::Status nms_kernel(KernelContext& ctx) {
  const int64_t max_output = *ctx.input(2).data<int32_t>();
  if (max_output < 0)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] max_output_size must be non-negative, got ", max_output));
  TF_ASSIGN_OR_RETURN(const NmsInputs in, nms_inputs(ctx, 3));
  const std::vector<int32_t> kept =
      select_boxes(in.n, in.boxes, 4, in.scores, 1, max_output, in.iou_threshold, in.score_threshold).indices;
  DeviceTensor& out = ctx.output(0);  // Note [Data-dependent output shapes]
  out.dtype = DType::kInt32;
  out.shape = Shape{static_cast<int64_t>(kept.size())};
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));
  std::copy(kept.begin(), kept.end(), out.data<int32_t>());
  return absl::OkStatus();
}

// CombinedNonMaxSuppression: per image, greedy_nms of each class, then the kept boxes of every
// class by descending score (stable: a tie keeps the lower class, then the earlier kept; TensorFlow
// leaves ties unordered), the first `detections` of them written, the rest zeros.
absl::Status combined_nms_kernel(KernelContext& ctx) {
  const DeviceTensor& boxes = ctx.input(0);
  const DeviceTensor& scores = ctx.input(1);
  const int64_t batch = boxes.shape.dim(0), n = boxes.shape.dim(1), q = boxes.shape.dim(2);
  const int64_t classes = scores.shape.dim(2);
  if (scores.shape.dim(0) != batch || scores.shape.dim(1) != n || (q != 1 && q != classes))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] 'boxes' ", boxes.shape.to_string(), " and 'scores' ",
                                                   scores.shape.to_string(),
                                                   " must agree in batch and num_boxes, with q 1 or num_classes"));
  const float iou_threshold = *ctx.input(2).data<float>(), score_threshold = *ctx.input(3).data<float>();
  TF_RETURN_IF_ERROR(check_iou_threshold(ctx, iou_threshold));
  const int64_t per_class = ctx.attrs.get<int64_t>("max_output_size_per_class");
  const bool clip = ctx.attrs.get<bool>("clip_boxes");
  DeviceTensor& out_boxes = ctx.output(0);
  const int64_t detections = out_boxes.shape.dim(1);
  float* ob = out_boxes.data<float>();
  float* os = ctx.output(1).data<float>();
  float* oc = ctx.output(2).data<float>();
  int32_t* valid = ctx.output(3).data<int32_t>();
  std::fill_n(ob, out_boxes.num_elements(), 0.f);
  std::fill_n(os, ctx.output(1).num_elements(), 0.f);
  std::fill_n(oc, ctx.output(2).num_elements(), 0.f);
  struct Kept {
    float score;
    int64_t cls, box;
  };
  for (int64_t b = 0; b < batch; ++b) {
    const float* bb = boxes.data<float>() + b * n * q * 4;
    const float* sb = scores.data<float>() + b * n * classes;
    std::vector<Kept> all;
    for (int64_t c = 0; c < classes && detections > 0 && n > 0; ++c)  // (classes may be a huge empty dim)
      for (int32_t i : select_boxes(n, bb + (q == 1 ? 0 : c * 4), q * 4, sb + c, classes, per_class, iou_threshold,
                                    score_threshold, 0.f, /*plain_iou_test=*/true).indices)
        all.push_back(Kept{sb[i * classes + c], c, i});
    std::stable_sort(all.begin(), all.end(), [](const Kept& x, const Kept& y) { return x.score > y.score; });
    const int64_t count = std::min<int64_t>(detections, static_cast<int64_t>(all.size()));
    for (int64_t k = 0; k < count; ++k) {
      const Kept& d = all[k];
      const float* src = bb + (d.box * q + (q == 1 ? 0 : d.cls)) * 4;
      float* dst = ob + (b * detections + k) * 4;
      for (int j = 0; j < 4; ++j) dst[j] = clip ? std::clamp(src[j], 0.f, 1.f) : src[j];
      os[b * detections + k] = d.score;
      oc[b * detections + k] = static_cast<float>(d.cls);
    }
    valid[b] = static_cast<int32_t>(count);
  }
  return absl::OkStatus();
}

// NonMaxSuppressionV5: inputs boxes, scores, iou_threshold, score_threshold, soft_nms_sigma;
// attrs max_output_size, pad_to_max_output_size. Outputs the selected indices and their
// (rescored) scores, zeros to max_output_size when padded, and how many were selected.
absl::Status nms_with_scores_kernel(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(const NmsInputs in, nms_inputs(ctx, 2));
  const float sigma = *ctx.input(4).data<float>();
  if (!(sigma >= 0))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] soft_nms_sigma must be non-negative, got ", sigma));
  const int64_t max_output = ctx.attrs.get<int64_t>("max_output_size");
  const Selection picked =
      select_boxes(in.n, in.boxes, 4, in.scores, 1, max_output, in.iou_threshold, in.score_threshold, sigma);
  const int64_t count = static_cast<int64_t>(picked.indices.size());
  const int64_t rows = ctx.attrs.get<bool>("pad_to_max_output_size") ? max_output : count;
  DeviceTensor& indices = ctx.output(0);  // Note [Data-dependent output shapes]
  DeviceTensor& kept_scores = ctx.output(1);
  DeviceTensor& valid = ctx.output(2);
  // Outputs whose shape inference knew (the padded ones, the scalar) come allocated.
  for (DeviceTensor* t : {&indices, &kept_scores, &valid}) {
    if (t->buffer) continue;
    if (t != &valid) t->shape = Shape{rows};
    TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(*t));
  }
  std::fill_n(std::copy(picked.indices.begin(), picked.indices.end(), indices.data<int32_t>()), rows - count, 0);
  std::fill_n(std::copy(picked.scores.begin(), picked.scores.end(), kept_scores.data<float>()), rows - count, 0.f);
  *valid.data<int32_t>() = static_cast<int32_t>(count);
  return absl::OkStatus();
}

}  // namespace

void register_detection_kernels(KernelRegistry& r) {
  r.add("NonMaxSuppressionV3", DeviceType::kCPU, DType::kFloat32, nms_kernel);
  r.add("CombinedNonMaxSuppression", DeviceType::kCPU, DType::kFloat32, combined_nms_kernel);
  r.add("NonMaxSuppressionV5", DeviceType::kCPU, DType::kFloat32, nms_with_scores_kernel);
}

}  // namespace tapeflow::cpu
