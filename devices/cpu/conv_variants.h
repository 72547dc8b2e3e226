// Direct (loop) convolution kernels for what the GEMM kernels of devices/cpu/conv.cc do not
// cover: dilated Conv2D and its backprops, and DepthwiseConv2dNative and its backprops.
// Shapes and attributes were validated by the shape functions (eager/ops/conv.cc,
// eager/ops/conv_variants.cc).
#pragma once

#include "absl/status/status.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

enum class ConvPass { kForward, kBackpropInput, kBackpropFilter };

// The kernel of one pass: Conv2D-style inputs (forward: input, filter; backprop input: filter,
// out_backprop; backprop filter: input, out_backprop). depthwise: output channel c * M + m reads
// input channel c only. float32 and float64 (the dtype of input 0).
absl::Status direct_conv2d(KernelContext& ctx, ConvPass pass, bool depthwise);

// True when the call's "dilations" attr is present and not all ones.
bool has_dilation(const KernelContext& ctx);

}  // namespace tapeflow::cpu
