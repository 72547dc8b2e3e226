#include "graph/graph.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"

namespace tapeflow {

namespace {
const NodeExtras& no_extras() {
  static const NodeExtras* const none = new NodeExtras();
  return *none;
}
}  // namespace

const std::vector<std::string>& Node::colocate_with() const { return (extras ? *extras : no_extras()).colocate_with; }
const std::vector<std::shared_ptr<const FunctionBody>>& Node::functions() const {
  return (extras ? *extras : no_extras()).functions;
}
void Node::set_colocate_with(std::vector<std::string> names) {
  auto next = std::make_shared<NodeExtras>(extras ? *extras : NodeExtras());
  next->colocate_with = std::move(names);
  extras = std::move(next);
}
void Node::set_functions(std::vector<std::shared_ptr<const FunctionBody>> functions) {
  auto next = std::make_shared<NodeExtras>(extras ? *extras : NodeExtras());
  next->functions = std::move(functions);
  extras = std::move(next);
}

std::string describe_node(const Node& node) {
  std::string where = node.loc.line() ? absl::StrCat(node.imported ? " imported at " : " created at ",
                                                     node.loc.file_name(), ":", node.loc.line())
                                      : "";
  return absl::StrCat("node '", node.name, "' (", node.op ? node.op->type : "?", ")", where);
}

// ---- GraphState ----

std::string GraphState::node_name(int node) const { return this->node(node).name; }
std::string GraphState::node_type(int node) const { return this->node(node).op->type; }
Tensor GraphState::node_input(int node, int index) const {
  return tensor(this->node(node).inputs.at(static_cast<size_t>(index)));
}

int GraphState::add_node(Node node) {
  auto owned = std::make_unique<Node>(std::move(node));
  std::lock_guard<std::mutex> lock(mu_);
  return add_node_locked(std::move(owned));
}

int GraphState::add_node_locked(std::unique_ptr<Node> node) {
  const int id = static_cast<int>(nodes_.size());
  for (const TensorRef& in : node->inputs)
    if (in.node < 0 || in.node >= id || in.index < 0 ||
        in.index >= static_cast<int>(nodes_[in.node]->outputs.size()))
      throw InternalError(absl::StrCat("[graph] node '", node->name, "' has an input from a missing node output"),
                          node->loc);
  for (int c : node->control_inputs)
    if (c < 0 || c >= id) throw InternalError(absl::StrCat("[graph] node '", node->name, "' has a bad control input"), node->loc);
  node->id = id;
  nodes_.push_back(std::move(node));  // first: by_name_ reads the names of the nodes it indexes
  const std::string& name = nodes_.back()->name;
  try {
    // Its name is now in use, given explicitly or not (Note [Names in use]).
    by_name_.insert_or_assign(name, static_cast<uint32_t>(id));
  } catch (...) {  // out of memory: the node is not added, and no index entry names it
    if (by_name_.find(name) == id) by_name_.erase(name);
    nodes_.pop_back();
    throw;
  }
  ++version_;
  return id;
}

// Note [Names in use]
// TensorFlow's Graph.unique_name: the first use of a name keeps it; later uses append _1, _2...
// skipping names already taken, compared case-insensitively. A name is in use when a node has
// it (by_name_ hashes names lowercased, so it answers that without a second table) or when
// names_in_use_ lists it (a name scope, a name handed out before its node exists). Its count
// of uses is names_in_use_'s when listed there, else 1 for a node's name. So adding a node, the
// import's 100k included, touches one table, and names_in_use_ stays small: a 100k-node import
// with a lowercased copy of every name in a second table was 5-8% slower (Note [Linear import],
// graph/graph_def_import.cc).
//
// `name` becomes the unique name; `key` is it lowercased. Returns whether `name` changed.
// Called with mu_ held.
bool GraphState::make_unique_locked(std::string& name, std::string_view key, bool record) {
  int* uses = names_in_use_.find(key);
  if (uses == nullptr) {
    if (!by_name_.contains_folded(key)) {  // the first use
      if (record) names_in_use_.try_emplace(key, 1);
      return false;
    }
    uses = names_in_use_.try_emplace(key, 1).first;  // a node's name: used once so far
  }
  int i = (*uses)++;
  std::string candidate;
  do {
    candidate = absl::StrCat(absl::string_view(key.data(), key.size()), "_", i++);
  } while (in_use_locked(candidate));
  if (record) names_in_use_.try_emplace(candidate, 1);
  absl::StrAppend(&name, "_", i - 1);
  return true;
}

std::string GraphState::unique_name(std::string_view name_view) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string name(name_view);
  make_unique_locked(name, absl::AsciiStrToLower(name), /*record=*/true);
  return name;
}

