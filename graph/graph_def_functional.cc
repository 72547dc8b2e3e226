// If, While and Case in a GraphDef: their functions imported as bodies, their attrs read and
// written (Note [Functional control flow], graph/functional_ops.h).
#include "graph/graph_def_functional.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "core/errors.h"
#include "graph/graph_ops.h"

namespace tapeflow::graph_def_internal {

// The bodies this thread is building for one import (nested imports share it): the functions
// being built (a function that runs itself is refused), the nodes built so far, the bodies
// built (a function run twice on the same argument specs is built once), and the library.
struct BodyBuilds {
  const proto::FunctionDefLibrary* source = nullptr;
  std::shared_ptr<const proto::FunctionDefLibrary> library;  // a copy of *source, made on first use
  FunctionIndex index;               // its functions by name (the first of a name), made with it
  std::vector<std::string> stack;
  std::vector<int> heights;          // per stack entry: the tallest body built inside it so far
  int64_t nodes = 0, bytes = 0;      // in every body built (the budget: kMaxFunctionNodes, kMaxFunctionBytes)
  // By function, attrs and argument specs: the body, and how deep its own bodies nest (a body
  // reused deep inside another nest still counts its whole depth against kMaxFunctionNesting).
  absl::flat_hash_map<std::string, std::shared_ptr<const FunctionBody>> built;
  absl::flat_hash_map<std::string, int> height;
  // Bodies that failed: an import that abandons its one pass plans every node again (Note [One
  // pass]), and at each level of a nest that would build the failing bodies twice.
  absl::flat_hash_map<std::string, absl::Status> failed;
};

namespace {

thread_local BodyBuilds* current_builds = nullptr;

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Equal messages, equal bytes (protobuf's maps serialise in any order otherwise).
std::string deterministic_bytes(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

std::string specs_key(absl::Span<const TensorSpec> specs) {
  std::string key;
  for (const TensorSpec& s : specs) absl::StrAppend(&key, dtype_name(s.dtype), s.shape.to_string(), ";");
  return key;
}

// A function argument's or result's dtype: its own type, or the value of its type attr.
absl::StatusOr<DType> arg_dtype(const proto::OpDef::ArgDef& arg, const proto::NameAttrList& func, std::string_view what) {
  if (!arg.number_attr().empty() || !arg.type_list_attr().empty())
    return absl::UnimplementedError(absl::StrCat("function '", func.name(), "': its ", av(what), " '", arg.name(),
                                                 "' is a list of tensors; tapeflow runs functions whose arguments and "
                                                 "results are single tensors"));
  proto::DataType type = arg.type();
  if (type == proto::DT_INVALID && !arg.type_attr().empty())
    if (const auto v = func.attr().find(arg.type_attr()); v != func.attr().end()) type = v->second.type();
  if (type == proto::DT_RESOURCE)
    return absl::UnimplementedError(absl::StrCat(
        "function '", func.name(), "': its ", av(what), " '", arg.name(),
        "' is a resource (a variable); freeze the graph first (TensorFlow's convert_variables_to_constants_v2)"));
  absl::StatusOr<DType> dt = from_proto_dtype(type);
  if (!dt.ok())
    return absl::Status(dt.status().code(), absl::StrCat("function '", func.name(), "': its ", av(what), " '", arg.name(),
                                                         "': ", dt.status().message()));
  return dt;
}

// `height`: set to how many levels of bodies it makes, itself included.
absl::StatusOr<std::shared_ptr<const FunctionBody>> build_new_body(const proto::NameAttrList& func,
                                                                   absl::Span<const TensorSpec> args, int* height,
                                                                   std::source_location loc);

absl::StatusOr<std::shared_ptr<const FunctionBody>> build_body(const proto::NameAttrList& func,
                                                               absl::Span<const TensorSpec> args, std::source_location loc) {
  BodyBuilds& b = *current_builds;
  // TensorFlow's function and attr names (and valid UTF-8, which protobuf wants before it
  // serialises the key below).
  auto valid = [](std::string_view name, bool attr) {
    if (name.empty()) return false;
    for (char c : name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (!attr && (c == '.' || c == '-' || c == '/'))))
        return false;
    return true;
  };
  bool names_valid = valid(func.name(), false);
  for (const auto& [key, value] : func.attr()) names_valid = names_valid && valid(key, true);
  if (!names_valid)
    return absl::InvalidArgumentError(absl::StrCat("function '", absl::CHexEscape(func.name()),
                                                   "' (or one of its attr names) is not a valid name"));
  const std::string key = absl::StrCat(deterministic_bytes(func), "|", specs_key(args));
  auto nested = [&](int height) -> absl::Status {  // this body, `height` levels tall, inside the stack
    if (b.stack.size() + static_cast<size_t>(height) > static_cast<size_t>(kMaxFunctionNesting))
      return absl::InvalidArgumentError(absl::StrCat("functions run by If, While and Case nest more than ", kMaxFunctionNesting,
                                                     " deep (at '", func.name(), "')"));
    if (!b.heights.empty()) b.heights.back() = std::max(b.heights.back(), height);
    return absl::OkStatus();
  };
  if (const auto it = b.built.find(key); it != b.built.end()) {
    TF_RETURN_IF_ERROR(nested(b.height.at(key)));
    return it->second;
  }
  // A failure may depend on the depth (kMaxFunctionNesting): remembered for this depth only.
  const std::string failed_key = absl::StrCat(key, "|", b.stack.size());
  if (const auto it = b.failed.find(failed_key); it != b.failed.end()) return it->second;
  int height = 0;
  absl::StatusOr<std::shared_ptr<const FunctionBody>> body = build_new_body(func, args, &height, loc);
  if (body.ok()) {
    b.built.emplace(key, *body);
    b.height.emplace(key, height);
    if (absl::Status s = nested(height); !s.ok()) body = s;
  }
  if (!body.ok()) b.failed.emplace(failed_key, body.status());
  return body;
}

absl::StatusOr<std::shared_ptr<const FunctionBody>> build_new_body(const proto::NameAttrList& func,
                                                                   absl::Span<const TensorSpec> args, int* height,
                                                                   std::source_location loc) {
  BodyBuilds& b = *current_builds;
  if (!b.library) {
    b.library = std::make_shared<const proto::FunctionDefLibrary>(*b.source);
    for (const proto::FunctionDef& d : b.library->function()) b.index.emplace(d.signature().name(), &d);
  }
  const auto found = b.index.find(func.name());
  if (found == b.index.end())
    return absl::NotFoundError(absl::StrCat("function '", func.name(), "' is not in the GraphDef's library"));
  const proto::FunctionDef* f = found->second;
  if (std::find(b.stack.begin(), b.stack.end(), func.name()) != b.stack.end())
    return absl::InvalidArgumentError(absl::StrCat("function '", func.name(), "' runs itself (through ",
                                                   absl::StrJoin(b.stack, " -> "), "); tapeflow cannot import recursion"));
  if (b.stack.size() >= static_cast<size_t>(kMaxFunctionNesting))
    return absl::InvalidArgumentError(absl::StrCat("functions run by If, While and Case nest more than ", kMaxFunctionNesting,
                                                   " deep (at '", func.name(), "')"));
  const proto::OpDef& sig = f->signature();
  if (sig.input_arg_size() != static_cast<int>(args.size()))
    return absl::InvalidArgumentError(absl::StrCat("function '", func.name(), "' takes ", sig.input_arg_size(),
                                                   " argument(s); the node passes ", args.size()));
  for (int k = 0; k < sig.input_arg_size(); ++k) {
    if (sig.input_arg(k).type() == proto::DT_VARIANT) continue;  // a list: the buffer the node passes (Note [TensorLists in a GraphDef])
    TF_ASSIGN_OR_RETURN(DType dt, arg_dtype(sig.input_arg(k), func, "argument"));
    if (dt != args[static_cast<size_t>(k)].dtype)
      return absl::InvalidArgumentError(absl::StrCat("function '", func.name(), "': argument '", sig.input_arg(k).name(),
                                                     "' is ", dtype_name(dt), "; the node passes ",
                                                     dtype_name(args[static_cast<size_t>(k)].dtype)));
  }
  for (const proto::OpDef::ArgDef& r : sig.output_arg())
    if (r.type() != proto::DT_VARIANT) TF_RETURN_IF_ERROR(arg_dtype(r, func, "result").status());

  // A GraphDef that calls the function on placeholders; inlining the call makes it the body.
  GraphDef call;
  proto::NodeDef* caller = nullptr;
  std::vector<std::string> returns;
  for (size_t k = 0; k < args.size(); ++k) {
    proto::NodeDef& p = *call.add_node();
    p.set_name(absl::StrCat("arg_", k));
    p.set_op("Placeholder");
    TF_ASSIGN_OR_RETURN(proto::DataType type, to_proto_dtype(args[k].dtype));
    (*p.mutable_attr())["dtype"].set_type(type);
    shape_to_proto(args[k].shape, (*p.mutable_attr())["shape"].mutable_shape());
    returns.push_back(p.name());
  }
  caller = call.add_node();
  caller->set_name("f");
  caller->set_op(func.name());
  for (size_t k = 0; k < args.size(); ++k) caller->add_input(absl::StrCat("arg_", k));
  *caller->mutable_attr() = func.attr();
  for (int k = 0; k < sig.output_arg_size(); ++k) returns.push_back(absl::StrCat("f:", k));
  returns.push_back("f");

  b.stack.push_back(func.name());
  b.heights.push_back(0);
  absl::StatusOr<std::optional<GraphDef>> inlined = inline_function_calls(call, *b.library, &b.index);
  auto body = std::make_shared<FunctionBody>();
  std::vector<ImportedElement> out;
  absl::Status imported = inlined.status();
  if (imported.ok()) {
    b.bytes += static_cast<int64_t>((*inlined)->ByteSizeLong());
    if (b.bytes > kMaxFunctionBytes)
      imported = absl::ResourceExhaustedError(absl::StrCat("the functions run by If, While and Case make more than ",
                                                           kMaxFunctionBytes >> 20, " MiB of nodes in all"));
  }
  if (imported.ok()) {
    try {
      out = import_with_library(body->graph, **inlined, *b.library, returns, loc);
    } catch (const Error& e) {
      imported = e.status();
    }
  }
  *height = b.heights.back() + 1;
  b.stack.pop_back();
  b.heights.pop_back();
  if (!imported.ok()) {  // the nested import's "[import_graph_def] " tag dropped: the outer one has it
    absl::string_view inner = imported.message();
    absl::ConsumePrefix(&inner, "[import_graph_def] ");
    return absl::Status(imported.code(), absl::StrCat("function '", func.name(), "': ", inner));
  }
  body->name = func.name();
  body->source = std::make_shared<const FunctionDefSource>(FunctionDefSource{func, b.library});
  size_t next = 0;
  for (size_t k = 0; k < args.size(); ++k) body->args.push_back(TensorRef{std::get<Operation>(out[next++]).id(), 0});
  for (int k = 0; k < sig.output_arg_size(); ++k) {
    const Tensor& t = std::get<Tensor>(out[next++]);
    body->results.push_back(TensorRef{t.symbolic().node, t.symbolic().output});
  }
  body->call = std::get<Operation>(out[next]).id();
  for (const Node* n : body->graph.state()->snapshot())
    if (n->op == &kVarHandleOp)
      return absl::UnimplementedError(absl::StrCat("function '", func.name(), "' holds a variable ('", n->name,
                                                   "'); tapeflow runs functions without variables: freeze the graph first"));
  b.nodes += body->graph.num_nodes();
  if (b.nodes > kMaxFunctionNodes)
    return absl::ResourceExhaustedError(absl::StrCat("the functions run by If, While and Case make more than ",
                                                     kMaxFunctionNodes, " nodes in all (at '", func.name(), "')"));
  return std::shared_ptr<const FunctionBody>(std::move(body));
}

absl::StatusOr<const proto::NameAttrList*> func_attr(const proto::NodeDef& nd, const char* name) {
  const proto::AttrValue* v = find_attr(nd, name);
  if (v == nullptr || !v->has_func()) return absl::InvalidArgumentError(absl::StrCat("attr '", name, "' (a function) is missing"));
  return &v->func();
}

// A list(type) attr's dtypes; nullopt when absent.
absl::StatusOr<std::optional<std::vector<DType>>> types_attr(const proto::NodeDef& nd, const char* name) {
  const proto::AttrValue* v = find_attr(nd, name);
  if (v == nullptr) return std::nullopt;
  if (!v->has_list() && v->value_case() != proto::AttrValue::VALUE_NOT_SET)
    return absl::InvalidArgumentError(absl::StrCat("attr '", name, "' must be a list of types"));
  std::vector<DType> out;
  for (int k = 0; k < v->list().type_size(); ++k) {
    if (v->list().type(k) == proto::DT_RESOURCE)
      return absl::UnimplementedError(absl::StrCat("attr '", name, "' passes a resource (a variable); freeze the graph first "
                                                   "(TensorFlow's convert_variables_to_constants_v2)"));
    absl::StatusOr<DType> dt = from_proto_dtype(v->list().type(k));
    if (!dt.ok()) return absl::Status(dt.status().code(), absl::StrCat("attr '", name, "': ", dt.status().message()));
    out.push_back(*dt);
  }
  return out;
}

// The shapes of attr output_shapes: one per output, or none; nullopt for an unknown rank.
absl::StatusOr<std::vector<std::optional<Shape>>> output_shapes_attr(const proto::NodeDef& nd, size_t outputs) {
  std::vector<std::optional<Shape>> out;
  const proto::AttrValue* v = find_attr(nd, "output_shapes");
  if (v == nullptr || v->list().shape_size() == 0) return out;
  if (static_cast<size_t>(v->list().shape_size()) != outputs)
    return absl::InvalidArgumentError(absl::StrCat("attr 'output_shapes' has ", v->list().shape_size(), " shapes for ",
                                                   outputs, " outputs"));
  for (const proto::TensorShapeProto& s : v->list().shape()) {
    if (s.unknown_rank()) { out.emplace_back(); continue; }
    Shape shape;
    for (const auto& d : s.dim()) shape.push_back(d.size() < 0 ? -1 : d.size());
    out.emplace_back(std::move(shape));
  }
  return out;
}

absl::Status check_types(const char* attr, const std::optional<std::vector<DType>>& declared, absl::Span<const TensorSpec> specs,
                         std::string_view what) {
  if (!declared) return absl::OkStatus();
  bool same = declared->size() == specs.size();
  for (size_t k = 0; same && k < specs.size(); ++k) same = (*declared)[k] == specs[k].dtype;
  if (same) return absl::OkStatus();
  std::vector<std::string> names, actual;
  for (DType d : *declared) names.push_back(dtype_name(d));
  for (const TensorSpec& s : specs) actual.push_back(dtype_name(s.dtype));
  return absl::InvalidArgumentError(absl::StrCat("attr '", attr, "' is [", absl::StrJoin(names, ", "), "] but ", av(what),
                                                 " [", absl::StrJoin(actual, ", "), "]"));
}

// Output k of an If or Case: the dtype it declares, the shape output_shapes gives or else the
// one every branch's result fits.
absl::StatusOr<OutputSpecs> branch_outputs(const proto::NodeDef& nd, const std::vector<std::shared_ptr<const FunctionBody>>& branches,
                                           const char* const* names) {
  TF_ASSIGN_OR_RETURN(std::optional<std::vector<DType>> tout, types_attr(nd, "Tout"));
  if (!tout) return absl::InvalidArgumentError("attr 'Tout' (a list of types) is missing");
  TF_ASSIGN_OR_RETURN(std::vector<std::optional<Shape>> declared, output_shapes_attr(nd, tout->size()));
  OutputSpecs outputs;
  std::vector<char> ranks_differ;
  for (size_t b = 0; b < branches.size(); ++b) {
    const std::vector<TensorSpec> results = result_specs(*branches[b]);
    TF_RETURN_IF_ERROR(check_types("Tout", tout, results,
                                   absl::StrCat(names ? names[b] : absl::StrCat("branches[", b, "]"), " '",
                                                branches[b]->name, "' returns")));
    if (b == 0) {
      outputs.assign(results.begin(), results.end());
      ranks_differ.assign(results.size(), 0);
      continue;
    }
    for (size_t k = 0; k < results.size(); ++k) {  // the shape every branch's result fits
      const Shape& got = results[k].shape;
      Shape& merged = outputs[k].shape;
      if (merged.rank() != got.rank()) ranks_differ[k] = 1;
      for (int d = 0; !ranks_differ[k] && d < got.rank(); ++d)
        if (merged.dim(d) != got.dim(d)) merged.set_dim(d, -1);
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (k < declared.size() && declared[k]) {
      for (const auto& body : branches)
        if (const Shape got = result_specs(*body)[k].shape; !got.is_compatible_with(*declared[k]))
          return absl::InvalidArgumentError(absl::StrCat("function '", body->name, "' returns output ", k, " of shape ",
                                                         got.to_string(), ", not the ", declared[k]->to_string(),
                                                         " of attr 'output_shapes'"));
      outputs[k].shape = *declared[k];
    } else if (ranks_differ[k]) {
      return absl::UnimplementedError(absl::StrCat("its branches return output ", k,
                                                   " with different ranks; tapeflow's shapes have a rank"));
    }
  }
  return outputs;
}

}  // namespace

const FunctionIndex* function_index(const proto::FunctionDefLibrary& library) {
  return current_builds != nullptr && current_builds->library.get() == &library ? &current_builds->index : nullptr;
}

FunctionBodyScope::FunctionBodyScope(const proto::FunctionDefLibrary& library) {
  if (current_builds != nullptr) return;  // a nested import: the outer one's builds go on
  owned_ = new BodyBuilds();
  owned_->source = &library;
  current_builds = owned_;
}

FunctionBodyScope::~FunctionBodyScope() {
  if (owned_ == nullptr) return;
  current_builds = nullptr;
  delete owned_;
}

absl::StatusOr<PlannedFunctional> plan_functional_node(const proto::NodeDef& nd, const OpDef& op,
                                                       absl::Span<const TensorSpec> inputs, std::source_location loc) {
  PlannedFunctional p;
  register_functional_gradients();
  const FunctionalKind kind = functional_kind(&op);
  if (kind == FunctionalKind::kWhile) {
    TF_ASSIGN_OR_RETURN(std::optional<std::vector<DType>> t, types_attr(nd, "T"));
    if (!t) return absl::InvalidArgumentError("attr 'T' (a list of types) is missing");
    TF_RETURN_IF_ERROR(check_types("T", t, inputs, "the inputs are"));
    TF_ASSIGN_OR_RETURN(std::vector<std::optional<Shape>> declared, output_shapes_attr(nd, inputs.size()));
    // The loop variables: the shapes output_shapes allows (TensorFlow's shape invariants), else the inputs'.
    std::vector<TensorSpec> vars(inputs.begin(), inputs.end());
    for (size_t k = 0; k < declared.size(); ++k) {
      Shape relaxed;  // an unknown rank: the input's rank, every dim unknown
      for (int d = 0; d < inputs[k].shape.rank(); ++d) relaxed.push_back(-1);
      const Shape& allowed = declared[k] ? *declared[k] : relaxed;
      if (!inputs[k].shape.is_compatible_with(allowed))
        return absl::InvalidArgumentError(absl::StrCat("input ", k, " has shape ", inputs[k].shape.to_string(),
                                                       ", which attr 'output_shapes' (", allowed.to_string(), ") does not allow"));
      vars[k].shape = allowed;
    }
    TF_ASSIGN_OR_RETURN(const proto::NameAttrList* cond, func_attr(nd, "cond"));
    TF_ASSIGN_OR_RETURN(const proto::NameAttrList* body, func_attr(nd, "body"));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> c, build_body(*cond, vars, loc));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> f, build_body(*body, vars, loc));
    if (c->results.size() != 1)
      return absl::InvalidArgumentError(absl::StrCat("cond '", cond->name(), "' returns ", c->results.size(), " values, not one"));
    const std::vector<TensorSpec> next = result_specs(*f);
    TF_RETURN_IF_ERROR(check_types("T", t, next, absl::StrCat("body '", body->name(), "' returns")));
    for (size_t k = 0; k < next.size(); ++k)
      if (!next[k].shape.is_compatible_with(vars[k].shape))
        return absl::InvalidArgumentError(absl::StrCat("body '", body->name(), "' returns loop variable ", k, " with shape ",
                                                       next[k].shape.to_string(), " where it has ", vars[k].shape.to_string(),
                                                       " (attr 'output_shapes' says which shapes may change)"));
    p.outputs.assign(vars.begin(), vars.end());
    p.bodies = {c, f};
    const proto::AttrValue* iterations = find_attr(nd, "parallel_iterations");
    p.attrs.set("parallel_iterations", iterations ? iterations->i() : int64_t{10});
    return p;
  }
  if (inputs.empty())
    return absl::InvalidArgumentError(kind == FunctionalKind::kIf ? "needs its condition as input 0"
                                                                  : "needs its branch index as input 0");
  const absl::Span<const TensorSpec> args = inputs.subspan(1);
  TF_ASSIGN_OR_RETURN(std::optional<std::vector<DType>> tin, types_attr(nd, "Tin"));
  TF_RETURN_IF_ERROR(check_types("Tin", tin, args, "the inputs after input 0 are"));
  if (kind == FunctionalKind::kIf) {
    if (const proto::AttrValue* tcond = find_attr(nd, "Tcond")) {
      absl::StatusOr<DType> dt = from_proto_dtype(tcond->type());
      if (!dt.ok() || *dt != inputs[0].dtype)
        return absl::InvalidArgumentError(absl::StrCat("attr 'Tcond' does not match the condition's dtype ", dtype_name(inputs[0].dtype)));
    }
    TF_ASSIGN_OR_RETURN(const proto::NameAttrList* then_f, func_attr(nd, "then_branch"));
    TF_ASSIGN_OR_RETURN(const proto::NameAttrList* else_f, func_attr(nd, "else_branch"));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> t, build_body(*then_f, args, loc));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> e, build_body(*else_f, args, loc));
    p.bodies = {t, e};
    static const char* const kNames[] = {"then_branch", "else_branch"};
    TF_ASSIGN_OR_RETURN(p.outputs, branch_outputs(nd, p.bodies, kNames));
    return p;
  }
  if (inputs[0].dtype != DType::kInt32 || inputs[0].shape.rank() != 0)
    return absl::InvalidArgumentError(absl::StrCat("the branch index (input 0) must be an int32 scalar, not ",
                                                   dtype_name(inputs[0].dtype), " ", inputs[0].shape.to_string()));
  const proto::AttrValue* branches = find_attr(nd, "branches");
  if (branches == nullptr || branches->list().func_size() == 0)
    return absl::InvalidArgumentError("attr 'branches' (a list of functions) is missing or empty");
  for (const proto::NameAttrList& b : branches->list().func()) {
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const FunctionBody> body, build_body(b, args, loc));
    p.bodies.push_back(std::move(body));
  }
  TF_ASSIGN_OR_RETURN(p.outputs, branch_outputs(nd, p.bodies, nullptr));
  return p;
}

