// Gradients of depthwise_conv2d and of its two backprop ops: as for conv2d
// (tape/gradients/conv.cc), the backprop ops are linear in each input and adjoint to the
// forward op, so their gradients are the forward op and the other backprop op.
#include "eager/ops/conv_variants.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;
using Ints = std::vector<int64_t>;

const Ints& strides(const GradInputs& op) { return op.attrs.get<Ints>("strides"); }
const std::string& padding(const GradInputs& op) { return op.attrs.get<std::string>("padding"); }
const Ints& dilations(const GradInputs& op) { return op.attrs.get<Ints>("dilations"); }

Grads depthwise_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& f = op.inputs[1];
  return {op.needs(0) ? depthwise_conv2d_backprop_input(x.shape().as_vector(), f, g[0], strides(op), padding(op),
                                                        dilations(op))
                      : Tensor(),
          op.needs(1) ? depthwise_conv2d_backprop_filter(x, f.shape().as_vector(), g[0], strides(op), padding(op),
                                                         dilations(op))
                      : Tensor()};
}

// y = backprop_input(f, dy): <G, y> = <depthwise_conv2d(G, f), dy>.
Grads backprop_input_grad(const GradInputs& op, Span g) {
  const Tensor& f = op.inputs[0];
  const Tensor& dy = op.inputs[1];
  return {depthwise_conv2d_backprop_filter(g[0], f.shape().as_vector(), dy, strides(op), padding(op), dilations(op)),
          depthwise_conv2d(g[0], f, strides(op), padding(op), dilations(op))};
}

// y = backprop_filter(x, dy): <G, y> = <depthwise_conv2d(x, G), dy>.
Grads backprop_filter_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& dy = op.inputs[1];
  return {depthwise_conv2d_backprop_input(x.shape().as_vector(), g[0], dy, strides(op), padding(op), dilations(op)),
          depthwise_conv2d(x, g[0], strides(op), padding(op), dilations(op))};
}
}  // namespace

void register_conv_variant_gradients(GradientRegistry& r) {
  r.add("DepthwiseConv2dNative", depthwise_grad);
  r.add("DepthwiseConv2dNativeBackpropInput", backprop_input_grad);
  r.add("DepthwiseConv2dNativeBackpropFilter", backprop_filter_grad);
}

}  // namespace tapeflow
