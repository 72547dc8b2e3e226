// The resize family: ResizeBilinear, ResizeNearestNeighbor and their gradients (OpDefs with
// their shape functions, and the public API of eager/ops/resize.h). Kernels are in
// devices/cpu/resize.cc.
#include "eager/ops/resize.h"

#include <array>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using Ints = std::vector<int64_t>;
using shape_fns::ints_to_string;
using shape_fns::invalid;

absl::Status check_rank4(const InferenceContext& ctx, int i, const char* name) {
  const Shape& s = ctx.inputs[i].shape;
  if (s.rank() != 4)
    return invalid(ctx, "'", name, "' must have rank 4 [batch, height, width, channels], got shape ", s.to_string());
  return absl::OkStatus();
}

absl::Status check_flags(const InferenceContext& ctx) {
  if (ctx.attrs.get<bool>("align_corners") && ctx.attrs.get<bool>("half_pixel_centers"))
    return invalid(ctx, "align_corners and half_pixel_centers cannot both be true");
  return absl::OkStatus();
}

// size: {height, width}, each in [1, int32 max] as in TensorFlow.
absl::StatusOr<std::array<int64_t, 2>> size_attr(const InferenceContext& ctx) {
  const Ints& v = ctx.attrs.get<Ints>("size");
  if (v.size() != 2) return invalid(ctx, "size ", ints_to_string(v), " must have 2 entries {height, width}, got ", v.size());
  for (int64_t d : v)
    if (d < 1 || d > std::numeric_limits<int32_t>::max())
      return invalid(ctx, "size ", ints_to_string(v), " must be positive (and at most ",
                     std::numeric_limits<int32_t>::max(), ")");
  return std::array<int64_t, 2>{v[0], v[1]};
}

// The images' (or original image's) height and width must be positive where known.
absl::Status check_spatial(const InferenceContext& ctx, const Shape& s, const char* name) {
  if (s.dim(1) == 0 || s.dim(2) == 0)
    return invalid(ctx, "'", name, "' ", s.to_string(), " has an empty height or width");
  return absl::OkStatus();
}

// Input 0 (named `name`) [batch, height, width, channels] resized to the size attribute:
// [batch, size[0], size[1], channels] of dtype `out` (default: the input's), after checking it
// and the flags.
absl::StatusOr<OutputSpecs> sized_like_input(const InferenceContext& ctx, const char* name,
                                             std::initializer_list<DType> dtypes, std::optional<DType> out = {}) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, name, dtypes));
  TF_RETURN_IF_ERROR(check_rank4(ctx, 0, name));
  TF_RETURN_IF_ERROR(check_flags(ctx));
  const Shape& in = ctx.inputs[0].shape;
  TF_RETURN_IF_ERROR(check_spatial(ctx, in, name));
  TF_ASSIGN_OR_RETURN(auto size, size_attr(ctx));
  return single_output(out.value_or(ctx.inputs[0].dtype), Shape{in.dim(0), size[0], size[1], in.dim(3)});
}

// ResizeBilinear, ResizeNearestNeighbor. Inputs: images. Attributes: size, align_corners,
// half_pixel_centers. Bilinear gives float32 but for float64 images; nearest keeps the dtype.
absl::StatusOr<OutputSpecs> bilinear_shape(const InferenceContext& ctx) {
  const DType in = ctx.inputs[0].dtype;
  return sized_like_input(ctx, "images", shape_fns::kNumeric, in == DType::kFloat64 ? in : DType::kFloat32);
}
absl::StatusOr<OutputSpecs> nearest_shape(const InferenceContext& ctx) {
  return sized_like_input(ctx, "images", shape_fns::kNumeric);
}

