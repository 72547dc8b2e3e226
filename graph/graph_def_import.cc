// GraphDef -> Graph: import_graph_def. Two phases (Note [Import commits at the end]).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "graph/graph_context.h"
#include "graph/graph_def.h"
#include "graph/graph_def_composites.h"
#include "graph/graph_def_control_flow.h"
#include "graph/graph_def_tensor_arrays.h"
#include "graph/graph_def_v1_functions.h"  // valid_node_name
#include "graph/graph_def_functional.h"
#include "eager/ops/cast.h"
#include "graph/graph_ops.h"

namespace tapeflow {

namespace {

using namespace graph_def_internal;

// Note [Import commits at the end]
// The first phase plans every node (op, inputs, attrs, output specs from the op's own shape
// function) without touching the graph, so every error surfaces while the graph is as it was.
// The second phase only adds the planned nodes, binds the variables and cannot fail on input.
// Every TensorFlow op tapeflow reads is one tapeflow op (or an alias of one: alias_of), so each
// GraphDef node plans one node, except the Const an input_map value becomes and the composites
// (Einsum: Note [Composites in a GraphDef]), whose primitives plan several.

// Planned nodes are numbered as the graph will number them if nothing else is added to it
// meanwhile: planned node k is node base + k, where base is the graph's size when planning
// began (GraphState::add_nodes_unique renumbers them otherwise). So a planned Node's inputs are
// final when planned, and commit does not touch them again (Note [Linear import]). A tensor is
// a TensorRef in that numbering: node >= base is planned, node < base a tensor of the target
// graph given through input_map.
using Ref = TensorRef;

// TensorFlow op types that are another tapeflow op under the same semantics.
const char* alias_of(std::string_view type) {
  if (type == "AddV2") return "Add";
  if (type == "RealDiv") return "Div";
  // tapeflow's MatMul broadcasts batch dims as BatchMatMulV2 does (V1: equal batch dims, a special
  // case; V3: per-input dtypes, read only when they agree); attrs renamed by batch_matmul_attr.
  if (type == "BatchMatMul" || type == "BatchMatMulV2" || type == "BatchMatMulV3") return "MatMul";
  // tapeflow's Select broadcasts its three inputs as SelectV2 does. TensorFlow 1's Select is the
  // same but for a vector condition over a matrix x, which picks rows: refused in plan_node.
  if (type == "SelectV2") return "Select";
  if (type == "RandomStandardNormal") return "RandomNormal";  // what RandomNormal is written as
  // Identities under other names (PlaceholderWithDefault also takes its shape attr: plan_node).
  if (type == "Snapshot" || type == "PlaceholderWithDefault") return "Identity";
  if (type == "PreventGradient") return "StopGradient";
  if (type == "Inv") return "Reciprocal";
  if (type == "BiasAddV1") return "BiasAdd";
  // TensorFlow's Mod is C's remainder (truncating; tf.math.mod is FloorMod).
  if (type == "Mod") return "TruncateMod";
  // FusedBatchNorm (V1, V2) are V3 without the reserve_space_3 output (and V1 without "U" and
  // exponential_avg_factor, whose defaults V3 reads): the same node serves their consumers.
  if (type == "FusedBatchNorm" || type == "FusedBatchNormV2") return "FusedBatchNormV3";
  return nullptr;
}

// The TensorFlow attr of a BatchMatMul* node that holds what MatMul calls `tf_name`.
std::string_view batch_matmul_attr(std::string_view tf_name) {
  if (tf_name == "transpose_a") return "adj_x";
  if (tf_name == "transpose_b") return "adj_y";
  return tf_name;
}

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// graph_def_internal::split_tensor_name, called: inlined into link_node and prefetch_for_link it
// made the import slower (Note [Linear import]).
[[gnu::noinline]] std::pair<std::string_view, int> split_input_name(std::string_view s) { return split_tensor_name(s); }

// Note [Linear import]: a 100k-node GraphDef must import in about ten times the time of a 10k
// one (issue 13). The work is linear; what grows with the size is the wait for memory: a 10k
// import's data (its GraphDef, the Nodes it makes, the name tables) stays in the caches, a
// 100k one's (about 100 MB) does not. So each pass reads as little as it can, in order, and
// prefetches what it will need a few nodes ahead:
// - index_nodes reads each NodeDef's name and op once: the names are copied into one packed
//   store (the name index holds their ids, and commit reads them there, not in the NodeDefs),
//   the op is found through a cache of the graph's few types.
// - Every name table, here and in the graph, is a StringIndex (core/string_index.h): 8-byte
//   slots that a prefetch fetches whole, strings read only on a 32-bit hash match. With
//   absl::flat_hash_map<std::string, int> (40-byte slots) the 100k import was 12-14x the 10k one.
// - link_inputs parses each input string once (an Edge per input, in one array); consumers are
//   a CSR array; the input_map lookup is skipped when input_map is empty.
// - plan_node builds each Node once, with its final inputs (see Ref), and nothing per node is
//   kept beside it but its name's view.
// - When every input comes before its consumer, as in the GraphDefs TensorFlow writes, the
//   three steps above run together in one pass over the nodes (Note [One pass]).
// - commit hands the Nodes to the graph in one call under one lock
//   (GraphState::add_nodes_unique), which sizes its name table once (a grown table touches
//   fresh pages twice), probes it once per node (Note [Names in use], graph/graph.cc: no
//   lowercased copy of each name in a second table) and does not read the Nodes back unless a
//   prefix or a clash renames them.
// deploy_bench's BM_GraphDefImportScaling reports the 100k / 10k ratio, warm and cold.

// Note [Fresh Nodes]: make_unique<Node>() value-initialises, which GCC does by zeroing the Node
// with `rep stos`, whose stores later loads cannot read from the store buffer: the first read of a
// field (the old requested_device, released by its move-assignment) waited for the Node's fresh
// lines to come from memory at 100k nodes (39% of plan_node's samples). Default-initialised
// (every member of Node has an initialiser or a constructor) it is written with ordinary stores.
std::unique_ptr<Node> new_node() { return std::make_unique_for_overwrite<Node>(); }

struct Edge {  // 8 bytes: a 100k-node GraphDef's are one array of 1.6 MB
  static constexpr int kControl = -1;
  int src = -1;   // the GraphDef node it names
  int index = 0;  // its output (data inputs), or kControl
  bool control() const { return index == kControl; }
};

class Importer {
 public:
  // `library`: the functions `def` came with (inline_function_calls leaves them out of its copy).
  Importer(const Graph& graph, const GraphDef& def, const proto::FunctionDefLibrary& library,
           const std::map<std::string, Tensor>& input_map, std::source_location loc)
      : graph_(graph), def_(def), library_(library), input_map_(input_map), loc_(loc), base_(graph.num_nodes()) {}

  // Phase one: every check. Returns the first problem.
  absl::Status plan(const std::vector<std::string>& return_elements);
  std::vector<ImportedElement> commit(std::string_view name);  // phase two
  int needs_run_time_form() const { return needs_run_time_form_; }  // graph_def_internal::run_time_form_of

  // Whether a TensorArrayV3 is among the op types tapeflow lacks (known once plan indexed every node).
  bool uses_tensor_arrays() const { return lacks_type([](std::string_view t) { return t == "TensorArrayV3"; }); }
  // Whether some op type tapeflow lacks is one no rewrite reads (graph_def_internal::rewritten_op_type).
  bool lacks_types_no_rewrite_reads() const {
    return lacks_type([](std::string_view t) { return !graph_def_internal::rewritten_op_type(t); });
  }
  template <typename Pred> bool lacks_type(Pred pred) const {
    for (const auto& [type, op] : op_of_type_)
      if (op == nullptr && pred(std::string_view(type.data(), type.size()))) return true;
    return false;
  }
  // Whether the GraphDef has what resolve_v1_control_flow rewrites (known once plan has indexed
  // every node): Switch or Merge (not op types of tapeflow, so plan failed), or an Assert, whose
  // DT_STRING data fail it (Note [Control flow v1 in a GraphDef]).
  bool needs_tf1_rewrite() const {
    return lacks_type(graph_def_internal::is_v1_control_flow_type) ||
           std::any_of(op_of_type_.begin(), op_of_type_.end(), [](const auto& e) { return e.second == &kAssertOp; });
  }

