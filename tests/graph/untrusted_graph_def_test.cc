// What an untrusted GraphDef can make tapeflow do (docs/security.md): a constant whose declared
// shape is huge but whose values are one float_val is refused against max_tensor_bytes() before
// its buffer is allocated, and nothing the import adds reads or writes files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/checked_size.h"
#include "graph/graph_def.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

TEST(UntrustedGraphDefTest, HugeConstantsAreRefusedBeforeAllocating) {
  // 2^40 doubles (8 TiB) from a few bytes of text: the limit must be checked before the buffer
  // is allocated and filled (not left to operator new, which may well say yes).
  const GraphDef def = graph_def_from_text(R"pb(
    node { name: "big" op: "Const" attr { key: "dtype" value { type: DT_DOUBLE } }
      attr { key: "value" value { tensor { dtype: DT_DOUBLE
        tensor_shape { dim { size: 1048576 } dim { size: 1048576 } } double_val: 1 } } } })pb");
  const int64_t old = max_tensor_bytes();
  set_max_tensor_bytes(int64_t{1} << 30);
  const std::string msg = error_of<ResourceExhaustedError>([&] { graph_from_graph_def(def); });
  set_max_tensor_bytes(old);
  EXPECT_THAT(msg, HasSubstr("big"));
  EXPECT_THAT(msg, HasSubstr("a float64 tensor of shape [1048576,1048576] needs 8796093022208 bytes, over the "
                             "limit of 1073741824 bytes"));
}

TEST(UntrustedGraphDefTest, NoImportedOpTouchesFiles) {
  // Every op a GraphDef can name is a registered tapeflow op; none of them is file I/O (the
  // TensorFlow ops that are: ReadFile, WriteFile, Save, Restore, MatchingFiles, ... are unknown).
  for (const char* op : {"ReadFile", "WriteFile", "Save", "SaveV2", "Restore", "RestoreV2", "MatchingFiles",
                         "ImmutableConst", "PyFunc"}) {
    GraphDef def;
    proto::NodeDef* node = def.add_node();
    node->set_name("n");
    node->set_op(op);
    EXPECT_THAT(error_of<Error>([&] { graph_from_graph_def(def); }), HasSubstr(op)) << op;
  }
}

}  // namespace
}  // namespace tapeflow
