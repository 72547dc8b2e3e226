// The array op family: OpDefs with their shape functions, and the public API
// (eager/ops/array.h). Kernels are in devices/cpu/array.cc.
#include "eager/ops/array.h"

#include <cmath>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/conv.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

using Ints = std::vector<int64_t>;

// Splits of an empty dimension make empty tensors without limit; past this many (and past the
// dimension's size) a count is a mistake, not a request for gigabytes of handles.
constexpr int64_t kMaxSplitOutputs = 1 << 16;
bool too_many_outputs(int64_t n, int64_t dim) { return n > kMaxSplitOutputs && (dim < 0 || n > dim); }

using shape_fns::invalid;

using shape_fns::ints_to_string;

// "axis 3 is out of range for input 'x' of rank 2 (expected [-3, 3))". Ops that insert a dim
// (expand_dims, stack, one_hot) accept rank + 1 positions: slack = 1.
std::string axis_error(int64_t axis, int rank, int slack, std::string_view input) {
  const int n = rank + slack;
  return absl::StrCat("axis ", axis, " is out of range for input '", absl::string_view(input.data(), input.size()),
                      "' of rank ", rank, " (expected [", -n, ", ", n, "))");
}

absl::StatusOr<int> axis_of(const InferenceContext& ctx, int64_t axis, int rank, const char* input, int slack = 0) {
  const int n = rank + slack;
  if (axis < -n || axis >= n) return invalid(ctx, axis_error(axis, rank, slack, input));
  return static_cast<int>(axis < 0 ? axis + n : axis);
}

// A fill value must fit the dtype: integers whole and in range, so nothing wraps around.
absl::Status check_value_fits(const InferenceContext& ctx, double v, DType dt, const char* name) {
  bool ok = true;
  switch (dt) {
    case DType::kFloat32: ok = !std::isfinite(v) || std::abs(v) <= std::numeric_limits<float>::max(); break;
    case DType::kFloat64: break;
    case DType::kInt32: ok = v == std::trunc(v) && v >= INT32_MIN && v <= INT32_MAX; break;
    case DType::kInt64: ok = v == std::trunc(v) && v >= -0x1p63 && v < 0x1p63; break;
    case DType::kUInt8: ok = v == std::trunc(v) && v >= 0 && v <= 255; break;
    case DType::kBool: ok = v == 0 || v == 1; break;
  }
  if (!ok) return invalid(ctx, name, " ", v, " does not fit dtype ", dtype_name(dt));
  return absl::OkStatus();
}

// ---- views ----

absl::StatusOr<OutputSpecs> reshape_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& target = ctx.attrs.get<Ints>("shape");
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0)
        return invalid(ctx, "new shape ", ints_to_string(target), " has more than one -1 (dimensions ", inferred,
                       " and ", i, ")");
      inferred = static_cast<int>(i);
    } else if (target[i] < 0) {
      return invalid(ctx, "new shape ", ints_to_string(target), " has a negative dimension ", target[i]);
    } else {
      std::optional<int64_t> product = checked_mul(known, target[i]);
      if (!product && target[i] != 0)  // Note [Checked sizes]
        return invalid(ctx, "new shape ", ints_to_string(target), " is too large: its element count overflows int64");
      known = product.value_or(0);
    }
  }
  Shape out(target);
  const int64_t n = x.shape.num_elements();
  if (n < 0) return single_output(x.dtype, std::move(out));  // -1 stays unknown until run time
  if (inferred >= 0) {
    if (known == 0 || n % known != 0)
      return invalid(ctx, "cannot reshape input 'x' of shape ", x.shape.to_string(), " (", n,
                     " elements) into shape ", ints_to_string(target), ": ", n,
                     " elements cannot be split into parts of ", known);
    out.set_dim(inferred, n / known);
  } else if (known != n) {
    return invalid(ctx, "cannot reshape input 'x' of shape ", x.shape.to_string(), " (", n,
                   " elements) into shape ", ints_to_string(target), " (", known, " elements)");
  }
  return single_output(x.dtype, std::move(out));
}

absl::StatusOr<OutputSpecs> expand_dims_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, ctx.attrs.get<int64_t>("axis"), x.shape.rank(), "x", 1));
  Shape out = x.shape;
  out.insert(axis, 1);
  return single_output(x.dtype, std::move(out));
}

absl::StatusOr<OutputSpecs> squeeze_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& axes = ctx.attrs.get<Ints>("axes");
  const int rank = x.shape.rank();
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    // Unknown dims are kept: only dims known to be 1 are squeezed.
    for (int i = 0; i < rank; ++i) drop[i] = x.shape.dim(i) == 1;
  } else {
    for (int64_t a : axes) {
      TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, a, rank, "x"));
      const int64_t d = x.shape.dim(axis);
      if (d >= 0 && d != 1)
        return invalid(ctx, "cannot squeeze dimension ", axis, " of input 'x' of shape ", x.shape.to_string(),
                       ": its size is ", d, ", not 1");
      drop[axis] = true;
    }
  }
  Shape out;
  for (int i = 0; i < rank; ++i) if (!drop[i]) out.push_back(x.shape.dim(i));
  return single_output(x.dtype, std::move(out));
}

absl::StatusOr<OutputSpecs> identity_shape(const InferenceContext& ctx) {
  return single_output(ctx.inputs[0].dtype, ctx.inputs[0].shape);
}

absl::StatusOr<OutputSpecs> identity_n_shape(const InferenceContext& ctx) {
  if (ctx.inputs.empty()) return invalid(ctx, "needs at least one input");
  return OutputSpecs(ctx.inputs.begin(), ctx.inputs.end());
}

// ---- transpose ----

