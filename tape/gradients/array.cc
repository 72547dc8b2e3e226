// Gradients of the array family (eager/ops/array.cc) and of unsorted_segment_sum.
#include <numeric>

#include "eager/context.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/ops/reduction.h"
#include "eager/ops/segment.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;
using Ints = std::vector<int64_t>;

Grads reshape_like_input(const GradInputs& op, Span g) { return {reshape(g[0], op.inputs[0].shape().as_vector())}; }
Grads identity_grad(const GradInputs&, Span g) { return {g[0]}; }
Grads identity_n_grad(const GradInputs&, Span g) { return Grads(g.begin(), g.end()); }

Grads transpose_grad(const GradInputs& op, Span g) {
  const Ints& perm = op.attrs.get<Ints>("perm");
  Ints inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return {transpose(g[0], inverse)};
}

Grads concat_grad(const GradInputs& op, Span g) {
  const int rank = op.inputs[0].rank();
  int64_t axis = op.attrs.get<int64_t>("axis");
  if (axis < 0) axis += rank;
  Ints sizes;
  for (const Tensor& t : op.inputs) sizes.push_back(t.shape().dim(static_cast<int>(axis)));
  std::vector<Tensor> parts = split(g[0], sizes, axis);
  return Grads(parts.begin(), parts.end());
}

// Pack and Unpack undo each other; Split's and SplitV's pieces concatenate back.
Grads pack_grad(const GradInputs& op, Span g) {
  std::vector<Tensor> parts = unstack(g[0], op.attrs.get<int64_t>("axis"));
  return Grads(parts.begin(), parts.end());
}
Grads unpack_grad(const GradInputs& op, Span g) {
  return {stack(std::vector<Tensor>(g.begin(), g.end()), op.attrs.get<int64_t>("axis"))};
}
Grads split_grad(const GradInputs& op, Span g) {
  return {concat(std::vector<Tensor>(g.begin(), g.end()), op.attrs.get<int64_t>("axis"))};
}

// The gradient of a slice is the upstream gradient padded back to the input's shape.
Grads slice_grad(const GradInputs& op, Span g) {
  const Shape& in = op.inputs[0].shape();
  const Ints& begin = op.attrs.get<Ints>("begin");
  const Shape& out = op.outputs[0].shape();
  std::vector<std::pair<int64_t, int64_t>> paddings;
  for (int i = 0; i < in.rank(); ++i) paddings.emplace_back(begin[i], in.dim(i) - begin[i] - out.dim(i));
  return {pad(g[0], paddings)};
}

// Scatter-add of the upstream gradient to the flat positions the slice read: slicing a tensor
// of flat indices with the same parameters gives exactly those positions.
Grads strided_slice_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const int64_t n = x.num_elements();
  const Tensor index_grid[1] = {reshape(range<int64_t>(0, n, 1), x.shape().as_vector())};
  const Tensor positions = execute_single(op.op, index_grid,
                                          op.attrs, std::source_location::current());
  const Tensor flat = unsorted_segment_sum(reshape(g[0], {-1}), reshape(positions, {-1}), n);
  return {reshape(flat, x.shape().as_vector())};
}

