// TensorFlow 1's Switch and Merge resolved at import: Note [Control flow v1 in a GraphDef]
// (graph/graph_def_control_flow.h).
#include "graph/graph_def_control_flow.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "graph/graph_def.h"
#include "graph/graph_def_conds.h"
#include "graph/graph_def_v1_functions.h"
#include "graph/graph_def_while_loops.h"
#include "graph/graph_ops.h"

namespace tapeflow::graph_def_internal {

namespace {

using Input = V1Edge;

// A Switch's predicate, followed back to where its value is known.
struct Predicate {
  std::optional<bool> value;
  std::string tensor;            // the tensor it stopped at, when the value is not known
  std::string why_unknown;
  std::vector<int> placeholders;  // the PlaceholderWithDefaults whose defaults gave the value
  bool plain = true;              // no LogicalNot or PlaceholderWithDefault on the way
};

class Resolver {
 public:
  Resolver(const proto::GraphDef& def, const std::map<std::string, Tensor>& input_map) : def_(def), input_map_(input_map) {
    for (const auto& [key, tensor] : input_map) {  // "x" and "x:0" name one tensor
      auto [name, index] = split_tensor_name(key);
      mapped_.emplace(absl::StrCat(absl::string_view(name.data(), name.size()), ":", index), tensor);
    }
  }

  absl::StatusOr<ResolvedControlFlow> run(const std::vector<std::string>& return_elements) {
    TF_RETURN_IF_ERROR(index());
    TF_ASSIGN_OR_RETURN(std::vector<int> order, topological_order());
    TF_RETURN_IF_ERROR(propagate(order));
    ResolvedControlFlow out;
    for (const auto& [key, tensor] : input_map_) {
      auto [name, index] = split_tensor_name(key);
      const auto it = index_.by_name.find(name);
      if (it == index_.by_name.end()) { out.input_map[key] = tensor; continue; }  // the importer says so
      if (std::optional<std::string> renamed = live_name(it->second, index)) out.input_map[*renamed] = tensor;
    }
    for (const std::string& r : return_elements) {
      const bool is_tensor = r.find(':') != std::string::npos;
      auto [name, index] = split_tensor_name(r);
      const auto it = index_.by_name.find(name);
      if (it == index_.by_name.end()) { out.return_elements.push_back(r); continue; }
      const int n = it->second;
      const int cause = is_tensor ? dead_cause(n, index) : dead_by_[n];
      if (cause >= 0) return on_untaken_branch(absl::StrCat("return element '", r, "'"), cause);
      out.return_elements.push_back(is_tensor ? *live_name(n, index) : r);
    }
    rewrite(out.graph_def);  // after live_name has named the value_index Consts asked for above
    for (const auto& [placeholder, switches] : decided_by_default_) {
      const std::string tensor = absl::StrCat(def_.node(placeholder).name(), ":0");
      const std::string others = switches.size() == 1 ? "" : absl::StrCat(" and ", switches.size() - 1, " more");
      out.decided_by_default.push_back(
          {tensor, absl::StrCat("import_graph_def chose the branches of TensorFlow 1's control flow it drives (Switch '",
                                switches.front(), "'", others, ") with its default value; import the GraphDef with "
                                "input_map={\"", tensor, "\": a concrete value} for the other branches")});
    }
    return out;
  }

 private:
  absl::Status node_error(absl::StatusCode code, int i, absl::string_view message) const {
    return graph_def_internal::node_error(def_.node(i), code, message);
  }