 private:
  bool plan_in_one_pass();      // Note [One pass]
  absl::Status plan_in_passes();
  void clear_plan();
  void reserve_index();
  void prefetch_for_index(int i) const;
  void prefetch_for_link(int i) const;
  absl::Status index_node(int i);
  absl::Status link_node(int i);
  absl::Status index_nodes();
  absl::Status link_inputs();
  absl::Status check_op_types();
  absl::StatusOr<std::vector<int>> topological_order();
  absl::Status plan_node(int i);
  // Note [Composites in a GraphDef]: node i's composite spliced into the plan.
  absl::Status plan_composite(int i, absl::Span<const Ref> inputs, absl::Span<const int> control,
                              const SharedDeviceSpec& device);
  // Note [Functional control flow]: an If, While or Case node and the bodies of its functions.
  [[gnu::cold]] absl::Status plan_functional(int i, absl::Span<const Ref> inputs, absl::Span<const int> control,
                                             const SharedDeviceSpec& device);
  // Renames the composites' inner nodes whose names a GraphDef node has (in any case), once
  // every GraphDef name is known: the GraphDef's nodes keep theirs.
  void rename_composite_nodes();
  // plan_node's special cases, kept out of its way.
  [[gnu::cold]] absl::Status check_select(int i, absl::Span<const Ref> refs) const;
  [[gnu::cold]] absl::Status check_batch_matmul(int i, absl::Span<const Ref> refs) const;
  [[gnu::cold]] void squeeze_known_ones(Node& node, absl::Span<const Ref> tensors) const;
  [[gnu::cold]] absl::Status widen_placeholder_with_default(int i, int planned);
  [[gnu::cold]] absl::Status check_types_of_inputs(int i, const FormItem& f, const proto::AttrValue& value,
                                                   absl::Span<const Ref> tensors) const;
  absl::StatusOr<Ref> resolve(const Edge& edge, const std::string& input);
  // Nodes naming the same device share one spec (a graph's nodes name a few devices at most).
  absl::StatusOr<SharedDeviceSpec> device_of(const std::string& text);
  absl::Status read_colocation(int i, int planned);
  // `allow_partial`: the attr may take a folded value with -1 for unknown dims (Reshape's shape).
  absl::StatusOr<AttrValue> const_input(const Ref& ref, const FormItem& item, bool allow_partial = false);
  struct Folded {
    Tensor value;
    bool partial = false;  // holds -1 for dims whose size the import does not know
  };
  std::optional<Folded> fold(const Ref& ref, int depth) const;  // Note [Folded constant inputs]
  std::optional<Folded> fold_node(const Node& n, int depth) const;
  // fold's results by planned node: each is evaluated once, however many paths reach it.
  mutable absl::flat_hash_map<int, std::optional<Folded>> folded_;
  // Infers the node's outputs, sets its id, inputs, control inputs (planned nodes) and location,
  // and appends it to the plan. `packed_name`: its name in names_, when it has a GraphDef node's
  // name. Returns its planned index.
  // `infer`: false when the node's outputs are set (a functional node's come from its bodies).
  absl::StatusOr<int> add_planned(std::unique_ptr<Node> node, absl::Span<const Ref> inputs, absl::Span<const int> control,
                                  std::string_view packed_name = {}, bool infer = true);
  Ref output_ref(int planned, int index) const { return Ref{base_ + planned, index}; }
  // The planned node a Ref names, or null for a tensor of the target graph.
  const Node* planned_node(const Ref& ref) const {
    return ref.node >= base_ ? planned_[static_cast<size_t>(ref.node - base_)].get() : nullptr;
  }
  const TensorSpec& spec(const Ref& ref) const {
    const Node* n = planned_node(ref);
    return (n ? *n : graph_.state()->node(ref.node)).outputs[static_cast<size_t>(ref.index)];
  }
  const Node& planned(int k) const { return *planned_[static_cast<size_t>(k)]; }
  absl::Status node_error(absl::StatusCode code, int i, absl::string_view message) const {
    return graph_def_internal::node_error(def_.node(i), code, message);
  }

  int needs_run_time_form_ = -1;  // a node whose attr-held inputs did not fold, that has one
  Graph graph_;
  const GraphDef& def_;
  const proto::FunctionDefLibrary& library_;
  const std::map<std::string, Tensor>& input_map_;
  const std::source_location loc_;
  const int base_;  // the graph's size when planning began (see Ref)
  // GraphDef node i's name is names_[i], packed: a lookup compares its key with the stored one,
  // and the copies here stay in cache where the NodeDefs' own strings, one per heap block, do not.
  PackedStrings names_;
  StringIndex<PackedStrings::KeyOf> by_name_{names_.key_of()};  // GraphDef node name -> its index
  std::vector<const OpDef*> op_of_;                // GraphDef node -> its op (null: unknown)
  const OpDef* const op_of_matmul_ = find_any_op("MatMul");  // BatchMatMul* nodes are read as it
  const OpDef* const op_of_select_ = find_any_op("Select");  // and SelectV2 nodes as this
  const OpDef* const op_of_identity_ = find_any_op("Identity");  // and PlaceholderWithDefault as this
  const OpDef* const op_of_squeeze_ = find_any_op("Squeeze");    // Note [Squeeze of unknown dims]
  absl::flat_hash_map<absl::string_view, const OpDef*> op_of_type_;  // the op types seen so far
  std::vector<Edge> edges_;                       // every node's inputs, in order (Note [Linear import])
  std::vector<int> first_edge_;                   // node i's are [first_edge_[i], first_edge_[i + 1])
  size_t total_inputs_ = 0;                       // counted by index_nodes
  std::vector<int> outputs_of_;                    // GraphDef node -> the planned node with its outputs
  std::vector<std::unique_ptr<Node>> planned_;     // the plan, handed to the graph whole by commit
  std::vector<std::string_view> planned_names_;    // their names, packed where they are a GraphDef node's
  std::vector<std::pair<int, std::vector<int>>> colocations_;  // planned node, the GraphDef nodes its "_class" names
  std::vector<int> composite_nodes_;               // planned nodes inside a composite, not its result
  std::vector<int> variable_handles_;              // planned VarHandleOps
  std::vector<std::pair<int, int>> variable_uses_;  // planned variable read or update, its planned VarHandleOp
  std::vector<TensorSpec> input_specs_;            // add_planned's scratch, reused
  std::vector<Ref> refs_;                          // plan_node's scratch, reused
  absl::flat_hash_map<std::string, Ref> mapped_;   // input_map keys, "x:0" form
  absl::flat_hash_map<std::string, SharedDeviceSpec> devices_;  // device_of's, by the NodeDef's text
  std::vector<std::pair<bool, std::pair<int, int>>> returns_;  // (is tensor, (planned node, index))
};

// index_nodes and link_inputs prefetch what they will read in stages, kStage nodes apart: a
// NodeDef, then the strings it points to, then the hash slots those strings lead to. At 100k
// nodes none of it is in cache, each level waits on the one before, and a node that waited for
// memory at every level cost more than the rest of its work (Note [Linear import]).
constexpr int kStage = 4;
// Every cache line of *p: a NodeDef (192 bytes) spans three or four, and the fields read first
// (name, op) sit past its first two (prefetching only those left that load waiting on memory).
template <typename T> void prefetch_object(const T* p) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p), end = begin + sizeof(T);
  for (uintptr_t line = begin & ~uintptr_t{63}; line < end; line += 64) __builtin_prefetch(reinterpret_cast<const void*>(line));
}

void Importer::prefetch_for_index(int i) const {
  const int n = def_.node_size();
  if (i + 3 * kStage < n) prefetch_object(&def_.node(i + 3 * kStage));
  if (i + 2 * kStage < n) {
    __builtin_prefetch(&def_.node(i + 2 * kStage).name());
    __builtin_prefetch(&def_.node(i + 2 * kStage).op());
  }
  if (i + kStage < n) by_name_.prefetch(def_.node(i + kStage).name());
}

void Importer::prefetch_for_link(int i) const {
  const int n = def_.node_size();
  if (i + 4 * kStage < n) prefetch_object(&def_.node(i + 4 * kStage));
  if (i + 3 * kStage < n) __builtin_prefetch(def_.node(i + 3 * kStage).input().data());
  if (i + 2 * kStage < n) {
    const auto& ahead = def_.node(i + 2 * kStage).input();
    for (int j = 0; j < ahead.size(); ++j) __builtin_prefetch(ahead.data()[j]);
  }
  if (i + kStage < n)
    for (const std::string& in : def_.node(i + kStage).input())
      by_name_.prefetch(!in.empty() && in[0] == '^' ? std::string_view(in).substr(1) : split_input_name(in).first);
}

void Importer::reserve_index() {
  const size_t n = static_cast<size_t>(def_.node_size());
  by_name_.reserve(n);
  names_.reserve(n);
  op_of_.reserve(n);
  first_edge_.reserve(n + 1);
  outputs_of_.assign(n, -1);
}