absl::StatusOr<OutputSpecs> transpose_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& perm = ctx.attrs.get<Ints>("perm");
  const int rank = x.shape.rank();
  if (static_cast<int>(perm.size()) != rank)
    return invalid(ctx, "perm ", ints_to_string(perm), " has ", perm.size(), " entries but input 'x' of shape ",
                   x.shape.to_string(), " has rank ", rank);
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return invalid(ctx, "perm ", ints_to_string(perm), " is not a permutation of [0, ", rank, ")");
    seen[p] = true;
    out.push_back(x.shape.dim(static_cast<int>(p)));
  }
  return single_output(x.dtype, std::move(out));
}

// ---- concat ----

absl::StatusOr<OutputSpecs> concat_shape(const InferenceContext& ctx) {
  const size_t n = ctx.inputs.size();
  if (n == 0) return invalid(ctx, "needs at least one input");
  const TensorSpec& first = ctx.inputs[0];
  const int rank = first.shape.rank();
  if (rank == 0) return invalid(ctx, "cannot concatenate scalars (input 0 has rank 0); use stack");
  TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, ctx.attrs.get<int64_t>("axis"), rank, "values[0]"));
  Shape out = first.shape;
  std::vector<size_t> source(rank, 0);  // which input fixed each known dim, for messages
  int64_t total = 0;
  for (size_t k = 0; k < n; ++k) {
    const TensorSpec& in = ctx.inputs[k];
    if (in.dtype != first.dtype)
      return invalid(ctx, "input ", k, " has dtype ", dtype_name(in.dtype), " but input 0 has dtype ",
                     dtype_name(first.dtype));
    if (in.shape.rank() != rank)
      return invalid(ctx, "input ", k, " has shape ", in.shape.to_string(), " (rank ", in.shape.rank(),
                     ") but input 0 has shape ", first.shape.to_string(), " (rank ", rank, ")");
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = in.shape.dim(d);
      if (d == axis) {
        if (total < 0 || dim < 0) {
          total = kUnknownDim;
        } else if (std::optional<int64_t> sum = checked_add(total, dim)) {
          total = *sum;
        } else {
          return invalid(ctx, "the concatenated dimension ", axis, " overflows int64 at input ", k);
        }
      } else if (dim >= 0) {
        if (out.dim(d) < 0) {
          out.set_dim(d, dim);
          source[d] = k;
        } else if (out.dim(d) != dim) {
          return invalid(ctx, "input ", k, " has shape ", in.shape.to_string(), " which differs from input ",
                         source[d], "'s shape ", ctx.inputs[source[d]].shape.to_string(), " in dimension ", d,
                         " (only the concat axis ", axis, " may differ)");
        }
      }
    }
  }
  out.set_dim(axis, total);
  return single_output(first.dtype, std::move(out));
}

// ---- slicing ----

absl::StatusOr<OutputSpecs> slice_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& begin = ctx.attrs.get<Ints>("begin");
  const Ints& size = ctx.attrs.get<Ints>("size");
  const int rank = x.shape.rank();
  if (static_cast<int>(begin.size()) != rank || static_cast<int>(size.size()) != rank)
    return invalid(ctx, "begin ", ints_to_string(begin), " and size ", ints_to_string(size),
                   " must have one entry per dimension of input 'x' of shape ", x.shape.to_string());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int64_t b = begin[i], s = size[i], dim = x.shape.dim(i);
    if (b < 0) return invalid(ctx, "begin[", i, "] = ", b, " must be non-negative");
    if (s < -1) return invalid(ctx, "size[", i, "] = ", s, " must be non-negative or -1 (to the end)");
    if (dim >= 0 && (b > dim || (s >= 0 && s > dim - b)))  // s > dim - b: b + s could overflow
      return invalid(ctx, "slice [", b, ", ", s < 0 ? dim : checked_add(b, s).value_or(INT64_MAX), ") of dimension ", i,
                     " is out of bounds for input 'x' of shape ", x.shape.to_string());
    out.push_back(s >= 0 ? s : (dim >= 0 ? dim - b : kUnknownDim));
  }
  return single_output(x.dtype, std::move(out));
}

absl::StatusOr<OutputSpecs> strided_slice_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  auto spec = resolve_strided_slice(x.shape, ctx.attrs);
  if (!spec.ok())
    return invalid(ctx, spec.status().message(), " (input 'x' of shape ", x.shape.to_string(), ")");
  return single_output(x.dtype, std::move(spec->output));
}

// ---- indexing ----

absl::StatusOr<OutputSpecs> gather_shape(const InferenceContext& ctx) {
  const TensorSpec& params = ctx.inputs[0];
  const TensorSpec& indices = ctx.inputs[1];
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 1, "indices", {DType::kInt32, DType::kInt64}));
  TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, ctx.attrs.get<int64_t>("axis"), params.shape.rank(), "params"));
  // TensorFlow's batch_dims checks, in its order and words (GatherV2's kernel).
  int64_t batch_dims = ctx.attrs.get_or<int64_t>("batch_dims", 0);
  const int idx_rank = indices.shape.rank();
  if (batch_dims < -idx_rank || batch_dims > idx_rank)
    return invalid(ctx, "expected batch_dims in the range [", -idx_rank, ", ", idx_rank, "], but got ", batch_dims);
  if (batch_dims < 0) batch_dims += idx_rank;
  if (batch_dims != 0 && batch_dims >= params.shape.rank())
    return invalid(ctx, "batch_dims (", batch_dims, ") must be less than rank(params) (", params.shape.rank(), ")");
  if (batch_dims > axis)
    return invalid(ctx, "batch_dims (", batch_dims, ") must be less than or equal to axis (", axis, ")");
  for (int i = 0; i < batch_dims; ++i) {
    const int64_t p = params.shape.dim(i), q = indices.shape.dim(i);
    if (p >= 0 && q >= 0 && p != q)
      return invalid(ctx, "params.shape[", i, "]: ", p, " should be equal to indices.shape[", i, "]: ", q);
  }
  Shape out;
  for (int i = 0; i < axis; ++i) {
    const int64_t d = params.shape.dim(i);
    out.push_back(i < batch_dims && d < 0 ? indices.shape.dim(i) : d);  // a batch dim known on one side
  }
  for (int i = static_cast<int>(batch_dims); i < idx_rank; ++i) out.push_back(indices.shape.dim(i));
  for (int i = axis + 1; i < params.shape.rank(); ++i) out.push_back(params.shape.dim(i));
  return single_output(params.dtype, std::move(out));
}

