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

// Note [TensorLists in a GraphDef]
// TensorFlow 2's TensorArrays are TensorLists: DT_VARIANT tensors made by TensorListReserve,
// TensorListFromTensor or EmptyTensorList and passed through While loops (Keras' RNN layers).
// They become the same buffers (graph/graph_def_tensor_lists.cc):
// - TensorListReserve(element_shape, n) is TensorArrayBuffer(n) (the element_shape Const gives
//   the element's dims; a shape of unknown rank is refused naming the node), EmptyTensorList a
//   buffer of size 0, TensorListFromTensor(t) and TensorListStack(list) Identities (a buffer is
//   its stack), SetItem a Write (one that may resize grows), PushBack a Write at the list's
//   length that grows, GetItem a Read, Gather a Gather, Length a Size;
// - an Identity of a list takes the element dtype as T, and a While's T entry for a list
//   loop variable too, its output_shapes entry becoming unknown (the buffer's rank is kept);
// - inside the While's functions, an argument or result of type DT_VARIANT takes the dtype the
//   node passes (graph_def_functional.cc), and the same rewrite runs on the function's body.
// Returns nullopt when `def` holds no TensorList op and no DT_VARIANT attr.
absl::StatusOr<std::optional<GraphDef>> rewrite_tensor_lists(const GraphDef& def);

// Whether one of the import's rewrites reads op type `type`: the two above, and TensorFlow 1's
// control flow (graph_def_control_flow.h). When a rewrite refuses a GraphDef that also has op
// types tapeflow lacks and no rewrite reads, the import reports those (its error lists every
// unknown op type) rather than the rewrite's refusal.
bool rewritten_op_type(std::string_view type);
// The TensorArray op types rewrite_tensor_arrays reads (TensorArrayV3 and the ops it maps).
bool is_tensor_array_type(std::string_view type);

}  // namespace tapeflow::graph_def_internal