// Gather with batch_dims b > 0: g is params[:b] + params[b:axis] + indices[b:] + params[axis+1:].
// Batch i's indices are offset by i * n, so one scatter-add over [batch * n] rows serves all
// batches; then the [batch, n] rows are reshaped and moved back in place.
Grads batched_gather_grad(const Tensor& params, const Tensor& indices, int axis, int b, const Tensor& g) {
  const Shape& ps = params.shape();
  const int rank = ps.rank(), idx_rank = indices.rank(), no = axis - b, ni = idx_rank - b;
  int64_t batch = 1, m = 1;
  for (int i = 0; i < b; ++i) batch *= ps.dim(i);
  for (int i = b; i < idx_rank; ++i) m *= indices.shape().dim(i);
  const int64_t n = ps.dim(axis);
  if (batch * m == 0 || n == 0) return {zeros_like(params), Tensor()};
  // B + I + O + R, then [batch * m] + O + R rows.
  Ints perm, rows = {batch * m};
  for (int i = 0; i < b; ++i) perm.push_back(i);
  for (int i = 0; i < ni; ++i) perm.push_back(b + no + i);
  for (int i = 0; i < no; ++i) perm.push_back(b + i);
  for (int i = b + no + ni; i < g.rank(); ++i) perm.push_back(i);
  for (int i = b; i < rank; ++i) if (i != axis) rows.push_back(ps.dim(i));
  const Tensor moved = reshape(transpose(g, perm), rows);
  const Tensor ids = cast(reshape(indices, {batch, m}), DType::kInt64) +
                     reshape(range<int64_t>(0, batch * n, n), {batch, 1});
  const Tensor summed = unsorted_segment_sum(moved, reshape(ids, {batch * m}), batch * n);
  // [batch * n] + O + R -> B + [n] + O + R -> B + O + [n] + R.
  Ints split, back;
  for (int i = 0; i < b; ++i) split.push_back(ps.dim(i));
  split.push_back(n);
  for (int i = b; i < rank; ++i) if (i != axis) split.push_back(ps.dim(i));
  for (int i = 0; i < b; ++i) back.push_back(i);
  for (int i = 0; i < no; ++i) back.push_back(b + 1 + i);
  back.push_back(b);
  for (int i = axis + 1; i < rank; ++i) back.push_back(i);
  return {transpose(reshape(summed, split), back), Tensor()};
}

// Gather along `axis`: move the axis to the front, scatter-add rows, move it back.
Grads gather_grad(const GradInputs& op, Span g) {
  const Tensor& params = op.inputs[0];
  const Tensor& indices = op.inputs[1];
  const int rank = params.rank();
  int64_t axis = op.attrs.get<int64_t>("axis");
  if (axis < 0) axis += rank;
  int64_t batch_dims = op.attrs.get_or<int64_t>("batch_dims", 0);
  if (batch_dims < 0) batch_dims += indices.rank();
  if (batch_dims > 0) return batched_gather_grad(params, indices, static_cast<int>(axis), static_cast<int>(batch_dims), g[0]);
  const int64_t num_indices = indices.num_elements();
  const int batch = static_cast<int>(axis), idx_rank = indices.rank();
  // g has shape params[:axis] + indices.shape + params[axis+1:]; bring the index dims first.
  Ints perm;
  for (int i = 0; i < idx_rank; ++i) perm.push_back(batch + i);
  for (int i = 0; i < batch; ++i) perm.push_back(i);
  for (int i = batch + idx_rank; i < g[0].rank(); ++i) perm.push_back(i);
  Tensor moved = transpose(g[0], perm);
  Ints rows_shape = {num_indices};
  for (int i = idx_rank; i < moved.rank(); ++i) rows_shape.push_back(moved.shape().dim(i));
  Tensor scattered = unsorted_segment_sum(reshape(moved, rows_shape), reshape(indices, {-1}),
                                          params.shape().dim(batch));
  // scattered is [params[axis]] + params[:axis] + params[axis+1:]; put axis back in place.
  Ints back;
  for (int i = 1; i <= batch; ++i) back.push_back(i);
  back.push_back(0);
  for (int i = batch + 1; i < rank; ++i) back.push_back(i);
  return {transpose(scattered, back), Tensor()};
}

Grads pad_grad(const GradInputs& op, Span g) {
  const Ints& flat = op.attrs.get<Ints>("paddings");
  Ints begin;
  for (size_t i = 0; i < flat.size(); i += 2) begin.push_back(flat[i]);
  return {slice(g[0], begin, op.inputs[0].shape().as_vector())};
}

// Tile: view g as [m0, d0, m1, d1, ...] and sum over the multiples.
Grads tile_grad(const GradInputs& op, Span g) {
  const Shape& in = op.inputs[0].shape();
  const Ints& multiples = op.attrs.get<Ints>("multiples");
  Ints split_shape, axes;
  for (int i = 0; i < in.rank(); ++i) {
    split_shape.push_back(multiples[i]);
    split_shape.push_back(in.dim(i));
    axes.push_back(2 * i);
  }
  if (axes.empty()) return {g[0]};
  return {reduce_sum(reshape(g[0], split_shape), axes)};
}

