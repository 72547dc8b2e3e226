// Calls of a GraphDef's library functions, inlined before import (Note [Inlined function calls]).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "graph/graph_def.h"
#include "graph/tf_output_args.h"

namespace tapeflow::graph_def_internal {

namespace {

// Note [Inlined function calls]
// TensorFlow 2 writes a tf.function called from another as a node that calls a function of the
// GraphDef's library: by the function's name as op type, or through PartitionedCall /
// StatefulPartitionedCall and their attr "f". Before import, each such call is replaced as
// TensorFlow's own inliner does it (InlineFunctionBody, keeping the caller fetchable):
// - the body's nodes are added under the caller's name as a scope ("call/add"), on the caller's
//   device where they name none; a body node's input naming an argument reads the caller's
//   input at that argument's position, "node:arg:k" reads node's output k of its output arg
//   "arg" (TensorFlow's output arg names: graph/tf_output_args.h);
// - the caller's control inputs become control inputs of the body nodes no other body node feeds;
// - the caller's name stays, as an IdentityN of the function's results (waiting on its
//   control_ret nodes), so "call:1", "^call", input_map and return elements keep their meaning;
//   a function without results leaves a NoOp;
// - attrs that are placeholders ("$T") take the caller's values: its own attrs for a call by
//   name, the attrs of its "f" for a PartitionedCall.
// Calls inside a body are inlined too. A recursive function, a list-typed argument or result, or
// an inlined graph of more than kMaxInlinedNodes nodes or kMaxInlinedBytes bytes, calls nested
// more than kMaxNesting deep, or a call whose function is an attr placeholder is an error before
// anything is built.
// Control flow over functions (If, While, Case) is not inlined: each runs its functions as
// bodies of its own (Note [Functional control flow], graph/functional_ops.h).
constexpr int64_t kMaxInlinedNodes = 1'000'000;
// ... and bytes of NodeDefs (a function holding a large Const, called many times).
constexpr int64_t kMaxInlinedBytes = int64_t{1} << 30;
// Calls nested deeper are refused: inlining recurses once per level (a hostile chain of a
// hundred thousand functions would overflow the stack).
constexpr size_t kMaxNesting = 64;

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool is_call_op(std::string_view op) { return op == "PartitionedCall" || op == "StatefulPartitionedCall"; }

// What inlining a call adds, saturating just past the limits.
struct Cost {
  int64_t nodes = 0, bytes = 0;
  void add(const Cost& c) {
    nodes = std::min(nodes + c.nodes, kMaxInlinedNodes + 1);
    bytes = std::min(bytes + c.bytes, kMaxInlinedBytes + 1);
  }
  bool too_large() const { return nodes > kMaxInlinedNodes || bytes > kMaxInlinedBytes; }
};

class Inliner {
 public:
  Inliner(const GraphDef& def, const proto::FunctionDefLibrary& library, const FunctionIndex* index)
      : def_(def), functions_(index ? *index : own_) {
    if (index == nullptr)
      for (const proto::FunctionDef& f : library.function()) own_.emplace(f.signature().name(), &f);
  }

  // The function `node` calls (null: none); NotFound when it names one the library lacks.
  absl::StatusOr<const proto::FunctionDef*> callee(const proto::NodeDef& node) const {
    if (const auto it = functions_.find(node.op()); it != functions_.end()) return it->second;
    if (!is_call_op(node.op())) return nullptr;
    const auto f = node.attr().find("f");
    if (f != node.attr().end() && f->second.has_placeholder())
      return absl::UnimplementedError(absl::StrCat("[import_graph_def] node '", node.name(), "' (", node.op(),
                                                   ") calls the function its attr 'f' names through the placeholder '",
                                                   f->second.placeholder(), "'; tapeflow inlines calls of named functions"));
    if (f == node.attr().end() || !f->second.has_func()) return nullptr;  // the import's error for the op
    const auto it = functions_.find(f->second.func().name());
    if (it == functions_.end())
      return absl::NotFoundError(absl::StrCat("[import_graph_def] node '", node.name(), "' (", node.op(),
                                              ") calls function '", f->second.func().name(),
                                              "', which the GraphDef's library does not define"));
    return it->second;
  }