int GraphState::add_nodes_unique(std::vector<std::unique_ptr<Node>> nodes, absl::Span<const std::string_view> names,
                                 std::string_view prefix, int assumed_first) {
  if (names.size() != nodes.size())
    throw InternalError(absl::StrCat("[graph] add_nodes_unique: ", nodes.size(), " nodes but ", names.size(), " names"));
  std::lock_guard<std::mutex> lock(mu_);
  const int first = static_cast<int>(nodes_.size());
  const size_t n = nodes.size();
  // Sized once: a table grown by rehashing touches fresh pages twice (Note [Linear import]). An
  // empty graph (graph_from_graph_def) takes the batch's array as its own.
  const bool adopt = nodes_.empty();
  if (adopt) nodes_ = std::move(nodes);
  else nodes_.reserve(nodes_.size() + n);
  by_name_.reserve(by_name_.size() + n);
  // Node k's full name and its lowercased key are made, and its slot fetched, kAhead nodes
  // before it is added: at 100k nodes the table is larger than the caches, and a lookup that
  // waits on memory costs more than the rest of the node's work. The Node itself is only
  // written when its name or its id differ from the planned ones: reading 100k Nodes back from
  // memory was half of this loop's time.
  constexpr size_t kAhead = 8;
  std::array<std::string, kAhead> full_names, keys;
  const absl::string_view prefix_view(prefix.data(), prefix.size());
  auto stage = [&](size_t k) {
    const absl::string_view name(names[k].data(), names[k].size());
    std::string& full = full_names[k % kAhead];
    if (prefix.empty()) full.assign(name.data(), name.size());
    else full = absl::StrCat(prefix_view, "/", name);
    std::string& key = keys[k % kAhead];
    key = full;
    absl::AsciiStrToLower(&key);
    by_name_.prefetch_folded(key);
  };
  for (size_t k = 0; k < std::min(n, kAhead); ++k) stage(k);
  const int shift = first - assumed_first;
  for (size_t k = 0; k < n; ++k) {
    std::string name = std::move(full_names[k % kAhead]);
    const std::string key = std::move(keys[k % kAhead]);
    if (k + kAhead < n) stage(k + kAhead);
    const int id = first + static_cast<int>(k);
    if (!adopt) nodes_.push_back(std::move(nodes[k]));  // first: by_name_ reads the names it indexes
    Node& node = *nodes_[static_cast<size_t>(id)];
    if (!prefix.empty()) node.name = name;
    // The common case in one probe: no name in use equals it, and it is indexed as it is.
    const bool listed = names_in_use_.size() > 0 && names_in_use_.contains(key);
    if (listed || !by_name_.insert_unless_folded(key, static_cast<uint32_t>(id)).second) {
      make_unique_locked(name, key, /*record=*/false);
      node.name = name;
      by_name_.insert_or_assign(node.name, static_cast<uint32_t>(id));
    }
    if (shift != 0) {  // nodes were added since the batch was planned: renumber its own references
      node.id = id;
      for (TensorRef& in : node.inputs) if (in.node >= assumed_first) in.node += shift;
      for (int& c : node.control_inputs) if (c >= assumed_first) c += shift;
    }
  }
  ++version_;
  return first;
}

const Node& GraphState::node(int id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return *nodes_.at(static_cast<size_t>(id));
}

Node& GraphState::mutable_node(int id) {
  std::lock_guard<std::mutex> lock(mu_);
  ++version_;
  return *nodes_.at(static_cast<size_t>(id));
}

int GraphState::num_nodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(nodes_.size());
}

std::vector<const Node*> GraphState::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

int GraphState::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(by_name_.find(name));
}

Tensor GraphState::tensor(TensorRef ref) const {
  const Node& n = node(ref.node);
  const TensorSpec& spec = n.outputs.at(static_cast<size_t>(ref.index));
  auto self = std::const_pointer_cast<GraphState>(shared_from_this());
  return Tensor::make_symbolic(SymbolicRef{self, ref.node, ref.index}, spec.dtype, spec.shape, n.loc);
}

