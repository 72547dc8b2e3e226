// The resize family: ResizeBilinear, ResizeNearestNeighbor, CropAndResize and their gradients
// (OpDefs with their shape functions, and the public API of eager/ops/resize.h). Kernels are in
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

// size (or crop_size): {height, width}, each in [1, int32 max] as in TensorFlow.
absl::StatusOr<std::array<int64_t, 2>> size_attr(const InferenceContext& ctx, const char* name = "size") {
  const Ints& v = ctx.attrs.get<Ints>(name);
  if (v.size() != 2) return invalid(ctx, name, " ", ints_to_string(v), " must have 2 entries {height, width}, got ", v.size());
  for (int64_t d : v)
    if (d < 1 || d > std::numeric_limits<int32_t>::max())
      return invalid(ctx, name, " ", ints_to_string(v), " must be positive (and at most ",
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

// CropAndResize's boxes (input `boxes`) [num_boxes, 4] and box_indices (input `boxes` + 1)
// [num_boxes] int32; returns num_boxes (or -1), agreeing with `rows` where known.
absl::StatusOr<int64_t> crop_boxes(const InferenceContext& ctx, int boxes, int64_t rows) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, boxes, "boxes", shape_fns::kFloating));
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, boxes + 1, "box_indices", {DType::kInt32}));
  const Shape& b = ctx.inputs[boxes].shape;
  const Shape& ind = ctx.inputs[boxes + 1].shape;
  if (b.rank() != 2 || (b.dim(1) >= 0 && b.dim(1) != 4))
    return invalid(ctx, "'boxes' must have shape [num_boxes, 4], got ", b.to_string());
  if (ind.rank() != 1) return invalid(ctx, "'box_indices' must have shape [num_boxes], got ", ind.to_string());
  int64_t n = b.dim(0);
  for (int64_t d : {ind.dim(0), rows}) {
    if (d >= 0 && n >= 0 && d != n)
      return invalid(ctx, "'boxes' ", b.to_string(), ", 'box_indices' ", ind.to_string(),
                     (rows >= 0 ? " and the crops' rows " : ""), (rows >= 0 ? std::to_string(rows) : std::string()),
                     " must agree in num_boxes");
    if (n < 0) n = d;
  }
  return n;
}

absl::Status check_crop_method(const InferenceContext& ctx, bool bilinear_only) {
  const std::string& m = ctx.attrs.get<std::string>("method");
  if (m == "bilinear" || (m == "nearest" && !bilinear_only)) return absl::OkStatus();
  return invalid(ctx, "method must be ", bilinear_only ? "\"bilinear\"" : "\"bilinear\" or \"nearest\"", ", got \"", m, "\"");
}

// CropAndResize. Inputs: images, boxes, box_indices. Attributes: crop_size, method,
// extrapolation_value. [num_boxes, crop_height, crop_width, depth], float32 but for float64 images.
absl::StatusOr<OutputSpecs> crop_and_resize_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "images", shape_fns::kNumeric));
  TF_RETURN_IF_ERROR(check_rank4(ctx, 0, "images"));
  const Shape& in = ctx.inputs[0].shape;
  TF_RETURN_IF_ERROR(check_spatial(ctx, in, "images"));
  TF_ASSIGN_OR_RETURN(int64_t n, crop_boxes(ctx, 1, -1));
  TF_RETURN_IF_ERROR(check_crop_method(ctx, false));
  TF_ASSIGN_OR_RETURN(auto size, size_attr(ctx, "crop_size"));
  const DType out = ctx.inputs[0].dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  return single_output(out, Shape{n, size[0], size[1], in.dim(3)});
}

// The crops' gradient (input 0, `grads`) [num_boxes, crop_height, crop_width, depth].
absl::Status check_crop_grads(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "grads", shape_fns::kFloating));
  TF_RETURN_IF_ERROR(check_rank4(ctx, 0, "grads"));
  const Shape& g = ctx.inputs[0].shape;
  if (g.dim(1) == 0 || g.dim(2) == 0) return invalid(ctx, "'grads' ", g.to_string(), " has an empty crop height or width");
  return absl::OkStatus();
}

