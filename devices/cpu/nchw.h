// NCHW calls of the NHWC kernels (the conv and pool families). Internal to devices/cpu.
//
// Note [NCHW kernels]: TensorFlow's data_format "NCHW" ([batch, channels, height, width]) is
// read by the same kernels as NHWC: each image input is copied to NHWC, the kernel runs with
// NHWC attributes ({h, w} windows, data_format "NHWC"), and an image output is copied back to
// NCHW. Filters are [kh, kw, in, out] in both layouts and pass untouched. The graph holds one
// Conv2D / MaxPool / ... node either way, as TensorFlow's GraphDef does; TensorFlow's CPU
// runtime does the same (its layout optimizer puts transposes around NCHW convolutions).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

// Runs `nhwc` on ctx when its data_format attr is absent or "NHWC"; otherwise between transposes.
// Bit k of image_inputs: input k is an image (inputs that are not of rank 4 always pass
// untouched); image_output: output 0 is one.
absl::Status run_nchw_as_nhwc(KernelContext& ctx, KernelFn nhwc, uint32_t image_inputs, bool image_output);

// A KernelFn for the registry: nchw_or_nhwc<conv2d_kernel<float>, 0b01>.
template <KernelFn kNhwc, uint32_t kImageInputs = ~0u, bool kImageOutput = true>
absl::Status nchw_or_nhwc(KernelContext& ctx) {
  return run_nchw_as_nhwc(ctx, kNhwc, kImageInputs, kImageOutput);
}

}  // namespace tapeflow::cpu