std::vector<int> GraphState::variable_nodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return variables_;
}

void GraphState::add_variable(int64_t variable_id, VariableNodes nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  variables_.push_back(nodes.handle);
  variables_by_id_[variable_id] = nodes;
}

std::optional<GraphState::VariableNodes> GraphState::variable_nodes_of(int64_t variable_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = variables_by_id_.find(variable_id);
  if (it == variables_by_id_.end()) return std::nullopt;
  return it->second;
}

void GraphState::add_to_collection(std::string_view key, CollectionItem item) {
  StoredItem stored = std::visit(
      [&](auto&& v) -> StoredItem {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, Tensor>) {
          if (!v.is_symbolic() || v.symbolic().graph.get() != this)
            throw InvalidArgumentError(
                absl::StrCat("[add_to_collection] collection '", std::string(key),
                             "': only tensors of this graph can be added"), {});
          return TensorRef{v.symbolic().node, v.symbolic().output};
        } else if constexpr (std::is_same_v<V, Operation>) {
          if (v.graph().state().get() != this)
            throw InvalidArgumentError(absl::StrCat("[add_to_collection] collection '", std::string(key),
                                                    "': the operation belongs to another graph"), {});
          return v.id();
        } else {
          return v;
        }
      },
      std::move(item));
  std::lock_guard<std::mutex> lock(mu_);
  ++version_;
  for (auto& [k, items] : collections_)
    if (k == key) { items.push_back(std::move(stored)); return; }
  collections_.emplace_back(std::string(key), std::vector<StoredItem>{std::move(stored)});
}

std::vector<CollectionItem> GraphState::get_collection(std::string_view key) {
  std::vector<StoredItem> items;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [k, v] : collections_) if (k == key) items = v;
  }
  std::vector<CollectionItem> out;
  for (const StoredItem& item : items) {
    if (auto* ref = std::get_if<TensorRef>(&item)) out.emplace_back(tensor(*ref));
    else if (auto* op = std::get_if<int>(&item)) out.emplace_back(Operation(shared_from_this(), *op));
    else if (auto* var = std::get_if<Variable>(&item)) out.emplace_back(*var);
    else out.emplace_back(std::get<std::string>(item));
  }
  return out;
}

std::vector<std::string> GraphState::collection_keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> keys;
  for (const auto& [k, v] : collections_) keys.push_back(k);
  return keys;
}

bool GraphState::is_feedable(TensorRef ref) const {
  std::lock_guard<std::mutex> lock(mu_);
  return !unfeedable_.contains(ref);
}

void GraphState::prevent_feeding(TensorRef ref, std::string_view why) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string& reason = unfeedable_[ref];
  if (!why.empty()) reason = std::string(why);
  ++version_;
}

std::string GraphState::why_not_feedable(TensorRef ref) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = unfeedable_.find(ref);
  return it == unfeedable_.end() ? std::string() : it->second;
}

uint64_t GraphState::version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return version_;
}

// ---- Operation ----

namespace {
[[noreturn]] void throw_empty_operation() {
  throw FailedPreconditionError(
      "[Operation] This Operation is empty (default-constructed): it names no node. Get one from a graph "
      "(producer(t), graph.get_operation_by_name(name)) or check op.defined() first",
      std::source_location());
}
}  // namespace

const Node& Operation::node() const {
  if (graph_ == nullptr) throw_empty_operation();
  return graph_->node(node_);
}
const std::string& Operation::name() const { return node().name; }
std::string Operation::type() const { return node().op->type; }
int Operation::num_outputs() const { return static_cast<int>(node().outputs.size()); }
Tensor Operation::output(int index) const {
  if (index < 0 || index >= num_outputs())
    throw OutOfRangeError(absl::StrCat("[Operation] '", name(), "' has ", num_outputs(), " outputs; asked for output ",
                                       index), {});
  return graph_->tensor({node_, index});
}
std::vector<Tensor> Operation::outputs() const {
  std::vector<Tensor> out;
  for (int i = 0; i < num_outputs(); ++i) out.push_back(graph_->tensor({node_, i}));
  return out;
}
std::vector<Tensor> Operation::inputs() const {
  std::vector<Tensor> out;
  for (const TensorRef& r : node().inputs) out.push_back(graph_->tensor(r));
  return out;
}
std::vector<Operation> Operation::control_inputs() const {
  std::vector<Operation> out;
  for (int c : node().control_inputs) out.emplace_back(graph_, c);
  return out;
}
std::string Operation::device() const { return node().requested_device.to_string(); }
const std::source_location& Operation::location() const { return node().loc; }
const AttrMap& Operation::attrs() const { return node().attrs; }
Graph Operation::graph() const {
  if (graph_ == nullptr) throw_empty_operation();
  return graph_->handle();
}

