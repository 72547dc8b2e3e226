#include "graph/function_gradient.h"

#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"
#include "graph/function.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"
#include "graph/gradients.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

namespace {

absl::StatusOr<OutputSpecs> call_outputs(const InferenceContext& ctx) {
  return absl::InternalError(absl::StrCat("[", ctx.op, "] a function call op is recorded, never executed by itself"));
}

// The op a tape records for one call of a traced function (never executed as a kernel).
OpDef kFunctionCallOp{.type = "PartitionedCall", .api_name = "function", .num_inputs = -1, .infer = call_outputs,
                      .stateful = true, .differentiable = true};

std::mutex& registry_mu() {
  static std::mutex mu;
  return mu;
}
absl::flat_hash_map<int64_t, std::weak_ptr<ConcreteFunction>>& registry() {
  static auto* r = new absl::flat_hash_map<int64_t, std::weak_ptr<ConcreteFunction>>();
  return *r;
}

// d(outputs)/d(inputs) of one recorded call: runs the backward function on the call's arguments
// and the incoming gradients, with the variable reads fed the values the call saw.
GradList function_call_gradient(const GradInputs& op, absl::Span<const Tensor> grads) {
  const int64_t id = op.attrs.get<int64_t>("function_id");
  std::shared_ptr<ConcreteFunction> fn;
  {
    std::lock_guard<std::mutex> lock(registry_mu());
    auto it = registry().find(id);
    if (it != registry().end()) fn = it->second.lock();
  }
  if (!fn) throw FailedPreconditionError("[function] the traced function of this call no longer exists", {});
  ConcreteFunction& bw = fn->backward();
  const std::vector<int>& output_of_input = fn->backward_output_of_input();
  const size_t n_args = fn->inputs().size();
  std::vector<Tensor> args(op.inputs.begin(), op.inputs.begin() + static_cast<long>(n_args));
  args.insert(args.end(), grads.begin(), grads.end());
  // Reads of each variable in the backward graph see the value the forward call read.
  FeedList feeds;
  const size_t first_variable = n_args + fn->captures().size();
  const auto& reads = bw.variable_reads();
  for (size_t v = 0; v < fn->variable_reads().size(); ++v) {
    const int64_t var_id = fn->variable_reads()[v].first.id();
    for (const auto& [var, tensors] : reads)
      if (var.id() == var_id)
        for (const Tensor& t : tensors) feeds.emplace_back(t, Operand(op.inputs[first_variable + v]));
  }
  std::vector<Tensor> outs = bw.call(args, feeds, std::source_location::current());
  GradList result(op.inputs.size());
  for (size_t i = 0; i < result.size() && i < output_of_input.size(); ++i)
    if (output_of_input[i] >= 0) result[i] = outs[static_cast<size_t>(output_of_input[i])];
  return result;
}

}  // namespace

void register_concrete_function(const std::shared_ptr<ConcreteFunction>& fn) {
  static std::once_flag once;
  std::call_once(once, [] { register_gradient(kFunctionCallOp.type, function_call_gradient); });
  std::lock_guard<std::mutex> lock(registry_mu());
  registry()[fn->id()] = fn;
}

void record_function_call(ConcreteFunction& fn, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                          std::source_location loc) {
  AttrMap attrs{{"function_id", fn.id()}};
  TensorList outs(outputs.begin(), outputs.end());
  notify_op(OpCall{kFunctionCallOp, inputs, attrs, loc}, outs);
}

BackwardFunction build_backward(const ConcreteFunction& fwd) {
  // A copy of the forward graph (same node ids), then its gradient nodes.
  Graph bg;
  for (const Node* node : fwd.graph().state()->snapshot()) {
    Node copy = *node;
    bg.state()->add_node(std::move(copy));
  }
  auto same = [&](const Tensor& t) { return bg.state()->tensor({t.symbolic().node, t.symbolic().output}); };
  std::vector<Tensor> inputs, ys, grad_ys;
  std::vector<Source> xs;
  std::vector<TensorSpec> signature;
  for (const Tensor& a : fwd.inputs()) {
    inputs.push_back(same(a));
    xs.emplace_back(inputs.back());
    signature.push_back({a.dtype(), a.shape()});
  }
  for (const auto& c : fwd.captures()) xs.emplace_back(same(c.placeholder));
  for (const auto& [var, reads] : fwd.variable_reads()) xs.emplace_back(var);
  std::vector<Tensor> dxs;
  {
    auto scope = bg.as_default();
    for (size_t i = 0; i < fwd.outputs().size(); ++i) {
      const Tensor& y = fwd.outputs()[i];
      ys.push_back(same(y));
      grad_ys.push_back(placeholder(y.dtype(), y.shape(), absl::StrCat("grad_", i)));
      inputs.push_back(grad_ys.back());
      signature.push_back({y.dtype(), y.shape()});
    }
    dxs = gradients(ys, xs, grad_ys);
  }
  BackwardFunction out;
  std::vector<Tensor> outputs;
  for (const Tensor& dx : dxs) {
    out.output_of_input.push_back(dx.defined() ? static_cast<int>(outputs.size()) : -1);
    if (dx.defined()) outputs.push_back(dx);
  }
  std::vector<ConcreteFunction::Capture> captures;
  for (const auto& c : fwd.captures()) captures.push_back({c.value, same(c.placeholder)});
  out.fn = std::make_shared<ConcreteFunction>(absl::StrCat(fwd.name(), "_backward"), bg, inputs, outputs, signature,
                                              captures, std::vector<int>{});
  register_concrete_function(out.fn);
  return out;
}

}  // namespace tapeflow