// Also finds the node's op, through a cache of the few types a graph uses.
absl::Status Importer::index_node(int i) {
  const proto::NodeDef& nd = def_.node(i);
  total_inputs_ += static_cast<size_t>(nd.input_size());
  const std::string& name = nd.name();
  if (!valid_node_name(name))
    return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] node ", i, " has an invalid name '", name, "'"));
  const uint32_t id = names_.add(name);  // i: every node before it was added
  if (!by_name_.insert(names_[id], id).second)
    return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] two nodes are named '", name, "'"));
  auto [type, fresh] = op_of_type_.try_emplace(nd.op(), nullptr);
  if (fresh) {
    const char* alias = alias_of(nd.op());
    type->second = find_any_op(alias ? alias : nd.op());
    if (type->second == nullptr) type->second = graph_def_internal::composite_op(nd.op());
  }
  op_of_.push_back(type->second);
  return absl::OkStatus();
}

absl::Status Importer::index_nodes() {
  reserve_index();
  for (int i = 0; i < def_.node_size(); ++i) {
    prefetch_for_index(i);
    TF_RETURN_IF_ERROR(index_node(i));
  }
  return absl::OkStatus();
}

// Node i's inputs become Edges, each naming a node indexed so far.
absl::Status Importer::link_node(int i) {
  first_edge_.push_back(static_cast<int>(edges_.size()));
  bool seen_control = false;
  for (const std::string& in : def_.node(i).input()) {
    Edge e;
    if (!in.empty() && in[0] == '^') e.index = Edge::kControl;
    if (!e.control() && seen_control)
      return node_error(absl::StatusCode::kInvalidArgument, i,
                        absl::StrCat("data input '", in, "' follows a control input; control inputs come last"));
    seen_control |= e.control();
    std::string_view src = in;
    if (e.control()) src.remove_prefix(1);
    else std::tie(src, e.index) = split_input_name(in);
    const int64_t found = by_name_.find(src);
    if (found < 0)
      return node_error(absl::StatusCode::kNotFound, i,
                        absl::StrCat(e.control() ? "control input '" : "input '", in, "' names no node of the GraphDef"));
    e.src = static_cast<int>(found);
    edges_.push_back(e);
  }
  return absl::OkStatus();
}

absl::Status Importer::link_inputs() {
  edges_.reserve(total_inputs_);
  for (int i = 0; i < def_.node_size(); ++i) {
    prefetch_for_link(i);
    TF_RETURN_IF_ERROR(link_node(i));
  }
  first_edge_.push_back(static_cast<int>(edges_.size()));
  return absl::OkStatus();
}

// Note [One pass]: TensorFlow writes a GraphDef's nodes in an order where every input comes
// before its consumer, and so does tapeflow. Such a GraphDef is indexed, linked and planned in
// one pass over its nodes, each NodeDef read while it is in cache (three passes read a 100k-node
// GraphDef from memory three times). Anything else (an input that names a later node, an
// unknown op, any error at all) abandons the pass: the plan is cleared and the passes of
// plan_in_passes run, which find every error in their documented order.
bool Importer::plan_in_one_pass() {
  reserve_index();
  edges_.reserve(2 * static_cast<size_t>(def_.node_size()));
  planned_.reserve(static_cast<size_t>(def_.node_size()));
  planned_names_.reserve(static_cast<size_t>(def_.node_size()));
  for (int i = 0; i < def_.node_size(); ++i) {
    prefetch_for_index(i);
    prefetch_for_link(i);
    if (!index_node(i).ok()) return false;
    if (op_of_.back() == nullptr) return false;  // unknown: check_op_types lists them all
    if (!link_node(i).ok()) return false;
    for (size_t k = static_cast<size_t>(first_edge_.back()); k < edges_.size(); ++k)
      if (edges_[k].src >= i) return false;  // itself: a cycle
    first_edge_.push_back(static_cast<int>(edges_.size()));  // plan_node reads node i's end
    const bool planned = plan_node(i).ok();
    first_edge_.pop_back();
    if (!planned) return false;
  }
  first_edge_.push_back(static_cast<int>(edges_.size()));
  return true;
}

void Importer::clear_plan() {
  by_name_.clear();
  names_.clear();
  op_of_.clear();
  edges_.clear();
  first_edge_.clear();
  total_inputs_ = 0;
  needs_run_time_form_ = -1;
  outputs_of_.clear();
  planned_.clear();
  planned_names_.clear();
  colocations_.clear();
  variable_handles_.clear();
  variable_uses_.clear();
  folded_.clear();  // keyed by planned node: the passes number the nodes anew
  composite_nodes_.clear();
}

absl::Status Importer::check_op_types() {
  std::map<std::string, std::vector<std::string>> unknown;  // sorted, so the message is stable
  // Calls of the library's functions were inlined (Note [Inlined function calls]); an op that
  // runs them another way (an op tapeflow lacks with a func attr) is named as such.
  absl::flat_hash_set<std::string_view> functions;
  for (const proto::FunctionDef& f : library_.function()) functions.insert(f.signature().name());
  bool calls_function = false;
  for (int i = 0; i < def_.node_size(); ++i) {
    const proto::NodeDef& n = def_.node(i);
    if (op_of_[static_cast<size_t>(i)] != nullptr) continue;
    unknown[n.op()].push_back(n.name());
    for (const auto& [key, value] : n.attr())
      calls_function |= value.has_func() && functions.contains(value.func().name());
  }
  if (unknown.empty()) return absl::OkStatus();
  std::vector<std::string> parts;
  for (const auto& [type, nodes] : unknown)
    parts.push_back(absl::StrCat(type, nodes.size() == 1 ? " (node " : " (nodes ", absl::StrJoin(nodes, ", "), ")"));
  return absl::NotFoundError(absl::StrCat("[import_graph_def] the GraphDef uses op types tapeflow does not have: ",
                                          absl::StrJoin(parts, "; "),
                                          calls_function ? "; tapeflow runs a GraphDef's library functions through calls "
                                                           "(PartitionedCall, StatefulPartitionedCall) and through If, "
                                                           "While and Case, not through these" : ""));
}

// The GraphDef's own order when every input comes first, as plan_in_one_pass plans (so both
// paths number the nodes alike).
absl::StatusOr<std::vector<int>> Importer::topological_order() {
  return graph_def_internal::inputs_first_order(def_, first_edge_, [&](int k) { return edges_[static_cast<size_t>(k)].src; });
}

absl::StatusOr<int> Importer::add_planned(std::unique_ptr<Node> node, absl::Span<const Ref> inputs,
                                          absl::Span<const int> control, std::string_view packed_name, bool infer) {
  if (infer) [[likely]] {
    input_specs_.clear();
    for (const Ref& r : inputs) input_specs_.push_back(spec(r));
    InferenceContext ictx{node->op->api_name, input_specs_, node->attrs};
    absl::StatusOr<OutputSpecs> outs = node->op->infer(ictx);
    if (!outs.ok()) return with_op_prefix(outs.status(), node->op->api_name);
    node->outputs = *std::move(outs);
  }
  node->inputs.assign(inputs.begin(), inputs.end());
  node->control_inputs.reserve(control.size());
  for (int c : control) node->control_inputs.push_back(base_ + c);
  std::sort(node->control_inputs.begin(), node->control_inputs.end());
  node->control_inputs.erase(std::unique(node->control_inputs.begin(), node->control_inputs.end()),
                             node->control_inputs.end());
  node->loc = loc_;
  node->imported = true;
  const int k = static_cast<int>(planned_.size());
  node->id = base_ + k;
  if (node->op == &kVarHandleOp) variable_handles_.push_back(k);
  planned_names_.push_back(packed_name.empty() ? std::string_view(node->name) : packed_name);
  planned_.push_back(std::move(node));
  return k;
}

absl::StatusOr<Ref> Importer::resolve(const Edge& edge, const std::string& input) {
  const std::string& name = def_.node(edge.src).name();
  if (!mapped_.empty())
    if (auto m = mapped_.find(absl::StrCat(name, ":", edge.index)); m != mapped_.end()) return m->second;
  const int k = outputs_of_[edge.src];
  if (edge.index >= static_cast<int>(planned(k).outputs.size()))
    return absl::InvalidArgumentError(absl::StrCat("input '", input, "' names output ", edge.index, " of node '", name,
                                                   "', which has ", planned(k).outputs.size(), " output(s)"));
  return output_ref(k, edge.index);
}

