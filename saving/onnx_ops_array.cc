// ONNX converters for indexing, scatter, sorting, creation, scans, padding and the space/batch
// rearrangements (the rest are in onnx_ops.cc; the exactness rule is Note [Exact ONNX forms]
// there).
//
// Index inputs: ONNX's GatherND and ScatterND take int64 indices, so int32 indices are cast.
// ONNX counts negative indices from the end where tapeflow rejects them (GatherNd, ScatterNd,
// TensorScatterUpdate, UnsortedSegmentSum fail on them), so the inputs both accept agree.
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/errors.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "saving/onnx_convert.h"

namespace tapeflow::onnx_internal {

namespace {

constexpr int64_t kMaxIndex = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinIndex = std::numeric_limits<int64_t>::min();

std::string ints_initializer(NodeContext& n, absl::string_view what, const std::vector<int64_t>& values) {
  return n.builder().add_int64s(absl::StrCat(n.name(), "/", what), values);
}

int64_t normalized_axis(int64_t axis, int rank) { return axis < 0 ? axis + rank : axis; }

absl::StatusOr<int> known_rank(NodeContext& n, int i) {
  TF_ASSIGN_OR_RETURN(TensorSpec spec, n.in_spec(i));
  return spec.shape.rank();  // graph shapes always have a known rank
}

// Zeros of `dtype` shaped like `shape` (an int64 vector value).
std::string zeros(NodeContext& n, DType dtype, const std::string& shape) {
  const std::string z = n.temp("zeros");
  n.emit("Expand", {scalar_initializer(n, "zero", dtype, 0), shape}, {z});
  return z;
}

// one_hot(indices, depth, on, off, axis): Equal(unsqueezed indices, 0..depth-1) picks on or off.
// Not ONNX's OneHot: it counts negative indices from the end (tapeflow's -1 is all off), and
// ONNX Runtime implements few of its dtype combinations.
absl::Status one_hot(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> depth, n.const_ints(1));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* axis_attr, n.attr("axis"));
  TF_ASSIGN_OR_RETURN(const int rank, known_rank(n, 0));
  const int64_t axis = axis_attr->i() < 0 ? rank : axis_attr->i();
  TF_ASSIGN_OR_RETURN(std::string indices, as_int64(n, 0));
  const std::string u = n.temp("indices"), hit = n.temp("hit");
  n.emit("Unsqueeze", {indices, ints_initializer(n, "axis", {axis})}, {u});
  std::vector<int64_t> positions(static_cast<size_t>(depth.at(0)));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int64_t>(i);
  Shape range_shape{depth[0]};
  for (int64_t i = axis; i < rank; ++i) range_shape.push_back(1);  // broadcasts over the axes after
  const std::string range =
      n.builder().add_initializer(absl::StrCat(n.name(), "/positions"), Tensor(positions, range_shape));
  n.emit("Equal", {u, range}, {hit});
  n.emit("Where", {hit, n.in(2), n.in(3)}, {n.out()});
  return absl::OkStatus();
}