// ResizeBilinearGrad. Inputs: grads, original_image.
absl::StatusOr<OutputSpecs> bilinear_grad_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "grads", shape_fns::kFloating));
  if (ctx.inputs[1].dtype != ctx.inputs[0].dtype)
    return invalid(ctx, "'grads' and 'original_image' must have the same dtype, got ", dtype_name(ctx.inputs[0].dtype),
                   " and ", dtype_name(ctx.inputs[1].dtype));
  TF_RETURN_IF_ERROR(check_rank4(ctx, 0, "grads"));
  TF_RETURN_IF_ERROR(check_rank4(ctx, 1, "original_image"));
  TF_RETURN_IF_ERROR(check_flags(ctx));
  const Shape& g = ctx.inputs[0].shape;
  Shape out = ctx.inputs[1].shape;
  TF_RETURN_IF_ERROR(check_spatial(ctx, out, "original_image"));
  TF_RETURN_IF_ERROR(check_spatial(ctx, g, "grads"));
  for (int d : {0, 3}) {
    if (g.dim(d) >= 0 && out.dim(d) >= 0 && g.dim(d) != out.dim(d))
      return invalid(ctx, "'grads' ", g.to_string(), " and 'original_image' ", out.to_string(),
                     " must agree in batch and channels");
    if (out.dim(d) < 0) out.set_dim(d, g.dim(d));
  }
  return single_output(ctx.inputs[0].dtype, std::move(out));
}

// ResizeNearestNeighborGrad. Inputs: grads. Attributes: size (the original image's), flags.
absl::StatusOr<OutputSpecs> nearest_grad_shape(const InferenceContext& ctx) {
  return sized_like_input(ctx, "grads", shape_fns::kFloating);
}

OpDef kResizeBilinear{.type = "ResizeBilinear", .api_name = "resize_bilinear", .num_inputs = 1, .infer = bilinear_shape,
                      .tf_form = "T=in0 size@ints align_corners:bool=false half_pixel_centers:bool=false"};
OpDef kResizeNearest{.type = "ResizeNearestNeighbor", .api_name = "resize_nearest_neighbor", .num_inputs = 1,
                     .infer = nearest_shape,
                     .tf_form = "T=in0 size@ints align_corners:bool=false half_pixel_centers:bool=false"};
OpDef kResizeBilinearGrad{.type = "ResizeBilinearGrad", .api_name = "resize_bilinear_grad", .num_inputs = 2,
                          .infer = bilinear_grad_shape,
                          .tf_form = "T=in1 align_corners:bool=false half_pixel_centers:bool=false"};
OpDef kResizeNearestGrad{.type = "ResizeNearestNeighborGrad", .api_name = "resize_nearest_neighbor_grad",
                         .num_inputs = 1, .infer = nearest_grad_shape,
                         .tf_form = "T=in0 size@ints align_corners:bool=false half_pixel_centers:bool=false"};

AttrMap resize_attrs(bool align_corners, bool half_pixel_centers) {
  return AttrMap{{"align_corners", align_corners}, {"half_pixel_centers", half_pixel_centers}};
}

Tensor resize(const OpDef& op, const Tensor& t, Ints size, bool align_corners, bool half_pixel_centers,
              std::source_location loc) {
  const Tensor inputs[1] = {t};
  AttrMap attrs = resize_attrs(align_corners, half_pixel_centers);
  attrs.set("size", std::move(size));
  return execute_single(op, inputs, attrs, loc);
}

}  // namespace

void register_resize_ops(OpRegistry& r) {
  r.add(kResizeBilinear);
  r.add(kResizeNearest);
  r.add(kResizeBilinearGrad);
  r.add(kResizeNearestGrad);
}

Tensor resize_bilinear(const Tensor& images, Ints size, bool align_corners, bool half_pixel_centers,
                       std::source_location loc) {
  return resize(kResizeBilinear, images, std::move(size), align_corners, half_pixel_centers, loc);
}

Tensor resize_nearest_neighbor(const Tensor& images, Ints size, bool align_corners, bool half_pixel_centers,
                               std::source_location loc) {
  return resize(kResizeNearest, images, std::move(size), align_corners, half_pixel_centers, loc);
}

Tensor resize_bilinear_grad(const Tensor& grads, const Tensor& original_image, bool align_corners,
                            bool half_pixel_centers, std::source_location loc) {
  const Tensor inputs[2] = {grads, original_image};
  return execute_single(kResizeBilinearGrad, inputs, resize_attrs(align_corners, half_pixel_centers), loc);
}

Tensor resize_nearest_neighbor_grad(const Tensor& grads, Ints size, bool align_corners, bool half_pixel_centers,
                                    std::source_location loc) {
  return resize(kResizeNearestGrad, grads, std::move(size), align_corners, half_pixel_centers, loc);
}

}  // namespace tapeflow
