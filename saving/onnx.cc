// ONNX export (saving/onnx.h): the graph's GraphDef (its TensorFlow face, graph/graph_def.h)
// walked from the outputs, each node handed to its converter (saving/onnx_ops.cc).
//
// Note [ONNX model]
// The schema is ONNX's onnx.proto as Debian's libonnx-dev ships it, compiled by our
// protobuf_generate (CMakeLists.txt): the field numbers are ONNX's by construction, and nothing
// links libonnx. Its package is `onnx`, apart from our `tapeflow.proto`.
// The export works on to_graph_def's output rather than on tapeflow's nodes because that is the
// form with TensorFlow's op names and attrs, with the attrs TensorFlow passes as inputs (axes,
// shapes, permutations) already made Const nodes; converters then follow TensorFlow's op
// documentation, as tf2onnx does. Shapes and dtypes come from the tapeflow graph, by node name.
//
// Note [Initializers on use]
// Constants, frozen tensors and variable values are registered as pending initializers and
// written when a node (or a graph output) first uses them. Constants that only carry a
// TensorFlow attr (Sum's axes, Reshape's shape) become ONNX attrs or int64 initializers of
// their own, and a convolution filter is written once, transposed (Note [NHWC in ONNX]), so
// neither leaves an unused initializer behind.
#include "saving/onnx.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "graph/graph_def.h"
#include "graph/graph_ops.h"
#include "saving/file_io.h"
#include "saving/onnx_convert.h"
#include "saving/saved_model.h"