// Note [StridedSlice in ONNX]
// The masks are expanded per input dim as TensorFlow does (an ellipsis, explicit or implied at
// the end, covers the dims no entry names), the loop of resolve_strided_slice
// (devices/strided_slice.h), which also resolves the bounds against known dims and so cannot
// keep them symbolic for ONNX; keep the two in step. Then one Slice (begin_mask / end_mask: the widest
// bound, INT64_MAX or INT64_MIN by the stride's sign), Squeeze for shrunk dims, Unsqueeze for
// new axes. ONNX clamps starts and ends as TensorFlow does except for a start below -dim with a
// negative stride (TensorFlow: empty; ONNX: from element 0), so that case needs a known dim.
absl::Status strided_slice(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> begin, n.const_ints(1));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> end, n.const_ints(2));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, n.const_ints(3));
  int64_t mask[5];
  const char* names[5] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
  for (int i = 0; i < 5; ++i) {
    TF_ASSIGN_OR_RETURN(const proto::AttrValue* a, n.attr(names[i]));
    mask[i] = a->i();
  }
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  TF_ASSIGN_OR_RETURN(const int rank, known_rank(n, 0));
  const int sparse = static_cast<int>(begin.size());
  if (end.size() != begin.size() || strides.size() != begin.size())
    return absl::InternalError("begin, end and strides differ in length");
  const bool has_ellipsis = mask[2] != 0;
  std::vector<int64_t> starts, ends, axes, steps, squeeze, unsqueeze;
  int full = 0, out_dim = 0;
  const int entries = has_ellipsis ? sparse : sparse + 1;
  for (int i = 0; i < entries; ++i) {
    const bool is_ellipsis = has_ellipsis ? ((mask[2] >> i) & 1) != 0 : i == sparse;
    if (is_ellipsis) {
      int new_axes_after = 0;
      for (int j = i + 1; j < sparse; ++j) new_axes_after += (mask[3] >> j) & 1;
      const int next = std::min(rank, rank - (sparse - i) + 1 + new_axes_after);
      out_dim += next - full;
      full = next;
      continue;
    }
    if ((mask[3] >> i) & 1) {
      unsqueeze.push_back(out_dim++);
      continue;
    }
    if (full == rank) return absl::InternalError("more slice entries than input dims");
    const int64_t dim = x.shape.dim(full);
    int64_t st = strides[i];
    int64_t b = begin[i], e = end[i];
    if ((mask[4] >> i) & 1) {  // one element: begin .. begin + 1 (-1 .. the end)
      e = b == -1 ? kMaxIndex : b + 1;
      squeeze.push_back(full);
      starts.push_back(b), ends.push_back(e), axes.push_back(full), steps.push_back(1);
      ++full;
      continue;
    }
    if ((mask[0] >> i) & 1) b = st > 0 ? 0 : kMaxIndex;
    if ((mask[1] >> i) & 1) e = st > 0 ? kMaxIndex : kMinIndex;
    if (st < 0 && b < 0 && !((mask[0] >> i) & 1)) {
      if (dim < 0)
        return absl::UnimplementedError(
            absl::StrCat("a negative begin with a negative stride on dim ", full, " of unknown size"));
      if (b < -dim) b = 0, e = 0, st = 1;  // TensorFlow: empty (Note [StridedSlice in ONNX])
    }
    if (!(b == 0 && e == kMaxIndex && st == 1))
      starts.push_back(b), ends.push_back(e), axes.push_back(full), steps.push_back(st);
    ++full, ++out_dim;
  }
  std::string y = n.in(0);
  auto step = [&](absl::string_view what, bool last) { return last ? n.out() : n.temp(what); };
  const bool do_squeeze = !squeeze.empty(), do_unsqueeze = !unsqueeze.empty();
  if (!starts.empty()) {
    const std::string next = step("slice", !do_squeeze && !do_unsqueeze);
    n.emit("Slice",
           {y, ints_initializer(n, "starts", starts), ints_initializer(n, "ends", ends),
            ints_initializer(n, "axes", axes), ints_initializer(n, "steps", steps)},
           {next});
    y = next;
  }
  if (do_squeeze) {
    const std::string next = step("squeeze", !do_unsqueeze);
    n.emit("Squeeze", {y, ints_initializer(n, "squeeze_axes", squeeze)}, {next});
    y = next;
  }
  if (do_unsqueeze) n.emit("Unsqueeze", {y, ints_initializer(n, "new_axes", unsqueeze)}, {n.out()});
  else if (y == n.in(0)) n.emit("Identity", {y}, {n.out()});
  return absl::OkStatus();
}

// Range's start, limit and delta are constants of the output dtype; ONNX's Range has no uint8.
absl::Status range(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec y, n.out_spec());
  if (y.dtype == DType::kUInt8) return absl::UnimplementedError("a uint8 range (ONNX's Range has no uint8)");
  n.emit("Range", {n.in(0), n.in(1), n.in(2)}, {n.out()});
  return absl::OkStatus();
}

// LinSpace has no ONNX op, and its inputs are constants: its values are computed here by
// tapeflow's own kernel and written as an initializer, so they are exact by construction.
absl::Status lin_space(NodeContext& n) {
  const Tensor* start = n.const_value(0);
  const Tensor* stop = n.const_value(1);
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> num, n.const_ints(2));
  if (start == nullptr || stop == nullptr) return absl::UnimplementedError("a computed start or stop");
  TF_ASSIGN_OR_RETURN(TensorSpec y, n.out_spec());
  const double a = cast(*start, DType::kFloat64).to_vector<double>().at(0);
  const double b = cast(*stop, DType::kFloat64).to_vector<double>().at(0);
  const std::string values = n.builder().add_initializer(absl::StrCat(n.name(), "/values"), tapeflow::linspace(a, b, num.at(0), y.dtype));
  n.emit("Identity", {values}, {n.out()});
  return absl::OkStatus();
}

