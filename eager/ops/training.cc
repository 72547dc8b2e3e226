#include "eager/ops/training.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"
#include "eager/ops/binary.h"
#include "eager/ops/shape_fns.h"
#include "eager/variable.h"

namespace tapeflow {

namespace {

// The checks every fused update shares: input 0 ('var') of a float dtype, every input of var's
// dtype, and the named attributes present.
absl::Status check_update_inputs(const InferenceContext& ctx, absl::Span<const char* const> names,
                                 std::initializer_list<const char*> attrs) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, "var", shape_fns::kFloating));
  const DType var = ctx.inputs[0].dtype;
  for (size_t i = 1; i < names.size(); ++i)
    if (ctx.inputs[i].dtype != var)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input '", names[i], "' has dtype ",
                                                     dtype_name(ctx.inputs[i].dtype), "; 'var' has ", dtype_name(var)));
  for (const char* attr : attrs)
    if (!ctx.attrs.has(attr))
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] attribute '", attr, "' is missing"));
  return absl::OkStatus();
}

absl::StatusOr<OutputSpecs> adam_update_shape(const InferenceContext& ctx) {
  static constexpr const char* kNames[] = {"var", "m", "v", "grad", "lr_t"};
  TF_RETURN_IF_ERROR(check_update_inputs(ctx, kNames, {"beta_1", "beta_2", "epsilon"}));
  const TensorSpec& var = ctx.inputs[0];
  for (int i = 1; i < 5; ++i) {
    const TensorSpec& in = ctx.inputs[i];
    const bool scalar = i == 4;
    if (scalar ? in.shape.rank() != 0 : !in.shape.is_compatible_with(var.shape))
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input '", kNames[i], "' has shape ",
                                                     in.shape.to_string(), "; it must be ",
                                                     scalar ? "a scalar" : absl::StrCat("var's ", var.shape.to_string())));
  }
  return OutputSpecs{var, var, var};
}

OpDef kAdamUpdate{.type = "AdamUpdate", .api_name = "adam_update", .num_inputs = 5, .infer = adam_update_shape,
                  .differentiable = false,
    .tf_form = "T=in0 beta_1:float beta_2:float epsilon:float"};

// Inputs var [m, n], a, b (matrices), scale (scalar); attributes transpose_a, transpose_b, subtract.
absl::StatusOr<OutputSpecs> matmul_update_shape(const InferenceContext& ctx) {
  static constexpr const char* kNames[] = {"var", "a", "b", "scale"};
  TF_RETURN_IF_ERROR(check_update_inputs(ctx, kNames, {"transpose_a", "transpose_b", "subtract"}));
  const TensorSpec& var = ctx.inputs[0];
  for (int i = 0; i < 4; ++i) {
    const TensorSpec& in = ctx.inputs[i];
    const int rank = i == 3 ? 0 : 2;
    if (in.shape.rank() != rank)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input '", kNames[i], "' has shape ",
                                                     in.shape.to_string(), "; it must be ",
                                                     rank == 0 ? "a scalar" : "a matrix"));
  }
  const bool ta = ctx.attrs.get<bool>("transpose_a"), tb = ctx.attrs.get<bool>("transpose_b");
  const Shape& a = ctx.inputs[1].shape;
  const Shape& b = ctx.inputs[2].shape;
  const Shape product{a.dim(ta ? 1 : 0), b.dim(tb ? 0 : 1)};
  const int64_t ka = a.dim(ta ? 0 : 1), kb = b.dim(tb ? 1 : 0);
  if ((ka >= 0 && kb >= 0 && ka != kb) || !product.is_compatible_with(var.shape))
    return absl::InvalidArgumentError(absl::StrCat(
        "[", ctx.op, "] op(a) op(b) of 'a' ", a.to_string(), " (transpose_a=", ta ? "true" : "false", ") and 'b' ",
        b.to_string(), " (transpose_b=", tb ? "true" : "false", ") does not give var's shape ", var.shape.to_string()));
  return OutputSpecs{var};
}