namespace tapeflow {

namespace {

using namespace onnx_internal;

[[noreturn]] void fail(absl::StatusCode code, absl::string_view message, std::source_location loc) {
  throw_status(absl::Status(code, absl::StrCat("[export_onnx] ", message)), loc);
}

// The GraphDef name of a graph tensor: "node" for output 0, "node:k" otherwise.
std::string tf_name(const Node& node, int index) {
  return index == 0 ? node.name : absl::StrCat(node.name, ":", index);
}

const Node& node_of(const Graph& graph, const Tensor& t, absl::string_view what, std::source_location loc) {
  if (!t.defined() || !t.is_symbolic())
    fail(absl::StatusCode::kInvalidArgument, absl::StrCat(what, " is not a graph tensor"), loc);
  const Operation op = producer(t, loc);
  if (!(op.graph() == graph))
    fail(absl::StatusCode::kInvalidArgument,
         absl::StrCat(what, " '", t.name(), "' belongs to ", op.graph().describe(), ", not ", graph.describe()), loc);
  return op.node();
}

int output_index(const Tensor& t) { return split_tensor_name(t.name()).second; }

void set_value_info(const std::string& name, const TensorSpec& spec, bool name_unknown_dims,
                    onnx::ValueInfoProto* out) {
  out->set_name(name);
  onnx::TypeProto::Tensor* type = out->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx_dtype(spec.dtype));
  onnx::TensorShapeProto* shape = type->mutable_shape();
  for (int i = 0; i < spec.shape.rank(); ++i) {
    onnx::TensorShapeProto::Dimension* d = shape->add_dim();
    if (spec.shape.dim(i) >= 0) d->set_dim_value(spec.shape.dim(i));
    else if (name_unknown_dims) d->set_dim_param(absl::StrCat(name, "_d", i));
  }
}

struct ExportRequest {
  std::string name;                                 // the ONNX graph's name
  std::vector<Tensor> inputs, outputs;
  std::vector<std::pair<Tensor, Tensor>> frozen;    // graph tensor -> value
  std::vector<Operation> side_effects;              // must be exported too (and cannot be)
};

std::string build_model(const Graph& graph, const ExportRequest& req, std::source_location loc) {
  const GraphState& state = *graph.state();
  // Inputs, outputs and frozen tensors by GraphDef tensor name.
  std::vector<std::string> input_names, output_names;
  absl::flat_hash_map<std::string, TensorSpec> input_specs;
  for (size_t i = 0; i < req.inputs.size(); ++i) {
    const Node& n = node_of(graph, req.inputs[i], absl::StrCat("input ", i), loc);
    if (n.op != &kPlaceholderOp)
      fail(absl::StatusCode::kInvalidArgument,
           absl::StrCat("input ", i, " '", req.inputs[i].name(), "' is a ", n.op->type, ", not a placeholder"), loc);
    input_names.push_back(n.name);
    input_specs[n.name] = n.outputs.at(0);
  }
  for (size_t i = 0; i < req.outputs.size(); ++i)
    output_names.push_back(tf_name(node_of(graph, req.outputs[i], absl::StrCat("output ", i), loc), output_index(req.outputs[i])));
  NodeContext::Lookups lookups;
  for (size_t i = 0; i < req.frozen.size(); ++i) {
    const auto& [t, value] = req.frozen[i];
    const std::string name = tf_name(node_of(graph, t, absl::StrCat("frozen tensor ", i), loc), output_index(t));
    if (!value.defined() || value.is_symbolic())
      fail(absl::StatusCode::kInvalidArgument, absl::StrCat("frozen tensor '", name, "' needs a concrete value"), loc);
    lookups.values[name] = value;
  }

  const GraphDef def = to_graph_def(graph, loc);
  absl::flat_hash_map<std::string, int> by_name;
  for (int i = 0; i < def.node_size(); ++i) by_name[def.node(i).name()] = i;

  // Which nodes the outputs (and side effects) need: data inputs only, stopping at inputs and
  // frozen tensors; a variable read needs its variable's value, not its VarHandleOp.
  const absl::flat_hash_set<std::string> inputs_set(input_names.begin(), input_names.end());
  std::vector<bool> needed(def.node_size(), false);
  std::vector<int> stack;
  auto need_tensor = [&](const std::string& tensor) {
    if (inputs_set.contains(tensor) || lookups.values.contains(tensor)) return;
    auto it = by_name.find(split_tensor_name(tensor).first);
    if (it != by_name.end() && !needed[it->second]) {
      needed[it->second] = true;
      stack.push_back(it->second);
    }
  };
  for (const std::string& o : output_names) need_tensor(o);
  for (const Operation& op : req.side_effects) need_tensor(op.name());
  while (!stack.empty()) {
    const proto::NodeDef& n = def.node(stack.back());
    stack.pop_back();
    if (n.op() == "ReadVariableOp") continue;
    for (const std::string& in : n.input())
      if (!in.starts_with("^")) need_tensor(in);
  }

  // Everything that cannot be exported, in one error.
  std::map<std::string, std::vector<std::string>> unsupported;
  std::vector<std::string> unfed;
  for (int i = 0; i < def.node_size(); ++i) {
    if (!needed[i]) continue;
    const proto::NodeDef& n = def.node(i);
    if (n.op() == "Placeholder") unfed.push_back(n.name());
    else if (n.op() != "Const" && n.op() != "ReadVariableOp" && find_converter(n.op()) == nullptr)
      unsupported[n.op()].push_back(n.name());
  }
  if (!unsupported.empty()) {
    std::vector<std::string> parts;
    for (const auto& [op, nodes] : unsupported)
      parts.push_back(absl::StrCat(op, " (node", nodes.size() > 1 ? "s " : " ", absl::StrJoin(nodes, ", "), ")"));
    fail(absl::StatusCode::kUnimplemented,
         absl::StrCat("op types without an ONNX form: ", absl::StrJoin(parts, "; ")), loc);
  }
  if (!unfed.empty())
    fail(absl::StatusCode::kInvalidArgument,
         absl::StrCat("placeholders that are neither inputs nor frozen: ", absl::StrJoin(unfed, ", ")), loc);

  // dtypes and shapes: every graph node's outputs, and the Consts the GraphDef added.
  for (const Node* n : state.snapshot())
    for (size_t k = 0; k < n->outputs.size(); ++k) lookups.specs[tf_name(*n, static_cast<int>(k))] = n->outputs[k];

  onnx::ModelProto model;
  model.set_ir_version(kOnnxIrVersion);
  model.set_producer_name("tapeflow");
  model.set_producer_version(tapeflow_version());
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(req.name);
  absl::flat_hash_set<std::string> taken(by_name.size());
  for (const auto& [name, index] : by_name) taken.insert(name);
  OnnxGraphBuilder builder(g, std::move(taken));

  for (const std::string& name : input_names) set_value_info(name, input_specs.at(name), true, g->add_input());
  for (const auto& [name, value] : lookups.values) builder.add_pending(name, value);

  // Outputs a converted node produces take their final names now; the others (an input, an
  // initializer, a tensor listed twice) get an Identity at the end.
  std::vector<std::string> onnx_outputs(output_names.size());
  absl::flat_hash_set<std::string> renamed;
  for (size_t i = 0; i < output_names.size(); ++i) {
    onnx_outputs[i] = builder.fresh(absl::StrCat("output_", i));
    const std::string& t = output_names[i];
    const int node = by_name.at(split_tensor_name(t).first);
    const std::string& op = def.node(node).op();
    if (needed[node] && op != "Const" && op != "ReadVariableOp" && !lookups.values.contains(t) && renamed.insert(t).second)
      builder.rename(t, onnx_outputs[i]);
  }

  absl::flat_hash_set<std::string> variables;  // VarHandleOp names already written
  for (int i = 0; i < def.node_size(); ++i) {
    if (!needed[i]) continue;
    const proto::NodeDef& n = def.node(i);
    try {
      if (n.op() == "Const") {
        const absl::StatusOr<Tensor> value = graph_def_internal::tensor_from_proto(n.attr().at("value").tensor());
        throw_if_error(value.status());
        lookups.values[n.name()] = *value;
        lookups.specs[n.name()] = TensorSpec{value->dtype(), value->shape()};
        builder.add_pending(n.name(), *value);
      } else if (n.op() == "ReadVariableOp") {
        // Frozen: the variable's current value, as an initializer named after the variable's node.
        const int id = state.find(n.name());
        if (id < 0 || !state.node(id).variable.has_value())
          fail(absl::StatusCode::kInternal, absl::StrCat("variable read '", n.name(), "' has no variable"), loc);
        const Variable& v = *state.node(id).variable;
        if (v.graph_info() != nullptr)
          fail(absl::StatusCode::kFailedPrecondition,
               absl::StrCat("variable '", v.name(), "' (read by node '", n.name(),
                            "') is a graph variable: its value lives in a Session; pass the value of its read in "
                            "`frozen`"),
               loc);
        const std::string& handle = n.input(0);
        const Tensor value = v.initial_value();
        lookups.values[n.name()] = value;
        if (variables.insert(handle).second) builder.add_pending(handle, value);
        builder.rename(n.name(), handle);
      } else {
        NodeContext ctx(n, builder, lookups);
        absl::Status s = (*find_converter(n.op()))(ctx);
        if (!s.ok()) throw_status(s, loc);
      }
    } catch (const Error& e) {
      if (e.message().starts_with("[export_onnx]")) throw;
      fail(e.status().code(), absl::StrCat("node '", n.name(), "' (", n.op(), "): ", e.message()), loc);
    }
  }

  for (size_t i = 0; i < output_names.size(); ++i) {
    const std::string& t = output_names[i];
    const std::string source = builder.use(t);
    if (source != onnx_outputs[i]) builder.add_node("Identity", builder.fresh(onnx_outputs[i]), {source}, {onnx_outputs[i]});
    set_value_info(onnx_outputs[i], lookups.specs.at(t), false, g->add_output());
  }

  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&coded);
  }
  return bytes;
}

