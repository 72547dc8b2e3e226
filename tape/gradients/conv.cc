// Gradients of conv2d and of its two backprop ops (the rules are tape/gradients/conv_grad.h's,
// shared with depthwise_conv2d).
#include "eager/ops/conv.h"
#include "tape/gradient_registry.h"
#include "tape/gradients/conv_grad.h"

namespace tapeflow {

namespace {
using Grads = internal::ConvGradients<conv2d, conv2d_backprop_input, conv2d_backprop_filter>;
}  // namespace

void register_conv_gradients(GradientRegistry& r) {
  r.add("Conv2D", Grads::forward);
  r.add("Conv2DBackpropInput", Grads::backprop_input);
  r.add("Conv2DBackpropFilter", Grads::backprop_filter);
}

}  // namespace tapeflow
