#include "saving/saved_model.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>  // renameat2, RENAME_EXCHANGE (glibc 2.28+, _GNU_SOURCE)
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "graph/graph_def.h"
#include "graph/graph_ops.h"
#include "graph/passes.h"
#include "proto/saved_model.pb.h"
#include "saving/file_io.h"
#include "saving/safetensors.h"

namespace tapeflow {

namespace {

namespace fs = std::filesystem;
using graph_def_internal::from_proto_dtype;
using graph_def_internal::shape_to_proto;
using graph_def_internal::tensor_to_proto;
using graph_def_internal::to_proto_dtype;

constexpr const char* kGraphFile = "graph.pb";
constexpr const char* kVariablesFile = "variables.safetensors";
constexpr const char* kMetaFile = "saved_model.pb";
constexpr const char* kMethodName = "tapeflow/serve";

// The same error type with `prefix` put in front of the message: errors of the layers below
// ("[file_io] ...", "[safetensors] ...") keep their code but say which API and bundle failed.
[[noreturn]] void rethrow_prefixed(const Error& e, std::string_view prefix, std::source_location loc) {
  throw_status(absl::Status(e.code(), absl::StrCat(std::string(prefix), e.message())), loc);
}

// A POSIX failure as the typed error its errno means.
[[noreturn]] void throw_errno(int err, const std::string& what, std::source_location loc) {
  const std::string msg = absl::StrCat("[save_model] ", what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT: case ENOTDIR: throw NotFoundError(msg, loc);
    case EACCES: case EPERM: case EROFS: throw PermissionDeniedError(msg, loc);
    case ENOSPC: case EDQUOT: throw ResourceExhaustedError(msg, loc);
    case EEXIST: case ENOTEMPTY: throw AlreadyExistsError(msg, loc);
    default: throw UnknownError(msg, loc);
  }
}

void fsync_dir(const std::string& path, std::source_location loc) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno(errno, absl::StrCat(path, ": open"), loc);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw_errno(err, absl::StrCat(path, ": fsync"), loc);
}

std::string parent_of(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "a/b/" -> "a/b"
  const fs::path parent = p.parent_path();
  return parent.empty() ? "." : parent.string();
}

// "<dir>.<kind>-<pid>-<n>", created empty: n counts the calls of this process, so two threads
// saving the same `dir` never share one. A name taken already (a crashed process had our pid)
// is left alone and the next n tried.
std::atomic<uint64_t> g_sibling_counter{0};
std::string make_sibling_dir(const std::string& dir, const char* kind, std::source_location loc) {
  for (int attempt = 0;; ++attempt) {
    std::string path = absl::StrCat(dir, ".", kind, "-", ::getpid(), "-", g_sibling_counter++);
    if (::mkdir(path.c_str(), 0755) == 0) return path;
    if (errno != EEXIST || attempt == 100) throw_errno(errno, absl::StrCat(path, ": mkdir"), loc);
  }
}

// Note [Saved model bundle]'s overwrite: renameat2(RENAME_EXCHANGE) swaps the two directories
// in one step, so `dir` is the old bundle or the new one at every instant, crash or not; the
// old one, now at `tmp`, is removed after (a crash before that leaves it there, under the
// temporary name). Filesystems without the flag (EINVAL: some network and FUSE ones; ENOSYS:
// kernels before 3.15) get the two renames it replaces, with a moment where `dir` is missing.
void replace_bundle(const std::string& tmp, const std::string& dir, std::source_location loc) {
  std::error_code ec;
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(tmp, ec);  // the old bundle
    return;
  }
  // `dir` removed since we looked: nothing to swap with.
  if (errno == ENOENT && ::rename(tmp.c_str(), dir.c_str()) == 0) return;
  if (errno != EINVAL && errno != ENOSYS) throw_errno(errno, absl::StrCat(tmp, ": exchange with ", dir), loc);
  const std::string old = make_sibling_dir(dir, "old", loc);
  // rename(2) replaces the empty directory just made: the name is ours alone.
  if (::rename(dir.c_str(), old.c_str()) != 0) {
    const int err = errno;
    ::rmdir(old.c_str());
    throw_errno(err, absl::StrCat(dir, ": rename aside"), loc);
  }
  if (::rename(tmp.c_str(), dir.c_str()) != 0) {
    const int err = errno;
    ::rename(old.c_str(), dir.c_str());  // put the old bundle back
    throw_errno(err, absl::StrCat(tmp, ": rename to ", dir), loc);
  }
  fs::remove_all(old, ec);
}

