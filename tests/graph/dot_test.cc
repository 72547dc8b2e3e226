// to_dot and to_chrome_trace (issue 13, "Looking at graphs"): the exact text for a small scoped
// graph, the same graph rendered by Graphviz's own `dot`, and a traced run's Chrome trace
// parsed back with nlohmann::json.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "graph/dot.h"
#include "graph/graph_def.h"
#include "graph/trace_events.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// x [?,784] -> outer/inner/c = matmul(x, outer/w), run after outer/marker (a control edge);
// and relu(z * 2 + 1) in outer/inner, with z [256,512]: fusion needs static shapes, and this is
// large enough to run as one fused entry (Note [Fusion]).
struct ScopedGraph {
  Graph g;
  Tensor x, z, c, y;
  Operation marker;
  ScopedGraph() {
    const Tensor w_value = ones({784, 512}) * 0.01f;
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, 784}, "x");
    z = placeholder(DType::kFloat32, {256, 512}, "z");
    placeholder(DType::kFloat32, {2}, "say \"hi\" \\ there");  // needs escaping; never run
    auto outer = name_scope("outer");
    Tensor w = constant(w_value, "w");
    marker = no_op("marker");
    auto inner = name_scope("inner");
    {
      auto deps = control_dependencies({marker});
      auto name = op_name("c");
      c = matmul(x, w);
    }
    y = relu(z * 2.f + 1.f);
  }
};

RunMetadata traced_run(const ScopedGraph& sg) {
  Session sess(sg.g);
  RunOptions options;
  options.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata md;
  sess.run({sg.c, sg.y}, {{sg.x, ones({256, 784})}, {sg.z, ones({256, 512})}}, {}, &options, &md);
  return md;
}

NodeExecStats entry(std::string name, std::string op, std::string device, int64_t start_micros,
                    int64_t duration_nanos, size_t thread_id, std::vector<std::string> fused = {}) {
  NodeExecStats s;
  s.node_name = std::move(name);
  s.op = std::move(op);
  s.device = std::move(device);
  s.start_micros = start_micros;
  s.duration_nanos = duration_nanos;
  s.thread_id = thread_id;
  s.fused_nodes = std::move(fused);
  return s;
}

const NodeExecStats* find_stats(const StepStats& stats, const std::string& name) {
  for (const NodeExecStats& n : stats.nodes)
    if (n.node_name == name) return &n;
  return nullptr;
}

// The line of `dot` that declares node `name` ("" when absent).
std::string node_line(const std::string& dot, const std::string& quoted_name) {
  std::istringstream in(dot);
  for (std::string line; std::getline(in, line);)
    if (line.find(quoted_name + " [label=") != std::string::npos) return line;
  return "";
}

TEST(DotTest, ScopesAreNestedClustersAndEdgesCarryDtypeAndShape) {
  ScopedGraph sg;
  const std::string dot = to_dot(sg.g);
  EXPECT_THAT(dot, testing::StartsWith("digraph \"graph\" {\n"));
  // Nesting shows in the indentation: outer at one level, inner inside it, c inside inner.
  // Clusters are numbered in writing order and labelled with their own name (Note [Linear DOT]).
  EXPECT_THAT(dot, HasSubstr("  subgraph \"cluster_1\" {\n    label=\"outer\";\n"));
  EXPECT_THAT(dot, HasSubstr("    subgraph \"cluster_2\" {\n      label=\"inner\";\n"));
  EXPECT_THAT(dot, HasSubstr("      \"outer/inner/c\" [label=\"c\\nMatMul\", tooltip=\"outer/inner/c\"];\n"));
  EXPECT_THAT(dot, HasSubstr("    \"outer/w\" [label=\"w\\nConst\""));
  // inner's cluster closes before outer's: "}" at inner's indentation, then at outer's.
  EXPECT_THAT(dot, HasSubstr("\n    }\n  }\n"));
  EXPECT_EQ(dot.find("cluster_3"), std::string::npos);  // two scopes, two clusters
  EXPECT_THAT(dot, HasSubstr("  \"x\" -> \"outer/inner/c\" [label=\"float32 [?,784]\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  \"outer/w\" -> \"outer/inner/c\" [label=\"float32 [784,512]\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  \"z\" -> \"outer/inner/Mul\" [label=\"float32 [256,512]\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  \"outer/marker\" -> \"outer/inner/c\" [style=dashed];\n"));
  // Quotes and backslashes in a name are escaped, so the id stays one DOT string.
  EXPECT_THAT(dot, HasSubstr("  \"say \\\"hi\\\" \\\\ there\" [label=\"say \\\"hi\\\" \\\\ there\\nPlaceholder\""));
  EXPECT_THAT(dot, Not(HasSubstr("fillcolor")));
  EXPECT_EQ(dot, to_dot(sg.g));  // deterministic
}

