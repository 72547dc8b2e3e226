// TensorFlow op types that tapeflow computes as a composite of its primitives, read from a
// GraphDef (Note [Composites in a GraphDef]).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"

namespace tapeflow::graph_def_internal {

// Note [Composites in a GraphDef]: TensorFlow 2's Einsum (Keras' EinsumDense and
// MultiHeadAttention write it) is an op in TensorFlow and a composite in tapeflow (Note [einsum
// is a composite], eager/ops/einsum.h). The import builds the composite for the node in a
// scratch graph over placeholders of its inputs' specs and splices that graph's nodes into the
// plan: the last one under the NodeDef's name (so "attn/Einsum:0" names the result), the
// others under "<name>/<their name>". The imported graph so runs, differentiates and is written
// back as the primitives; an equation the composite refuses is the node's error.
//
// composite_op: the OpDef that marks such a type while the import plans, null for other types.
// It is never run (its shape function refuses).
const OpDef* composite_op(std::string_view type);

struct CompositeBody {
  Graph graph;          // its first `inputs` nodes are the placeholders that stand for the inputs
  int inputs = 0;
  TensorRef output;     // the node's one output
};
// The composite for NodeDef `node` (of a type composite_op marks) over inputs of these specs.
absl::StatusOr<CompositeBody> build_composite(const proto::NodeDef& node, absl::Span<const TensorSpec> inputs);

}  // namespace tapeflow::graph_def_internal