absl::StatusOr<OutputSpecs> one_hot_shape(const InferenceContext& ctx) {
  const TensorSpec& indices = ctx.inputs[0];
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "indices", {DType::kUInt8, DType::kInt32, DType::kInt64}));
  const int64_t depth = ctx.attrs.get<int64_t>("depth");
  if (depth < 0) return invalid(ctx, "depth ", depth, " must be non-negative");
  const DType dtype = ctx.attrs.get<DType>("dtype");
  TF_RETURN_IF_ERROR(check_value_fits(ctx, ctx.attrs.get<double>("on_value"), dtype, "on_value"));
  TF_RETURN_IF_ERROR(check_value_fits(ctx, ctx.attrs.get<double>("off_value"), dtype, "off_value"));
  TF_ASSIGN_OR_RETURN(int axis,
                      axis_of(ctx, ctx.attrs.get<int64_t>("axis"), indices.shape.rank(), "indices", 1));
  Shape out = indices.shape;
  out.insert(axis, depth);
  return single_output(dtype, std::move(out));
}

// ---- stacking and splitting ----

// Pack (stack): N inputs of one dtype and shape, a new dim of size N at `axis`.
absl::StatusOr<OutputSpecs> pack_shape(const InferenceContext& ctx) {
  const size_t n = ctx.inputs.size();
  if (n == 0) return invalid(ctx, "needs at least one input");
  Shape merged = ctx.inputs[0].shape;
  for (size_t k = 1; k < n; ++k) {
    const TensorSpec& in = ctx.inputs[k];
    if (in.dtype != ctx.inputs[0].dtype)
      return invalid(ctx, "input ", k, " has dtype ", dtype_name(in.dtype), " but input 0 has dtype ",
                     dtype_name(ctx.inputs[0].dtype));
    if (!in.shape.is_compatible_with(merged))
      return invalid(ctx, "input ", k, " has shape ", in.shape.to_string(), " but input 0 has shape ",
                     ctx.inputs[0].shape.to_string(), " (stacked tensors must have equal shapes)");
    for (int d = 0; d < merged.rank(); ++d)
      if (merged.dim(d) < 0) merged.set_dim(d, in.shape.dim(d));
  }
  TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, ctx.attrs.get<int64_t>("axis"), merged.rank(), "values[0]", 1));
  merged.insert(axis, static_cast<int64_t>(n));
  return single_output(ctx.inputs[0].dtype, std::move(merged));
}

// Splits along `axis` into outputs of the given sizes (one may be -1 when the dim is known).
absl::StatusOr<OutputSpecs> split_outputs(const InferenceContext& ctx, const TensorSpec& x, int axis, Ints sizes) {
  const int64_t dim = x.shape.dim(axis);
  int inferred = -1;
  int64_t total = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == -1 && inferred < 0) { inferred = static_cast<int>(k); continue; }
    std::optional<int64_t> sum = checked_add(total, sizes[k]);
    if (sizes[k] < 0 || !sum)
      return invalid(ctx, "sizes ", ints_to_string(sizes), " may hold one -1 and otherwise non-negative sizes");
    total = *sum;
  }
  if (inferred >= 0 && dim >= 0 && total <= dim) sizes[static_cast<size_t>(inferred)] = dim - total;
  else if (dim >= 0 && (inferred >= 0 || total != dim))
    return invalid(ctx, "sizes ", ints_to_string(sizes), " do not sum to dimension ", axis, " of input 'x' of shape ",
                   x.shape.to_string());
  OutputSpecs out;
  for (int64_t s : sizes) {
    Shape piece = x.shape;
    piece.set_dim(axis, s);
    out.push_back(TensorSpec{x.dtype, std::move(piece)});
  }
  return out;
}

// Split: num_split equal parts of `axis`.
absl::StatusOr<OutputSpecs> split_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, ctx.attrs.get<int64_t>("axis"), x.shape.rank(), "x"));
  const int64_t n = ctx.attrs.get<int64_t>("num_split"), dim = x.shape.dim(axis);
  if (n <= 0) return invalid(ctx, "num_split must be positive, got ", n);
  if (too_many_outputs(n, dim))  // one tensor handle each: bound the count
    return invalid(ctx, "num_split ", n, " is more than the dimension's size (", dim, ") and than ", kMaxSplitOutputs,
                   " outputs");
  if (dim >= 0 && dim % n != 0)
    return invalid(ctx, "dimension ", axis, " of input 'x' of shape ", x.shape.to_string(), " (size ", dim,
                   ") is not divisible by ", n);
  if (dim >= 0) return split_outputs(ctx, x, axis, Ints(static_cast<size_t>(n), dim / n));
  Shape piece = x.shape;  // the size of each piece is known when the graph runs
  return OutputSpecs(static_cast<size_t>(n), TensorSpec{x.dtype, piece});
}

// SplitV: parts of the given sizes; num_split (TensorFlow's attr) is their count.
absl::StatusOr<OutputSpecs> split_v_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, ctx.attrs.get<int64_t>("axis"), x.shape.rank(), "x"));
  const Ints& sizes = ctx.attrs.get<Ints>("sizes");
  if (sizes.empty()) return invalid(ctx, "needs at least one size");
  if (too_many_outputs(static_cast<int64_t>(sizes.size()), x.shape.dim(axis)))
    return invalid(ctx, sizes.size(), " sizes are more than the dimension's size (", x.shape.dim(axis), ") and than ",
                   kMaxSplitOutputs, " outputs");
  if (ctx.attrs.get<int64_t>("num_split") != static_cast<int64_t>(sizes.size()))
    return invalid(ctx, "num_split ", ctx.attrs.get<int64_t>("num_split"), " but ", sizes.size(), " sizes");
  if (x.shape.dim(axis) < 0)
    for (int64_t s : sizes)
      if (s < 0) return invalid(ctx, "a size of -1 needs the size of dimension ", axis, " of input 'x'");
  return split_outputs(ctx, x, axis, sizes);
}

