// CPU kernel of the detection family (eager/ops/detection.h): NonMaxSuppressionV3 with
// TensorFlow's arithmetic (its IOU and greedy selection in non_max_suppression_op.cc's order).
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
  if (!(iou_threshold >= 0 && iou_threshold <= 1))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] iou_threshold must be in [0, 1], got ", iou_threshold));
  const float* b = boxes.data<float>();
  const float* s = scores.data<float>();
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i)
    if (s[i] > score_threshold) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
  std::vector<int32_t> kept;
  std::vector<Box> kept_boxes;
  for (int64_t i : order) {
    if (static_cast<int64_t>(kept.size()) >= max_output) break;
    const Box candidate = box_at(b + 4 * i);
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
  DeviceTensor& out = ctx.output(0);  // Note [Data-dependent output shapes]
  out.dtype = DType::kInt32;
  out.shape = Shape{static_cast<int64_t>(kept.size())};
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(out));
  std::copy(kept.begin(), kept.end(), out.data<int32_t>());
  return absl::OkStatus();
}

}  // namespace

void register_detection_kernels(KernelRegistry& r) {
  r.add("NonMaxSuppressionV3", DeviceType::kCPU, DType::kFloat32, nms_kernel);
}

}  // namespace tapeflow::cpu
