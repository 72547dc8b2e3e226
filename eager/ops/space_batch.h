// SpaceToBatchND and BatchToSpaceND (tf.space_to_batch_nd / tf.batch_to_space_nd): the
// rearrangement TensorFlow 1's atrous (dilated) convolutions are built from, and which frozen
// DeepLab-style graphs carry around their Conv2D nodes.
//
//   Tensor x = ...;                                          // [1, 4, 4, 1]
//   Tensor b = space_to_batch_nd(x, {2, 2}, {{0, 0}, {0, 0}});   // [4, 2, 2, 1]
//   batch_to_space_nd(b, {2, 2}, {{0, 0}, {0, 0}});              // x again
//
// x is [batch] + spatial (M dims, M = block_shape.size()) + remaining dims. space_to_batch_nd
// zero-pads each spatial dim i by paddings[i] = (before, after) (the padded size must divide by
// block_shape[i]), splits it into blocks of block_shape[i], and moves the position within the
// block into the batch: output [batch * prod(block_shape), padded_i / block_shape[i] ...,
// remaining], output batch index (block position, row-major) * batch + b. batch_to_space_nd is
// its inverse, with crops[i] = (start, end) removed from spatial dim i afterwards. Any dtype;
// block sizes >= 1; paddings and crops >= 0. Gradients: each is the other's.
#pragma once

#include <cstdint>
#include <source_location>
#include <utility>
#include <vector>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()

Tensor space_to_batch_nd(const Tensor& x, std::vector<int64_t> block_shape,
                         const std::vector<std::pair<int64_t, int64_t>>& paddings, TF_SL);
Tensor batch_to_space_nd(const Tensor& x, std::vector<int64_t> block_shape,
                         const std::vector<std::pair<int64_t, int64_t>>& crops, TF_SL);

// The (first, second) pairs of a flattened paddings or crops attr ([M, 2] read row-major).
std::vector<std::pair<int64_t, int64_t>> margin_pairs(const std::vector<int64_t>& flat);

#undef TF_SL

}  // namespace tapeflow
