// TensorFlow op types that tapeflow computes as a composite of its primitives, read from a
// GraphDef (Note [Composites in a GraphDef]).
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"

namespace tapeflow::graph_def_internal {

// Note [Composites in a GraphDef]: some TensorFlow ops are composites in tapeflow:
// - Einsum (TensorFlow 2; Keras' EinsumDense and MultiHeadAttention): tapeflow's einsum
//   (Note [einsum is a composite], eager/ops/einsum.h).
// - TensorFlow 1's SpaceToBatch / BatchToSpace (4-D, attr block_size): the ND ops with
//   block_shape {block_size, block_size}.
// - NonMaxSuppression (TensorFlow's first, its iou_threshold an attr) and V2 (no score
//   threshold) and V4 (and valid_outputs, optionally padded to max_output_size):
//   NonMaxSuppressionV3 and a few moves. (V5 is a tapeflow op: its soft NMS rescores boxes.)
// The import builds the composite for the node in a scratch graph over placeholders of its
// inputs' specs (and the values of those that are constants, which some composites need) and
// splices that graph's nodes into the plan: the last one under the NodeDef's name (an IdentityN
// of the results for a node of several outputs), so "attn/Einsum:0" names the result, the
// others under "<name>/<their name>" (giving way to GraphDef nodes of those names). The imported
// graph so runs, differentiates and is written back as the primitives; what a composite refuses
// is the node's error.
//
// composite_op: the OpDef that marks such a type while the import plans, null for other types.
// It is never run (its shape function refuses).
const OpDef* composite_op(std::string_view type);

struct CompositeBody {
  Graph graph;          // its first `inputs` nodes are the placeholders that stand for the inputs
  int inputs = 0;
  TensorRef output;     // the node whose outputs are the NodeDef's
};
// The composite for NodeDef `node` (of a type composite_op marks) over inputs of these specs;
// constants[k] is input k's value where the import knows it (a Const, or folded).
absl::StatusOr<CompositeBody> build_composite(const proto::NodeDef& node, absl::Span<const TensorSpec> inputs,
                                              absl::Span<const std::optional<Tensor>> constants);

}  // namespace tapeflow::graph_def_internal