// Unpack (unstack): `num` slices along `axis`, that dim removed.
absl::StatusOr<OutputSpecs> unpack_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, ctx.attrs.get<int64_t>("axis"), x.shape.rank(), "x"));
  const int64_t num = ctx.attrs.get<int64_t>("num"), dim = x.shape.dim(axis);
  if (num < 0 || too_many_outputs(num, dim))
    return invalid(ctx, "num ", num, " must be non-negative and at most the dimension's size or ", kMaxSplitOutputs);
  if (dim >= 0 && dim != num)
    return invalid(ctx, "num ", num, " but dimension ", axis, " of input 'x' of shape ", x.shape.to_string(), " is ", dim);
  Shape piece = x.shape;
  piece.erase(axis);
  return OutputSpecs(static_cast<size_t>(num), TensorSpec{x.dtype, piece});
}

// Shape: the input's dims as a vector of out_type (int32 or int64).
absl::StatusOr<OutputSpecs> shape_shape(const InferenceContext& ctx) {
  const DType out = ctx.attrs.get<DType>("out_type");
  if (out != DType::kInt32 && out != DType::kInt64)
    return invalid(ctx, "out_type must be int32 or int64, got ", dtype_name(out));
  return single_output(out, Shape({ctx.inputs[0].shape.rank()}));
}

// Size and Rank: a scalar of out_type (Size: int32 or int64; Rank: int32, as TensorFlow's).
absl::StatusOr<OutputSpecs> size_shape(const InferenceContext& ctx) {
  const DType out = ctx.attrs.get<DType>("out_type");
  if (out != DType::kInt32 && out != DType::kInt64)
    return invalid(ctx, "out_type must be int32 or int64, got ", dtype_name(out));
  return single_output(out, Shape({}));
}
absl::StatusOr<OutputSpecs> rank_shape(const InferenceContext&) { return single_output(DType::kInt32, Shape({})); }

// InvertPermutation: an int32 or int64 vector, the same out.
absl::StatusOr<OutputSpecs> invert_permutation_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  if (x.dtype != DType::kInt32 && x.dtype != DType::kInt64)
    return invalid(ctx, "input 'x' has dtype ", dtype_name(x.dtype), "; expected one of int32, int64");
  if (x.shape.rank() != 1) return invalid(ctx, "input 'x' must be a vector, got shape ", x.shape.to_string());
  return single_output(x.dtype, x.shape);
}

// ---- padding and tiling ----

absl::StatusOr<OutputSpecs> pad_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& paddings = ctx.attrs.get<Ints>("paddings");  // flattened (before, after) pairs
  const int rank = x.shape.rank();
  if (static_cast<int>(paddings.size()) != 2 * rank)
    return invalid(ctx, "paddings has ", paddings.size() / 2, " (before, after) pairs but input 'x' of shape ",
                   x.shape.to_string(), " has rank ", rank);
  // TensorFlow's Pad has no constant_value: it pads with zeros.
  TF_RETURN_IF_ERROR(check_value_fits(ctx, ctx.attrs.get_or<double>("constant_value", 0.0), x.dtype, "constant_value"));
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int64_t before = paddings[2 * i], after = paddings[2 * i + 1], dim = x.shape.dim(i);
    if (before < 0 || after < 0)
      return invalid(ctx, "paddings[", i, "] = (", before, ", ", after, ") must be non-negative");
    std::optional<int64_t> padded = checked_add(dim, before);
    if (padded) padded = checked_add(*padded, after);
    if (dim >= 0 && !padded)
      return invalid(ctx, "paddings[", i, "] = (", before, ", ", after, ") overflow dimension ", i, " of size ", dim);
    out.push_back(dim < 0 ? kUnknownDim : *padded);
  }
  return single_output(x.dtype, std::move(out));
}

// MirrorPad: attributes paddings (flattened pairs) and mode.
absl::StatusOr<OutputSpecs> mirror_pad_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& paddings = ctx.attrs.get<Ints>("paddings");
  const std::string& mode = ctx.attrs.get<std::string>("mode");
  if (mode != "REFLECT" && mode != "SYMMETRIC")
    return invalid(ctx, "mode must be \"REFLECT\" or \"SYMMETRIC\", got \"", mode, "\"");
  const int rank = x.shape.rank();
  if (static_cast<int>(paddings.size()) != 2 * rank)
    return invalid(ctx, "paddings has ", paddings.size() / 2, " (before, after) pairs but input 'input' of shape ",
                   x.shape.to_string(), " has rank ", rank);
  const int64_t slack = mode == "REFLECT" ? 1 : 0;  // REFLECT mirrors around the edge element
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int64_t before = paddings[2 * i], after = paddings[2 * i + 1], dim = x.shape.dim(i);
    if (before < 0 || after < 0 || (dim >= 0 && (before > dim - slack || after > dim - slack)))
      return invalid(ctx, "paddings[", i, "] = (", before, ", ", after, ") must be in [0, ", dim - slack,
                     "] for dimension ", i, " of size ", dim, " in ", mode, " mode");
    out.push_back(dim < 0 ? kUnknownDim : dim + before + after);
  }
  return single_output(x.dtype, std::move(out));
}

absl::StatusOr<OutputSpecs> tile_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& multiples = ctx.attrs.get<Ints>("multiples");
  const int rank = x.shape.rank();
  if (static_cast<int>(multiples.size()) != rank)
    return invalid(ctx, "multiples ", ints_to_string(multiples), " has ", multiples.size(),
                   " entries but input 'x' of shape ", x.shape.to_string(), " has rank ", rank);
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int64_t m = multiples[i], dim = x.shape.dim(i);
    if (m < 0) return invalid(ctx, "multiples[", i, "] = ", m, " must be non-negative");
    std::optional<int64_t> tiled = checked_mul(dim, m);
    if (dim >= 0 && !tiled)
      return invalid(ctx, "multiples[", i, "] = ", m, " overflows dimension ", i, " of size ", dim);
    out.push_back(m == 0 ? 0 : (dim < 0 ? kUnknownDim : *tiled));
  }
  return single_output(x.dtype, std::move(out));
}

