// The conv op family: OpDefs with their shape functions, and the public API
// (eager/ops/conv.h). Kernels are in devices/cpu/conv.cc.
#include "eager/ops/conv.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/conv_shape.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace internal {

namespace {
template <typename... Args>
absl::Status invalid(const char* op, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat("[", op, "] ", args...));
}
using shape_fns::ints_to_string;
}  // namespace

absl::StatusOr<std::array<int64_t, 2>> spatial_pair(const char* op, const std::vector<int64_t>& v, const char* what) {
  std::array<int64_t, 2> hw{};
  if (v.size() == 2) {
    hw = {v[0], v[1]};
  } else if (v.size() == 4) {
    if (v[0] != 1 || v[3] != 1)
      return invalid(op, what, " ", ints_to_string(v), " must be 1 in the batch and channel dimensions (NHWC: {1, h, w, 1})");
    hw = {v[1], v[2]};
  } else {
    return invalid(op, what, " ", ints_to_string(v), " must have 2 entries {h, w} or 4 entries {1, h, w, 1}, got ", v.size());
  }
  if (hw[0] < 1 || hw[1] < 1) return invalid(op, what, " ", ints_to_string(v), " must be positive");
  // int32 as in TensorFlow's attributes; keeps the window arithmetic far from overflow.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (hw[0] > kMax || hw[1] > kMax) return invalid(op, what, " ", ints_to_string(v), " must be at most ", kMax);
  return hw;
}

absl::StatusOr<std::array<int64_t, 2>> spatial_pair(const char* op, const std::vector<int64_t>& v, const char* what,
                                                     bool nchw) {
  if (!nchw || v.size() != 4) return spatial_pair(op, v, what);
  if (v[0] != 1 || v[1] != 1)
    return invalid(op, what, " ", ints_to_string(v), " must be 1 in the batch and channel dimensions (NCHW: {1, 1, h, w})");
  return spatial_pair(op, std::vector<int64_t>{v[2], v[3]}, what);
}

absl::StatusOr<bool> parse_data_format(const char* op, const std::string& data_format) {
  if (data_format == "NHWC") return false;
  if (data_format == "NCHW") return true;
  return invalid(op, "data_format must be \"NHWC\" or \"NCHW\", got \"", data_format, "\"");
}

absl::StatusOr<bool> nchw_of(const InferenceContext& ctx) {
  if (ctx.attrs.find("data_format") == nullptr) return false;
  return parse_data_format(ctx.op, ctx.attrs.get<std::string>("data_format"));
}

std::vector<int64_t> layout_window(std::vector<int64_t> v, std::string_view data_format) {
  if (data_format == "NCHW" && v.size() == 2) return std::vector<int64_t>{1, 1, v[0], v[1]};
  return v;
}

AttrMap window_attrs(std::vector<int64_t> strides, std::string_view padding, std::vector<int64_t> dilations,
                     std::string_view data_format) {
  return AttrMap{{"strides", layout_window(std::move(strides), data_format)},
                 {"padding", std::string(padding)},
                 {"dilations", layout_window(std::move(dilations), data_format)},
                 {"data_format", std::string(data_format)}};
}

absl::StatusOr<std::array<int64_t, 2>> dilated_window(const char* op, std::array<int64_t, 2> k,
                                                       std::array<int64_t, 2> dilations) {
  std::array<int64_t, 2> out{};
  for (int i = 0; i < 2; ++i) {
    if (k[i] <= 0) { out[i] = k[i]; continue; }
    const std::optional<int64_t> span = checked_mul(k[i] - 1, dilations[i]);
    if (!span || *span == std::numeric_limits<int64_t>::max())
      return invalid(op, "a filter of ", k[i], " taps with dilation ", dilations[i], " is too large");
    out[i] = *span + 1;
  }
  return out;
}

absl::StatusOr<bool> parse_padding(const char* op, const std::string& padding) {
  if (padding == "SAME") return true;
  if (padding == "VALID") return false;
  return invalid(op, "padding must be \"SAME\" or \"VALID\", got \"", padding, "\"");
}

absl::StatusOr<std::array<int64_t, 2>> window_output_hw(const char* op, const Shape& input, const char* input_name,
                                                         std::array<int64_t, 2> window, const std::string& window_desc,
                                                         std::array<int64_t, 2> strides, bool same) {
  std::array<int64_t, 2> out{};
  for (int i = 0; i < 2; ++i) {
    const int64_t in = input.dim(1 + i), k = window[i], s = strides[i];
    if (same) {
      out[i] = in < 0 ? -1 : in == 0 ? 0 : (in - 1) / s + 1;  // ceil(in / s)
    } else if (in < 0 || k < 0) {
      out[i] = -1;
    } else if (k > in) {
      return invalid(op, window_desc, " is larger than input '", input_name, "' ", input.to_string(), " along its ",
                     i == 0 ? "height" : "width", " (", k, " > ", in, ") with VALID padding");
    } else {
      out[i] = (in - k) / s + 1;  // ceil((in - k + 1) / s)
    }
  }
  return out;
}

