// N-dimensional gathers and scatters (TensorFlow's GatherNd, ScatterNd and TensorScatterUpdate).
// The last dim of `indices` (K) is a coordinate into the first K dims of params / shape / tensor;
// the leading dims of indices enumerate the slices.
//
//   Tensor p = {{1, 2}, {3, 4}};
//   gather_nd(p, Tensor{{1, 0}, {0, 1}});                   // [3, 2]: p[1,0], p[0,1]
//   gather_nd(p, Tensor{{1}});                              // [[3, 4]]: row 1
//   scatter_nd(Tensor{{1}, {1}, {0}}, Tensor{5, 6, 7}, {3}); // [7, 11, 0]: duplicates add
//   tensor_scatter_update(p, Tensor{{0, 0}}, Tensor{9});    // [[9, 2], [3, 4]]
//
// indices are int32 or int64 with rank >= 1. An index outside its dim is an InvalidArgumentError
// naming the op, the index's position and value ("indices[1] = [5, 0] does not index into param
// shape [3,2]"), reported before anything is written (TensorFlow's CPU behaviour; its GPU
// kernels ignore bad indices instead). Gradients: gather_nd <-> scatter_nd, and
// tensor_scatter_update's are the incoming gradient with the updated positions zeroed (tensor)
// and gather_nd of it (updates).
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "eager/tensor.h"

namespace tapeflow {

#define TF_SL std::source_location loc = std::source_location::current()
// Output shape indices.shape[:-1] + params.shape[K:]; K <= params.rank (K = 0 takes all of
// params for each index row). Every dtype.
Tensor gather_nd(const Tensor& params, const Tensor& indices, TF_SL);
// A zero tensor of `shape` with updates (shape indices.shape[:-1] + shape[K:]) added at indices;
// repeated indices add up. float32, float64, int32, int64, uint8 (integer sums wrap).
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, std::vector<int64_t> shape, TF_SL);
// A copy of tensor with the slices at indices replaced by updates (shape indices.shape[:-1] +
// tensor.shape[K:]). With repeated indices the last update wins (TensorFlow leaves the order
// unspecified). Every dtype; tensor is not modified.
Tensor tensor_scatter_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates, TF_SL);
#undef TF_SL

}  // namespace tapeflow