Operation producer(const Tensor& t, std::source_location loc) {
  if (!t.is_symbolic())
    throw InvalidArgumentError("[producer] the tensor is not a graph tensor (it has no producing operation)", loc);
  return Operation(std::static_pointer_cast<GraphState>(t.symbolic().graph), t.symbolic().node);
}

// ---- Graph ----

Graph::Graph(std::source_location loc) : state_(std::make_shared<GraphState>()) { state_->created_at = loc; }

std::string Graph::describe() const { return state_->describe(); }

std::string GraphState::describe() const {
  if (is_thread_default) return "the thread's default graph (get_default_graph())";
  return absl::StrCat("the graph created at ", created_at.file_name() ? format_location(created_at) : "?");
}

GraphDefaultGuard Graph::as_default() const { return GraphDefaultGuard(*this); }

std::vector<Operation> Graph::get_operations() const {
  std::vector<Operation> ops;
  const int n = state_->num_nodes();
  ops.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ops.emplace_back(state_, i);
  return ops;
}

int Graph::num_nodes() const { return state_->num_nodes(); }

Operation Graph::get_operation_by_name(std::string_view name) const {
  const int id = state_->find(name);
  if (id < 0) {
    // Point at a likely intended name: the same name in another case, or with a suffix.
    std::string hint;
    const std::string lower = absl::AsciiStrToLower(std::string(name));
    for (int i = 0; i < state_->num_nodes() && hint.empty(); ++i) {
      const std::string& n = state_->node(i).name;
      if (absl::AsciiStrToLower(n) == lower || n.starts_with(absl::StrCat(std::string(name), "_")))
        hint = absl::StrCat(" (did you mean '", n, "'?)");
    }
    throw NotFoundError(absl::StrCat("[get_operation_by_name] The graph has no operation named '", std::string(name),
                                     "'", hint, "; it has ", state_->num_nodes(), " operations"),
                        {});
  }
  return Operation(state_, id);
}

Tensor Graph::get_tensor_by_name(std::string_view name) const {
  const size_t colon = name.rfind(':');
  int index = 0;
  if (colon == std::string_view::npos || !absl::SimpleAtoi(std::string(name.substr(colon + 1)), &index) || index < 0)
    throw InvalidArgumentError(absl::StrCat("[get_tensor_by_name] '", std::string(name),
                                            "' is not a tensor name: tensor names look like 'op_name:0'"),
                               {});
  Operation op = get_operation_by_name(name.substr(0, colon));
  return op.output(index);
}

namespace {
TensorRef ref_in(const GraphState& g, const Tensor& t, const char* api) {
  if (!t.is_symbolic() || t.symbolic().graph.get() != &g)
    throw InvalidArgumentError(absl::StrCat("[", api, "] the tensor is not a tensor of this graph"), {});
  return TensorRef{t.symbolic().node, t.symbolic().output};
}
}  // namespace

bool Graph::is_feedable(const Tensor& t) const { return state_->is_feedable(ref_in(*state_, t, "is_feedable")); }
void Graph::prevent_feeding(const Tensor& t, std::string_view why) {
  state_->prevent_feeding(ref_in(*state_, t, "prevent_feeding"), why);
}
std::string Graph::why_not_feedable(const Tensor& t) const {
  return state_->why_not_feedable(ref_in(*state_, t, "why_not_feedable"));
}

void Graph::add_to_collection(std::string_view key, CollectionItem item) { state_->add_to_collection(key, std::move(item)); }
std::vector<CollectionItem> Graph::get_collection(std::string_view key) const { return state_->get_collection(key); }
std::vector<std::string> Graph::get_all_collection_keys() const { return state_->collection_keys(); }

