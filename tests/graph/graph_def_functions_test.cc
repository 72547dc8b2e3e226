// A GraphDef's function library: parsed in text and binary (TensorFlow 2's FunctionDefs, full
// type annotations), its calls inlined at import (Note [Inlined function calls],
// graph/graph_def_functions.cc), and the calls that cannot be inlined refused with typed errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A function library as TensorFlow 2 writes it (a traced function's body, its signature, arg
// attrs, ret and control_ret) parses, in text as in binary. Its calls, by op type or through
// StatefulPartitionedCall, are inlined: the body under the caller's name, the caller an IdentityN
// of the results (Note [Inlined function calls]).
const char* const kAddOneLibrary = R"pb(
      library {
        function {
          signature {
            name: "add_one"
            input_arg { name: "x" type: DT_FLOAT }
            output_arg { name: "identity" type: DT_FLOAT }
            control_output: "add"
            is_stateful: true
          }
          node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
                     attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
          node_def { name: "add" op: "AddV2" input: "x" input: "one:output:0"
                     attr { key: "T" value { type: DT_FLOAT } }
                     attr { key: "_class" value { list { s: "loc:@one" s: "loc:@x" s: "loc:@elsewhere" } } } }
          ret { key: "identity" value: "add:z:0" }
          control_ret { key: "add" value: "add" }
          attr { key: "_input_shapes" value { list { shape { dim { size: 2 } } } } }
          arg_attr { key: 0 value { attr { key: "_user_specified_name" value { s: "x" } } } }
          resource_arg_unique_id { key: 0 value: 0 }
        }
      }
      versions { producer: 1286 min_consumer: 12 })pb";

TEST(GraphDefFunctionsTest, CallsOfLibraryFunctionsAreInlined) {
  const std::string text = std::string(R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } } } } }
      node { name: "called" op: "add_one" input: "x" }
      node { name: "partitioned" op: "StatefulPartitionedCall" input: "called" input: "^x"
             attr { key: "Tin" value { list { type: DT_FLOAT } } }
             attr { key: "Tout" value { list { type: DT_FLOAT } } }
             attr { key: "f" value { func { name: "add_one" } } } }
      node { name: "out" op: "Mul" input: "called" input: "partitioned:0" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "after" op: "NoOp" input: "^partitioned" })pb") + kAddOneLibrary;
  const GraphDef def = graph_def_from_text(text);
  ASSERT_EQ(def.library().function_size(), 1);
  EXPECT_EQ(def.library().function(0).ret().at("identity"), "add:z:0");
  const GraphDef again = graph_def_from_binary(graph_def_to_binary(def));
  EXPECT_EQ(graph_def_to_text(again), graph_def_to_text(def));
  EXPECT_THAT(graph_def_to_text(def), HasSubstr("arg_attr {"));

  Graph g = graph_from_graph_def(def);
  // The body under the caller's name; the caller an IdentityN that waits on the control_ret.
  EXPECT_EQ(g.get_operation_by_name("called/add").type(), "Add");
  EXPECT_EQ(g.get_operation_by_name("called/one").type(), "Const");
  const Operation called = g.get_operation_by_name("called");
  EXPECT_EQ(called.type(), "IdentityN");
  EXPECT_EQ(called.inputs()[0].name(), "called/add:0");
  ASSERT_EQ(called.control_inputs().size(), 1u);
  EXPECT_EQ(called.control_inputs()[0].name(), "called/add");
  // The caller's control input reaches the body nodes no body node feeds (here the Const).
  const Operation one = g.get_operation_by_name("partitioned/one");
  ASSERT_EQ(one.control_inputs().size(), 1u);
  EXPECT_EQ(one.control_inputs()[0].name(), "x");
  EXPECT_EQ(g.get_operation_by_name("partitioned/add").inputs()[0].name(), "called:0");
  EXPECT_EQ(g.get_operation_by_name("after").control_inputs()[0].name(), "partitioned");
  // Colocation with a body node or an argument names the inlined node or the caller's input.
  EXPECT_THAT(g.get_operation_by_name("partitioned/add").node().colocate_with(), ElementsAre("partitioned/one", "called"));

  Session sess(g);
  const std::vector<Tensor> got = sess.run({g.get_tensor_by_name("out:0"), g.get_tensor_by_name("partitioned:0")},
                                           {{g.get_tensor_by_name("x:0"), Tensor({1.f, 2.f})}});
  EXPECT_EQ(got[0].to_vector<float>(), (std::vector<float>{6.f, 12.f}));  // (x + 1) * (x + 2)
  EXPECT_EQ(got[1].to_vector<float>(), (std::vector<float>{3.f, 4.f}));
  // input_map and return elements name the caller's outputs as before inlining.
  Graph h;
  std::vector<ImportedElement> r;
  {
    auto scope = h.as_default();
    r = import_graph_def(def, {{"called:0", constant(Tensor({10.f, 20.f}))}}, {"partitioned:0", "called"});
  }
  EXPECT_EQ(std::get<Operation>(r[1]).name(), "import/called");
  // (x is still fed: "partitioned"'s control input on it now holds its body's Const.)
  EXPECT_EQ(Session(h).run(std::get<Tensor>(r[0]), {{h.get_tensor_by_name("import/x:0"), Tensor({0.f, 0.f})}}).to_vector<float>(),
            (std::vector<float>{11.f, 21.f}));
}