// Fill(shape, value): value is a scalar of the output dtype, expanded; to dims known only at run
// time (a DynamicFill, Note [Fills of run-time shape]) through a Cast to int64.
absl::Status fill(NodeContext& n) {
  absl::StatusOr<std::vector<int64_t>> shape = n.const_ints(0);
  if (shape.ok()) {
    n.emit("Expand", {n.in(1), ints_initializer(n, "shape", *shape)}, {n.out()});
    return absl::OkStatus();
  }
  TF_ASSIGN_OR_RETURN(std::string dims, as_int64(n, 0));
  n.emit("Expand", {n.in(1), dims}, {n.out()});
  return absl::OkStatus();
}

// ZerosLike / OnesLike: the constant expanded to x's runtime shape (x * 0 would keep NaNs).
Converter constant_like(double value) {
  return [value](NodeContext& n) -> absl::Status {
    TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
    const std::string shape = n.temp("shape");
    n.emit("Shape", {n.in(0)}, {shape});
    n.emit("Expand", {scalar_initializer(n, "value", x.dtype, value), shape}, {n.out()});
    return absl::OkStatus();
  };
}

absl::Status cumsum(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  if (x.dtype == DType::kUInt8) return absl::UnimplementedError("a uint8 cumsum (ONNX's CumSum has no uint8)");
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* exclusive, n.attr("exclusive"));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* reverse, n.attr("reverse"));
  onnx::NodeProto* node = n.emit("CumSum", {n.in(0), n.in(1)}, {n.out()});
  set_int(node, "exclusive", exclusive->b() ? 1 : 0);
  set_int(node, "reverse", reverse->b() ? 1 : 0);
  return absl::OkStatus();
}

// ONNX has no Reverse: a Slice with step -1 from the last element to before the first.
absl::Status reverse(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, n.const_ints(1));
  if (axes.empty()) {
    n.emit("Identity", {n.in(0)}, {n.out()});
    return absl::OkStatus();
  }
  const std::vector<int64_t> starts(axes.size(), -1), ends(axes.size(), kMinIndex), steps(axes.size(), -1);
  n.emit("Slice",
         {n.in(0), ints_initializer(n, "starts", starts), ints_initializer(n, "ends", ends),
          ints_initializer(n, "axes", axes), ints_initializer(n, "steps", steps)},
         {n.out()});
  return absl::OkStatus();
}

// MatrixBandPart is ONNX's Trilu twice: the lower one keeps j - i <= num_upper, the upper one
// j - i >= -num_lower; a negative bound leaves its Trilu out.
absl::Status band_part(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> lower, n.const_ints(1));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> upper, n.const_ints(2));
  if (lower.size() != 1 || upper.size() != 1) return absl::InvalidArgumentError("num_lower and num_upper must be scalars");
  std::string x = n.in(0);
  const bool keep_lower = lower[0] >= 0, keep_upper = upper[0] >= 0;
  if (!keep_lower && !keep_upper) {
    n.emit("Identity", {x}, {n.out()});
    return absl::OkStatus();
  }
  if (keep_upper) {
    const std::string y = keep_lower ? n.temp("upper_band") : n.out();
    const std::string k = n.builder().add_initializer(absl::StrCat(n.name(), "/num_upper"), Tensor(upper[0]));
    set_int(n.emit("Trilu", {x, k}, {y}), "upper", 0);
    x = y;
  }
  if (keep_lower) {
    const std::string k = n.builder().add_initializer(absl::StrCat(n.name(), "/minus_num_lower"), Tensor(-lower[0]));
    set_int(n.emit("Trilu", {x, k}, {n.out()}), "upper", 1);
  }
  return absl::OkStatus();
}

// ONNX's Expand broadcasts both ways; for the shapes BroadcastTo accepts that is BroadcastTo.
absl::Status broadcast_to(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, n.const_ints(1));
  n.emit("Expand", {n.in(0), ints_initializer(n, "shape", shape)}, {n.out()});
  return absl::OkStatus();
}

