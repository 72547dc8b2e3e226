// TensorFlow 1's TensorArrays as dense buffers (Note [TensorArrays as buffers]): the ops a
// GraphDef's TensorArrayV3 / ...WriteV3 / ...ReadV3 / ...GatherV3 / ...ScatterV3 / ...SizeV3
// become when graph/graph_def_tensor_arrays.cc rewrites them. Not differentiable (frozen
// inference graphs); their kernels are in devices/cpu/tensor_array.cc.
//
// Note [TensorArrays as buffers]
// A TensorArray of `size` elements of one shape is held as one tensor [size, *element], which
// travels where TensorFlow's "flow" scalar travelled (through a while loop it is a loop
// variable); the handle is not needed. A write returns a new buffer (the old one copied, one
// element replaced): a loop of n writes copies the buffer n times. Dims the array's
// element_shape leaves unknown are 0 in a new buffer and take the first write's dims (an
// empty buffer takes the shape of the first value written into it); after that every value
// must have the same shape (TensorFlow's identical_element_shapes). An element never written
// reads as zeros. A write into a dynamic_size array (attr "grow") past its end grows the buffer
// to hold it.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "eager/op_def.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using shape_fns::invalid;

constexpr std::initializer_list<DType> kElementDTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                                         DType::kInt64, DType::kUInt8, DType::kBool};

absl::Status check_index(const InferenceContext& ctx, int input, const char* name, int rank) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, input, name, {DType::kInt32}));
  if (ctx.inputs[input].shape.rank() != rank)
    return invalid(ctx, "'", name, "' must be ", rank == 0 ? "a scalar" : "a vector", ", not ",
                   ctx.inputs[input].shape.to_string());
  return absl::OkStatus();
}

absl::Status check_buffer(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "buffer", kElementDTypes));
  if (ctx.inputs[0].shape.rank() < 1)
    return invalid(ctx, "'buffer' must have a rank of at least 1 ([size, *element]), not ", ctx.inputs[0].shape.to_string());
  return absl::OkStatus();
}

// The buffer's element dims, each known dim of `value` (whose dims from `first` on are an
// element) filling an unknown one; a known dim that differs is an error.
absl::StatusOr<Shape> written_buffer(const InferenceContext& ctx, int value, int first) {
  const Shape& buffer = ctx.inputs[0].shape;
  const Shape& v = ctx.inputs[value].shape;
  if (ctx.inputs[value].dtype != ctx.inputs[0].dtype)
    return invalid(ctx, "'value' is ", dtype_name(ctx.inputs[value].dtype), " and the TensorArray holds ",
                   dtype_name(ctx.inputs[0].dtype));
  if (v.rank() - first != buffer.rank() - 1)
    return invalid(ctx, "'value' ", v.to_string(), " does not fit the TensorArray's elements of rank ", buffer.rank() - 1,
                   " (buffer ", buffer.to_string(), ")");
  Shape out = buffer;
  for (int d = 1; d < buffer.rank(); ++d) {
    const int64_t known = v.dim(d - 1 + first);
    // Unknown, or 0: the buffer may be empty, and an empty buffer takes the value's dims when the
    // kernel runs (so a 0 here is never promised: what reads the result must not rely on it).
    if (out.dim(d) <= 0) out.set_dim(d, known);
    else if (known >= 0 && known != out.dim(d))
      return invalid(ctx, "'value' ", v.to_string(), " does not fit the TensorArray's elements (buffer ", buffer.to_string(),
                     ")");
  }
  if (ctx.attrs.get_or<bool>("grow", false)) out.set_dim(0, -1);  // a dynamic_size array: its size is the writes'
  return out;
}

// TensorArrayV3(size): dtype, element_shape (its rank must be known).
absl::StatusOr<OutputSpecs> buffer_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_index(ctx, 0, "size", 0));
  const DType dtype = ctx.attrs.get<DType>("dtype");
  if (std::find(kElementDTypes.begin(), kElementDTypes.end(), dtype) == kElementDTypes.end())
    return invalid(ctx, "TensorArrays of ", dtype_name(dtype), " are not supported");
  Shape out{-1};
  for (int64_t d : ctx.attrs.get<Shape>("element_shape").dims()) out.push_back(d);
  return single_output(dtype, out);
}

absl::StatusOr<OutputSpecs> write_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_buffer(ctx));
  TF_RETURN_IF_ERROR(check_index(ctx, 1, "index", 0));
  TF_ASSIGN_OR_RETURN(Shape out, written_buffer(ctx, 2, 0));
  return single_output(ctx.inputs[0].dtype, out);
}

