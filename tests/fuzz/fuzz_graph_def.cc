// libFuzzer target: GraphDef import, binary and text (Note [Fuzz contract] in fuzz_target.h).
// The first byte picks the format (even: binary wire format, parsed into an arena and on the
// heap, which must agree; odd: protobuf text format); the rest is the GraphDef. Every parsed GraphDef is drawn as written (graph_def_to_dot, what
// `tapeflow graph` does with one it cannot import); an accepted one is drawn again after the
// import (to_dot, spare Consts included) and exported, and what tapeflow writes must import: a
// graph it cannot read back is a finding.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "graph/dot.h"
#include "graph/graph.h"
#include "graph/graph_def.h"
#include "tests/fuzz/fuzz_target.h"

namespace {
[[noreturn]] void fuzz_finding(const char* what, const char* detail) {
  std::fprintf(stderr, "%s %s\n", what, detail);
  std::abort();
}
}  // namespace

TAPEFLOW_FUZZ_TARGET(bytes) {
  using namespace tapeflow;
  if (bytes.empty()) return;
  const std::string_view body = fuzz::as_text(bytes.subspan(1));
  std::shared_ptr<const GraphDef> parsed;
  if (static_cast<uint8_t>(bytes[0]) % 2 == 0) {
    // In an arena, as load_model and the tapeflow tool parse; the heap parser must agree.
    std::optional<GraphDef> on_heap;
    try {
      on_heap = graph_def_from_binary(body);
    } catch (const Error&) {
    }
    try {
      parsed = graph_def_from_binary_in_arena(body);
    } catch (const Error& e) {
      if (on_heap) fuzz_finding("the heap parser read what the arena parser rejects", e.what());
      throw;
    }
    if (!on_heap) fuzz_finding("the arena parser read what the heap parser rejects", "");
    if (graph_def_to_binary(*parsed) != graph_def_to_binary(*on_heap))
      fuzz_finding("the arena and heap parsers read different GraphDefs", "");
  } else {
    parsed = std::make_shared<const GraphDef>(graph_def_from_text(body));
  }
  const GraphDef& def = *parsed;
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
