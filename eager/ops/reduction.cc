#include "eager/ops/reduction.h"

#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/binary.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

constexpr std::initializer_list<DType> kProdTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                                     DType::kInt64};

// Maps `axes` into [0, rank) and rejects out-of-range and repeated axes. The messages carry
// no op prefix (the caller adds it).
absl::StatusOr<std::vector<bool>> reduced_mask(absl::Span<const int64_t> axes, int rank) {
  std::vector<bool> mask(rank, false);
  for (int64_t a : axes) {
    TF_ASSIGN_OR_RETURN(int axis, normalize_axis(a, rank));
    if (mask[axis])
      return absl::InvalidArgumentError(absl::StrCat("axis ", a, " is repeated in axes [",
                                                     absl::StrJoin(axes, ", "), "] for a tensor of rank ", rank));
    mask[axis] = true;
  }
  return mask;
}

absl::Status with_prefix(const absl::Status& s, const char* op) {
  return with_op_prefix(s, std::string_view(op));
}

// Attributes: axes (the exact axes to reduce; empty reduces none) and keep_dims.
absl::StatusOr<OutputSpecs> reduce_shape(const InferenceContext& ctx, std::initializer_list<DType> allowed,
                                         bool empty_int_is_error) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", allowed));
  const TensorSpec& x = ctx.inputs[0];
  auto mask = reduced_mask(ctx.attrs.get<std::vector<int64_t>>("axes"), x.shape.rank());
  if (!mask.ok()) return with_prefix(mask.status(), ctx.op);
  const bool keep_dims = ctx.attrs.get<bool>("keep_dims");
  Shape out;
  for (int i = 0; i < x.shape.rank(); ++i) {
    const int64_t d = x.shape.dim(i);
    if (!(*mask)[i]) {
      out.push_back(d);
      continue;
    }
    if (empty_int_is_error && d == 0 && is_integer(x.dtype))
      return absl::InvalidArgumentError(absl::StrCat(
          "[", ctx.op, "] cannot reduce the empty axis ", i, " of input 'x' ", x.shape.to_string(),
          ": an integer ", dtype_name(x.dtype), " has no identity for this reduction"));
    if (keep_dims) out.push_back(1);
  }
  return single_output(x.dtype, std::move(out));
}

absl::StatusOr<OutputSpecs> sum_shape(const InferenceContext& ctx) {
  return reduce_shape(ctx, shape_fns::kNumeric, false);
}
absl::StatusOr<OutputSpecs> extremum_shape(const InferenceContext& ctx) {
  return reduce_shape(ctx, shape_fns::kNumeric, true);
}
absl::StatusOr<OutputSpecs> prod_shape(const InferenceContext& ctx) { return reduce_shape(ctx, kProdTypes, false); }
// TensorFlow's Mean: the sum divided by the number of reduced elements (integers truncate). An
// integer mean of nothing is undefined (a float one is nan, as 0 / 0).
absl::StatusOr<OutputSpecs> mean_shape(const InferenceContext& ctx) {
  TF_ASSIGN_OR_RETURN(OutputSpecs out, reduce_shape(ctx, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}, false));
  const TensorSpec& x = ctx.inputs[0];
  if (is_integer(x.dtype))
    for (int64_t a : ctx.attrs.get<std::vector<int64_t>>("axes"))
      if (x.shape.dim(a < 0 ? static_cast<int>(a) + x.shape.rank() : static_cast<int>(a)) == 0)
        return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] the integer mean of the empty input 'x' ",
                                                       x.shape.to_string(), " is undefined"));
  return out;
}
absl::StatusOr<OutputSpecs> logical_shape(const InferenceContext& ctx) {
  return reduce_shape(ctx, {DType::kBool}, false);
}

// Attributes: axis, output_type.
absl::StatusOr<OutputSpecs> arg_shape(const InferenceContext& ctx) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "x", shape_fns::kNumeric));
  const TensorSpec& x = ctx.inputs[0];
  const DType out_type = ctx.attrs.get<DType>("output_type");
  if (out_type != DType::kInt32 && out_type != DType::kInt64)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] output_type must be int32 or int64, got ",
                                                   dtype_name(out_type)));
  auto axis = normalize_axis(ctx.attrs.get<int64_t>("axis"), x.shape.rank());
  if (!axis.ok()) return with_prefix(axis.status(), ctx.op);
  const int64_t d = x.shape.dim(*axis);
  if (d == 0)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] cannot reduce the empty axis ", *axis,
                                                   " of input 'x' ", x.shape.to_string()));
  if (out_type == DType::kInt32 && d > std::numeric_limits<int32_t>::max())
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] axis ", *axis, " has ", d,
                                                   " elements, too many for output_type int32"));
  Shape out = x.shape;
  out.erase(*axis);
  return single_output(out_type, std::move(out));
}