  absl::Status index() {
    TF_RETURN_IF_ERROR(index_.build(def_));
    const int n = def_.node_size();
    std::vector<std::string> loops;
    for (int i = 0; i < n; ++i)
      if (is_v1_loop_type(def_.node(i).op())) loops.push_back(absl::StrCat(def_.node(i).name(), " (", def_.node(i).op(), ")"));
    if (!loops.empty())
      return absl::UnimplementedError(absl::StrCat(
          "[import_graph_def] a function holds TensorFlow 1 while loops, which tapeflow reads only in a GraphDef's own "
          "graph (Note [TF1 while loops]): ", absl::StrJoin(loops, ", ")));
    for (int i = 0; i < n; ++i) {
      const std::vector<Input>& ins = index_.inputs[static_cast<size_t>(i)];
      for (size_t k = 0; k < ins.size(); ++k) {
        const std::string& op = def_.node(ins[k].src).op();
        if (ins[k].index > 1 && (op == "Switch" || op == "Merge"))  // the rewrite renames outputs 0 and 1
          return node_error(absl::StatusCode::kInvalidArgument, i,
                            absl::StrCat("input '", def_.node(i).input(static_cast<int>(k)), "' names output ", ins[k].index,
                                         " of node '", def_.node(ins[k].src).name(), "', which has 2 output(s)"));
      }
    }
    dead_by_.assign(static_cast<size_t>(n), -1);
    live_port_.assign(static_cast<size_t>(n), -1);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<int>> topological_order() const {
    std::vector<int> first_edge{0}, srcs;  // the inputs as the CSR array inputs_first_order takes
    for (const std::vector<Input>& ins : index_.inputs) {
      for (const Input& e : ins) srcs.push_back(e.src);
      first_edge.push_back(static_cast<int>(srcs.size()));
    }
    return inputs_first_order(def_, first_edge, [&](int k) { return srcs[static_cast<size_t>(k)]; });
  }

  bool is_switch(int n) const { return def_.node(n).op() == "Switch"; }
  bool is_merge(int n) const { return def_.node(n).op() == "Merge"; }
  // The Switch that makes output `index` of node n dead (-1: a control edge, the node's own
  // deadness), or -1 when it is alive. input_map does not revive a tensor: a dead node is pruned,
  // and its keys with it.
  int dead_cause(int n, int index) const {
    if (dead_by_[static_cast<size_t>(n)] >= 0) return dead_by_[static_cast<size_t>(n)];
    return index >= 0 && is_switch(n) && !guard_of_.contains(n) && index != live_port_[static_cast<size_t>(n)] ? n : -1;
  }

  absl::Status on_untaken_branch(absl::string_view what, int switch_node) const {
    const int port = live_port_[static_cast<size_t>(switch_node)];
    return absl::InvalidArgumentError(absl::StrCat(
        "[import_graph_def] ", what, " is on the branch of Switch '", def_.node(switch_node).name(),
        "' that its predicate (", port == 1 ? "true" : "false", ") does not take, which the import prunes "
        "(Note [Control flow v1 in a GraphDef])"));
  }

  absl::Status propagate(const std::vector<int>& order) {
    for (int n : order) {
      const std::vector<Input>& ins = index_.inputs[static_cast<size_t>(n)];
      if (is_merge(n)) {
        std::vector<int> live;  // positions among the data inputs
        int first_cause = -1, data = 0;
        for (size_t k = 0; k < ins.size(); ++k) {
          if (ins[k].control()) continue;
          TF_RETURN_IF_ERROR(check_not_join(n, ins[k]));
          const int cause = dead_cause(ins[k].src, ins[k].index);
          if (cause < 0) live.push_back(data);
          else if (first_cause < 0) first_cause = cause;
          ++data;
        }
        if (live.size() > 1) {
          TF_RETURN_IF_ERROR(join_guard(n, live));
          continue;
        }
        if (live.empty() && first_cause < 0) return node_error(absl::StatusCode::kInvalidArgument, n, "has no data inputs");
        if (live.empty()) {
          dead_by_[static_cast<size_t>(n)] = first_cause;
          continue;
        }
        merge_input_[n] = live[0];
        for (const Input& e : ins)  // Note [Assert guards]: only a join ends a guard's side
          if (const Tag t = tag_of(e); !t.pred.empty()) return unknown_predicate(t.pred, n);
        continue;
      }
      for (const Input& e : ins) {
        const int cause = dead_cause(e.src, e.index);
        if (cause >= 0) {
          dead_by_[static_cast<size_t>(n)] = cause;
          break;
        }
      }
      if (dead_by_[static_cast<size_t>(n)] >= 0) continue;
      if (is_switch(n)) TF_RETURN_IF_ERROR(choose_branch(n));
      TF_RETURN_IF_ERROR(tag_guarded(n));
    }
    return absl::OkStatus();
  }

  absl::Status choose_branch(int n) {
    const std::vector<Input>& ins = index_.inputs[static_cast<size_t>(n)];
    if (ins.size() < 2 || ins[0].control() || ins[1].control())
      return node_error(absl::StatusCode::kInvalidArgument, n, "needs two inputs: the data and the predicate");
    TF_ASSIGN_OR_RETURN(Predicate p, predicate(ins[1]));
    if (!p.value) {  // Note [Assert guards]: both outputs live, if the branches turn out to be a guard's
      // A predicate negated or read through a feedable default on the way is no Assert's condition.
      const std::string key = p.plain ? p.tensor : absl::StrCat("!", p.tensor);
      guard_of_[n] = key;
      unknown_.try_emplace(key, n, std::move(p));
      return absl::OkStatus();
    }
    live_port_[static_cast<size_t>(n)] = *p.value ? 1 : 0;
    for (int placeholder : p.placeholders) decided_by_default_[placeholder].push_back(def_.node(n).name());
    return absl::OkStatus();
  }

  // Note [Assert guards]: TensorFlow 1's tf.Assert of data other than strings and int32 is
  // cond(condition, no_op, lambda: Assert(condition, data)), an AssertGuard, whose predicate is
  // known only when it runs. Running both branches is what it means: the true branch does
  // nothing, and the Assert of the false branch checks the same condition, so it passes when
  // the true branch would have run. A Switch whose predicate P is not known keeps both outputs
  // live, each tagged (P, its side); tags flow to the nodes that read them (control inputs too).
  // The import goes on only if every tagged node is one of such a guard's: a NoOp, Identity or
  // Const on either side, or, on the false side, an Assert whose condition is P itself (read
  // through no LogicalNot or feedable default); the Merge joining the sides has one live input
  // from each, an Assert before it on the false side (else it is a cond's output, fetched by
  // name), and is read only as a control input (it becomes a NoOp after both). A Switch or a
  // Merge of one live input inside a side, anything else, is the error of a predicate known only
  // at run time: running both sides would change what the graph does; the import then makes the
  // cond an If (Note [TF1 conds as If]).
  struct Tag {
    std::string pred;  // "" when untagged
    int side = 0;
    friend bool operator==(const Tag&, const Tag&) = default;
  };
  Tag tag_of(const Input& e) const {
    if (e.index >= 0)
      if (const auto g = guard_of_.find(e.src); g != guard_of_.end()) return Tag{g->second, e.index};
    const auto t = tags_.find(e.src);
    return t == tags_.end() ? Tag{} : t->second;
  }

  absl::Status unknown_predicate(const std::string& pred, int offender) const {
    const auto& [sw, p] = unknown_.at(pred);
    return node_error(absl::StatusCode::kUnimplemented, sw,
                      absl::StrCat("its predicate '", p.tensor, "' ", p.why_unknown,
                                   "; tapeflow imports TensorFlow 1's control flow (Switch, Merge) by choosing each "
                                   "branch while importing (or by running both, for the guard of an Assert, which node '",
                                   def_.node(offender).name(), "' (", def_.node(offender).op(), ") is not part of): give "
                                   "import_graph_def input_map={\"", p.tensor,
                                   "\": a concrete bool} (Note [Control flow v1 in a GraphDef])"));
  }

  // Node n's tag from its inputs, checked against what a guard holds.
  absl::Status tag_guarded(int n) {
    const std::vector<Input>& ins = index_.inputs[static_cast<size_t>(n)];
    for (const Input& e : ins) TF_RETURN_IF_ERROR(check_not_join(n, e));
    Tag tag;
    for (const Input& e : ins) {
      const Tag t = tag_of(e);
      if (t.pred.empty()) continue;
      if (!tag.pred.empty() && !(t == tag)) return unknown_predicate(t.pred, n);
      tag = t;
    }
    if (tag.pred.empty()) return absl::OkStatus();
    const std::string& op = def_.node(n).op();
    bool guard = op == "NoOp" || op == "Identity" || op == "Const" || is_string_const(n);
    if (op == "Assert" && tag.side == 0 && !ins.empty() && !ins[0].control()) {
      Input c = ins[0];  // the condition, through the guard's Switch and Identities
      for (int depth = 0; depth < 64 && (is_switch(c.src) || def_.node(c.src).op() == "Identity"); ++depth)
        c = index_.inputs[static_cast<size_t>(c.src)].empty() ? c : index_.inputs[static_cast<size_t>(c.src)][0];
      guard = absl::StrCat(def_.node(c.src).name(), ":", c.index) == tag.pred;
    }
    if (!guard) return unknown_predicate(tag.pred, n);
    if (op == "Assert") asserted_.insert(tag.pred);
    if (!is_switch(n)) tags_[n] = tag;
    return absl::OkStatus();
  }

  absl::Status check_not_join(int n, const Input& e) const {
    if (e.control() || !joins_.contains(e.src)) return absl::OkStatus();
    return node_error(absl::StatusCode::kUnimplemented, n,
                      absl::StrCat("reads the value of Merge '", def_.node(e.src).name(),
                                   "', which joins the two sides of an Assert's guard: it is known only when the graph "
                                   "runs (Note [Control flow v1 in a GraphDef])"));
  }

  // A Merge of several live inputs: the join of a guard's two sides (one live input from each,
  // its control inputs untagged, an Assert on the false side), read only as a control input.
  absl::Status join_guard(int merge, const std::vector<int>& live) {
    std::vector<Input> data, control;
    for (const Input& e : index_.inputs[static_cast<size_t>(merge)]) (e.control() ? control : data).push_back(e);
    bool join = live.size() == 2;
    const Tag a = join ? tag_of(data[static_cast<size_t>(live[0])]) : Tag{}, b = join ? tag_of(data[static_cast<size_t>(live[1])]) : Tag{};
    join = join && !a.pred.empty() && a.pred == b.pred && a.side != b.side && asserted_.contains(a.pred);
    for (const Input& e : control) join = join && tag_of(e).pred.empty();
    if (!join)
      return node_error(absl::StatusCode::kUnimplemented, merge,
                        absl::StrCat("has ", live.size(), " live inputs; tapeflow resolves a Merge of tf.cond, where one "
                                     "branch is taken, or the join of the two sides of an Assert's guard (Note [Control "
                                     "flow v1 in a GraphDef])"));
    joins_.insert(merge);
    return absl::OkStatus();
  }

  // Follows the predicate through Identity, Snapshot, LogicalNot, PlaceholderWithDefault (its
  // default) and live Switch outputs (their data) to a Const or a concrete input_map tensor.
  absl::StatusOr<Predicate> predicate(Input at) const {
    Predicate p;
    bool negate = false;
    for (int depth = 0; depth < 64; ++depth) {
      const proto::NodeDef& nd = def_.node(at.src);
      p.tensor = absl::StrCat(nd.name(), ":", at.index);
      if (const auto m = mapped_.find(p.tensor); m != mapped_.end()) {
        if (!m->second.defined())
          return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] input_map['", p.tensor, "'] is an empty tensor"));
        if (m->second.is_symbolic()) {
          p.why_unknown = "is mapped by input_map to a tensor of the graph, known only when it runs";
          return p;
        }
        TF_ASSIGN_OR_RETURN(bool v, bool_scalar(m->second, absl::StrCat("input_map['", p.tensor, "']")));
        p.value = v != negate;
        p.placeholders.clear();  // the caller chose it
        return p;
      }
      const std::string& op = nd.op();
      if (op == "Const" && at.index == 0) {
        const auto value = nd.attr().find("value");
        if (value == nd.attr().end() || !value->second.has_tensor())
          return node_error(absl::StatusCode::kInvalidArgument, at.src, "attr 'value' (a tensor) is missing");
        absl::StatusOr<Tensor> t = tensor_from_proto(value->second.tensor());
        if (!t.ok()) return node_error(t.status().code(), at.src, absl::StrCat("attr 'value': ", t.status().message()));
        TF_ASSIGN_OR_RETURN(bool v, bool_scalar(*t, absl::StrCat("the predicate '", p.tensor, "'")));
        p.value = v != negate;
        return p;
      }
      const std::vector<Input>& ins = index_.inputs[static_cast<size_t>(at.src)];
      const bool forwards = op == "Identity" || op == "Snapshot" || op == "LogicalNot" || op == "PlaceholderWithDefault" ||
                            (op == "Switch" && at.index == live_port_[static_cast<size_t>(at.src)]);
      if (!forwards || (op != "Switch" && at.index != 0) || ins.empty() || ins[0].control()) {
        p.why_unknown = absl::StrCat("comes from a ", op, " node, known only when the graph runs");
        return p;
      }
      if (op == "LogicalNot") negate = !negate;
      if (op == "PlaceholderWithDefault") p.placeholders.push_back(at.src);
      p.plain &= op != "LogicalNot" && op != "PlaceholderWithDefault";
      at = ins[0];
    }
    p.why_unknown = "is at the end of a chain of more than 64 Identity nodes";
    return p;
  }