// A function of several results, polymorphic attrs ("$T", set by the call), a nested
// PartitionedCall, and "node:arg:k" names of ops with several output args (TopKV2's indices).
TEST(GraphDefFunctionsTest, InlinedFunctionsNestResolveAttrsAndNameOutputArgs) {
  const GraphDef def = graph_def_from_text(R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 3 } } } } }
      node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 3 } } } } }
      node { name: "both" op: "sum_and_top" input: "x" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
      library {
        function {
          signature {
            name: "sum_and_top"
            input_arg { name: "a" type_attr: "T" }
            input_arg { name: "b" type_attr: "T" }
            output_arg { name: "sum" type_attr: "T" }
            output_arg { name: "top_index" type: DT_INT32 }
            attr { name: "T" type: "type" }
          }
          node_def { name: "inner" op: "PartitionedCall" input: "a" input: "b"
                     attr { key: "Tin" value { list { type: DT_FLOAT type: DT_FLOAT } } }
                     attr { key: "Tout" value { list { type: DT_FLOAT } } }
                     attr { key: "f" value { func { name: "plus" attr { key: "T" value { type: DT_FLOAT } } } } } }
          node_def { name: "k" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                     attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
          node_def { name: "topk" op: "TopKV2" input: "inner:output:0" input: "k:output:0"
                     attr { key: "T" value { placeholder: "T" } } attr { key: "sorted" value { b: true } } }
          ret { key: "sum" value: "inner:output:0" }
          ret { key: "top_index" value: "topk:indices:0" }
        }
        function {
          signature {
            name: "plus"
            input_arg { name: "p" type_attr: "T" }
            input_arg { name: "q" type_attr: "T" }
            output_arg { name: "output" type_attr: "T" }
            attr { name: "T" type: "type" }
          }
          node_def { name: "add" op: "AddV2" input: "p" input: "q" attr { key: "T" value { placeholder: "T" } } }
          ret { key: "output" value: "add:z:0" }
        }
      })pb");
  Graph g = graph_from_graph_def(def);
  EXPECT_EQ(g.get_operation_by_name("both/inner/add").type(), "Add");
  EXPECT_EQ(g.get_operation_by_name("both/inner").type(), "IdentityN");
  EXPECT_EQ(g.get_operation_by_name("both/topk").inputs()[0].name(), "both/inner:0");
  EXPECT_EQ(g.get_operation_by_name("both").inputs()[1].name(), "both/topk:1");
  Session sess(g);
  const std::vector<Tensor> got = sess.run({g.get_tensor_by_name("both:0"), g.get_tensor_by_name("both:1")},
                                           {{g.get_tensor_by_name("x:0"), Tensor({1.f, 5.f, 2.f})},
                                            {g.get_tensor_by_name("y:0"), Tensor({1.f, 1.f, 9.f})}});
  EXPECT_EQ(got[0].to_vector<float>(), (std::vector<float>{2.f, 6.f, 11.f}));
  EXPECT_EQ(got[1].dtype(), DType::kInt32);
  EXPECT_EQ(got[1].to_vector<int32_t>(), (std::vector<int32_t>{2}));
}

