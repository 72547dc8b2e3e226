// to_dot: a Graph as Graphviz DOT text, to look at it (issue 13, "Looking at graphs").
//
//   std::ofstream("g.dot") << tapeflow::to_dot(g);      // then: dot -Tsvg g.dot > g.svg
//   RunMetadata md;                                      // or coloured by a traced run:
//   sess.run({y}, feeds, {}, &full_trace_options, &md);
//   std::string dot = tapeflow::to_dot(g, {.step_stats = &md.step_stats});
//
// Name scopes ("outer/inner/c") become nested clusters ("cluster_1", "cluster_2", ... in
// writing order) labelled with the scope's last component, indented by depth up to 16 levels,
// so the text grows linearly with the graph however deep its scopes nest; each node is labelled
// with its name's last component and its op type; data edges carry "dtype [shape]" ("float32
// [?,784]"), control edges are dashed, and the Const an imported node's constant input came from
// (Reshape's shape) is a dotted "constant input" edge to it. A pure function of the
// graph (and the stats): the same input gives the same text, byte for byte.
#pragma once

#include <string>

#include "graph/graph.h"
#include "graph/session_types.h"

namespace tapeflow {

namespace proto {
class GraphDef;  // proto/graph.proto; declared here so this header needs no protobuf headers
}  // namespace proto

struct DotOptions {
  // Not owned; may be null. When given, nodes that ran are filled with a colour scaled by their
  // duration (white: fastest, red: slowest) and their label shows it; the device they ran on
  // replaces the requested one. Members of a fused chain point at the entry that ran them.
  const StepStats* step_stats = nullptr;
};

// Thread-safe: works on a snapshot of the nodes taken under the graph's lock.
// InvalidArgumentError ("[to_dot] ...") for step statistics with a negative duration.
std::string to_dot(const Graph& g, const DotOptions& options = {});

// The same picture drawn straight from a GraphDef (graph/graph_def.h), without importing it: for
// a graph with ops tapeflow does not have (TensorBoard draws those too). Edges carry no dtype or
// shape, only ":1" for an output other than 0; an input naming no node is left out.
std::string graph_def_to_dot(const proto::GraphDef& graph_def, const DotOptions& options = {});

}  // namespace tapeflow