namespace {

// The library functions `f` uses: nodes that call one, and func attrs (If's branches, ...).
void add_used_functions(const proto::AttrValue& v, std::vector<std::string>& names) {
  if (v.has_func()) names.push_back(v.func().name());
  for (const proto::NameAttrList& f : v.list().func()) names.push_back(f.name());
}

}  // namespace

absl::Status write_functional_node(const GraphState& state, const Node& node, proto::NodeDef& n, LibraryWriter& library) {
  const FunctionalKind kind = functional_kind(node.op);
  auto& attrs = *n.mutable_attr();
  auto types = [&](const char* name, size_t first) -> absl::Status {
    proto::AttrValue::ListValue* list = attrs[name].mutable_list();
    for (size_t k = first; k < node.inputs.size(); ++k) {
      const TensorRef& r = node.inputs[k];
      TF_ASSIGN_OR_RETURN(proto::DataType t, to_proto_dtype(state.node(r.node).outputs[static_cast<size_t>(r.index)].dtype));
      list->add_type(t);
    }
    return absl::OkStatus();
  };
  const std::vector<std::shared_ptr<const FunctionBody>>& bodies = node.functions();
  const size_t wanted = kind == FunctionalKind::kCase ? std::max<size_t>(bodies.size(), 1) : 2;
  if (bodies.size() != wanted) return absl::InternalError("a functional node without its functions");
  auto func = [](const FunctionBody& body) {
    if (body.source) return body.source->func;
    proto::NameAttrList f;
    f.set_name(body.name);
    return f;
  };
  if (kind == FunctionalKind::kWhile) {
    TF_RETURN_IF_ERROR(types("T", 0));
    *attrs["cond"].mutable_func() = func(*bodies[0]);
    *attrs["body"].mutable_func() = func(*bodies[1]);
  } else {
    if (kind == FunctionalKind::kIf) {
      TF_ASSIGN_OR_RETURN(proto::DataType t, to_proto_dtype(state.node(node.inputs[0].node).outputs[static_cast<size_t>(node.inputs[0].index)].dtype));
      attrs["Tcond"].set_type(t);
      *attrs["then_branch"].mutable_func() = func(*bodies[0]);
      *attrs["else_branch"].mutable_func() = func(*bodies[1]);
    } else {
      for (const auto& b : bodies) *attrs["branches"].mutable_list()->add_func() = func(*b);
    }
    TF_RETURN_IF_ERROR(types("Tin", 1));
    proto::AttrValue::ListValue* tout = attrs["Tout"].mutable_list();
    for (const TensorSpec& o : node.outputs) {
      TF_ASSIGN_OR_RETURN(proto::DataType t, to_proto_dtype(o.dtype));
      tout->add_type(t);
    }
  }
  proto::AttrValue::ListValue* shapes = attrs["output_shapes"].mutable_list();
  for (const TensorSpec& o : node.outputs) shape_to_proto(o.shape, shapes->add_shape());

  // The functions, and every function they use, into the library (once each).
  for (const auto& body : bodies) {
    if (library.seen(*body)) continue;
    if (!body->source) {  // traced by tapeflow: written from its graph, with the functions it runs
      TF_ASSIGN_OR_RETURN(proto::FunctionDef f, function_def_of(*body, library));
      TF_RETURN_IF_ERROR(library.add(f, body.get()));
      continue;
    }
    const proto::FunctionDefLibrary* origin = body->source->library.get();
    const FunctionIndex& source = library.index_of(*origin);
    std::vector<std::string> pending{body->name};
    absl::flat_hash_set<std::string> done;
    while (!pending.empty()) {
      const std::string name = std::move(pending.back());
      pending.pop_back();
      const auto it = source.find(name);
      if (it == source.end() || !done.insert(name).second) continue;
      const proto::FunctionDef& f = *it->second;
      TF_RETURN_IF_ERROR(library.add(f, origin));
      for (const proto::NodeDef& d : f.node_def()) {
        if (source.contains(d.op())) pending.push_back(d.op());
        for (const auto& [key, value] : d.attr()) add_used_functions(value, pending);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status LibraryWriter::add(const proto::FunctionDef& f, const void* origin) {
  const std::string& name = f.signature().name();
  if (const auto h = have_.find(name); h != have_.end()) {
    if (h->second.second == origin || deterministic_bytes(*h->second.first) == deterministic_bytes(f)) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("two different functions are named '", name,
                                                   "'; a GraphDef's library holds one"));
  }
  proto::FunctionDefLibrary& library = *def_.mutable_library();
  *library.add_function() = f;
  have_.emplace(name, std::make_pair(&library.function(library.function_size() - 1), origin));
  return absl::OkStatus();
}

const FunctionIndex& LibraryWriter::index_of(const proto::FunctionDefLibrary& library) {
  auto [it, fresh] = indexes_.try_emplace(&library);
  if (fresh)
    for (const proto::FunctionDef& f : library.function()) it->second.emplace(f.signature().name(), &f);
  return it->second;
}

}  // namespace tapeflow::graph_def_internal