// A body names the results of a function it calls by their names ("c:twice:0" is c's second
// result); a result that is an argument still waits on the caller's control inputs.
TEST(GraphDefFunctionsTest, InlinedCallsNameResultsAndKeepControlInputs) {
  const GraphDef def = graph_def_from_text(R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } } } } }
      node { name: "first" op: "NoOp" }
      node { name: "outer" op: "use_pair" input: "x" input: "^first" }
      library {
        function {
          signature { name: "pair" input_arg { name: "a" type: DT_FLOAT }
                      output_arg { name: "plus" type: DT_FLOAT } output_arg { name: "twice" type: DT_FLOAT } }
          node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
                     attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
          node_def { name: "p" op: "AddV2" input: "a" input: "one:output:0" attr { key: "T" value { type: DT_FLOAT } } }
          node_def { name: "t" op: "AddV2" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
          ret { key: "plus" value: "p:z:0" }
          ret { key: "twice" value: "t:z:0" }
        }
        function {
          signature { name: "use_pair" input_arg { name: "a" type: DT_FLOAT }
                      output_arg { name: "doubled" type: DT_FLOAT } output_arg { name: "same" type: DT_FLOAT } }
          node_def { name: "c" op: "pair" input: "a" }
          ret { key: "doubled" value: "c:twice:0" }
          ret { key: "same" value: "a" }
        }
      })pb");
  Graph g = graph_from_graph_def(def);
  EXPECT_EQ(g.get_operation_by_name("outer").inputs()[0].name(), "outer/c:1");
  EXPECT_EQ(g.get_operation_by_name("outer").inputs()[1].name(), "x:0");
  const std::vector<Operation> waits = g.get_operation_by_name("outer").control_inputs();
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].name(), "first");
  Session sess(g);
  const std::vector<Tensor> got = sess.run({g.get_tensor_by_name("outer:0"), g.get_tensor_by_name("outer:1")},
                                           {{g.get_tensor_by_name("x:0"), Tensor({1.f, 3.f})}});
  EXPECT_EQ(got[0].to_vector<float>(), (std::vector<float>{2.f, 6.f}));
  EXPECT_EQ(got[1].to_vector<float>(), (std::vector<float>{1.f, 3.f}));
  // An output arg name the called function does not have, or an index into a single result, is refused.
  for (const char* wrong : {"c:thrice:0", "c:twice:1"}) {
    GraphDef bad = def;
    (*bad.mutable_library()->mutable_function(1)->mutable_ret())["doubled"] = wrong;
    Graph h;
    EXPECT_THAT(error_of<InvalidArgumentError>([&] { import_graph_def(h, bad); }),
                HasSubstr(absl::StrCat("the body's input '", wrong, "' names no argument, node or output")));
  }
}

// A library of functions <name>0 ... <name>n, each calling the next `calls` times; the last
// returns its argument.
std::string chain_library(const std::string& name, int n, int calls) {
  auto signature = [&](int i) {
    return absl::StrCat("function { signature { name: \"", name, i, "\" input_arg { name: \"a\" type: DT_FLOAT } ",
                        "output_arg { name: \"r\" type: DT_FLOAT } } ");
  };
  std::string library = "library { ";
  for (int i = 0; i < n; ++i) {
    library += signature(i);
    for (int c = 0; c < calls; ++c)
      library += absl::StrCat("node_def { name: \"call", c, "\" op: \"", name, i + 1, "\" input: \"a\" } ");
    library += "ret { key: \"r\" value: \"call0:r:0\" } } ";
  }
  return library + signature(n) + "ret { key: \"r\" value: \"a\" } } }";
}