namespace {
std::vector<Variable> variables_in(const Graph& g, const char* key) {
  std::vector<Variable> out;
  for (const CollectionItem& item : g.get_collection(key))
    if (auto* v = std::get_if<Variable>(&item)) out.push_back(*v);
  return out;
}
}  // namespace

std::vector<Variable> Graph::global_variables() const { return variables_in(*this, GraphKeys::kGlobalVariables); }
std::vector<Variable> Graph::trainable_variables() const { return variables_in(*this, GraphKeys::kTrainableVariables); }

Operation Graph::global_variables_initializer(std::source_location loc) const {
  auto scope = as_default();
  return variables_initializer(global_variables(), "init", loc);
}

// One line a node: name = Type(inputs, ^control inputs) -> output dtypes and shapes, its attrs,
// the device it asked for, and the line that made it.
//   y = MatMul(x:0, w/read:0, ^init) -> float32[?,4] {transpose_a=false, transpose_b=false} on /device:CPU:0  # model.cc:12
std::string Graph::to_string() const {
  std::string out;
  for (int i = 0; i < state_->num_nodes(); ++i) {
    const Node& n = state_->node(i);
    std::vector<std::string> ins;
    for (const TensorRef& r : n.inputs) ins.push_back(absl::StrCat(state_->node(r.node).name, ":", r.index));
    for (int c : n.control_inputs) ins.push_back(absl::StrCat("^", state_->node(c).name));
    absl::StrAppend(&out, n.name, " = ", n.op->type, "(", absl::StrJoin(ins, ", "), ")");
    std::vector<std::string> outs;
    for (const TensorSpec& o : n.outputs) outs.push_back(absl::StrCat(dtype_name(o.dtype), o.shape.to_string()));
    absl::StrAppend(&out, " -> ", outs.empty() ? "()" : absl::StrJoin(outs, ", "));
    if (!n.attrs.empty()) absl::StrAppend(&out, " ", n.attrs.to_string());
    if (!n.requested_device.empty()) absl::StrAppend(&out, " on ", n.requested_device.to_string());
    if (n.loc.line() != 0) absl::StrAppend(&out, "  # ", format_location(n.loc));
    out += "\n";
  }
  return out;
}

Graph get_default_graph() {
  if (GraphBuildingContext* ctx = current_graph_context()) return ctx->graph();
  thread_local Graph* fallback = [] {
    Graph* g = new Graph();  // leaked: may outlive thread_local destructors
    g->state()->is_thread_default = true;
    return g;
  }();
  return *fallback;
}

bool building_graph() { return current_graph_context() != nullptr; }

Operation variables_initializer(const std::vector<Variable>& variables, std::string_view name,
                                std::source_location loc) {
  GraphBuildingContext* ctx = current_graph_context();
  if (ctx == nullptr)
    throw FailedPreconditionError("[variables_initializer] no graph is being built (use graph.as_default())", loc);
  std::vector<Operation> inits;
  for (const Variable& v : variables) {
    auto nodes = ctx->graph().state()->variable_nodes_of(v.id());
    if (!nodes)
      throw InvalidArgumentError(absl::StrCat("[variables_initializer] Variable '", v.name(),
                                              "' is not a variable of this graph"),
                                 loc);
    if (nodes->initializer < 0)
      throw InvalidArgumentError(absl::StrCat("[variables_initializer] Variable '", v.name(),
                                              "' has no initializer in this graph (a pass removed it)"),
                                 loc);
    inits.emplace_back(ctx->graph().state(), nodes->initializer);
  }
  return group(inits, name, loc);
}

Operation initializer(const Variable& variable, std::source_location loc) {
  const GraphVariableInfo* info = variable.graph_info();
  std::shared_ptr<GraphBase> graph = info ? info->graph.lock() : nullptr;
  if (!graph)
    throw InvalidArgumentError(absl::StrCat("[initializer] Variable '", variable.name(),
                                            "' is an eager variable: it was initialized when it was created"),
                               loc);
  return Operation(std::static_pointer_cast<GraphState>(graph), info->initializer_node);
}

Operation global_variables_initializer(std::source_location loc) {
  return get_default_graph().global_variables_initializer(loc);
}

}  // namespace tapeflow
