// The step statistics of one traced Session run, for tests that check what the executor ran.
#pragma once

#include "graph/session.h"

namespace tapeflow {

// The kernel nodes of a fully traced run of `fetch` (Const nodes, listed at zero cost, left out).
inline StepStats traced_kernel_stats(Session& sess, const Tensor& fetch, const FeedList& feeds) {
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata md;
  sess.run({fetch}, feeds, {}, &options, &md);
  StepStats kernels;
  for (const NodeExecStats& n : md.step_stats.nodes)
    if (n.op != "Const") kernels.nodes.push_back(n);
  return kernels;
}

}  // namespace tapeflow