// A variable's handle reaches its reads and updates as TensorFlow's input 0: a data edge.
TEST(DotTest, AVariablesHandleIsADataEdgeToItsReads) {
  Graph g;
  {
    auto scope = g.as_default();
    Variable v(Tensor({1.f, 2.f}), "v");
    Tensor r = v.read() * 2.f;
  }
  const std::string dot = to_dot(g);
  EXPECT_THAT(dot, HasSubstr("  \"v\" -> \"ReadVariableOp\" [label=\"resource\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  \"v\" -> \"v/Assign\" [label=\"resource\"];\n"));
  EXPECT_THAT(dot, Not(HasSubstr("style=dashed")));
}

// An imported Reshape holds its shape as an attr; the Const TensorFlow fed it stays in the graph
// (Note [Spare constants]) and is drawn as a dotted edge to it, not as a node on its own. A
// user's own unconsumed Const under another node's name but with another value is left alone.
TEST(DotTest, AnImportedNodesConstantInputIsADottedEdge) {
  const GraphDef def = graph_def_from_text(R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } dim { size: 3 } } } } }
      node { name: "r/shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 6 } } } }
      node { name: "r" op: "Reshape" input: "x" input: "r/shape"
             attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
      node { name: "r/other" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 7 } } } })pb");
  const std::string dot = to_dot(graph_from_graph_def(def));
  EXPECT_THAT(dot, HasSubstr("  \"r/shape\" -> \"r\" [style=dotted, label=\"constant input\"];\n"));
  EXPECT_THAT(dot, Not(HasSubstr("\"r/other\" ->")));
  EXPECT_THAT(dot, HasSubstr("  \"x\" -> \"r\" [label=\"float32 [2,3]\"];\n"));
  // A Reshape built here holds its shape as an attr with no Const beside it: no dotted edge.
  Graph built;
  {
    auto scope = built.as_default();
    Tensor y = reshape(placeholder(DType::kFloat32, {2, 3}, "x"), {6});
  }
  EXPECT_THAT(to_dot(built), Not(HasSubstr("dotted")));
}