absl::Status check_rank4(const InferenceContext& ctx, const Shape& s, const char* name, const char* layout) {
  if (s.rank() != 4)
    return invalid(ctx.op, "'", name, "' must have rank 4 ", layout, ", got shape ", s.to_string());
  return absl::OkStatus();
}

absl::Status check_float(const InferenceContext& ctx, int i, const char* name) {
  return check_dtype_in(ctx, i, name, {DType::kFloat32, DType::kFloat64});
}

absl::Status check_same_dtype(const InferenceContext& ctx, int i, const char* a, int j, const char* b) {
  if (ctx.inputs[i].dtype != ctx.inputs[j].dtype)
    return invalid(ctx.op, "'", a, "' and '", b, "' must have the same dtype, got ", dtype_name(ctx.inputs[i].dtype),
                   " and ", dtype_name(ctx.inputs[j].dtype));
  return absl::OkStatus();
}

absl::StatusOr<Shape> shape_attr(const InferenceContext& ctx, const char* name) {
  const std::vector<int64_t>& v = ctx.attrs.get<std::vector<int64_t>>(name);
  if (v.size() != 4) return invalid(ctx.op, name, " ", ints_to_string(v), " must have 4 entries, got ", v.size());
  for (int64_t d : v)
    if (d < 0) return invalid(ctx.op, name, " ", ints_to_string(v), " must have known, non-negative dims");
  return Shape(v);
}

absl::Status check_conv_operands(const InferenceContext& ctx, const Shape& input, const char* input_name,
                                 const Shape& filter, const char* filter_name, const char* filter_layout) {
  TF_RETURN_IF_ERROR(check_rank4(ctx, input, input_name, "[batch, height, width, channels]"));
  TF_RETURN_IF_ERROR(check_rank4(ctx, filter, filter_name, filter_layout));
  if (input.dim(3) >= 0 && filter.dim(2) >= 0 && input.dim(3) != filter.dim(2))
    return invalid(ctx.op, "'", input_name, "' ", input.to_string(), " has ", input.dim(3), " channels but '",
                   filter_name, "' ", filter.to_string(), " expects ", filter.dim(2), " input channels");
  if (filter.dim(0) == 0 || filter.dim(1) == 0)
    return invalid(ctx.op, "'", filter_name, "' ", filter.to_string(), " has an empty window");
  return absl::OkStatus();
}

absl::StatusOr<std::array<int64_t, 2>> filter_output_hw(const InferenceContext& ctx, const Shape& input,
                                                         const char* input_name, const Shape& filter,
                                                         const char* filter_name, std::array<int64_t, 2> strides,
                                                         std::array<int64_t, 2> dilations, bool same,
                                                         bool always_name_dilated) {
  TF_ASSIGN_OR_RETURN(auto window, dilated_window(ctx.op, {filter.dim(0), filter.dim(1)}, dilations));
  const bool dilated = always_name_dilated || dilations[0] != 1 || dilations[1] != 1;
  return window_output_hw(ctx.op, input, input_name, window,
                          absl::StrCat("filter window ", filter.dim(0), "x", filter.dim(1),
                                       dilated ? absl::StrCat(" (", window[0], "x", window[1], " dilated)") : "",
                                       " of '", filter_name, "' ", filter.to_string()),
                          strides, same);
}

namespace {
// out_backprop must have the forward op's output shape (unknown dims match anything).
absl::Status check_out_backprop(const InferenceContext& ctx, const Shape& got, const Shape& expected,
                                ConvForwardDescFn desc, const Shape& input, const Shape& filter) {
  if (got.rank() != 4 || !got.is_compatible_with(expected))
    return invalid(ctx.op, "'out_backprop' has shape ", got.to_string(), " but ", desc(ctx, input, filter), " gives ",
                   expected.to_string());
  return absl::OkStatus();
}

// A family's output shape for an image in the call's layout (`image` named image_name). Note
// [NCHW kernels] (devices/cpu/nchw.h): an NCHW image's shape is checked as the NHWC one it is
// read as, and the result turned back.
absl::StatusOr<Shape> output_in_layout(const InferenceContext& ctx, ConvOutputShapeFn output, bool nchw,
                                       const Shape& image, const char* image_name, const Shape& filter,
                                       const char* filter_name) {
  if (!nchw) return output(ctx, image, image_name, filter, filter_name);
  TF_RETURN_IF_ERROR(check_rank4(ctx, image, image_name, "[batch, channels, height, width] (data_format NCHW)"));
  absl::StatusOr<Shape> out = output(ctx, nchw_to_nhwc(image), image_name, filter, filter_name);
  if (!out.ok())  // its message shows the NHWC shape: say where it came from
    return absl::Status(out.status().code(),
                        absl::StrCat(out.status().message(), " (data_format NCHW: '", image_name, "' ",
                                     image.to_string(), " read as NHWC ", nchw_to_nhwc(image).to_string(), ")"));
  return nhwc_to_nchw(*out);
}
}  // namespace