// TensorFlow's "_class" attr: its "loc:@X" entries (others are ignored, as TensorFlow ignores
// them) name the nodes this one is placed with. X must be a node of the GraphDef, as
// TensorFlow's import_graph_def requires (validate_colocation_constraints).
absl::Status Importer::read_colocation(int i, int planned) {
  const auto& attrs = def_.node(i).attr();
  const auto it = attrs.find("_class");
  if (it == attrs.end()) return absl::OkStatus();
  const proto::AttrValue& v = it->second;
  if (v.value_case() != proto::AttrValue::kList || v.list().i_size() || v.list().f_size() || v.list().b_size() ||
      v.list().type_size() || v.list().shape_size() || v.list().tensor_size())
    return node_error(absl::StatusCode::kInvalidArgument, i,
                      absl::StrCat("attr '_class' must be a list of strings (\"loc:@<node>\"), not ",
                                   v.ShortDebugString()));
  std::vector<int> colocate;
  for (const std::string& entry : v.list().s()) {
    std::string_view name = entry;
    if (!name.starts_with("loc:@")) continue;
    name.remove_prefix(5);
    const auto node = static_cast<int>(by_name_.find(name));
    if (node < 0)
      return node_error(absl::StatusCode::kInvalidArgument, i,
                        absl::StrCat("expects to be colocated with unknown node '", av(name), "' (its attr '_class' has \"",
                                     entry, "\")"));
    if (node != i && std::find(colocate.begin(), colocate.end(), node) == colocate.end()) colocate.push_back(node);
  }
  if (!colocate.empty()) colocations_.emplace_back(planned, std::move(colocate));
  return absl::OkStatus();
}

// Note [Folded constant inputs]: tapeflow holds TensorFlow's constant inputs (Reshape's shape,
// reduction axes, ...) as attrs, so import needs their values. A Const gives it; so does a small
// computation of Consts and Shapes, which TensorFlow 1.x graphs carry where Python computed a
// shape (Keras' Flatten: Reshape(x, Pack(StridedSlice(Shape(x), 0), 3136))). fold evaluates
// such a subgraph eagerly on the CPU: Shape from the input's static shape, then a few moves
// (slices, packs, concats, casts) and integer arithmetic. A Shape of dims unknown until run time
// gives -1 for them and marks the value partial: moves keep -1 where it is, arithmetic on it
// is refused, and only Reshape's shape takes a partial value, whose -1 Reshape infers (the
// batch dim of Keras' Flatten). Anything else stays the error a non-Const input always was.
std::optional<Importer::Folded> Importer::fold(const Ref& ref, int depth) const {
  const Node* n = planned_node(ref);
  if (n == nullptr || ref.index != 0) return std::nullopt;
  if (n->op == &kConstOp) return Folded{n->value, false};
  if (auto it = folded_.find(ref.node); it != folded_.end()) return it->second;
  std::optional<Folded> f = fold_node(*n, depth);
  folded_.emplace(ref.node, f);
  return f;
}

std::optional<Importer::Folded> Importer::fold_node(const Node& node, int depth) const {
  static const absl::flat_hash_set<std::string_view> kMoves = {
      "Identity", "StridedSlice", "Pack", "ConcatV2", "Reshape", "ExpandDims", "Squeeze", "Slice", "Cast"};
  static const absl::flat_hash_set<std::string_view> kArithmetic = {
      "Add", "Sub", "Mul", "FloorDiv", "Maximum", "Minimum", "Prod", "Sum", "Neg", "GatherV2", "InvertPermutation"};
  constexpr int kMaxDepth = 16;
  constexpr int64_t kMaxElements = 4096;  // shapes and axes, not data
  const Node* n = &node;
  if (depth > kMaxDepth || n->outputs.size() != 1) return std::nullopt;
  const std::string_view type = n->op->type;
  const bool move = kMoves.contains(type);
  const bool shape_op = type == "Shape" || type == "Size" || type == "Rank";
  if (!shape_op && !move && !kArithmetic.contains(type)) return std::nullopt;
  const TensorSpec& out = n->outputs[0];
  if (!out.shape.is_fully_defined() || out.shape.num_elements() > kMaxElements || !is_integer(out.dtype))
    return std::nullopt;
  ContextGuard eager(&eager_context());
  try {
    if (type == "Shape") {
      const Shape& s = spec(n->inputs[0]).shape;
      std::vector<int64_t> dims(s.dims().begin(), s.dims().end());
      const bool partial = std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; });
      for (int64_t& d : dims) d = std::max<int64_t>(d, -1);
      const Tensor v(std::move(dims), Shape{s.rank()});
      return Folded{out.dtype == DType::kInt64 ? v : cast(v, out.dtype), partial};
    }
    if (type == "Rank") return Folded{Tensor(static_cast<int32_t>(spec(n->inputs[0]).shape.rank())), false};
    if (type == "Size") {
      const Shape& s = spec(n->inputs[0]).shape;
      if (!s.is_fully_defined()) return std::nullopt;  // not a number until it runs
      const Tensor v(s.num_elements());
      return Folded{out.dtype == DType::kInt64 ? v : cast(v, out.dtype), false};
    }
    std::vector<Tensor> inputs;
    bool partial = false;
    for (const Ref& in : n->inputs) {
      std::optional<Folded> f = fold(in, depth + 1);
      if (!f) return std::nullopt;
      partial |= f->partial;
      inputs.push_back(std::move(f->value));
    }
    if (partial && !move) return std::nullopt;  // -1 is a placeholder, not a number
    return Folded{execute_single(*n->op, inputs, n->attrs, loc_), partial};
  } catch (const Error&) {
    return std::nullopt;  // the node's own error surfaces when the graph runs
  }
}

absl::StatusOr<AttrValue> Importer::const_input(const Ref& ref, const FormItem& item, bool allow_partial) {
  const Node* src = planned_node(ref);
  std::optional<Folded> folded = src != nullptr && src->op != &kConstOp ? fold(ref, 0) : std::nullopt;
  if (src == nullptr || (src->op != &kConstOp && (!folded || (folded->partial && !allow_partial))))
    return absl::UnimplementedError(absl::StrCat(
        "the input that carries '", item.name,
        "' must be a Const node, or a value tapeflow can compute while importing (Note [Folded constant inputs]): "
        "tapeflow holds it as an attribute"));
  const Tensor& t = folded ? folded->value : src->value;
  const bool integer = is_integer(t.dtype());
  const int64_t n = t.num_elements();
  auto ints = [&]() -> std::vector<int64_t> {
    std::vector<int64_t> out;
    dispatch_dtype(t.dtype(), [&]<typename T>() { for (T v : t.to_vector<T>()) out.push_back(static_cast<int64_t>(v)); });
    return out;
  };
  const auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("the constant for '", item.name, "' must be ",
                                                   absl::string_view(what.data(), what.size()), "; got ",
                                                   dtype_name(t.dtype()), " of shape ", t.shape().to_string()));
  };
  const std::string& kind = item.value_kind;
  if (kind == "int") {
    if (!integer || n != 1) return bad("one integer");
    return AttrValue(ints()[0]);
  }
  if (kind == "ints" || kind == "idx") {
    if (!integer || t.shape().rank() > 1) return bad("an integer scalar or vector");
    return AttrValue(ints());
  }
  if (kind == "pairs") {
    if (!integer || t.shape().rank() != 2 || t.shape().dim(1) != 2) return bad("an integer [n, 2] matrix");
    return AttrValue(ints());
  }
  if (kind == "shape") {
    if (!integer || t.shape().rank() != 1) return bad("an integer vector");
    return AttrValue(Shape(ints()));
  }
  if (n != 1) return bad("a scalar");
  if (kind == "num" && integer) return AttrValue(ints()[0]);
  if (kind == "num" && t.dtype() == DType::kBool) return AttrValue(t.to_vector<bool>()[0]);
  double x = 0;
  dispatch_dtype(t.dtype(), [&]<typename T>() { x = static_cast<double>(t.to_vector<T>()[0]); });
  return AttrValue(x);
}

absl::Status Importer::plan(const std::vector<std::string>& return_elements) {
  if (!input_map_.empty() || !plan_in_one_pass()) {  // Note [One pass]
    clear_plan();
    TF_RETURN_IF_ERROR(plan_in_passes());
  }
  if (!composite_nodes_.empty()) rename_composite_nodes();
  for (const std::string& r : return_elements) {
    const bool is_tensor = r.find(':') != std::string::npos;
    auto [name, index] = split_tensor_name(r);
    const int64_t found = by_name_.find(name);
    if (found < 0)
      return absl::NotFoundError(absl::StrCat("[import_graph_def] return element '", r, "' names no node of the GraphDef"));
    const int k = outputs_of_[static_cast<size_t>(found)];
    if (is_tensor && index >= static_cast<int>(planned(k).outputs.size()))
      return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] return element '", r, "': node '", av(name),
                                                     "' has ", planned(k).outputs.size(), " output(s)"));
    returns_.push_back({is_tensor, {k, index}});
  }
  return absl::OkStatus();
}