// A GraphDef drawn without importing it (ops tapeflow lacks): the same scopes and node labels,
// edges naming their output when it is not 0, control inputs dashed, a dangling input left out.
TEST(DotTest, AGraphDefIsDrawnWithoutImportingIt) {
  const GraphDef def = graph_def_from_text(R"pb(
      node { name: "x" op: "Placeholder" device: "/device:CPU:0" }
      node { name: "block/split" op: "SplitMystery" input: "x" }
      node { name: "block/use" op: "UseMystery" input: "block/split:2" input: "block/split:0"
             input: "ghost" input: "^x" })pb");
  const std::string dot = graph_def_to_dot(def);
  EXPECT_THAT(dot, HasSubstr("  \"x\" [label=\"x\\nPlaceholder\", tooltip=\"x\\n/device:CPU:0\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  subgraph \"cluster_1\" {\n    label=\"block\";\n"));
  EXPECT_THAT(dot, HasSubstr("    \"block/use\" [label=\"use\\nUseMystery\", tooltip=\"block/use\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  \"x\" -> \"block/split\" [label=\"\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  \"block/split\" -> \"block/use\" [label=\":2\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  \"block/split\" -> \"block/use\" [label=\"\"];\n"));
  EXPECT_THAT(dot, HasSubstr("  \"x\" -> \"block/use\" [style=dashed];\n"));
  EXPECT_THAT(dot, Not(HasSubstr("ghost")));
  // A graph tapeflow can import draws the same nodes either way.
  Graph g;
  {
    auto scope = g.as_default();
    Tensor y = relu(placeholder(DType::kFloat32, {2}, "x"));
  }
  const std::string imported = to_dot(g), raw = graph_def_to_dot(to_graph_def(g));
  EXPECT_THAT(imported, HasSubstr("\"Relu\" [label=\"Relu\\nRelu\", tooltip=\"Relu\"];"));
  EXPECT_THAT(raw, HasSubstr("\"Relu\" [label=\"Relu\\nRelu\", tooltip=\"Relu\"];"));
  EXPECT_THAT(imported, HasSubstr("\"x\" -> \"Relu\" [label=\"float32 [2]\"];"));
  EXPECT_THAT(raw, HasSubstr("\"x\" -> \"Relu\" [label=\"\"];"));
}

TEST(DotTest, StepStatsFillNodesByDuration) {
  ScopedGraph sg;
  const RunMetadata md = traced_run(sg);
  const std::string dot = to_dot(sg.g, {.step_stats = &md.step_stats});
  const std::string c = node_line(dot, "\"outer/inner/c\"");
  EXPECT_THAT(c, HasSubstr("style=filled, fillcolor=\"0.000 "));
  EXPECT_THAT(c, testing::ContainsRegex("label=\"c\\\\nMatMul\\\\n[0-9.]+ (ns|us|ms)\""));
  EXPECT_THAT(c, HasSubstr("tooltip=\"outer/inner/c\\n/job:"));  // the device it ran on
  // The fused chain's members take its entry's colour and say where they went.
  const NodeExecStats* relu = find_stats(md.step_stats, "outer/inner/Relu");
  ASSERT_NE(relu, nullptr) << md.step_stats.to_string();
  ASSERT_THAT(relu->fused_nodes, ElementsAre("outer/inner/Mul", "outer/inner/Add", "outer/inner/Relu"))
      << md.step_stats.to_string();
  EXPECT_THAT(node_line(dot, "\"outer/inner/Mul\""), HasSubstr("\\nfused into Relu\""));
  EXPECT_THAT(node_line(dot, "\"outer/inner/Mul\""), HasSubstr("fillcolor"));
  // The slowest node is full red; a node that did not run is not filled.
  EXPECT_THAT(dot, HasSubstr("fillcolor=\"0.000 1.000 1.000\""));
  EXPECT_THAT(node_line(dot, "\"say \\\"hi\\\" \\\\ there\""), Not(HasSubstr("fillcolor")));
  EXPECT_EQ(dot, to_dot(sg.g, {.step_stats = &md.step_stats}));
}

TEST(DotTest, NegativeDurationIsAnError) {
  ScopedGraph sg;
  StepStats stats;
  stats.nodes.push_back(entry("x", "Placeholder", "", 0, -1, 0));
  EXPECT_THAT(error_of([&] { to_dot(sg.g, {.step_stats = &stats}); }), testing::StartsWith("[to_dot] "));
}

