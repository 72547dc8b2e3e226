// Symbolic gradients (tf.gradients): adds the backward pass of a graph to the graph itself,
// with the same gradient functions the GradientTape uses (tape/gradient_registry.h). Those are
// written with public ops, so calling them on symbolic tensors builds nodes.
//
//   Graph g;
//   auto scope = g.as_default();
//   Tensor x = placeholder(DType::kFloat32, {3}, "x");
//   Variable w(Tensor({1.f, 2.f, 3.f}), "w");
//   Tensor loss = reduce_sum(square(x * w));
//   std::vector<Tensor> d = gradients({loss}, {x, w});  // "gradients/..." nodes
//   Tensor dd = gradients({d[0]}, {x})[0];              // second order: another backward pass
//
// The result has one entry per source: the gradient of sum(ys) (each y weighted by its
// grad_ys entry, ones by default) with respect to it, with the source's dtype and shape. A
// source the ys do not depend on gets an empty Tensor (Unconnected::kNone), zeros (kZero) or
// an InvalidArgumentError (kError), as TensorFlow's unconnected_gradients argument.
//
// A source may be a tensor of the graph or a Variable: a variable's gradient is the sum of the
// gradients flowing into every read of it in the graph (its ReadVariableOp nodes).
//
// Gradients stop at integer and bool tensors and at ops that are not differentiable
// (stop_gradient, comparisons, argmax, ...). An op on the path with no gradient function is a
// NotFoundError naming the node and the line that created it.
//
// Limitation: gradient functions that need an input's shape read it from the graph's static
// shapes, so graphs with unknown dims (-1) work only where those functions need no unknown
// dim: elementwise ops, matmul and reductions with a partially known shape do; reshape-like
// gradients of tensors with several unknown dims and broadcasting between unknown dims
// (which would need the runtime shape) do not. Fully known shapes always work.
#pragma once

#include <concepts>
#include <source_location>
#include <vector>

#include "eager/tensor.h"
#include "eager/variable.h"
#include "tape/gradient_tape.h"  // Source, Unconnected

namespace tapeflow {

// d(sum of ys)/d(xs) as new nodes of the ys' graph, created inside name_scope("gradients")
// ("gradients/...", "gradients_1/..." for a second call). grad_ys is empty (ones_like each y)
// or one tensor per y, with the y's dtype and a shape compatible with it. ys, xs and grad_ys
// must be tensors of the graph being built (when none is, the ys' graph is used);
// InvalidArgumentError otherwise.
std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<Source>& xs,
                              const std::vector<Tensor>& grad_ys = {}, Unconnected unconnected = Unconnected::kNone,
                              std::source_location loc = std::source_location::current());

// The same for a std::vector of tensors or of variables (graph.trainable_variables()). A
// template, so that a braced list such as {x, w} still picks the overload above.
template <typename T>
  requires std::same_as<T, Tensor> || std::same_as<T, Variable>
std::vector<Tensor> gradients(const std::vector<Tensor>& ys, const std::vector<T>& xs,
                              const std::vector<Tensor>& grad_ys = {}, Unconnected unconnected = Unconnected::kNone,
                              std::source_location loc = std::source_location::current()) {
  return gradients(ys, std::vector<Source>(xs.begin(), xs.end()), grad_ys, unconnected, loc);
}

}  // namespace tapeflow
