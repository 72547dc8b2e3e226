// TensorFlow 1's while loops rewritten as While over functions: Note [TF1 while loops]
// (graph/graph_def_while_loops.h).
#include "graph/graph_def_while_loops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_def_v1_functions.h"

namespace tapeflow::graph_def_internal {

namespace {

bool is_enter(std::string_view op) { return op == "Enter" || op == "RefEnter"; }
bool is_exit(std::string_view op) { return op == "Exit" || op == "RefExit"; }
bool is_next_iteration(std::string_view op) { return op == "NextIteration" || op == "RefNextIteration"; }

using Edge = V1Edge;

struct Frame {
  std::string name;          // attr frame_name of its Enters
  int parent = -1;           // -1: the graph's own (root) frame
  bool has_child = false;    // an inner loop is rewritten first
  std::vector<int> members;  // its nodes (Enters included, Exits not), in GraphDef order
  std::vector<int> exits;
};

// What a node is to its loop (kNone: an ordinary node of the condition or the body).
enum class Role { kNone, kVarEnter, kConstEnter, kMerge, kSwitch, kNextIteration, kLoopCond };
struct RoleOf {
  Role role = Role::kNone;
  int k = 0;  // the loop variable, or the constant Enter's position among the captures
};

struct LoopVar {
  int enter = -1, merge = -1, next = -1, sw = -1;
  std::vector<int> exits;
  proto::DataType dtype = proto::DT_INVALID;
};

// One rewrite of the innermost loops of `def` (their frames have no frames inside).
class Pass {
 public:
  Pass(const GraphDef& def, NameAllocator& names) : def_(def), names_(names) {}

  // false: the GraphDef has no loops left.
  absl::StatusOr<bool> run(GraphDef& out) {
    TF_RETURN_IF_ERROR(index_.build(def_));
    TF_RETURN_IF_ERROR(assign_frames());
    if (frames_.empty()) return false;
    *out.mutable_versions() = def_.versions();
    *out.mutable_library() = def_.library();
    std::vector<bool> removed(static_cast<size_t>(def_.node_size()), false);
    std::vector<std::vector<proto::NodeDef>> emitted_at(static_cast<size_t>(def_.node_size()));
    std::vector<proto::NodeDef> at_end;
    for (int f = 0; f < static_cast<int>(frames_.size()); ++f) {
      if (frames_[static_cast<size_t>(f)].has_child) continue;
      TF_ASSIGN_OR_RETURN(Rewritten r, rewrite_loop(f, out));
      const Frame& fr = frames_[static_cast<size_t>(f)];
      for (int m : fr.members) removed[static_cast<size_t>(m)] = true;
      for (int x : fr.exits) removed[static_cast<size_t>(x)] = true;
      // The While before the first Exit (its inputs come before the loop), each Exit in its place.
      std::vector<proto::NodeDef>& first = fr.exits.empty() ? at_end : emitted_at[static_cast<size_t>(fr.exits.front())];
      first.push_back(std::move(r.while_node));
      for (size_t e = 0; e < fr.exits.size(); ++e)
        emitted_at[static_cast<size_t>(fr.exits[e])].push_back(std::move(r.exit_nodes[e]));
    }
    emit_rewritten(def_, index_, removed, emitted_at, at_end, out);
    return true;
  }

 private:
  struct Rewritten {
    proto::NodeDef while_node;
    std::vector<proto::NodeDef> exit_nodes;  // in frame.exits' order
  };

  absl::Status error(int node, absl::StatusCode code, absl::string_view message) const {
    return node_error(def_.node(node), code, message);
  }
  absl::Status loop_error(int frame, int node, absl::string_view message) const {
    return error(node, absl::StatusCode::kInvalidArgument,
                 absl::StrCat("in TensorFlow 1 while loop '", frames_[static_cast<size_t>(frame)].name, "': ", message,
                              " (Note [TF1 while loops])"));
  }
  const std::string& op(int n) const { return def_.node(n).op(); }
  bool back_edge(int consumer, const Edge& e) const { return is_back_edge(def_, consumer, e); }

