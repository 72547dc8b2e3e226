// Internals of the ONNX export (saving/onnx.h), shared by the driver (onnx.cc: inputs,
// outputs, initializers, the walk over the graph) and the op converters (onnx_ops.cc: one
// function per TensorFlow op type, reading the node's TensorFlow face from the GraphDef).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eager/op_def.h"
#include "eager/tensor.h"
#include "proto/graph.pb.h"
#include "proto/onnx/onnx.pb.h"

namespace tapeflow::onnx_internal {

// ONNX's TensorProto.DataType for a tapeflow dtype.
onnx::TensorProto::DataType onnx_dtype(DType dtype);
// A concrete tensor as an ONNX TensorProto (raw_data, little-endian) named `name`.
void tensor_to_onnx(const Tensor& value, const std::string& name, onnx::TensorProto* out);

// Builds the ONNX graph: unique names, nodes, initializers, and the mapping from TensorFlow
// tensor names ("node", "node:1") to ONNX value names.
class OnnxGraphBuilder {
 public:
  // `taken`: names the builder must not hand out (every TensorFlow node name).
  OnnxGraphBuilder(onnx::GraphProto* graph, absl::flat_hash_set<std::string> taken)
      : graph_(graph), used_(std::move(taken)) {}

  // "base", else "base_1", "base_2", ...: a name no value or node has yet.
  std::string fresh(absl::string_view base);
  // The ONNX value of a TensorFlow tensor: the tensor's name unless renamed. A pending
  // initializer of that name is added now (Note [Initializers on use] in onnx.cc).
  std::string use(const std::string& tf_tensor);
  // The name the tensor's value gets, for a converter's outputs.
  std::string value(const std::string& tf_tensor) const;
  void rename(const std::string& tf_tensor, std::string onnx_value) { renamed_[tf_tensor] = std::move(onnx_value); }
  // An initializer added only once some node (or output) uses it.
  void add_pending(const std::string& name, Tensor value) { pending_[name] = std::move(value); }

  onnx::NodeProto* add_node(absl::string_view op_type, const std::string& name, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs);
  // Adds an initializer under a fresh name based on `base`; returns that name.
  std::string add_initializer(absl::string_view base, const Tensor& value);
  // Adds an initializer under exactly `name` (already unique: a TensorFlow node's name).
  void add_initializer_named(const std::string& name, const Tensor& value);
  std::string add_int64s(absl::string_view base, const std::vector<int64_t>& values);

 private:
  onnx::GraphProto* graph_;
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_map<std::string, std::string> renamed_;
  absl::flat_hash_map<std::string, Tensor> pending_;
};

// What a converter sees of one TensorFlow node.
class NodeContext {
 public:
  struct Lookups {
    // Specs (dtype, shape) of TensorFlow tensors, by tensor name.
    absl::flat_hash_map<std::string, TensorSpec> specs;
    // Known values: Const nodes' outputs, frozen tensors, variable reads; by tensor name.
    absl::flat_hash_map<std::string, Tensor> values;
  };
  NodeContext(const proto::NodeDef& def, OnnxGraphBuilder& builder, const Lookups& lookups);

  const proto::NodeDef& def() const { return def_; }
  const std::string& name() const { return def_.name(); }
  OnnxGraphBuilder& builder() { return builder_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // The ONNX value of data input i / output k.
  std::string in(int i) { return builder_.use(inputs_.at(i)); }
  std::string out(int k = 0) const;
  // dtype and shape of data input i / output k (InternalError when unknown).
  absl::StatusOr<TensorSpec> in_spec(int i) const;
  absl::StatusOr<TensorSpec> out_spec(int k = 0) const;
  // Input i's value when a Const node produces it (TensorFlow's constant inputs: axes, shapes).
  absl::StatusOr<std::vector<int64_t>> const_ints(int i) const;
  // The value when input i is a constant (a Const node), else null.
  const Tensor* const_value(int i) const;
  // TensorFlow attrs.
  absl::StatusOr<const proto::AttrValue*> attr(absl::string_view name) const;
  absl::StatusOr<std::vector<int64_t>> attr_ints(absl::string_view name) const;

  // Adds a node named after this one (the first: the node's own name).
  onnx::NodeProto* emit(absl::string_view op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  // A fresh value name "<node>/<what>".
  std::string temp(absl::string_view what);

 private:
  const proto::NodeDef& def_;
  OnnxGraphBuilder& builder_;
  const Lookups& lookups_;
  std::vector<std::string> inputs_;  // data inputs' TensorFlow tensor names
  int emitted_ = 0;
};

using Converter = std::function<absl::Status(NodeContext& node)>;
using ConverterTable = absl::flat_hash_map<std::string, Converter>;
// The converter of a TensorFlow op type; null when ONNX export does not support it.
const Converter* find_converter(absl::string_view tf_op);
// The converters of onnx_ops_array.cc (indexing, scatter, sorting, creation, scans, padding),
// added to the table onnx_ops.cc builds.
void add_array_converters(ConverterTable& table);
// The converters of onnx_ops_image.cc (convolutions, pools, normalization, resizing; NHWC).
void add_image_converters(ConverterTable& table);

// ---- helpers for converters ----
void set_ints(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& values);
void set_int(onnx::NodeProto* n, const char* name, int64_t value);
void set_float(onnx::NodeProto* n, const char* name, float value);
void set_string(onnx::NodeProto* n, const char* name, const std::string& value);
// A scalar of `dtype` holding `value`.
Tensor scalar_of(DType dtype, double value);
// A scalar initializer "<node>/<what>" of `dtype`.
std::string scalar_initializer(NodeContext& n, absl::string_view what, DType dtype, double value);
// Input i as int64 (a Cast unless it already is): ONNX's index inputs (GatherND, ScatterND).
absl::StatusOr<std::string> as_int64(NodeContext& n, int i);

// "name:1" -> {"name", 1}; "name" -> {"name", 0}.
std::pair<std::string, int> split_tensor_name(absl::string_view tensor);

}  // namespace tapeflow::onnx_internal
