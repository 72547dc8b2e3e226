// Composites read from a GraphDef: Note [Composites in a GraphDef] (graph/graph_def_composites.h).
#include "graph/graph_def_composites.h"

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/einsum.h"
#include "graph/graph_context.h"
#include "graph/graph_def.h"
#include "graph/graph_ops.h"

namespace tapeflow::graph_def_internal {

namespace {

absl::StatusOr<OutputSpecs> never_inferred(const InferenceContext& ctx) {
  return absl::InternalError(absl::StrCat("[", ctx.op, "] is read as a composite, not run as a node"));
}

const OpDef kEinsumComposite{.type = "Einsum", .api_name = "einsum", .num_inputs = -1, .infer = never_inferred};

}  // namespace

const OpDef* composite_op(std::string_view type) { return type == "Einsum" ? &kEinsumComposite : nullptr; }

absl::StatusOr<CompositeBody> build_composite(const proto::NodeDef& node, absl::Span<const TensorSpec> inputs) {
  const auto& attrs = node.attr();
  const auto equation = attrs.find("equation");
  if (equation == attrs.end() || equation->second.value_case() != proto::AttrValue::kS)
    return absl::InvalidArgumentError("attr 'equation' (a string) is missing");
  if (inputs.empty() || inputs.size() > 2)
    return absl::UnimplementedError(absl::StrCat("an einsum of ", inputs.size(),
                                                 " operands (tapeflow's einsum takes one or two)"));
  if (const auto n = attrs.find("N"); n != attrs.end() && n->second.i() != static_cast<int64_t>(inputs.size()))
    return absl::InvalidArgumentError(
        absl::StrCat("attr 'N' is ", n->second.i(), " but the node has ", inputs.size(), " inputs"));
  if (const auto t = attrs.find("T"); t != attrs.end()) {
    const absl::StatusOr<DType> declared = from_proto_dtype(t->second.type());
    for (size_t k = 0; k < inputs.size(); ++k)
      if (!declared.ok() || *declared != inputs[k].dtype)
        return absl::InvalidArgumentError(absl::StrCat("attr 'T' says ", t->second.ShortDebugString(), " but input ", k,
                                                       " is ", dtype_name(inputs[k].dtype)));
  }
  CompositeBody body;
  body.inputs = static_cast<int>(inputs.size());
  try {
    auto scope = body.graph.as_default();
    std::vector<Tensor> operands;
    for (size_t k = 0; k < inputs.size(); ++k)
      operands.push_back(placeholder(inputs[k].dtype, inputs[k].shape, absl::StrCat("operand_", k)));
    const std::string& eq = equation->second.s();
    Tensor out = operands.size() == 1 ? einsum(eq, operands[0]) : einsum(eq, operands[0], operands[1]);
    if (out.symbolic().node < body.inputs) out = identity(out);  // the result must be a node of its own
    body.output = TensorRef{out.symbolic().node, out.symbolic().output};
  } catch (const Error& e) {
    return e.status();
  }
  return body;
}

}  // namespace tapeflow::graph_def_internal