// REFLECT is ONNX's Pad mode "reflect" (the edge element is not repeated). SYMMETRIC repeats it,
// which no Pad mode of opset 17 does ("edge" repeats only the edge): per padded axis, the
// reversed first p0 and last p1 elements are concatenated around x.
absl::Status mirror_pad(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> pairs, n.const_ints(1));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* mode, n.attr("mode"));
  const int64_t rank = static_cast<int64_t>(pairs.size() / 2);
  if (mode->s() == "REFLECT") {
    std::vector<int64_t> pads(2 * rank);
    for (int64_t i = 0; i < rank; ++i) pads[i] = pairs[2 * i], pads[rank + i] = pairs[2 * i + 1];
    set_string(n.emit("Pad", {n.in(0), ints_initializer(n, "pads", pads)}, {n.out()}), "mode", "reflect");
    return absl::OkStatus();
  }
  if (mode->s() != "SYMMETRIC") return absl::UnimplementedError(absl::StrCat("mode ", mode->s()));
  int last = -1;
  for (int64_t d = 0; d < rank; ++d)
    if (pairs[2 * d] > 0 || pairs[2 * d + 1] > 0) last = static_cast<int>(d);
  std::string y = n.in(0);
  if (last < 0) {
    n.emit("Identity", {y}, {n.out()});
    return absl::OkStatus();
  }
  for (int64_t d = 0; d <= last; ++d) {
    const int64_t before = pairs[2 * d], after = pairs[2 * d + 1];
    if (before == 0 && after == 0) continue;
    std::vector<std::string> parts;
    const std::string axis = ints_initializer(n, "axis", {d}), minus_one = ints_initializer(n, "step", {-1});
    if (before > 0) {  // x[before-1 :: -1] along d
      parts.push_back(n.temp("before"));
      n.emit("Slice",
             {y, ints_initializer(n, "starts", {before - 1}), ints_initializer(n, "ends", {kMinIndex}), axis, minus_one},
             {parts.back()});
    }
    parts.push_back(y);
    if (after > 0) {  // x[-1 : -after-1 : -1] along d
      const std::string tail = n.temp("after");
      n.emit("Slice",
             {y, ints_initializer(n, "starts", {-1}), ints_initializer(n, "ends", {-after - 1}), axis, minus_one},
             {tail});
      parts.push_back(tail);
    }
    y = d == last ? n.out() : n.temp("padded");
    set_int(n.emit("Concat", parts, {y}), "axis", d);
  }
  return absl::OkStatus();
}

// Where(x): the coordinates of the true (non-zero) elements, [n, rank] int64. ONNX's NonZero
// gives them as [rank, n].
absl::Status where_coordinates(NodeContext& n) {
  const std::string nz = n.temp("nonzero");
  n.emit("NonZero", {n.in(0)}, {nz});
  set_ints(n.emit("Transpose", {nz}, {n.out()}), "perm", {1, 0});
  return absl::OkStatus();
}

// InvertPermutation: x scattered with 0 .. n-1 at the positions it names (every position is
// written once, so x itself serves as the data). ONNX does not check that x is a permutation:
// where tapeflow's kernel fails on a repeated entry, ScatterElements' result is unspecified.
absl::Status invert_permutation(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  TF_ASSIGN_OR_RETURN(std::string indices, as_int64(n, 0));
  const std::string count = n.temp("count"), positions = n.temp("positions");
  n.emit("Size", {n.in(0)}, {count});
  n.emit("Range", {scalar_initializer(n, "zero", DType::kInt64, 0), count, scalar_initializer(n, "one", DType::kInt64, 1)},
         {positions});
  std::string updates = positions;
  if (x.dtype != DType::kInt64) {
    updates = n.temp("positions_cast");
    set_int(n.emit("Cast", {positions}, {updates}), "to", onnx_dtype(x.dtype));
  }
  set_int(n.emit("ScatterElements", {n.in(0), indices, updates}, {n.out()}), "axis", 0);
  return absl::OkStatus();
}

absl::Status gather_nd(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::string indices, as_int64(n, 1));
  n.emit("GatherND", {n.in(0), indices}, {n.out()});
  return absl::OkStatus();
}

