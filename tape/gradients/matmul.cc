// Gradient of matmul (batched, with transpose flags and broadcast batch dims).
#include "eager/ops/matmul.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
GradList matmul_grad(const GradInputs& op, absl::Span<const Tensor> grads) {
  const Tensor& a = op.inputs[0];
  const Tensor& b = op.inputs[1];
  const Tensor& g = grads[0];
  const bool ta = op.attrs.get<bool>("transpose_a");
  const bool tb = op.attrs.get<bool>("transpose_b");
  // Each product only where the tape needs it (a first layer's input needs no gradient).
  Tensor da, db;
  if (!ta && !tb) {        // C = A B
    if (op.needs(0)) da = matmul(g, b, false, true);
    if (op.needs(1)) db = matmul(a, g, true, false);
  } else if (ta && !tb) {  // C = A' B
    if (op.needs(0)) da = matmul(b, g, false, true);
    if (op.needs(1)) db = matmul(a, g, false, false);
  } else if (!ta && tb) {  // C = A B'
    if (op.needs(0)) da = matmul(g, b, false, false);
    if (op.needs(1)) db = matmul(g, a, true, false);
  } else {                 // C = A' B'
    if (op.needs(0)) da = matmul(b, g, true, true);
    if (op.needs(1)) db = matmul(g, a, true, true);
  }
  // Batch dims that broadcasting stretched are summed back.
  return {da.defined() ? unbroadcast(da, a.shape()) : da, db.defined() ? unbroadcast(db, b.shape()) : db};
}
}  // namespace

void register_matmul_gradients(GradientRegistry& r) { r.add("MatMul", matmul_grad); }

}  // namespace tapeflow
