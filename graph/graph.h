// Graph: a dataflow graph of operations (nodes) and the tensors (edges, "node:index") between
// them, plus collections. Ops called while a graph is the default add nodes instead of running:
//
//   tapeflow::Graph g;
//   {
//     auto scope = g.as_default();                     // Python: with g.as_default():
//     Tensor x = placeholder(DType::kFloat32, {3}, "x");
//     Tensor y = square(x);                            // node "Square", tensor "Square:0"
//   }
//   Session sess(g);
//   sess.run(y, {{x, Tensor{1.f, 2.f, 3.f}}});         // [1 4 9]
//
// Names follow TensorFlow: an op is named after its type (or the name given to it), prefixed
// by the enclosing name scopes and made unique with "_1", "_2", ... (graph/scopes.h).
//
// Graph is a cheap handle: copies share one graph, and symbolic tensors keep their graph
// alive. Nodes are only ever added, so a node's id is also its position in a topological order
// (its inputs are always older). Adding nodes and reading the graph are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/attr.h"
#include "core/string_index.h"
#include "devices/device_spec.h"
#include "eager/op_def.h"
#include "eager/symbolic.h"
#include "eager/tensor.h"
#include "eager/variable.h"

namespace tapeflow {

class Graph;
class GraphState;
class GraphDefaultGuard;

// An edge's source: output `index` of node `node`.
struct TensorRef {
  int node = -1;
  int index = 0;
  friend bool operator==(const TensorRef&, const TensorRef&) = default;
  template <typename H> friend H AbslHashValue(H h, const TensorRef& r) { return H::combine(std::move(h), r.node, r.index); }
};

struct FunctionBody;  // graph/functional_ops.h

struct NodeExtras {
  std::vector<std::string> colocate_with;
  std::vector<std::shared_ptr<const FunctionBody>> functions;
};

// Every member has an initialiser or a constructor: the importer default-initialises Nodes
// (Note [Fresh Nodes], graph/graph_def_import.cc).
struct Node {
  int id = -1;
  bool imported = false;           // made by import_graph_def: `loc` is the import's call
  std::string name;
  const OpDef* op = nullptr;
  absl::InlinedVector<TensorRef, 2> inputs;  // two inline: no allocation for most nodes
  std::vector<int> control_inputs;
  AttrMap attrs;
  OutputSpecs outputs;             // dtypes and (possibly partial) shapes
  SharedDeviceSpec requested_device;  // merged from the device scopes; empty when none
  std::source_location loc;        // the user's line that created the node
  Tensor value;                    // Const and captured tensors: the value (a shared buffer)
  std::optional<Variable> variable;  // variable nodes (handle, read, assign): the variable
  // What few nodes have, behind one pointer (shared by copies; the setters copy on write), so
  // that a Node stays one 272-byte heap block (Note [Linear import]).
  std::shared_ptr<const NodeExtras> extras;

  // TensorFlow's colocation attr "_class" ("loc:@X" without its prefix): the names of nodes this
  // one is placed with (graph/placer.h, rule 2). Set by import_graph_def, kept by the passes.
  const std::vector<std::string>& colocate_with() const;
  void set_colocate_with(std::vector<std::string> names);
  // If, While and Case (graph/functional_ops.h): the functions the node runs, in the op's order.
  const std::vector<std::shared_ptr<const FunctionBody>>& functions() const;
  void set_functions(std::vector<std::shared_ptr<const FunctionBody>> functions);
};

// "node 'outer/c' (Const) created at file.cc:12" for messages; "node 'conv1/Conv2D' (Conv2D)
// imported at serve.cc:8" for a node of an imported GraphDef (the line of the import or
// load_model call), and no location where the caller passed an empty std::source_location.
std::string describe_node(const Node& node);

// An operation handle: a node of a graph.
class Operation {
 public:
  Operation() = default;
  Operation(std::shared_ptr<GraphState> graph, int node) : graph_(std::move(graph)), node_(node) {}

  bool defined() const { return graph_ != nullptr; }
  const std::string& name() const;
  std::string type() const;
  int num_outputs() const;
  Tensor output(int index) const;
  std::vector<Tensor> outputs() const;
  std::vector<Tensor> inputs() const;
  std::vector<Operation> control_inputs() const;
  // The requested device ("" when none was requested).
  std::string device() const;
  const std::source_location& location() const;
  const AttrMap& attrs() const;
  Graph graph() const;
  int id() const { return node_; }
  const Node& node() const;
  // TensorFlow's op.run(): runs this operation in the default session (an InteractiveSession).
  void run(std::source_location loc = std::source_location::current()) const;

