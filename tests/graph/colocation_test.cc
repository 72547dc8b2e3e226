// TensorFlow's colocation attr "_class" (issue 16): import turns "loc:@X" into a constraint the
// placer honours (graph/placer.h, rule 2; Note [Colocation groups]), export writes it on a
// variable's reads and updates and keeps imported ones, and a round trip keeps both the attr
// and the placement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "graph/graph_def.h"
#include "graph/placer.h"
#include "tapeflow.h"
#include "tests/graph/placement_util.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// As TensorFlow 1.x writes a layer's graph: the variable pinned to CPU:1, and an arbitrary
// node (not a read or update) that the layer built under colocate_with(weights).
constexpr const char* kLayer = R"pb(
  node { name: "images" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "conv1/weights" op: "VarHandleOp" device: "/device:CPU:1"
    attr { key: "_class" value { list { s: "loc:@conv1/weights" } } }
    attr { key: "container" value { s: "" } }
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape { dim { size: 2 } } } }
    attr { key: "shared_name" value { s: "conv1/weights" } } }
  node { name: "conv1/weights/Initializer/Const" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 3 } } } }
  node { name: "conv1/weights/Assign" op: "AssignVariableOp" input: "conv1/weights"
    input: "conv1/weights/Initializer/Const" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "conv1/weights/Read/ReadVariableOp" op: "ReadVariableOp" input: "conv1/weights"
    attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "conv1/scaled" op: "Mul" input: "images" input: "conv1/weights/Read/ReadVariableOp"
    attr { key: "T" value { type: DT_FLOAT } }
    attr { key: "_class" value { list { s: "loc:@conv1/weights" } } } }
  node { name: "conv1/free" op: "Neg" input: "conv1/scaled" attr { key: "T" value { type: DT_FLOAT } } })pb";

SessionOptions two_cpu_options(bool log = false) {
  SessionOptions options;
  options.device_count["CPU"] = 2;
  options.log_device_placement = log;
  return options;
}

// The device each node ran on, from the run's step statistics.
std::string ran_on(const RunMetadata& metadata, const std::string& node) {
  for (const NodeExecStats& s : metadata.step_stats.nodes)
    if (s.node_name == node) return s.device;
  return "(did not run)";
}

TEST(ColocationTest, ImportedClassPlacesTheNodeWithItsVariable) {
  Graph g = graph_from_graph_def(graph_def_from_text(kLayer));
  EXPECT_THAT(g.get_operation_by_name("conv1/scaled").node().colocate_with(), ElementsAre("conv1/weights"));
  EXPECT_THAT(g.get_operation_by_name("conv1/free").node().colocate_with(), IsEmpty());
  // A VarHandleOp naming itself adds nothing.
  EXPECT_THAT(g.get_operation_by_name("conv1/weights").node().colocate_with(), IsEmpty());
  EXPECT_FALSE(g.get_operation_by_name("conv1/scaled").attrs().has("class"));

  Session sess(g, two_cpu_options(/*log=*/true));
  sess.run(g.get_operation_by_name("conv1/weights/Assign"));
  RunOptions trace;
  trace.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata metadata;
  testing::internal::CaptureStderr();
  const Tensor out = sess.run(g.get_tensor_by_name("conv1/free:0"), {{g.get_tensor_by_name("images:0"), {1.f, 2.f}}},
                              trace, &metadata);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_THAT(out.to_vector<float>(), ElementsAre(-3.f, -6.f));
  EXPECT_EQ(ran_on(metadata, "conv1/scaled"), kCpu1);  // with conv1/weights, though it requested nothing
  EXPECT_EQ(ran_on(metadata, "conv1/free"), kCpu0);    // no "_class": the best device
  EXPECT_THAT(log, HasSubstr(std::string("conv1/scaled: (Mul): ") + kCpu1 + "\n"));
  EXPECT_THAT(log, HasSubstr(std::string("conv1/weights/Read/ReadVariableOp: (ReadVariableOp): ") + kCpu1 + "\n"));
  EXPECT_THAT(log, HasSubstr(std::string("conv1/free: (Neg): ") + kCpu0 + "\n"));
}

// The named node's request wins over the colocated node's own, and the named node need not run.
TEST(ColocationTest, TheNamedNodesRequestWinsAndItNeedNotRun) {
  constexpr const char* kText = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "follower" op: "Neg" input: "x" device: "/device:CPU:0" attr { key: "T" value { type: DT_FLOAT } }
      attr { key: "_class" value { list { s: "loc:@anchor" s: "not-a-location" } } } }
    node { name: "anchor" op: "Square" input: "x" device: "/device:CPU:1" attr { key: "T" value { type: DT_FLOAT } } })pb";
  Graph g = graph_from_graph_def(graph_def_from_text(kText));
  EXPECT_THAT(g.get_operation_by_name("follower").node().colocate_with(), ElementsAre("anchor"));
  Session sess(g, two_cpu_options());
  RunOptions trace;
  trace.trace_level = RunOptions::TraceLevel::kFullTrace;
  RunMetadata metadata;
  sess.run(g.get_tensor_by_name("follower:0"), {{g.get_tensor_by_name("x:0"), {1.f, 2.f}}}, trace, &metadata);
  EXPECT_EQ(ran_on(metadata, "follower"), kCpu1);
  EXPECT_EQ(ran_on(metadata, "anchor"), "(did not run)");
}

