// GraphDef: TensorFlow's serialized graph (proto/graph.proto, TensorFlow's field numbers), read
// and written by pure functions, plus a thin file edge.
//
//   GraphDef def = to_graph_def(g);                        // tf.Graph.as_graph_def()
//   write_graph_def(def, "/tmp/model.pbtxt");             // tf.io.write_graph(..., as_text=True)
//
//   Graph serving;
//   auto scope = serving.as_default();
//   Tensor images = placeholder(DType::kFloat32, {-1, 784}, "images");
//   auto out = import_graph_def(read_graph_def("/tmp/model.pb"),
//                               {{"x:0", images}}, {"logits:0", "train"});
//   std::get<Tensor>(out[0]);                              // "import/logits:0"
//
// Nodes carry TensorFlow's op type names, attr names and attr types; how each tapeflow op maps
// onto its TensorFlow node is stated on the op's own OpDef (OpDef::tf_form, Note [GraphDef
// form]). Everything here is thread-safe in the way Graph is (an import adds its nodes one by one
// once it has checked them all).
//
// Note [GraphDef form]
// OpDef::tf_form is a space-separated list of items:
//   name:kind[=default]          tapeflow attr `name`, TensorFlow attr of the same name; the
//   name>tf_name:kind[=default]  default fills a TensorFlow node that leaves it out (TF does).
//       kinds: int float bool type ints string shape, and hw: {h, w} written as {1, h, w, 1}.
//   name:kind=default?           the same, not written when its value is the default: an attr a
//                                later TensorFlow added (older ones refuse attrs they lack).
//   name@kind[#pos]              tapeflow attr that TensorFlow passes as a constant input, at
//       TF input position pos (default: after the tensor inputs, in item order). kinds: int
//       (int32 scalar), ints (int32 vector), pairs (int32 [n, 2]), shape (int32 vector from a
//       Shape), val (a double as a scalar of output 0's dtype), num (the same, but int64 or bool
//       when the dtype is: Fill's value, Range's bounds), idx (an integer vector in the dtype
//       of the node's Tindices input, int32 or int64: ScatterNd's shape). Import reads them
//       from Const nodes.
//   X=in<k> | X=out<k>           TensorFlow type attr X: the dtype of tensor input / output k
//                                (checked on import: a mismatch is an InvalidArgumentError).
//   X=count                      X is the number of tensor inputs (ConcatV2's N).
//   X=index                      the dtype of an integer constant input (Tidx, Tshape, Tperm,
//                                ...): written int32; int32 or int64 on import, as TensorFlow
//                                allows (the import reads the constant in either).
//   X=ins[k]                     TensorFlow list(type) attr X: the dtypes of the tensor inputs
//                                from k on (default 0; IdentityN's T, Print's U=ins1; checked
//                                on import).
//   X=literal                    fixed TensorFlow attr (a dtype name, an integer, true/false,
//                                [1,2], else a string); written, and checked when present.
//   -name                        tapeflow attr not written: import derives it (Const's shape).
// A null tf_form means "T=in0" for an op with inputs and nothing otherwise; "" means no attrs.
// Tapeflow attrs the form does not list are written with a leading "_" (TensorFlow skips such
// attrs when it validates a node) and read back, so tapeflow-only state round-trips. TensorFlow
// attrs the form does not list are ignored on import (TF's defaults such as use_cudnn_on_gpu).
//
// Note [Variables in a GraphDef]
// Variables are written in TensorFlow's resource form, as tapeflow holds them: "v" is a
// VarHandleOp (dtype, shape, shared_name "v"), reads are ReadVariableOp(v), updates are
// AssignVariableOp / AssignAddVariableOp / AssignSubVariableOp(v, value), and "v/Assign" is the
// initializer; whether v is trainable travels as "_trainable" (TensorFlow keeps that in
// collections, which a GraphDef does not carry; absent means trainable). In tapeflow the handle is a control input of the read and update nodes; in the
// GraphDef it is their input 0. Import rebuilds one graph Variable per VarHandleOp, with its
// initializer "v/Assign" (a VarHandleOp without one is a variable nobody initialises: it is
// bound, but left out of the collections, and a run that reads it fails as uninitialised).
// The ref form of TensorFlow 1.x (VariableV2 / Assign / Identity) is not read: freeze such
// graphs first (convert_variables_to_constants) or save them with resource variables.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/numbers.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"

