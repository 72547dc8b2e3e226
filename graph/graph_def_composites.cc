// Composites read from a GraphDef: Note [Composites in a GraphDef] (graph/graph_def_composites.h).
#include "graph/graph_def_composites.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/detection.h"
#include "eager/ops/einsum.h"
#include "eager/ops/space_batch.h"
#include "graph/graph_context.h"
#include "graph/graph_def.h"
#include "graph/graph_ops.h"

namespace tapeflow::graph_def_internal {

namespace {

absl::StatusOr<OutputSpecs> never_inferred(const InferenceContext& ctx) {
  return absl::InternalError(absl::StrCat("[", ctx.op, "] is read as a composite, not run as a node"));
}

#define TF_COMPOSITE(var, type_name, api) \
  const OpDef var{.type = type_name, .api_name = api, .num_inputs = -1, .infer = never_inferred};
TF_COMPOSITE(kEinsum, "Einsum", "einsum")
TF_COMPOSITE(kSpaceToBatch, "SpaceToBatch", "space_to_batch")
TF_COMPOSITE(kBatchToSpace, "BatchToSpace", "batch_to_space")
TF_COMPOSITE(kNmsV1, "NonMaxSuppression", "non_max_suppression")
TF_COMPOSITE(kNmsV2, "NonMaxSuppressionV2", "non_max_suppression")
TF_COMPOSITE(kNmsV4, "NonMaxSuppressionV4", "non_max_suppression_padded")
#undef TF_COMPOSITE

// What a composite reads from its NodeDef and its inputs; each throws InvalidArgumentError or
// UnimplementedError, which build_composite returns as the node's error.
struct Reader {
  const proto::NodeDef& node;
  absl::Span<const std::optional<Tensor>> constants;

