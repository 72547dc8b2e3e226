// Note [NCHW kernels] (devices/cpu/nchw.h).
#include "devices/cpu/nchw.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cpu/thread_pool.h"
#include "devices/device.h"

namespace tapeflow::cpu {

namespace {

// Per image, a [rows, cols] matrix to [cols, rows] in 32x32 tiles (to NHWC: rows = C,
// cols = H * W; back: rows = H * W, cols = C). U: an unsigned carrier of the element's size.
template <typename U>
void transpose_images(const U* src, U* dst, int64_t images, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  const int64_t plane = rows * cols;
  parallel_for(images * ((rows + kTile - 1) / kTile), kTile * cols, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t image = b / ((rows + kTile - 1) / kTile), r0 = (b % ((rows + kTile - 1) / kTile)) * kTile;
      const U* s = src + image * plane;
      U* d = dst + image * plane;
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) d[c * rows + r] = s[r * cols + c];
      }
    }
  });
}

// src [N, A, B, C] read as per-image [A, B * C] (to_nhwc: A = channels) or [A * B, C].
absl::Status copy_layout(const DeviceTensor& src, DeviceTensor& dst, bool to_nhwc) {
  const Shape& s = src.shape;
  const int64_t n = s.dim(0), rows = to_nhwc ? s.dim(1) : s.dim(1) * s.dim(2),
                cols = to_nhwc ? s.dim(2) * s.dim(3) : s.dim(3);
  if (src.num_elements() == 0) return absl::OkStatus();
  switch (dtype_size(src.dtype)) {
    case 1: transpose_images(src.data<uint8_t>(), dst.data<uint8_t>(), n, rows, cols); break;
    case 2: transpose_images(src.data<uint16_t>(), dst.data<uint16_t>(), n, rows, cols); break;
    case 4: transpose_images(src.data<uint32_t>(), dst.data<uint32_t>(), n, rows, cols); break;
    case 8: transpose_images(src.data<uint64_t>(), dst.data<uint64_t>(), n, rows, cols); break;
    default:
      return absl::InternalError(absl::StrCat("NCHW kernels take 1- to 8-byte elements, not ", dtype_name(src.dtype)));
  }
  return absl::OkStatus();
}

Shape nhwc_of(const Shape& nchw) { return Shape{nchw.dim(0), nchw.dim(2), nchw.dim(3), nchw.dim(1)}; }

}  // namespace

absl::Status run_nchw_as_nhwc(KernelContext& ctx, KernelFn nhwc, uint32_t image_inputs, bool image_output) {
  // The shape function checked the attrs it reads; others (a stray "strides" on DepthToSpace)
  // may hold anything, so nothing here assumes a type.
  const AttrValue* format = ctx.attrs.find("data_format");
  const std::string* layout = format != nullptr ? std::get_if<std::string>(format) : nullptr;
  if (layout == nullptr || *layout != "NCHW") return nhwc(ctx);
  std::vector<DeviceTensor> copies;
  copies.reserve(ctx.inputs.size());
  std::vector<const DeviceTensor*> inputs;
  for (size_t k = 0; k < ctx.inputs.size(); ++k) {
    const DeviceTensor* in = ctx.inputs[k];
    if (k >= 32 || !((image_inputs >> k) & 1u) || in->shape.rank() != 4) {
      inputs.push_back(in);
      continue;
    }
    TF_ASSIGN_OR_RETURN(DeviceTensor t, ctx.device->allocate(in->dtype, nhwc_of(in->shape)));
    TF_RETURN_IF_ERROR(copy_layout(*in, t, /*to_nhwc=*/true));
    copies.push_back(std::move(t));
    inputs.push_back(&copies.back());
  }
  DeviceTensor& out = ctx.output(0);
  DeviceTensor result = out;  // a filter-shaped output is written in place
  if (image_output) {
    TF_ASSIGN_OR_RETURN(result, ctx.device->allocate(out.dtype, nhwc_of(out.shape)));
  }
  AttrMap attrs = ctx.attrs;
  for (const char* name : {"ksize", "strides", "dilations"}) {
    const AttrValue* v = ctx.attrs.find(name);
    const auto* ints = v != nullptr ? std::get_if<std::vector<int64_t>>(v) : nullptr;
    if (ints != nullptr && ints->size() == 4) attrs.set(name, std::vector<int64_t>{(*ints)[2], (*ints)[3]});
  }
  attrs.set("data_format", std::string("NHWC"));
  KernelContext as_nhwc{ctx.device, ctx.op, inputs, absl::MakeSpan(&result, 1), attrs};
  TF_RETURN_IF_ERROR(nhwc(as_nhwc));
  if (image_output) return copy_layout(result, out, /*to_nhwc=*/false);
  return absl::OkStatus();
}

}  // namespace tapeflow::cpu
