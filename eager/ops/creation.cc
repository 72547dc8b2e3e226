#include "eager/ops/creation.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "core/range_size.h"
#include "eager/context.h"

namespace tapeflow {

namespace internal {

absl::Status check_dims(const char* op, const char* arg, const Shape& shape) {
  int64_t total = 1;
  for (int64_t d : shape.dims()) {
    // Shape::to_string prints -1 as "?" (unknown); here it is a user's bad value, shown as is.
    if (d < 0)
      return absl::InvalidArgumentError(absl::StrCat("[", op, "] ", arg, " must be non-negative, got [",
                                                     absl::StrJoin(shape.dims(), ","), "]"));
    // Guard the element count: a product that overflows int64 cannot be allocated anyway.
    if (d > 0 && total > std::numeric_limits<int64_t>::max() / d)
      return absl::InvalidArgumentError(absl::StrCat("[", op, "] ", arg, " ", shape.to_string(),
                                                     " has too many elements"));
    total *= d;
  }
  return absl::OkStatus();
}

int64_t whole_number(const char* op, const char* arg, double v, DType dtype, std::source_location loc) {
  const double lo = dtype == DType::kInt32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = dtype == DType::kInt32 ? 2147483648.0 : 9223372036854775808.0;  // exclusive
  if (!(std::floor(v) == v && v >= lo && v < hi))
    throw InvalidArgumentError(absl::StrCat("[", op, "] ", arg, " = ", v, " is not a whole number that fits ",
                                            dtype_name(dtype)), loc);
  return static_cast<int64_t>(v);
}

}  // namespace internal

namespace {

using internal::check_dims;

AttrValue scalar_attr(DType dtype, double value) {
  if (is_floating(dtype)) return value;
  if (dtype == DType::kBool) return value != 0;
  return static_cast<int64_t>(value);
}

// Fill: attrs shape (Shape), dtype (DType), value (double for floating dtypes, int64 for
// integers, bool for bool).
absl::StatusOr<OutputSpecs> fill_shape(const InferenceContext& ctx) {
  const Shape& shape = ctx.attrs.get<Shape>("shape");
  const AttrValue* value = ctx.attrs.find("value");
  if (value == nullptr || !(std::holds_alternative<double>(*value) || std::holds_alternative<int64_t>(*value) ||
                            std::holds_alternative<bool>(*value)))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] attribute 'value' must be a number or a bool"));
  TF_RETURN_IF_ERROR(check_dims(ctx.op, "dims", shape));
  return single_output(ctx.attrs.get<DType>("dtype"), shape);
}

absl::StatusOr<OutputSpecs> like_shape(const InferenceContext& ctx) {
  return single_output(ctx.inputs[0].dtype, ctx.inputs[0].shape);
}

// Range: attrs start, limit, delta (double for floating dtypes, int64 for integers), dtype.
absl::StatusOr<OutputSpecs> range_out_shape(const InferenceContext& ctx) {
  const DType dtype = ctx.attrs.get<DType>("dtype");
  absl::StatusOr<int64_t> n;
  switch (dtype) {
    case DType::kFloat32:
      n = range_size<float>(ctx.op, static_cast<float>(ctx.attrs.get<double>("start")),
                            static_cast<float>(ctx.attrs.get<double>("limit")),
                            static_cast<float>(ctx.attrs.get<double>("delta")));
      break;
    case DType::kFloat64:
      n = range_size<double>(ctx.op, ctx.attrs.get<double>("start"), ctx.attrs.get<double>("limit"),
                             ctx.attrs.get<double>("delta"));
      break;
    case DType::kInt32:
    case DType::kInt64:
      n = range_size<int64_t>(ctx.op, ctx.attrs.get<int64_t>("start"), ctx.attrs.get<int64_t>("limit"),
                              ctx.attrs.get<int64_t>("delta"));
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] dtype ", dtype_name(dtype),
                                                     " is not supported; expected float32, float64, int32 or int64"));
  }
  if (!n.ok()) return n.status();
  return single_output(dtype, Shape{*n});
}

