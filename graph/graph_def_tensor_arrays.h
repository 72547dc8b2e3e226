// TensorFlow 1's TensorArrays in a GraphDef (tf.TensorArray, dynamic_rnn), rewritten before
// import into tapeflow's buffer ops (Note [TensorArrays as buffers], eager/ops/tensor_array.cc).
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "graph/graph_def.h"

namespace tapeflow::graph_def_internal {

// Note [TensorArrays in a GraphDef]
// A TensorArrayV3 node gives a handle (output 0) and a flow (output 1, a float scalar); its
// WriteV3 / ScatterV3 take (handle, ..., flow) and give the next flow; ReadV3 / GatherV3 /
// SizeV3 read (handle, ..., flow). The rewrite makes the flow the array itself:
// - TensorArrayV3(size) becomes TensorArrayBuffer(size) under its name (dtype and element_shape
//   kept; an element shape of unknown rank is refused naming the node), and what read its flow
//   ("ta:1") reads the buffer ("ta");
// - the writes of a dynamic_size array get attr "grow" (written "_grow"): one past the end grows
//   the buffer;
// - WriteV3(h, i, v, flow) becomes TensorArrayBufferWrite(flow, i, v), ScatterV3(h, idx, v, flow)
//   TensorArrayBufferScatter(flow, idx, v), ReadV3(h, i, flow) TensorArrayBufferRead(flow, i),
//   GatherV3(h, idx, flow) TensorArrayBufferGather(flow, idx), SizeV3(h, flow)
//   TensorArrayBufferSize(flow), each under its name; CloseV3 a NoOp;
// - the nodes a flow passes through (Enter, Exit, Merge, Switch, NextIteration, Identity) take
//   the array's dtype as T and lose their `_output_shapes` (the flow's scalar), so a while loop
//   carries the buffer as a loop variable (Note [TF1 while loops] then rewrites the loop);
// - the nodes a handle passes through are removed, with the control inputs naming them.
// A handle or a flow read by anything else is refused naming the reader, as are an op that reads
// one array's handle and another's flow, and a node joining two arrays' flows. Other TensorArray ops
// (ConcatV3, SplitV3, GradV3) stay and are named by the import as op types tapeflow lacks.
// Returns nullopt when `def` has no TensorArrayV3.
absl::StatusOr<std::optional<GraphDef>> rewrite_tensor_arrays(const GraphDef& def);

}  // namespace tapeflow::graph_def_internal