// GatherV2: batch_dims 0 is ONNX's Gather; batch_dims b gathering along axis b is GatherND with
// batch_dims b over the indices given a trailing 1. Along a later axis a, a Transpose first
// brings axis a to position b, and one after moves params' dims b..a-1 back before the indices'.
absl::Status gather(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axis_value, n.const_ints(2));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* batch_dims_attr, n.attr("batch_dims"));
  if (batch_dims_attr->i() == 0) {
    set_int(n.emit("Gather", {n.in(0), n.in(1)}, {n.out()}), "axis", axis_value.at(0));
    return absl::OkStatus();
  }
  TF_ASSIGN_OR_RETURN(const int params_rank, known_rank(n, 0));
  TF_ASSIGN_OR_RETURN(const int indices_rank, known_rank(n, 1));
  const int64_t b = normalized_axis(batch_dims_attr->i(), indices_rank);
  const int64_t a = normalized_axis(axis_value.at(0), params_rank);
  if (a < b) return absl::InternalError("batch_dims past the axis");
  TF_ASSIGN_OR_RETURN(std::string indices, as_int64(n, 1));
  const std::string column = n.temp("indices");
  n.emit("Unsqueeze", {indices, ints_initializer(n, "last", {indices_rank})}, {column});
  std::string params = n.in(0);
  if (a > b) {  // params' axis a to position b
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < b; ++i) perm.push_back(i);
    perm.push_back(a);
    for (int64_t i = b; i < params_rank; ++i)
      if (i != a) perm.push_back(i);
    params = n.temp("params");
    set_ints(n.emit("Transpose", {n.in(0)}, {params}), "perm", perm);
  }
  const std::string gathered = a > b ? n.temp("gathered") : n.out();
  set_int(n.emit("GatherND", {params, column}, {gathered}), "batch_dims", b);
  if (a > b) {  // [batch, indices' dims, params b..a-1, params a+1..] -> [batch, params b..a-1, indices' dims, ...]
    const int64_t m = indices_rank - b, rank = m + params_rank - 1;
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < b; ++i) perm.push_back(i);
    for (int64_t i = 0; i < a - b; ++i) perm.push_back(b + m + i);
    for (int64_t i = 0; i < m; ++i) perm.push_back(b + i);
    for (int64_t i = b + m + (a - b); i < rank; ++i) perm.push_back(i);
    set_ints(n.emit("Transpose", {gathered}, {n.out()}), "perm", perm);
  }
  return absl::OkStatus();
}

// ScatterNd sums duplicate indices onto zeros: ScatterND with reduction "add" (opset 16).
absl::Status scatter_nd(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, n.const_ints(2));
  TF_ASSIGN_OR_RETURN(TensorSpec updates, n.in_spec(1));
  TF_ASSIGN_OR_RETURN(std::string indices, as_int64(n, 0));
  const std::string base = zeros(n, updates.dtype, ints_initializer(n, "shape", shape));
  set_string(n.emit("ScatterND", {base, indices, n.in(1)}, {n.out()}), "reduction", "add");
  return absl::OkStatus();
}

absl::Status tensor_scatter_update(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::string indices, as_int64(n, 1));
  n.emit("ScatterND", {n.in(0), indices, n.in(2)}, {n.out()});
  return absl::OkStatus();
}

// unsorted_segment_sum(data, ids, n): rows added onto zeros [n, data.shape[1:]] at ids, as a
// ScatterND with reduction "add" over ids given a trailing 1.
absl::Status unsorted_segment_sum(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> segments, n.const_ints(2));
  TF_ASSIGN_OR_RETURN(TensorSpec data, n.in_spec(0));
  TF_ASSIGN_OR_RETURN(TensorSpec y, n.out_spec());
  TF_ASSIGN_OR_RETURN(std::string ids, as_int64(n, 1));
  std::string shape;
  if (y.shape.is_fully_defined()) {
    shape = ints_initializer(n, "shape", std::vector<int64_t>(y.shape.dims().begin(), y.shape.dims().end()));
  } else {  // [n] ++ Shape(data)[1:]
    const std::string rest = n.temp("row_shape");
    set_int(n.emit("Shape", {n.in(0)}, {rest}), "start", 1);
    shape = n.temp("shape");
    set_int(n.emit("Concat", {ints_initializer(n, "segments", segments), rest}, {shape}), "axis", 0);
  }
  const std::string column = n.temp("ids");
  n.emit("Unsqueeze", {ids, ints_initializer(n, "last", {1})}, {column});
  set_string(n.emit("ScatterND", {zeros(n, data.dtype, shape), column, n.in(0)}, {n.out()}), "reduction", "add");
  return absl::OkStatus();
}

