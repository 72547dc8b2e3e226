// tapeflow::container (TensorFlow's tf.container): the resource container recorded on the
// variables made inside it, its nesting, its name rule, and the GraphDef attr "container".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string container_of(const Graph& g, const std::string& name) {
  return g.get_operation_by_name(name).node().attrs.get_or<std::string>("container", "<none>");
}

TEST(ContainerScopeTest, VariablesRecordTheInnermostContainer) {
  Graph g;
  {
    auto scope = g.as_default();
    Variable a(Tensor(1.f), "a");
    {
      auto c = container("exp1");
      Variable b(Tensor(2.f), "b");
      {
        auto inner = container("exp2/run.3");
        Variable d(Tensor(3.f), "d");
      }
      Variable e(Tensor(4.f), "e");
      // Only the handle carries it: reads and the initializer do not.
      Tensor r = b.read();
      EXPECT_EQ(producer(r).node().attrs.find("container"), nullptr);
      EXPECT_EQ(container_of(g, "b/Assign"), "<none>");
    }
    Variable f(Tensor(5.f), "f");
  }
  EXPECT_EQ(container_of(g, "a"), "");
  EXPECT_EQ(container_of(g, "b"), "exp1");
  EXPECT_EQ(container_of(g, "d"), "exp2/run.3");
  EXPECT_EQ(container_of(g, "e"), "exp1");
  EXPECT_EQ(container_of(g, "f"), "");
}

TEST(ContainerScopeTest, ABadNameIsATypedErrorAndChangesNothing) {
  Graph g;
  auto scope = g.as_default();
  for (const char* bad : {"_x", "-x", "/x", "a b", "a:b"}) {
    EXPECT_THAT(error_of([&] { auto c = container(bad); }),
                AllOf(HasSubstr(absl::StrCat("[container] '", bad, "' is not a container name")),
                      HasSubstr("container_scope_test.cc:")));
  }
  {
    auto c = container("ok");
    EXPECT_THROW((void)container("bad name"), InvalidArgumentError);
    Variable v(Tensor(1.f), "v");  // still in "ok"
  }
  EXPECT_EQ(container_of(g, "v"), "ok");
}

TEST(ContainerScopeTest, EagerVariablesIgnoreIt) {
  auto c = container("exp1");
  Variable v(Tensor(1.f), "v");
  EXPECT_EQ(v.read().item<float>(), 1.f);
}

TEST(ContainerScopeTest, GraphDefCarriesTensorFlowsContainerAttr) {
  Graph g;
  {
    auto scope = g.as_default();
    Variable a(Tensor(1.f), "a");
    auto c = container("exp1");
    Variable b(Tensor(2.f), "b");
  }
  const std::string text = graph_def_to_text(to_graph_def(g));
  EXPECT_THAT(text, HasSubstr(R"(key: "container")"));
  EXPECT_THAT(text, HasSubstr(R"(s: "exp1")"));
  Graph back = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(container_of(back, "a"), "");
  EXPECT_EQ(container_of(back, "b"), "exp1");
  // A TensorFlow GraphDef with another container now imports (it used to be Unimplemented).
  const std::string tf = R"pb(
    node { name: "v" op: "VarHandleOp"
      attr { key: "container" value { s: "tf_exp" } }
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "shape" value { shape { } } }
      attr { key: "shared_name" value { s: "v" } } })pb";
  EXPECT_EQ(container_of(graph_from_graph_def(graph_def_from_text(tf)), "v"), "tf_exp");
}

}  // namespace
}  // namespace tapeflow