// TensorFlow's import_graph_def: "Node 'B' expects to be colocated with unknown node 'X'"
// (validate_colocation_constraints). The graph is left as it was.
TEST(ColocationTest, UnknownOrMalformedClassIsAnErrorAndChangesNothing) {
  std::string text = kLayer;
  text.replace(text.rfind("loc:@conv1/weights"), 18, "loc:@conv1/missing");
  Graph g;
  {
    auto scope = g.as_default();
    constant(Tensor(1.f), "existing");
  }
  try {
    import_graph_def(g, graph_def_from_text(text));
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.message(), HasSubstr("[import_graph_def] node 'conv1/scaled' (Mul): expects to be colocated "
                                       "with unknown node 'conv1/missing'"));
  }
  EXPECT_EQ(g.num_nodes(), 1);

  std::string not_list = kLayer;
  not_list.replace(not_list.rfind("list { s: \"loc:@conv1/weights\" }"), 33, "s: \"loc:@conv1/weights\"");
  EXPECT_THAT(error_of([&] { graph_from_graph_def(graph_def_from_text(not_list)); }),
              HasSubstr("node 'conv1/scaled' (Mul): attr '_class' must be a list of strings"));
}

TEST(ColocationTest, ExportWritesClassAndARoundTripKeepsAttrAndPlacement) {
  // Built here: the variable's reads and updates carry "loc:@v"; nothing else does.
  Graph built;
  {
    auto scope = built.as_default();
    auto cpu1 = device("/device:CPU:1");
    Variable v(Tensor({1.f, 2.f}), "v");
    Tensor r = v.read() * 2.f;
    v.assign_add(Tensor({1.f, 1.f}));
  }
  const GraphDef def = to_graph_def(built);
  int with_class = 0;
  for (const proto::NodeDef& n : def.node()) {
    const auto it = n.attr().find("_class");
    const bool variable_op = n.op() == "ReadVariableOp" || n.op() == "AssignVariableOp" || n.op() == "AssignAddVariableOp";
    ASSERT_EQ(it != n.attr().end(), variable_op) << n.name() << " (" << n.op() << ")";
    if (it == n.attr().end()) continue;
    ++with_class;
    ASSERT_EQ(it->second.list().s_size(), 1);
    EXPECT_EQ(it->second.list().s(0), "loc:@v") << n.name();
  }
  EXPECT_EQ(with_class, 3);  // the initializer, the read, the update

  // TensorFlow's graph: export keeps the imported "_class", import(export) places alike.
  Graph first = graph_from_graph_def(graph_def_from_text(kLayer));
  const GraphDef again = to_graph_def(first);
  for (const proto::NodeDef& n : again.node()) {
    if (n.name() != "conv1/scaled") continue;
    ASSERT_TRUE(n.attr().contains("_class"));
    EXPECT_EQ(n.attr().at("_class").list().s(0), "loc:@conv1/weights");
  }
  Graph second = graph_from_graph_def(again);
  DeviceManager::global().set_num_cpu_devices(2);
  const std::vector<Device*> cpus{DeviceManager::global().cpu(0), DeviceManager::global().cpu(1)};
  const auto placed_first = place_all(first, cpus), placed_second = place_all(second, cpus);
  EXPECT_EQ(placed_first, placed_second);
  EXPECT_EQ(placed_second.at("conv1/scaled"), kCpu1);
  EXPECT_EQ(graph_def_to_text(to_graph_def(second)), graph_def_to_text(again));

  // Under a prefix the names in "_class" follow the nodes they name.
  Graph prefixed;
  import_graph_def(prefixed, graph_def_from_text(kLayer), {}, {}, "import");
  EXPECT_THAT(prefixed.get_operation_by_name("import/conv1/scaled").node().colocate_with(),
              ElementsAre("import/conv1/weights"));
  EXPECT_EQ(place_all(prefixed, cpus).at("import/conv1/scaled"), kCpu1);
}

// As TensorFlow keys a group by the name in "loc:@X", nodes naming an X the graph lacks (a pass
// removed it) still go together.
TEST(ColocationTest, NodesNamingAMissingNodeArePlacedTogether) {
  Graph g;
  {
    auto scope = g.as_default();
    Tensor x = constant(Tensor(1.f), "x");
    {
      auto cpu1 = device("/device:CPU:1");
      square(x);  // "Square"
    }
    neg(x);  // "Neg"
    abs(x);  // "Abs"
  }
  g.state()->mutable_node(g.get_operation_by_name("Square").id()).set_colocate_with({"gone"});
  g.state()->mutable_node(g.get_operation_by_name("Neg").id()).set_colocate_with({"gone"});
  DeviceManager::global().set_num_cpu_devices(2);
  const auto where = place_all(g, {DeviceManager::global().cpu(0), DeviceManager::global().cpu(1)});
  EXPECT_EQ(where.at("Square"), kCpu1);
  EXPECT_EQ(where.at("Neg"), kCpu1);
  EXPECT_EQ(where.at("Abs"), kCpu0);
}

}  // namespace
}  // namespace tapeflow
