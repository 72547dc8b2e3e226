// Gradient of top_k (eager/ops/sorting.cc), TensorFlow's formula with public ops: the
// gradient of each chosen value goes back to the position it was taken from. Unique has none.
#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/ops/scatter.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

// Rows of x flattened to [outer * n]; the chosen positions become flat offsets row * n + index
// and the values' gradient is scattered there (each position is chosen at most once per row).
Grads top_k_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Shape& xs = x.shape();
  if (!xs.is_fully_defined())
    throw InvalidArgumentError("[top_k] its gradient needs the shape of 'x' known, got " + xs.to_string());
  const int64_t n = xs.dim(xs.rank() - 1), k = op.outputs[1].shape().dim(xs.rank() - 1);
  int64_t outer = 1;
  for (int i = 0; i + 1 < xs.rank(); ++i) outer *= xs.dim(i);
  if (outer == 0 || n == 0 || k == 0) return {zeros_like(x)};
  const Tensor row_start = reshape(range<int64_t>(0, outer * n, n), {outer, 1});
  const Tensor flat = cast(reshape(op.outputs[1], {outer, k}), DType::kInt64) + row_start;
  const Tensor dx = scatter_nd(reshape(flat, {outer * k, 1}), reshape(g[0], {outer * k}), {outer * n});
  return {reshape(dx, xs.as_vector())};
}
}  // namespace

void register_sorting_gradients(GradientRegistry& r) { r.add("TopKV2", top_k_grad); }

}  // namespace tapeflow
