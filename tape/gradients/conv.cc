// Gradients of conv2d and of its two backprop ops. The backprop ops are linear in each input
// and adjoint to conv2d, so their gradients are conv2d and the other backprop op; this gives
// second-order gradients through convolutions.
#include "eager/ops/conv.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {
using Grads = GradList;
using Span = absl::Span<const Tensor>;
using Ints = std::vector<int64_t>;

const Ints& strides(const GradInputs& op) { return op.attrs.get<Ints>("strides"); }
const std::string& padding(const GradInputs& op) { return op.attrs.get<std::string>("padding"); }
Ints dilations(const GradInputs& op) { return op.attrs.get_or<Ints>("dilations", Ints{1, 1}); }

Grads conv2d_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& f = op.inputs[1];
  // The input's gradient is skipped for a first layer (its images need none).
  return {op.needs(0) ? conv2d_backprop_input(x.shape().as_vector(), f, g[0], strides(op), padding(op), dilations(op)) : Tensor(),
          op.needs(1) ? conv2d_backprop_filter(x, f.shape().as_vector(), g[0], strides(op), padding(op), dilations(op)) : Tensor()};
}

// y = conv2d_backprop_input(f, dy): <G, y> = <conv2d(G, f), dy>.
Grads backprop_input_grad(const GradInputs& op, Span g) {
  const Tensor& f = op.inputs[0];
  const Tensor& dy = op.inputs[1];
  return {conv2d_backprop_filter(g[0], f.shape().as_vector(), dy, strides(op), padding(op), dilations(op)),
          conv2d(g[0], f, strides(op), padding(op), dilations(op))};
}

// y = conv2d_backprop_filter(x, dy): <G, y> = <conv2d(x, G), dy>.
Grads backprop_filter_grad(const GradInputs& op, Span g) {
  const Tensor& x = op.inputs[0];
  const Tensor& dy = op.inputs[1];
  return {conv2d_backprop_input(x.shape().as_vector(), g[0], dy, strides(op), padding(op), dilations(op)),
          conv2d(x, g[0], strides(op), padding(op), dilations(op))};
}
}  // namespace

void register_conv_gradients(GradientRegistry& r) {
  r.add("Conv2D", conv2d_grad);
  r.add("Conv2DBackpropInput", backprop_input_grad);
  r.add("Conv2DBackpropFilter", backprop_filter_grad);
}

}  // namespace tapeflow