namespace tapeflow {

using GraphDef = proto::GraphDef;

// The graph's nodes in creation (topological) order, TensorFlow's versions set (producer 27,
// min_consumer 12, what TensorFlow 1.15 writes). Throws UnimplementedError for a node TensorFlow's
// format cannot carry (a call of a traced function). The library holds the functions that
// imported If, While and Case nodes run.
GraphDef to_graph_def(const Graph& graph, std::source_location loc = std::source_location::current());

// What import_graph_def hands back for each return element.
using ImportedElement = std::variant<Tensor, Operation>;

// Adds graph_def's nodes to `graph` under the name scope `name` ("import", made unique as a
// name scope: "import_1" the second time; "" imports under the nodes' own names), as
// tf.import_graph_def does:
// - input_map replaces tensors of graph_def ("x:0" or "x") by tensors of `graph` (a concrete
//   tensor becomes a Const); the replaced node is still imported, its consumers read the map.
// - return_elements: "node:index" names a tensor, "node" an operation, both as named in
//   graph_def; answered in that order.
// - a node whose name is taken in `graph` gets the next free "_1", "_2" name; requested devices
//   are kept as written.
// - control inputs "^x" become control dependencies.
// - a call of a function of graph_def's library (TensorFlow 2's PartitionedCall and
//   StatefulPartitionedCall, or the function's name as op type) is inlined: the body's nodes
//   come under the caller's name ("call/add"), and the caller stays as an IdentityN of the
//   results, so "call:0" names the first.
// - TensorFlow 2's If, While and Case (and their Stateless forms) run their functions, imported
//   as bodies of their own (graph/functional_ops.h).
// - a Placeholder of unknown rank (tf.placeholder without a shape; or no shape attr) must be
//   replaced through input_map, and then takes its replacement's shape: tapeflow's shapes always
//   have a rank. Without an entry it is an UnimplementedError that says so.
// Every problem (unknown op types, listed together; a missing or dangling input; a wrong input
// count; an attr of the wrong type; a cycle; mismatched dtypes; input_map keys that graph_def
// lacks) is a typed Error naming the node, thrown before `graph` changes: the graph is only
// written once the whole import has been checked.
std::vector<ImportedElement> import_graph_def(const Graph& graph, const GraphDef& graph_def,
                                              const std::map<std::string, Tensor>& input_map = {},
                                              const std::vector<std::string>& return_elements = {},
                                              std::string_view name = "import",
                                              std::source_location loc = std::source_location::current());
// The same into the default graph (get_default_graph()).
std::vector<ImportedElement> import_graph_def(const GraphDef& graph_def,
                                              const std::map<std::string, Tensor>& input_map = {},
                                              const std::vector<std::string>& return_elements = {},
                                              std::string_view name = "import",
                                              std::source_location loc = std::source_location::current());
// A new graph holding graph_def's nodes under their own names.
Graph graph_from_graph_def(const GraphDef& graph_def, std::source_location loc = std::source_location::current());

// TensorFlow's text format (as TensorFlow prints it) and binary wire format. The readers throw
// InvalidArgumentError with protobuf's line and column for malformed input.
std::string graph_def_to_text(const GraphDef& graph_def);
GraphDef graph_def_from_text(std::string_view text, std::source_location loc = std::source_location::current());
std::string graph_def_to_binary(const GraphDef& graph_def);
GraphDef graph_def_from_binary(std::string_view bytes, std::source_location loc = std::source_location::current());

// The file edge: text for a path ending in ".pbtxt" or ".pbtext", binary otherwise. Not atomic.
// NotFoundError / PermissionDeniedError-style failures surface as UnavailableError naming the path.
void write_graph_def(const GraphDef& graph_def, const std::string& path,
                     std::source_location loc = std::source_location::current());
// Reads at most protobuf's 2 GiB message limit: a larger file, or a stream that does not end
// (/dev/zero), is a ResourceExhaustedError naming the file (Note [Bounded read]).
GraphDef read_graph_def(const std::string& path, std::source_location loc = std::source_location::current());

// The same two, the GraphDef parsed into one protobuf arena that the pointer owns: its nodes and
// strings lie in file order in a few large blocks (2 MiB pages where the kernel gives them),
// not one heap block each. A process's first parse of a 100k-node GraphDef took 21-35 ms against
// 50-73 (far fewer page faults); parsed again and again in one process both cost about the same
// (Note [GraphDefs in an arena], graph/graph_def_arena.cc). load_model and the tapeflow tool
// read their graphs this way.
//   Graph g = graph_from_graph_def(*read_graph_def_in_arena("frozen.pb"));
std::shared_ptr<const GraphDef> graph_def_from_binary_in_arena(
    std::string_view bytes, std::source_location loc = std::source_location::current());
std::shared_ptr<const GraphDef> read_graph_def_in_arena(const std::string& path,
                                                        std::source_location loc = std::source_location::current());

// ---- shared by graph_def.cc (export, formats) and graph_def_import.cc ----
namespace graph_def_internal {

// A NodeDef input's tensor name: "x" -> ("x", 0), "x:2" -> ("x", 2); views into `s`. (The import
// calls it through an out-of-line wrapper: inlined into its per-input loops it cost 7% per node.)
inline std::pair<std::string_view, int> split_tensor_name(std::string_view s) {
  const size_t colon = s.rfind(':');
  int index = 0;
  if (colon != std::string_view::npos &&
      absl::SimpleAtoi(absl::string_view(s.data() + colon + 1, s.size() - colon - 1), &index) && index >= 0)
    return {s.substr(0, colon), index};
  return {s, 0};
}

// graph_def with every call of a function of its library (by the function's name as op type, or
// PartitionedCall / StatefulPartitionedCall) replaced by the function's body, the caller's name
// kept as an IdentityN of its results (Note [Inlined function calls], graph_def_functions.cc);
// nullopt when nothing calls a library function. A typed error for a call it cannot inline.
// `library`: the functions (graph_def's own, or those of the GraphDef a function body came from);
// `index`: its functions by name, when the caller has them (else they are indexed here).
using FunctionIndex = absl::flat_hash_map<std::string_view, const proto::FunctionDef*>;
absl::StatusOr<std::optional<GraphDef>> inline_function_calls(const GraphDef& graph_def,
                                                              const proto::FunctionDefLibrary& library,
                                                              const FunctionIndex* index = nullptr);

// read_graph_def's bytes, at most `limit` of them (a parameter for tests).
std::string read_file_bounded(const std::string& path, size_t limit, std::source_location loc);
// The parsers behind graph_def_from_text / _binary and read_graph_def, into a message the caller
// made (on the heap or in an arena): `who` heads their errors.
void parse_text_into(GraphDef& def, std::string_view text, const char* who, std::source_location loc);
void parse_binary_into(GraphDef& def, std::string_view bytes, const char* who, std::source_location loc);
// read_graph_def's: the file's bytes parsed by its name's format into `def`.
void read_file_into(GraphDef& def, const std::string& path, std::source_location loc);
// Note [Fills of run-time shape] (eager/ops/creation.cc): the tapeflow op that reads TensorFlow
// op type `tf_type` when inputs tapeflow holds as attributes are run-time values (DynamicFill for
// Fill, DynamicRange for Range, DynamicTile for Tile), else null; and the reverse, for writing.
const char* run_time_form_of(std::string_view tf_type);
const char* tf_type_of_run_time_form(std::string_view type);

struct FormItem {
  enum class Kind { kAttr, kInput, kTypeOf, kTypesOfInputs, kCount, kFixed, kDerived };
  Kind kind = Kind::kAttr;
  std::string name;     // tapeflow attr (kAttr, kInput, kDerived); TensorFlow attr otherwise
  std::string tf_name;  // kAttr: TensorFlow's name
  std::string value_kind;
  bool has_default = false;
  bool omit_default = false;       // kAttr "name:kind=default?": not written when equal to it
  bool index_dtype = false;        // kFixed "X=index": int32, or int64 on import
  proto::AttrValue default_value;  // kAttr with a default; kFixed: the literal
  int position = -1;               // kInput: TensorFlow input index, -1: appended
  bool of_output = false;          // kTypeOf
  int index = 0;                   // kTypeOf; kTypesOfInputs: the first input listed
};
struct Form {
  std::vector<FormItem> items;
  int num_const_inputs = 0;
  bool lists(std::string_view tapeflow_attr) const;
};
// The parsed tf_form of `op` (cached: the reference stays valid). InternalError for a malformed
// form: a bug in the OpDef.
const Form& form_of(const OpDef& op);

absl::StatusOr<proto::DataType> to_proto_dtype(DType dtype);
absl::StatusOr<DType> from_proto_dtype(proto::DataType dtype);
void shape_to_proto(const Shape& shape, proto::TensorShapeProto* out);
// Concrete tensor -> TensorProto: tensor_content above kTypedValLimit elements, typed *_val
// fields below it, one *_val when every element is equal.
absl::Status tensor_to_proto(const Tensor& tensor, proto::TensorProto* out);
// TensorProto -> host tensor, TensorFlow's rules: tensor_content when present, else the typed
// values, the last one repeated to fill the shape.
absl::StatusOr<Tensor> tensor_from_proto(const proto::TensorProto& proto);
inline constexpr int kTypedValLimit = 16;

// tapeflow attr value -> TensorFlow AttrValue for a form kind, and back (InvalidArgument on a
// type mismatch).
absl::StatusOr<proto::AttrValue> attr_to_proto(const AttrValue& value, std::string_view kind);
absl::StatusOr<AttrValue> attr_from_proto(const proto::AttrValue& value, std::string_view kind);
// Note [Spare constants] (graph_def.cc): the (Const, consumer) node-id pairs where export would
// write the Const, which an import left with no consumer, as a constant input of the consumer
// (Reshape's shape, Mean's reduction_indices): the edges a GraphDef has that the graph holds as
// attrs. `nodes`: a snapshot of the state's nodes. For pictures (graph/dot.h).
std::vector<std::pair<int, int>> spare_constant_edges(const GraphState& state, const std::vector<const Node*>& nodes);
// The natural kind of a tapeflow attr value ("int", "ints", ...), for "_"-prefixed attrs.
std::string natural_kind(const AttrValue& value);
std::string natural_kind(const proto::AttrValue& value);
// The NodeDef's attr `name`, or null.
const proto::AttrValue* find_attr(const proto::NodeDef& node, const char* name);
// "[import_graph_def] node 'name' (Op): message", the import's error for a NodeDef.
absl::Status node_error(const proto::NodeDef& node, absl::StatusCode code, absl::string_view message);
// The GraphDef's nodes in an order where each comes after its inputs: its own order when it is
// one, else Kahn's (a cycle is an error naming the nodes on it). Node i's inputs are the nodes
// src_of(k) for k in [first_edge[i], first_edge[i + 1]).
absl::StatusOr<std::vector<int>> inputs_first_order(const proto::GraphDef& def, absl::Span<const int> first_edge,
                                                    absl::FunctionRef<int(int)> src_of);

}  // namespace graph_def_internal

}  // namespace tapeflow