  // The GraphDef without its library (the importer reads the original's for its messages).
  absl::StatusOr<std::optional<GraphDef>> run() {
    Cost total;
    bool calls = false;
    for (const proto::NodeDef& n : def_.node()) {
      TF_ASSIGN_OR_RETURN(const proto::FunctionDef* f, callee(n));
      if (f == nullptr) {
        total.add(Cost{1, static_cast<int64_t>(n.ByteSizeLong())});
        continue;
      }
      calls = true;
      TF_ASSIGN_OR_RETURN(Cost size, inlined_size(*f, n.name()));
      total.add(size);
      if (total.too_large())
        return absl::ResourceExhaustedError(absl::StrCat(
            "[import_graph_def] inlining the call '", n.name(), "' of function '", f->signature().name(),
            "' makes the graph larger than ", kMaxInlinedNodes, " nodes or ", kMaxInlinedBytes >> 20,
            " MiB (Note [Inlined function calls])"));
    }
    if (!calls) return std::nullopt;
    GraphDef out;
    *out.mutable_versions() = def_.versions();
    out.mutable_node()->Reserve(static_cast<int>(total.nodes));
    for (const proto::NodeDef& n : def_.node()) TF_RETURN_IF_ERROR(emit(proto::NodeDef(n), out));
    return out;
  }