OpDef kMatMulUpdate{.type = "MatMulUpdate", .api_name = "matmul_update", .num_inputs = 4,
                    .infer = matmul_update_shape, .differentiable = false,
    .tf_form = "T=in0 transpose_a:bool transpose_b:bool subtract:bool"};

// Inputs var, alpha (scalar), delta (var's shape): TensorFlow's ApplyGradientDescent, functional.
absl::StatusOr<OutputSpecs> gradient_descent_update_shape(const InferenceContext& ctx) {
  static constexpr const char* kNames[] = {"var", "alpha", "delta"};
  TF_RETURN_IF_ERROR(check_update_inputs(ctx, kNames, {}));
  const TensorSpec& var = ctx.inputs[0];
  if (ctx.inputs[1].shape.rank() != 0)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input 'alpha' has shape ",
                                                   ctx.inputs[1].shape.to_string(), "; it must be a scalar"));
  if (!ctx.inputs[2].shape.is_compatible_with(var.shape))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input 'delta' has shape ",
                                                   ctx.inputs[2].shape.to_string(), "; it must be var's ",
                                                   var.shape.to_string()));
  return OutputSpecs{var};
}

OpDef kGradientDescentUpdate{.type = "GradientDescentUpdate", .api_name = "gradient_descent_update",
                             .num_inputs = 3, .infer = gradient_descent_update_shape, .differentiable = false};

[[noreturn]] void throw_descent_mismatch(const Variable& var, const char* what, const std::string& got,
                                         std::source_location loc) {
  throw InvalidArgumentError(absl::StrCat("[apply_gradient_descent] Variable '", var.name(), "' (",
                                          dtype_name(var.dtype()), " ", var.shape().to_string(), "): ", what,
                                          " is ", got),
                             loc);
}

}  // namespace

void register_training_ops(OpRegistry& r) {
  r.add(kAdamUpdate);
  r.add(kMatMulUpdate);
  r.add(kGradientDescentUpdate);
}

Tensor gradient_descent_update(const Tensor& var, const Tensor& alpha, const Tensor& delta, std::source_location loc) {
  const Tensor inputs[3] = {var, alpha, delta};
  return execute_single(kGradientDescentUpdate, inputs, AttrMap(), loc);
}

void apply_adam(Variable& var, Variable& m, Variable& v, const Tensor& grad, const Tensor& lr_t, double beta_1,
                double beta_2, double epsilon, std::source_location loc) {
  const AttrMap attrs{{"beta_1", beta_1}, {"beta_2", beta_2}, {"epsilon", epsilon}};
  Device* device = var.device();
  const bool eager = var.graph_info() == nullptr && m.graph_info() == nullptr && v.graph_info() == nullptr &&
                     current_context().is_eager();
  const bool one_device = device != nullptr && m.device() == device && v.device() == device && grad.defined() &&
                          grad.device() == device && lr_t.defined() && lr_t.device() == device;
  // One variable passed twice would take its own lock twice below: the functional form serves it.
  const bool distinct = var.id() != m.id() && var.id() != v.id() && m.id() != v.id();
  if (eager && one_device && distinct) {
    // The op's own checks on the variables' specs: no read, so each value stays held alone.
    const TensorSpec specs[5] = {{var.dtype(), var.shape()}, {m.dtype(), m.shape()}, {v.dtype(), v.shape()},
                                 {grad.dtype(), grad.shape()}, {lr_t.dtype(), lr_t.shape()}};
    const bool valid = adam_update_shape(InferenceContext{kAdamUpdate.api_name, specs, attrs}).ok();
    absl::StatusOr<KernelFn> kernel = resolve_kernel(kAdamUpdate, device->type(), var.dtype());
    bool written = false;
    if (valid && kernel.ok()) {
      // Each write_in_place runs its function only if that variable's storage is held alone; the
      // kernel runs only when all three are.
      var.write_in_place([&](DeviceTensor& var_storage) {
        m.write_in_place([&](DeviceTensor& m_storage) {
          v.write_in_place([&](DeviceTensor& v_storage) {
            DeviceTensor outputs[3] = {var_storage, m_storage, v_storage};
            const DeviceTensor* inputs[5] = {&var_storage, &m_storage, &v_storage, &grad.device_tensor(),
                                             &lr_t.device_tensor()};
            KernelContext ctx{device, kAdamUpdate.api_name, inputs, absl::MakeSpan(outputs), attrs};
            (void)(*kernel)(ctx);  // specs checked above: an elementwise kernel cannot fail
            written = true;
          });
        });
      });
    }
    if (written) return;
  }
  auto [var_t, m_t, v_t] = adam_update(var.read(loc), m.read(loc), v.read(loc), grad, lr_t, beta_1, beta_2, epsilon, loc);
  m.assign(m_t, loc);
  v.assign(v_t, loc);
  var.assign(var_t, loc);
}