// "a/b/" -> "a/b", so that "<dir>.tmp-<pid>-<n>" is a sibling and not a child.
std::string strip_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

bool valid_signature_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

void fill_info(const Tensor& t, proto::TensorInfo* info, std::source_location loc) {
  info->set_name(t.name());
  info->set_dtype(value_or_throw(to_proto_dtype(t.dtype()), loc));
  shape_to_proto(t.shape(), info->mutable_tensor_shape());
}

// What save_model writes, built completely before anything touches the disk.
struct Bundle {
  std::string graph_bytes;
  std::string meta_bytes;
  NamedTensors tensors;  // variables, then captured tensors
};

// Note [One graph for all signatures]: each concrete function's graph is written as a
// GraphDef and imported into one merged graph (a single signature under its own node names;
// several under "<signature>/" each), whose GraphDef is graph.pb. The import hands back each
// listed node's name in the merged graph, which is what saved_model.pb and the safetensors
// keys record. A variable two signatures capture is stored once per signature (both copies
// hold the same value at save time).
Bundle build_bundle(const std::map<std::string, ConcreteFunction*>& signatures, std::source_location loc) {
  Bundle b;
  proto::MetaInfo meta;
  meta.set_tapeflow_version(tapeflow_version());
  Graph merged;
  for (const auto& [key, cf] : signatures) {
    const GraphDef def = to_graph_def(cf->graph(), loc);
    // Return elements: inputs, outputs, variable handles, captured placeholders.
    std::vector<std::string> wanted;
    for (const Tensor& t : cf->inputs()) wanted.push_back(t.name());
    for (const Tensor& t : cf->outputs()) wanted.push_back(t.name());
    std::vector<Variable> variables;
    for (const Node* node : cf->graph().state()->snapshot()) {
      if (node->op != &kVarHandleOp || !node->variable) continue;
      if (node->variable->graph_info() != nullptr)
        throw InvalidArgumentError(absl::StrCat("[save_model] signature '", key, "': variable '", node->name,
                                                "' is a graph variable; save_model saves traced functions, whose "
                                                "variables are eager (create them outside the function)"),
                                   loc);
      wanted.push_back(node->name);
      variables.push_back(*node->variable);
    }
    for (const ConcreteFunction::Capture& c : cf->captures()) wanted.push_back(producer(c.placeholder, loc).node().name);
    const std::string prefix = signatures.size() == 1 ? "" : key;
    const std::vector<ImportedElement> got = import_graph_def(merged, def, {}, wanted, prefix, loc);

    proto::SignatureDef& sig = (*meta.mutable_signature_def())[key];
    sig.set_method_name(kMethodName);
    size_t k = 0;
    for (size_t i = 0; i < cf->inputs().size(); ++i, ++k) {
      // The input's name is its placeholder's name in the function ("args_0").
      const std::string name = producer(cf->inputs()[i], loc).node().name;
      fill_info(std::get<Tensor>(got[k]), &(*sig.mutable_inputs())[name], loc);
    }
    for (size_t i = 0; i < cf->outputs().size(); ++i, ++k)
      fill_info(std::get<Tensor>(got[k]), &(*sig.mutable_outputs())[absl::StrCat("output_", i)], loc);
    for (const Variable& v : variables) {
      const std::string name = std::get<Operation>(got[k++]).node().name;
      meta.add_variable_names(name);
      b.tensors.emplace_back(name, v.read(loc));
    }
    for (const ConcreteFunction::Capture& c : cf->captures()) {
      const std::string name = std::get<Operation>(got[k++]).node().name;
      meta.add_captured_names(name);
      b.tensors.emplace_back(name, c.value);
    }
  }
  b.graph_bytes = graph_def_to_binary(to_graph_def(merged, loc));
  if (!meta.SerializeToString(&b.meta_bytes)) throw InternalError("[save_model] MetaInfo did not serialize", loc);
  return b;
}

}  // namespace