// ReverseV2: attribute axis (the list of axes to reverse).
absl::StatusOr<OutputSpecs> reverse_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& axes = ctx.attrs.get<Ints>("axis");
  std::vector<bool> seen(static_cast<size_t>(x.shape.rank()), false);
  for (int64_t a : axes) {
    TF_ASSIGN_OR_RETURN(int axis, axis_of(ctx, a, x.shape.rank(), "tensor"));
    if (seen[axis]) return invalid(ctx, "axis ", a, " is repeated in axis ", ints_to_string(axes));
    seen[axis] = true;
  }
  return single_output(x.dtype, x.shape);
}

// MatrixBandPart: attributes num_lower, num_upper; the input is a batch of matrices.
absl::StatusOr<OutputSpecs> band_part_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  if (x.shape.rank() < 2)
    return invalid(ctx, "input must have rank >= 2 (a batch of matrices), got shape ", x.shape.to_string());
  return single_output(x.dtype, x.shape);
}

// DepthToSpace and SpaceToDepth: attributes block_size, data_format. Checked on the NHWC dims
// (an NCHW input is read as NHWC, and the result turned back).
template <bool kToSpace>
absl::StatusOr<OutputSpecs> block_move_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  TF_ASSIGN_OR_RETURN(const bool nchw, internal::nchw_of(ctx));
  if (x.shape.rank() != 4)
    return invalid(ctx, "input must have rank 4 ",
                   nchw ? "[batch, channels, height, width]" : "[batch, height, width, channels]", ", got shape ",
                   x.shape.to_string());
  const int64_t bs = ctx.attrs.get<int64_t>("block_size");
  if (bs < 2 || bs > (int64_t{1} << 16)) return invalid(ctx, "block_size must be in [2, 65536], got ", bs);
  const Shape& s = x.shape;
  const Shape nhwc = nchw ? nchw_to_nhwc(s) : s;
  int64_t h = nhwc.dim(1), w = nhwc.dim(2), c = nhwc.dim(3);
  if constexpr (kToSpace) {
    if (c >= 0 && c % (bs * bs) != 0)
      return invalid(ctx, "the depth ", c, " of input ", s.to_string(),
                     " must be divisible by block_size * block_size = ", bs * bs);
    for (int64_t* d : {&h, &w}) {
      if (*d < 0) continue;
      const std::optional<int64_t> wide = checked_mul(*d, bs);  // Note [Checked sizes]
      if (!wide) return invalid(ctx, "the height or width of input ", s.to_string(), " times block_size overflows");
      *d = *wide;
    }
    c = c < 0 ? c : c / (bs * bs);
  } else {
    if ((h >= 0 && h % bs != 0) || (w >= 0 && w % bs != 0))
      return invalid(ctx, "the height and width of input ", s.to_string(), " must be divisible by block_size ", bs);
    h = h < 0 ? h : h / bs, w = w < 0 ? w : w / bs;
    if (c >= 0) {
      const std::optional<int64_t> depth = checked_mul(c, bs * bs);
      if (!depth) return invalid(ctx, "the depth of input ", s.to_string(), " times block_size^2 overflows");
      c = *depth;
    }
  }
  const Shape out{s.dim(0), h, w, c};
  return single_output(x.dtype, nchw ? nhwc_to_nchw(out) : out);
}

// BroadcastTo: attribute shape (the target); x's dims, aligned at the end, are 1 or equal.
absl::StatusOr<OutputSpecs> broadcast_to_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const Ints& shape = ctx.attrs.get<Ints>("shape");
  const int rank = static_cast<int>(shape.size()), lead = rank - x.shape.rank();
  if (lead < 0)
    return invalid(ctx, "input 'input' ", x.shape.to_string(), " has more dims than the target shape ",
                   ints_to_string(shape));
  for (int i = 0; i < rank; ++i) {
    if (shape[i] < 0) return invalid(ctx, "shape[", i, "] = ", shape[i], " must be non-negative");
    if (i < lead) continue;
    const int64_t d = x.shape.dim(i - lead);
    if (d >= 0 && d != 1 && d != shape[i])
      return invalid(ctx, "input 'input' ", x.shape.to_string(), " cannot be broadcast to ", ints_to_string(shape),
                     ": dim ", i - lead, " is ", d, ", not 1 or ", shape[i]);
  }
  return single_output(x.dtype, Shape(shape));
}

OpDef kReshape{.type = "Reshape", .api_name = "reshape", .num_inputs = 1, .infer = reshape_shape,
               .forward_input = 0,
    .tf_form = "T=in0 shape@ints Tshape=index"};
OpDef kExpandDims{.type = "ExpandDims", .api_name = "expand_dims", .num_inputs = 1, .infer = expand_dims_shape,
                  .forward_input = 0,
    .tf_form = "T=in0 axis@int Tdim=index"};
OpDef kSqueeze{.type = "Squeeze", .api_name = "squeeze", .num_inputs = 1, .infer = squeeze_shape,
               .forward_input = 0,
    .tf_form = "T=in0 axes>squeeze_dims:ints=[]"};
OpDef kIdentity{.type = "Identity", .api_name = "identity", .num_inputs = 1, .infer = identity_shape,
                .forward_input = 0};
// Its kernel hands each input's buffer on as the output (views, several of them).
OpDef kIdentityN{.type = "IdentityN", .api_name = "identity_n", .num_inputs = -1, .infer = identity_n_shape,
                 .kernel_dtype_input = 0,
    .tf_form = "T=ins"};
