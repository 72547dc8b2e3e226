// The ONNX converters of TensorFlow's image ops (NHWC layout): Conv2D, DepthwiseConv2dNative,
// MaxPool, AvgPool, BiasAdd, FusedBatchNormV3 (inference), LRN, ResizeBilinear and
// ResizeNearestNeighbor. The driver and the other converters are in saving/onnx_ops.cc.
//
// Note [NHWC in ONNX]
// tapeflow convolves and pools NHWC images with HWIO filters (TensorFlow's layout); ONNX's Conv,
// MaxPool and AveragePool are NCHW with OIHW weights. Each such node becomes
//   Transpose(perm 0,3,1,2) -> Conv / pool -> Transpose(perm 0,2,3,1)
// so the graph's tensors keep tapeflow's layout everywhere else (a node with data_format NCHW
// is ONNX's layout already and needs neither Transpose). A filter whose value is known
// (a variable, a constant) is written transposed to OIHW as its own initializer; a computed one
// gets a Transpose(perm 3,2,0,1). SAME padding becomes explicit pads (TensorFlow puts the odd
// pixel after: pad_before = total / 2) when the spatial sizes are known, else auto_pad
// SAME_UPPER, which is the same rule. AveragePool leaves the padding out of the mean, as
// TensorFlow does (count_include_pad = 0).
//
// Note [Image ops in ONNX]
// - DepthwiseConv2dNative's [kh, kw, C, M] filter is, read in row-major order, the HWIO filter
//   [kh, kw, 1, C * M] of a grouped convolution (output channel c * M + m reads input channel c
//   only), so it becomes Conv with group = C and OIHW weights [C * M, 1, kh, kw].
// - FusedBatchNormV3 in inference mode is BatchNormalization (training_mode 0) on NCHW; its
//   mean and variance outputs pass the inputs through (Identity), as TensorFlow's do in
//   inference. Training mode normalizes with the batch's statistics and updates moving ones: not
//   an inference graph, refused.
// - LRN sums depth_radius channels on either side, as ONNX's LRN with size = 2 r + 1 does;
//   ONNX divides alpha by size (x / (bias + alpha / size * square_sum) ^ beta), so alpha is
//   written multiplied by size. ONNX's LRN takes no float64.
// - ResizeBilinear is Resize (linear) on NCHW with sizes [N, C, height, width] and TensorFlow's
//   coordinate rule (eager/ops/resize.h) as coordinate_transformation_mode: legacy = asymmetric,
//   align_corners, half_pixel_centers = half_pixel (both clamp a source coordinate below 0 to
//   0). ONNX scales by out / in where TensorFlow scales by in / out, so a coordinate can differ
//   in its last float bit: a continuous change of the interpolated value (<= 1e-5), never a jump.
//   An integer image is cast to float32 first (ONNX's Resize would keep its type).
// - ResizeNearestNeighbor is not Resize: with ONNX's out / in scale a coordinate that
//   TensorFlow computes as exactly 3 can come out as 2.9999999 and round to the pixel before
//   (6 -> 4 columns, column 2). It is two Gathers (rows, then columns) of the source indices
//   tapeflow's own kernel uses (devices/cpu/resize.h), so it picks the same pixels; that needs
//   the input's height and width.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/errors.h"
#include "devices/cpu/resize.h"
#include "saving/onnx_convert.h"

namespace tapeflow::onnx_internal {
namespace {

// ---- NHWC convolutions and pools (Note [NHWC in ONNX]) ----

// True for NCHW: ONNX's own layout, taken without transposes.
absl::StatusOr<bool> is_nchw(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* format, n.attr("data_format"));
  if (format->s() != "NHWC" && format->s() != "NCHW")
    return absl::UnimplementedError(absl::StrCat("data_format ", format->s()));
  return format->s() == "NCHW";
}

// [1, h, w, 1] (NCHW: [1, 1, h, w]) -> {h, w}
absl::StatusOr<std::vector<int64_t>> spatial(NodeContext& n, absl::string_view attr, bool nchw) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> v, n.attr_ints(attr));
  if (v.size() != 4) return absl::InternalError(absl::StrCat("attr '", attr, "' does not have 4 entries"));
  return nchw ? std::vector<int64_t>{v[2], v[3]} : std::vector<int64_t>{v[1], v[2]};
}