  friend bool operator==(const Operation& a, const Operation& b) { return a.graph_ == b.graph_ && a.node_ == b.node_; }

 private:
  std::shared_ptr<GraphState> graph_;
  int node_ = -1;
};

// The op that produces a symbolic tensor (InvalidArgumentError for a concrete one).
Operation producer(const Tensor& t, std::source_location loc = std::source_location::current());

// Standard collection keys (tf.GraphKeys).
struct GraphKeys {
  static constexpr const char* kGlobalVariables = "variables";
  static constexpr const char* kTrainableVariables = "trainable_variables";
  static constexpr const char* kLocalVariables = "local_variables";
  static constexpr const char* kLosses = "losses";
  static constexpr const char* kTrainOp = "train_op";
  static constexpr const char* kUpdateOps = "update_ops";
  static constexpr const char* kSummaries = "summaries";
};

using CollectionItem = std::variant<Tensor, Operation, Variable, std::string>;

class Graph {
 public:
  // loc: where the graph is made; messages that must tell graphs apart name it.
  Graph(std::source_location loc = std::source_location::current());
  // "the graph created at model.cc:12" (the thread's default graph says so).
  std::string describe() const;

  // Makes this graph the thread's default (ops add nodes to it) until the guard is destroyed.
  [[nodiscard]] GraphDefaultGuard as_default() const;

  std::vector<Operation> get_operations() const;
  int num_nodes() const;
  // NotFoundError naming what is missing (and a close match, when there is one).
  Operation get_operation_by_name(std::string_view name) const;
  // "op_name:index"; InvalidArgumentError for a malformed name.
  Tensor get_tensor_by_name(std::string_view name) const;

  // Feeding: every tensor is feedable unless prevent_feeding was called for it. `why`, when
  // given, ends Session::run's error for a feed of it (why_not_feedable returns it).
  bool is_feedable(const Tensor& t) const;
  void prevent_feeding(const Tensor& t, std::string_view why = {});
  std::string why_not_feedable(const Tensor& t) const;

  void add_to_collection(std::string_view key, CollectionItem item);
  std::vector<CollectionItem> get_collection(std::string_view key) const;
  std::vector<std::string> get_all_collection_keys() const;
  // The variables of the standard collections, in creation order.
  std::vector<Variable> global_variables() const;
  std::vector<Variable> trainable_variables() const;

  // The operation that runs every variable initializer of this graph (a NoOp with them as
  // control inputs), named "init". Built anew each call, so it covers variables added later.
  Operation global_variables_initializer(std::source_location loc = std::source_location::current()) const;

  // One line per node: "name = Type(inputs) device", for debugging and golden tests.
  std::string to_string() const;

  // ---- for the graph layer: direct node access ----
  const std::shared_ptr<GraphState>& state() const { return state_; }
  friend bool operator==(const Graph& a, const Graph& b) { return a.state_ == b.state_; }

 private:
  friend class GraphState;
  explicit Graph(std::shared_ptr<GraphState> state) : state_(std::move(state)) {}
  std::shared_ptr<GraphState> state_;
};

// The innermost graph made default on this thread by as_default(); when there is none, a
// per-thread graph created on first use (as tf.compat.v1.get_default_graph()).
Graph get_default_graph();
// True while some graph is the default on this thread (ops then build nodes).
bool building_graph();

// A graph variable's initializer (its "v/Assign" node), as TensorFlow's v.initializer.
// InvalidArgumentError for an eager variable.
Operation initializer(const Variable& variable, std::source_location loc = std::source_location::current());

// Runs every initializer of these variables (a NoOp named "init" with them as control inputs).
Operation variables_initializer(const std::vector<Variable>& variables, std::string_view name = "init",
                               std::source_location loc = std::source_location::current());
// The default graph's global_variables_initializer().
Operation global_variables_initializer(std::source_location loc = std::source_location::current());

// The graph's own state (graph/graph.cc). Exposed for graph-layer code: the building context,
// the executor and passes.
class GraphState final : public GraphBase, public std::enable_shared_from_this<GraphState> {
 public:
  std::string node_name(int node) const override;
  std::string node_type(int node) const override;
  Tensor node_input(int node, int index) const override;
  std::string describe() const override;
  // Set once, when the graph is made (Graph's constructor): see describe().
  std::source_location created_at;
  bool is_thread_default = false;

