// GraphDefs parsed into a protobuf arena (graph_def_from_binary_in_arena, read_graph_def_in_arena):
// the same GraphDef as the heap parsers give, alive as long as its pointer, the same errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

// x + 1, n times over, with a MatMul in front: a GraphDef of n + 4 nodes.
GraphDef chain(int n) {
  Graph g;
  {
    auto scope = g.as_default();
    Tensor x = placeholder(DType::kFloat32, {1, 2}, "x");
    Tensor y = matmul(x, constant(Tensor(std::vector<float>{1, 2, 3, 4}, Shape{2, 2}), "w"));
    const Tensor one = constant(Tensor(1.f), "one");
    for (int i = 0; i < n; ++i) y = y + one;
  }
  return to_graph_def(g);
}

class GraphDefArenaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  const std::string dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("tapeflow_graph_def_arena_", ::getpid())).string();
};

TEST_F(GraphDefArenaTest, ParsesTheSameGraphDefAndImportsIt) {
  // 30k nodes: more than one arena block (blocks top out at 4 MiB).
  for (int n : {3, 30'000}) {
    const std::string bytes = graph_def_to_binary(chain(n));
    std::shared_ptr<const GraphDef> def = graph_def_from_binary_in_arena(bytes);
    ASSERT_NE(def->GetArena(), nullptr);
    EXPECT_EQ(def->node_size(), n + 4);
    EXPECT_EQ(graph_def_to_binary(*def), bytes);
    std::shared_ptr<const GraphDef> copy = def;  // the arena lives as long as the last pointer
    def.reset();
    Graph g = graph_from_graph_def(*copy);
    copy.reset();
    Session s(g);
    const Tensor out = s.run(g.get_tensor_by_name(absl::StrCat("Add_", n - 1, ":0")),  // the last of n adds
                             {{g.get_tensor_by_name("x:0"), Tensor(std::vector<float>{1, 1}, Shape{1, 2})}});
    // [1, 1] x [[1, 2], [3, 4]] = [4, 6], then + n.
    EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{4.f + n, 6.f + n})) << n;
  }
}

TEST_F(GraphDefArenaTest, ReadsBinaryAndTextFilesAsReadGraphDefDoes) {
  const GraphDef def = chain(5);
  for (const char* name : {"model.pb", "model.pbtxt"}) {
    const std::string path = absl::StrCat(dir, "/", name);
    write_graph_def(def, path);
    std::shared_ptr<const GraphDef> read = read_graph_def_in_arena(path);
    ASSERT_NE(read->GetArena(), nullptr) << name;
    EXPECT_EQ(graph_def_to_binary(*read), graph_def_to_binary(read_graph_def(path))) << name;
    EXPECT_EQ(graph_def_to_binary(*read), graph_def_to_binary(def)) << name;
  }
}

TEST_F(GraphDefArenaTest, ErrorsAreReadGraphDefsNamingTheInput) {
  const std::string bad("\x0a\x03\x0a\x01\xff", 5);  // node { name: "\xff" }: not UTF-8
  EXPECT_THAT(error_of([&] { graph_def_from_binary_in_arena(bad); }),
              HasSubstr("[graph_def_from_binary_in_arena] 5 bytes are not a GraphDef in binary format"));
  EXPECT_THAT(error_of([&] { graph_def_from_binary_in_arena(std::string("\x0a\xff\xff\xff\x7f", 5)); }),
              HasSubstr("5 bytes are not a GraphDef in binary format"));  // a node longer than the input
  const std::string path = dir + "/bad.pb";
  std::ofstream(path, std::ios::binary) << bad;
  EXPECT_EQ(error_of([&] { read_graph_def_in_arena(path); }), error_of([&] { read_graph_def(path); }));
  EXPECT_THAT(error_of([&] { read_graph_def_in_arena(path); }),
              HasSubstr("[read_graph_def] '" + path + "': [graph_def_from_binary] 5 bytes"));
  const std::string text = dir + "/bad.pbtxt";
  std::ofstream(text) << "node { name: \"a\" op: ";
  EXPECT_THAT(error_of([&] { read_graph_def_in_arena(text); }),
              HasSubstr("[read_graph_def] '" + text + "': [graph_def_from_text] not a GraphDef in text format"));
  EXPECT_THAT(error_of<NotFoundError>([&] { read_graph_def_in_arena(dir + "/missing.pb"); }),
              HasSubstr("[read_graph_def] cannot open '" + dir + "/missing.pb'"));
  EXPECT_THAT(error_of([&] { read_graph_def_in_arena(dir); }),
              HasSubstr("[read_graph_def] '" + dir + "' is a directory, not a GraphDef file"));
}

}  // namespace
}  // namespace tapeflow