Tensor apply_gradient_descent(Variable& var, const Operand& alpha, const Tensor& delta, std::source_location loc) {
  const DType dtype = var.dtype();
  if (!delta.defined()) throw_descent_mismatch(var, "delta", "an empty tensor", loc);
  if (delta.dtype() != dtype) throw_descent_mismatch(var, "delta's dtype", dtype_name(delta.dtype()), loc);
  if (!delta.shape().is_compatible_with(var.shape()))
    throw_descent_mismatch(var, "delta's shape", delta.shape().to_string(), loc);
  if (const Tensor* rate = alpha.tensor(); rate != nullptr && rate->rank() != 0)  // a graph would broadcast it
    throw_descent_mismatch(var, "alpha's shape", rate->shape().to_string(), loc);
  const bool eager = var.graph_info() == nullptr && current_context().is_eager() && !delta.is_symbolic();
  if (eager && delta.device() == var.device()) {
    const Tensor rate = alpha.resolve("apply_gradient_descent", &dtype, var.device());
    absl::StatusOr<KernelFn> kernel = resolve_kernel(kGradientDescentUpdate, var.device()->type(), dtype);
    const bool done = kernel.ok() && rate.device() == var.device() && var.write_in_place([&](DeviceTensor& value) {
      const DeviceTensor* inputs[3] = {&value, &rate.device_tensor(), &delta.device_tensor()};
      KernelContext ctx{var.device(), "apply_gradient_descent", inputs, absl::MakeSpan(&value, 1), AttrMap()};
      (void)(*kernel)(ctx);  // dtypes, shapes and device checked above: an elementwise kernel cannot fail
    });
    if (done) {
      PauseObservers not_a_read;  // an update, not a read a tape should see
      return var.read(loc);
    }
  }
  // Shared storage, another device, no kernel, or a graph being built: the same update written
  // as TensorFlow's Keras SGD writes it (in a graph, the form Note [MatMul update] fuses).
  return var.assign_sub(delta * alpha, loc);
}

std::array<Tensor, 3> adam_update(const Tensor& var, const Tensor& m, const Tensor& v, const Tensor& grad,
                                  const Tensor& lr_t, double beta_1, double beta_2, double epsilon,
                                  std::source_location loc) {
  const Tensor inputs[5] = {var, m, v, grad, lr_t};
  TensorList out = execute(OpCall{kAdamUpdate, inputs,
                                  AttrMap{{"beta_1", beta_1}, {"beta_2", beta_2}, {"epsilon", epsilon}}, loc});
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}

Tensor matmul_update(const Tensor& var, const Tensor& a, const Tensor& b, const Tensor& scale, bool transpose_a,
                     bool transpose_b, bool subtract, std::source_location loc) {
  const Tensor inputs[4] = {var, a, b, scale};
  return execute_single(
      kMatMulUpdate, inputs,
      AttrMap{{"transpose_a", transpose_a}, {"transpose_b", transpose_b}, {"subtract", subtract}}, loc);
}

bool has_fused_update_kernel(const Device* device, DType dtype) {
  return device != nullptr && resolve_kernel(kAdamUpdate, device->type(), dtype).ok();
}

}  // namespace tapeflow
