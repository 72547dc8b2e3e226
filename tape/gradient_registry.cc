#include "tape/gradient_registry.h"

#include <mutex>

#include "eager/ops/array.h"
#include "eager/ops/reduction.h"

namespace tapeflow {

// Families registered after the ones tape/gradient_registry.h lists (declared here so adding one
// does not rebuild every gradient file).
void register_conv_variant_gradients(GradientRegistry& r);
void register_normalization_gradients(GradientRegistry& r);
void register_resize_gradients(GradientRegistry& r);
void register_space_batch_gradients(GradientRegistry& r);
void register_nn_gradients(GradientRegistry& r);

void GradientRegistry::add(std::string_view op_type, GradFn fn) {
  for (auto& [name, f] : fns_) {
    if (name == op_type) { f = fn; return; }
  }
  fns_.emplace_back(std::string(op_type), fn);
}

GradFn GradientRegistry::find(std::string_view op_type) const {
  for (const auto& [name, f] : fns_) if (name == op_type) return f;
  return nullptr;
}

namespace {
std::mutex& extra_gradients_mu() {
  static std::mutex mu;
  return mu;
}
GradientRegistry& extra_gradients() {
  static GradientRegistry* r = new GradientRegistry();
  return *r;
}
}  // namespace

GradFn find_gradient(std::string_view op_type) {
  static const GradientRegistry* registry = [] {
    auto* r = new GradientRegistry();
    register_unary_gradients(*r);
    register_activation_gradients(*r);
    register_binary_gradients(*r);
    register_math_gradients(*r);
    register_where_gradients(*r);
    register_cast_gradients(*r);
    register_array_gradients(*r);
    register_reduction_gradients(*r);
    register_scan_gradients(*r);
    register_matmul_gradients(*r);
    register_conv_gradients(*r);
    register_pool_gradients(*r);
    register_scatter_gradients(*r);
    register_sorting_gradients(*r);
    register_conv_variant_gradients(*r);
    register_normalization_gradients(*r);
    register_resize_gradients(*r);
    register_space_batch_gradients(*r);
    register_nn_gradients(*r);
    return r;
  }();
  if (GradFn fn = registry->find(op_type)) return fn;
  std::lock_guard<std::mutex> lock(extra_gradients_mu());
  return extra_gradients().find(op_type);
}

void register_gradient(std::string_view op_type, GradFn fn) {
  std::lock_guard<std::mutex> lock(extra_gradients_mu());
  extra_gradients().add(op_type, fn);
}

Tensor unbroadcast(const Tensor& grad, const Shape& shape) {
  const Shape& gs = grad.shape();
  if (gs == shape) return grad;
  std::vector<int64_t> axes;
  const int lead = gs.rank() - shape.rank();
  for (int i = 0; i < gs.rank(); ++i) {
    if (i < lead || (shape.dim(i - lead) == 1 && gs.dim(i) != 1)) axes.push_back(i);
  }
  Tensor summed = axes.empty() ? grad : reduce_sum(grad, axes, /*keepdims=*/true);
  if (shape.is_fully_defined()) return reshape(summed, shape.as_vector());
  // A graph shape with unknown dims: drop the leading (now size-1) axes without naming sizes.
  // Note: an unknown dim of `shape` is taken as not broadcast (it would need the runtime shape).
  if (lead == 0) return summed;
  std::vector<int64_t> leading(static_cast<size_t>(lead));
  for (int i = 0; i < lead; ++i) leading[static_cast<size_t>(i)] = i;
  return squeeze(summed, leading);
}

}  // namespace tapeflow
