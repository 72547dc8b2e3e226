#include "eager/ops/random.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"

namespace tapeflow {

namespace {

using internal::check_dims;

// Every random op has attrs shape (Shape), dtype (DType), seed and seed2 (int64, resolved by
// next_random_seeds), plus its distribution's parameters.
absl::Status check_random_dtype(const InferenceContext& ctx, std::initializer_list<DType> allowed) {
  const DType dtype = ctx.attrs.get<DType>("dtype");
  for (DType a : allowed) if (a == dtype) return absl::OkStatus();
  std::string names;
  for (DType a : allowed) absl::StrAppend(&names, names.empty() ? "" : ", ", dtype_name(a));
  return absl::InvalidArgumentError(
      absl::StrCat("[", ctx.op, "] dtype ", dtype_name(dtype), " is not supported; expected one of ", names));
}

// RandomUniform: minval, maxval are double for floating dtypes, int64 for integer ones.
absl::StatusOr<OutputSpecs> uniform_shape(const InferenceContext& ctx) {
  const Shape& shape = ctx.attrs.get<Shape>("shape");
  TF_RETURN_IF_ERROR(check_dims(ctx.op, "shape", shape));
  TF_RETURN_IF_ERROR(check_random_dtype(ctx, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}));
  const DType dtype = ctx.attrs.get<DType>("dtype");
  if (is_integer(dtype)) {
    const int64_t lo = ctx.attrs.get<int64_t>("minval"), hi = ctx.attrs.get<int64_t>("maxval");
    if (lo >= hi)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] minval (", lo, ") must be less than maxval (",
                                                     hi, ") for integer dtypes"));
  }
  return single_output(dtype, shape);
}

// RandomNormal, TruncatedNormal: mean, stddev (double).
absl::StatusOr<OutputSpecs> normal_shape(const InferenceContext& ctx) {
  const Shape& shape = ctx.attrs.get<Shape>("shape");
  TF_RETURN_IF_ERROR(check_dims(ctx.op, "shape", shape));
  TF_RETURN_IF_ERROR(check_random_dtype(ctx, {DType::kFloat32, DType::kFloat64}));
  const double stddev = ctx.attrs.get<double>("stddev");
  if (!(stddev >= 0))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] stddev must be non-negative, got ", stddev));
  return single_output(ctx.attrs.get<DType>("dtype"), shape);
}

OpDef kRandomUniform{.type = "RandomUniform", .api_name = "random_uniform", .num_inputs = 0,
                     .infer = uniform_shape, .kernel_dtype_input = -1, .stateful = true, .differentiable = false,
    // TensorFlow's RandomUniform has no range attrs (it scales with separate ops): tapeflow's
    // minval/maxval (double or int64 by dtype) are written as its own "_minval"/"_maxval", and a
    // node TensorFlow wrote, without them, draws from [0, 1) (devices/cpu/random.cc).
    .tf_form = "shape@shape T=index dtype:type seed:int=0 seed2:int=0"};
// TensorFlow's RandomStandardNormal and TruncatedNormal draw with mean 0 and stddev 1 (Python
// scales with separate ops): other values are written as attrs TensorFlow does not have, so
// only tapeflow reads such a node. RandomNormal is written as RandomStandardNormal (graph_def.cc).
OpDef kRandomNormal{.type = "RandomNormal", .api_name = "random_normal", .num_inputs = 0, .infer = normal_shape,
                    .kernel_dtype_input = -1, .stateful = true, .differentiable = false,
    .tf_form = "shape@shape T=index dtype:type seed:int=0 seed2:int=0 mean:float=0? stddev:float=1?"};
OpDef kTruncatedNormal{.type = "TruncatedNormal", .api_name = "truncated_normal", .num_inputs = 0,
                       .infer = normal_shape, .kernel_dtype_input = -1, .stateful = true, .differentiable = false,
    .tf_form = "shape@shape T=index dtype:type seed:int=0 seed2:int=0 mean:float=0? stddev:float=1?"};

// Validates before drawing seeds, so a failing call leaves the seed counters as they were.
Tensor run_random(const OpDef& op, AttrMap attrs, std::optional<int64_t> op_seed, std::source_location loc) {
  attrs.set("seed", int64_t{0});
  attrs.set("seed2", int64_t{0});
  InferenceContext ctx{op.api_name, {}, attrs};
  absl::StatusOr<OutputSpecs> out = op.infer(ctx);
  if (!out.ok()) throw_status(with_op_prefix(out.status(), op.api_name), loc);
  const RandomSeeds seeds = next_random_seeds(op_seed);
  attrs.set("seed", seeds.seed);
  attrs.set("seed2", seeds.seed2);
  return execute_single(op, {}, attrs, loc);
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  for (const OpDef* op : {&kRandomUniform, &kRandomNormal, &kTruncatedNormal}) r.add(*op);
}

Tensor random_uniform(const ShapeArg& shape, double minval, double maxval, DType dtype, std::optional<int64_t> seed,
                      std::source_location loc) {
  AttrMap attrs{{"shape", shape.shape()}, {"dtype", dtype}};
  if (dtype == DType::kInt32 || dtype == DType::kInt64) {
    attrs.set("minval", internal::whole_number("random_uniform", "minval", minval, dtype, loc));
    attrs.set("maxval", internal::whole_number("random_uniform", "maxval", maxval, dtype, loc));
  } else {
    attrs.set("minval", minval);
    attrs.set("maxval", maxval);
  }
  return run_random(kRandomUniform, std::move(attrs), seed, loc);
}

Tensor random_normal(const ShapeArg& shape, double mean, double stddev, DType dtype, std::optional<int64_t> seed,
                     std::source_location loc) {
  AttrMap attrs{{"shape", shape.shape()}, {"dtype", dtype}, {"mean", mean}, {"stddev", stddev}};
  return run_random(kRandomNormal, std::move(attrs), seed, loc);
}

Tensor truncated_normal(const ShapeArg& shape, double mean, double stddev, DType dtype, std::optional<int64_t> seed,
                        std::source_location loc) {
  AttrMap attrs{{"shape", shape.shape()}, {"dtype", dtype}, {"mean", mean}, {"stddev", stddev}};
  return run_random(kTruncatedNormal, std::move(attrs), seed, loc);
}

}  // namespace tapeflow