  // Each node's frame, in an order where inputs come first (a NextIteration's edge into its
  // Merge is the loop's back edge, left out of the order).
  absl::Status assign_frames() {
    const int n = def_.node_size();
    TF_ASSIGN_OR_RETURN(std::vector<int> order, order_without_back_edges(def_, index_));
    frame_of_.assign(static_cast<size_t>(n), -1);
    absl::flat_hash_map<std::string, int> frame_by_name;
    for (int i : order) {
      int f = -1;
      for (const Edge& e : index_.inputs[static_cast<size_t>(i)]) {
        const int g = back_edge(i, e) ? -1 : frame_of_[static_cast<size_t>(e.src)];
        if (g < 0 || g == f) continue;
        if (f >= 0)
          return error(i, absl::StatusCode::kInvalidArgument,
                       absl::StrCat("reads tensors of two while loops' frames ('", frames_[static_cast<size_t>(f)].name,
                                    "' and '", frames_[static_cast<size_t>(g)].name,
                                    "'); a loop reads an outer tensor through an Enter (Note [TF1 while loops])"));
        f = g;
      }
      if (is_enter(op(i))) {
        const proto::AttrValue* name = find_attr(def_.node(i), "frame_name");
        if (name == nullptr || name->s().empty())
          return error(i, absl::StatusCode::kInvalidArgument, "attr 'frame_name' (a string) is missing");
        auto [it, is_new] = frame_by_name.try_emplace(name->s(), static_cast<int>(frames_.size()));
        if (is_new) {
          int depth = 1;
          for (int p = f; p >= 0; p = frames_[static_cast<size_t>(p)].parent) ++depth;
          if (depth > kMaxLoopNesting)
            return error(i, absl::StatusCode::kResourceExhausted,
                         absl::StrCat("while loops nest more than ", kMaxLoopNesting, " deep"));
          Frame& fresh_frame = frames_.emplace_back();
          fresh_frame.name = name->s();
          fresh_frame.parent = f;
          if (f >= 0) frames_[static_cast<size_t>(f)].has_child = true;
        } else if (frames_[static_cast<size_t>(it->second)].parent != f) {  // frames nest as a tree
          return error(i, absl::StatusCode::kInvalidArgument,
                       absl::StrCat("enters frame '", name->s(), "' from another frame than its other Enters (Note [TF1 while loops])"));
        }
        frame_of_[static_cast<size_t>(i)] = it->second;
      } else if (is_exit(op(i))) {
        if (f < 0) return error(i, absl::StatusCode::kInvalidArgument, "is not inside a while loop (Note [TF1 while loops])");
        frames_[static_cast<size_t>(f)].exits.push_back(i);
        frame_of_[static_cast<size_t>(i)] = frames_[static_cast<size_t>(f)].parent;
        continue;
      } else {
        frame_of_[static_cast<size_t>(i)] = f;
      }
      if (frame_of_[static_cast<size_t>(i)] >= 0) frames_[static_cast<size_t>(frame_of_[static_cast<size_t>(i)])].members.push_back(i);
      else if (is_v1_loop_type(op(i)))
        return error(i, absl::StatusCode::kInvalidArgument, "is not inside a while loop (Note [TF1 while loops])");
    }
    for (Frame& fr : frames_) std::sort(fr.members.begin(), fr.members.end());
    return absl::OkStatus();
  }