// A view whose gradient is zero: tapes never record it.
OpDef kStopGradient{.type = "StopGradient", .api_name = "stop_gradient", .num_inputs = 1, .infer = identity_shape,
                .forward_input = 0, .differentiable = false};
OpDef kTranspose{.type = "Transpose", .api_name = "transpose", .num_inputs = 1, .infer = transpose_shape,
    .tf_form = "T=in0 perm@ints Tperm=index"};
OpDef kConcat{.type = "ConcatV2", .api_name = "concat", .num_inputs = -1, .infer = concat_shape,
    .tf_form = "N=count T=in0 axis@int Tidx=index"};
OpDef kSlice{.type = "Slice", .api_name = "slice", .num_inputs = 1, .infer = slice_shape,
    .tf_form = "T=in0 begin@ints size@ints Index=index"};
OpDef kStridedSlice{.type = "StridedSlice", .api_name = "strided_slice", .num_inputs = 1,
                    .infer = strided_slice_shape,
    .tf_form = "T=in0 begin@ints end@ints strides@ints Index=index begin_mask:int=0 end_mask:int=0 ellipsis_mask:int=0 new_axis_mask:int=0 shrink_axis_mask:int=0"};
OpDef kGather{.type = "GatherV2", .api_name = "gather", .num_inputs = 2, .infer = gather_shape,
    .tf_form = "Tparams=in0 Tindices=in1 axis@int Taxis=index batch_dims:int=0"};
// Keyed on the output dtype: the indices' dtype is dispatched inside the kernel.
OpDef kOneHot{.type = "OneHot", .api_name = "one_hot", .num_inputs = 1, .infer = one_hot_shape,
              .kernel_dtype_input = -1, .differentiable = false,
    .tf_form = "TI=in0 depth@int on_value@val off_value@val dtype>T:type axis:int=-1"};
OpDef kPack{.type = "Pack", .api_name = "stack", .num_inputs = -1, .infer = pack_shape,
    .tf_form = "N=count T=in0 axis:int=0"};
OpDef kUnpack{.type = "Unpack", .api_name = "unstack", .num_inputs = 1, .infer = unpack_shape,
    .tf_form = "T=in0 num:int axis:int=0"};
// TensorFlow's Split takes the axis first, then the value.
OpDef kSplit{.type = "Split", .api_name = "split", .num_inputs = 1, .infer = split_shape,
    .tf_form = "T=in0 axis@int#0 num_split:int"};
OpDef kSplitV{.type = "SplitV", .api_name = "split", .num_inputs = 1, .infer = split_v_shape,
    .tf_form = "T=in0 sizes@ints axis@int Tlen=index num_split:int"};
OpDef kShape{.type = "Shape", .api_name = "shape", .num_inputs = 1, .infer = shape_shape, .differentiable = false,
    .tf_form = "T=in0 out_type:type=int32"};
OpDef kSize{.type = "Size", .api_name = "size", .num_inputs = 1, .infer = size_shape, .differentiable = false,
    .tf_form = "T=in0 out_type:type=int32"};
OpDef kRank{.type = "Rank", .api_name = "rank", .num_inputs = 1, .infer = rank_shape, .differentiable = false,
    .tf_form = "T=in0"};
// tf.pad writes Pad when the constant is 0, PadV2 otherwise; one kernel serves both.
OpDef kPadZeros{.type = "Pad", .api_name = "pad", .num_inputs = 1, .infer = pad_shape,
    .tf_form = "T=in0 paddings@pairs Tpaddings=index"};
OpDef kPad{.type = "PadV2", .api_name = "pad", .num_inputs = 1, .infer = pad_shape,
    .tf_form = "T=in0 paddings@pairs constant_value@val Tpaddings=index"};
OpDef kMirrorPad{.type = "MirrorPad", .api_name = "mirror_pad", .num_inputs = 1, .infer = mirror_pad_shape,
    .tf_form = "T=in0 paddings@pairs Tpaddings=index mode:string"};
OpDef kTile{.type = "Tile", .api_name = "tile", .num_inputs = 1, .infer = tile_shape,
    .tf_form = "T=in0 multiples@ints Tmultiples=index"};
// DynamicTile: Tile whose multiples are a run-time tensor (tf.tile(mask, [1, tf.shape(x)[1], 1]));
// Note [Fills of run-time shape] (eager/ops/creation.cc). Import-only, not differentiable (Tile
// is), and written back as TensorFlow's Tile.
absl::StatusOr<OutputSpecs> dynamic_tile_shape(const InferenceContext& ctx) {
  const TensorSpec& x = ctx.inputs[0];
  const TensorSpec& multiples = ctx.inputs[1];
  if (multiples.dtype != DType::kInt32 && multiples.dtype != DType::kInt64)
    return absl::InvalidArgumentError(
        absl::StrCat("[", ctx.op, "] multiples must be int32 or int64, got ", dtype_name(multiples.dtype)));
  if (multiples.shape.rank() != 1 || multiples.shape.dim(0) != x.shape.rank())
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] multiples must be a vector of one entry per dim of x (",
                                                   x.shape.rank(), "), got shape ", multiples.shape.to_string()));
  Shape out;
  for (int i = 0; i < x.shape.rank(); ++i) out.push_back(-1);
  return single_output(x.dtype, out);
}

OpDef kDynamicTile{.type = "DynamicTile", .api_name = "tile", .num_inputs = 2, .infer = dynamic_tile_shape,
                   .differentiable = false, .kernel_allocates_output = true, .tf_form = "T=in0 Tmultiples=in1"};
OpDef kReverse{.type = "ReverseV2", .api_name = "reverse", .num_inputs = 1, .infer = reverse_shape,
    .tf_form = "T=in0 axis@ints Tidx=index"};
OpDef kBandPart{.type = "MatrixBandPart", .api_name = "matrix_band_part", .num_inputs = 1, .infer = band_part_shape,
    .tf_form = "T=in0 num_lower@int num_upper@int Tindex=index"};