Shape nhwc_view(const Shape& s, bool nchw) { return nchw && s.rank() == 4 ? nchw_to_nhwc(s) : s; }

// Sets pads (or auto_pad) on an NCHW node for TensorFlow's padding over input dims (h, w).
absl::Status set_padding(NodeContext& n, onnx::NodeProto* node, const Shape& input_nhwc,
                         const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                         const std::vector<int64_t>& dilations) {
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* padding, n.attr("padding"));
  if (padding->s() == "VALID") {
    set_ints(node, "pads", {0, 0, 0, 0});
    return absl::OkStatus();
  }
  if (padding->s() != "SAME") return absl::UnimplementedError(absl::StrCat("padding ", padding->s()));
  const int64_t in[2] = {input_nhwc.dim(1), input_nhwc.dim(2)};
  if (in[0] < 0 || in[1] < 0 || kernel[0] < 0 || kernel[1] < 0) {
    set_string(node, "auto_pad", "SAME_UPPER");  // TensorFlow's rule, Note [NHWC in ONNX]
    return absl::OkStatus();
  }
  std::vector<int64_t> pads(4);
  for (int d = 0; d < 2; ++d) {
    const int64_t out = (in[d] + strides[d] - 1) / strides[d];
    const int64_t total = std::max<int64_t>((out - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - in[d], 0);
    pads[d] = total / 2;
    pads[d + 2] = total - total / 2;
  }
  set_ints(node, "pads", pads);
  return absl::OkStatus();
}

std::string to_nchw(NodeContext& n, const std::string& x) {
  const std::string y = n.temp("nchw");
  set_ints(n.emit("Transpose", {x}, {y}), "perm", {0, 3, 1, 2});
  return y;
}

void from_nchw(NodeContext& n, const std::string& y) { set_ints(n.emit("Transpose", {y}, {n.out()}), "perm", {0, 2, 3, 1}); }

// An HWIO-ordered filter of `hwio` dims (the same row-major values) as OIHW.
Tensor hwio_to_oihw(const Tensor& f, const Shape& hwio) {
  const int64_t kh = hwio.dim(0), kw = hwio.dim(1), ci = hwio.dim(2), co = hwio.dim(3);
  const size_t width = dtype_size(f.dtype());
  std::string src(static_cast<size_t>(f.num_elements()) * width, '\0'), dst(src.size(), '\0');
  if (!src.empty()) f.copy_to_host(src.data());
  for (int64_t h = 0; h < kh; ++h)
    for (int64_t w = 0; w < kw; ++w)
      for (int64_t i = 0; i < ci; ++i)
        for (int64_t o = 0; o < co; ++o)
          std::memcpy(dst.data() + (((o * ci + i) * kh + h) * kw + w) * width,
                      src.data() + (((h * kw + w) * ci + i) * co + o) * width, width);
  return Tensor::from_host(f.dtype(), Shape{co, ci, kh, kw}, dst.data());
}