  static absl::StatusOr<bool> bool_scalar(const Tensor& t, absl::string_view what) {
    if (t.dtype() != DType::kBool || t.shape().num_elements() != 1)
      return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] ", what, " must be one bool, not ",
                                                     dtype_name(t.dtype()), " ", t.shape().to_string()));
    return t.to_vector<bool>()[0];
  }

  // The name output `index` of node n has after the rewrite; nullopt when it is dead.
  std::optional<std::string> live_name(int n, int index) const {
    if (dead_cause(n, index) >= 0) return std::nullopt;
    const std::string& name = def_.node(n).name();
    if (is_switch(n) && index >= 0 && index <= 1) return absl::StrCat(name, ":0");
    if (is_merge(n) && index == 1 && !joins_.contains(n)) return absl::StrCat(value_index_name(n), ":0");
    return absl::StrCat(name, ":", index);
  }

  std::string input_text(const Input& e) const {
    const std::string& name = def_.node(e.src).name();
    if (e.control()) return absl::StrCat("^", name);
    std::string s = *live_name(e.src, e.index);
    return s.ends_with(":0") ? s.substr(0, s.size() - 2) : s;
  }

  const std::string& value_index_name(int merge) const {
    auto [it, fresh] = value_index_names_.try_emplace(merge);
    if (fresh) {
      const std::string base = absl::StrCat(def_.node(merge).name(), "/value_index");
      it->second = base;
      for (int k = 1; index_.by_name.contains(it->second); ++k) it->second = absl::StrCat(base, "_", k);
    }
    return it->second;
  }

  void rewrite(proto::GraphDef& out) const {
    *out.mutable_versions() = def_.versions();
    for (int i = 0; i < def_.node_size(); ++i)  // live Merges whose output 1 a live node reads
      if (dead_by_[static_cast<size_t>(i)] < 0)
        for (const Input& e : index_.inputs[static_cast<size_t>(i)])
          if (e.index == 1 && is_merge(e.src) && !joins_.contains(e.src)) value_index_name(e.src);
    const absl::flat_hash_set<int> texts = assert_texts();
    for (int i = 0; i < def_.node_size(); ++i) {
      if (dead_by_[static_cast<size_t>(i)] >= 0 || texts.contains(i)) continue;
      const proto::NodeDef& nd = def_.node(i);
      const std::vector<Input>& ins = index_.inputs[static_cast<size_t>(i)];
      if (value_index_names_.contains(i)) {
        proto::NodeDef* c = out.add_node();
        c->set_name(value_index_name(i));
        c->set_op("Const");
        c->set_device(nd.device());
        (*c->mutable_attr())["dtype"].set_type(proto::DT_INT32);
        proto::TensorProto* v = (*c->mutable_attr())["value"].mutable_tensor();
        v->set_dtype(proto::DT_INT32);
        v->mutable_tensor_shape();
        v->add_int_val(merge_input_.at(i));
      }
      proto::NodeDef* node = out.add_node();
      *node = nd;
      node->clear_input();
      if (joins_.contains(i)) {  // Note [Assert guards]: after both sides
        node->set_op("NoOp");
        node->mutable_attr()->clear();
        for (const Input& e : ins)
          if (dead_cause(e.src, e.index) < 0) node->add_input(absl::StrCat("^", def_.node(e.src).name()));
        continue;
      }
      if (is_switch(i) || is_merge(i)) node->set_op("Identity");
      if (is_merge(i)) node->mutable_attr()->erase("N");
      drop_pruned_colocations(*node);
      if (nd.op() == "Assert") {
        fold_assert_texts(*node, ins, texts);
        continue;
      }
      for (size_t k = 0; k < ins.size(); ++k) {
        const Input& e = ins[k];
        if (is_switch(i) && k == 1) continue;  // the predicate
        if (is_merge(i) && (e.control() ? dead_cause(e.src, -1) >= 0 : data_position(ins, k) != merge_input_.at(i))) continue;
        node->add_input(input_text(e));
      }
    }
  }

  static int data_position(const std::vector<Input>& ins, size_t k) {
    int data = 0;
    for (size_t j = 0; j < k; ++j) data += ins[j].control() ? 0 : 1;
    return data;
  }

  bool is_string_const(int n) const {
    const proto::NodeDef& nd = def_.node(n);
    const auto dtype = nd.attr().find("dtype");
    return nd.op() == "Const" && dtype != nd.attr().end() && dtype->second.type() == proto::DT_STRING;
  }

  // The DT_STRING Consts that only live Asserts read, as data: tapeflow holds them as the
  // Asserts' attrs (graph/graph_ops.h), so they are not imported themselves.
  absl::flat_hash_set<int> assert_texts() const {
    absl::flat_hash_set<int> texts, elsewhere;
    for (int i = 0; i < def_.node_size(); ++i) {
      if (dead_by_[static_cast<size_t>(i)] >= 0) continue;
      const std::vector<Input>& ins = index_.inputs[static_cast<size_t>(i)];
      for (size_t k = 0; k < ins.size(); ++k) {
        if (!is_string_const(ins[k].src)) continue;
        const bool assert_data = def_.node(i).op() == "Assert" && k > 0 && !ins[k].control();
        (assert_data ? texts : elsewhere).insert(ins[k].src);
      }
    }
    for (int n : elsewhere) texts.erase(n);
    return texts;
  }

  // The Assert's inputs, its text data folded into attrs _texts and _text_positions (the data
  // positions they had) and left out of T.
  void fold_assert_texts(proto::NodeDef& node, const std::vector<Input>& ins, const absl::flat_hash_set<int>& texts) const {
    std::vector<std::string> strings;
    proto::AttrValue positions;
    positions.mutable_list();
    proto::AttrValue::ListValue types;
    const auto found = node.attr().find("T");
    const bool has_t = found != node.attr().end();
    const proto::AttrValue::ListValue declared = has_t ? found->second.list() : proto::AttrValue::ListValue();
    for (size_t k = 0; k < ins.size(); ++k) {
      const Input& e = ins[k];
      if (k > 0 && !e.control() && texts.contains(e.src)) {
        const auto value = def_.node(e.src).attr().find("value");
        strings.push_back(value == def_.node(e.src).attr().end() ? std::string()
                                                                 : absl::StrJoin(value->second.tensor().string_val(), " "));
        positions.mutable_list()->add_i(static_cast<int64_t>(k - 1));
        continue;
      }
      node.add_input(input_text(e));
      if (k > 0 && !e.control() && static_cast<int>(k - 1) < declared.type_size())
        types.add_type(declared.type(static_cast<int>(k - 1)));
    }
    if (strings.empty()) {
      if (has_t) *(*node.mutable_attr())["T"].mutable_list() = types;
      return;
    }
    (*node.mutable_attr())["_texts"].set_s(graph_ops_internal::encode_texts(strings));
    (*node.mutable_attr())["_text_positions"] = positions;
    if (has_t) *(*node.mutable_attr())["T"].mutable_list() = types;
  }

  // "_class" entries ("loc:@x") naming a pruned node go with it (the import refuses unknown ones).
  void drop_pruned_colocations(proto::NodeDef& node) const {
    const auto it = node.mutable_attr()->find("_class");
    if (it == node.mutable_attr()->end() || !it->second.has_list()) return;
    google::protobuf::RepeatedPtrField<std::string>& entries = *it->second.mutable_list()->mutable_s();
    const auto pruned = [&](const std::string& entry) {
      if (!entry.starts_with("loc:@")) return false;
      const auto n = index_.by_name.find(std::string_view(entry).substr(5));
      return n != index_.by_name.end() && dead_by_[static_cast<size_t>(n->second)] >= 0;
    };
    entries.erase(std::remove_if(entries.begin(), entries.end(), pruned), entries.end());
    if (entries.empty() && it->second.list().ByteSizeLong() == 0) node.mutable_attr()->erase(it);
  }

  const proto::GraphDef& def_;
  const std::map<std::string, Tensor>& input_map_;
  std::map<std::string, Tensor> mapped_;  // input_map by "name:index"
  V1Index index_;
  std::vector<int> dead_by_;    // the Switch whose untaken branch the node is on; -1: alive
  std::vector<int> live_port_;  // a live Switch's taken output (1: true)
  absl::flat_hash_map<int, int> merge_input_;  // a live Merge's live input
  // Note [Assert guards]: Switches whose predicate is unknown (-> it), the tags of the nodes they
  // reach, the Merges that join them, and each unknown predicate's first Switch.
  absl::flat_hash_map<int, std::string> guard_of_;
  absl::flat_hash_map<int, Tag> tags_;
  absl::flat_hash_set<int> joins_;
  absl::flat_hash_set<std::string> asserted_;  // predicates with an Assert on their false side (a guard's)
  absl::flat_hash_map<std::string, std::pair<int, Predicate>> unknown_;
  mutable absl::flat_hash_map<int, std::string> value_index_names_;
  std::map<int, std::vector<std::string>> decided_by_default_;  // PlaceholderWithDefault -> the Switches
};

}  // namespace

