// to_chrome_trace: a traced run's step statistics as Chrome trace-event JSON, the format that
// TensorFlow's timeline and PyTorch's profiler write and Perfetto (ui.perfetto.dev) and
// chrome://tracing open.
//
//   RunOptions options;
//   options.trace_level = RunOptions::TraceLevel::kFullTrace;
//   RunMetadata md;
//   sess.run({y}, feeds, {}, &options, &md);
//   std::ofstream("trace.json") << tapeflow::to_chrome_trace(md.step_stats);
//
// Output: {"traceEvents": [...], "displayTimeUnit": "ns"}. Each executed node is a complete
// event ("ph": "X") named after its op, with "ts" = start_micros and "dur" in microseconds
// (fractional: nanosecond durations are kept), "args" = {"name": node, "op": op, and
// "fused_nodes": [...] for a fused chain}. Each device is one process ("pid", devices in name
// order) and each thread that ran nodes on it one thread ("tid", in order of first start), named
// by metadata events ("ph": "M", "process_name" / "thread_name"), so each gets its own track.
#pragma once

#include <string>

#include "graph/session_types.h"

namespace tapeflow {

// A pure function; deterministic for given stats. InvalidArgumentError ("[to_chrome_trace]
// ...") for a negative start or duration.
std::string to_chrome_trace(const StepStats& stats);

}  // namespace tapeflow