OpDef kSum{.type = "Sum", .api_name = "reduce_sum", .num_inputs = 1, .infer = sum_shape,
    .tf_form = "T=in0 axes@ints Tidx=index keep_dims:bool=false"};
OpDef kMean{.type = "Mean", .api_name = "reduce_mean", .num_inputs = 1, .infer = mean_shape,
    .tf_form = "T=in0 axes@ints Tidx=index keep_dims:bool=false"};
OpDef kMax{.type = "Max", .api_name = "reduce_max", .num_inputs = 1, .infer = extremum_shape,
    .tf_form = "T=in0 axes@ints Tidx=index keep_dims:bool=false"};
OpDef kMin{.type = "Min", .api_name = "reduce_min", .num_inputs = 1, .infer = extremum_shape,
    .tf_form = "T=in0 axes@ints Tidx=index keep_dims:bool=false"};
OpDef kProd{.type = "Prod", .api_name = "reduce_prod", .num_inputs = 1, .infer = prod_shape,
    .tf_form = "T=in0 axes@ints Tidx=index keep_dims:bool=false"};
// TensorFlow's All and Any have no "T" attr (bool only).
OpDef kAll{.type = "All", .api_name = "reduce_all", .num_inputs = 1, .infer = logical_shape, .differentiable = false,
    .tf_form = "axes@ints Tidx=index keep_dims:bool=false"};
OpDef kAny{.type = "Any", .api_name = "reduce_any", .num_inputs = 1, .infer = logical_shape, .differentiable = false,
    .tf_form = "axes@ints Tidx=index keep_dims:bool=false"};
OpDef kArgMax{.type = "ArgMax", .api_name = "argmax", .num_inputs = 1, .infer = arg_shape,
              .differentiable = false,
    .tf_form = "T=in0 axis@int Tidx=index output_type:type=int64"};
OpDef kArgMin{.type = "ArgMin", .api_name = "argmin", .num_inputs = 1, .infer = arg_shape,
              .differentiable = false,
    .tf_form = "T=in0 axis@int Tidx=index output_type:type=int64"};

// Axes::all() becomes the explicit list here: the op itself always gets the exact axes (empty
// reduces none), so gradients and graphs never reinterpret a list.
Tensor run_reduce(const OpDef& op, const Tensor& x, const Axes& axes, bool keepdims, std::source_location loc) {
  const Tensor inputs[1] = {x};
  return execute_single(op, inputs,
                        AttrMap{{"axes", axes.resolve(x.defined() ? x.rank() : 0)}, {"keep_dims", keepdims}}, loc);
}

Tensor run_arg(const OpDef& op, const Tensor& x, int64_t axis, DType output_type, std::source_location loc) {
  const Tensor inputs[1] = {x};
  return execute_single(op, inputs, AttrMap{{"axis", axis}, {"output_type", output_type}}, loc);
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  for (const OpDef* op : {&kSum, &kMean, &kMax, &kMin, &kProd, &kAll, &kAny, &kArgMax, &kArgMin}) r.add(*op);
}

Tensor reduce_sum(const Tensor& x, const Axes& axes, bool keepdims, std::source_location loc) {
  return run_reduce(kSum, x, axes, keepdims, loc);
}
Tensor reduce_max(const Tensor& x, const Axes& axes, bool keepdims, std::source_location loc) {
  return run_reduce(kMax, x, axes, keepdims, loc);
}
Tensor reduce_min(const Tensor& x, const Axes& axes, bool keepdims, std::source_location loc) {
  return run_reduce(kMin, x, axes, keepdims, loc);
}
Tensor reduce_prod(const Tensor& x, const Axes& axes, bool keepdims, std::source_location loc) {
  return run_reduce(kProd, x, axes, keepdims, loc);
}

Tensor reduce_all(const Tensor& x, const Axes& axes, bool keepdims, std::source_location loc) {
  return run_reduce(kAll, x, axes, keepdims, loc);
}
Tensor reduce_any(const Tensor& x, const Axes& axes, bool keepdims, std::source_location loc) {
  return run_reduce(kAny, x, axes, keepdims, loc);
}

std::vector<int64_t> Axes::resolve(int rank) const {
  if (!all_) return axes_;
  std::vector<int64_t> every(static_cast<size_t>(rank));
  std::iota(every.begin(), every.end(), int64_t{0});
  return every;
}

Tensor reduce_mean(const Tensor& x, const Axes& axes, bool keepdims, std::source_location loc) {
  return run_reduce(kMean, x, axes, keepdims, loc);
}

Tensor argmax(const Tensor& x, int64_t axis, DType output_type, std::source_location loc) {
  return run_arg(kArgMax, x, axis, output_type, loc);
}
Tensor argmin(const Tensor& x, int64_t axis, DType output_type, std::source_location loc) {
  return run_arg(kArgMin, x, axis, output_type, loc);
}

}  // namespace tapeflow
