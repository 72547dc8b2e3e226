// Array (shape-manipulation) ops: reshaping views, transposes, joining and splitting, slicing,
// gathering, one-hot encoding, padding and tiling. They work on every dtype (float32, float64,
// int32, int64, uint8, bool) and never modify their inputs.
//
//   Tensor x = {{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};     // [2,3]
//   reshape(x, {3, -1});                               // [3,2], shares x's buffer
//   transpose(x);                                      // [3,2], perm {1,0}
//   concat({x, x}, 0);                                 // [4,3]
//   stack({x, x}, 1);                                  // [2,2,3]
//   slice(x, {0, 1}, {-1, 2});                         // [[2,3],[5,6]]
//   strided_slice(x, {0, 0}, {0, 0}, {1, -1}, {.begin_mask = 3, .end_mask = 3});  // x[:, ::-1]
//   gather(x, Tensor{2, 0}, 1);                        // [[3,1],[6,4]]
//   one_hot(Tensor{0, 2}, 3);                          // [[1,0,0],[0,0,1]]
//   pad(x, {{1, 0}, {0, 2}});                          // [3,5], zeros before row 0 and after col 2
//
// Axes may be negative (counted from the end). Bad axes, shapes and attributes throw
// InvalidArgumentError naming the op ("[concat] ...") and the offending input; gather's
// out-of-range indices are reported by the kernel the same way.
//
// Primitives (one kernel each): transpose, reverse, concat, slice, strided_slice, gather, one_hot,
// pad, mirror_pad, tile, broadcast_to. Views (no copy, no kernel): reshape, expand_dims, squeeze, identity. Composites of the
// above: stack, unstack, split.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "devices/strided_slice.h"
#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()

// ---- views: the result shares x's buffer ----
// New shape with the same element count; at most one dim may be -1 (inferred).
Tensor reshape(const Tensor& x, std::vector<int64_t> shape, TF_SL);
// Inserts a size-1 dim at `axis`, in [-rank-1, rank].
Tensor expand_dims(const Tensor& x, int64_t axis, TF_SL);
// Removes the listed size-1 dims (an error if one is not size 1), or all size-1 dims when
// `axes` is empty.
Tensor squeeze(const Tensor& x, std::vector<int64_t> axes = {}, TF_SL);
// The same values (a view).
Tensor identity(const Tensor& x, TF_SL);
// identity of several tensors at once (TensorFlow's IdentityN): output i is a view of input i.
// An imported call of a GraphDef's function keeps its name as one (Note [Inlined function calls]).
std::vector<Tensor> identity_n(const std::vector<Tensor>& inputs, TF_SL);
// identity for values, but gradients do not flow through it (tapes never record it).
Tensor stop_gradient(const Tensor& x, TF_SL);

// ---- reordering ----
// Output dim i is input dim perm[i]; an empty perm reverses the dims.
Tensor transpose(const Tensor& x, std::vector<int64_t> perm = {}, TF_SL);
// x with the order of its elements along each of `axes` reversed (TensorFlow's ReverseV2); a
// repeated axis is an error, an empty list returns x's values.
Tensor reverse(const Tensor& x, std::vector<int64_t> axes, TF_SL);
// tf.linalg.band_part (TensorFlow's MatrixBandPart): each matrix x[..., i, j] kept where
// i - j <= num_lower and j - i <= num_upper, zero elsewhere; a negative bound keeps that whole
// triangle. matrix_band_part(ones({n, n}), -1, 0) is a causal mask. Any dtype, rank >= 2.
Tensor matrix_band_part(const Tensor& x, int64_t num_lower, int64_t num_upper, TF_SL);
// tf.nn.depth_to_space: each pixel's depth, read as a block_size x block_size block of
// depth / block_size^2 channels (row-major, TensorFlow's order), spread over that block of
// pixels: NHWC [N, H, W, C] -> [N, H * bs, W * bs, C / bs^2] (NCHW alike). space_to_depth is
// its inverse. Any dtype; block_size >= 2.
Tensor depth_to_space(const Tensor& x, int64_t block_size, std::string_view data_format = "NHWC", TF_SL);
Tensor space_to_depth(const Tensor& x, int64_t block_size, std::string_view data_format = "NHWC", TF_SL);
// tf.math.invert_permutation: y[x[i]] = i for an int32 or int64 vector x holding each of 0 .. n-1
// once (else InvalidArgumentError naming the bad or repeated entry). Transpose's gradient in a
// TensorFlow graph reads its permutation through it.
Tensor invert_permutation(const Tensor& x, TF_SL);

