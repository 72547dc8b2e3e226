// How a traced function's call is differentiated (graph/function.h): the call is recorded on
// active tapes as one "PartitionedCall" op whose inputs are the arguments, the captured tensors
// and the captured variables' values; its gradient runs the function's backward function, a
// graph built once with gradients() from a copy of the forward graph.
#pragma once

#include <memory>
#include <source_location>
#include <vector>

#include "eager/tensor.h"

namespace tapeflow {

class ConcreteFunction;

// Makes `fn` findable by the gradient of its calls (held weakly).
void register_concrete_function(const std::shared_ptr<ConcreteFunction>& fn);
// Tells the active tapes about one call of `fn`.
void record_function_call(ConcreteFunction& fn, const std::vector<Tensor>& inputs,
                          const std::vector<Tensor>& outputs, std::source_location loc);
// The backward function of `fwd` and, per forward input (args, captures, variables), its output
// index in the backward function (-1: no gradient).
struct BackwardFunction {
  std::shared_ptr<ConcreteFunction> fn;
  std::vector<int> output_of_input;
};
BackwardFunction build_backward(const ConcreteFunction& fwd);

}  // namespace tapeflow