// Conv2D, or DepthwiseConv2dNative as a grouped Conv (Note [Image ops in ONNX]).
absl::Status convolution(NodeContext& n, bool depthwise) {
  TF_ASSIGN_OR_RETURN(const bool nchw, is_nchw(n));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatial(n, "strides", nchw));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, spatial(n, "dilations", nchw));
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  TF_ASSIGN_OR_RETURN(TensorSpec f, n.in_spec(1));
  const int64_t groups = !depthwise ? 1 : f.shape.rank() == 4 ? f.shape.dim(2) : -1;
  if (groups < 0)
    return absl::UnimplementedError("a filter with an unknown number of input channels (ONNX's group must be known)");
  const std::string x_nchw = nchw ? n.in(0) : to_nchw(n, n.in(0));
  std::string weights;
  if (const Tensor* value = n.const_value(1)) {
    // A depthwise [kh, kw, C, M] filter is the HWIO filter [kh, kw, 1, C * M] of its groups.
    const Shape hwio = depthwise ? Shape{f.shape.dim(0), f.shape.dim(1), 1, groups * f.shape.dim(3)} : value->shape();
    weights = n.builder().add_initializer(absl::StrCat(n.name(), "/filter_oihw"), hwio_to_oihw(*value, hwio));
  } else {
    std::string hwio = n.in(1);
    if (depthwise) {  // [kh, kw, C, M] -> [kh, kw, 1, C * M] (Reshape's 0 copies the input's dim)
      hwio = n.temp("filter_grouped");
      n.emit("Reshape", {n.in(1), n.builder().add_int64s(absl::StrCat(n.name(), "/grouped_shape"), {0, 0, 1, -1})},
             {hwio});
    }
    weights = n.temp("filter_oihw");
    set_ints(n.emit("Transpose", {hwio}, {weights}), "perm", {3, 2, 0, 1});
  }
  const std::string y = nchw ? n.out() : n.temp("conv_nchw");
  onnx::NodeProto* conv = n.emit("Conv", {x_nchw, weights}, {y});
  const std::vector<int64_t> kernel = {f.shape.dim(0), f.shape.dim(1)};
  if (kernel[0] >= 0 && kernel[1] >= 0) set_ints(conv, "kernel_shape", kernel);
  set_ints(conv, "strides", strides);
  set_ints(conv, "dilations", dilations);
  if (depthwise) set_int(conv, "group", groups);
  TF_RETURN_IF_ERROR(set_padding(n, conv, nhwc_view(x.shape, nchw), kernel, strides, dilations));
  if (!nchw) from_nchw(n, y);
  return absl::OkStatus();
}

Converter pool(absl::string_view onnx_op) {
  return [op = std::string(onnx_op)](NodeContext& n) -> absl::Status {
    TF_ASSIGN_OR_RETURN(const bool nchw, is_nchw(n));
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, spatial(n, "ksize", nchw));
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, spatial(n, "strides", nchw));
    TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
    const std::string x_nchw = nchw ? n.in(0) : to_nchw(n, n.in(0));
    const std::string y = nchw ? n.out() : n.temp("pool_nchw");
    onnx::NodeProto* node = n.emit(op, {x_nchw}, {y});
    set_ints(node, "kernel_shape", kernel);
    set_ints(node, "strides", strides);
    TF_RETURN_IF_ERROR(set_padding(n, node, nhwc_view(x.shape, nchw), kernel, strides, {1, 1}));
    if (!nchw) from_nchw(n, y);
    return absl::OkStatus();
  };
}

// DepthToSpace in TensorFlow's order is ONNX's DCR mode; SpaceToDepth is its inverse in both.
Converter block_move(absl::string_view onnx_op) {
  return [op = std::string(onnx_op)](NodeContext& n) -> absl::Status {
    TF_ASSIGN_OR_RETURN(const bool nchw, is_nchw(n));
    TF_ASSIGN_OR_RETURN(const proto::AttrValue* block, n.attr("block_size"));
    const std::string y = nchw ? n.out() : n.temp("moved_nchw");
    onnx::NodeProto* node = n.emit(op, {nchw ? n.in(0) : to_nchw(n, n.in(0))}, {y});
    set_int(node, "blocksize", block->i());
    if (op == "DepthToSpace") set_string(node, "mode", "DCR");
    if (!nchw) from_nchw(n, y);
    return absl::OkStatus();
  };
}

absl::Status fused_batch_norm(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* training, n.attr("is_training"));
  if (training->b())
    return absl::UnimplementedError(
        "training mode (is_training = true) normalizes with the batch's statistics: export the model in "
        "inference mode (set_training(false))");
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* format, n.attr("data_format"));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* epsilon, n.attr("epsilon"));
  const bool nhwc = format->s() == "NHWC";
  const std::string x = nhwc ? to_nchw(n, n.in(0)) : n.in(0);
  const std::string y = nhwc ? n.temp("normalized_nchw") : n.out(0);
  onnx::NodeProto* norm = n.emit("BatchNormalization", {x, n.in(1), n.in(2), n.in(3), n.in(4)}, {y});
  set_float(norm, "epsilon", epsilon->f());
  if (nhwc) from_nchw(n, y);
  // batch_mean, batch_variance and the reserve spaces 1 and 2 are the given statistics.
  for (int k = 1; k <= 4; ++k) n.emit("Identity", {n.in(k <= 2 ? k + 2 : k)}, {n.out(k)});
  return absl::OkStatus();
}

