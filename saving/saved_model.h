// Saved models: a traced model as a directory that a program without the model's code can
// load and run (TensorFlow's SavedModel idea, in a small format of our own).
//
//   auto predict = function([&](const Tensor& x) { return model(x); });
//   ConcreteFunction& cf = predict.get_concrete_function({{DType::kFloat32, {-1, 4}}});
//   save_model("export/mlp", {{"serve", cf}});
//
//   // Elsewhere, with no model code:
//   LoadedModel m = load_model("export/mlp");
//   std::map<std::string, Tensor> out = m.signature("serve").run({{"x", batch}});
//   out.at("output_0");
//
// The bundle (Note [Saved model bundle]):
//   graph.pb               binary GraphDef (graph/graph_def.h) of every signature's graph
//   variables.safetensors  the captured variables' values (and captured tensors'), by the
//                          name of their node in graph.pb
//   saved_model.pb         MetaInfo (proto/saved_model.proto): the tapeflow version, the
//                          signatures (named inputs and outputs -> tensor names, dtypes,
//                          shapes) and which safetensors keys are variables
// Signature input names are the concrete function's placeholder names (TensorFlow's "args_0",
// "args_1", ...); outputs are "output_0", "output_1", ...
//
// Note [Saved model bundle]: save_model writes the three files into "<dir>.tmp-<pid>-<n>" (n
// counts this process's saves, so threads saving one `dir` at once never share it), fsyncs
// them and the directory, and renames it to `dir`, so `dir` is absent, the old bundle or the
// complete new one, never a mix. With overwrite the two directories are swapped in one step
// (renameat2 RENAME_EXCHANGE) and the old bundle, now under the temporary name, is removed
// after: `dir` is never missing, even across a crash. Only a filesystem without that flag
// (EINVAL, ENOSYS) gets the old way: `dir` renamed aside to "<dir>.old-<pid>-<n>", the new one
// renamed in, the old one removed; a crash between those two renames leaves `dir` missing.
// Concurrent saves to one `dir` with overwrite all succeed, the last one's bundle staying;
// without overwrite, all but the first are AlreadyExistsError. A failed save removes its
// temporary directory.
//
// Errors are typed tapeflow errors whose messages start with "[save_model]" or "[load_model]"
// and name the file, signature or input: NotFoundError (no bundle, a missing file, an unknown
// signature), DataLossError (a file that does not parse, a graph without a node that
// saved_model.pb lists), InvalidArgumentError (an unknown or missing input, a feed of the
// wrong dtype or shape, a bad signature name),
// AlreadyExistsError (saving over a bundle without overwrite).
//
// Thread-safety: a LoadedModel's signatures may run from many threads at once (Session::run).
#pragma once

#include <map>
#include <memory>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "eager/tensor.h"
#include "graph/function.h"
#include "graph/graph.h"
#include "graph/session.h"

namespace tapeflow {

struct SaveModelOptions {
  bool overwrite = false;  // replace an existing bundle at `dir`
};

// The library's version, as written into saved_model.pb.
const char* tapeflow_version();

// Writes the bundle. `signatures`: signature name -> concrete function; their captured
// variables are read now (eager variables: their current values). Several signatures share
// one graph.pb, each function's nodes under "<signature name>/". InvalidArgumentError for no
// signatures or an empty name; UnimplementedError for a graph GraphDef cannot carry.
void save_model(const std::string& dir, const std::map<std::string, ConcreteFunction*>& signatures,
                const SaveModelOptions& options = {}, std::source_location loc = std::source_location::current());
// save_model(dir, {{"serve", cf}}) without taking addresses.
void save_model(const std::string& dir,
                const std::vector<std::pair<std::string, std::reference_wrapper<ConcreteFunction>>>& signatures,
                const SaveModelOptions& options = {}, std::source_location loc = std::source_location::current());

// One input or output of a signature.
class LoadedModel;
// Reads the bundle at `dir`: the graph, a Session with every variable restored, the signatures.
LoadedModel load_model(const std::string& dir, std::source_location loc = std::source_location::current());

struct TensorInfo {
  std::string name;    // the signature's name for it: "x", "output_0"
  Tensor tensor;       // the tensor of the loaded graph
  DType dtype = DType::kFloat32;
  Shape shape;         // may have unknown (-1) dims
};

class Signature {
 public:
  const std::string& name() const { return name_; }
  const std::string& method_name() const { return method_name_; }
  // By name.
  const std::map<std::string, TensorInfo>& inputs() const { return inputs_; }
  const std::map<std::string, TensorInfo>& outputs() const { return outputs_; }

  // Runs the signature. Every input must be fed, by name, with its dtype and a compatible
  // shape; returns every output by name.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& feeds,
                                    std::source_location loc = std::source_location::current()) const;

 private:
  friend LoadedModel load_model(const std::string& dir, std::source_location loc);
  std::string name_, method_name_;
  std::map<std::string, TensorInfo> inputs_, outputs_;
  Session* session_ = nullptr;                  // owned by the LoadedModel (stable across moves)
  std::shared_ptr<const FeedList> captured_;    // captured tensors, fed on every run
};

class LoadedModel {
 public:
  const Graph& graph() const { return graph_; }
  // The session holding the restored variables.
  Session& session() const { return *session_; }
  const std::map<std::string, Signature>& signatures() const { return signatures_; }
  // NotFoundError naming the known signatures.
  const Signature& signature(const std::string& name,
                             std::source_location loc = std::source_location::current()) const;
  // The graph's variables, by their key in variables.safetensors.
  const std::map<std::string, Variable>& variables() const { return variables_; }
  const std::string& tapeflow_version() const { return version_; }
  const std::string& dir() const { return dir_; }

 private:
  friend LoadedModel load_model(const std::string& dir, std::source_location loc);
  LoadedModel() = default;
  std::string dir_, version_;
  Graph graph_;
  std::unique_ptr<Session> session_;
  std::map<std::string, Signature> signatures_;
  std::map<std::string, Variable> variables_;
};

// tf's convert_variables_to_constants: a new graph computing `outputs` in which every variable
// read is a Const holding the variable's value (graph variables: from `session`; eager
// variables captured by a traced function: their current value), pruned to what `outputs`
// need. Node names are kept, so inputs are found by name (frozen.graph.get_tensor_by_name).
// InvalidArgumentError when an output needs a variable update (a frozen graph cannot assign).
struct FrozenGraph {
  Graph graph;
  std::vector<Tensor> outputs;  // `outputs` in `graph`
};
FrozenGraph freeze(const Graph& graph, const Session* session, const std::vector<Tensor>& outputs,
                   std::source_location loc = std::source_location::current());

}  // namespace tapeflow
