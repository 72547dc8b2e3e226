// The pool op family: OpDefs with their shape functions, and the public API
// (eager/ops/pool.h). Kernels are in devices/cpu/pool.cc; the window geometry is shared with
// conv2d (eager/ops/conv.h, internal::).
#include "eager/ops/pool.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"
#include "eager/ops/conv.h"
#include "eager/ops/conv_shape.h"

namespace tapeflow {

namespace {

using Ints = std::vector<int64_t>;

using internal::check_float;
using internal::check_same_dtype;
using shape_fns::invalid;

using shape_fns::ints_to_string;

using internal::nchw_of;

// The pooled shape of an NHWC or NCHW `input` (named input_name) under the call's ksize, strides,
// padding and data_format attributes.
absl::StatusOr<Shape> pooled_shape(const InferenceContext& ctx, const Shape& input, const char* input_name) {
  TF_ASSIGN_OR_RETURN(bool nchw, nchw_of(ctx));
  if (input.rank() != 4)
    return invalid(ctx, "'", input_name, "' must have rank 4 ",
                   nchw ? "[batch, channels, height, width]" : "[batch, height, width, channels]", ", got shape ",
                   input.to_string());
  const Ints& ksize_attr = ctx.attrs.get<Ints>("ksize");
  TF_ASSIGN_OR_RETURN(auto ksize, internal::spatial_pair(ctx.op, ksize_attr, "ksize", nchw));
  TF_ASSIGN_OR_RETURN(auto strides, internal::spatial_pair(ctx.op, ctx.attrs.get<Ints>("strides"), "strides", nchw));
  TF_ASSIGN_OR_RETURN(bool same, internal::parse_padding(ctx.op, ctx.attrs.get<std::string>("padding")));
  // The window arithmetic reads NHWC positions.
  const Shape nhwc = nchw ? nchw_to_nhwc(input) : input;
  TF_ASSIGN_OR_RETURN(auto hw, internal::window_output_hw(ctx.op, nhwc, input_name, ksize,
                                                          absl::StrCat("ksize ", ints_to_string(ksize_attr)), strides, same));
  if (nchw) return Shape{input.dim(0), input.dim(1), hw[0], hw[1]};
  return Shape{input.dim(0), hw[0], hw[1], input.dim(3)};
}

// A gradient-side input must have the forward op's output shape (unknown dims match anything).
absl::Status check_like_output(const InferenceContext& ctx, int i, const char* name, const Shape& expected,
                               const Shape& input) {
  const Shape& got = ctx.inputs[i].shape;
  if (got.rank() != 4 || !got.is_compatible_with(expected))
    return invalid(ctx, "'", name, "' has shape ", got.to_string(), " but pooling input ", input.to_string(),
                   " with ksize ", ints_to_string(ctx.attrs.get<Ints>("ksize")), ", strides ", ints_to_string(ctx.attrs.get<Ints>("strides")),
                   " and ", ctx.attrs.get<std::string>("padding"), " padding gives ", expected.to_string());
  return absl::OkStatus();
}

// MaxPool, AvgPool. Inputs: input. Attributes: ksize, strides, padding.
absl::StatusOr<OutputSpecs> pool_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "input"));
  TF_ASSIGN_OR_RETURN(Shape out, pooled_shape(ctx, ctx.inputs[0].shape, "input"));
  return single_output(ctx.inputs[0].dtype, std::move(out));
}

// MaxPoolGrad. Inputs: orig_input, orig_output, grad.
// The checks both MaxPool gradient ops share: dtypes, and orig_output shaped like the pooled
// orig_input. Returns the pooled shape.
absl::StatusOr<Shape> check_pool_grad_inputs(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "orig_input"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "orig_input", 1, "orig_output"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "orig_input", 2, "grad"));
  const Shape& input = ctx.inputs[0].shape;
  TF_ASSIGN_OR_RETURN(Shape expected, pooled_shape(ctx, input, "orig_input"));
  TF_RETURN_IF_ERROR(check_like_output(ctx, 1, "orig_output", expected, input));
  return expected;
}

absl::StatusOr<OutputSpecs> max_pool_grad_shape(const InferenceContext& ctx) {
  TF_ASSIGN_OR_RETURN(Shape expected, check_pool_grad_inputs(ctx));
  const Shape& input = ctx.inputs[0].shape;
  TF_RETURN_IF_ERROR(check_like_output(ctx, 2, "grad", expected, input));
  return single_output(ctx.inputs[0].dtype, input);
}

// MaxPoolGradGrad. Inputs: orig_input, orig_output, grad (shaped like orig_input).
absl::StatusOr<OutputSpecs> max_pool_grad_grad_shape(const InferenceContext& ctx) {
  TF_ASSIGN_OR_RETURN(Shape expected, check_pool_grad_inputs(ctx));
  const Shape& input = ctx.inputs[0].shape;
  const Shape& grad = ctx.inputs[2].shape;
  if (grad.rank() != 4 || !grad.is_compatible_with(input))
    return invalid(ctx, "'grad' has shape ", grad.to_string(), " but must have the shape of 'orig_input' ",
                   input.to_string());
  return single_output(ctx.inputs[0].dtype, std::move(expected));
}

// AvgPoolGrad. Inputs: grad. Attributes: orig_input_shape, ksize, strides, padding.
absl::StatusOr<OutputSpecs> avg_pool_grad_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "grad"));
  const Ints& dims = ctx.attrs.get<Ints>("orig_input_shape");
  if (dims.size() != 4) return invalid(ctx, "orig_input_shape ", ints_to_string(dims), " must have 4 entries, got ", dims.size());
  for (int64_t d : dims)
    if (d < 0) return invalid(ctx, "orig_input_shape ", ints_to_string(dims), " must have known, non-negative dims");
  const Shape input(dims);
  TF_ASSIGN_OR_RETURN(Shape expected, pooled_shape(ctx, input, "orig_input_shape"));
  TF_RETURN_IF_ERROR(check_like_output(ctx, 0, "grad", expected, input));
  return single_output(ctx.inputs[0].dtype, input);
}

