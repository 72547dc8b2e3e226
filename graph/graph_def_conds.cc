// tf.cond of a run-time predicate rewritten as If over functions: Note [TF1 conds as If]
// (graph/graph_def_conds.h).
#include "graph/graph_def_conds.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_def_v1_functions.h"

namespace tapeflow::graph_def_internal {

namespace {

using Edge = V1Edge;
using Branch = std::pair<int, int>;  // (predicate, side)
using State = std::vector<Branch>;   // the branches a node is on, outermost first

bool is_prefix(const State& a, const State& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// One rewrite of the deepest conds of `def`.
class CondPass {
 public:
  CondPass(const GraphDef& def, const std::map<std::string, Tensor>& mapped, NameAllocator& names)
      : def_(def), mapped_(mapped), names_(names) {}

  // false: no cond of a run-time predicate was rewritten (none is left, or the deepest hold
  // while loops, to be rewritten first).
  absl::StatusOr<bool> run(GraphDef& out) {
    TF_RETURN_IF_ERROR(index_.build(def_));
    loop_merge_.assign(static_cast<size_t>(def_.node_size()), false);
    for (int n = 0; n < def_.node_size(); ++n)
      if (def_.node(n).op() == "Merge")
        for (const Edge& e : index_.inputs[static_cast<size_t>(n)])
          if (!e.control() && (def_.node(e.src).op() == "NextIteration" || def_.node(e.src).op() == "Enter"))
            loop_merge_[static_cast<size_t>(n)] = true;
    find_runtime_switches();
    if (pred_of_switch_.empty()) return false;
    TF_RETURN_IF_ERROR(assign_states());
    size_t depth = 0;  // of the deepest branches (a Merge of two Switches' outputs has none between)
    for (int n = 0; n < def_.node_size(); ++n)
      depth = std::max(depth, state(n).size() + (merge_pred_.contains(n) ? 1 : 0));
    if (depth == 0) return false;  // Switches nothing reads: the resolver's to judge
    *out.mutable_versions() = def_.versions();
    *out.mutable_library() = def_.library();
    removed_.assign(static_cast<size_t>(def_.node_size()), false);
    std::vector<std::vector<proto::NodeDef>> before(static_cast<size_t>(def_.node_size()));
    std::vector<proto::NodeDef> at_end;
    bool rewrote = false;
    for (const Cond& c : conds_at(depth)) {
      if (holds_loop(c)) continue;  // Note [TF1 while loops] first
      rewrote = true;
      TF_ASSIGN_OR_RETURN(std::vector<proto::NodeDef> made, rewrite(c, out));  // the If, then each Merge's Identity
      (c.merges.empty() ? at_end : before[static_cast<size_t>(c.merges.front())]).push_back(std::move(made.front()));
      for (size_t j = 0; j < c.merges.size(); ++j) before[static_cast<size_t>(c.merges[j])].push_back(std::move(made[j + 1]));
    }
    for (int n = 0; n < def_.node_size(); ++n) {  // nothing left reads what the Ifs took in
      if (removed_[static_cast<size_t>(n)]) continue;
      for (const Edge& e : index_.inputs[static_cast<size_t>(n)])
        if (removed_[static_cast<size_t>(e.src)] && !(merge_pred_.contains(e.src) && e.index <= 0))  // a Merge keeps its name
          return error(n, absl::StatusCode::kUnimplemented,
                       merge_pred_.contains(e.src)
                           ? absl::StrCat("reads which branch Merge '", def_.node(e.src).name(),
                                          "' took (its output 1), which the If it becomes does not say")
                           : absl::StrCat("reads '", def_.node(e.src).name(), "', which the If made of its tf.cond takes in"));
    }
    if (!rewrote) return false;
    emit_rewritten(def_, index_, removed_, before, at_end, out);
    return true;
  }

 private:
  struct Cond {
    std::vector<int> switches, merges, sides[2];  // each in GraphDef order
  };

  bool holds_loop(const Cond& c) const {
    for (const std::vector<int>& side : c.sides)
      for (int n : side)
        if (is_v1_loop_type(def_.node(n).op())) return true;
    return false;
  }

  absl::Status error(int node, absl::StatusCode code, absl::string_view message) const {
    return node_error(def_.node(node), code, absl::StrCat(message, " (Note [TF1 conds as If])"));
  }
  const State& state(int n) const { return states_[static_cast<size_t>(state_of_[static_cast<size_t>(n)])]; }
  int intern(State s) {
    auto [it, fresh] = state_ids_.try_emplace(s, static_cast<int>(states_.size()));
    if (fresh) states_.push_back(std::move(s));
    return it->second;
  }
  bool is_loop_merge(int n) const { return loop_merge_[static_cast<size_t>(n)]; }
  bool back_edge(int n, const Edge& e) const { return is_back_edge(def_, n, e); }

  // The Switches whose predicate the resolver cannot read (Note [Control flow v1 in a
  // GraphDef]), each with its predicate: the tensor reached through Identity and Snapshot.
  void find_runtime_switches() {
    absl::flat_hash_map<std::string, int> preds;
    for (int n = 0; n < def_.node_size(); ++n) {
      if (def_.node(n).op() != "Switch") continue;
      const std::vector<Edge>& ins = index_.inputs[static_cast<size_t>(n)];
      if (ins.size() < 2 || ins[0].control() || ins[1].control() || def_.node(ins[1].src).op() == "LoopCond") continue;
      std::string key;
      bool known = false;
      Edge at = ins[1];
      for (int depth = 0; depth < 64; ++depth) {
        const proto::NodeDef& nd = def_.node(at.src);
        const std::string tensor = absl::StrCat(nd.name(), ":", at.index);
        const bool forwards = nd.op() == "Identity" || nd.op() == "Snapshot" || nd.op() == "LogicalNot";
        if (key.empty() && (nd.op() == "LogicalNot" || !forwards)) key = tensor;
        if (const auto m = mapped_.find(tensor); m != mapped_.end()) {
          if (key.empty()) key = tensor;
          known = !m->second.is_symbolic();
          break;
        }
        if (nd.op() == "Const" || nd.op() == "PlaceholderWithDefault") known = at.index == 0;
        const std::vector<Edge>& next = index_.inputs[static_cast<size_t>(at.src)];
        if (!forwards || at.index != 0 || next.empty() || next[0].control()) break;
        at = next[0];
      }
      if (known || key.empty()) continue;
      pred_of_switch_[n] = preds.try_emplace(key, static_cast<int>(preds.size())).first->second;
    }
  }

  // Each node's branches, in an order where inputs come first (a loop's back edge left out).
  absl::Status assign_states() {
    const int n = def_.node_size();
    TF_ASSIGN_OR_RETURN(std::vector<int> order, order_without_back_edges(def_, index_));
    const int none = intern({});
    state_of_.assign(static_cast<size_t>(n), none);
    for (int i : order) {
      std::vector<int> data, all;  // the states its data inputs, and all its inputs, bring
      for (const Edge& e : index_.inputs[static_cast<size_t>(i)]) {
        if (back_edge(i, e)) continue;
        TF_ASSIGN_OR_RETURN(int s, edge_state(i, e));
        all.push_back(s);
        if (!e.control()) data.push_back(s);
      }
      if (def_.node(i).op() == "Merge" && !is_loop_merge(i) && join(i, data)) continue;
      int longest = none;
      for (int s : all) {
        if (is_prefix(states_[static_cast<size_t>(s)], states_[static_cast<size_t>(longest)])) continue;
        if (!is_prefix(states_[static_cast<size_t>(longest)], states_[static_cast<size_t>(s)]))
          return error(i, absl::StatusCode::kUnimplemented,
                       "reads tensors of two branches of TensorFlow 1 conds (or of both sides of one) without a Merge");
        longest = s;
      }
      state_of_[static_cast<size_t>(i)] = longest;
    }
    return absl::OkStatus();
  }

  // A Merge of two data inputs on the two sides of one predicate is on what is outside them.
  bool join(int i, const std::vector<int>& data) {
    if (data.size() != 2) return false;
    const State a = states_[static_cast<size_t>(data[0])], b = states_[static_cast<size_t>(data[1])];
    if (a.empty() || a.size() != b.size() || !std::equal(a.begin(), a.end() - 1, b.begin()) ||
        a.back().first != b.back().first || a.back().second == b.back().second)
      return false;
    merge_pred_[i] = a.back().first;
    state_of_[static_cast<size_t>(i)] = intern(State(a.begin(), a.end() - 1));
    return true;
  }

  // The side of its cond a branch node's input e is on (-1: outside every cond).
  int side_of(const Edge& e) const {
    if (!e.control() && pred_of_switch_.contains(e.src)) return e.index;
    return state(e.src).empty() ? -1 : state(e.src).back().second;
  }

  absl::StatusOr<int> edge_state(int reader, const Edge& e) {
    const int s = state_of_[static_cast<size_t>(e.src)];
    const auto p = pred_of_switch_.find(e.src);
    if (e.control() || p == pred_of_switch_.end()) return s;
    if (e.index > 1)
      return error(reader, absl::StatusCode::kInvalidArgument,
                   absl::StrCat("reads output ", e.index, " of Switch '", def_.node(e.src).name(), "', which has 2 outputs"));
    State t = states_[static_cast<size_t>(s)];
    if (t.size() >= static_cast<size_t>(kMaxCondNesting))  // before a hostile chain makes states of every length
      return error(reader, absl::StatusCode::kResourceExhausted,
                   absl::StrCat("is inside TensorFlow 1 conds nested more than ", kMaxCondNesting, " deep"));
    t.emplace_back(p->second, e.index);
    return intern(std::move(t));
  }

  // The conds whose branches are `depth` deep: their Switches, Merges and branch nodes,
  // connected through their edges.
  std::vector<Cond> conds_at(size_t depth) {
    std::vector<int> parent(static_cast<size_t>(def_.node_size()));
    std::iota(parent.begin(), parent.end(), 0);
    auto root = [&](int x) {
      while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
      return x;
    };
    auto unite = [&](int a, int b) { parent[static_cast<size_t>(root(a))] = root(b); };
    std::vector<int> members;
    for (int n = 0; n < def_.node_size(); ++n) {
      const bool branch = state(n).size() == depth;
      const bool merge = merge_pred_.contains(n) && state(n).size() + 1 == depth;
      if (!branch && !merge) continue;
      members.push_back(n);
      for (const Edge& e : index_.inputs[static_cast<size_t>(n)]) {
        if (back_edge(n, e)) continue;
        const bool same = state(e.src).size() == depth && state(e.src) == state(n);
        const bool from_switch = pred_of_switch_.contains(e.src) && !e.control() && state(e.src).size() + 1 == depth;
        if ((branch && (same || from_switch)) || (merge && !e.control())) unite(n, e.src);
        if (from_switch) members.push_back(e.src);
      }
    }
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    absl::flat_hash_map<int, size_t> by_root;
    std::vector<Cond> conds;
    for (int n : members) {
      auto [it, fresh] = by_root.try_emplace(root(n), conds.size());
      if (fresh) conds.emplace_back();
      Cond& c = conds[it->second];
      if (pred_of_switch_.contains(n) && state(n).size() + 1 == depth) c.switches.push_back(n);
      else if (merge_pred_.contains(n) && state(n).size() + 1 == depth) c.merges.push_back(n);
      else c.sides[state(n).back().second].push_back(n);
    }
    return conds;
  }

  // The If for cond c (first), then an Identity under each Merge's name.
  absl::StatusOr<std::vector<proto::NodeDef>> rewrite(const Cond& c, GraphDef& out) {
    const proto::NodeDef& first = def_.node(c.merges.empty() ? c.switches.front() : c.merges.front());
    const std::string scope = first.name().substr(0, std::min(first.name().size(), first.name().rfind('/')));
    const std::string if_name =
        names_.take(valid_node_name(scope) ? scope : "cond", [&](const std::string& n) { return index_.by_name.contains(n); });
    const std::string names[2] = {names_.function_name(scope, "_false"), names_.function_name(scope, "_true")};
    std::vector<std::string> args;
    proto::AttrValue tin, tout;
    tin.mutable_list();
    tout.mutable_list();
    for (size_t i = 0; i < c.switches.size(); ++i) {
      args.push_back(argument_name(absl::StrCat("input_", i), index_, arg_names_));
      const proto::AttrValue* t = find_attr(def_.node(c.switches[i]), "T");
      if (t == nullptr) return error(c.switches[i], absl::StatusCode::kInvalidArgument, "attr 'T' (a type) is missing");
      tin.mutable_list()->add_type(t->type());
    }
    for (int m : c.merges) {
      const proto::AttrValue* t = find_attr(def_.node(m), "T");
      if (t == nullptr) return error(m, absl::StatusCode::kInvalidArgument, "attr 'T' (a type) is missing");
      tout.mutable_list()->add_type(t->type());
    }
    absl::flat_hash_set<int> outer_control;
    for (int side = 0; side < 2; ++side)
      TF_RETURN_IF_ERROR(emit_branch(c, side, names[side], args, tin, tout, *out.mutable_library()->add_function(), outer_control));

    std::vector<proto::NodeDef> made(1 + c.merges.size());
    proto::NodeDef& node = made[0];
    node.set_name(if_name);
    node.set_op("If");
    node.set_device(first.device());
    const proto::NodeDef& pivot = def_.node(c.switches.front());
    node.add_input(pivot.input(1));  // the predicate (its Switches' input 1 names it, or an Identity of it)
    for (int s : c.switches) node.add_input(def_.node(s).input(0));
    std::vector<std::string> controls;
    for (int s : c.switches)
      for (const Edge& e : index_.inputs[static_cast<size_t>(s)]) if (e.control()) outer_control.insert(e.src);
    for (int n : outer_control) controls.push_back(absl::StrCat("^", def_.node(n).name()));
    std::sort(controls.begin(), controls.end());
    for (std::string& ctl : controls) node.add_input(std::move(ctl));
    auto& attrs = *node.mutable_attr();
    attrs["Tcond"].set_type(proto::DT_BOOL);
    attrs["Tin"] = tin;
    attrs["Tout"] = tout;
    attrs["then_branch"].mutable_func()->set_name(names[1]);
    attrs["else_branch"].mutable_func()->set_name(names[0]);
    proto::AttrValue shapes;
    bool all_shapes = true;
    for (int m : c.merges) {
      const proto::AttrValue* s = find_attr(def_.node(m), "_output_shapes");
      if (s != nullptr && s->list().shape_size() >= 1) *shapes.mutable_list()->add_shape() = s->list().shape(0);
      else all_shapes = false;
    }
    if (all_shapes && !c.merges.empty()) attrs["output_shapes"] = shapes;
    for (size_t j = 0; j < c.merges.size(); ++j) {
      const proto::NodeDef& merge = def_.node(c.merges[j]);
      proto::NodeDef& id = made[j + 1];
      id.set_name(merge.name());
      id.set_op("Identity");
      id.set_device(merge.device());
      id.add_input(j == 0 ? if_name : absl::StrCat(if_name, ":", j));
      (*id.mutable_attr())["T"].set_type(tout.list().type(static_cast<int>(j)));
    }
    for (int n : c.switches) removed_[static_cast<size_t>(n)] = true;
    for (int n : c.merges) removed_[static_cast<size_t>(n)] = true;
    for (const std::vector<int>& side : c.sides)
      for (int n : side) removed_[static_cast<size_t>(n)] = true;
    return made;
  }

  // Side `side` of cond c as a function of the Switches' data.
  absl::Status emit_branch(const Cond& c, int side, const std::string& name, const std::vector<std::string>& args,
                           const proto::AttrValue& tin, const proto::AttrValue& tout, proto::FunctionDef& fn,
                           absl::flat_hash_set<int>& outer_control) const {
    const std::vector<int>& nodes = c.sides[side];
    const absl::flat_hash_set<int> in_fn(nodes.begin(), nodes.end());
    absl::flat_hash_map<int, size_t> arg_of;
    for (size_t i = 0; i < c.switches.size(); ++i) arg_of.emplace(c.switches[i], i);
    auto tensor = [&](int reader, const Edge& e) -> absl::StatusOr<std::string> {
      if (const auto a = arg_of.find(e.src); a != arg_of.end() && e.index == side) return args[a->second];
      if (in_fn.contains(e.src))
        if (std::optional<std::string> out = function_output_name(def_.node(e.src), e.index)) return *std::move(out);
      return error(reader, absl::StatusCode::kUnimplemented,
                   absl::StrCat("reads '", def_.node(e.src).name(), ":", e.index, "' inside a TensorFlow 1 cond's branch, "
                                "which takes outer tensors through a Switch"));
    };
    proto::OpDef& sig = *fn.mutable_signature();
    sig.set_name(name);
    for (size_t i = 0; i < args.size(); ++i) {
      proto::OpDef::ArgDef& a = *sig.add_input_arg();
      a.set_name(args[i]);
      a.set_type(tin.list().type(static_cast<int>(i)));
    }
    std::vector<int> side_effects;
    for (int n : nodes)
      if (index_.consumers[static_cast<size_t>(n)] == 0) side_effects.push_back(n);
    TF_RETURN_IF_ERROR(add_function_nodes(
        def_, index_, nodes, tensor, [&](int src) { if (!arg_of.contains(src)) outer_control.insert(src); }, side_effects, fn));
    for (size_t j = 0; j < c.merges.size(); ++j) {
      const int m = c.merges[j];
      proto::OpDef::ArgDef& r = *sig.add_output_arg();
      r.set_name(absl::StrCat("output_", j));
      r.set_type(tout.list().type(static_cast<int>(j)));
      std::optional<Edge> input;  // the Merge's input on this side
      for (const Edge& e : index_.inputs[static_cast<size_t>(m)])
        if (!e.control() && side_of(e) == side) input = e;
      if (!input) return error(m, absl::StatusCode::kInvalidArgument, "has no input on one side of its cond");
      TF_ASSIGN_OR_RETURN(std::string t, tensor(m, *input));
      (*fn.mutable_ret())[r.name()] = std::move(t);
    }
    return absl::OkStatus();
  }

  const GraphDef& def_;
  const std::map<std::string, Tensor>& mapped_;    // input_map by "name:index"
  NameAllocator& names_;
  absl::flat_hash_map<std::string, std::string> arg_names_;  // argument_name's, this pass
  std::vector<bool> loop_merge_;                    // a while loop's Merge (of an Enter or NextIteration)
  V1Index index_;
  absl::flat_hash_map<int, int> pred_of_switch_;   // the Switches of run-time predicates
  absl::flat_hash_map<int, int> merge_pred_;       // the Merges that join their two sides
  std::vector<State> states_;
  absl::flat_hash_map<State, int> state_ids_;
  std::vector<int> state_of_;
  std::vector<bool> removed_;
};

}  // namespace

absl::StatusOr<bool> rewrite_deepest_v1_conds(GraphDef& graph_def, const std::map<std::string, Tensor>& mapped,
                                              NameAllocator& names) {
  GraphDef next;
  TF_ASSIGN_OR_RETURN(bool rewrote, CondPass(graph_def, mapped, names).run(next));
  if (rewrote) graph_def = std::move(next);
  return rewrote;
}

}  // namespace tapeflow::graph_def_internal