OpDef kDepthToSpace{.type = "DepthToSpace", .api_name = "depth_to_space", .num_inputs = 1,
                    .infer = block_move_shape<true>, .tf_form = "T=in0 block_size:int data_format:string=NHWC"};
OpDef kSpaceToDepth{.type = "SpaceToDepth", .api_name = "space_to_depth", .num_inputs = 1,
                    .infer = block_move_shape<false>, .tf_form = "T=in0 block_size:int data_format:string=NHWC"};
OpDef kInvertPermutation{.type = "InvertPermutation", .api_name = "invert_permutation", .num_inputs = 1,
                          .infer = invert_permutation_shape, .differentiable = false};
OpDef kBroadcastTo{.type = "BroadcastTo", .api_name = "broadcast_to", .num_inputs = 1, .infer = broadcast_to_shape,
    .tf_form = "T=in0 shape@ints Tidx=index"};

Tensor run1(const OpDef& op, const Tensor& x, AttrMap attrs, std::source_location loc) {
  const Tensor inputs[1] = {x};
  return execute_single(op, inputs, attrs, loc);
}

// Composites read shapes before calling ops, so an empty handle must be caught first.
void require_defined(const Tensor& x, const char* op, const char* name, std::source_location loc) {
  if (!x.defined())
    throw InvalidArgumentError(absl::StrCat("[", op, "] input '", name, "' is ", x.empty_reason()), loc);
}

int checked_axis(const char* op, int64_t axis, int rank, std::source_location loc, int slack = 0) {
  const int n = rank + slack;
  if (axis < -n || axis >= n)
    throw InvalidArgumentError(absl::StrCat("[", op, "] ", axis_error(axis, rank, slack, slack ? "values[0]" : "x")),
                               loc);
  return static_cast<int>(axis < 0 ? axis + n : axis);
}

}  // namespace

void register_array_ops(OpRegistry& r) {
  for (const OpDef* op : {&kReshape, &kExpandDims, &kSqueeze, &kIdentity, &kIdentityN, &kStopGradient, &kTranspose,
                          &kConcat, &kSlice, &kStridedSlice, &kGather, &kOneHot, &kPad, &kTile, &kDynamicTile, &kReverse, &kBandPart,
                          &kDepthToSpace, &kSpaceToDepth, &kInvertPermutation, &kBroadcastTo, &kMirrorPad, &kPack, &kUnpack, &kSplit,
                          &kSplitV, &kShape, &kSize, &kRank, &kPadZeros})
    r.add(*op);
}

Tensor reshape(const Tensor& x, std::vector<int64_t> shape, std::source_location loc) {
  return run1(kReshape, x, AttrMap{{"shape", std::move(shape)}}, loc);
}

Tensor expand_dims(const Tensor& x, int64_t axis, std::source_location loc) {
  return run1(kExpandDims, x, AttrMap{{"axis", axis}}, loc);
}

// Note [Squeeze of unknown dims]: without axes, squeeze drops every dim of size 1. A traced x
// may have dims unknown until it runs; TensorFlow's static shape is then of unknown rank, and at
// run time it also drops a dim that is 1 only then (a batch of one). tapeflow's shapes have a
// rank, so it decides while tracing: the dims known to be 1 go, the unknown ones stay, at run
// time as in the graph (the axes are written into the node; none to drop is an identity). The
// import does the same for a TensorFlow Squeeze without squeeze_dims (graph_def_import.cc).
Tensor squeeze(const Tensor& x, std::vector<int64_t> axes, std::source_location loc) {
  if (axes.empty() && x.defined() && !x.shape().is_fully_defined()) {
    for (int i = 0; i < x.shape().rank(); ++i)
      if (x.shape().dim(i) == 1) axes.push_back(i);
    if (axes.empty()) return identity(x, loc);
  }
  return run1(kSqueeze, x, AttrMap{{"axes", std::move(axes)}}, loc);
}

Tensor identity(const Tensor& x, std::source_location loc) { return run1(kIdentity, x, AttrMap(), loc); }

std::vector<Tensor> identity_n(const std::vector<Tensor>& inputs, std::source_location loc) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined())
      throw InvalidArgumentError(absl::StrCat("[identity_n] input ", i, " is ", inputs[i].empty_reason()), loc);
  TensorList out = execute(OpCall{kIdentityN, inputs, AttrMap(), loc});
  return std::vector<Tensor>(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
}
Tensor stop_gradient(const Tensor& x, std::source_location loc) { return run1(kStopGradient, x, AttrMap(), loc); }

