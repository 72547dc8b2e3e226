#include "graph/functional_ops.h"

#include "absl/strings/str_cat.h"

namespace tapeflow {

namespace {

// Their output specs come from the functions they run, which the shape function cannot see:
// import_graph_def sets them on the node (Note [Functional control flow]).
absl::StatusOr<OutputSpecs> made_by_import(const InferenceContext& ctx) {
  return absl::FailedPreconditionError(absl::StrCat(
      "[", ctx.op, "] nodes that run functions are made by import_graph_def from a GraphDef and its library"));
}

}  // namespace

// Stateful: never folded, deduplicated or pruned away from what they compute; the executor
// runs them itself (graph/functional_run.cc), and graph_def_functional.cc reads and writes
// their TensorFlow attrs.
#define TAPEFLOW_FUNCTIONAL_OP(var, type_name, api, form)                                                   \
  OpDef var{.type = type_name, .api_name = api, .num_inputs = -1, .infer = made_by_import, .stateful = true, \
            .differentiable = false, .tf_form = form};
TAPEFLOW_FUNCTIONAL_OP(kIfOp, "If", "if", "")
TAPEFLOW_FUNCTIONAL_OP(kStatelessIfOp, "StatelessIf", "if", "")
TAPEFLOW_FUNCTIONAL_OP(kWhileOp, "While", "while", "parallel_iterations:int=10")
TAPEFLOW_FUNCTIONAL_OP(kStatelessWhileOp, "StatelessWhile", "while", "parallel_iterations:int=10")
TAPEFLOW_FUNCTIONAL_OP(kCaseOp, "Case", "case", "")
TAPEFLOW_FUNCTIONAL_OP(kStatelessCaseOp, "StatelessCase", "case", "")
#undef TAPEFLOW_FUNCTIONAL_OP

FunctionalKind functional_kind(const OpDef* op) {
  if (op == &kIfOp || op == &kStatelessIfOp) return FunctionalKind::kIf;
  if (op == &kWhileOp || op == &kStatelessWhileOp) return FunctionalKind::kWhile;
  if (op == &kCaseOp || op == &kStatelessCaseOp) return FunctionalKind::kCase;
  return FunctionalKind::kNone;
}

const OpDef* find_functional_op(std::string_view type) {
  for (const OpDef* op : {&kIfOp, &kStatelessIfOp, &kWhileOp, &kStatelessWhileOp, &kCaseOp, &kStatelessCaseOp})
    if (type == op->type) return op;
  return nullptr;
}

bool truth_value(const Tensor& t) {
  if (t.shape().rank() != 0) return t.num_elements() > 0;
  bool result = false;
  dispatch_dtype(t.dtype(), [&]<typename T>() { result = t.item<T>() != T(0); });
  return result;
}

int case_branch(const Tensor& index, int branches) {
  const int32_t i = index.item<int32_t>();
  return i >= 0 && i < branches ? i : branches - 1;
}

}  // namespace tapeflow