TEST(DotTest, GraphvizRendersIt) {
  if (std::system("command -v dot > /dev/null 2>&1") != 0) GTEST_SKIP() << "graphviz's `dot` is not on PATH";
  ScopedGraph sg;
  const RunMetadata md = traced_run(sg);
  const auto dir = std::filesystem::temp_directory_path() / ("tapeflow_dot_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto dot_path = dir / "g.dot", svg_path = dir / "g.svg";
  std::ofstream(dot_path) << to_dot(sg.g, {.step_stats = &md.step_stats});
  const std::string command = "dot -Tsvg '" + dot_path.string() + "' -o '" + svg_path.string() + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(svg_path);
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(svg.empty());
  EXPECT_THAT(svg, HasSubstr("<svg"));
  // Graphviz writes each node's and cluster's id in a <title>, and labels as <text>.
  EXPECT_THAT(svg, HasSubstr("<title>outer/inner/c</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>cluster_2</title>"));
  EXPECT_THAT(svg, HasSubstr(">inner</text>"));  // the cluster's label
  EXPECT_THAT(svg, HasSubstr("<title>outer/marker&#45;&gt;outer/inner/c</title>"));
  EXPECT_THAT(svg, HasSubstr(">MatMul</text>"));
  EXPECT_THAT(svg, HasSubstr(">float32 [?,784]</text>"));
  EXPECT_THAT(svg, HasSubstr("say &quot;hi&quot; \\ there"));
}

// Note [Linear DOT]: 2,000 nested scopes (one node in each) give text linear in the graph's own
// size. Before, each cluster repeated its whole path in its id and indented by its depth: about
// 10 bytes per level per scope, 40 MB here, 1.6 GB for 20,000.
void nest(int depth, std::vector<std::string>& names) {
  auto scope = name_scope("s");
  names.push_back(no_op("n").node().name);
  if (depth > 1) nest(depth - 1, names);
}

TEST(DotTest, DeeplyNestedScopesGiveLinearText) {
  constexpr int kDepth = 2000;
  Graph g;
  std::vector<std::string> names;
  {
    auto scope = g.as_default();
    nest(kDepth, names);
  }
  ASSERT_EQ(names.size(), size_t{kDepth});
  ASSERT_EQ(names.back().size(), 2 * kDepth + 1);  // "s/s/.../s/n"
  size_t name_bytes = 0;
  for (const std::string& n : names) name_bytes += n.size();
  const std::string dot = to_dot(g);
  // Each node's full name is written twice (its id and its tooltip): that much is the graph's
  // own size. Everything else stays under 200 bytes per node and scope.
  EXPECT_LT(dot.size(), 2 * name_bytes + 200 * 2 * kDepth) << dot.size() << " bytes for " << name_bytes;
  EXPECT_THAT(dot, HasSubstr("subgraph \"cluster_2000\" {"));
  EXPECT_EQ(dot.find("cluster_2001"), std::string::npos);
  // The indentation stops at 16 levels of 2 spaces: names[13] (14 scopes deep) is at 15,
  // names[14] at 16, and the deepest node too.
  const std::string deepest = node_line(dot, "\"" + names.back() + "\"");
  EXPECT_EQ(deepest.find_first_not_of(' '), 32u);
  EXPECT_EQ(node_line(dot, "\"" + names[14] + "\"").find_first_not_of(' '), 32u);
  EXPECT_EQ(node_line(dot, "\"" + names[13] + "\"").find_first_not_of(' '), 30u);
  EXPECT_THAT(deepest, HasSubstr("[label=\"n\\nNoOp\""));
}

TEST(ChromeTraceTest, TracedRunIsCompleteEventsOnNamedTracks) {
  ScopedGraph sg;
  const RunMetadata md = traced_run(sg);
  const std::string text = to_chrome_trace(md.step_stats);
  const nlohmann::json trace = nlohmann::json::parse(text);
  EXPECT_EQ(trace["displayTimeUnit"], "ns");
  std::set<std::pair<int, int>> named_threads;
  std::map<int, std::string> processes;
  int complete = 0;
  bool saw_c = false, saw_fused = false;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    const int pid = e["pid"].get<int>(), tid = e["tid"].get<int>();
    if (e["ph"] == "M" && e["name"] == "process_name") processes[pid] = e["args"]["name"].get<std::string>();
    if (e["ph"] == "M" && e["name"] == "thread_name") named_threads.insert({pid, tid});
    if (e["ph"] != "X") continue;
    ++complete;
    EXPECT_EQ(e["cat"], "Op");
    const NodeExecStats* s = find_stats(md.step_stats, e["args"]["name"]);
    ASSERT_NE(s, nullptr) << e;
    EXPECT_EQ(e["name"], s->op);
    EXPECT_EQ(e["args"]["op"], s->op);
    EXPECT_EQ(e["ts"].get<int64_t>(), s->start_micros);
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), s->duration_nanos / 1000.0);
    EXPECT_EQ(processes.at(pid), s->device);  // metadata comes first
    EXPECT_TRUE(named_threads.count({pid, tid})) << e;
    if (s->node_name == "outer/inner/c") saw_c = true;
    if (s->node_name == "outer/inner/Relu") {
      saw_fused = true;
      EXPECT_EQ(e["args"]["fused_nodes"],
                nlohmann::json({"outer/inner/Mul", "outer/inner/Add", "outer/inner/Relu"}));
    } else {
      EXPECT_FALSE(e["args"].contains("fused_nodes")) << e;
    }
  }
  EXPECT_EQ(complete, static_cast<int>(md.step_stats.nodes.size()));
  EXPECT_TRUE(saw_c && saw_fused) << text;
  EXPECT_EQ(processes.size(), 1u) << text;  // one CPU device
}