absl::StatusOr<OutputSpecs> conv_forward_shape(const InferenceContext& ctx, ConvOutputShapeFn output) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "input"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "input", 1, "filter"));
  TF_ASSIGN_OR_RETURN(bool nchw, nchw_of(ctx));
  TF_ASSIGN_OR_RETURN(Shape out, output_in_layout(ctx, output, nchw, ctx.inputs[0].shape, "input", ctx.inputs[1].shape,
                                                  "filter"));
  return single_output(ctx.inputs[0].dtype, std::move(out));
}

absl::StatusOr<OutputSpecs> conv_backprop_input_shape(const InferenceContext& ctx, ConvOutputShapeFn output,
                                                      ConvForwardDescFn desc) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "filter"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "filter", 1, "out_backprop"));
  TF_ASSIGN_OR_RETURN(bool nchw, nchw_of(ctx));
  TF_ASSIGN_OR_RETURN(Shape input, shape_attr(ctx, "input_shape"));
  const Shape& filter = ctx.inputs[0].shape;
  TF_ASSIGN_OR_RETURN(Shape expected, output_in_layout(ctx, output, nchw, input, "input_shape", filter, "filter"));
  TF_RETURN_IF_ERROR(check_out_backprop(ctx, ctx.inputs[1].shape, expected, desc, input, filter));
  return single_output(ctx.inputs[0].dtype, std::move(input));
}

absl::StatusOr<OutputSpecs> conv_backprop_filter_shape(const InferenceContext& ctx, ConvOutputShapeFn output,
                                                       ConvForwardDescFn desc) {
  TF_RETURN_IF_ERROR(check_float(ctx, 0, "input"));
  TF_RETURN_IF_ERROR(check_same_dtype(ctx, 0, "input", 1, "out_backprop"));
  TF_ASSIGN_OR_RETURN(bool nchw, nchw_of(ctx));
  TF_ASSIGN_OR_RETURN(Shape filter, shape_attr(ctx, "filter_shape"));
  const Shape& input = ctx.inputs[0].shape;
  TF_ASSIGN_OR_RETURN(Shape expected, output_in_layout(ctx, output, nchw, input, "input", filter, "filter_shape"));
  TF_RETURN_IF_ERROR(check_out_backprop(ctx, ctx.inputs[1].shape, expected, desc, input, filter));
  return single_output(ctx.inputs[0].dtype, std::move(filter));
}

}  // namespace internal

namespace {

using Ints = std::vector<int64_t>;
using internal::invalid;

// Checks a conv2d call's input and filter shapes and attributes; returns conv2d's output shape.
// The names say where each shape came from (an input tensor or a shape attribute).
absl::StatusOr<Shape> conv_output_shape(const InferenceContext& ctx, const Shape& input, const char* input_name,
                                        const Shape& filter, const char* filter_name) {
  TF_RETURN_IF_ERROR(internal::check_conv_operands(ctx, input, input_name, filter, filter_name,
                                                   "[height, width, in_channels, out_channels]"));
  TF_ASSIGN_OR_RETURN(bool nchw, internal::nchw_of(ctx));
  TF_ASSIGN_OR_RETURN(auto strides, internal::spatial_pair(ctx.op, ctx.attrs.get<Ints>("strides"), "strides", nchw));
  TF_ASSIGN_OR_RETURN(bool same, internal::parse_padding(ctx.op, ctx.attrs.get<std::string>("padding")));
  std::array<int64_t, 2> dilations{1, 1};
  if (ctx.attrs.has("dilations")) {
    TF_ASSIGN_OR_RETURN(dilations,
                        internal::spatial_pair(ctx.op, ctx.attrs.get<Ints>("dilations"), "dilations", nchw));
  }
  TF_ASSIGN_OR_RETURN(auto hw, internal::filter_output_hw(ctx, input, input_name, filter, filter_name, strides,
                                                          dilations, same, /*always_name_dilated=*/false));
  return Shape{input.dim(0), hw[0], hw[1], filter.dim(3)};
}

std::string forward_desc(const InferenceContext& ctx, const Shape& input, const Shape& filter) {
  // Dilations are named only where they matter (not all ones).
  const Ints* d = ctx.attrs.has("dilations") ? &ctx.attrs.get<Ints>("dilations") : nullptr;
  const bool dilated = d != nullptr && std::any_of(d->begin(), d->end(), [](int64_t v) { return v != 1; });
  return absl::StrCat("conv2d of input ", input.to_string(), " with filter ", filter.to_string(), ", strides ",
                      internal::ints_to_string(ctx.attrs.get<Ints>("strides")),
                      dilated ? absl::StrCat(", dilations ", internal::ints_to_string(*d)) : "",
                      " and ", ctx.attrs.get<std::string>("padding"), " padding");
}

using ConvShapes = internal::ConvShapeFns<conv_output_shape, forward_desc>;

OpDef kConv2D{.type = "Conv2D", .api_name = "conv2d", .num_inputs = 2, .infer = ConvShapes::forward,
    .tf_form = "T=in0 strides:hw padding:string data_format:string=NHWC dilations:hw=[1,1,1,1]"};
OpDef kConv2DBackpropInput{.type = "Conv2DBackpropInput", .api_name = "conv2d_backprop_input", .num_inputs = 2,
                           .infer = ConvShapes::backprop_input,
    .tf_form = "T=in0 input_shape@ints#0 strides:hw padding:string data_format:string=NHWC dilations:hw=[1,1,1,1]"};
OpDef kConv2DBackpropFilter{.type = "Conv2DBackpropFilter", .api_name = "conv2d_backprop_filter", .num_inputs = 2,
                            .infer = ConvShapes::backprop_filter,
    .tf_form = "T=in0 filter_shape@ints#1 strides:hw padding:string data_format:string=NHWC dilations:hw=[1,1,1,1]"};

using internal::window_attrs;

}  // namespace

