#include "eager/ops/activation.h"

#include "absl/strings/str_cat.h"
#include "eager/context.h"
#include "eager/ops/shape_fns.h"

namespace tapeflow {

namespace {

absl::StatusOr<OutputSpecs> numeric_shape(const InferenceContext& ctx) {
  return shape_fns::like_input(ctx, "features", shape_fns::kNumeric);
}
absl::StatusOr<OutputSpecs> floating_shape(const InferenceContext& ctx) {
  return shape_fns::like_input(ctx, "features", shape_fns::kFloating);
}

// A gradient op's two inputs: one dtype, compatible shapes (TensorFlow requires them equal;
// unknown dims in a graph take the other's).
absl::StatusOr<OutputSpecs> grad_shape(const InferenceContext& ctx, std::initializer_list<DType> dtypes,
                                       const char* a_name, const char* b_name) {
  TF_RETURN_IF_ERROR(check_dtype_in(ctx, 0, a_name, dtypes));
  const TensorSpec& a = ctx.inputs[0];
  const TensorSpec& b = ctx.inputs[1];
  if (a.dtype != b.dtype)
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] input '", b_name, "' has dtype ",
                                                   dtype_name(b.dtype), " but '", a_name, "' has dtype ",
                                                   dtype_name(a.dtype)));
  if (!a.shape.is_compatible_with(b.shape))
    return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] inputs '", a_name, "' ", a.shape.to_string(),
                                                   " and '", b_name, "' ", b.shape.to_string(),
                                                   " must have the same shape"));
  Shape out = a.shape;
  for (int i = 0; i < out.rank(); ++i)
    if (out.dim(i) < 0) out.set_dim(i, b.shape.dim(i));
  return single_output(a.dtype, std::move(out));
}
absl::StatusOr<OutputSpecs> numeric_grad_shape(const InferenceContext& ctx) {
  return grad_shape(ctx, shape_fns::kNumeric, "gradients", "features");
}
absl::StatusOr<OutputSpecs> floating_grad_shape(const InferenceContext& ctx) {
  return grad_shape(ctx, shape_fns::kFloating, "gradients", "features");
}
absl::StatusOr<OutputSpecs> floating_output_grad_shape(const InferenceContext& ctx) {
  return grad_shape(ctx, shape_fns::kFloating, "gradients", "outputs");
}
absl::StatusOr<OutputSpecs> y_dy_shape(const InferenceContext& ctx) {
  return grad_shape(ctx, shape_fns::kFloating, "y", "dy");
}

#define TF_ACTIVATION_OP(var, op_type, api, n, shape_fn) \
  OpDef var{.type = op_type, .api_name = api, .num_inputs = n, .infer = shape_fn, .elementwise = true};
TF_ACTIVATION_OP(kRelu, "Relu", "relu", 1, numeric_shape)
TF_ACTIVATION_OP(kRelu6, "Relu6", "relu6", 1, numeric_shape)
TF_ACTIVATION_OP(kElu, "Elu", "elu", 1, floating_shape)
TF_ACTIVATION_OP(kSelu, "Selu", "selu", 1, floating_shape)
TF_ACTIVATION_OP(kSoftplus, "Softplus", "softplus", 1, floating_shape)
TF_ACTIVATION_OP(kSoftsign, "Softsign", "softsign", 1, floating_shape)
OpDef kLeakyRelu{.type = "LeakyRelu", .api_name = "leaky_relu", .num_inputs = 1, .infer = floating_shape,
                 .elementwise = true, .tf_form = "T=in0 alpha:float=0.2"};