Grads segment_sum_grad(const GradInputs& op, Span g) { return {gather(g[0], op.inputs[1]), Tensor()}; }
// MirrorPad: per padded dim, the centre keeps its gradient and each mirrored strip adds its
// gradient, reversed, onto the input positions it copied (from 1 in REFLECT, 0 in SYMMETRIC).
// Built from slice, reverse, pad and add, so it differentiates again.
Grads mirror_pad_grad(const GradInputs& op, Span g) {
  const Ints& pads = op.attrs.get<Ints>("paddings");
  const int64_t off = op.attrs.get<std::string>("mode") == "REFLECT" ? 1 : 0;
  const Shape& in = op.inputs[0].shape();
  const int rank = in.rank();
  Tensor grad = g[0];
  for (int i = 0; i < rank; ++i) {
    const int64_t before = pads[2 * i], after = pads[2 * i + 1], d = in.dim(i);
    if (before == 0 && after == 0) continue;
    auto part = [&](int64_t begin, int64_t size) {
      Ints b(static_cast<size_t>(rank), 0), s(static_cast<size_t>(rank), -1);
      b[static_cast<size_t>(i)] = begin;
      s[static_cast<size_t>(i)] = size;
      return slice(grad, b, s);
    };
    auto placed = [&](const Tensor& strip, int64_t lo, int64_t hi) {  // zeros lo before, hi after along i
      std::vector<std::pair<int64_t, int64_t>> p(static_cast<size_t>(rank), {0, 0});
      p[static_cast<size_t>(i)] = {lo, hi};
      return pad(reverse(strip, {i}), p);
    };
    Tensor next = part(before, d);
    if (before > 0) next = next + placed(part(0, before), off, d - off - before);
    if (after > 0) next = next + placed(part(before + d, after), d - off - after, off);
    grad = next;
  }
  return {grad};
}

// Reversing is its own inverse; a broadcast copy sums back to the input's shape (in a graph,
// an unknown dim of the input counts as not broadcast: unbroadcast's rule).
Grads reverse_grad(const GradInputs& op, Span g) { return {reverse(g[0], op.attrs.get<Ints>("axis"))}; }
// Permutations: the gradient goes back through the inverse one.
Grads depth_to_space_grad(const GradInputs& op, Span g) {
  return {space_to_depth(g[0], op.attrs.get<int64_t>("block_size"), op.attrs.get<std::string>("data_format"))};
}
Grads space_to_depth_grad(const GradInputs& op, Span g) {
  return {depth_to_space(g[0], op.attrs.get<int64_t>("block_size"), op.attrs.get<std::string>("data_format"))};
}
// A mask: the same band of the gradient.
Grads band_part_grad(const GradInputs& op, Span g) {
  return {matrix_band_part(g[0], op.attrs.get<int64_t>("num_lower"), op.attrs.get<int64_t>("num_upper"))};
}
Grads broadcast_to_grad(const GradInputs& op, Span g) { return {unbroadcast(g[0], op.inputs[0].shape())}; }
}  // namespace

void register_array_gradients(GradientRegistry& r) {
  r.add("Reshape", reshape_like_input);
  r.add("ExpandDims", reshape_like_input);
  r.add("Squeeze", reshape_like_input);
  r.add("Identity", identity_grad);
  r.add("IdentityN", identity_n_grad);
  r.add("Transpose", transpose_grad);
  r.add("ConcatV2", concat_grad);
  r.add("Slice", slice_grad);
  r.add("StridedSlice", strided_slice_grad);
  r.add("GatherV2", gather_grad);
  r.add("PadV2", pad_grad);
  r.add("Pad", pad_grad);
  r.add("Pack", pack_grad);
  r.add("Unpack", unpack_grad);
  r.add("Split", split_grad);
  r.add("SplitV", split_grad);
  r.add("Tile", tile_grad);
  r.add("ReverseV2", reverse_grad);
  r.add("MatrixBandPart", band_part_grad);
  r.add("DepthToSpace", depth_to_space_grad);
  r.add("SpaceToDepth", space_to_depth_grad);
  r.add("MirrorPad", mirror_pad_grad);
  r.add("BroadcastTo", broadcast_to_grad);
  r.add("UnsortedSegmentSum", segment_sum_grad);
}

}  // namespace tapeflow
