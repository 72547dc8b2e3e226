// CPU kernels of the detection family (eager/ops/detection.h): NonMaxSuppressionV3 and
// CombinedNonMaxSuppression with TensorFlow's arithmetic (its IOU and greedy selection in
// non_max_suppression_op.cc's order).
#include <algorithm>
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

// TensorFlow's greedy selection over n boxes (box i at boxes + i * box_stride, its score at
// scores[i * score_stride]): those scoring above score_threshold by descending score (a tie:
// the lower index first), each kept unless its IOU with a box kept before is above
// iou_threshold, until max_output are kept. The kept indices, in the order kept.
std::vector<int32_t> greedy_nms(int64_t n, const float* boxes, int64_t box_stride, const float* scores,
                                int64_t score_stride, int64_t max_output, float iou_threshold, float score_threshold) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i)
    if (scores[i * score_stride] > score_threshold) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t i, int64_t j) { return scores[i * score_stride] > scores[j * score_stride]; });
  std::vector<int32_t> kept;
  std::vector<Box> kept_boxes;
  for (int64_t i : order) {
    if (static_cast<int64_t>(kept.size()) >= max_output) break;
    const Box candidate = box_at(boxes + i * box_stride);
    bool suppressed = false;
    for (const Box& k : kept_boxes)
      if (iou(candidate, k) > iou_threshold) {
        suppressed = true;
        break;
      }
    if (suppressed) continue;
    kept.push_back(static_cast<int32_t>(i));
    kept_boxes.push_back(candidate);
  }
  return kept;
}

absl::Status check_iou_threshold(const KernelContext& ctx, float iou_threshold) {
  if (!(iou_threshold >= 0 && iou_threshold <= 1))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] iou_threshold must be in [0, 1], got ", iou_threshold));
  return absl::OkStatus();
}

absl::Status nms_kernel(KernelContext& ctx) {
  const DeviceTensor& boxes = ctx.input(0);
  const DeviceTensor& scores = ctx.input(1);
  const int64_t n = boxes.shape.dim(0);
  if (scores.shape.dim(0) != n)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] 'scores' has ", scores.shape.dim(0),
                                                   " entries for ", n, " boxes"));
  const int64_t max_output = *ctx.input(2).data<int32_t>();
  const float iou_threshold = *ctx.input(3).data<float>(), score_threshold = *ctx.input(4).data<float>();
  if (max_output < 0)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] max_output_size must be non-negative, got ", max_output));
  TF_RETURN_IF_ERROR(check_iou_threshold(ctx, iou_threshold));
  const std::vector<int32_t> kept =
      greedy_nms(n, boxes.data<float>(), 4, scores.data<float>(), 1, max_output, iou_threshold, score_threshold);
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
      for (int32_t i : greedy_nms(n, bb + (q == 1 ? 0 : c * 4), q * 4, sb + c, classes, per_class, iou_threshold,
                                  score_threshold))
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

}  // namespace

void register_detection_kernels(KernelRegistry& r) {
  r.add("NonMaxSuppressionV3", DeviceType::kCPU, DType::kFloat32, nms_kernel);
  r.add("CombinedNonMaxSuppression", DeviceType::kCPU, DType::kFloat32, combined_nms_kernel);
}

}  // namespace tapeflow::cpu
