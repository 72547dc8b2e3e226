// If, While and Case nodes of a GraphDef, for graph_def.cc (export) and graph_def_import.cc:
// Note [Functional control flow] (graph/functional_ops.h).
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "graph/functional_ops.h"
#include "graph/graph_def.h"

namespace tapeflow::graph_def_internal {

struct BodyBuilds;
}  // namespace tapeflow::graph_def_internal

namespace tapeflow {
// Where an imported body came from: the node's func attr (name and attr values) and the
// library of its GraphDef (one per import, shared), written back by to_graph_def.
struct FunctionDefSource {
  proto::NameAttrList func;
  std::shared_ptr<const proto::FunctionDefLibrary> library;
};
}  // namespace tapeflow

namespace tapeflow::graph_def_internal {

// The functions of the library an enclosing import's bodies come from, by name, when `library`
// is that one (an import of a body reuses it); else null.
const FunctionIndex* function_index(const proto::FunctionDefLibrary& library);

// Held by each import: the outermost one on a thread owns the state its functional nodes'
// bodies share (the library, the recursion stack, the node budget); nested imports, which
// build those bodies, join it.
class FunctionBodyScope {
 public:
  explicit FunctionBodyScope(const proto::FunctionDefLibrary& library);
  ~FunctionBodyScope();
  bool outermost() const { return owned_ != nullptr; }  // not a body's import inside another
  FunctionBodyScope(const FunctionBodyScope&) = delete;
  FunctionBodyScope& operator=(const FunctionBodyScope&) = delete;

 private:
  BodyBuilds* owned_ = nullptr;
};

// An If / While / Case NodeDef read: its output specs, its functions' bodies and its tapeflow
// attrs. `inputs`: the specs of its data inputs. Needs a FunctionBodyScope. Messages do not
// name the node: the importer prefixes them.
struct PlannedFunctional {
  OutputSpecs outputs;
  std::vector<std::shared_ptr<const FunctionBody>> bodies;
  AttrMap attrs;
};
absl::StatusOr<PlannedFunctional> plan_functional_node(const proto::NodeDef& node_def, const OpDef& op,
                                                       absl::Span<const TensorSpec> inputs, std::source_location loc);

// One export's function library: each function added once, from the bodies that run it; two
// different functions of one name are an InvalidArgumentError naming it.
class LibraryWriter {
 public:
  // The library is made in `def` on the first add (a GraphDef without functions has none).
  explicit LibraryWriter(GraphDef& def) : def_(def) {}
  // `f`, from `origin` (an imported library or a traced body: functions of one origin and name
  // are the same function).
  absl::Status add(const proto::FunctionDef& f, const void* origin);
  // Whether `body` (and what it runs) is in already; marks it in.
  bool seen(const FunctionBody& body) { return !bodies_.insert(&body).second; }
  // The functions of an imported library by name, indexed once per export.
  const FunctionIndex& index_of(const proto::FunctionDefLibrary& library);

 private:
  GraphDef& def_;
  absl::flat_hash_map<std::string, std::pair<const proto::FunctionDef*, const void*>> have_;  // name -> (def, origin)
  absl::flat_hash_set<const FunctionBody*> bodies_;
  absl::flat_hash_map<const proto::FunctionDefLibrary*, FunctionIndex> indexes_;
};

// Writes the TensorFlow attrs of functional node `node` into `n` (its inputs are written) and
// adds the functions it runs, and those they use, to the library.
absl::Status write_functional_node(const GraphState& state, const Node& node, proto::NodeDef& n, LibraryWriter& library);

// A body tapeflow traced (cond, while_loop) as a FunctionDef in TensorFlow's form; the functions
// its own functional nodes run go into `library` (graph_def_function_writer.cc).
absl::StatusOr<proto::FunctionDef> function_def_of(const FunctionBody& body, LibraryWriter& library);

// import_graph_def with no name scope, given the library apart from the GraphDef (a body's
// GraphDef has none of its own). Throws as import_graph_def does.
std::vector<ImportedElement> import_with_library(const Graph& graph, const GraphDef& graph_def,
                                                 const proto::FunctionDefLibrary& library,
                                                 const std::vector<std::string>& return_elements, std::source_location loc);

}  // namespace tapeflow::graph_def_internal