  // The loop's structure: its variables, captures and LoopCond, each structural node's role.
  absl::Status find_structure(int f) {
    const Frame& fr = frames_[static_cast<size_t>(f)];
    vars_.clear();
    captures_.clear();
    loop_cond_ = -1;
    absl::flat_hash_map<int, int> var_of_enter;
    for (int m : fr.members) {
      const std::string& t = op(m);
      if (t.starts_with("Ref") && (is_v1_loop_type(t) || t == "RefSwitch" || t == "RefMerge"))
        return error(m, absl::StatusCode::kUnimplemented,
                     absl::StrCat("in TensorFlow 1 while loop '", fr.name, "': a loop over reference variables; freeze the "
                                  "graph first (Note [TF1 while loops])"));
      if (t == "LoopCond") {
        if (loop_cond_ >= 0) return loop_error(f, m, "a second LoopCond in one loop");
        loop_cond_ = m;
      }
      if (!is_enter(t)) continue;
      const proto::AttrValue* constant = find_attr(def_.node(m), "is_constant");
      const proto::AttrValue* dtype = find_attr(def_.node(m), "T");
      const std::vector<Edge>& ins = index_.inputs[static_cast<size_t>(m)];
      if (dtype == nullptr || ins.empty() || ins[0].control())
        return loop_error(f, m, "an Enter needs attr 'T' and its data input");
      if (constant != nullptr && constant->b()) {
        roles_[m] = RoleOf{Role::kConstEnter, static_cast<int>(captures_.size())};
        captures_.push_back(m);
      } else {
        var_of_enter.emplace(m, -1);
      }
    }
    if (loop_cond_ < 0) return loop_error(f, fr.members.front(), "the loop has no LoopCond");
    if (var_of_enter.empty()) return loop_error(f, loop_cond_, "the loop has no loop variables");
    if (index_.inputs[static_cast<size_t>(loop_cond_)].empty() || index_.inputs[static_cast<size_t>(loop_cond_)][0].control())
      return loop_error(f, loop_cond_, "LoopCond needs its predicate as input 0");
    roles_[loop_cond_] = RoleOf{Role::kLoopCond};
    for (int m : fr.members) {  // Merge(Enter, NextIteration): a loop variable
      if (op(m) != "Merge") continue;
      std::vector<Edge> data;
      for (const Edge& e : index_.inputs[static_cast<size_t>(m)]) if (!e.control()) data.push_back(e);
      const auto enters = [&](const Edge& e) { return var_of_enter.contains(e.src); };
      const auto nexts = [&](const Edge& e) { return is_next_iteration(op(e.src)); };
      const bool any = std::any_of(data.begin(), data.end(), [&](const Edge& e) { return enters(e) || nexts(e); });
      if (!any) continue;  // a tf.cond's Merge inside the loop
      if (data.size() != 2 || !((enters(data[0]) && nexts(data[1])) || (nexts(data[0]) && enters(data[1]))))
        return loop_error(f, m, "a loop variable's Merge joins one Enter and one NextIteration");
      LoopVar v;
      v.merge = m;
      v.enter = enters(data[0]) ? data[0].src : data[1].src;
      v.next = nexts(data[0]) ? data[0].src : data[1].src;
      if (var_of_enter[v.enter] >= 0) return loop_error(f, v.enter, "the Enter of a loop variable feeds two Merges");
      if (roles_.contains(v.next)) return loop_error(f, v.next, "a NextIteration feeds two Merges");
      if (frame_of_[static_cast<size_t>(v.next)] != f) return loop_error(f, v.next, "the NextIteration is in another loop");
      const int k = static_cast<int>(vars_.size());
      var_of_enter[v.enter] = k;
      v.dtype = find_attr(def_.node(v.enter), "T")->type();
      roles_[v.enter] = RoleOf{Role::kVarEnter, k};
      roles_[v.merge] = RoleOf{Role::kMerge, k};
      roles_[v.next] = RoleOf{Role::kNextIteration, k};
      vars_.push_back(v);
    }
    for (const auto& [enter, k] : var_of_enter)
      if (k < 0) return loop_error(f, enter, "the Enter of a loop variable (is_constant false) feeds no Merge with a NextIteration");
    for (int m : fr.members) {
      if (is_next_iteration(op(m)) && !roles_.contains(m)) return loop_error(f, m, "a NextIteration that feeds no loop variable's Merge");
      if (op(m) != "Switch") continue;
      const std::vector<Edge>& ins = index_.inputs[static_cast<size_t>(m)];
      if (ins.size() < 2 || ins[1].src != loop_cond_ || ins[1].control()) continue;  // a tf.cond's Switch
      const auto r = roles_.find(ins[0].src);
      if (ins[0].control() || ins[0].index != 0 || r == roles_.end() || r->second.role != Role::kMerge)
        return loop_error(f, m, "a Switch on the LoopCond switches something other than a loop variable's Merge");
      const int k = r->second.k;  // before roles_ grows
      LoopVar& v = vars_[static_cast<size_t>(k)];
      if (v.sw >= 0) return loop_error(f, m, "a loop variable has two Switches on the LoopCond");
      v.sw = m;
      roles_[m] = RoleOf{Role::kSwitch, k};
    }
    for (const LoopVar& v : vars_)
      if (v.sw < 0) return loop_error(f, v.merge, "the loop variable's Merge has no Switch on the LoopCond");
    for (int x : fr.exits) {
      const std::vector<Edge>& ins = index_.inputs[static_cast<size_t>(x)];
      const auto r = ins.empty() || ins[0].control() ? roles_.end() : roles_.find(ins[0].src);
      if (r == roles_.end() || r->second.role != Role::kSwitch || ins[0].index != 0)
        return loop_error(f, x, "an Exit reads output 0 of a loop variable's Switch");
      vars_[static_cast<size_t>(r->second.k)].exits.push_back(x);
    }
    return absl::OkStatus();
  }