// top_k: always sorted, largest first, ties by the lower index (tapeflow's kernel sorts even for
// sorted = false, and so does ONNX Runtime); indices int64 -> int32. One difference no export can
// refuse, as it depends on the data: tapeflow ranks NaN above every number, while ONNX leaves
// NaN's place unspecified.
absl::Status top_k(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> k, n.const_ints(1));
  TF_ASSIGN_OR_RETURN(TensorSpec indices, n.out_spec(1));
  const std::string wide = n.temp("indices_int64");
  onnx::NodeProto* node = n.emit("TopK", {n.in(0), ints_initializer(n, "k", {k.at(0)})}, {n.out(0), wide});
  set_int(node, "axis", -1);
  set_int(node, "largest", 1);
  set_int(node, "sorted", 1);
  set_int(n.emit("Cast", {wide}, {n.out(1)}), "to", onnx_dtype(indices.dtype));
  return absl::OkStatus();
}

// unique(x): ONNX's Unique with sorted = 0 lists values by first occurrence, as TensorFlow;
// its inverse_indices are TensorFlow's idx. ONNX Runtime's Unique takes float, double and int64
// (not int32, uint8, bool): those go through int64 and back, exactly.
absl::Status unique(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  TF_ASSIGN_OR_RETURN(TensorSpec idx, n.out_spec(1));
  const bool widen = x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64 && x.dtype != DType::kInt64;
  std::string in = n.in(0);
  if (widen) {
    in = n.temp("int64");
    set_int(n.emit("Cast", {n.in(0)}, {in}), "to", onnx::TensorProto::INT64);
  }
  const std::string values = widen ? n.temp("values_int64") : n.out(0), inverse = n.temp("inverse_int64");
  set_int(n.emit("Unique", {in}, {values, "", inverse}), "sorted", 0);
  if (widen) set_int(n.emit("Cast", {values}, {n.out(0)}), "to", onnx_dtype(x.dtype));
  set_int(n.emit("Cast", {inverse}, {n.out(1)}), "to", onnx_dtype(idx.dtype));
  return absl::OkStatus();
}

// ---- stacking, splitting, shapes ----

// Pack: each input gains the new axis (Unsqueeze), then they are concatenated along it. Both
// ONNX ops count a negative axis from the output's rank, as TensorFlow's Pack does.
absl::Status pack(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* axis, n.attr("axis"));
  std::vector<std::string> parts;
  const std::string axes = ints_initializer(n, "axes", {axis->i()});
  for (int i = 0; i < n.num_inputs(); ++i) {
    parts.push_back(n.temp(absl::StrCat("expanded_", i)));
    n.emit("Unsqueeze", {n.in(i), axes}, {parts.back()});
  }
  set_int(n.emit("Concat", parts, {n.out()}), "axis", axis->i());
  return absl::OkStatus();
}

// Split into pieces of the sizes the node's outputs have (TensorFlow's SplitV may leave one
// size as -1; shape inference has resolved it).
absl::Status split_into_outputs(NodeContext& n, int value_input, int64_t axis, int count,
                                const std::vector<std::string>& outputs) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(value_input));
  const int rank = x.shape.rank();
  const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
  std::vector<int64_t> sizes;
  for (int k = 0; k < count; ++k) {
    TF_ASSIGN_OR_RETURN(TensorSpec piece, n.out_spec(k));
    const int64_t d = piece.shape.rank() == rank ? piece.shape.dim(a) : 1;  // Unpack's pieces lack the axis
    if (d < 0)
      return absl::UnimplementedError(absl::StrCat("node '", n.name(), "': the size of piece ", k, " is not known"));
    sizes.push_back(d);
  }
  set_int(n.emit("Split", {n.in(value_input), ints_initializer(n, "split", sizes)}, outputs), "axis", a);
  return absl::OkStatus();
}

std::vector<std::string> outputs_of(NodeContext& n, int count) {
  std::vector<std::string> out;
  for (int k = 0; k < count; ++k) out.push_back(n.out(k));
  return out;
}

