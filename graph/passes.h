// Graph passes: plain functions that rewrite a Graph into a new, smaller one that computes the
// same values. Graphs are append-only, so a pass copies the nodes it keeps into a new Graph
// (same names, same variables, remapped ids) and returns the old -> new mapping with it.
//
//   PassResult folded = fold_constants(g);                 // 2 + 3 becomes a Const "add"
//   PassResult merged = eliminate_common_subexpressions(folded.graph);
//   PassResult small = prune(merged.graph, {merged.map(folded.map(y))});
//   PassResult all = chain(chain(folded, merged), small);  // g's ids -> small.graph's
//   Session sess(all.graph);
//   sess.run(all.map(y), {{all.map(x), 2.f}});
//
// What every pass keeps: node names, attrs, requested devices, source lines, Const values
// (buffers shared, not copied) and variable nodes bound to the same Variable, so a Session on
// the new graph reads and initializes the same variables (run all.map(old_init_op)).
// Collections, the graph's variable list and prevent_feeding marks are carried over for the
// nodes that remain. Note [Passes and variables]: a Variable stays bound to the graph that
// created it (Variable::graph_info), so on the new graph global_variables_initializer() and
// fetching a Variable object are refused; map the old init op and the read tensors instead.
//
// Merging and dropping nodes changes what can be fed: after CSE, feeding the kept `a+b`
// feeds both former copies. Pass the ops you mean to fetch or feed by name as `keep`.
// Thread-safety: a pass only reads the source graph (a snapshot of its nodes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tapeflow {

struct PassResult {
  Graph graph;           // the rewritten graph
  int nodes_before = 0;  // nodes of the source graph
  int nodes_after = 0;   // nodes of `graph`
  Graph source;          // the graph the pass read
  std::string pass;      // "prune", "fold_constants", ... for messages
  // Source node id -> node id in `graph`; -1 for a node the pass removed. A merged node maps
  // to the node it was merged into, a folded one to its Const.
  std::vector<int> node_map;

  // The tensor / operation of `graph` that stands for `old` (a tensor or operation of
  // `source`). NotFoundError when the pass removed it; InvalidArgumentError for another
  // graph's tensor.
  Tensor map(const Tensor& old) const;
  Operation map(const Operation& old) const;
  std::vector<Tensor> map(const std::vector<Tensor>& old) const;
  // Whether `old` (an operation of `source`) is still in `graph` (possibly merged or folded).
  bool contains(const Operation& old) const;
};

// Keeps only what `fetches` and `targets` need: their data inputs and control inputs,
// transitively. InvalidArgumentError for a fetch or target of another graph.
PassResult prune(const Graph& g, const std::vector<Tensor>& fetches, const std::vector<Operation>& targets = {});

struct FoldOptions {
  // A result larger than this stays computed at run time (TensorFlow's limit too).
  int64_t max_constant_bytes = int64_t{10} << 20;
  // Never dropped, even when folding leaves them unused (ops you fetch by name).
  std::vector<Operation> keep;
};

// Constant folding. A node with one output whose data inputs are all constant (Const nodes or
// nodes folded already) is evaluated once, with the executor's own kernels on CPU, and replaced
// by a Const node of the same name, requested device and control inputs (plus those of the
// nodes folded into it). Never folded: stateful ops (random ops, placeholders, variable ops,
// Print), NoOp, multi-output ops, and a node whose evaluation fails (it is left to fail at
// run time, as TensorFlow does). Constant nodes that folding left with no consumer are dropped,
// unless they are a control input of some node or in `keep`; nodes nothing used before stay.
PassResult fold_constants(const Graph& g, const FoldOptions& options = {});

// Common-subexpression elimination. Two nodes with the same op, the same inputs (after
// earlier merges, so whole duplicated chains collapse), equal attrs, the same requested device
// and the same control inputs are merged into the older one. Const nodes merge when their
// dtype, shape and bytes are equal. Stateful ops (random ops, placeholders, variable ops,
// Print) are never merged; nodes in `keep` are never merged away (others may merge into them).
PassResult eliminate_common_subexpressions(const Graph& g, const std::vector<Operation>& keep = {});

// first, then second (second.source must be first.graph): a result mapping first.source's
// ids to second.graph's.
PassResult chain(const PassResult& first, const PassResult& second);

}  // namespace tapeflow