 private:
  // The nodes (and their bytes) one call of `f` becomes, nested calls included, saturating past
  // the limits (memoised per function: a chain of functions each calling the next twice is
  // counted, not built, before it is refused).
  absl::StatusOr<Cost> inlined_size(const proto::FunctionDef& f, const std::string& caller) {
    const std::string& name = f.signature().name();
    if (const auto it = sizes_.find(name); it != sizes_.end()) return it->second;
    if (!counting_.insert(name).second)
      return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] function '", name, "' calls itself (through '",
                                                     caller, "'); tapeflow inlines calls and cannot inline recursion"));
    if (counting_.size() > kMaxNesting)
      return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] function calls nest more than ", kMaxNesting,
                                                     " deep (at '", caller, "')"));
    Cost size{1, 0};  // the IdentityN or NoOp that keeps the caller's name
    for (const proto::NodeDef& b : f.node_def()) {
      TF_ASSIGN_OR_RETURN(const proto::FunctionDef* g, callee(b));
      if (g == nullptr) {
        size.add(Cost{1, static_cast<int64_t>(b.ByteSizeLong())});
        continue;
      }
      TF_ASSIGN_OR_RETURN(Cost inner, inlined_size(*g, absl::StrCat(name, "/", b.name())));
      size.add(inner);
    }
    counting_.erase(name);
    sizes_.emplace(name, size);
    return size;
  }

  // Appends `n` to out, inlining it when it is a call. The limits were checked by inlined_size
  // on the bodies as written; they are checked again here, on what is built.
  absl::Status emit(proto::NodeDef&& n, GraphDef& out) {
    if (out.node_size() > kMaxInlinedNodes || depth_ > static_cast<int>(kMaxNesting))
      return absl::ResourceExhaustedError(absl::StrCat("[import_graph_def] inlining function calls at '", n.name(),
                                                       "' exceeds the limits of Note [Inlined function calls]"));
    TF_ASSIGN_OR_RETURN(const proto::FunctionDef* f, callee(n));
    if (f == nullptr) {
      *out.add_node() = std::move(n);
      return absl::OkStatus();
    }
    ++depth_;
    absl::Status s = inline_call(n, *f, out);
    --depth_;
    return s;
  }

  absl::Status call_error(const proto::NodeDef& call, const proto::FunctionDef& f, std::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] node '", call.name(), "' (", call.op(),
                                                   ") calling function '", f.signature().name(), "': ", av(message)));
  }

  absl::Status inline_call(const proto::NodeDef& call, const proto::FunctionDef& f, GraphDef& out) {
    const proto::OpDef& sig = f.signature();
    for (const auto* args : {&sig.input_arg(), &sig.output_arg()})
      for (const proto::OpDef::ArgDef& a : *args)
        if (!a.number_attr().empty() || !a.type_list_attr().empty())
          return absl::UnimplementedError(absl::StrCat(
              "[import_graph_def] node '", call.name(), "' calls function '", sig.name(), "', whose argument '", a.name(),
              "' is a list of tensors; tapeflow inlines functions whose arguments and results are single tensors"));
    // The caller's data inputs are the arguments, in order; its control inputs come after them.
    std::vector<std::string> data, control;
    for (const std::string& in : call.input()) (in.starts_with("^") ? control : data).push_back(in);
    if (data.size() != static_cast<size_t>(sig.input_arg_size()))
      return call_error(call, f, absl::StrCat("passes ", data.size(), " input(s) to a function of ", sig.input_arg_size(),
                                              " argument(s)"));
    absl::flat_hash_map<std::string_view, std::string_view> arg_input;
    for (int j = 0; j < sig.input_arg_size(); ++j) arg_input.emplace(sig.input_arg(j).name(), data[static_cast<size_t>(j)]);
    // The values of the function's attrs: the call's own for a call by name, f's for PartitionedCall.
    const auto f_attr = call.attr().find("f");
    const bool through_f = is_call_op(call.op()) && f_attr != call.attr().end() && f_attr->second.has_func() &&
                           !functions_.contains(call.op());
    const auto& attr_values = through_f ? f_attr->second.func().attr() : call.attr();
    absl::flat_hash_map<std::string_view, const proto::NodeDef*> body;
    for (const proto::NodeDef& b : f.node_def()) body.emplace(b.name(), &b);
    const std::string prefix = call.name() + "/";

    // "arg", "node:arg:k" (or "node", "node:k") in the body -> the tensor's name in the graph.
    struct Resolved {  // a body input, named as in the graph (not tapeflow::Tensor)
      std::string name;
      bool of_body = false;  // a body node's output, not one of the caller's inputs
    };
    auto tensor = [&](std::string_view in) -> absl::StatusOr<Resolved> {
      auto bad = [&] {
        return call_error(call, f, absl::StrCat("the body's input '", av(in), "' names no argument, node or output of the function"));
      };
      const size_t first = in.find(':');
      const std::string_view head = in.substr(0, first);
      std::string_view arg, index;
      if (first != std::string_view::npos) {
        index = in.substr(first + 1);
        if (const size_t second = index.find(':'); second != std::string_view::npos) {
          arg = index.substr(0, second);
          index = index.substr(second + 1);
        }
      }
      int k = 0;
      if (first != std::string_view::npos && !(absl::SimpleAtoi(av(index), &k) && k >= 0)) return bad();
      if (const auto a = arg_input.find(head); a != arg_input.end()) {
        if (arg.empty() && k == 0) return Resolved{std::string(a->second), false};
        return bad();
      }
      const auto node = body.find(head);
      if (node == body.end()) return bad();
      if (!arg.empty()) {
        // TensorFlow's output args of the op (graph/tf_output_args.h), or a called function's
        // results (single tensors); an op type the table lacks takes any name, k its output.
        std::vector<OutputArg> results;
        const std::vector<OutputArg>* args = tf_output_args(node->second->op());
        if (const auto fn = functions_.find(node->second->op()); fn != functions_.end()) {
          for (const proto::OpDef::ArgDef& r : fn->second->signature().output_arg()) results.push_back(OutputArg{r.name()});
          args = &results;
        }
        if (args != nullptr && (k = output_index_of(*args, arg, k)) < 0) return bad();
      }
      return Resolved{k == 0 ? absl::StrCat(prefix, av(head)) : absl::StrCat(prefix, av(head), ":", k), true};
    };

    for (const proto::NodeDef& b : f.node_def()) {
      proto::NodeDef n = b;
      n.set_name(prefix + b.name());
      if (n.device().empty()) n.set_device(call.device());
      n.clear_input();
      bool fed_by_body = false;
      for (const std::string& in : b.input()) {
        if (in.starts_with("^")) {
          if (!body.contains(std::string_view(in).substr(1)))
            return call_error(call, f, absl::StrCat("the body's control input '", in, "' names no node of the function"));
          n.add_input(absl::StrCat("^", prefix, in.substr(1)));
          continue;
        }
        TF_ASSIGN_OR_RETURN(Resolved t, tensor(in));
        fed_by_body |= t.of_body;
        n.add_input(std::move(t.name));
      }
      if (!fed_by_body)
        for (const std::string& c : control) n.add_input(c);
      for (auto& [key, value] : *n.mutable_attr()) {
        if (!value.has_placeholder()) continue;
        const auto v = attr_values.find(value.placeholder());
        if (v == attr_values.end())
          return call_error(call, f, absl::StrCat("attr '", key, "' of its node '", b.name(), "' is the function's attr '",
                                                  value.placeholder(), "', which the call does not set"));
        value = v->second;
      }
      // Colocation ("_class": "loc:@X") names a body node or an argument: the inlined node, or
      // the node the caller passes; other entries are dropped (they name nothing here).
      if (auto cls = n.mutable_attr()->find("_class"); cls != n.mutable_attr()->end() && cls->second.has_list()) {
        proto::AttrValue::ListValue kept;
        for (const std::string& entry : cls->second.list().s()) {
          if (!entry.starts_with("loc:@")) continue;
          const std::string_view x = std::string_view(entry).substr(5);
          if (body.contains(x)) kept.add_s(absl::StrCat("loc:@", prefix, av(x)));
          else if (const auto a = arg_input.find(x); a != arg_input.end())
            kept.add_s(absl::StrCat("loc:@", av(split_tensor_name(a->second).first)));
        }
        if (kept.s_size() == 0) n.mutable_attr()->erase(cls);
        else *cls->second.mutable_list() = std::move(kept);
      }
      TF_RETURN_IF_ERROR(emit(std::move(n), out));
    }

    // The caller's name, kept: an IdentityN of the results, after the control_ret nodes.
    proto::NodeDef& keep = *out.add_node();
    keep.set_name(call.name());
    keep.set_device(call.device());
    keep.set_op(sig.output_arg_size() > 0 ? "IdentityN" : "NoOp");
    proto::AttrValue::ListValue* types = sig.output_arg_size() > 0 ? (*keep.mutable_attr())["T"].mutable_list() : nullptr;
    for (int k = 0; k < sig.output_arg_size(); ++k) {
      const proto::OpDef::ArgDef& result = sig.output_arg(k);
      const auto ret = f.ret().find(result.name());
      if (ret == f.ret().end())
        return call_error(call, f, absl::StrCat("its result '", result.name(), "' has no entry in the function's ret"));
      TF_ASSIGN_OR_RETURN(Resolved t, tensor(ret->second));
      keep.add_input(std::move(t.name));
      proto::DataType type = result.type();
      if (type == proto::DT_INVALID && !result.type_attr().empty())
        if (const auto v = attr_values.find(result.type_attr()); v != attr_values.end()) type = v->second.type();
      if (type == proto::DT_INVALID)
        return call_error(call, f, absl::StrCat("the dtype of its result '", result.name(), "' is not known"));
      types->add_type(type);
    }
    std::vector<std::pair<std::string_view, std::string_view>> control_rets(f.control_ret().begin(), f.control_ret().end());
    std::sort(control_rets.begin(), control_rets.end());  // a map's order is not the file's: keep the result stable
    for (const auto& [name, node] : control_rets) {
      if (!body.contains(node))
        return call_error(call, f, absl::StrCat("its control_ret '", av(name), "' names no node of the function"));
      keep.add_input(absl::StrCat("^", prefix, av(node)));
    }
    // The caller's control inputs hold its results too (a result may be an argument, which no
    // body node gates).
    for (const std::string& c : control) keep.add_input(c);
    return absl::OkStatus();
  }

  const GraphDef& def_;
  FunctionIndex own_;                 // when the caller has no index
  const FunctionIndex& functions_;
  absl::flat_hash_map<std::string, Cost> sizes_;
  int depth_ = 0;  // of inline_call, checked again while emitting
  absl::flat_hash_set<std::string> counting_;
};

}  // namespace

absl::StatusOr<std::optional<GraphDef>> inline_function_calls(const GraphDef& def, const proto::FunctionDefLibrary& library,
                                                              const FunctionIndex* index) {
  if (library.function_size() == 0) return std::nullopt;
  return Inliner(def, library, index).run();
}

}  // namespace tapeflow::graph_def_internal