// ---- joining and splitting ----
// Joins along an existing axis; all other dims and the dtypes must match.
Tensor concat(const std::vector<Tensor>& values, int64_t axis, TF_SL);
// Joins equally shaped tensors along a new axis in [-rank-1, rank]: one Pack node.
Tensor stack(const std::vector<Tensor>& values, int64_t axis = 0, TF_SL);
// The slices of x along `axis`, each without that dim (x.shape()[axis] tensors): one Unpack node.
std::vector<Tensor> unstack(const Tensor& x, int64_t axis = 0, TF_SL);
// num_splits equal pieces along axis (the dim must divide evenly): one Split node.
std::vector<Tensor> split(const Tensor& x, int num_splits, int64_t axis = 0, TF_SL);
// Pieces of the given sizes along axis; one size may be -1 (the rest); they must sum to the dim.
// One SplitV node.
std::vector<Tensor> split(const Tensor& x, std::vector<int64_t> sizes, int64_t axis = 0, TF_SL);
// Makes split(x, {5}) mean sizes {5}, not five pieces.
std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> sizes, int64_t axis = 0, TF_SL);

// ---- slicing ----
// x[begin[i] : begin[i] + size[i]] in every dim; size[i] == -1 takes the rest of dim i.
// begin must be in [0, dim] and the slice must lie inside x.
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size, TF_SL);
// tf.strided_slice: Python slicing per entry (negative indices count from the end, out-of-range
// bounds clamp, negative strides walk backwards), with TensorFlow's bitmasks (see
// devices/strided_slice.h). An empty `strides` means all 1.
Tensor strided_slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                     std::vector<int64_t> strides = {}, StridedSliceMasks masks = {}, TF_SL);

// ---- indexing ----
// Takes params' slices along `axis` at `indices` (int32 or int64, any shape): the output shape
// is params.shape[:axis] + indices.shape + params.shape[axis+1:]. An index outside
// [0, params.shape[axis]) is an InvalidArgumentError.
// batch_dims (TensorFlow's): the first batch_dims dims of params and indices are batch dims,
// equal in both, and batch b gathers from params[b] with indices[b]; the output shape is then
// params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:]. A negative
// batch_dims counts from indices' rank; it must be <= axis (after both are made non-negative).
Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis = 0, int64_t batch_dims = 0, TF_SL);
// A new dim of size `depth` at `axis` (-1: last) holding on_value where the dim's position equals
// the index and off_value elsewhere; indices (uint8, int32 or int64) outside [0, depth) give
// all-off rows, as in TensorFlow.
Tensor one_hot(const Tensor& indices, int64_t depth, double on_value = 1, double off_value = 0,
               int64_t axis = -1, DType dtype = DType::kFloat32, TF_SL);

// ---- padding and tiling ----
// Adds paddings[i].first values before and paddings[i].second after dim i, all equal to
// constant_value (converted to x's dtype). Paddings must be non-negative.
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           double constant_value = 0, TF_SL);
// Pads with x's own values mirrored at each edge (TensorFlow's MirrorPad): mode "REFLECT" leaves
// the edge element out of the mirror ([1,2,3] padded (2,2): [3,2,1,2,3,2,1]), "SYMMETRIC" repeats
// it ([2,1,1,2,3,3,2]). Each padding is at most dim - 1 (REFLECT) or dim (SYMMETRIC).
Tensor mirror_pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings,
                  const std::string& mode, TF_SL);
// Repeats x multiples[i] times along dim i.
Tensor tile(const Tensor& x, std::vector<int64_t> multiples, TF_SL);
// tf.shape: x's dims as a 1-D tensor of out_type (int32 or int64), known when the graph runs
// (a static shape is x.shape()). One Shape node.
Tensor shape(const Tensor& x, DType out_type = DType::kInt32, TF_SL);
// tf.size: x's number of elements, a scalar of out_type (int32 or int64); tf.rank: its number of
// dims, an int32 scalar. Known when the graph runs, as shape(). One Size / Rank node.
Tensor size(const Tensor& x, DType out_type = DType::kInt32, TF_SL);
Tensor rank(const Tensor& x, TF_SL);
// x repeated to `shape` by NumPy broadcasting (TensorFlow's BroadcastTo): x's dims, aligned at
// the end, must each be 1 or equal to shape's.
Tensor broadcast_to(const Tensor& x, std::vector<int64_t> shape, TF_SL);

#undef TF_SL

}  // namespace tapeflow