absl::Status split(NodeContext& n) {  // inputs: split_dim, value
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axis, n.const_ints(0));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* count, n.attr("num_split"));
  const int k = static_cast<int>(count->i());
  return split_into_outputs(n, 1, axis.at(0), k, outputs_of(n, k));
}

absl::Status split_v(NodeContext& n) {  // inputs: value, size_splits, split_dim
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axis, n.const_ints(2));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* count, n.attr("num_split"));
  const int k = static_cast<int>(count->i());
  return split_into_outputs(n, 0, axis.at(0), k, outputs_of(n, k));
}

// Unpack: Split into pieces of 1, each Squeezed along the axis.
absl::Status unpack(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* axis, n.attr("axis"));
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* num, n.attr("num"));
  std::vector<std::string> pieces;
  for (int k = 0; k < num->i(); ++k) pieces.push_back(n.temp(absl::StrCat("piece_", k)));
  TF_RETURN_IF_ERROR(split_into_outputs(n, 0, axis->i(), static_cast<int>(num->i()), pieces));
  const std::string axes = ints_initializer(n, "axes", {axis->i()});
  for (int k = 0; k < num->i(); ++k) n.emit("Squeeze", {pieces[static_cast<size_t>(k)], axes}, {n.out(k)});
  return absl::OkStatus();
}

// Shape: ONNX's is int64; TensorFlow's default out_type int32 is a Cast of it.
absl::Status shape(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec out, n.out_spec(0));
  if (out.dtype == DType::kInt64) {
    n.emit("Shape", {n.in(0)}, {n.out()});
    return absl::OkStatus();
  }
  const std::string wide = n.temp("int64");
  n.emit("Shape", {n.in(0)}, {wide});
  set_int(n.emit("Cast", {wide}, {n.out()}), "to", onnx_dtype(out.dtype));
  return absl::OkStatus();
}

// Size: ONNX's Size is int64, as its Shape; Rank is the Size of the Shape.
absl::Status size(NodeContext& n, bool rank) {
  TF_ASSIGN_OR_RETURN(TensorSpec out, n.out_spec(0));
  std::string of = n.in(0);
  if (rank) {
    of = n.temp("shape");
    n.emit("Shape", {n.in(0)}, {of});
  }
  if (out.dtype == DType::kInt64) {
    n.emit("Size", {of}, {n.out()});
    return absl::OkStatus();
  }
  const std::string wide = n.temp("int64");
  n.emit("Size", {of}, {wide});
  set_int(n.emit("Cast", {wide}, {n.out()}), "to", onnx_dtype(out.dtype));
  return absl::OkStatus();
}