// Calls that cannot be inlined are typed errors naming the call, before the graph changes; control
// flow over functions stays an unknown op type, with a sentence saying why.
TEST(GraphDefFunctionsTest, CallsThatCannotBeInlinedAreErrors) {
  const std::string x = R"pb(node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
                                    attr { key: "shape" value { shape { dim { size: 2 } } } } })pb";
  Graph g;
  auto import_text = [&](const std::string& nodes, const std::string& library) {
    import_graph_def(g, graph_def_from_text(x + nodes + library));
  };
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import_text(R"pb(node { name: "c" op: "add_one" input: "x" input: "x" })pb", kAddOneLibrary); }),
              HasSubstr("node 'c' (add_one) calling function 'add_one': passes 2 input(s) to a function of 1 argument(s)"));
  EXPECT_THAT(error_of<NotFoundError>([&] {
                import_text(R"pb(node { name: "c" op: "PartitionedCall" input: "x"
                                        attr { key: "f" value { func { name: "absent" } } } })pb", kAddOneLibrary);
              }),
              HasSubstr("node 'c' (PartitionedCall) calls function 'absent', which the GraphDef's library does not define"));
  const std::string recursive = R"pb(
      library { function { signature { name: "loop" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "r" type: DT_FLOAT } }
                           node_def { name: "again" op: "loop" input: "a" } ret { key: "r" value: "again:r:0" } } })pb";
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import_text(R"pb(node { name: "c" op: "loop" input: "x" })pb", recursive); }),
              HasSubstr("function 'loop' calls itself"));
  const std::string list_arg = R"pb(
      library { function { signature { name: "many" input_arg { name: "a" type: DT_FLOAT number_attr: "N" }
                                       output_arg { name: "r" type: DT_FLOAT } }
                           ret { key: "r" value: "a" } } })pb";
  EXPECT_THAT(error_of<UnimplementedError>([&] { import_text(R"pb(node { name: "c" op: "many" input: "x" })pb", list_arg); }),
              HasSubstr("argument 'a' is a list of tensors"));
  // Twenty-one functions, each calling the next twice: 2^21 copies of the last, refused by
  // counting before any is built.
  EXPECT_THAT(error_of<ResourceExhaustedError>([&] { import_text(R"pb(node { name: "c" op: "f0" input: "x" })pb", chain_library("f", 21, 2)); }),
              HasSubstr("inlining the call 'c' of function 'f0' makes the graph larger than 1000000 nodes"));
  // Eleven levels of two calls reach the last function 2048 times: with a 1 MB Const in it, 2 GB.
  GraphDef heavy = graph_def_from_text(x + R"pb(node { name: "c" op: "h0" input: "x" })pb" + chain_library("h", 11, 2));
  proto::NodeDef& big = *heavy.mutable_library()->mutable_function(11)->add_node_def();
  big.set_name("big");
  big.set_op("Const");
  (*big.mutable_attr())["dtype"].set_type(proto::DT_FLOAT);
  proto::TensorProto& value = *(*big.mutable_attr())["value"].mutable_tensor();
  value.set_dtype(proto::DT_FLOAT);
  value.mutable_tensor_shape()->add_dim()->set_size(262144);
  value.set_tensor_content(std::string(1 << 20, '\0'));
  EXPECT_THAT(error_of<ResourceExhaustedError>([&] { import_graph_def(g, heavy); }),
              HasSubstr("makes the graph larger than 1000000 nodes or 1024 MiB"));
  // A call whose function is the caller's attr (a placeholder) is not inlined: it could name any.
  const std::string indirect = R"pb(
      library { function { signature { name: "apply" input_arg { name: "a" type: DT_FLOAT } output_arg { name: "r" type: DT_FLOAT }
                                       attr { name: "g" type: "func" } }
                           node_def { name: "inner" op: "PartitionedCall" input: "a" attr { key: "f" value { placeholder: "g" } } }
                           ret { key: "r" value: "inner:output:0" } } })pb";
  EXPECT_THAT(error_of<UnimplementedError>([&] {
                import_text(R"pb(node { name: "c" op: "apply" input: "x" attr { key: "g" value { func { name: "apply" } } } })pb",
                            indirect);
              }),
              HasSubstr("node 'inner' (PartitionedCall) calls the function its attr 'f' names through the placeholder 'g'"));
  // Seventy functions, each calling the next once: nested deeper than 64.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { import_text(R"pb(node { name: "c" op: "g0" input: "x" })pb", chain_library("g", 70, 1)); }),
              HasSubstr("function calls nest more than 64 deep"));
  const std::string message = error_of<NotFoundError>([&] {
    import_text(R"pb(node { name: "c" op: "For" input: "x" input: "x" input: "x" input: "x"
                            attr { key: "body" value { func { name: "add_one" } } } })pb", kAddOneLibrary);
  });
  EXPECT_THAT(message, HasSubstr("op types tapeflow does not have: For (node c); tapeflow runs a GraphDef's library "
                                 "functions through calls (PartitionedCall, StatefulPartitionedCall) and through If, "
                                 "While and Case, not through these"));
  EXPECT_EQ(g.num_nodes(), 0);
  // An unknown op beside an unrelated library does not get the sentence.
  EXPECT_THAT(error_of<NotFoundError>([&] { import_text(R"pb(node { name: "e" op: "ImageProjectiveTransformV3" input: "x" })pb", kAddOneLibrary); }),
              AllOf(HasSubstr("op types tapeflow does not have: ImageProjectiveTransformV3 (node e)"), Not(HasSubstr("inlines"))));
}