ExportRequest request_of(const ConcreteFunction& f) {
  ExportRequest req;
  req.name = f.name();
  req.inputs = f.inputs();
  req.outputs = f.outputs();
  for (const ConcreteFunction::Capture& c : f.captures()) req.frozen.emplace_back(c.placeholder, c.value);
  req.side_effects = f.side_effects();
  return req;
}

ExportRequest request_of(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                         const std::vector<std::pair<Tensor, Tensor>>& frozen) {
  ExportRequest req;
  req.name = "graph";
  req.inputs = inputs;
  req.outputs = outputs;
  req.frozen = frozen;
  return req;
}

}  // namespace

std::string onnx_model_bytes(const ConcreteFunction& function, std::source_location loc) {
  return build_model(function.graph(), request_of(function), loc);
}

std::string onnx_model_bytes(const Graph& graph, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                             const std::vector<std::pair<Tensor, Tensor>>& frozen, std::source_location loc) {
  return build_model(graph, request_of(inputs, outputs, frozen), loc);
}

void export_onnx(const ConcreteFunction& function, const std::string& path, std::source_location loc) {
  write_file_atomically(path, onnx_model_bytes(function, loc));
}

void export_onnx(const Graph& graph, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                 const std::string& path, const std::vector<std::pair<Tensor, Tensor>>& frozen,
                 std::source_location loc) {
  write_file_atomically(path, onnx_model_bytes(graph, inputs, outputs, frozen, loc));
}

}  // namespace tapeflow
