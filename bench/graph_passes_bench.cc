// Graph pass benchmarks at 10k and 100k nodes; each reports time per node ("per_node"), so a
// linear pass shows the same per-node time at both sizes:
//   - Build: adding the nodes through the graph-building context;
//   - Prune: prune() of a graph whose fetch needs half of it;
//   - Cse: eliminate_common_subexpressions() of that graph (its Consts are all equal);
//   - FoldConstants: fold_constants() of an all-constant chain (each node evaluated once);
//   - SessionRun: Session::run of the pruned graph (plan cached), and SessionFirstRun: a new
//     Session's first run (plan compilation included).
// Run: ./build/bench/graph_passes_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include "graph/passes.h"
#include "tapeflow.h"

namespace tf = tapeflow;

namespace {

// About n nodes: a placeholder, a live chain x * c * c ... (fetched) and a dead chain
// x + c + c ... of the same length; each step adds a Const and an op.
struct ChainGraph {
  tf::Graph graph;
  tf::Tensor x, live;
};

ChainGraph build_chains(int n) {
  ChainGraph c;
  auto scope = c.graph.as_default();
  c.x = tf::placeholder(tf::DType::kFloat32, {4}, "x");
  tf::Tensor live = c.x, dead = c.x;
  const int steps = (n - 1) / 4;
  {
    auto s = tf::name_scope("live");
    for (int i = 0; i < steps; ++i) live = live * 1.0001f;
  }
  {
    auto s = tf::name_scope("dead");
    for (int i = 0; i < steps; ++i) dead = dead + 1.f;
  }
  c.live = live;
  return c;
}

// About n nodes, all constant: c * k + k ... from one Const.
tf::Graph build_constant_chain(int n) {
  tf::Graph g;
  auto scope = g.as_default();
  tf::Tensor t = tf::constant(tf::Tensor({1.f, 2.f, 3.f, 4.f}), "start");
  for (int i = 0; i < (n - 1) / 2; ++i) t = t * 1.0001f;
  return g;
}

void per_node(benchmark::State& state, int nodes) {
  state.counters["nodes"] = nodes;
  state.counters["per_node"] =
      benchmark::Counter(nodes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Build(benchmark::State& state) {
  int nodes = 0;
  for (auto _ : state) {
    ChainGraph c = build_chains(static_cast<int>(state.range(0)));
    nodes = c.graph.num_nodes();
    benchmark::DoNotOptimize(nodes);
  }
  per_node(state, nodes);
}

void BM_Prune(benchmark::State& state) {
  ChainGraph c = build_chains(static_cast<int>(state.range(0)));
  int kept = 0;
  for (auto _ : state) {
    tf::PassResult r = tf::prune(c.graph, {c.live});
    kept = r.nodes_after;
  }
  per_node(state, c.graph.num_nodes());
  state.counters["kept"] = kept;
}

void BM_Cse(benchmark::State& state) {
  ChainGraph c = build_chains(static_cast<int>(state.range(0)));
  int kept = 0;
  for (auto _ : state) kept = tf::eliminate_common_subexpressions(c.graph).nodes_after;
  per_node(state, c.graph.num_nodes());
  state.counters["kept"] = kept;
}

void BM_FoldConstants(benchmark::State& state) {
  tf::Graph g = build_constant_chain(static_cast<int>(state.range(0)));
  int kept = 0;
  for (auto _ : state) kept = tf::fold_constants(g).nodes_after;
  per_node(state, g.num_nodes());
  state.counters["kept"] = kept;
}

void BM_SessionRun(benchmark::State& state) {
  ChainGraph c = build_chains(static_cast<int>(state.range(0)));
  tf::PassResult r = tf::prune(c.graph, {c.live});
  tf::Session sess(r.graph);
  const tf::Tensor feed({1.f, 2.f, 3.f, 4.f});
  const tf::Tensor live = r.map(c.live), x = r.map(c.x);
  sess.run(live, {{x, feed}});  // compiles the plan
  for (auto _ : state) benchmark::DoNotOptimize(sess.run(live, {{x, feed}}));
  per_node(state, r.nodes_after);
}

void BM_SessionFirstRun(benchmark::State& state) {
  ChainGraph c = build_chains(static_cast<int>(state.range(0)));
  tf::PassResult r = tf::prune(c.graph, {c.live});
  const tf::Tensor feed({1.f, 2.f, 3.f, 4.f});
  const tf::Tensor live = r.map(c.live), x = r.map(c.x);
  for (auto _ : state) {
    tf::Session sess(r.graph);
    benchmark::DoNotOptimize(sess.run(live, {{x, feed}}));
  }
  per_node(state, r.nodes_after);
}

}  // namespace

BENCHMARK(BM_Build)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Prune)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cse)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FoldConstants)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SessionRun)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SessionFirstRun)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