  const proto::AttrValue* attr(const char* name) const {
    const auto it = node.attr().find(name);
    return it == node.attr().end() ? nullptr : &it->second;
  }
  int64_t int_attr(const char* name) const {
    const proto::AttrValue* a = attr(name);
    if (a == nullptr || a->value_case() != proto::AttrValue::kI)
      throw InvalidArgumentError(absl::StrCat("attr '", name, "' (an int) is missing"));
    return a->i();
  }
  bool bool_attr(const char* name, bool fallback) const {
    const proto::AttrValue* a = attr(name);
    return a == nullptr ? fallback : a->b();
  }
  // Input k's value as integers (any integer dtype), which must be known. (Read here, not
  // through ops: ops would add nodes to the scratch graph.)
  std::vector<int64_t> ints(size_t k, const char* what) const {
    if (k >= constants.size() || !constants[k] || !is_integer(constants[k]->dtype()))
      throw UnimplementedError(absl::StrCat("input ", k, " ('", what, "') must be an integer constant"));
    return values_as<int64_t>(*constants[k]);
  }
  double float_attr(const char* name, double fallback) const {
    const proto::AttrValue* a = attr(name);
    if (a != nullptr && a->value_case() != proto::AttrValue::kF)
      throw InvalidArgumentError(absl::StrCat("attr '", name, "' must be a float, not ", a->ShortDebugString()));
    return a == nullptr ? fallback : a->f();
  }
  double scalar(size_t k, const char* what) const {
    if (k >= constants.size() || !constants[k] || constants[k]->num_elements() != 1 ||
        constants[k]->dtype() == DType::kBool)
      throw UnimplementedError(absl::StrCat("input ", k, " ('", what, "') must be a scalar constant"));
    return values_as<double>(*constants[k]).at(0);
  }
  template <typename To>
  static std::vector<To> values_as(const Tensor& t) {
    return dispatch_dtype(t.dtype(), [&]<typename T>() {
      const std::vector<T> v = t.to_vector<T>();
      return std::vector<To>(v.begin(), v.end());
    });
  }
};

// TensorFlow 1's 4-D forms: two spatial dims, a [2, 2] paddings or crops.
std::vector<std::pair<int64_t, int64_t>> square_margins(const std::vector<int64_t>& flat, const char* what) {
  if (flat.size() != 4)
    throw InvalidArgumentError(absl::StrCat("'", what, "' must be a [2, 2] constant, got ", flat.size(), " values"));
  return margin_pairs(flat);
}

// The node's outputs from its operands (placeholders in the scratch graph).
std::vector<Tensor> compose(const OpDef* op, const Reader& r, const std::vector<Tensor>& in) {
  auto need = [&](size_t lo, size_t hi) {
    if (in.size() < lo || in.size() > hi)
      throw InvalidArgumentError(absl::StrCat("expects ", lo == hi ? absl::StrCat(lo) : absl::StrCat(lo, " to ", hi),
                                              " inputs; got ", in.size()));
  };
  if (op == &kEinsum) {
    if (in.empty()) throw InvalidArgumentError("an einsum needs at least one operand");
    const proto::AttrValue* eq = r.attr("equation");
    if (eq == nullptr || eq->value_case() != proto::AttrValue::kS)
      throw InvalidArgumentError("attr 'equation' (a string) is missing");
    if (const proto::AttrValue* n = r.attr("N"); n != nullptr && n->i() != static_cast<int64_t>(in.size()))
      throw InvalidArgumentError(absl::StrCat("attr 'N' is ", n->i(), " but the node has ", in.size(), " inputs"));
    if (const proto::AttrValue* t = r.attr("T")) {  // every operand's dtype
      const absl::StatusOr<DType> declared = from_proto_dtype(t->type());
      for (size_t k = 0; k < in.size(); ++k)
        if (!declared.ok() || *declared != in[k].dtype())
          throw InvalidArgumentError(absl::StrCat("attr 'T' says ", t->ShortDebugString(), " but input ", k, " is ",
                                                  dtype_name(in[k].dtype())));
    }
    return {einsum(eq->s(), in)};
  }
  if (op == &kSpaceToBatch || op == &kBatchToSpace) {
    need(2, 2);
    const int64_t bs = r.int_attr("block_size");
    const bool to_batch = op == &kSpaceToBatch;
    const char* what = to_batch ? "paddings" : "crops";
    const auto margins = square_margins(r.ints(1, what), what);
    return {to_batch ? space_to_batch_nd(in[0], {bs, bs}, margins) : batch_to_space_nd(in[0], {bs, bs}, margins)};
  }
  // NonMaxSuppression (V1: iou_threshold an attr, default 0.5) / V2 / V4 as V3 (V5, with its
  // scores and soft NMS, is an op of its own).
  const bool v1 = op == &kNmsV1, v2 = op == &kNmsV2 || v1;
  const size_t inputs = v1 ? 3 : v2 ? 4 : 5;
  need(inputs, inputs);
  const std::vector<int64_t> limit = r.ints(2, "max_output_size");
  if (limit.size() != 1) throw InvalidArgumentError("'max_output_size' must be a scalar");
  const double iou = v1 ? r.float_attr("iou_threshold", 0.5) : r.scalar(3, "iou_threshold");
  const double floor = v2 ? -std::numeric_limits<double>::infinity() : r.scalar(4, "score_threshold");
  const Tensor keep = non_max_suppression(in[0], in[1], limit[0], static_cast<float>(iou), static_cast<float>(floor));
  if (v2) return {keep};
  const Tensor valid = size(keep, DType::kInt32);
  Tensor indices = keep;
  if (r.bool_attr("pad_to_max_output_size", false))  // zeros after the kept ones, to the limit (when run)
    indices = slice(pad(keep, {{0, limit[0]}}), {0}, {limit[0]});
  return {indices, valid};
}

}  // namespace

const OpDef* composite_op(std::string_view type) {
  for (const OpDef* op : {&kEinsum, &kSpaceToBatch, &kBatchToSpace, &kNmsV1, &kNmsV2, &kNmsV4})
    if (type == op->type) return op;
  return nullptr;
}

absl::StatusOr<CompositeBody> build_composite(const proto::NodeDef& node, absl::Span<const TensorSpec> inputs,
                                              absl::Span<const std::optional<Tensor>> constants) {
  const OpDef* op = composite_op(node.op());
  if (op == nullptr) return absl::InternalError(absl::StrCat("'", node.op(), "' is not a composite"));
  CompositeBody body;
  body.inputs = static_cast<int>(inputs.size());
  try {
    auto scope = body.graph.as_default();
    std::vector<Tensor> operands;
    for (size_t k = 0; k < inputs.size(); ++k)
      operands.push_back(placeholder(inputs[k].dtype, inputs[k].shape, absl::StrCat("operand_", k)));
    std::vector<Tensor> outs = compose(op, Reader{node, constants}, operands);
    // One node holds the NodeDef's outputs: an IdentityN for several, and a node of its own for
    // a result that is an operand.
    Tensor out = outs.size() > 1 ? identity_n(outs)[0] : outs[0];
    if (out.symbolic().node < body.inputs) out = identity(out);
    body.output = TensorRef{out.symbolic().node, 0};
  } catch (const Error& e) {
    return e.status();
  }
  return body;
}

}  // namespace tapeflow::graph_def_internal