absl::StatusOr<OutputSpecs> scatter_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_buffer(ctx));
  TF_RETURN_IF_ERROR(check_index(ctx, 1, "indices", 1));
  if (ctx.inputs[2].shape.rank() < 1) return invalid(ctx, "'value' must have a rank of at least 1, not a scalar");
  const int64_t n = ctx.inputs[1].shape.dim(0), rows = ctx.inputs[2].shape.dim(0);
  if (n >= 0 && rows >= 0 && n != rows)
    return invalid(ctx, "'indices' has ", n, " elements and 'value' ", ctx.inputs[2].shape.to_string(), " has ", rows, " rows");
  TF_ASSIGN_OR_RETURN(Shape out, written_buffer(ctx, 2, 1));
  return single_output(ctx.inputs[0].dtype, out);
}

// TensorFlow's unstack (a scatter to indices 0, 1, ..., one per row of the value).
absl::StatusOr<OutputSpecs> unstack_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_buffer(ctx));
  if (ctx.inputs[1].shape.rank() < 1) return invalid(ctx, "'value' must have a rank of at least 1, not a scalar");
  TF_ASSIGN_OR_RETURN(Shape out, written_buffer(ctx, 1, 1));
  return single_output(ctx.inputs[0].dtype, out);
}

Shape element_of(const Shape& buffer) { return Shape(buffer.dims().subspan(1)); }  // rank >= 1: check_buffer

absl::StatusOr<OutputSpecs> read_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_buffer(ctx));
  TF_RETURN_IF_ERROR(check_index(ctx, 1, "index", 0));
  return single_output(ctx.inputs[0].dtype, element_of(ctx.inputs[0].shape));
}

absl::StatusOr<OutputSpecs> gather_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_buffer(ctx));
  TF_RETURN_IF_ERROR(check_index(ctx, 1, "indices", 1));
  Shape out{ctx.inputs[1].shape.dim(0)};
  const Shape element = element_of(ctx.inputs[0].shape);
  for (int64_t d : element.dims()) out.push_back(d);
  return single_output(ctx.inputs[0].dtype, out);
}

absl::StatusOr<OutputSpecs> size_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_buffer(ctx));
  return single_output(DType::kInt32, Shape{});
}

// Outputs whose dims the kernel decides (Note [Data-dependent output shapes]).
OpDef kTensorArrayBufferOp{.type = "TensorArrayBuffer", .api_name = "tensor_array", .num_inputs = 1,
                           .infer = buffer_shape, .kernel_dtype_input = -1, .differentiable = false,
                           .kernel_allocates_output = true, .tf_form = "dtype:type element_shape:shape"};
OpDef kTensorArrayWriteOp{.type = "TensorArrayBufferWrite", .api_name = "tensor_array_write", .num_inputs = 3,
                          .infer = write_shape, .differentiable = false, .kernel_allocates_output = true};
OpDef kTensorArrayScatterOp{.type = "TensorArrayBufferScatter", .api_name = "tensor_array_scatter", .num_inputs = 3,
                            .infer = scatter_shape, .differentiable = false, .kernel_allocates_output = true};
OpDef kTensorArrayUnstackOp{.type = "TensorArrayBufferUnstack", .api_name = "tensor_array_unstack", .num_inputs = 2,
                            .infer = unstack_shape, .differentiable = false, .kernel_allocates_output = true};
OpDef kTensorArrayReadOp{.type = "TensorArrayBufferRead", .api_name = "tensor_array_read", .num_inputs = 2,
                         .infer = read_shape, .differentiable = false, .kernel_allocates_output = true};
OpDef kTensorArrayGatherOp{.type = "TensorArrayBufferGather", .api_name = "tensor_array_gather", .num_inputs = 2,
                           .infer = gather_shape, .differentiable = false, .kernel_allocates_output = true};
OpDef kTensorArraySizeOp{.type = "TensorArrayBufferSize", .api_name = "tensor_array_size", .num_inputs = 1,
                         .infer = size_shape, .differentiable = false};

}  // namespace

void register_tensor_array_ops(OpRegistry& r) {
  for (const OpDef* op : {&kTensorArrayBufferOp, &kTensorArrayWriteOp, &kTensorArrayScatterOp, &kTensorArrayUnstackOp, &kTensorArrayReadOp,
                          &kTensorArrayGatherOp, &kTensorArraySizeOp})
    r.add(*op);
}

}  // namespace tapeflow