absl::Status Importer::plan_in_passes() {
  TF_RETURN_IF_ERROR(index_nodes());
  TF_RETURN_IF_ERROR(link_inputs());
  TF_RETURN_IF_ERROR(check_op_types());
  TF_ASSIGN_OR_RETURN(std::vector<int> order, topological_order());
  std::vector<std::string> unused;
  for (const auto& [key, tensor] : input_map_) {
    auto [name, index] = split_tensor_name(key);
    if (!by_name_.contains(name)) { unused.push_back(key); continue; }
    if (!tensor.defined())
      return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] input_map['", key, "'] is an empty tensor"));
    Ref ref;
    if (tensor.is_symbolic()) {
      if (tensor.symbolic().graph.get() != graph_.state().get())
        return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] input_map['", key, "'] is tensor '",
                                                       tensor.name(), "' of another graph"));
      ref = TensorRef{tensor.symbolic().node, tensor.symbolic().output};
    } else {  // a concrete value: a Const in the graph
      auto c = new_node();
      c->name = absl::StrCat(av(name), "/input_map_value");
      c->op = &kConstOp;
      c->value = tensor;
      c->attrs = AttrMap{{"dtype", tensor.dtype()}, {"shape", tensor.shape()}};
      TF_ASSIGN_OR_RETURN(int id, add_planned(std::move(c), {}, {}));
      ref = output_ref(id, 0);
    }
    mapped_[absl::StrCat(av(name), ":", index)] = ref;
  }
  if (!unused.empty())
    return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] input_map names tensors the GraphDef does not "
                                                   "have: ", absl::StrJoin(unused, ", ")));
  planned_.reserve(planned_.size() + static_cast<size_t>(def_.node_size()));
  planned_names_.reserve(planned_.capacity());
  for (int i : order) TF_RETURN_IF_ERROR(plan_node(i));
  return absl::OkStatus();
}

absl::StatusOr<SharedDeviceSpec> Importer::device_of(const std::string& text) {
  if (text.empty()) return SharedDeviceSpec();
  if (auto it = devices_.find(text); it != devices_.end()) return it->second;
  TF_ASSIGN_OR_RETURN(DeviceSpec spec, DeviceSpec::parse(text));
  return devices_.emplace(text, SharedDeviceSpec(std::move(spec))).first->second;
}

// The special cases of plan_node, out of its way (Note [Linear import]: it runs per node).

// TensorFlow 1's Select with a vector condition over a matrix picks rows; tapeflow's broadcasts.
absl::Status Importer::check_select(int i, absl::Span<const Ref> refs) const {
  if (def_.node(i).op() != "Select" || refs.size() != 3 || spec(refs[0]).shape.rank() != 1 || spec(refs[1]).shape.rank() <= 1)
    return absl::OkStatus();
  return node_error(absl::StatusCode::kUnimplemented, i,
                    absl::StrCat("a vector condition ", spec(refs[0]).shape.to_string(), " picks rows of x ",
                                 spec(refs[1]).shape.to_string(),
                                 " in TensorFlow 1's Select; tapeflow's Select broadcasts it as SelectV2 does (from the "
                                 "last dim): give the condition x's shape"));
}

// BatchMatMulV3's per-input dtypes must be one, the inputs'.
absl::Status Importer::check_batch_matmul(int i, absl::Span<const Ref> refs) const {
  const proto::NodeDef& nd = def_.node(i);
  if (nd.op() != "BatchMatMulV3") return absl::OkStatus();
  const auto& attrs = nd.attr();
  for (int k = 0; k < 2 && k < static_cast<int>(refs.size()); ++k) {
    const char* t = k == 0 ? "Ta" : "Tb";
    const auto it = attrs.find(t), out = attrs.find("Tout");
    if (it == attrs.end()) continue;
    if (out != attrs.end() && it->second.type() != out->second.type())
      return node_error(absl::StatusCode::kUnimplemented, i,
                        absl::StrCat("attr '", t, "' (", proto::DataType_Name(it->second.type()), ") differs from 'Tout' (",
                                     proto::DataType_Name(out->second.type()),
                                     "); tapeflow's MatMul multiplies and returns one dtype"));
    const absl::StatusOr<DType> declared = from_proto_dtype(it->second.type());
    if (!declared.ok() || *declared != spec(refs[static_cast<size_t>(k)]).dtype)
      return node_error(absl::StatusCode::kInvalidArgument, i,
                        absl::StrCat("attr '", t, "' says ", proto::DataType_Name(it->second.type()), " but input ", k,
                                     " is ", dtype_name(spec(refs[static_cast<size_t>(k)]).dtype)));
  }
  return absl::OkStatus();
}

// Note [Squeeze of unknown dims] (eager/ops/array.cc): the dims known to be 1, explicitly.
void Importer::squeeze_known_ones(Node& node, absl::Span<const Ref> tensors) const {
  if (tensors.size() != 1 || !node.attrs.get_or<std::vector<int64_t>>("axes", {}).empty()) return;
  const Shape& in = spec(tensors[0]).shape;
  if (in.is_fully_defined()) return;
  std::vector<int64_t> ones;
  for (int d = 0; d < in.rank(); ++d)
    if (in.dim(d) == 1) ones.push_back(d);
  if (!ones.empty()) {
    node.attrs.set("axes", std::move(ones));
  } else {  // nothing known to be 1: nothing to drop
    node.op = op_of_identity_;
    node.attrs = AttrMap();
  }
}

// A PlaceholderWithDefault, read as an Identity: fed, it takes any tensor of its shape attr, so
// its output keeps the dims that attr and its default agree on.
absl::Status Importer::widen_placeholder_with_default(int i, int planned) {
  const proto::NodeDef& nd = def_.node(i);
  if (nd.op() != "PlaceholderWithDefault") return absl::OkStatus();
  const auto s = nd.attr().find("shape");
  if (s == nd.attr().end() || !s->second.has_shape() || s->second.shape().unknown_rank()) return absl::OkStatus();
  absl::StatusOr<AttrValue> declared = attr_from_proto(s->second, "shape");
  if (!declared.ok()) return node_error(declared.status().code(), i, absl::StrCat("attr 'shape' ", declared.status().message()));
  const Shape& wide = std::get<Shape>(*declared);
  Shape& out = planned_[static_cast<size_t>(planned)]->outputs[0].shape;
  bool holds = wide.rank() == out.rank();
  for (int d = 0; holds && d < wide.rank(); ++d) holds = wide.dim(d) < 0 || out.dim(d) < 0 || wide.dim(d) == out.dim(d);
  if (!holds)
    return node_error(absl::StatusCode::kInvalidArgument, i,
                      absl::StrCat("attr 'shape' ", wide.to_string(), " does not hold its default's shape ", out.to_string()));
  std::vector<int64_t> dims(static_cast<size_t>(out.rank()));
  for (int d = 0; d < out.rank(); ++d) dims[static_cast<size_t>(d)] = wide.dim(d) == out.dim(d) ? out.dim(d) : -1;
  out = Shape(std::move(dims));
  return absl::OkStatus();
}

// A list(type) attr (IdentityN's T, Print's U) must list the tensor inputs' dtypes from f.index on.
absl::Status Importer::check_types_of_inputs(int i, const FormItem& f, const proto::AttrValue& value,
                                             absl::Span<const Ref> tensors) const {
  std::vector<std::string> actual;
  for (size_t k = static_cast<size_t>(f.index); k < tensors.size(); ++k) actual.push_back(dtype_name(spec(tensors[k]).dtype));
  std::vector<std::string> declared;
  for (int t : value.list().type()) {
    absl::StatusOr<DType> d = from_proto_dtype(static_cast<proto::DataType>(t));
    declared.push_back(d.ok() ? dtype_name(*d) : proto::DataType_Name(static_cast<proto::DataType>(t)));
  }
  if (value.has_list() && declared == actual) return absl::OkStatus();
  return node_error(absl::StatusCode::kInvalidArgument, i,
                    absl::StrCat("attr '", f.name, "' lists [", absl::StrJoin(declared, ", "), "] but the inputs are [",
                                 absl::StrJoin(actual, ", "), "]"));
}