  // Adds a node. `name` is used as given (already unique: see unique_name). Fills id.
  // Checks the inputs' and control inputs' ids.
  int add_node(Node node);
  // TensorFlow's uniquifying rule over every name used so far (ops and name scopes alike):
  // "c", "c_1", "c_2"... Marks the result as used.
  std::string unique_name(std::string_view name);
  // The import's path (Note [Linear import], graph/graph_def_import.cc): adds `nodes` in order
  // under one lock, each renamed "prefix/name" (unless prefix is empty) and made unique as
  // unique_name does. The caller planned them as nodes assumed_first, assumed_first + 1, ...:
  // node k's id is assumed_first + k, its name is names[k] (a view the caller keeps compact),
  // its inputs and control inputs name existing nodes or earlier nodes of the batch, checked
  // by the caller. They are renumbered if other nodes were added meanwhile. Returns the first
  // one's id; the others follow it.
  int add_nodes_unique(std::vector<std::unique_ptr<Node>> nodes, absl::Span<const std::string_view> names,
                       std::string_view prefix, int assumed_first);
  const Node& node(int id) const;
  // Not its name: the name index reads the names of the nodes it holds.
  Node& mutable_node(int id);
  int num_nodes() const;
  // Every node, under one lock (pointers stay valid: nodes are never removed).
  std::vector<const Node*> snapshot() const;
  // -1 when absent.
  int find(std::string_view name) const;
  Graph handle() { return Graph(shared_from_this()); }
  Tensor tensor(TensorRef ref) const;

  // Graph variables of this graph: created here, or carried over by a pass that rewrote the
  // graph they were created in. Keyed by Variable::id().
  struct VariableNodes {
    int handle = -1;
    int initializer = -1;
  };
  void add_variable(int64_t variable_id, VariableNodes nodes);
  std::optional<VariableNodes> variable_nodes_of(int64_t variable_id) const;
  // Their handle nodes, in creation order.
  std::vector<int> variable_nodes() const;

  // Graph collections (guarded by the same lock as nodes).
  void add_to_collection(std::string_view key, CollectionItem item);
  std::vector<CollectionItem> get_collection(std::string_view key);
  std::vector<std::string> collection_keys() const;

  bool is_feedable(TensorRef ref) const;
  void prevent_feeding(TensorRef ref, std::string_view why = {});
  std::string why_not_feedable(TensorRef ref) const;  // "" when feedable or no reason was given

  // Bumped by every change, so cached plans can notice a changed graph.
  uint64_t version() const;

 private:
  friend class Graph;
  int add_node_locked(std::unique_ptr<Node> node);
  // Note [Names in use]. `key` is `name` lowercased; `record`: whether to mark the result used
  // in names_in_use_ (a node about to be indexed under it needs not).
  bool make_unique_locked(std::string& name, std::string_view key, bool record);
  bool in_use_locked(std::string_view key) const { return names_in_use_.contains(key) || by_name_.contains_folded(key); }
  struct NodeName {  // by_name_'s keys: the nodes' own names
    const std::vector<std::unique_ptr<Node>>* nodes;
    std::string_view operator()(uint32_t id) const { return (*nodes)[id]->name; }
  };
  using StoredItem = std::variant<TensorRef, int, Variable, std::string>;  // int: an operation
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Node>> nodes_;
  // A large graph's name table is hit at random on every node added (core/string_index.h).
  // Case-folding: it also tells which names are in use (Note [Names in use]).
  StringIndex<NodeName, /*kFoldCase=*/true> by_name_{NodeName{&nodes_}};
  // Lowercased, as TensorFlow keys them: the names in use that no node holds (name scopes, a
  // name unique_name handed out before its node is added) and every name used more than once,
  // with its count.
  PackedStringMap<int> names_in_use_;
  std::vector<int> variables_;
  absl::flat_hash_map<int64_t, VariableNodes> variables_by_id_;
  std::vector<std::pair<std::string, std::vector<StoredItem>>> collections_;
  absl::flat_hash_map<TensorRef, std::string> unfeedable_;  // -> why (may be empty)
  uint64_t version_ = 0;
};

}  // namespace tapeflow
