// The source pixels of TensorFlow's nearest-neighbour resize along one axis, shared by the CPU
// kernel (devices/cpu/resize.cc) and the ONNX export (saving/onnx_ops_image.cc), which writes
// them as Gather indices so an exported model picks exactly the pixels tapeflow picks.
#pragma once

#include <cstdint>
#include <vector>

namespace tapeflow::cpu {

// For each of `out` output positions, the input index (in [0, in - 1]) it copies, by
// TensorFlow's rule (eager/ops/resize.h).
std::vector<int64_t> resize_nearest_sources(int64_t out, int64_t in, bool align_corners, bool half_pixel_centers);

}  // namespace tapeflow::cpu