Tensor transpose(const Tensor& x, std::vector<int64_t> perm, std::source_location loc) {
  if (perm.empty()) {  // the graph node always records the explicit permutation
    require_defined(x, "transpose", "x", loc);
    for (int i = x.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  return run1(kTranspose, x, AttrMap{{"perm", std::move(perm)}}, loc);
}

Tensor concat(const std::vector<Tensor>& values, int64_t axis, std::source_location loc) {
  // One value is its identity, as in TensorFlow's Python (whose ConcatV2 takes N >= 2).
  if (values.size() == 1) {
    require_defined(values[0], "concat", "values[0]", loc);
    checked_axis("concat", axis, values[0].rank(), loc);
    return identity(values[0], loc);
  }
  return execute_single(kConcat, absl::MakeConstSpan(values), AttrMap{{"axis", axis}}, loc);
}

Tensor stack(const std::vector<Tensor>& values, int64_t axis, std::source_location loc) {
  if (values.empty()) throw InvalidArgumentError("[stack] needs at least one input", loc);
  for (size_t k = 0; k < values.size(); ++k)
    require_defined(values[k], "stack", absl::StrCat("values[", k, "]").c_str(), loc);
  return execute_single(kPack, absl::MakeConstSpan(values), AttrMap{{"axis", axis}}, loc);
}

namespace {
std::vector<Tensor> run_split(const OpDef& op, const Tensor& x, const AttrMap& attrs, std::source_location loc) {
  const Tensor inputs[1] = {x};
  TensorList out = execute(OpCall{op, inputs, attrs, loc});
  return std::vector<Tensor>(std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
}
}  // namespace

std::vector<Tensor> unstack(const Tensor& x, int64_t axis, std::source_location loc) {
  require_defined(x, "unstack", "x", loc);
  const int a = checked_axis("unstack", axis, x.rank(), loc);
  const int64_t n = x.shape().dim(a);
  if (n < 0) throw InvalidArgumentError("[unstack] the size of the unstacked dimension must be known", loc);
  return run_split(kUnpack, x, AttrMap{{"num", n}, {"axis", static_cast<int64_t>(a)}}, loc);
}

// The checks (axis, counts, sizes, divisibility) are the shape functions', so a traced split and
// an eager one fail alike.
std::vector<Tensor> split(const Tensor& x, int num_splits, int64_t axis, std::source_location loc) {
  require_defined(x, "split", "x", loc);
  return run_split(kSplit, x, AttrMap{{"axis", axis}, {"num_split", static_cast<int64_t>(num_splits)}}, loc);
}

std::vector<Tensor> split(const Tensor& x, std::vector<int64_t> sizes, int64_t axis, std::source_location loc) {
  require_defined(x, "split", "x", loc);
  const auto count = static_cast<int64_t>(sizes.size());
  return run_split(kSplitV, x, AttrMap{{"sizes", std::move(sizes)}, {"axis", axis}, {"num_split", count}}, loc);
}

std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> sizes, int64_t axis,
                          std::source_location loc) {
  return split(x, std::vector<int64_t>(sizes), axis, loc);
}

Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size, std::source_location loc) {
  return run1(kSlice, x, AttrMap{{"begin", std::move(begin)}, {"size", std::move(size)}}, loc);
}

Tensor strided_slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                     std::vector<int64_t> strides, StridedSliceMasks masks, std::source_location loc) {
  if (strides.empty()) strides.assign(begin.size(), 1);
  return run1(kStridedSlice, x,
              AttrMap{{"begin", std::move(begin)},
                      {"end", std::move(end)},
                      {"strides", std::move(strides)},
                      {"begin_mask", masks.begin_mask},
                      {"end_mask", masks.end_mask},
                      {"ellipsis_mask", masks.ellipsis_mask},
                      {"new_axis_mask", masks.new_axis_mask},
                      {"shrink_axis_mask", masks.shrink_axis_mask}},
              loc);
}

Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis, int64_t batch_dims, std::source_location loc) {
  const Tensor inputs[2] = {params, indices};
  return execute_single(kGather, inputs, AttrMap{{"axis", axis}, {"batch_dims", batch_dims}}, loc);
}

Tensor one_hot(const Tensor& indices, int64_t depth, double on_value, double off_value, int64_t axis, DType dtype,
               std::source_location loc) {
  return run1(kOneHot, indices,
              AttrMap{{"depth", depth},
                      {"on_value", on_value},
                      {"off_value", off_value},
                      {"axis", axis},
                      {"dtype", dtype}},
              loc);
}

Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings, double constant_value,
           std::source_location loc) {
  std::vector<int64_t> flat;
  flat.reserve(2 * paddings.size());
  for (const auto& [before, after] : paddings) {
    flat.push_back(before);
    flat.push_back(after);
  }
  if (constant_value == 0 && !std::signbit(constant_value)) return run1(kPadZeros, x, AttrMap{{"paddings", std::move(flat)}}, loc);
  return run1(kPad, x, AttrMap{{"paddings", std::move(flat)}, {"constant_value", constant_value}}, loc);
}

Tensor mirror_pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings, const std::string& mode,
                  std::source_location loc) {
  std::vector<int64_t> flat;
  for (const auto& [before, after] : paddings) {
    flat.push_back(before);
    flat.push_back(after);
  }
  return run1(kMirrorPad, x, AttrMap{{"paddings", std::move(flat)}, {"mode", mode}}, loc);
}

Tensor shape(const Tensor& x, DType out_type, std::source_location loc) {
  return run1(kShape, x, AttrMap{{"out_type", out_type}}, loc);
}

Tensor matrix_band_part(const Tensor& x, int64_t num_lower, int64_t num_upper, std::source_location loc) {
  return run1(kBandPart, x, AttrMap{{"num_lower", num_lower}, {"num_upper", num_upper}}, loc);
}

Tensor depth_to_space(const Tensor& x, int64_t block_size, std::string_view data_format, std::source_location loc) {
  return run1(kDepthToSpace, x, AttrMap{{"block_size", block_size}, {"data_format", std::string(data_format)}}, loc);
}

Tensor space_to_depth(const Tensor& x, int64_t block_size, std::string_view data_format, std::source_location loc) {
  return run1(kSpaceToDepth, x, AttrMap{{"block_size", block_size}, {"data_format", std::string(data_format)}}, loc);
}

Tensor invert_permutation(const Tensor& x, std::source_location loc) { return run1(kInvertPermutation, x, AttrMap(), loc); }

Tensor size(const Tensor& x, DType out_type, std::source_location loc) {
  return run1(kSize, x, AttrMap{{"out_type", out_type}}, loc);
}

Tensor rank(const Tensor& x, std::source_location loc) { return run1(kRank, x, AttrMap(), loc); }

Tensor tile(const Tensor& x, std::vector<int64_t> multiples, std::source_location loc) {
  return run1(kTile, x, AttrMap{{"multiples", std::move(multiples)}}, loc);
}

Tensor reverse(const Tensor& x, std::vector<int64_t> axes, std::source_location loc) {
  return run1(kReverse, x, AttrMap{{"axis", std::move(axes)}}, loc);
}

Tensor broadcast_to(const Tensor& x, std::vector<int64_t> shape, std::source_location loc) {
  return run1(kBroadcastTo, x, AttrMap{{"shape", std::move(shape)}}, loc);
}

}  // namespace tapeflow