TEST(ChromeTraceTest, OneProcessPerDeviceOneThreadPerThread) {
  StepStats stats;
  stats.nodes.push_back(entry("b", "MatMul", "/device:GPU:0", 5, 2500, 77));
  stats.nodes.push_back(entry("a\"\\\n", "Add", "/device:CPU:0", 1, 1, 99));
  stats.nodes.push_back(entry("c", "Relu", "/device:CPU:0", 2, 1000, 42, {"m", "c"}));
  const std::string text = to_chrome_trace(stats);
  const nlohmann::json trace = nlohmann::json::parse(text);
  std::vector<nlohmann::json> meta, events;
  for (const nlohmann::json& e : trace["traceEvents"]) (e["ph"] == "M" ? meta : events).push_back(e);
  // Devices in name order; threads in order of first start within their device.
  EXPECT_EQ(meta[0], nlohmann::json::parse(R"({"name":"process_name","ph":"M","pid":0,"tid":0,
                                               "args":{"name":"/device:CPU:0"}})"));
  EXPECT_EQ(meta[2]["args"]["name"], "/device:GPU:0");
  EXPECT_EQ(meta[2]["pid"], 1);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0], nlohmann::json::parse(R"({"name":"Add","cat":"Op","ph":"X","ts":1,"dur":0.001,"pid":0,
                                                 "tid":0,"args":{"name":"a\"\\\n","op":"Add"}})"));
  EXPECT_EQ(events[1]["tid"], 1);  // another thread of CPU:0
  EXPECT_EQ(events[1]["args"]["fused_nodes"], nlohmann::json({"m", "c"}));
  EXPECT_EQ(events[1]["dur"], 1.0);
  EXPECT_EQ(events[2]["pid"], 1);
  EXPECT_EQ(events[2]["tid"], 0);
  EXPECT_EQ(events[2]["dur"], 2.5);
  int thread_names = 0;
  for (const nlohmann::json& m : meta) thread_names += m["name"] == "thread_name";
  EXPECT_EQ(thread_names, 3);
  EXPECT_EQ(text, to_chrome_trace(stats));
}

TEST(ChromeTraceTest, EmptyStatsAreAnEmptyTraceAndNegativeTimesAnError) {
  const nlohmann::json trace = nlohmann::json::parse(to_chrome_trace({}));
  EXPECT_TRUE(trace["traceEvents"].empty());
  StepStats bad;
  bad.nodes.push_back(entry("n", "Add", "", -3, 0, 0));
  EXPECT_THAT(error_of([&] { to_chrome_trace(bad); }), testing::StartsWith("[to_chrome_trace] "));
}

}  // namespace
}  // namespace tapeflow