// CropAndResizeGradImage. Inputs: grads, boxes, box_indices, image_size (int32 [4]).
// Attributes: dtype, method. Its shape is image_size's value: only the depth is known here.
absl::StatusOr<OutputSpecs> crop_grad_image_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_crop_grads(ctx));
  TF_RETURN_IF_ERROR(crop_boxes(ctx, 1, ctx.inputs[0].shape.dim(0)).status());
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 3, "image_size", {DType::kInt32}));
  const Shape& size = ctx.inputs[3].shape;
  if (size.rank() != 1 || (size.dim(0) >= 0 && size.dim(0) != 4))
    return invalid(ctx, "'image_size' must have shape [4] {batch, height, width, depth}, got ", size.to_string());
  TF_RETURN_IF_ERROR(check_crop_method(ctx, false));
  const DType out = ctx.attrs.get<DType>("dtype");
  if (out != DType::kFloat32 && out != DType::kFloat64)
    return invalid(ctx, "dtype must be float32 or float64, got ", dtype_name(out));
  return single_output(out, Shape{kUnknownDim, kUnknownDim, kUnknownDim, ctx.inputs[0].shape.dim(3)});
}

// CropAndResizeGradBoxes. Inputs: grads, images, boxes, box_indices. Attribute: method
// (bilinear). Boxes' shape and dtype.
absl::StatusOr<OutputSpecs> crop_grad_boxes_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_crop_grads(ctx));
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 1, "images", shape_fns::kNumeric));
  TF_RETURN_IF_ERROR(check_rank4(ctx, 1, "images"));
  const Shape& g = ctx.inputs[0].shape;
  const Shape& in = ctx.inputs[1].shape;
  TF_RETURN_IF_ERROR(check_spatial(ctx, in, "images"));
  if (g.dim(3) >= 0 && in.dim(3) >= 0 && g.dim(3) != in.dim(3))
    return invalid(ctx, "'grads' ", g.to_string(), " and 'images' ", in.to_string(), " must agree in depth");
  TF_ASSIGN_OR_RETURN(int64_t n, crop_boxes(ctx, 2, g.dim(0)));
  TF_RETURN_IF_ERROR(check_crop_method(ctx, true));
  return single_output(ctx.inputs[2].dtype, Shape{n, 4});
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

OpDef kCropAndResize{.type = "CropAndResize", .api_name = "crop_and_resize", .num_inputs = 3,
                     .infer = crop_and_resize_shape,
                     .tf_form = "T=in0 crop_size@ints method:string=bilinear extrapolation_value:float=0"};
OpDef kCropAndResizeGradImage{.type = "CropAndResizeGradImage", .api_name = "crop_and_resize_grad_image",
                              .num_inputs = 4, .infer = crop_grad_image_shape, .kernel_dtype_input = -1,
                              .kernel_allocates_output = true,
                              .tf_form = "dtype>T:type method:string=bilinear"};
OpDef kCropAndResizeGradBoxes{.type = "CropAndResizeGradBoxes", .api_name = "crop_and_resize_grad_boxes",
                              .num_inputs = 4, .infer = crop_grad_boxes_shape, .kernel_dtype_input = 1,
                              .tf_form = "T=in1 method:string=bilinear"};

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
  r.add(kCropAndResize);
  r.add(kCropAndResizeGradImage);
  r.add(kCropAndResizeGradBoxes);
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

Tensor crop_and_resize(const Tensor& images, const Tensor& boxes, const Tensor& box_indices, Ints crop_size,
                       std::string_view method, float extrapolation_value, std::source_location loc) {
  const Tensor inputs[3] = {images, boxes, box_indices};
  AttrMap attrs{{"method", std::string(method)}, {"extrapolation_value", static_cast<double>(extrapolation_value)}};
  attrs.set("crop_size", std::move(crop_size));
  return execute_single(kCropAndResize, inputs, attrs, loc);
}

Tensor crop_and_resize_grad_image(const Tensor& grads, const Tensor& boxes, const Tensor& box_indices,
                                  const Tensor& image_size, DType dtype, std::string_view method,
                                  std::source_location loc) {
  const Tensor inputs[4] = {grads, boxes, box_indices, image_size};
  return execute_single(kCropAndResizeGradImage, inputs, AttrMap{{"method", std::string(method)}, {"dtype", dtype}}, loc);
}

Tensor crop_and_resize_grad_boxes(const Tensor& grads, const Tensor& images, const Tensor& boxes,
                                  const Tensor& box_indices, std::source_location loc) {
  const Tensor inputs[4] = {grads, images, boxes, box_indices};
  return execute_single(kCropAndResizeGradBoxes, inputs, AttrMap{{"method", std::string("bilinear")}}, loc);
}

}  // namespace tapeflow