absl::Status Importer::plan_node(int i) {
  const proto::NodeDef& nd = def_.node(i);
  auto fail = [&](const absl::Status& s) { return node_error(s.code(), i, s.message()); };
  absl::StatusOr<SharedDeviceSpec> device = device_of(nd.device());
  if (!device.ok()) return fail(device.status());
  // The data inputs are edges [first, data_end) (link_inputs: control inputs come last).
  int first = first_edge_[i], data_end = first;
  std::vector<int> control;
  for (int k = first; k < first_edge_[i + 1]; ++k) {
    if (edges_[k].control()) control.push_back(outputs_of_[edges_[k].src]);
    else data_end = k + 1;
  }
  const OpDef& op = *op_of_[static_cast<size_t>(i)];
  // Note [Variables in a GraphDef]: input 0 of a read or update is the variable's handle.
  const bool variable_op = &op == &kReadVariableOp || &op == &kAssignVariableOp || &op == &kAssignAddVariableOp ||
                           &op == &kAssignSubVariableOp;
  int handle = -1;
  if (variable_op) {
    if (data_end == first) return node_error(absl::StatusCode::kInvalidArgument, i, "needs the variable's handle as input 0");
    const int src = outputs_of_[edges_[first].src];
    if (planned(src).op != &kVarHandleOp)
      return node_error(absl::StatusCode::kInvalidArgument, i,
                        absl::StrCat("input 0 '", nd.input(0), "' must be a VarHandleOp, not a ", planned(src).op->type));
    handle = src;
    control.push_back(src);
    ++first;
  }
  std::vector<Ref>& refs = refs_;  // scratch: add_planned copies them into the Node
  refs.clear();
  for (int k = first; k < data_end; ++k) {
    absl::StatusOr<Ref> r = resolve(edges_[k], nd.input(k - first_edge_[i]));
    if (!r.ok()) return fail(r.status());
    refs.push_back(*r);
  }
  if (graph_def_internal::composite_op(op.type) == &op) return plan_composite(i, refs, control, *device);
  if (is_functional_op(&op)) [[unlikely]] return plan_functional(i, refs, control, *device);
  auto node = new_node();
  node->name = nd.name();
  node->op = &op;
  node->requested_device = *std::move(device);
  const Form& form = form_of(op);
  // Which TensorFlow inputs are tensors and which carry attrs (Note [GraphDef form]).
  const int num_tensors = static_cast<int>(refs.size()) - form.num_const_inputs;
  if ((op.num_inputs >= 0 && num_tensors != op.num_inputs) || (op.num_inputs < 0 && num_tensors < 1))
    return node_error(absl::StatusCode::kInvalidArgument, i,
                      absl::StrCat("expects ", op.num_inputs >= 0 ? absl::StrCat(op.num_inputs) : "at least 1",
                                   variable_op ? " value input(s) after the handle" : " input(s)",
                                   form.num_const_inputs ? absl::StrCat(" and ", form.num_const_inputs, " constant(s)") : "",
                                   "; got ", refs.size()));
  std::vector<int> layout(static_cast<size_t>(num_tensors), -1);  // -1: a tensor input; else a form item
  for (int k = 0; k < static_cast<int>(form.items.size()); ++k) {
    const FormItem& f = form.items[k];
    if (f.kind != FormItem::Kind::kInput) continue;
    const size_t pos = f.position < 0 ? layout.size() : std::min(layout.size(), static_cast<size_t>(f.position));
    layout.insert(layout.begin() + static_cast<std::ptrdiff_t>(pos), k);
  }
  std::vector<Ref> tensors;
  for (size_t k = 0; k < layout.size(); ++k) {
    if (layout[k] < 0) { tensors.push_back(refs[k]); continue; }
    const FormItem& f = form.items[layout[k]];
    absl::StatusOr<AttrValue> v = const_input(refs[k], f, std::string_view(op.type) == "Reshape" && f.name == "shape");
    if (!v.ok() && graph_def_internal::run_time_form_of(op.type) != nullptr) needs_run_time_form_ = i;
    if (!v.ok()) return fail(v.status());
    node->attrs.set(f.name, *std::move(v));
  }
  const auto& attrs = nd.attr();
  if (&op == op_of_select_) TF_RETURN_IF_ERROR(check_select(i, refs));
  // A BatchMatMul* read as MatMul (alias_of). Compared only when the op is MatMul's.
  const bool batch_matmul = &op == op_of_matmul_ && nd.op() != "MatMul";
  if (batch_matmul) TF_RETURN_IF_ERROR(check_batch_matmul(i, refs));
  for (const FormItem& f : form.items) {
    if (f.kind != FormItem::Kind::kAttr) continue;
    std::string renamed;
    const std::string* key = &f.tf_name;
    if (batch_matmul) key = &(renamed = batch_matmul_attr(f.tf_name));
    auto it = attrs.find(*key);
    if (&op == &kPlaceholderOp && f.tf_name == "shape" &&
        (it == attrs.end() || (it->second.has_shape() && it->second.shape().unknown_rank()))) {
      // Note [Placeholders of unknown rank]: tapeflow's shapes always have a rank. A placeholder
      // that input_map replaces takes the shape of its replacement (nothing reads its own).
      const auto m = mapped_.find(absl::StrCat(nd.name(), ":0"));
      if (m == mapped_.end())
        return node_error(absl::StatusCode::kUnimplemented, i,
                          absl::StrCat("attr 'shape' ", it == attrs.end() ? "is missing" : "has a shape of unknown rank",
                                       ", which tapeflow cannot hold: give import_graph_def an input_map entry '",
                                       nd.name(), ":0' with a tensor of the shape it will be fed"));
      node->attrs.set("shape", spec(m->second).shape);
      continue;
    }
    if (it == attrs.end() && !f.has_default)
      return node_error(absl::StatusCode::kInvalidArgument, i, absl::StrCat("attr '", *key, "' is missing"));
    // "hw" reads NHWC's [1, h, w, 1] as {h, w}; an NCHW node's [1, 1, h, w] stays whole.
    const auto format = attrs.find("data_format");
    const bool nchw = format != attrs.end() && format->second.s() == "NCHW";
    absl::StatusOr<AttrValue> v = attr_from_proto(it == attrs.end() ? f.default_value : it->second,
                                                  nchw && f.value_kind == "hw" ? "ints" : f.value_kind);
    if (!v.ok()) return node_error(v.status().code(), i, absl::StrCat("attr '", *key, "' ", v.status().message()));
    if (f.value_kind == "float")
      if (auto bits = attrs.find(absl::StrCat("_", f.tf_name, "_f64")); bits != attrs.end())
        v = AttrValue(std::bit_cast<double>(static_cast<int64_t>(bits->second.i())));
    node->attrs.set(f.name, *std::move(v));
  }
  if (&op == op_of_squeeze_) squeeze_known_ones(*node, tensors);
  for (const auto& [key, value] : attrs) {  // tapeflow-only attrs
    if (key.size() < 2 || key[0] != '_' || key == "_class" || key.ends_with("_f64") || form.lists(key.substr(1))) continue;
    const std::string kind = natural_kind(value);
    if (kind.empty()) continue;
    absl::StatusOr<AttrValue> v = attr_from_proto(value, kind);
    if (v.ok()) node->attrs.set(key.substr(1), *std::move(v));
  }
  for (const FormItem& f : form.items) {  // fixed attrs TensorFlow may set otherwise
    if (f.kind != FormItem::Kind::kFixed) continue;
    auto it = attrs.find(f.name);
    if (it != attrs.end() && !(f.index_dtype && it->second.value_case() == proto::AttrValue::kType &&
                               it->second.type() == proto::DT_INT64) &&
        it->second.SerializeAsString() != f.default_value.SerializeAsString())
      return node_error(absl::StatusCode::kUnimplemented, i,
                        absl::StrCat("attr '", f.name, "' = ", it->second.ShortDebugString(),
                                     " is not supported; tapeflow supports ", f.default_value.ShortDebugString()));
  }
  // Op-specific parts: the Const's value, the shape a variable op takes from its handle.
  if (&op == &kConstOp) {
    auto it = attrs.find("value");
    if (it == attrs.end() || !it->second.has_tensor()) return node_error(absl::StatusCode::kInvalidArgument, i, "attr 'value' (a tensor) is missing");
    absl::StatusOr<Tensor> value = tensor_from_proto(it->second.tensor());
    if (!value.ok()) return node_error(value.status().code(), i, absl::StrCat("attr 'value': ", value.status().message()));
    if (value->dtype() != node->attrs.get<DType>("dtype"))
      return node_error(absl::StatusCode::kInvalidArgument, i,
                        absl::StrCat("attr 'dtype' is ", dtype_name(node->attrs.get<DType>("dtype")), " but the value is ",
                                     dtype_name(value->dtype())));
    node->attrs.set("shape", value->shape());
    node->value = *std::move(value);
  }
  if (variable_op) {
    const DType var_dtype = planned(handle).attrs.get<DType>("dtype");
    if (node->attrs.get<DType>("dtype") != var_dtype || (!tensors.empty() && spec(tensors[0]).dtype != var_dtype))
      return node_error(absl::StatusCode::kInvalidArgument, i,
                        absl::StrCat("variable '", def_.node(i).input(0), "' holds ", dtype_name(var_dtype),
                                     "; this node has dtype ", dtype_name(node->attrs.get<DType>("dtype")),
                                     tensors.empty() ? "" : absl::StrCat(" and a value of ", dtype_name(spec(tensors[0]).dtype))));
    node->attrs.set("shape", planned(handle).attrs.get<Shape>("shape"));
  }
  if (&op == &kVarHandleOp && !node->attrs.get<Shape>("shape").is_fully_defined())
    return node_error(absl::StatusCode::kInvalidArgument, i, "a variable's shape must be fully defined");
  absl::StatusOr<int> id = add_planned(std::move(node), tensors, control, names_[static_cast<uint32_t>(i)]);
  if (!id.ok()) return fail(id.status());
  if (handle >= 0) variable_uses_.emplace_back(*id, handle);
  if (&op == op_of_identity_) TF_RETURN_IF_ERROR(widen_placeholder_with_default(i, *id));
  // Type attrs must agree with the tensors (a Const feeding an Add of another T, ...).
  const Node& done = planned(*id);
  for (const FormItem& f : form.items) {
    auto it = attrs.find(f.name);
    if (it == attrs.end()) continue;
    if (f.kind == FormItem::Kind::kCount && it->second.i() != static_cast<int64_t>(tensors.size()))
      return node_error(absl::StatusCode::kInvalidArgument, i,
                        absl::StrCat("attr '", f.name, "' is ", it->second.i(), " but the node has ", tensors.size(), " inputs"));
    if (f.kind == FormItem::Kind::kTypesOfInputs) TF_RETURN_IF_ERROR(check_types_of_inputs(i, f, it->second, tensors));
    if (f.kind != FormItem::Kind::kTypeOf) continue;
    const bool have = f.of_output ? f.index < static_cast<int>(done.outputs.size()) : f.index < static_cast<int>(tensors.size());
    if (!have) continue;
    const DType actual = f.of_output ? done.outputs[f.index].dtype : spec(tensors[f.index]).dtype;
    absl::StatusOr<DType> declared = it->second.has_type() ? from_proto_dtype(it->second.type())
                                                           : absl::InvalidArgumentError("not a type");
    if (!declared.ok() || *declared != actual)
      return node_error(absl::StatusCode::kInvalidArgument, i,
                        absl::StrCat("attr '", f.name, "' says ",
                                     declared.ok() ? dtype_name(*declared) : it->second.ShortDebugString().c_str(),
                                     " but ", f.of_output ? "output " : "input ", f.index, " is ", dtype_name(actual)));
  }
  outputs_of_[i] = *id;
  return read_colocation(i, *id);
}

