#include "eager/op_def.h"

#include <algorithm>

#include "core/checked_size.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tapeflow {

// Op families registered after the ones eager/op_def.h lists (declared here, not in that header,
// so adding a family does not rebuild every file that includes it).
void register_conv_variant_ops(OpRegistry& r);
void register_normalization_ops(OpRegistry& r);
void register_resize_ops(OpRegistry& r);
void register_space_batch_ops(OpRegistry& r);
void register_detection_ops(OpRegistry& r);
void register_nn_ops(OpRegistry& r);
void register_tensor_array_ops(OpRegistry& r);

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_unary_ops(*r);
    register_activation_ops(*r);
    register_binary_ops(*r);
    register_math_ops(*r);
    register_where_ops(*r);
    register_cast_ops(*r);
    register_segment_ops(*r);
    register_array_ops(*r);
    register_reduction_ops(*r);
    register_scan_ops(*r);
    register_matmul_ops(*r);
    register_random_ops(*r);
    register_creation_ops(*r);
    register_conv_ops(*r);
    register_pool_ops(*r);
    register_training_ops(*r);
    register_tensor_array_ops(*r);
    register_scatter_ops(*r);
    register_sorting_ops(*r);
    register_conv_variant_ops(*r);
    register_normalization_ops(*r);
    register_resize_ops(*r);
    register_space_batch_ops(*r);
    register_detection_ops(*r);
    register_nn_ops(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::add(const OpDef& op) {
  ops_.push_back(&op);
  // After any op of the same type, so find() keeps returning the first registered.
  const auto pos = std::upper_bound(sorted_by_type_.begin(), sorted_by_type_.end(), std::string_view(op.type),
                                    [](std::string_view t, const OpDef* a) { return t < std::string_view(a->type); });
  sorted_by_type_.insert(pos, &op);
}

const OpDef* OpRegistry::find(std::string_view type) const {
  const auto it = std::lower_bound(sorted_by_type_.begin(), sorted_by_type_.end(), type,
                                   [](const OpDef* a, std::string_view t) { return std::string_view(a->type) < t; });
  return it != sorted_by_type_.end() && (*it)->type == type ? *it : nullptr;
}

absl::StatusOr<KernelFn> resolve_kernel(const OpDef& op, DeviceType device, DType dtype) {
  std::atomic<KernelFn>& slot = op.kernel_cache[static_cast<int>(device)][static_cast<int>(dtype)];
  KernelFn fn = slot.load(std::memory_order_acquire);
  if (fn) return fn;
  fn = KernelRegistry::global().find(op.type, device, dtype);
  if (fn == nullptr) {
    std::vector<std::string> have;
    for (DType d : KernelRegistry::global().dtypes_for(op.type, device)) have.emplace_back(dtype_name(d));
    return absl::UnimplementedError(absl::StrCat(
        "No ", device_type_name(device), " kernel for dtype ", dtype_name(dtype),
        have.empty() ? std::string(" (no dtypes are supported on this device)")
                     : absl::StrCat(" (supported: ", absl::StrJoin(have, ", "), ")")));
  }
  slot.store(fn, std::memory_order_release);
  return fn;
}

absl::Status check_dtype_in(const InferenceContext& ctx, int input, std::string_view input_name,
                            std::initializer_list<DType> allowed) {
  const DType dt = ctx.inputs[input].dtype;
  for (DType a : allowed) if (a == dt) return absl::OkStatus();
  std::vector<std::string> names;
  for (DType a : allowed) names.emplace_back(dtype_name(a));
  return absl::InvalidArgumentError(absl::StrCat(
      "[", ctx.op, "] input '",
      absl::string_view(input_name.data(), input_name.size()), "' has dtype ", dtype_name(dt),
      "; expected one of ", absl::StrJoin(names, ", ")));
}

OutputSpecs single_output(DType dtype, Shape shape) {
  OutputSpecs out;
  out.push_back(TensorSpec{dtype, std::move(shape)});
  return out;
}

absl::StatusOr<OutputSpecs> infer_outputs(const OpDef& op, const InferenceContext& ctx) {
  absl::StatusOr<OutputSpecs> outs = op.infer(ctx);
  if (!outs.ok()) return outs;
  for (size_t i = 0; i < outs->size(); ++i) {
    absl::StatusOr<int64_t> n = checked_num_elements((*outs)[i].shape.dims(), /*allow_unknown=*/true);
    if (!n.ok())
      return absl::InvalidArgumentError(absl::StrCat("output ", i, ": ", n.status().message()));
  }
  return outs;
}

}  // namespace tapeflow