// LinSpace: attrs start, stop (double), num (int64), dtype.
absl::StatusOr<OutputSpecs> linspace_shape(const InferenceContext& ctx) {
  const DType dtype = ctx.attrs.get<DType>("dtype");
  if (!is_floating(dtype))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] dtype ", dtype_name(dtype),
                                                   " is not supported; expected float32 or float64"));
  const int64_t num = ctx.attrs.get<int64_t>("num");
  if (num <= 0) return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] num must be positive, got ", num));
  return single_output(dtype, Shape{num});
}

// Creation ops have no gradient: their outputs do not depend on any tensor input's values.
OpDef kFill{.type = "Fill", .api_name = "fill", .num_inputs = 0, .infer = fill_shape, .kernel_dtype_input = -1,
            .differentiable = false,
    .tf_form = "shape@shape value@num dtype>T:type index_type=index"};
// Note [Fills of run-time shape]: TensorFlow's Fill takes its dims as a tensor; tapeflow's Fill
// holds them as an attribute, which the import folds from constants (Note [Folded constant
// inputs], graph/graph_def_import.cc). A Fill whose dims are known only at run time (Keras' RNN
// layers start from Fill(Pack(batch, units), 0) when the batch dim is unknown) is read as
// DynamicFill: dims and value are tensors, and the kernel allocates the output once it has read
// the dims (Note [Data-dependent output shapes]). Written back as TensorFlow's Fill. Range's
// bounds likewise (DynamicRange, written back as Range).
absl::StatusOr<OutputSpecs> dynamic_fill_shape(const InferenceContext& ctx) {
  const TensorSpec& dims = ctx.inputs[0];
  const TensorSpec& value = ctx.inputs[1];
  constexpr int64_t kMaxDims = 32;
  if (dims.dtype != DType::kInt32 && dims.dtype != DType::kInt64)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] dims must be int32 or int64, got ", dtype_name(dims.dtype)));
  if (dims.shape.rank() != 1 || dims.shape.dim(0) < 0 || dims.shape.dim(0) > kMaxDims)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] dims must be a vector of known length (at most ",
                                                   kMaxDims, "), got shape ", dims.shape.to_string()));
  if (value.shape.rank() != 0)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] value must be a scalar, got shape ", value.shape.to_string()));
  Shape out;
  for (int64_t i = 0; i < dims.shape.dim(0); ++i) out.push_back(-1);
  return single_output(value.dtype, out);
}

// DynamicRange: Range whose start, limit and delta are tensors (a position index over a
// sequence of run-time length, tf.range(tf.shape(x)[1])), the same Note. The output is a vector
// of unknown length in the bounds' dtype.
absl::StatusOr<OutputSpecs> dynamic_range_shape(const InferenceContext& ctx) {
  const DType dtype = ctx.inputs[0].dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64 && dtype != DType::kInt32 && dtype != DType::kInt64)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] dtype ", dtype_name(dtype),
                                                   " is not supported; expected float32, float64, int32 or int64"));
  for (int i = 0; i < 3; ++i) {
    if (ctx.inputs[i].dtype != dtype)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] start, limit and delta must have one dtype, got ",
                                                     dtype_name(dtype), " and ", dtype_name(ctx.inputs[i].dtype)));
    if (ctx.inputs[i].shape.rank() != 0)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] start, limit and delta must be scalars, got shape ",
                                                     ctx.inputs[i].shape.to_string()));
  }
  return single_output(dtype, Shape{-1});
}

OpDef kDynamicRange{.type = "DynamicRange", .api_name = "range", .num_inputs = 3, .infer = dynamic_range_shape,
                    .differentiable = false, .kernel_allocates_output = true, .tf_form = "Tidx=in0"};
OpDef kDynamicFill{.type = "DynamicFill", .api_name = "fill", .num_inputs = 2, .infer = dynamic_fill_shape,
                   .kernel_dtype_input = 1, .differentiable = false, .kernel_allocates_output = true,
                   .tf_form = "T=in1 index_type=in0"};
OpDef kZerosLike{.type = "ZerosLike", .api_name = "zeros_like", .num_inputs = 1, .infer = like_shape,
                 .differentiable = false};
OpDef kOnesLike{.type = "OnesLike", .api_name = "ones_like", .num_inputs = 1, .infer = like_shape,
                .differentiable = false};
OpDef kRange{.type = "Range", .api_name = "range", .num_inputs = 0, .infer = range_out_shape,
             .kernel_dtype_input = -1, .differentiable = false,
    .tf_form = "start@num limit@num delta@num dtype>Tidx:type=int32"};