absl::Status Importer::plan_composite(int i, absl::Span<const Ref> inputs, absl::Span<const int> control,
                                      const SharedDeviceSpec& device) {
  const proto::NodeDef& nd = def_.node(i);
  std::vector<TensorSpec> specs;
  std::vector<std::optional<Tensor>> constants;  // the values the import knows (Note [Folded constant inputs])
  for (const Ref& r : inputs) {
    specs.push_back(spec(r));
    std::optional<Folded> f = fold(r, 0);
    constants.push_back(f && !f->partial ? std::optional<Tensor>(f->value) : std::nullopt);
  }
  absl::StatusOr<graph_def_internal::CompositeBody> body = graph_def_internal::build_composite(nd, specs, constants);
  if (!body.ok()) return node_error(body.status().code(), i, body.status().message());
  const std::vector<const Node*> nodes = body->graph.state()->snapshot();
  std::vector<int> planned_of(nodes.size(), -1);  // scratch node -> its planned index
  auto ref_of = [&](const TensorRef& r) {
    return r.node < body->inputs ? inputs[static_cast<size_t>(r.node)] : output_ref(planned_of[static_cast<size_t>(r.node)], r.index);
  };
  for (size_t j = static_cast<size_t>(body->inputs); j < nodes.size(); ++j) {
    const Node& from = *nodes[j];
    auto node = new_node();
    const bool result = static_cast<int>(j) == body->output.node;
    node->name = result ? nd.name() : absl::StrCat(nd.name(), "/", from.name);
    node->op = from.op;
    node->attrs = from.attrs;
    node->value = from.value;
    node->requested_device = device;
    std::vector<Ref> refs;
    for (const TensorRef& r : from.inputs) refs.push_back(ref_of(r));
    std::vector<int> after(control.begin(), control.end());
    for (int c : from.control_inputs)
      if (c >= body->inputs) after.push_back(planned_of[static_cast<size_t>(c)]);
    absl::StatusOr<int> k = add_planned(std::move(node), refs, after, result ? names_[static_cast<uint32_t>(i)] : std::string_view());
    if (!k.ok()) return node_error(k.status().code(), i, k.status().message());
    planned_of[j] = *k;
    if (!result) composite_nodes_.push_back(*k);
    TF_RETURN_IF_ERROR(read_colocation(i, *k));  // the whole composite sits where the node asked
  }
  outputs_of_[i] = planned_of[static_cast<size_t>(body->output.node)];
  return absl::OkStatus();
}

absl::Status Importer::plan_functional(int i, absl::Span<const Ref> inputs, absl::Span<const int> control,
                                       const SharedDeviceSpec& device) {
  std::vector<TensorSpec> specs;
  for (const Ref& r : inputs) specs.push_back(spec(r));
  const OpDef& op = *op_of_[static_cast<size_t>(i)];
  auto p = graph_def_internal::plan_functional_node(def_.node(i), op, specs, loc_);
  if (!p.ok()) return node_error(p.status().code(), i, p.status().message());
  auto node = new_node();
  node->name = def_.node(i).name();
  node->op = &op;
  node->requested_device = device;
  node->attrs = std::move(p->attrs);
  node->outputs = std::move(p->outputs);
  node->set_functions(std::move(p->bodies));
  absl::StatusOr<int> id = add_planned(std::move(node), inputs, control, names_[static_cast<uint32_t>(i)], /*infer=*/false);
  if (!id.ok()) return node_error(id.status().code(), i, id.status().message());
  outputs_of_[i] = *id;
  return read_colocation(i, *id);
}

void Importer::rename_composite_nodes() {
  absl::flat_hash_set<std::string> taken;  // lowercased, as the graph compares names
  for (int i = 0; i < def_.node_size(); ++i) taken.insert(absl::AsciiStrToLower(def_.node(i).name()));
  for (int k : composite_nodes_) {
    Node& node = *planned_[static_cast<size_t>(k)];
    const std::string base = node.name;
    for (int n = 1; taken.contains(absl::AsciiStrToLower(node.name)); ++n) node.name = absl::StrCat(base, "_", n);
    taken.insert(absl::AsciiStrToLower(node.name));
    planned_names_[static_cast<size_t>(k)] = node.name;
  }
}

// Binds an imported VarHandleOp to a new graph Variable: the Variable constructor asks its
// context to create the nodes, and this context answers with the ones already imported.
class BindVariableContext final : public GraphBuildingContext {
 public:
  BindVariableContext(Graph graph, GraphVariableInfo info) : GraphBuildingContext(std::move(graph), nullptr), info_(info) {}
  GraphVariableInfo create_variable(const Variable&, const Tensor&, std::source_location) override { return info_; }

 private:
  GraphVariableInfo info_;
};

