// Bodies tapeflow traced (cond, while_loop) written as TensorFlow FunctionDefs: the body's graph
// exported as a GraphDef, its argument Placeholders the signature's input args, every other node
// a node_def whose inputs name TensorFlow's output args ("mul:z:0"), its results the rets.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/errors.h"
#include "graph/graph_def_functional.h"
#include "graph/tf_output_args.h"

namespace tapeflow::graph_def_internal {

namespace {

// An OpDef arg name: [a-z][a-z0-9_]*.
bool valid_arg_name(std::string_view s) {
  if (s.empty() || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

absl::StatusOr<proto::FunctionDef> function_def_of(const FunctionBody& body, LibraryWriter& library) {
  auto fail = [&](std::string_view message) {
    return absl::UnimplementedError(absl::StrCat("function '", body.name, "': ", absl::string_view(message.data(), message.size())));
  };
  GraphDef def;
  try {
    def = to_graph_def(body.graph, std::source_location());
  } catch (const Error& e) {
    return absl::Status(e.code(), absl::StrCat("function '", body.name, "': ", e.message()));
  }
  // The functions its own If / While nodes run (each from its own origin: compared by content).
  for (const proto::FunctionDef& f : def.library().function()) TF_RETURN_IF_ERROR(library.add(f, &f));
  const GraphState& state = *body.graph.state();
  proto::FunctionDef f;
  proto::OpDef& sig = *f.mutable_signature();
  sig.set_name(body.name);
  absl::flat_hash_map<std::string, std::string> arg_of;  // argument Placeholder -> its arg name
  for (size_t k = 0; k < body.args.size(); ++k) {
    const Node& p = state.node(body.args[k].node);
    std::string name = valid_arg_name(p.name) ? p.name : absl::StrCat("arg_", k);
    while (arg_of.contains(name)) name += "_";  // unique among the args (a node's name is)
    proto::OpDef::ArgDef& a = *sig.add_input_arg();
    a.set_name(name);
    TF_ASSIGN_OR_RETURN(proto::DataType t, to_proto_dtype(p.outputs[0].dtype));
    a.set_type(t);
    arg_of.emplace(p.name, name);
  }
  absl::flat_hash_map<std::string, const proto::NodeDef*> node_of;
  for (const proto::NodeDef& n : def.node()) node_of.emplace(n.name(), &n);
  // "x:k" of the GraphDef -> the FunctionDef's name for it.
  auto tensor = [&](const std::string& input) -> absl::StatusOr<std::string> {
    const auto [node, index] = split_tensor_name(input);
    const std::string name(node);
    if (const auto a = arg_of.find(name); a != arg_of.end()) return a->second;
    const auto n = node_of.find(name);
    if (n == node_of.end()) return fail(absl::StrCat("input '", input, "' names no node"));
    const std::vector<OutputArg>* args = tf_output_args(n->second->op());
    if (args == nullptr) return fail(absl::StrCat("TensorFlow's output args of op type ", n->second->op(), " are not known"));
    const auto arg = output_arg_of(*args, index);
    if (!arg) return fail(absl::StrCat("node '", name, "' (", n->second->op(), ") has no output ", index));
    return absl::StrCat(name, ":", absl::string_view(arg->first.data(), arg->first.size()), ":", arg->second);
  };
  // Placeholders nothing reads are left out: a gradient's body that imported another body keeps
  // the placeholders its input_map replaced (graph/functional_gradient.cc).
  absl::flat_hash_set<std::string_view> read;
  for (const proto::NodeDef& n : def.node())
    for (const std::string& in : n.input()) read.insert(split_tensor_name(std::string_view(in).substr(in.starts_with("^") ? 1 : 0)).first);
  for (const TensorRef& r : body.results) read.insert(body.graph.state()->node(r.node).name);
  for (const proto::NodeDef& n : def.node()) {
    if (arg_of.contains(n.name())) continue;
    if (n.op() == "Placeholder" && !read.contains(n.name())) continue;
    if (n.op() == "Placeholder") return fail(absl::StrCat("node '", n.name(), "' is a placeholder; a body takes its values as arguments"));
    proto::NodeDef& out = *f.add_node_def();
    out = n;
    out.clear_input();
    for (const std::string& in : n.input()) {
      if (in.starts_with("^")) {
        if (!arg_of.contains(in.substr(1))) out.add_input(in);  // an argument is there from the start
        continue;
      }
      TF_ASSIGN_OR_RETURN(std::string t, tensor(in));
      out.add_input(std::move(t));
    }
  }
  for (size_t k = 0; k < body.results.size(); ++k) {
    const Node& producer = state.node(body.results[k].node);
    proto::OpDef::ArgDef& r = *sig.add_output_arg();
    r.set_name(absl::StrCat("output_", k));
    TF_ASSIGN_OR_RETURN(proto::DataType t, to_proto_dtype(producer.outputs[static_cast<size_t>(body.results[k].index)].dtype));
    r.set_type(t);
    TF_ASSIGN_OR_RETURN(std::string value, tensor(body.results[k].index == 0 ? producer.name
                                                                              : absl::StrCat(producer.name, ":", body.results[k].index)));
    (*f.mutable_ret())[r.name()] = std::move(value);
  }
  if (body.call >= 0) {  // the node that waits for the side effects
    const std::string& name = state.node(body.call).name;
    sig.add_control_output(name);
    (*f.mutable_control_ret())[name] = name;
    sig.set_is_stateful(true);
  }
  return f;
}

}  // namespace tapeflow::graph_def_internal
