// libFuzzer target: GraphDef import, binary and text (Note [Fuzz contract] in fuzz_target.h).
// The first byte picks the format (even: binary wire format, odd: protobuf text format); the
// rest is the GraphDef. Every parsed GraphDef is drawn as written (graph_def_to_dot, what
// `tapeflow graph` does with one it cannot import); an accepted one is drawn again after the
// import (to_dot, spare Consts included) and exported, and what tapeflow writes must import: a
// graph it cannot read back is a finding.
#include <cstdio>
#include <cstdlib>

#include "graph/dot.h"
#include "graph/graph.h"
#include "graph/graph_def.h"
#include "tests/fuzz/fuzz_target.h"

TAPEFLOW_FUZZ_TARGET(bytes) {
  using namespace tapeflow;
  if (bytes.empty()) return;
  const std::string_view body = fuzz::as_text(bytes.subspan(1));
  const GraphDef def = (static_cast<uint8_t>(bytes[0]) % 2 == 0) ? graph_def_from_binary(body)
                                                                     : graph_def_from_text(body);
  (void)graph_def_to_dot(def);
  const Graph graph = graph_from_graph_def(def);
  (void)to_dot(graph);
  const GraphDef again = to_graph_def(graph);
  try {
    (void)graph_from_graph_def(again);
  } catch (const Error& e) {
    std::fprintf(stderr, "a graph tapeflow imported and exported does not import again: %s\n", e.what());
    std::abort();
  }
}
