// Note [NCHW kernels] (devices/cpu/nchw.h).
#include "devices/cpu/nchw.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/device.h"

namespace tapeflow::cpu {

namespace {

// src [N, C, H, W] to NHWC, or back: the Transpose kernel's tiled SSE copy (devices/cpu/array.cc).
absl::Status copy_layout(const KernelContext& ctx, const DeviceTensor& src, DeviceTensor& dst, bool to_nhwc) {
  const KernelFn transpose = KernelRegistry::global().find("Transpose", DeviceType::kCPU, src.dtype);
  if (transpose == nullptr)
    return absl::InternalError(absl::StrCat("[", ctx.op, "] no Transpose kernel for ", dtype_name(src.dtype)));
  const AttrMap attrs{{"perm", to_nhwc ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 3, 1, 2}}};
  const DeviceTensor* inputs[1] = {&src};
  KernelContext call{ctx.device, ctx.op, inputs, absl::MakeSpan(&dst, 1), attrs};
  return transpose(call);
}

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
    TF_ASSIGN_OR_RETURN(DeviceTensor t, ctx.device->allocate(in->dtype, nchw_to_nhwc(in->shape)));
    TF_RETURN_IF_ERROR(copy_layout(ctx, *in, t, /*to_nhwc=*/true));
    copies.push_back(std::move(t));
    inputs.push_back(&copies.back());
  }
  DeviceTensor& out = ctx.output(0);
  DeviceTensor result = out;  // a filter-shaped output is written in place
  if (image_output) {
    TF_ASSIGN_OR_RETURN(result, ctx.device->allocate(out.dtype, nchw_to_nhwc(out.shape)));
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
  if (image_output) return copy_layout(ctx, result, out, /*to_nhwc=*/false);
  return absl::OkStatus();
}

}  // namespace tapeflow::cpu