void register_conv_ops(OpRegistry& r) {
  r.add(kConv2D);
  r.add(kConv2DBackpropInput);
  r.add(kConv2DBackpropFilter);
}

Tensor conv2d(const Tensor& input, const Tensor& filter, std::vector<int64_t> strides, std::string_view padding,
              std::source_location loc) {
  return conv2d(input, filter, std::move(strides), padding, {1, 1}, "NHWC", loc);
}

Tensor conv2d(const Tensor& input, const Tensor& filter, std::vector<int64_t> strides, std::string_view padding,
              std::vector<int64_t> dilations, std::string_view data_format, std::source_location loc) {
  const Tensor inputs[2] = {input, filter};
  return execute_single(kConv2D, inputs, window_attrs(std::move(strides), padding, std::move(dilations), data_format),
                        loc);
}

Tensor conv2d_backprop_input(std::vector<int64_t> input_shape, const Tensor& filter, const Tensor& out_backprop,
                             std::vector<int64_t> strides, std::string_view padding, std::source_location loc) {
  return conv2d_backprop_input(std::move(input_shape), filter, out_backprop, std::move(strides), padding, {1, 1}, "NHWC",
                               loc);
}

Tensor conv2d_backprop_input(std::vector<int64_t> input_shape, const Tensor& filter, const Tensor& out_backprop,
                             std::vector<int64_t> strides, std::string_view padding, std::vector<int64_t> dilations,
                             std::string_view data_format, std::source_location loc) {
  const Tensor inputs[2] = {filter, out_backprop};
  AttrMap attrs = window_attrs(std::move(strides), padding, std::move(dilations), data_format);
  attrs.set("input_shape", std::move(input_shape));
  return execute_single(kConv2DBackpropInput, inputs, attrs, loc);
}

Tensor conv2d_backprop_filter(const Tensor& input, std::vector<int64_t> filter_shape, const Tensor& out_backprop,
                              std::vector<int64_t> strides, std::string_view padding, std::source_location loc) {
  return conv2d_backprop_filter(input, std::move(filter_shape), out_backprop, std::move(strides), padding, {1, 1},
                                "NHWC", loc);
}

Tensor conv2d_backprop_filter(const Tensor& input, std::vector<int64_t> filter_shape, const Tensor& out_backprop,
                              std::vector<int64_t> strides, std::string_view padding, std::vector<int64_t> dilations,
                              std::string_view data_format, std::source_location loc) {
  const Tensor inputs[2] = {input, out_backprop};
  AttrMap attrs = window_attrs(std::move(strides), padding, std::move(dilations), data_format);
  attrs.set("filter_shape", std::move(filter_shape));
  return execute_single(kConv2DBackpropFilter, inputs, attrs, loc);
}

// Conv2DBackpropInput is conv2d's adjoint: the transpose of conv2d reads `input` as its
// out_backprop (tf.nn.conv2d_transpose builds the same node).
Tensor conv2d_transpose(const Tensor& input, const Tensor& filter, std::vector<int64_t> output_shape,
                        std::vector<int64_t> strides, std::string_view padding, std::vector<int64_t> dilations,
                        std::string_view data_format, std::source_location loc) {
  return conv2d_backprop_input(std::move(output_shape), filter, input, std::move(strides), padding,
                               std::move(dilations), data_format, loc);
}

}  // namespace tapeflow
