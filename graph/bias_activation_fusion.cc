// Note [Bias and activation epilogue]: a layer, traced or imported, is
//   Conv2D | DepthwiseConv2dNative | MatMul -> Add(., bias) or BiasAdd -> an activation (optional:
//   Relu, Relu6, Elu or LeakyRelu, the ones TensorFlow's remapper fuses)
// three kernels: the product, a pass that writes a new tensor with the bias added, and a pass
// that clamps it. When the plan holds that pattern (each intermediate read by the next step
// alone, never fetched or fed, no control edge on it; the bias rank 1 with the product's last
// dim; one device with a _FusedBiasActivation kernel), the chain's last step runs the product
// and then adds the bias and applies the activation in place, in one pass over the product
// while it is still in cache. The product and the add steps are skipped (fused_away) and their
// inputs are read, and released, at the last step. TensorFlow's grappler does the same rewrite
// (its remapper's _FusedConv2D and _FusedMatMul with fused_ops = [BiasAdd, Relu], and the others).
//
// The epilogue uses the same functors (devices/functors.h) as the Add and Relu kernels, so a
// fused run is bit-identical to an unfused one (and to eager execution), NaNs included, except
// for which payload a NaN product plus a NaN bias carries, which no add specifies (see the
// kernel, devices/cpu/normalization.cc): bias_activation_fusion_test checks both. With a full trace the chain is one entry
// (the last node's) whose fused_nodes names the three.
//
// Measured (bench/deploy_bench BM_CnnBatch1_*, tutorial 04's CNN on one image): the bias adds
// and Relus took 15 us of the 430 us the loaded model's run took, one kernel launch and one
// pass each; docs/performance.md has the figures with the fusion. This is a graph-only gain:
// an eager add cannot know that its result will only be clamped.
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/kernel_registry.h"
#include "graph/executor.h"

namespace tapeflow {

namespace {

bool is_step_of(const PlanStep& step, std::initializer_list<std::string_view> types) {
  if (step.kind != PlanStep::Kind::kKernel || step.fused_away || !step.fused.empty() || step.num_outputs != 1 ||
      step.random)
    return false;
  for (std::string_view t : types)
    if (step.node->op->type == t) return true;
  return false;
}

}  // namespace

void Plan::fuse_bias_activations() {
  const int n = static_cast<int>(steps_.size());
  std::vector<int> readers(static_cast<size_t>(num_slots_), 0), reader(static_cast<size_t>(num_slots_), -1);
  std::vector<char> has_control_successor(static_cast<size_t>(graph_.state()->num_nodes()), 0);
  for (int i = 0; i < n; ++i) {
    for (int s : steps_[i].inputs)
      if (s >= 0) { ++readers[s]; reader[s] = i; }
    for (int c : steps_[i].node->control_inputs) has_control_successor[c] = 1;
  }
  // The one step that reads step's output, when nothing else may observe that output (a fetch,
  // a feed, a second reader, a control edge from its node).
  auto sole_reader = [&](const PlanStep& step) -> int {
    const int out = step.first_output;
    if (slot_pinned_[out] || readers[out] != 1 || step.node->id < 0 || has_control_successor[step.node->id]) return -1;
    return reader[out];
  };
  auto spec_of = [&](const PlanStep& step, int input) -> const TensorSpec& {
    const TensorRef& ref = step.node->inputs[input];
    return graph_.state()->node(ref.node).outputs[ref.index];
  };
  for (int h = 0; h < n; ++h) {
    PlanStep& head = steps_[h];
    if (!is_step_of(head, {"Conv2D", "DepthwiseConv2dNative", "MatMul"})) continue;
    const int a = sole_reader(head);
    if (a < 0 || !is_step_of(steps_[a], {"Add", "BiasAdd"}) || steps_[a].device != head.device) continue;
    PlanStep& add = steps_[a];
    const int out = head.first_output;
    if (add.inputs.size() != 2 || (add.inputs[0] == out) == (add.inputs[1] == out)) continue;  // x + x, or not an input
    const int bias_input = add.inputs[0] == out ? 1 : 0;
    if (std::string_view(add.node->op->type) == "BiasAdd" &&
        (bias_input != 1 || add.node->attrs.get_or<std::string>("data_format", "NHWC") != "NHWC"))
      continue;
    const TensorSpec& product = head.node->outputs[0];
    const TensorSpec& bias = spec_of(add, bias_input);
    const int rank = product.shape.rank();
    if (rank < 1 || product.shape.dim(rank - 1) < 0 || bias.shape.rank() != 1 ||
        bias.shape.dim(0) != product.shape.dim(rank - 1) || bias.dtype != product.dtype ||
        add.node->outputs[0].shape != product.shape || add.node->outputs[0].dtype != product.dtype)
      continue;
    const KernelFn kernel = KernelRegistry::global().find("_FusedBiasActivation", head.device->type(), product.dtype);
    if (kernel == nullptr) continue;
    int last = a;
    std::string activation;
    if (const int r = sole_reader(add);
        r >= 0 && is_step_of(steps_[r], {"Relu", "Relu6", "Elu", "LeakyRelu"}) && steps_[r].device == head.device) {
      last = r;
      activation = steps_[r].node->op->type;
    }
    auto fused = std::make_shared<FusedBiasActivation>();
    fused->head = h;
    fused->add = a;
    fused->bias_input = bias_input;
    fused->kernel = kernel;
    fused->attrs = AttrMap{{"activation", activation}};
    if (activation == "LeakyRelu") fused->attrs.set("alpha", steps_[last].node->attrs.get<double>("alpha"));
    for (int m : {h, a}) {
      if (m == last) continue;
      steps_[m].fused_away = true;
      steps_[m].fused_into = last;
    }
    steps_[last].fused = last == a ? std::vector<int>{h, a} : std::vector<int>{h, a, last};
    steps_[last].bias_activation = std::move(fused);
  }
}

}  // namespace tapeflow
