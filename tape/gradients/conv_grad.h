// The gradients of a convolution family, written once for conv2d (tape/gradients/conv.cc) and
// depthwise_conv2d (tape/gradients/conv_variants.cc). Internal.
//
// The backprop ops are linear in each input and adjoint to the forward op, so their gradients
// are the forward op and the other backprop op; this gives second-order gradients through
// convolutions. The family is named by its three public functions:
//
//   using Grads = internal::ConvGradients<conv2d, conv2d_backprop_input, conv2d_backprop_filter>;
//   r.add("Conv2D", Grads::forward);
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "tape/gradient_registry.h"

namespace tapeflow::internal {

using ConvInts = std::vector<int64_t>;
using ConvForwardFn = Tensor (*)(const Tensor& input, const Tensor& filter, ConvInts strides, std::string_view padding,
                                 ConvInts dilations, std::string_view data_format, std::source_location loc);
using ConvBackpropInputFn = Tensor (*)(ConvInts input_shape, const Tensor& filter, const Tensor& out_backprop,
                                       ConvInts strides, std::string_view padding, ConvInts dilations,
                                       std::string_view data_format, std::source_location loc);
using ConvBackpropFilterFn = Tensor (*)(const Tensor& input, ConvInts filter_shape, const Tensor& out_backprop,
                                        ConvInts strides, std::string_view padding, ConvInts dilations,
                                        std::string_view data_format, std::source_location loc);

template <ConvForwardFn kForward, ConvBackpropInputFn kBackpropInput, ConvBackpropFilterFn kBackpropFilter>
struct ConvGradients {
  using Ints = ConvInts;
  using Span = absl::Span<const Tensor>;

  static const Ints& strides(const GradInputs& op) { return op.attrs.get<Ints>("strides"); }
  static const std::string& padding(const GradInputs& op) { return op.attrs.get<std::string>("padding"); }
  // Absent in graphs written before conv2d had dilations (the shape functions read it the same way).
  static Ints dilations(const GradInputs& op) { return op.attrs.get_or<Ints>("dilations", Ints{1, 1}); }
  // Absent in graphs written before conv2d had data_format: NHWC.
  static std::string format(const GradInputs& op) { return op.attrs.get_or<std::string>("data_format", "NHWC"); }

  // y = forward(x, f).
  static GradList forward(const GradInputs& op, Span g) {
    const std::source_location loc = std::source_location::current();
    const Tensor& x = op.inputs[0];
    const Tensor& f = op.inputs[1];
    // The input's gradient is skipped for a first layer (its images need none).
    return {op.needs(0) ? kBackpropInput(x.shape().as_vector(), f, g[0], strides(op), padding(op), dilations(op), format(op), loc)
                        : Tensor(),
            op.needs(1)
                ? kBackpropFilter(x, f.shape().as_vector(), g[0], strides(op), padding(op), dilations(op), format(op), loc)
                : Tensor()};
  }

  // y = backprop_input(f, dy): <G, y> = <forward(G, f), dy>.
  static GradList backprop_input(const GradInputs& op, Span g) {
    const std::source_location loc = std::source_location::current();
    const Tensor& f = op.inputs[0];
    const Tensor& dy = op.inputs[1];
    return {kBackpropFilter(g[0], f.shape().as_vector(), dy, strides(op), padding(op), dilations(op), format(op), loc),
            kForward(g[0], f, strides(op), padding(op), dilations(op), format(op), loc)};
  }

  // y = backprop_filter(x, dy): <G, y> = <forward(x, G), dy>.
  static GradList backprop_filter(const GradInputs& op, Span g) {
    const std::source_location loc = std::source_location::current();
    const Tensor& x = op.inputs[0];
    const Tensor& dy = op.inputs[1];
    return {kBackpropInput(x.shape().as_vector(), g[0], dy, strides(op), padding(op), dilations(op), format(op), loc),
            kForward(x, g[0], strides(op), padding(op), dilations(op), format(op), loc)};
  }
};

}  // namespace tapeflow::internal
