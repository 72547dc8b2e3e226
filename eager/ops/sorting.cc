// The sorting family: OpDefs of TopKV2 and Unique with their shape functions, and the public
// API (eager/ops/sorting.h). Kernels are in devices/cpu/sorting.cc, top_k's gradient in
// tape/gradients/sorting.cc.
#include "eager/ops/sorting.h"

#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using shape_fns::invalid;

// Attributes: k (TensorFlow's second input), sorted. Outputs: values, indices (int32).
absl::StatusOr<OutputSpecs> top_k_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", shape_fns::kNumeric));
  const TensorSpec& x = ctx.inputs[0];
  const int64_t k = ctx.attrs.get<int64_t>("k");
  (void)ctx.attrs.get<bool>("sorted");  // present and a bool, checked before any kernel runs
  if (x.shape.rank() < 1) return invalid(ctx, "input 'x' must have rank >= 1, got a scalar");
  if (k < 0) return invalid(ctx, "k must be >= 0, got ", k);
  const int64_t n = x.shape.dim(x.shape.rank() - 1);
  if (n >= 0 && n < k)
    return invalid(ctx, "input 'x' of shape ", x.shape.to_string(), " has ", n,
                   " values in its last dimension, fewer than k = ", k);
  Shape out = x.shape;
  out.set_dim(out.rank() - 1, k);
  OutputSpecs specs;
  specs.push_back(TensorSpec{x.dtype, out});
  specs.push_back(TensorSpec{DType::kInt32, std::move(out)});
  return specs;
}

// Outputs: y (data-dependent length), idx (out_idx, like x).
absl::StatusOr<OutputSpecs> unique_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const DType out_idx = ctx.attrs.get<DType>("out_idx");
  if (out_idx != DType::kInt32 && out_idx != DType::kInt64)
    return invalid(ctx, "out_idx must be int32 or int64, got ", dtype_name(out_idx));
  if (x.shape.rank() != 1) return invalid(ctx, "input 'x' must be a vector, got shape ", x.shape.to_string());
  OutputSpecs specs;
  specs.push_back(TensorSpec{x.dtype, Shape{kUnknownDim}});
  specs.push_back(TensorSpec{out_idx, x.shape});
  return specs;
}

OpDef kTopK{.type = "TopKV2", .api_name = "top_k", .num_inputs = 1, .infer = top_k_shape,
            .tf_form = "T=in0 k@int sorted:bool=true"};
// Note [Data-dependent output shapes]: y's length is known only once the kernel has run.
OpDef kUnique{.type = "Unique", .api_name = "unique", .num_inputs = 1, .infer = unique_shape,
              .differentiable = false, .kernel_allocates_output = true,
              .tf_form = "T=in0 out_idx:type=int32"};

}  // namespace

void register_sorting_ops(OpRegistry& r) {
  r.add(kTopK);
  r.add(kUnique);
}

TopK top_k(const Tensor& x, int64_t k, bool sorted, std::source_location loc) {
  const Tensor inputs[1] = {x};
  const AttrMap attrs{{"k", k}, {"sorted", sorted}};
  TensorList out = execute(OpCall{kTopK, inputs, attrs, loc});
  return {std::move(out[0]), std::move(out[1])};
}

Unique unique(const Tensor& x, DType out_idx, std::source_location loc) {
  const Tensor inputs[1] = {x};
  const AttrMap attrs{{"out_idx", out_idx}};
  TensorList out = execute(OpCall{kUnique, inputs, attrs, loc});
  return {std::move(out[0]), std::move(out[1])};
}

}  // namespace tapeflow