const char* tapeflow_version() {
#ifdef TAPEFLOW_VERSION_STRING
  return TAPEFLOW_VERSION_STRING;
#else
  return "0.1.0";  // keep equal to project(VERSION) in CMakeLists.txt
#endif
}

void save_model(const std::string& dir_arg, const std::map<std::string, ConcreteFunction*>& signatures,
                const SaveModelOptions& options, std::source_location loc) {
  if (signatures.empty()) throw InvalidArgumentError("[save_model] no signatures to save", loc);
  for (const auto& [key, cf] : signatures) {
    if (!valid_signature_name(key))
      throw InvalidArgumentError(absl::StrCat("[save_model] signature name '", key,
                                              "' must be non-empty letters, digits, '_', '-' or '.'"),
                                 loc);
    if (cf == nullptr)
      throw InvalidArgumentError(absl::StrCat("[save_model] signature '", key, "' has no function"), loc);
  }
  const std::string dir = strip_slashes(dir_arg);
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  if (existed && !options.overwrite)
    throw AlreadyExistsError(absl::StrCat("[save_model] ", dir, " already exists (pass overwrite = true)"), loc);

  Bundle bundle;
  try {
    bundle = build_bundle(signatures, loc);
  } catch (const Error& e) {
    if (e.message().starts_with("[save_model]")) throw;
    rethrow_prefixed(e, "[save_model] ", loc);
  }

  // Note [Saved model bundle]: everything goes into a sibling temporary directory first.
  const std::string tmp = make_sibling_dir(dir, "tmp", loc);
  try {
    try {
      const SafetensorsPlan plan = plan_safetensors(bundle.tensors, {{"tapeflow_version", tapeflow_version()}});
      std::vector<std::span<const std::byte>> chunks{as_bytes(plan.head)};
      chunks.insert(chunks.end(), plan.chunks.begin(), plan.chunks.end());
      // The files need no atomic replacement of their own (the directory is published by one
      // rename below): each is written and fsynced, then the directory once (5 fsyncs in all,
      // not 8; deploy_bench's save fraction).
      write_new_file_synced(absl::StrCat(tmp, "/", kVariablesFile), chunks);
      write_new_file_synced(absl::StrCat(tmp, "/", kGraphFile), {as_bytes(bundle.graph_bytes)});
      // Last: a directory with saved_model.pb has the other two.
      write_new_file_synced(absl::StrCat(tmp, "/", kMetaFile), {as_bytes(bundle.meta_bytes)});
    } catch (const Error& e) {
      rethrow_prefixed(e, "[save_model] ", loc);
    }
    fsync_dir(tmp, loc);
    bool published = false;
    if (!existed) {
      // rename(2) replaces an empty directory but not a full one: a bundle another saver
      // published since we looked is ENOTEMPTY, replaced below when overwrite says so.
      published = ::rename(tmp.c_str(), dir.c_str()) == 0;
      if (!published && !(options.overwrite && (errno == ENOTEMPTY || errno == EEXIST)))
        throw_errno(errno, absl::StrCat(tmp, ": rename to ", dir), loc);
    }
    if (!published) replace_bundle(tmp, dir, loc);
    fsync_dir(parent_of(dir), loc);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

void save_model(const std::string& dir,
                const std::vector<std::pair<std::string, std::reference_wrapper<ConcreteFunction>>>& signatures,
                const SaveModelOptions& options, std::source_location loc) {
  std::map<std::string, ConcreteFunction*> m;
  for (const auto& [key, cf] : signatures)
    if (!m.emplace(key, &cf.get()).second)
      throw InvalidArgumentError(absl::StrCat("[save_model] signature '", key, "' is listed twice"), loc);
  save_model(dir, m, options, loc);
}

// ---- loading ----

const Signature& LoadedModel::signature(const std::string& name, std::source_location loc) const {
  auto it = signatures_.find(name);
  if (it != signatures_.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [k, s] : signatures_) names.push_back(k);
  throw NotFoundError(absl::StrCat("[load_model] ", dir_, ": no signature '", name, "' (signatures: ",
                                   absl::StrJoin(names, ", "), ")"),
                      loc);
}

std::map<std::string, Tensor> Signature::run(const std::map<std::string, Tensor>& feeds,
                                             std::source_location loc) const {
  const std::string where = absl::StrCat("[load_model] signature '", name_, "'");
  auto input_names = [&] {
    std::vector<std::string> names;
    for (const auto& [k, i] : inputs_) names.push_back(k);
    return absl::StrJoin(names, ", ");
  };
  FeedList list = *captured_;
  for (const auto& [name, value] : feeds) {
    auto it = inputs_.find(name);
    if (it == inputs_.end())
      throw InvalidArgumentError(absl::StrCat(where, ": unknown input '", name, "' (inputs: ", input_names(), ")"),
                                 loc);
    const TensorInfo& info = it->second;
    if (!value.defined() || value.is_symbolic())
      throw InvalidArgumentError(absl::StrCat(where, ", input '", name, "': the value is not a concrete tensor"),
                                 loc);
    if (value.dtype() != info.dtype || !info.shape.is_compatible_with(value.shape()))
      throw InvalidArgumentError(absl::StrCat(where, ", input '", name, "': expected dtype ", dtype_name(info.dtype),
                                              " and shape ", info.shape.to_string(), ", got ",
                                              dtype_name(value.dtype()), " ", value.shape().to_string()),
                                 loc);
    list.emplace_back(info.tensor, Operand(value, loc));
  }
  for (const auto& [name, info] : inputs_)
    if (!feeds.count(name))
      throw InvalidArgumentError(absl::StrCat(where, ": input '", name, "' is not fed (inputs: ", input_names(), ")"),
                                 loc);
  std::vector<Fetch> fetches;
  for (const auto& [name, info] : outputs_) fetches.emplace_back(info.tensor);
  const std::vector<Tensor> values = session_->run(fetches, list, {}, nullptr, nullptr, loc);
  std::map<std::string, Tensor> out;
  size_t i = 0;
  for (const auto& [name, info] : outputs_) out.emplace(name, values[i++]);
  return out;
}

namespace {

Shape shape_from_proto(const proto::TensorShapeProto& p) {
  std::vector<int64_t> dims;
  for (const auto& d : p.dim()) dims.push_back(d.size() < 0 ? kUnknownDim : d.size());
  return Shape(dims);
}

// A frozen graph has no variable handles: "_class" entries naming one go (TensorFlow's
// import rejects a colocation with an unknown node), and the attr with them when it empties.
void drop_colocation_with(proto::NodeDef& node, const std::set<std::string>& handles) {
  auto it = node.mutable_attr()->find("_class");
  if (it == node.mutable_attr()->end() || !it->second.has_list()) return;
  auto* entries = it->second.mutable_list()->mutable_s();
  entries->erase(std::remove_if(entries->begin(), entries->end(),
                                [&](const std::string& e) { return e.starts_with("loc:@") && handles.count(e.substr(5)); }),
                 entries->end());
  if (entries->empty()) node.mutable_attr()->erase(it);
}

}  // namespace

LoadedModel load_model(const std::string& dir_arg, std::source_location loc) {
  const std::string dir = strip_slashes(dir_arg);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw NotFoundError(absl::StrCat("[load_model] ", dir, ": no such saved model directory"), loc);
  const std::string meta_path = absl::StrCat(dir, "/", kMetaFile);
  const std::string graph_path = absl::StrCat(dir, "/", kGraphFile);
  const std::string vars_path = absl::StrCat(dir, "/", kVariablesFile);
  for (const std::string& p : {meta_path, graph_path, vars_path})
    if (!file_exists(p))
      throw NotFoundError(absl::StrCat("[load_model] ", p, ": missing (a saved model bundle has ", kMetaFile, ", ",
                                       kGraphFile, " and ", kVariablesFile, ")"),
                          loc);

  LoadedModel m;
  m.dir_ = dir;
  proto::MetaInfo meta;
  MappedFile vars_file;
  SafetensorsFile vars;
  try {
    const std::string meta_bytes = read_small_file(meta_path);
    const bool parsed = [&] {
      google::protobuf::LogSilencer quiet;  // Note [Quiet protobuf] (graph_def.cc): our error says it
      return meta.ParseFromString(meta_bytes);
    }();
    if (!parsed || meta.tapeflow_version().empty() || meta.signature_def().empty())
      throw DataLossError(absl::StrCat("[load_model] ", meta_path, ": not a saved model MetaInfo (corrupt file?)"),
                          loc);
    m.version_ = meta.tapeflow_version();
    std::shared_ptr<const GraphDef> def;  // Note [GraphDefs in an arena] (graph/graph_def_arena.cc)
    try {
      def = graph_def_from_binary_in_arena(read_small_file(graph_path), loc);
    } catch (const InvalidArgumentError& e) {
      throw DataLossError(absl::StrCat("[load_model] ", graph_path, ": not a GraphDef (corrupt file?): ", e.message()),
                          loc);
    }
    m.graph_ = graph_from_graph_def(*def, loc);
    vars_file = MappedFile::open(vars_path);
    // The checksums are checked as the values are copied below (Note [Checked copy]).
    vars = decode_safetensors(vars_file.bytes(), vars_path, {.verify_checksums = false});
  } catch (const Error& e) {
    if (e.message().starts_with("[load_model]")) throw;
    rethrow_prefixed(e, absl::StrCat("[load_model] ", dir, ": "), loc);
  }

  const GraphState& state = *m.graph_.state();
  auto missing_node = [&](const std::string& name, const char* what) {
    return DataLossError(absl::StrCat("[load_model] ", meta_path, " lists ", what, " '", name, "' that ", graph_path,
                                      " does not hold"),
                         loc);
  };
  std::set<std::string_view> copied;
  auto value_of = [&](const std::string& key) {
    if (!vars.contains(key))
      throw NotFoundError(absl::StrCat("[load_model] ", vars_path, ": no tensor '", key, "'"), loc);
    copied.insert(vars.tensors.find(key)->first);
    try {
      return to_tensor_verified(vars.tensors.at(key), vars_path);
    } catch (const Error& e) {
      rethrow_prefixed(e, absl::StrCat("[load_model] ", dir, ": "), loc);
    }
  };
  std::vector<std::pair<Variable, Tensor>> values;
  for (const std::string& key : meta.variable_names()) {
    const int id = state.find(key);
    if (id < 0 || state.node(id).op != &kVarHandleOp || !state.node(id).variable)
      throw missing_node(key, "variable");
    const Variable& v = *state.node(id).variable;
    m.variables_.emplace(key, v);
    values.emplace_back(v, value_of(key));
  }
  auto captured = std::make_shared<FeedList>();
  for (const std::string& key : meta.captured_names()) {
    const int id = state.find(key);
    if (id < 0 || state.node(id).op != &kPlaceholderOp) throw missing_node(key, "captured tensor");
    captured->emplace_back(state.tensor({id, 0}), Operand(value_of(key), loc));
  }
  try {  // every checksum of the file is checked, of tensors nobody loads too
    for (const auto& [name, entry] : vars.tensors)
      if (!copied.count(name)) verify_checksum(entry, vars_path);
  } catch (const Error& e) {
    rethrow_prefixed(e, absl::StrCat("[load_model] ", dir, ": "), loc);
  }
  m.session_ = std::make_unique<Session>(m.graph_);
  try {
    m.session_->set_variable_values(values, loc);
  } catch (const Error& e) {
    rethrow_prefixed(e, absl::StrCat("[load_model] ", vars_path, ": "), loc);
  }

  for (const auto& [key, def] : meta.signature_def()) {
    Signature s;
    s.name_ = key;
    s.method_name_ = def.method_name();
    s.session_ = m.session_.get();
    s.captured_ = captured;
    auto info_of = [&](const std::string& name, const proto::TensorInfo& p) {
      TensorInfo info;
      info.name = name;
      try {
        info.tensor = m.graph_.get_tensor_by_name(p.name());
      } catch (const Error&) {
        throw missing_node(p.name(), "tensor");
      }
      auto dtype = from_proto_dtype(p.dtype());
      if (!dtype.ok())
        throw DataLossError(absl::StrCat("[load_model] ", meta_path, ": signature '", key, "', '", name,
                                         "': ", dtype.status().message()),
                            loc);
      info.dtype = *dtype;
      info.shape = shape_from_proto(p.tensor_shape());
      return info;
    };
    for (const auto& [name, p] : def.inputs()) s.inputs_.emplace(name, info_of(name, p));
    for (const auto& [name, p] : def.outputs()) s.outputs_.emplace(name, info_of(name, p));
    m.signatures_.emplace(key, std::move(s));
  }
  return m;
}

// ---- freeze ----

FrozenGraph freeze(const Graph& graph, const Session* session, const std::vector<Tensor>& outputs,
                   std::source_location loc) {
  const PassResult pruned = prune(graph, outputs);
  // Note [Freezing reads]: each ReadVariableOp the outputs need becomes a Const of the same
  // name, so consumers in the GraphDef keep their inputs; the handles are then unused.
  std::map<std::string, Tensor> read_values;
  for (const Node* node : pruned.graph.state()->snapshot()) {
    const OpDef* op = node->op;
    if (op == &kAssignVariableOp || op == &kAssignAddVariableOp || op == &kAssignSubVariableOp)
      throw InvalidArgumentError(absl::StrCat("[freeze] the outputs need ", describe_node(*node),
                                              ", which updates a variable; a frozen graph has none"),
                                 loc);
    if (op == &kPlaceholderOp && node->value.defined()) {
      read_values.emplace(node->name, node->value);  // a traced function's captured tensor
      continue;
    }
    if (op != &kReadVariableOp) continue;
    const Variable& v = *node->variable;
    Tensor value;
    if (v.graph_info() == nullptr) {
      value = v.read(loc);
    } else {
      if (session == nullptr)
        throw InvalidArgumentError(absl::StrCat("[freeze] variable '", v.name(),
                                                "' is a graph variable: pass the Session that holds its value"),
                                   loc);
      value = session->variable_values({v}, loc)[0];
    }
    read_values.emplace(node->name, value);
  }
  const GraphDef def = to_graph_def(pruned.graph, loc);
  std::set<std::string> handles;
  for (const proto::NodeDef& n : def.node())
    if (n.op() == "VarHandleOp") handles.insert(n.name());
  GraphDef frozen;
  *frozen.mutable_versions() = def.versions();
  if (def.has_library()) *frozen.mutable_library() = def.library();  // the functions If / While nodes run
  for (const proto::NodeDef& n : def.node()) {
    if (handles.count(n.name())) continue;
    proto::NodeDef* out = frozen.add_node();
    auto it = read_values.find(n.name());
    if (it == read_values.end()) {
      *out = n;
      out->clear_input();
      drop_colocation_with(*out, handles);
    } else {
      out->set_name(n.name());
      out->set_op("Const");
      out->set_device(n.device());
      (*out->mutable_attr())["dtype"].set_type(value_or_throw(to_proto_dtype(it->second.dtype()), loc));
      throw_if_error(tensor_to_proto(it->second, (*out->mutable_attr())["value"].mutable_tensor()), loc);
    }
    for (const std::string& in : n.input()) {
      // A read's data input is its handle; keep control inputs on anything but a handle.
      if (it != read_values.end() && !in.starts_with("^")) continue;
      if (handles.count(in.starts_with("^") ? in.substr(1) : in)) continue;
      out->add_input(in);
    }
  }
  FrozenGraph result{graph_from_graph_def(frozen, loc), {}};
  for (const Tensor& t : outputs) result.outputs.push_back(result.graph.get_tensor_by_name(pruned.map(t).name()));
  return result;
}

}  // namespace tapeflow
