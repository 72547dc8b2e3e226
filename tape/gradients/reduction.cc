// Gradients of the reductions (eager/ops/reduction.cc).
#include <algorithm>
#include <utility>
#include <vector>

#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/ops/reduction.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

// The reduced output's shape with the reduced axes kept as size 1.
std::vector<int64_t> kept_shape(const GradInputs& op) {
  const Shape& in = op.inputs[0].shape();
  std::vector<int64_t> shape = in.as_vector();
  for (int64_t a : op.attrs.get<std::vector<int64_t>>("axes")) shape[a < 0 ? a + in.rank() : a] = 1;
  return shape;
}

// t (shaped as the reduction's output) with the reduced axes back as size-1 dims. With unknown
// dims (a graph) it inserts them one by one, which needs no dim sizes.
Tensor with_kept_dims(const GradInputs& op, const Tensor& t) {
  const std::vector<int64_t> keep = kept_shape(op);
  if (Shape(keep).is_fully_defined()) return reshape(t, keep);
  if (op.attrs.get<bool>("keep_dims")) return t;
  const int rank = op.inputs[0].rank();
  std::vector<int64_t> axes;
  for (int64_t a : op.attrs.get<std::vector<int64_t>>("axes")) axes.push_back(a < 0 ? a + rank : a);
  std::sort(axes.begin(), axes.end());
  Tensor out = t;
  for (int64_t a : axes) out = expand_dims(out, a);
  return out;
}

Grads sum_grad(const GradInputs& op, Span g) {
  return {add(zeros_like(op.inputs[0]), with_kept_dims(op, g[0]))};
}

// Mean: Sum's gradient over the number of elements each output averaged. With unknown dims (a
// graph) that number is counted at run time, as the sum of ones over the same axes.
Grads mean_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor dx = sum_grad(op, g)[0];
  const auto& axes = op.attrs.get<std::vector<int64_t>>("axes");
  double count = 1;
  for (int64_t a : axes) {
    const int64_t d = x.shape().dim(static_cast<int>(a < 0 ? a + x.rank() : a));
    if (d < 0) return {dx / reduce_sum(ones_like(x), axes, /*keepdims=*/true)};
    count *= static_cast<double>(d);
  }
  return {dx / count};
}

// Max and min: the gradient is shared equally among the elements equal to the extreme.
Grads extreme_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor mask = cast(equal(x, with_kept_dims(op, op.outputs[0])), x.dtype());
  const Tensor count = reduce_sum(mask, op.attrs.get<std::vector<int64_t>>("axes"), /*keepdims=*/true);
  return {mask * with_kept_dims(op, g[0]) / count};
}

// Products along axis 0 of t [n, m] of every element before (kForward) or after each row,
// itself excluded (1 for the first / last row). The inclusive scan is Hillis-Steele: log2(n)
// rounds of multiplying by a copy shifted by 1, 2, 4, ... rows (padded with ones).
enum class Direction { kForward, kBackward };
Tensor exclusive_cumprod(const Tensor& t, int64_t n, int64_t m, Direction dir) {
  using Pad = std::pair<int64_t, int64_t>;
  const bool fwd = dir == Direction::kForward;
  // The first (forward) or last n - s rows, moved s rows towards the other end.
  auto shifted = [&](const Tensor& v, int64_t s) {
    return pad(slice(v, {fwd ? 0 : s, 0}, {n - s, m}), {fwd ? Pad{s, 0} : Pad{0, s}, Pad{0, 0}}, 1.0);
  };
  Tensor scan = t;
  for (int64_t s = 1; s < n; s *= 2) scan = scan * shifted(scan, s);
  return shifted(scan, 1);
}

// Note [Prod gradient]: d(prod)/dx_i is the product of the other elements of x_i's slice. It is
// computed without division (prod / x_i is nan where x_i == 0 and wrong with two zeros), as
// TensorFlow does: the reduced axes are moved to the front and flattened to [n, m], and the
// product of the others is (exclusive product from the left) * (exclusive product from the
// right). Only public ops, so second derivatives (also at zeros) come from the same code.
Grads prod_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const std::vector<int64_t> keep = kept_shape(op);
  const Tensor dy = reshape(g[0], keep);
  const int rank = x.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : op.attrs.get<std::vector<int64_t>>("axes")) reduced[a < 0 ? a + rank : a] = true;
  std::vector<int64_t> perm, permuted_shape;
  int64_t n = 1, m = 1;
  for (int pass = 0; pass < 2; ++pass) {  // reduced axes first, in order, then the others
    for (int i = 0; i < rank; ++i) {
      if (reduced[i] != (pass == 0)) continue;
      perm.push_back(i);
      permuted_shape.push_back(x.shape().dim(i));
      (pass == 0 ? n : m) *= x.shape().dim(i);
    }
  }
  // One element per slice (or none at all): the product is the element itself.
  if (n <= 1 || m == 0) return {add(zeros_like(x), dy)};
  bool identity = true;
  for (int i = 0; i < rank; ++i) identity = identity && perm[i] == i;
  const Tensor t = reshape(identity ? x : transpose(x, perm), {n, m});
  const Tensor others = reshape(exclusive_cumprod(t, n, m, Direction::kForward) *
                                    exclusive_cumprod(t, n, m, Direction::kBackward),
                                permuted_shape);
  if (identity) return {dy * others};
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return {dy * transpose(others, inverse)};
}
}  // namespace

void register_reduction_gradients(GradientRegistry& r) {
  r.add("Sum", sum_grad);
  r.add("Mean", mean_grad);
  r.add("Max", extreme_grad);
  r.add("Min", extreme_grad);
  r.add("Prod", prod_grad);
}

}  // namespace tapeflow