absl::Status lrn(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  if (x.dtype != DType::kFloat32) return absl::UnimplementedError(absl::StrCat("LRN of ", dtype_name(x.dtype), " (ONNX's LRN takes float32)"));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* radius, n.attr("depth_radius"));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* bias, n.attr("bias"));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* alpha, n.attr("alpha"));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* beta, n.attr("beta"));
  const int64_t size = 2 * radius->i() + 1;
  const std::string y = n.temp("lrn_nchw");
  onnx::NodeProto* node = n.emit("LRN", {to_nchw(n, n.in(0))}, {y});
  set_int(node, "size", size);
  set_float(node, "alpha", static_cast<float>(alpha->f() * static_cast<double>(size)));
  set_float(node, "beta", beta->f());
  set_float(node, "bias", bias->f());
  from_nchw(n, y);
  return absl::OkStatus();
}

// What both resizes read: the new {height, width}, the coordinate flags and the image's spec.
struct ResizeArgs {
  std::vector<int64_t> size;
  bool align_corners, half_pixel_centers;
  TensorSpec x;
};

absl::StatusOr<ResizeArgs> resize_args(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> size, n.const_ints(1));
  if (size.size() != 2) return absl::InternalError("size does not have 2 entries");
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* align, n.attr("align_corners"));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* half, n.attr("half_pixel_centers"));
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  return ResizeArgs{std::move(size), align->b(), half->b(), std::move(x)};
}

absl::Status resize_bilinear(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(ResizeArgs args, resize_args(n));
  const std::vector<int64_t>& size = args.size;
  const TensorSpec& x = args.x;
  // ONNX's Resize keeps an integer image's type; TensorFlow's interpolates it in float32.
  std::string image = n.in(0);
  if (!is_floating(x.dtype)) {
    image = n.temp("as_float");
    set_int(n.emit("Cast", {n.in(0)}, {image}), "to", onnx::TensorProto::FLOAT);
  }
  const std::string x_nchw = to_nchw(n, image);
  // sizes = [N, C, height, width]; N and C from the input's shape when unknown.
  std::string sizes;
  if (x.shape.rank() == 4 && x.shape.dim(0) >= 0 && x.shape.dim(3) >= 0) {
    sizes = n.builder().add_int64s(absl::StrCat(n.name(), "/sizes"), {x.shape.dim(0), x.shape.dim(3), size[0], size[1]});
  } else {
    const std::string shape = n.temp("input_shape"), outer = n.temp("batch_and_channels");
    n.emit("Shape", {x_nchw}, {shape});
    n.emit("Slice",
           {shape, n.builder().add_int64s(absl::StrCat(n.name(), "/starts"), {0}),
            n.builder().add_int64s(absl::StrCat(n.name(), "/ends"), {2})},
           {outer});
    sizes = n.temp("sizes");
    set_int(n.emit("Concat", {outer, n.builder().add_int64s(absl::StrCat(n.name(), "/spatial_sizes"), size)}, {sizes}),
            "axis", 0);
  }
  const std::string y = n.temp("resized_nchw");
  onnx::NodeProto* node = n.emit("Resize", {x_nchw, "", "", sizes}, {y});
  set_string(node, "mode", "linear");
  set_string(node, "coordinate_transformation_mode",
             args.align_corners ? "align_corners" : args.half_pixel_centers ? "half_pixel" : "asymmetric");
  from_nchw(n, y);
  return absl::OkStatus();
}

// Nearest: two Gathers of tapeflow's own source rows and columns (Note [Image ops in ONNX]).
absl::Status resize_nearest(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(ResizeArgs args, resize_args(n));
  const Shape& shape = args.x.shape;
  if (shape.rank() != 4 || shape.dim(1) < 0 || shape.dim(2) < 0)
    return absl::UnimplementedError(
        "a nearest-neighbour resize of an image of unknown height or width (exported as Gathers of TensorFlow's "
        "source pixels, which need the sizes; ONNX's Resize rounds some coordinates to the neighbouring pixel)");
  // Rows (axis 1), then columns (axis 2), each gathered at the kernel's own source indices.
  std::string image = n.in(0);
  for (int axis : {1, 2}) {
    const std::vector<int64_t> sources = cpu::resize_nearest_sources(args.size[axis - 1], shape.dim(axis),
                                                                     args.align_corners, args.half_pixel_centers);
    const std::string indices =
        n.builder().add_int64s(absl::StrCat(n.name(), axis == 1 ? "/source_rows" : "/source_columns"), sources);
    const std::string out = axis == 1 ? n.temp("rows") : n.out();
    set_int(n.emit("Gather", {image, indices}, {out}), "axis", axis);
    image = out;
  }
  return absl::OkStatus();
}