// SpaceToBatchND / BatchToSpaceND: no ONNX op; the rearrangement written out with static sizes
// (every dim but the batch known). With M blocked dims, sizes t_i per block b_i and the rest R:
//   to batch:  Pad -> Reshape [-1, t_0, b_0, ..., t_M-1, b_M-1, R] -> Transpose (the b_i first,
//              then the batch and the t_i) -> Reshape [-1, t_0, ..., R]
//   to space:  Reshape [b_0, ..., b_M-1, -1, t_0, ..., R] -> Transpose (batch, t_0, b_0, ...)
//              -> Reshape [-1, t_0 * b_0, ..., R] -> Slice off the crops.
absl::Status space_batch(NodeContext& n, bool to_batch) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> block, n.const_ints(1));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> margins, n.const_ints(2));
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  TF_ASSIGN_OR_RETURN(TensorSpec y, n.out_spec(0));
  const Shape& space = to_batch ? x.shape : y.shape;
  const Shape& blocked = to_batch ? y.shape : x.shape;
  const int m = static_cast<int>(block.size()), rank = space.rank();
  if (m == 0) {  // nothing blocked: a copy
    n.emit("Identity", {n.in(0)}, {n.out()});
    return absl::OkStatus();
  }
  for (int d = 1; d < rank; ++d) {
    if (space.dim(d) < 0 || blocked.dim(d) < 0)
      return absl::UnimplementedError(absl::StrCat(
          "a space/batch rearrangement of ", x.shape.to_string(), " with unknown dims other than the batch (ONNX has "
          "no such op: it is written as Reshapes and a Transpose of known sizes)"));
    if (blocked.dim(d) == 0)  // the Reshapes' -1 batch could not be inferred from zero elements
      return absl::UnimplementedError(absl::StrCat("a space/batch rearrangement of the empty ", x.shape.to_string()));
  }
  std::string at = n.in(0);
  if (to_batch) {  // zero padding, [begins..., ends...] over every dim
    std::vector<int64_t> pads(2 * static_cast<size_t>(rank), 0);
    for (int i = 0; i < m; ++i) pads[1 + i] = margins[2 * i], pads[rank + 1 + i] = margins[2 * i + 1];
    const std::string padded = n.temp("padded");
    n.emit("Pad", {at, ints_initializer(n, "pads", pads)}, {padded});
    at = padded;
  }
  std::vector<int64_t> split, perm;  // the split shape, and the permutation to the other side's order
  if (to_batch) {
    split.push_back(-1);
    for (int i = 0; i < m; ++i) split.insert(split.end(), {blocked.dim(1 + i), block[i]});
    for (int i = 0; i < m; ++i) perm.push_back(2 + 2 * i);
    perm.push_back(0);
    for (int i = 0; i < m; ++i) perm.push_back(1 + 2 * i);
  } else {
    split.assign(block.begin(), block.end());
    split.push_back(-1);
    for (int i = 0; i < m; ++i) split.push_back(blocked.dim(1 + i));
    perm.push_back(m);
    for (int i = 0; i < m; ++i) perm.insert(perm.end(), {m + 1 + i, i});
  }
  std::vector<int64_t> joined = {-1};
  for (int i = 0; i < m; ++i) joined.push_back(to_batch ? blocked.dim(1 + i) : blocked.dim(1 + i) * block[i]);
  for (int d = m + 1; d < rank; ++d) {
    split.push_back(space.dim(d));
    perm.push_back(2 * m + 1 + (d - m - 1));
    joined.push_back(space.dim(d));
  }
  const std::string split_t = n.temp("split"), moved = n.temp("moved");
  n.emit("Reshape", {at, ints_initializer(n, "split_shape", split)}, {split_t});
  set_ints(n.emit("Transpose", {split_t}, {moved}), "perm", perm);
  if (to_batch) {
    n.emit("Reshape", {moved, ints_initializer(n, "shape", joined)}, {n.out()});
    return absl::OkStatus();
  }
  const std::string whole = n.temp("uncropped");
  n.emit("Reshape", {moved, ints_initializer(n, "shape", joined)}, {whole});
  std::vector<int64_t> starts, ends, axes;
  for (int i = 0; i < m; ++i) {
    starts.push_back(margins[2 * i]);
    ends.push_back(joined[1 + i] - margins[2 * i + 1]);
    axes.push_back(1 + i);
  }
  n.emit("Slice",
         {whole, ints_initializer(n, "starts", starts), ints_initializer(n, "ends", ends), ints_initializer(n, "axes", axes)},
         {n.out()});
  return absl::OkStatus();
}

}  // namespace

void add_array_converters(ConverterTable& table) {
  table.insert({
      {"OneHot", one_hot}, {"StridedSlice", strided_slice}, {"Range", range}, {"LinSpace", lin_space}, {"Fill", fill},
      {"ZerosLike", constant_like(0)}, {"OnesLike", constant_like(1)}, {"Cumsum", cumsum}, {"ReverseV2", reverse},
      {"MatrixBandPart", band_part},
      {"BroadcastTo", broadcast_to}, {"MirrorPad", mirror_pad}, {"Where", where_coordinates},
      {"GatherNd", gather_nd}, {"GatherV2", gather}, {"ScatterNd", scatter_nd},
      {"TensorScatterUpdate", tensor_scatter_update}, {"UnsortedSegmentSum", unsorted_segment_sum},
      {"TopKV2", top_k}, {"Unique", unique}, {"Pack", pack}, {"Unpack", unpack}, {"Split", split},
      {"SplitV", split_v}, {"Shape", shape},
      {"Size", [](NodeContext& n) { return size(n, false); }}, {"Rank", [](NodeContext& n) { return size(n, true); }},
      {"InvertPermutation", invert_permutation},
      {"SpaceToBatchND", [](NodeContext& n) { return space_batch(n, true); }},
      {"BatchToSpaceND", [](NodeContext& n) { return space_batch(n, false); }},
  });
}

}  // namespace tapeflow::onnx_internal
