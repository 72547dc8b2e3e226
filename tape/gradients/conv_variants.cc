// Gradients of depthwise_conv2d and of its two backprop ops: the rules are conv2d's
// (tape/gradients/conv_grad.h), over the depthwise ops.
#include "eager/ops/conv_variants.h"
#include "tape/gradient_registry.h"
#include "tape/gradients/conv_grad.h"

namespace tapeflow {

namespace {
using Grads =
    internal::ConvGradients<depthwise_conv2d, depthwise_conv2d_backprop_input, depthwise_conv2d_backprop_filter>;
}  // namespace

void register_conv_variant_gradients(GradientRegistry& r) {
  r.add("DepthwiseConv2dNative", Grads::forward);
  r.add("DepthwiseConv2dNativeBackpropInput", Grads::backprop_input);
  r.add("DepthwiseConv2dNativeBackpropFilter", Grads::backprop_filter);
}

}  // namespace tapeflow
