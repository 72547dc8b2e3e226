// Gradients of the scan family (eager/ops/scan.cc), TensorFlow's formulas, with public ops.
#include "eager/ops/binary.h"
#include "eager/ops/scan.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;

struct ScanAttrs {
  int64_t axis;
  bool exclusive, reverse;
};
ScanAttrs attrs_of(const GradInputs& op) {
  return {op.attrs.get<int64_t>("axis"), op.attrs.get<bool>("exclusive"), op.attrs.get<bool>("reverse")};
}

// Each input feeds the sums after it (before it, reversed): the gradient is the same scan of
// the incoming gradient run the other way.
Grads cumsum_grad(const GradInputs& op, Span g) {
  const ScanAttrs a = attrs_of(op);
  return {cumsum(g[0], a.axis, a.exclusive, !a.reverse)};
}
// TensorFlow's: cumsum(cumprod(x) * g, reversed) / x. Like TensorFlow's, it is NaN or inf where
// x is 0 (the division).
Grads cumprod_grad(const GradInputs& op, Span g) {
  const ScanAttrs a = attrs_of(op);
  const Tensor& x = op.inputs[0];
  const Tensor prod = cumprod(x, a.axis, a.exclusive, a.reverse);
  return {cumsum(prod * g[0], a.axis, a.exclusive, !a.reverse) / x};
}
}  // namespace

void register_scan_gradients(GradientRegistry& r) {
  r.add("Cumsum", cumsum_grad);
  r.add("Cumprod", cumprod_grad);
}

}  // namespace tapeflow
