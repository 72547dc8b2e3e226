// ONNX export: a traced function (or a graph) as an ONNX model file, for runtimes that read
// ONNX (ONNX Runtime, TensorRT, OpenVINO, ...).
//
//   auto predict = function([&](const Tensor& x) { return model(x); });
//   ConcreteFunction& cf = predict.get_concrete_function({{DType::kFloat32, {-1, 28, 28, 1}}});
//   export_onnx(cf, "cnn.onnx");
//
// The model (Note [ONNX model]):
// - opset 17 of the default domain, IR version 8; the schema is ONNX's own onnx.proto (Debian's
//   libonnx-dev), compiled into the library.
// - graph inputs: the function's argument placeholders, under their node names ("args_0", ...),
//   with their dtypes and shapes (an unknown dimension is a dim_param "<input>_d<axis>").
// - graph outputs: "output_0", "output_1", ... (as the saved model's signatures name them).
// - frozen: variables' current values, captured tensors and constants become initializers
//   (a variable's under its own node name), so the file is the whole model.
// - only what the outputs need is exported (variable initializers and training nodes are left
//   out); a function with side effects (variable updates, print) cannot be exported.
// TensorFlow's NHWC convolutions and pools become ONNX's NCHW ones between Transposes, the
// filter initializer transposed to OIHW.
//
// Errors are typed and start with "[export_onnx]": UnimplementedError listing, in one message,
// every op type without an ONNX form and its nodes; InvalidArgumentError for a placeholder that
// is neither an input nor frozen, or a tensor of another graph; FailedPreconditionError for a
// graph variable (its value lives in a Session: freeze its read with `frozen`); file errors as
// write_file_atomically throws them (the file is written atomically: Note [Atomic write]).
#pragma once

#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "eager/tensor.h"
#include "graph/function.h"
#include "graph/graph.h"

namespace tapeflow {

// The ONNX opset and IR version export_onnx writes.
inline constexpr int kOnnxOpset = 17;
inline constexpr int kOnnxIrVersion = 8;

// Writes `function` as an ONNX model to `path` (atomically).
void export_onnx(const ConcreteFunction& function, const std::string& path,
                 std::source_location loc = std::source_location::current());

// The same for a graph: `inputs` (placeholders) become the graph inputs, `outputs` the graph
// outputs; `frozen` gives values for other tensors (placeholders such as captured tensors, or
// a graph variable's read), which become initializers.
void export_onnx(const Graph& graph, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                 const std::string& path, const std::vector<std::pair<Tensor, Tensor>>& frozen = {},
                 std::source_location loc = std::source_location::current());

// The serialized ModelProto, for callers that write it elsewhere.
std::string onnx_model_bytes(const ConcreteFunction& function,
                             std::source_location loc = std::source_location::current());
std::string onnx_model_bytes(const Graph& graph, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                             const std::vector<std::pair<Tensor, Tensor>>& frozen = {},
                             std::source_location loc = std::source_location::current());

}  // namespace tapeflow
