// If, While and Case nodes of a GraphDef, for graph_def.cc (export) and graph_def_import.cc:
// Note [Functional control flow] (graph/functional_ops.h).
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <vector>

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

// Held by each import: the outermost one on a thread owns the state its functional nodes'
// bodies share (the library, the recursion stack, the node budget); nested imports, which
// build those bodies, join it.
class FunctionBodyScope {
 public:
  explicit FunctionBodyScope(const proto::FunctionDefLibrary& library);
  ~FunctionBodyScope();
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

// Writes the TensorFlow attrs of functional node `node` into `n` (its inputs are written) and
// adds the functions it runs, and those they use, to `library`.
absl::Status write_functional_node(const GraphState& state, const Node& node, proto::NodeDef& n,
                                   proto::FunctionDefLibrary& library);

// A body tapeflow traced (cond, while_loop) as a FunctionDef in TensorFlow's form; the functions
// its own functional nodes run go into `library` (graph_def_function_writer.cc).
absl::StatusOr<proto::FunctionDef> function_def_of(const FunctionBody& body, proto::FunctionDefLibrary& library);

// import_graph_def with no name scope, given the library apart from the GraphDef (a body's
// GraphDef has none of its own). Throws as import_graph_def does.
std::vector<ImportedElement> import_with_library(const Graph& graph, const GraphDef& graph_def,
                                                 const proto::FunctionDefLibrary& library,
                                                 const std::vector<std::string>& return_elements, std::source_location loc);

}  // namespace tapeflow::graph_def_internal