// TensorFlow 2 annotates some nodes with a full type (NodeDef field 7) and a function's resource
// arguments with the dtype and shape they hold (ArgDef fields 7 and 17). Such a GraphDef parses in
// text as in binary, keeps the annotations through both formats, and imports.
TEST(GraphDefFunctionsTest, FullTypeAnnotationsAndResourceArgumentsParseAndImport) {
  const std::string text = R"pb(
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } } } }
             experimental_type { type_id: TFT_PRODUCT
                                 args { type_id: TFT_TENSOR args { type_id: TFT_FLOAT } } } }
      node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
      library {
        function {
          signature {
            name: "read_v"
            input_arg { name: "v" type: DT_RESOURCE
                        handle_data { dtype: DT_FLOAT shape { dim { size: 2 } } }
                        experimental_full_type { type_id: TFT_PRODUCT
                                                 args { type_id: TFT_NAMED s: "v" } } }
            output_arg { name: "identity" type: DT_FLOAT }
          }
          node_def { name: "read" op: "ReadVariableOp" input: "v" attr { key: "dtype" value { type: DT_FLOAT } } }
          ret { key: "identity" value: "read:value:0" }
        }
      }
      versions { producer: 1286 min_consumer: 12 })pb";
  const GraphDef def = graph_def_from_text(text);
  const proto::FullTypeDef& type = def.node(0).experimental_type();
  EXPECT_EQ(type.type_id(), proto::TFT_PRODUCT);
  ASSERT_EQ(type.args_size(), 1);
  EXPECT_EQ(type.args(0).args(0).type_id(), proto::TFT_FLOAT);
  const proto::OpDef::ArgDef& v = def.library().function(0).signature().input_arg(0);
  ASSERT_EQ(v.handle_data_size(), 1);
  EXPECT_EQ(v.handle_data(0).dtype(), proto::DT_FLOAT);
  EXPECT_EQ(v.handle_data(0).shape().dim(0).size(), 2);
  EXPECT_EQ(v.experimental_full_type().args(0).s(), "v");
  const GraphDef again = graph_def_from_binary(graph_def_to_binary(def));
  EXPECT_EQ(graph_def_to_text(again), graph_def_to_text(def));
  EXPECT_THAT(graph_def_to_text(def), HasSubstr("type_id: TFT_FLOAT"));
  Graph g = graph_from_graph_def(def);
  Session sess(g);
  EXPECT_EQ(sess.run(g.get_tensor_by_name("y:0"), {{g.get_tensor_by_name("x:0"), Tensor({3.f, 4.f})}}).to_vector<float>(),
            (std::vector<float>{3.f, 4.f}));
  // A type name TensorFlow 2.13 does not define is protobuf's parse error, naming it.
  std::string unknown = text;
  unknown.replace(unknown.find("TFT_FLOAT"), 9, "TFT_FLOAT9");
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_def_from_text(unknown); }), HasSubstr("TFT_FLOAT9"));
}

}  // namespace
}  // namespace tapeflow
