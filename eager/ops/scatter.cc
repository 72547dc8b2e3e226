// The scatter family: OpDefs of GatherNd, ScatterNd and TensorScatterUpdate with their shape
// functions, and the public API (eager/ops/scatter.h). Kernels are in devices/cpu/scatter.cc,
// gradients in tape/gradients/scatter.cc.
#include "eager/ops/scatter.h"

#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using shape_fns::invalid;

// K, the last dim of `indices`, checked against the rank of the shape it indexes. K must be
// known even in a graph: the output's rank depends on it.
absl::StatusOr<int> index_depth(const InferenceContext& ctx, int indices_input, const Shape& target,
                                const char* target_name) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, indices_input, "indices", {DType::kInt32, DType::kInt64}));
  const Shape& indices = ctx.inputs[indices_input].shape;
  if (indices.rank() < 1) return invalid(ctx, "input 'indices' must have rank >= 1, got a scalar");
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k < 0) return invalid(ctx, "the last dimension of 'indices' ", indices.to_string(), " must be known");
  if (k > target.rank())
    return invalid(ctx, "the last dimension of 'indices' ", indices.to_string(), " is ", k, ", more than the rank ",
                   target.rank(), " of ", target_name, " ", target.to_string());
  return static_cast<int>(k);
}

// indices.shape[:-1] + target.shape[k:]: the shape of gather_nd's output and of the updates.
Shape slices_shape(const Shape& indices, const Shape& target, int k) {
  Shape out;
  for (int i = 0; i + 1 < indices.rank(); ++i) out.push_back(indices.dim(i));
  for (int i = k; i < target.rank(); ++i) out.push_back(target.dim(i));
  return out;
}

absl::Status check_updates(const InferenceContext& ctx, int updates_input, const Shape& want, const Shape& indices,
                           const Shape& target, const char* target_name) {
  const Shape& got = ctx.inputs[updates_input].shape;
  if (!got.is_compatible_with(want))
    return invalid(ctx, "input 'updates' has shape ", got.to_string(), " but indices ", indices.to_string(), " into ",
                   target_name, " ", target.to_string(), " need updates of shape ", want.to_string());
  return absl::OkStatus();
}

absl::StatusOr<OutputSpecs> gather_nd_shape(const InferenceContext& ctx) {
  const TensorSpec& params = ctx.inputs[0];
  TF_ASSIGN_OR_RETURN(int k, index_depth(ctx, 1, params.shape, "params"));
  return single_output(params.dtype, slices_shape(ctx.inputs[1].shape, params.shape, k));
}

// Inputs: indices, updates; attribute shape (TensorFlow's third input).
absl::StatusOr<OutputSpecs> scatter_nd_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 1, "updates", shape_fns::kNumeric));
  const std::vector<int64_t>& dims = ctx.attrs.get<std::vector<int64_t>>("shape");
  for (int64_t d : dims)
    if (d < 0) return invalid(ctx, "shape ", shape_fns::ints_to_string(dims), " has a negative dimension ", d);
  const Shape target(dims);
  TF_ASSIGN_OR_RETURN(int k, index_depth(ctx, 0, target, "shape"));
  TF_RETURN_IF_ERROR(
      check_updates(ctx, 1, slices_shape(ctx.inputs[0].shape, target, k), ctx.inputs[0].shape, target, "shape"));
  return single_output(ctx.inputs[1].dtype, target);
}

absl::StatusOr<OutputSpecs> tensor_scatter_update_shape(const InferenceContext& ctx) {
  const TensorSpec& tensor = ctx.inputs[0];
  if (ctx.inputs[2].dtype != tensor.dtype)
    return invalid(ctx, "input 'updates' has dtype ", dtype_name(ctx.inputs[2].dtype), " but 'tensor' has dtype ",
                   dtype_name(tensor.dtype));
  TF_ASSIGN_OR_RETURN(int k, index_depth(ctx, 1, tensor.shape, "tensor"));
  TF_RETURN_IF_ERROR(check_updates(ctx, 2, slices_shape(ctx.inputs[1].shape, tensor.shape, k), ctx.inputs[1].shape,
                                   tensor.shape, "tensor"));
  return single_output(tensor.dtype, tensor.shape);
}

OpDef kGatherNd{.type = "GatherNd", .api_name = "gather_nd", .num_inputs = 2, .infer = gather_nd_shape,
                .tf_form = "Tparams=in0 Tindices=in1"};
// TensorFlow's shape input has the indices' dtype (Tindices): kind "idx" (Note [GraphDef form]).
OpDef kScatterNd{.type = "ScatterNd", .api_name = "scatter_nd", .num_inputs = 2, .infer = scatter_nd_shape,
                 .kernel_dtype_input = 1, .tf_form = "T=in1 Tindices=in0 shape@idx"};
OpDef kTensorScatterUpdate{.type = "TensorScatterUpdate", .api_name = "tensor_scatter_update", .num_inputs = 3,
                           .infer = tensor_scatter_update_shape, .tf_form = "T=in0 Tindices=in1"};

}  // namespace

void register_scatter_ops(OpRegistry& r) {
  r.add(kGatherNd);
  r.add(kScatterNd);
  r.add(kTensorScatterUpdate);
}

Tensor gather_nd(const Tensor& params, const Tensor& indices, std::source_location loc) {
  const Tensor inputs[2] = {params, indices};
  return execute_single(kGatherNd, inputs, AttrMap(), loc);
}

Tensor scatter_nd(const Tensor& indices, const Tensor& updates, std::vector<int64_t> shape, std::source_location loc) {
  const Tensor inputs[2] = {indices, updates};
  return execute_single(kScatterNd, inputs, AttrMap{{"shape", std::move(shape)}}, loc);
}

Tensor tensor_scatter_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             std::source_location loc) {
  const Tensor inputs[3] = {tensor, indices, updates};
  return execute_single(kTensorScatterUpdate, inputs, AttrMap(), loc);
}

}  // namespace tapeflow