  Role role(int n) const {
    const auto r = roles_.find(n);
    return r == roles_.end() ? Role::kNone : r->second.role;
  }

  // The ordinary nodes of frame f that `seeds` need, in GraphDef order.
  std::vector<int> closure(int f, std::vector<int> seeds) const {
    absl::flat_hash_set<int> seen;
    std::vector<int> out;
    while (!seeds.empty()) {
      const int n = seeds.back();
      seeds.pop_back();
      if (frame_of_[static_cast<size_t>(n)] != f || role(n) != Role::kNone || !seen.insert(n).second) continue;
      out.push_back(n);
      for (const Edge& e : index_.inputs[static_cast<size_t>(n)]) seeds.push_back(e.src);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The text a function's node or result reads for data input e, inside the cond or the body.
  absl::StatusOr<std::string> tensor_in_function(int f, int reader, const Edge& e, bool body,
                                                 const absl::flat_hash_set<int>& nodes) const {
    const auto r = roles_.find(e.src);
    if (r == roles_.end()) {
      if (!nodes.contains(e.src))
        return loop_error(f, reader, absl::StrCat("reads '", def_.node(e.src).name(), "', which is outside the loop; a loop "
                                                  "reads an outer tensor through an Enter"));
      std::optional<std::string> name = function_output_name(def_.node(e.src), e.index);
      if (!name) return loop_error(f, reader, absl::StrCat("reads output ", e.index, " of '", def_.node(e.src).name(), "', which it has not"));
      return *std::move(name);
    }
    const int k = r->second.k;
    switch (r->second.role) {
      case Role::kConstEnter:
        if (e.index == 0) return capture_args_[static_cast<size_t>(k)];
        break;
      case Role::kMerge:
        if (e.index == 0) return var_args_[static_cast<size_t>(k)];
        break;
      case Role::kSwitch:
        if (body && e.index == 1) return var_args_[static_cast<size_t>(k)];
        break;
      default:
        break;
    }
    return loop_error(f, reader, absl::StrCat("reads output ", e.index, " of the loop's ", def_.node(e.src).op(), " '",
                                              def_.node(e.src).name(), "', which tapeflow's While has no value for"));
  }

  struct Result {
    std::string name;
    proto::DataType dtype;
    int reader;  // the node whose input this is (for messages)
    Edge edge;
  };

  // A FunctionDef of the loop's arguments running `nodes`; control inputs from outside the loop
  // go to the While (outer_control).
  absl::Status emit_function(int f, const std::string& name, const std::vector<int>& nodes, bool body,
                             const std::vector<Result>& results, const std::vector<int>& control_rets,
                             proto::FunctionDef& fn, absl::flat_hash_set<int>& outer_control) const {
    const absl::flat_hash_set<int> in_fn(nodes.begin(), nodes.end());
    proto::OpDef& sig = *fn.mutable_signature();
    sig.set_name(name);
    for (size_t k = 0; k < vars_.size(); ++k) {
      proto::OpDef::ArgDef& a = *sig.add_input_arg();
      a.set_name(var_args_[k]);
      a.set_type(vars_[k].dtype);
    }
    for (size_t j = 0; j < captures_.size(); ++j) {
      proto::OpDef::ArgDef& a = *sig.add_input_arg();
      a.set_name(capture_args_[j]);
      a.set_type(find_attr(def_.node(captures_[j]), "T")->type());
    }
    TF_RETURN_IF_ERROR(add_function_nodes(
        def_, index_, nodes, [&](int reader, const Edge& e) { return tensor_in_function(f, reader, e, body, in_fn); },
        [&](int src) {  // a loop structure node's is dropped: the function's arguments are there before it runs
          if (frame_of_[static_cast<size_t>(src)] != f) outer_control.insert(src);
        },
        control_rets, fn));
    for (const Result& r : results) {
      proto::OpDef::ArgDef& a = *sig.add_output_arg();
      a.set_name(r.name);
      a.set_type(r.dtype);
      TF_ASSIGN_OR_RETURN(std::string t, tensor_in_function(f, r.reader, r.edge, body, in_fn));
      (*fn.mutable_ret())[r.name] = std::move(t);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Rewritten> rewrite_loop(int f, GraphDef& out) {
    roles_.clear();
    TF_RETURN_IF_ERROR(find_structure(f));
    const Frame& fr = frames_[static_cast<size_t>(f)];
    // Names: the node after the frame ("while/while_context" -> "while"), the functions after it.
    std::string base = fr.name;
    if (base.ends_with("/while_context")) base.resize(base.size() - std::string_view("/while_context").size());
    const std::string node_name = names_.take(valid_node_name(base) ? base : "while",
                                              [&](const std::string& n) { return index_.by_name.contains(n); });
    const std::string cond_name = names_.function_name(base, "_cond"), body_name = names_.function_name(base, "_body");
    var_args_.clear();
    capture_args_.clear();
    for (size_t k = 0; k < vars_.size(); ++k) var_args_.push_back(argument_name(absl::StrCat("loop_var_", k), index_, arg_names_));
    for (size_t j = 0; j < captures_.size(); ++j)
      capture_args_.push_back(argument_name(absl::StrCat("captured_", j), index_, arg_names_));

    const std::vector<Edge>& pred_in = index_.inputs[static_cast<size_t>(loop_cond_)];
    const std::vector<int> cond_nodes = closure(f, {pred_in[0].src});
    const absl::flat_hash_set<int> in_cond(cond_nodes.begin(), cond_nodes.end());
    std::vector<int> body_seeds, side_effects;
    for (int m : fr.members)  // every ordinary node outside the condition runs in the body
      if (role(m) == Role::kNone && !in_cond.contains(m)) {
        body_seeds.push_back(m);
        if (index_.consumers[static_cast<size_t>(m)] == 0) side_effects.push_back(m);
      }
    std::vector<Result> body_results;
    for (size_t k = 0; k < vars_.size(); ++k) {
      const std::vector<Edge>& next_in = index_.inputs[static_cast<size_t>(vars_[k].next)];
      if (next_in.empty() || next_in[0].control()) return loop_error(f, vars_[k].next, "NextIteration needs its data input");
      body_seeds.push_back(next_in[0].src);
      body_results.push_back(Result{absl::StrCat("output_", k), vars_[k].dtype, vars_[k].next, next_in[0]});
    }
    for (size_t j = 0; j < captures_.size(); ++j)
      body_results.push_back(Result{absl::StrCat("output_", vars_.size() + j), find_attr(def_.node(captures_[j]), "T")->type(),
                                    captures_[j], Edge{captures_[j], 0}});
    const std::vector<int> body_nodes = closure(f, body_seeds);

    absl::flat_hash_set<int> outer_control;
    proto::FunctionDef* cond_fn = out.mutable_library()->add_function();
    TF_RETURN_IF_ERROR(emit_function(f, cond_name, cond_nodes, false,
                                     {Result{"cond_output", proto::DT_BOOL, loop_cond_, pred_in[0]}}, {}, *cond_fn, outer_control));
    proto::FunctionDef* body_fn = out.mutable_library()->add_function();
    TF_RETURN_IF_ERROR(emit_function(f, body_name, body_nodes, true, body_results, side_effects, *body_fn, outer_control));

    Rewritten r;
    proto::NodeDef& w = r.while_node;
    w.set_name(node_name);
    w.set_op("While");
    w.set_device(def_.node(loop_cond_).device());
    auto& attrs = *w.mutable_attr();
    proto::AttrValue::ListValue& types = *attrs["T"].mutable_list();
    proto::AttrValue::ListValue& shapes = *attrs["output_shapes"].mutable_list();
    // The shape each loop variable may take: the Merge's, when the GraphDef says it; else its rank.
    auto add_shape = [&](int node) {
      const proto::AttrValue* s = find_attr(def_.node(node), "_output_shapes");
      if (s != nullptr && s->list().shape_size() >= 1) *shapes.add_shape() = s->list().shape(0);
      else shapes.add_shape()->set_unknown_rank(true);
    };
    std::vector<int> enters;
    for (const LoopVar& v : vars_) {
      enters.push_back(v.enter);
      types.add_type(v.dtype);
      add_shape(v.merge);
    }
    for (int c : captures_) {
      enters.push_back(c);
      types.add_type(find_attr(def_.node(c), "T")->type());
      add_shape(c);
    }
    for (int e : enters) w.add_input(def_.node(e).input(0));  // data input 0 (checked in find_structure)
    std::vector<std::string> controls;
    for (int e : enters)
      for (const Edge& c : index_.inputs[static_cast<size_t>(e)]) if (c.control()) outer_control.insert(c.src);
    for (int c : outer_control) controls.push_back(absl::StrCat("^", def_.node(c).name()));
    std::sort(controls.begin(), controls.end());
    for (std::string& c : controls) w.add_input(std::move(c));
    attrs["cond"].mutable_func()->set_name(cond_name);
    attrs["body"].mutable_func()->set_name(body_name);
    const proto::AttrValue* parallel = find_attr(def_.node(enters.front()), "parallel_iterations");
    attrs["parallel_iterations"].set_i(parallel != nullptr ? parallel->i() : 10);

    for (int x : fr.exits) {
      const int k = roles_.at(index_.inputs[static_cast<size_t>(x)][0].src).k;
      proto::NodeDef& nd = r.exit_nodes.emplace_back();
      nd.set_name(def_.node(x).name());
      nd.set_op("Identity");
      nd.set_device(def_.node(x).device());
      nd.add_input(k == 0 ? node_name : absl::StrCat(node_name, ":", k));
      (*nd.mutable_attr())["T"].set_type(vars_[static_cast<size_t>(k)].dtype);
    }
    return r;
  }

  const GraphDef& def_;
  NameAllocator& names_;
  absl::flat_hash_map<std::string, std::string> arg_names_;  // argument_name's, this pass
  V1Index index_;
  std::vector<int> frame_of_;   // -1: the root frame
  std::vector<Frame> frames_;
  // The loop being rewritten.
  absl::flat_hash_map<int, RoleOf> roles_;
  std::vector<LoopVar> vars_;
  std::vector<int> captures_;  // its constant Enters
  int loop_cond_ = -1;
  std::vector<std::string> var_args_, capture_args_;
};

}  // namespace

absl::StatusOr<bool> rewrite_innermost_v1_loops(GraphDef& graph_def, NameAllocator& names) {
  GraphDef next;
  TF_ASSIGN_OR_RETURN(bool rewrote, Pass(graph_def, names).run(next));
  if (rewrote) graph_def = std::move(next);
  return rewrote;
}

}  // namespace tapeflow::graph_def_internal