// NonMaxSuppressionV3: ONNX's NonMaxSuppression over one batch and one class (boxes [1, n, 4] in
// TensorFlow's corner order, center_point_box 0; scores [1, 1, n]; the scalars as [1]). Its
// [k, 3] int64 rows (batch, class, box) hold the kept boxes in the order kept: column 2, as
// int32. (ONNX Runtime may order boxes of equal score otherwise than TensorFlow's lower index
// first.)
absl::Status non_max_suppression(NodeContext& n) {
  OnnxGraphBuilder& b = n.builder();
  const std::string first = b.add_int64s(absl::StrCat(n.name(), "/axis_0"), {0});
  const std::string boxes = n.temp("boxes"), scores = n.temp("scores"), limit64 = n.temp("max_output_int64"),
                    limit = n.temp("max_output"), iou = n.temp("iou_threshold"), floor = n.temp("score_threshold"),
                    selected = n.temp("selected"), indices = n.temp("indices");
  n.emit("Unsqueeze", {n.in(0), first}, {boxes});
  n.emit("Unsqueeze", {n.in(1), b.add_int64s(absl::StrCat(n.name(), "/axes_0_1"), {0, 1})}, {scores});
  set_int(n.emit("Cast", {n.in(2)}, {limit64}), "to", onnx::TensorProto::INT64);
  n.emit("Unsqueeze", {limit64, first}, {limit});
  n.emit("Unsqueeze", {n.in(3), first}, {iou});
  n.emit("Unsqueeze", {n.in(4), first}, {floor});
  set_int(n.emit("NonMaxSuppression", {boxes, scores, limit, iou, floor}, {selected}), "center_point_box", 0);
  set_int(n.emit("Gather", {selected, scalar_initializer(n, "box_column", DType::kInt64, 2)}, {indices}), "axis", 1);
  set_int(n.emit("Cast", {indices}, {n.out()}), "to", onnx::TensorProto::INT32);
  return absl::OkStatus();
}

}  // namespace

void add_image_converters(ConverterTable& table) {
  table.insert({
      {"Conv2D", [](NodeContext& n) { return convolution(n, false); }},
      {"DepthwiseConv2dNative", [](NodeContext& n) { return convolution(n, true); }},
      {"MaxPool", pool("MaxPool")},
      {"AvgPool", pool("AveragePool")},
      {"DepthToSpace", block_move("DepthToSpace")},
      {"NonMaxSuppressionV3", non_max_suppression},
      {"SpaceToDepth", block_move("SpaceToDepth")},
      // NHWC BiasAdd: ONNX's Add broadcasts the [C] bias over the last dim. NCHW's channels are
      // dim 1: the bias is reshaped to [C, 1, ..., 1] first.
      {"BiasAdd",
       [](NodeContext& n) -> absl::Status {
         TF_ASSIGN_OR_RETURN(const bool nchw, is_nchw(n));
         if (!nchw) {
           n.emit("Add", {n.in(0), n.in(1)}, {n.out()});
           return absl::OkStatus();
         }
         TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
         if (x.shape.rank() < 3) return absl::UnimplementedError("an NCHW BiasAdd of rank below 3");
         std::vector<int64_t> dims(static_cast<size_t>(x.shape.rank() - 1), 1);
         dims[0] = -1;
         const std::string bias = n.temp("bias_channels");
         n.emit("Reshape", {n.in(1), n.builder().add_int64s(absl::StrCat(n.name(), "/bias_shape"), dims)}, {bias});
         n.emit("Add", {n.in(0), bias}, {n.out()});
         return absl::OkStatus();
       }},
      {"FusedBatchNormV3", fused_batch_norm},
      {"LRN", lrn},
      {"ResizeBilinear", resize_bilinear},
      {"ResizeNearestNeighbor", resize_nearest},
  });
}

}  // namespace tapeflow::onnx_internal