std::vector<ImportedElement> Importer::commit(std::string_view name) {
  GraphState& state = *graph_.state();
  const std::string prefix = name.empty() ? std::string() : state.unique_name(name);
  // Each VarHandleOp's initializer "<v>/Assign", found by the names as planned.
  absl::flat_hash_map<int, int> init_of;  // planned VarHandleOp -> planned initializer
  for (const auto& [use, handle] : variable_uses_) {
    const std::string& v = planned(handle).name;
    const std::string& n = planned(use).name;
    if (planned(use).op == &kAssignVariableOp && n.size() == v.size() + 7 && n.starts_with(v) && n.ends_with("/Assign"))
      init_of[handle] = use;
  }
  const int first = state.add_nodes_unique(std::move(planned_), planned_names_, prefix, base_);
  // From here on planned node k is graph node first + k.
  for (const auto& [k, graph_def_nodes] : colocations_) {
    std::vector<std::string> names;
    for (int x : graph_def_nodes) names.push_back(state.node(first + outputs_of_[x]).name);
    state.mutable_node(first + k).set_colocate_with(std::move(names));
  }
  absl::flat_hash_map<int, Variable> variable_of;  // planned VarHandleOp -> its Variable
  for (int k : variable_handles_) {
    const Node& handle = state.node(first + k);
    const auto init = init_of.find(k);
    const int init_id = init == init_of.end() ? -1 : first + init->second;
    const DType dtype = handle.attrs.get<DType>("dtype");
    const Shape shape = handle.attrs.get<Shape>("shape");
    Tensor initial = init_id >= 0 ? state.tensor(state.node(init_id).inputs[0]) : Tensor::from_host(dtype, shape, nullptr);
    const bool trainable = handle.attrs.get_or<bool>("trainable", true);
    BindVariableContext ctx(graph_, GraphVariableInfo{graph_.state(), first + k, init_id});
    std::optional<Variable> variable;
    {
      ContextGuard guard(&ctx);
      variable.emplace(initial, handle.name, trainable, loc_);
    }
    state.mutable_node(first + k).variable = *variable;
    variable_of.emplace(k, *variable);
  }
  for (const auto& [use, handle] : variable_uses_) state.mutable_node(first + use).variable = variable_of.at(handle);
  for (int k : variable_handles_) {
    const auto init = init_of.find(k);
    if (init == init_of.end()) continue;  // Note [Variables in a GraphDef]: nobody initialises it
    const Variable& variable = variable_of.at(k);
    state.add_variable(variable.id(), {first + k, first + init->second});
    graph_.add_to_collection(GraphKeys::kGlobalVariables, variable);
    if (state.node(first + k).attrs.get_or<bool>("trainable", true))
      graph_.add_to_collection(GraphKeys::kTrainableVariables, variable);
  }
  std::vector<ImportedElement> out;
  for (const auto& [is_tensor, where] : returns_) {
    if (is_tensor) out.emplace_back(state.tensor({first + where.first, where.second}));
    else out.emplace_back(Operation(graph_.state(), first + where.first));
  }
  return out;
}

}  // namespace

// After an import of a rewritten GraphDef: the placeholders whose defaults chose branches may
// not be fed, and their tensors (asked for after the caller's) leave the result.
[[gnu::cold]] static void finish_tf1_rewrite(const Graph& graph, const graph_def_internal::ResolvedControlFlow& resolved,
                                             size_t returned, std::vector<ImportedElement>& out) {
  for (size_t k = 0; k < resolved.decided_by_default.size(); ++k) {
    const Tensor& placeholder = std::get<Tensor>(out[returned + k]);
    graph.state()->prevent_feeding(TensorRef{placeholder.symbolic().node, placeholder.symbolic().output},
                                   resolved.decided_by_default[k].why);
  }
  out.resize(returned);
}

// import_graph_def with the functions of `library` (graph_def's, or for a body its GraphDef's).
static std::vector<ImportedElement> import_into(const Graph& graph, const GraphDef& graph_def,
                                                const proto::FunctionDefLibrary& library,
                                                const std::map<std::string, Tensor>& input_map,
                                                const std::vector<std::string>& return_elements, std::string_view name,
                                                std::source_location loc) {
  std::optional<GraphDef> functionalized;  // Note [TF1 while loops]: imported after this scope
  {
    graph_def_internal::FunctionBodyScope bodies(library);  // Note [Functional control flow]
    absl::StatusOr<std::optional<GraphDef>> inlined =  // Note [Inlined function calls]
        inline_function_calls(graph_def, library, graph_def_internal::function_index(library));
    throw_if_error(inlined.status(), loc);
    // A GraphDef imports in one pass of this loop; a second runs only after the rewrite of
    // TensorFlow 1's control flow and Asserts, when the first failed on them.
    const GraphDef* def = *inlined ? &**inlined : &graph_def;
    const std::map<std::string, Tensor>* map = &input_map;
    const std::vector<std::string>* elements = &return_elements;
    std::optional<graph_def_internal::ResolvedControlFlow> resolved;
    std::vector<std::string> resolved_elements;
    std::optional<GraphDef> arrays, lists;  // Note [TensorArrays in a GraphDef], Note [TensorLists in a GraphDef]
    GraphDef run_time_forms;                // Note [Fills of run-time shape] (eager/ops/creation.cc)
    for (;;) {
      Importer importer(graph, *def, library, *map, loc);
      const absl::Status planned = importer.plan(*elements);
      if (planned.ok()) {
        std::vector<ImportedElement> out = importer.commit(name);
        if (resolved) finish_tf1_rewrite(graph, *resolved, return_elements.size(), out);
        return out;
      }
      if (const int k = importer.needs_run_time_form(); k >= 0) {  // one node more each time round
        if (def != &run_time_forms) run_time_forms = *def;
        run_time_forms.mutable_node(k)->set_op(graph_def_internal::run_time_form_of(run_time_forms.node(k).op()));
        def = &run_time_forms;
        continue;
      }
      if (!lists && !resolved) {
        absl::StatusOr<std::optional<GraphDef>> rewritten = graph_def_internal::rewrite_tensor_lists(*def);
        throw_if_error(rewritten.ok() || !importer.lacks_types_no_rewrite_reads() ? rewritten.status() : planned, loc);
        if (*rewritten) {
          lists = std::move(**rewritten);
          def = &*lists;
          continue;
        }
      }
      if (!arrays && !resolved && importer.uses_tensor_arrays()) {
        absl::StatusOr<std::optional<GraphDef>> rewritten = graph_def_internal::rewrite_tensor_arrays(*def);
        throw_if_error(rewritten.ok() || !importer.lacks_types_no_rewrite_reads() ? rewritten.status() : planned, loc);
        if (!*rewritten) throw_if_error(planned, loc);  // not rewritten: the plan's own error
        arrays = std::move(**rewritten);
        def = &*arrays;
        continue;
      }
      if (resolved || !importer.needs_tf1_rewrite()) throw_if_error(planned, loc);
      // Note [Control flow v1 in a GraphDef]: the branches chosen, the GraphDef imports without them.
      absl::StatusOr<graph_def_internal::ResolvedControlFlow> r =
          graph_def_internal::resolve_v1_control_flow(*def, input_map, return_elements);
      if (r.status().code() == absl::StatusCode::kUnimplemented && bodies.outermost()) {
        // Note [TF1 conds as If], Note [TF1 while loops]: what it cannot choose, into functions,
        // imported below (their bodies are built from the new library).
        absl::StatusOr<std::optional<GraphDef>> f = graph_def_internal::functionalize_v1_control_flow(*def, library, input_map);
        throw_if_error(f.status(), loc);
        if (*f) {
          functionalized = std::move(**f);
          break;
        }
      }
      throw_if_error(r.status(), loc);
      resolved = *std::move(r);
      def = &resolved->graph_def;
      map = &resolved->input_map;
      resolved_elements = resolved->return_elements;
      for (const auto& d : resolved->decided_by_default) resolved_elements.push_back(d.tensor);
      elements = &resolved_elements;
    }
  }
  return import_into(graph, *functionalized, functionalized->library(), input_map, return_elements, name, loc);
}

std::vector<ImportedElement> import_graph_def(const Graph& graph, const GraphDef& graph_def,
                                              const std::map<std::string, Tensor>& input_map,
                                              const std::vector<std::string>& return_elements, std::string_view name,
                                              std::source_location loc) {
  return import_into(graph, graph_def, graph_def.library(), input_map, return_elements, name, loc);
}

std::vector<ImportedElement> graph_def_internal::import_with_library(const Graph& graph, const GraphDef& graph_def,
                                                                     const proto::FunctionDefLibrary& library,
                                                                     const std::vector<std::string>& return_elements,
                                                                     std::source_location loc) {
  return import_into(graph, graph_def, library, {}, return_elements, "", loc);
}

std::vector<ImportedElement> import_graph_def(const GraphDef& graph_def, const std::map<std::string, Tensor>& input_map,
                                              const std::vector<std::string>& return_elements, std::string_view name,
                                              std::source_location loc) {
  return import_graph_def(get_default_graph(), graph_def, input_map, return_elements, name, loc);
}

Graph graph_from_graph_def(const GraphDef& graph_def, std::source_location loc) {
  Graph graph;
  import_graph_def(graph, graph_def, {}, {}, "", loc);
  return graph;
}

}  // namespace tapeflow