OpDef kMaxPool{.type = "MaxPool", .api_name = "max_pool", .num_inputs = 1, .infer = pool_shape,
    .tf_form = "T=in0 ksize:hw strides:hw padding:string data_format:string=NHWC"};
OpDef kAvgPool{.type = "AvgPool", .api_name = "avg_pool", .num_inputs = 1, .infer = pool_shape,
    .tf_form = "T=in0 ksize:hw strides:hw padding:string data_format:string=NHWC"};
OpDef kMaxPoolGrad{.type = "MaxPoolGrad", .api_name = "max_pool_grad", .num_inputs = 3, .infer = max_pool_grad_shape,
    .tf_form = "T=in0 ksize:hw strides:hw padding:string data_format:string=NHWC"};
OpDef kMaxPoolGradGrad{.type = "MaxPoolGradGrad", .api_name = "max_pool_grad_grad", .num_inputs = 3,
                       .infer = max_pool_grad_grad_shape,
    .tf_form = "T=in0 ksize:hw strides:hw padding:string data_format:string=NHWC"};
OpDef kAvgPoolGrad{.type = "AvgPoolGrad", .api_name = "avg_pool_grad", .num_inputs = 1, .infer = avg_pool_grad_shape,
    .tf_form = "T=in0 orig_input_shape@ints#0 ksize:hw strides:hw padding:string data_format:string=NHWC"};

using internal::layout_window;

AttrMap pool_attrs(Ints ksize, Ints strides, std::string_view padding, std::string_view data_format = "NHWC") {
  ksize = layout_window(std::move(ksize), data_format);
  strides = layout_window(std::move(strides), data_format);
  return AttrMap{{"ksize", std::move(ksize)},
                 {"strides", std::move(strides)},
                 {"padding", std::string(padding)},
                 {"data_format", std::string(data_format)}};
}

}  // namespace

void register_pool_ops(OpRegistry& r) {
  r.add(kMaxPool);
  r.add(kAvgPool);
  r.add(kMaxPoolGrad);
  r.add(kMaxPoolGradGrad);
  r.add(kAvgPoolGrad);
}

Tensor max_pool(const Tensor& input, Ints ksize, Ints strides, std::string_view padding, std::source_location loc) {
  return max_pool(input, std::move(ksize), std::move(strides), padding, "NHWC", loc);
}

Tensor max_pool(const Tensor& input, Ints ksize, Ints strides, std::string_view padding, std::string_view data_format,
                std::source_location loc) {
  const Tensor inputs[1] = {input};
  return execute_single(kMaxPool, inputs, pool_attrs(std::move(ksize), std::move(strides), padding, data_format), loc);
}

Tensor avg_pool(const Tensor& input, Ints ksize, Ints strides, std::string_view padding, std::source_location loc) {
  return avg_pool(input, std::move(ksize), std::move(strides), padding, "NHWC", loc);
}

Tensor avg_pool(const Tensor& input, Ints ksize, Ints strides, std::string_view padding, std::string_view data_format,
                std::source_location loc) {
  const Tensor inputs[1] = {input};
  return execute_single(kAvgPool, inputs, pool_attrs(std::move(ksize), std::move(strides), padding, data_format), loc);
}

Tensor max_pool_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad, Ints ksize, Ints strides,
                     std::string_view padding, std::source_location loc) {
  return max_pool_grad(orig_input, orig_output, grad, std::move(ksize), std::move(strides), padding, "NHWC", loc);
}

Tensor max_pool_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad, Ints ksize, Ints strides,
                     std::string_view padding, std::string_view data_format, std::source_location loc) {
  const Tensor inputs[3] = {orig_input, orig_output, grad};
  return execute_single(kMaxPoolGrad, inputs, pool_attrs(std::move(ksize), std::move(strides), padding, data_format),
                        loc);
}

Tensor max_pool_grad_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad, Ints ksize,
                          Ints strides, std::string_view padding, std::source_location loc) {
  return max_pool_grad_grad(orig_input, orig_output, grad, std::move(ksize), std::move(strides), padding, "NHWC", loc);
}

Tensor max_pool_grad_grad(const Tensor& orig_input, const Tensor& orig_output, const Tensor& grad, Ints ksize,
                          Ints strides, std::string_view padding, std::string_view data_format,
                          std::source_location loc) {
  const Tensor inputs[3] = {orig_input, orig_output, grad};
  return execute_single(kMaxPoolGradGrad, inputs,
                        pool_attrs(std::move(ksize), std::move(strides), padding, data_format), loc);
}

Tensor avg_pool_grad(Ints orig_input_shape, const Tensor& grad, Ints ksize, Ints strides, std::string_view padding,
                     std::source_location loc) {
  return avg_pool_grad(std::move(orig_input_shape), grad, std::move(ksize), std::move(strides), padding, "NHWC", loc);
}

Tensor avg_pool_grad(Ints orig_input_shape, const Tensor& grad, Ints ksize, Ints strides, std::string_view padding,
                     std::string_view data_format, std::source_location loc) {
  const Tensor inputs[1] = {grad};
  AttrMap attrs = pool_attrs(std::move(ksize), std::move(strides), padding, data_format);
  attrs.set("orig_input_shape", std::move(orig_input_shape));
  return execute_single(kAvgPoolGrad, inputs, attrs, loc);
}

}  // namespace tapeflow