TF_ACTIVATION_OP(kReluGrad, "ReluGrad", "relu_grad", 2, numeric_grad_shape)
TF_ACTIVATION_OP(kRelu6Grad, "Relu6Grad", "relu6_grad", 2, numeric_grad_shape)
TF_ACTIVATION_OP(kEluGrad, "EluGrad", "elu_grad", 2, floating_output_grad_shape)
TF_ACTIVATION_OP(kSeluGrad, "SeluGrad", "selu_grad", 2, floating_output_grad_shape)
TF_ACTIVATION_OP(kSoftplusGrad, "SoftplusGrad", "softplus_grad", 2, floating_grad_shape)
TF_ACTIVATION_OP(kSoftsignGrad, "SoftsignGrad", "softsign_grad", 2, floating_grad_shape)
OpDef kLeakyReluGrad{.type = "LeakyReluGrad", .api_name = "leaky_relu_grad", .num_inputs = 2,
                     .infer = floating_grad_shape, .elementwise = true, .tf_form = "T=in0 alpha:float=0.2"};
TF_ACTIVATION_OP(kSigmoidGrad, "SigmoidGrad", "sigmoid_grad", 2, y_dy_shape)
TF_ACTIVATION_OP(kTanhGrad, "TanhGrad", "tanh_grad", 2, y_dy_shape)
#undef TF_ACTIVATION_OP

Tensor run1(const OpDef& op, const Tensor& x, std::source_location loc, AttrMap attrs = AttrMap()) {
  const Tensor inputs[1] = {x};
  return execute_single(op, inputs, attrs, loc);
}
Tensor run2(const OpDef& op, const Tensor& a, const Tensor& b, std::source_location loc, AttrMap attrs = AttrMap()) {
  const Tensor inputs[2] = {a, b};
  return execute_single(op, inputs, attrs, loc);
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  for (const OpDef* op : {&kRelu, &kRelu6, &kElu, &kSelu, &kSoftplus, &kSoftsign, &kLeakyRelu, &kReluGrad,
                          &kRelu6Grad, &kEluGrad, &kSeluGrad, &kSoftplusGrad, &kSoftsignGrad, &kLeakyReluGrad,
                          &kSigmoidGrad, &kTanhGrad})
    r.add(*op);
}

Tensor relu(const Tensor& x, std::source_location loc) { return run1(kRelu, x, loc); }
Tensor relu6(const Tensor& x, std::source_location loc) { return run1(kRelu6, x, loc); }
Tensor elu(const Tensor& x, std::source_location loc) { return run1(kElu, x, loc); }
Tensor selu(const Tensor& x, std::source_location loc) { return run1(kSelu, x, loc); }
Tensor softplus(const Tensor& x, std::source_location loc) { return run1(kSoftplus, x, loc); }
Tensor softsign(const Tensor& x, std::source_location loc) { return run1(kSoftsign, x, loc); }
Tensor leaky_relu(const Tensor& x, double alpha, std::source_location loc) {
  return run1(kLeakyRelu, x, loc, AttrMap{{"alpha", alpha}});
}

Tensor relu_grad(const Tensor& g, const Tensor& features, std::source_location loc) {
  return run2(kReluGrad, g, features, loc);
}
Tensor relu6_grad(const Tensor& g, const Tensor& features, std::source_location loc) {
  return run2(kRelu6Grad, g, features, loc);
}
Tensor elu_grad(const Tensor& g, const Tensor& outputs, std::source_location loc) {
  return run2(kEluGrad, g, outputs, loc);
}
Tensor selu_grad(const Tensor& g, const Tensor& outputs, std::source_location loc) {
  return run2(kSeluGrad, g, outputs, loc);
}
Tensor softplus_grad(const Tensor& g, const Tensor& features, std::source_location loc) {
  return run2(kSoftplusGrad, g, features, loc);
}
Tensor softsign_grad(const Tensor& g, const Tensor& features, std::source_location loc) {
  return run2(kSoftsignGrad, g, features, loc);
}
Tensor leaky_relu_grad(const Tensor& g, const Tensor& features, double alpha, std::source_location loc) {
  return run2(kLeakyReluGrad, g, features, loc, AttrMap{{"alpha", alpha}});
}
Tensor sigmoid_grad(const Tensor& y, const Tensor& dy, std::source_location loc) { return run2(kSigmoidGrad, y, dy, loc); }
Tensor tanh_grad(const Tensor& y, const Tensor& dy, std::source_location loc) { return run2(kTanhGrad, y, dy, loc); }

}  // namespace tapeflow