OpDef kLinSpace{.type = "LinSpace", .api_name = "linspace", .num_inputs = 0, .infer = linspace_shape,
                .kernel_dtype_input = -1, .differentiable = false,
    .tf_form = "start@val stop@val num@int dtype>T:type Tidx=index"};

// The Fill op for zeros/ones: dims are checked first so messages name the function called.
Tensor fill_constant(const char* api, const Shape& shape, DType dtype, double value, std::source_location loc) {
  throw_if_error(check_dims(api, "shape", shape), loc);
  AttrMap attrs{{"shape", shape}, {"dtype", dtype}, {"value", scalar_attr(dtype, value)}};
  return execute_single(kFill, {}, attrs, loc);
}

Tensor run_like(const OpDef& op, const Operand& x, std::source_location loc) {
  const Tensor inputs[1] = {x.resolve(op.api_name, nullptr)};
  return execute_single(op, inputs, AttrMap(), loc);
}

}  // namespace

void register_creation_ops(OpRegistry& r) {
  for (const OpDef* op : {&kFill, &kDynamicFill, &kZerosLike, &kOnesLike, &kRange, &kDynamicRange, &kLinSpace}) r.add(*op);
}

Tensor fill(const ShapeArg& dims, const Operand& value, std::source_location loc) {
  const Tensor v = value.resolve("fill", nullptr);
  if (!v.defined()) throw InvalidArgumentError("[fill] value is " + v.empty_reason(), loc);
  if (v.rank() != 0)
    throw InvalidArgumentError(absl::StrCat("[fill] value must be a scalar, got shape ", v.shape().to_string()), loc);
  // The value becomes an attribute, read on the host.
  AttrValue attr = dispatch_dtype(v.dtype(), [&]<typename T>() -> AttrValue {
    const T x = v.item<T>();
    if constexpr (std::is_same_v<T, bool>) return x;
    else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(x);
    else return static_cast<int64_t>(x);
  });
  AttrMap attrs{{"shape", dims.shape()}, {"dtype", v.dtype()}, {"value", std::move(attr)}};
  return execute_single(kFill, {}, attrs, loc);
}

Tensor zeros(const ShapeArg& shape, DType dtype, std::source_location loc) {
  return fill_constant("zeros", shape.shape(), dtype, 0, loc);
}
Tensor ones(const ShapeArg& shape, DType dtype, std::source_location loc) {
  return fill_constant("ones", shape.shape(), dtype, 1, loc);
}
Tensor zeros_like(const Operand& x, std::source_location loc) { return run_like(kZerosLike, x, loc); }
Tensor ones_like(const Operand& x, std::source_location loc) { return run_like(kOnesLike, x, loc); }

Tensor range(double start, double limit, double delta, DType dtype, std::source_location loc) {
  if (dtype == DType::kInt32 || dtype == DType::kInt64) {
    return internal::range_int(internal::whole_number("range", "start", start, dtype, loc),
                               internal::whole_number("range", "limit", limit, dtype, loc),
                               internal::whole_number("range", "delta", delta, dtype, loc), dtype, loc);
  }
  AttrMap attrs{{"start", start}, {"limit", limit}, {"delta", delta}, {"dtype", dtype}};
  return execute_single(kRange, {}, attrs, loc);
}

namespace internal {
Tensor range_int(int64_t start, int64_t limit, int64_t delta, DType dtype, std::source_location loc) {
  if (dtype == DType::kInt32) {
    constexpr int64_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
    for (auto [name, v] : {std::pair{"start", start}, {"limit", limit}, {"delta", delta}}) {
      if (v < lo || v > hi)
        throw InvalidArgumentError(absl::StrCat("[range] ", name, " = ", v, " does not fit int32"), loc);
    }
  }
  AttrMap attrs{{"start", start}, {"limit", limit}, {"delta", delta}, {"dtype", dtype}};
  return execute_single(kRange, {}, attrs, loc);
}
}  // namespace internal

Tensor linspace(double start, double stop, int64_t num, DType dtype, std::source_location loc) {
  AttrMap attrs{{"start", start}, {"stop", stop}, {"num", num}, {"dtype", dtype}};
  return execute_single(kLinSpace, {}, attrs, loc);
}

}  // namespace tapeflow