bool is_v1_control_flow_type(std::string_view op_type) {
  return op_type == "Switch" || op_type == "Merge" || is_v1_loop_type(op_type);
}

absl::StatusOr<std::optional<proto::GraphDef>> functionalize_v1_control_flow(const proto::GraphDef& graph_def,
                                                                            const proto::FunctionDefLibrary& library,
                                                                            const std::map<std::string, Tensor>& input_map) {
  std::map<std::string, Tensor> mapped;  // "x" and "x:0" name one tensor
  for (const auto& [key, tensor] : input_map) {
    auto [name, index] = split_tensor_name(key);
    mapped.emplace(absl::StrCat(absl::string_view(name.data(), name.size()), ":", index), tensor);
  }
  proto::GraphDef def = graph_def;
  *def.mutable_library() = library;
  NameAllocator names;  // not the library's functions, nor an op type (a call by name)
  for (const proto::FunctionDef& f : library.function()) names.reserve(f.signature().name());
  for (const proto::NodeDef& n : graph_def.node()) names.reserve(n.op());
  // Innermost first: the deepest conds that hold no loop, else the innermost loops. Each round
  // rewrites one level of one or the other, so the rounds are bounded by the nesting.
  constexpr int kMaxRounds = 2 * (kMaxCondNesting + kMaxLoopNesting) + 2;
  bool rewrote_any = false;
  for (int round = 0;; ++round) {
    if (round > kMaxRounds)
      return absl::ResourceExhaustedError(absl::StrCat("[import_graph_def] TensorFlow 1 conds and while loops nest more "
                                                       "than ", kMaxRounds, " levels deep in all"));
    TF_ASSIGN_OR_RETURN(bool rewrote, rewrite_deepest_v1_conds(def, mapped, names));
    if (!rewrote) {
      TF_ASSIGN_OR_RETURN(rewrote, rewrite_innermost_v1_loops(def, names));
    }
    if (!rewrote) break;
    rewrote_any = true;
  }
  if (!rewrote_any) return std::nullopt;
  return def;
}

absl::StatusOr<ResolvedControlFlow> resolve_v1_control_flow(const proto::GraphDef& graph_def,
                                                           const std::map<std::string, Tensor>& input_map,
                                                           const std::vector<std::string>& return_elements) {
  return Resolver(graph_def, input_map).run(return_elements);
}

}  // namespace tapeflow::graph_def_internal
