// TensorFlow 1's TensorArrays in a GraphDef (Note [TensorArrays in a GraphDef]): the loop
// dynamic_rnn builds (unstack the inputs, read one per step, write one output per step, stack
// them), written as TensorFlow 1.15 prints it, imports and runs; what cannot be read is a typed
// error naming the node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph_def.h"
#include "graph/graph_def_tensor_arrays.h"
#include "tapeflow.h"
#include "tests/graph/tf1_graph_text.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace tf1_text;  // NOLINT: the text format's pieces

// n rows of 3 floats.
Tensor rows(const std::vector<float>& v, int64_t n) { return Tensor(v, Shape{n, 3}); }

std::string attr_type(const std::string& key, const std::string& dtype) {
  return absl::StrCat("attr { key: \"", key, "\" value { type: ", dtype, " } }");
}
std::string int_vector_const(const std::string& name, int v) {
  return node(name, "Const", {},
              absl::StrCat("attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
                           "dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: ", v, " } } }"));
}
// TensorFlow's shape(t)[0]: Shape and StridedSlice under `scope`.
std::string rows_of(const std::string& scope, const std::string& t) {
  return node(scope + "/Shape", "Shape", {t}, type_attr("DT_FLOAT") + " " + attr_type("out_type", "DT_INT32")) +
         int_vector_const(scope + "/strided_slice/stack", 0) + int_vector_const(scope + "/strided_slice/stack_1", 1) +
         int_vector_const(scope + "/strided_slice/stack_2", 1) +
         node(scope + "/strided_slice", "StridedSlice",
              {scope + "/Shape", scope + "/strided_slice/stack", scope + "/strided_slice/stack_1", scope + "/strided_slice/stack_2"},
              "attr { key: \"Index\" value { type: DT_INT32 } } " + type_attr("DT_INT32") +
                  " attr { key: \"begin_mask\" value { i: 0 } } attr { key: \"ellipsis_mask\" value { i: 0 } }"
                  " attr { key: \"end_mask\" value { i: 0 } } attr { key: \"new_axis_mask\" value { i: 0 } }"
                  " attr { key: \"shrink_axis_mask\" value { i: 1 } }");
}
std::string range(const std::string& scope, const std::string& limit) {
  return int_const(scope + "/range/start", 0) + int_const(scope + "/range/delta", 1) +
         node(scope + "/range", "Range", {scope + "/range/start", limit, scope + "/range/delta"},
              attr_type("Tidx", "DT_INT32"));
}
std::string tensor_array(const std::string& name, const std::string& size, const std::string& element_shape,
                         bool dynamic = false) {
  return node(name, "TensorArrayV3", {size},
              absl::StrCat(attr_type("dtype", "DT_FLOAT"), " attr { key: \"element_shape\" value { shape { ", element_shape,
                           " } } } attr { key: \"dynamic_size\" value { b: ", dynamic ? "true" : "false", " } }"
                           " attr { key: \"clear_after_read\" value { b: true } }"
                           " attr { key: \"identical_element_shapes\" value { b: true } }"
                           " attr { key: \"tensor_array_name\" value { s: \"\" } }"));
}

// x: [T, 3], T known when it runs. The loop of dynamic_rnn over a running sum:
//   inputs = TensorArray(size=T, element_shape=[3]).unstack(x)
//   outputs = TensorArray(size=T, element_shape=<out_shape>), or (size=0, dynamic_size=True)
//   t, acc, outputs = while t < T: acc += inputs.read(t); outputs = outputs.write(t, acc); t += 1
//   y = outputs.stack()
std::string running_sum_graph(const std::string& out_shape = "dim { size: 3 }", bool dynamic = false) {
  const std::string frame = "rnn/while/while_context";
  return absl::StrCat(
      node("x", "Placeholder", {},
           "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { dim { size: -1 } dim "
           "{ size: 3 } } } }"),
      rows_of("rnn", "x"), tensor_array("rnn/TensorArray", "rnn/strided_slice", "dim { size: 3 }"),
      int_const("rnn/empty", 0), tensor_array("rnn/TensorArray_1", dynamic ? "rnn/empty" : "rnn/strided_slice", out_shape, dynamic),
      rows_of("rnn/TensorArrayUnstack", "x"), range("rnn/TensorArrayUnstack", "rnn/TensorArrayUnstack/strided_slice"),
      node("rnn/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3", "TensorArrayScatterV3",
           {"rnn/TensorArray", "rnn/TensorArrayUnstack/range", "x", "rnn/TensorArray:1"},
           type_attr("DT_FLOAT") + " attr { key: \"_class\" value { list { s: \"loc:@x\" } } }"),
      int_const("rnn/time", 0),
      node("rnn/zeros", "Const", {},
           "attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"value\" value { tensor { dtype: DT_FLOAT "
           "tensor_shape { dim { size: 3 } } float_val: 0 } } }"),
      loop_var("rnn/while", "", "rnn/time", "DT_INT32"), loop_var("rnn/while", "_1", "rnn/zeros", "DT_FLOAT"),
      loop_var("rnn/while", "_2", "rnn/TensorArray_1:1", "DT_FLOAT"),
      enter("rnn/while/Less/Enter", "rnn/strided_slice", "DT_INT32", frame, true),
      node("rnn/while/Less", "Less", {"rnn/while/Merge", "rnn/while/Less/Enter"}, type_attr("DT_INT32")),
      node("rnn/while/LoopCond", "LoopCond", {"rnn/while/Less"}),
      enter("rnn/while/TensorArrayReadV3/Enter", "rnn/TensorArray", "DT_RESOURCE", frame, true),
      enter("rnn/while/TensorArrayReadV3/Enter_1", "rnn/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3",
            "DT_FLOAT", frame, true),
      node("rnn/while/TensorArrayReadV3", "TensorArrayReadV3",
           {"rnn/while/TensorArrayReadV3/Enter", "rnn/while/Identity", "rnn/while/TensorArrayReadV3/Enter_1"},
           attr_type("dtype", "DT_FLOAT")),
      node("rnn/while/add", "AddV2", {"rnn/while/Identity_1", "rnn/while/TensorArrayReadV3"}, type_attr("DT_FLOAT")),
      enter("rnn/while/TensorArrayWrite/TensorArrayWriteV3/Enter", "rnn/TensorArray_1", "DT_RESOURCE", frame, true),
      node("rnn/while/TensorArrayWrite/TensorArrayWriteV3", "TensorArrayWriteV3",
           {"rnn/while/TensorArrayWrite/TensorArrayWriteV3/Enter", "rnn/while/Identity", "rnn/while/add",
            "rnn/while/Identity_2"},
           type_attr("DT_FLOAT") + " attr { key: \"_class\" value { list { s: \"loc:@rnn/while/add\" } } }"),
      int_const("rnn/while/add_1/y", 1, "rnn/while/Identity"),
      node("rnn/while/add_1", "AddV2", {"rnn/while/Identity", "rnn/while/add_1/y"}, type_attr("DT_INT32")),
      next_iteration("rnn/while", "", "rnn/while/add_1", "DT_INT32"),
      next_iteration("rnn/while", "_1", "rnn/while/add", "DT_FLOAT"),
      next_iteration("rnn/while", "_2", "rnn/while/TensorArrayWrite/TensorArrayWriteV3", "DT_FLOAT"),
      node("rnn/TensorArrayStack/TensorArraySizeV3", "TensorArraySizeV3", {"rnn/TensorArray_1", "rnn/while/Exit_2"},
           "attr { key: \"_class\" value { list { s: \"loc:@rnn/TensorArray_1\" } } }"),
      range("rnn/TensorArrayStack", "rnn/TensorArrayStack/TensorArraySizeV3"),
      node("rnn/TensorArrayStack/TensorArrayGatherV3", "TensorArrayGatherV3",
           {"rnn/TensorArray_1", "rnn/TensorArrayStack/range", "rnn/while/Exit_2"},
           attr_type("dtype", "DT_FLOAT") + " attr { key: \"element_shape\" value { shape { dim { size: 3 } } } }"),
      node("y", "Identity", {"rnn/TensorArrayStack/TensorArrayGatherV3"}, type_attr("DT_FLOAT")),
      node("steps", "TensorArraySizeV3", {"rnn/TensorArray_1", "rnn/while/Exit_2"}),
      "versions { producer: 134 }\n");
}

TEST(GraphDefTensorArraysTest, DynamicRnnsLoopOverATensorArrayImportsAndRuns) {
  const Graph g = graph_from_graph_def(graph_def_from_text(running_sum_graph()));
  EXPECT_EQ(g.get_operation_by_name("rnn/while").type(), "While");
  EXPECT_EQ(g.get_operation_by_name("rnn/TensorArray").type(), "TensorArrayBuffer");
  EXPECT_EQ(g.get_operation_by_name("rnn/TensorArrayStack/TensorArrayGatherV3").type(), "Identity");  // stack()
  // The Ranges of unstack and stack (limits known only when it runs) are gone with what only they read.
  EXPECT_THAT(error_of([&] { g.get_operation_by_name("rnn/TensorArrayStack/range"); }), HasSubstr("rnn/TensorArrayStack/range"));
  EXPECT_THAT(error_of([&] { g.get_operation_by_name("rnn/TensorArrayUnstack/range"); }),
              HasSubstr("rnn/TensorArrayUnstack/range"));
  EXPECT_EQ(g.get_operation_by_name("rnn/TensorArrayUnstack/TensorArrayScatter/TensorArrayScatterV3").type(),
            "TensorArrayBufferUnstack");
  const Tensor y = g.get_tensor_by_name("y:0");
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(y.shape().rank(), 2);
  Session sess(g);
  const Tensor x = g.get_tensor_by_name("x:0");
  const std::vector<Tensor> out =
      sess.run({y, g.get_tensor_by_name("steps:0")}, {{x, rows({1.f, 2.f, 3.f, 10.f, 20.f, 30.f, 100.f, 200.f, 300.f, 5.f, 5.f, 5.f}, 4)}});
  EXPECT_EQ(out[0].shape(), (Shape{4, 3}));
  EXPECT_EQ(out[0].to_vector<float>(),
            (std::vector<float>{1, 2, 3, 11, 22, 33, 111, 222, 333, 116, 227, 338}));
  EXPECT_EQ(out[1].to_vector<int32_t>(), std::vector<int32_t>{4});
  // Another length in the same graph: the buffers take the size they are made with.
  EXPECT_EQ(sess.run(y, {{x, rows({1.f, 1.f, 1.f, 2.f, 2.f, 2.f}, 2)}}).to_vector<float>(),
            (std::vector<float>{1, 1, 1, 3, 3, 3}));
  // The graph writes and reads back (tapeflow's TensorArrayBuffer ops inside TensorFlow 2's While).
  const Graph back = graph_from_graph_def(to_graph_def(g));
  Session again(back);
  EXPECT_EQ(again.run(back.get_tensor_by_name("y:0"), {{back.get_tensor_by_name("x:0"), rows({1.f, 1.f, 1.f, 2.f, 2.f, 2.f}, 2)}})
                .to_vector<float>(),
            (std::vector<float>{1, 1, 1, 3, 3, 3}));
}

// An element shape with unknown dims: a new buffer takes the first write's.
TEST(GraphDefTensorArraysTest, UnknownElementDimsTakeTheFirstWritesDims) {
  const Graph g = graph_from_graph_def(graph_def_from_text(running_sum_graph("dim { size: -1 }")));
  Session sess(g);
  EXPECT_EQ(sess.run(g.get_tensor_by_name("y:0"), {{g.get_tensor_by_name("x:0"), rows({1.f, 2.f, 3.f, 1.f, 1.f, 1.f}, 2)}})
                .to_vector<float>(),
            (std::vector<float>{1, 2, 3, 2, 3, 4}));
}

// A dynamic_size array made empty grows with each write (dynamic_rnn's outputs when the length is
// not known up front).
TEST(GraphDefTensorArraysTest, ADynamicSizeArrayGrowsAsItIsWritten) {
  const Graph g = graph_from_graph_def(graph_def_from_text(running_sum_graph("dim { size: 3 }", true)));
  Session sess(g);
  const std::vector<Tensor> out = sess.run({g.get_tensor_by_name("y:0"), g.get_tensor_by_name("steps:0")},
                                           {{g.get_tensor_by_name("x:0"), rows({1.f, 2.f, 3.f, 1.f, 1.f, 1.f, 2.f, 2.f, 2.f}, 3)}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 2, 3, 4, 4, 5, 6}));
  EXPECT_EQ(out[1].to_vector<int32_t>(), std::vector<int32_t>{3});
}

// tf.cond(p, lambda: ta.write(0, 1.), lambda: ta.write(0, 2.)).read(0): the flow and the handle
// go through the cond's Switches; the cond becomes an If over the buffer.
TEST(GraphDefTensorArraysTest, AWriteInsideATensorFlow1CondIsReadThroughTheIf) {
  const std::string text = absl::StrCat(
      node("p", "Placeholder", {}, "attr { key: \"dtype\" value { type: DT_BOOL } } attr { key: \"shape\" value { shape { } } }"),
      int_const("size", 2), tensor_array("ta", "size", ""), cond_head("cond", "p"),
      switch_of("cond/Switch_1", "ta:1", "cond/pred_id", "DT_FLOAT"),
      switch_of("cond/Switch_2", "ta", "cond/pred_id", "DT_RESOURCE"),
      int_const("cond/index_t", 0, "cond/switch_t"), float_const("cond/value_t", 1.f, "cond/switch_t"),
      node("cond/TensorArrayWriteV3", "TensorArrayWriteV3", {"cond/Switch_2:1", "cond/index_t", "cond/value_t", "cond/Switch_1:1"},
           type_attr("DT_FLOAT")),
      int_const("cond/index_f", 0, "cond/switch_f"), float_const("cond/value_f", 2.f, "cond/switch_f"),
      node("cond/TensorArrayWriteV3_1", "TensorArrayWriteV3", {"cond/Switch_2", "cond/index_f", "cond/value_f", "cond/Switch_1"},
           type_attr("DT_FLOAT")),
      merge("cond/Merge", "cond/TensorArrayWriteV3_1", "cond/TensorArrayWriteV3", "DT_FLOAT"), int_const("zero", 0),
      node("y", "TensorArrayReadV3", {"ta", "zero", "cond/Merge"}, attr_type("dtype", "DT_FLOAT")),
      "versions { producer: 134 }\n");
  const Graph g = graph_from_graph_def(graph_def_from_text(text));
  EXPECT_EQ(g.get_operation_by_name("cond").type(), "If");
  Session sess(g);
  const Tensor p = g.get_tensor_by_name("p:0"), y = g.get_tensor_by_name("y:0");
  EXPECT_EQ(sess.run(y, {{p, Tensor(true)}}).to_vector<float>(), std::vector<float>{1.f});
  EXPECT_EQ(sess.run(y, {{p, Tensor(false)}}).to_vector<float>(), std::vector<float>{2.f});
}

// The same running sum as TensorFlow 2 writes it (a tf.function with tf.TensorArray, frozen):
// TensorLists (DT_VARIANT) carried by a StatelessWhile, read and written in its body function.
// push_back: the outputs list starts empty (EmptyTensorList) and the body appends (PushBack).
std::string tensor_list_graph(const std::string& element_shape_const = "tensor_shape { dim { size: 1 } } int_val: 3",
                              bool push_back = false) {
  const std::string shape_const = absl::StrCat(
      R"pb(attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 )pb",
      element_shape_const, " } } }");
  const std::string list_attrs =
      R"pb(attr { key: "element_dtype" value { type: DT_FLOAT } } attr { key: "shape_type" value { type: DT_INT32 } })pb";
  return absl::StrCat(
      R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
    node { name: "n" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "shape" value { shape { } } } }
    node { name: "element_shape" op: "Const" )pb", shape_const, R"pb( }
    node { name: "zero" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
    node { name: "max" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: -1 } } } }
    node { name: "acc0" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 0 } } } }
    node { name: "inputs" op: "TensorListFromTensor" input: "x" input: "element_shape" )pb", list_attrs, R"pb( }
    node { name: "outputs" op: ")pb", push_back ? "EmptyTensorList" : "TensorListReserve",
      R"pb(" input: "element_shape" input: ")pb", push_back ? "max" : "n", R"pb(" )pb", list_attrs, R"pb( }
    node { name: "while" op: "StatelessWhile" input: "zero" input: "max" input: "zero" input: "n" input: "acc0"
           input: "inputs" input: "outputs"
           attr { key: "T" value { list { type: DT_INT32 type: DT_INT32 type: DT_INT32 type: DT_INT32 type: DT_FLOAT
                                          type: DT_VARIANT type: DT_VARIANT } } }
           attr { key: "body" value { func { name: "while_body_7" } } }
           attr { key: "cond" value { func { name: "while_cond_6" } } }
           attr { key: "output_shapes" value { list { shape { } shape { } shape { } shape { } shape { dim { size: 3 } }
                                                      shape { } shape { } } } }
           attr { key: "parallel_iterations" value { i: 10 } } }
    node { name: "y" op: "TensorListStack" input: "while:6" input: "element_shape"
           attr { key: "element_dtype" value { type: DT_FLOAT } } attr { key: "num_elements" value { i: -1 } } }
    node { name: "steps" op: "TensorListLength" input: "while:6" }
    library {
      function {
        signature { name: "while_cond_6"
          input_arg { name: "loop_counter" type: DT_INT32 } input_arg { name: "maximum_iterations" type: DT_INT32 }
          input_arg { name: "time" type: DT_INT32 } input_arg { name: "n" type: DT_INT32 } input_arg { name: "acc" type: DT_FLOAT }
          input_arg { name: "inputs" type: DT_VARIANT } input_arg { name: "outputs" type: DT_VARIANT }
          output_arg { name: "identity" type: DT_BOOL } }
        node_def { name: "Less" op: "Less" input: "time" input: "n" attr { key: "T" value { type: DT_INT32 } } }
        node_def { name: "Identity" op: "Identity" input: "Less:z:0" attr { key: "T" value { type: DT_BOOL } } }
        ret { key: "identity" value: "Identity:output:0" } }
      function {
        signature { name: "while_body_7"
          input_arg { name: "loop_counter" type: DT_INT32 } input_arg { name: "maximum_iterations" type: DT_INT32 }
          input_arg { name: "time" type: DT_INT32 } input_arg { name: "n" type: DT_INT32 } input_arg { name: "acc" type: DT_FLOAT }
          input_arg { name: "inputs" type: DT_VARIANT } input_arg { name: "outputs" type: DT_VARIANT }
          output_arg { name: "add" type: DT_INT32 } output_arg { name: "maximum_iterations_out" type: DT_INT32 }
          output_arg { name: "add_1" type: DT_INT32 } output_arg { name: "n_out" type: DT_INT32 }
          output_arg { name: "add_2" type: DT_FLOAT } output_arg { name: "inputs_out" type: DT_VARIANT }
          output_arg { name: "identity" type: DT_VARIANT } }
        node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
                   attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
        node_def { name: "element_shape" op: "Const" )pb", shape_const, R"pb( }
        node_def { name: "get" op: "TensorListGetItem" input: "inputs" input: "time" input: "element_shape:output:0"
                   attr { key: "element_dtype" value { type: DT_FLOAT } } }
        node_def { name: "sum" op: "AddV2" input: "acc" input: "get:item:0" attr { key: "T" value { type: DT_FLOAT } } }
        )pb", push_back ? R"pb(node_def { name: "set" op: "TensorListPushBack" input: "outputs" input: "sum:z:0"
                   attr { key: "element_dtype" value { type: DT_FLOAT } } })pb"
                        : R"pb(node_def { name: "set" op: "TensorListSetItem" input: "outputs" input: "time" input: "sum:z:0"
                   attr { key: "element_dtype" value { type: DT_FLOAT } } })pb", R"pb(
        node_def { name: "next_out" op: "Identity" input: "set:output_handle:0" attr { key: "T" value { type: DT_VARIANT } } }
        node_def { name: "count" op: "AddV2" input: "loop_counter" input: "one:output:0" attr { key: "T" value { type: DT_INT32 } } }
        node_def { name: "step" op: "AddV2" input: "time" input: "one:output:0" attr { key: "T" value { type: DT_INT32 } } }
        ret { key: "add" value: "count:z:0" } ret { key: "maximum_iterations_out" value: "maximum_iterations" }
        ret { key: "add_1" value: "step:z:0" } ret { key: "n_out" value: "n" } ret { key: "add_2" value: "sum:z:0" }
        ret { key: "inputs_out" value: "inputs" } ret { key: "identity" value: "next_out:output:0" } }
    }
    versions { producer: 1286 min_consumer: 12 })pb");
}

TEST(GraphDefTensorArraysTest, TensorFlow2sTensorListsInAWhileImportAndRun) {
  const Graph g = graph_from_graph_def(graph_def_from_text(tensor_list_graph()));
  EXPECT_EQ(g.get_operation_by_name("outputs").type(), "TensorArrayBuffer");
  EXPECT_EQ(g.get_operation_by_name("y").type(), "Identity");  // TensorListStack: the buffer
  Session sess(g);
  const Tensor y = sess.run(g.get_tensor_by_name("y:0"), {{g.get_tensor_by_name("x:0"), rows({1.f, 2.f, 3.f, 10.f, 20.f, 30.f, 5.f, 5.f, 5.f}, 3)},
                                                          {g.get_tensor_by_name("n:0"), Tensor(int32_t{3})}});
  EXPECT_EQ(y.shape(), (Shape{3, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 11, 22, 33, 16, 27, 38}));
  // Written and read back: the While's functions as they were read, the lists as buffers.
  const Graph back = graph_from_graph_def(to_graph_def(g));
  Session again(back);
  EXPECT_EQ(again.run(back.get_tensor_by_name("y:0"), {{back.get_tensor_by_name("x:0"), rows({1.f, 1.f, 1.f, 2.f, 2.f, 2.f}, 2)},
                                                       {back.get_tensor_by_name("n:0"), Tensor(int32_t{2})}})
                .to_vector<float>(),
            (std::vector<float>{1, 1, 1, 3, 3, 3}));
  // The element_shape as TensorFlow writes larger constants (tensor_content bytes): the same.
  const Graph content = graph_from_graph_def(graph_def_from_text(tensor_list_graph(R"pb(tensor_shape { dim { size: 1 } } tensor_content: "\003\000\000\000")pb")));
  Session sess3(content);
  EXPECT_EQ(sess3.run(content.get_tensor_by_name("y:0"), {{content.get_tensor_by_name("x:0"), rows({1.f, 2.f, 3.f}, 1)},
                                                          {content.get_tensor_by_name("n:0"), Tensor(int32_t{1})}})
                .to_vector<float>(),
            (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(content.get_operation_by_name("outputs").output(0).shape(), (Shape{-1, 3}));
  // Appended to an empty list instead: the same values, and the list's length.
  const Graph appended = graph_from_graph_def(graph_def_from_text(tensor_list_graph("tensor_shape { dim { size: 1 } } int_val: 3", true)));
  Session sess2(appended);
  const std::vector<Tensor> out = sess2.run({appended.get_tensor_by_name("y:0"), appended.get_tensor_by_name("steps:0")},
                                            {{appended.get_tensor_by_name("x:0"), rows({1.f, 2.f, 3.f, 1.f, 1.f, 1.f}, 2)},
                                             {appended.get_tensor_by_name("n:0"), Tensor(int32_t{2})}});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 2, 3, 4}));
  EXPECT_EQ(out[1].to_vector<int32_t>(), std::vector<int32_t>{2});
  // A float element_shape, and a control input ahead of the data ones: typed errors, no crash.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                graph_from_graph_def(graph_def_from_text(replaced(tensor_list_graph(), "dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 3",
                                                                  "dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 3")));
              }),
              HasSubstr("the list's element_shape must be int32 or int64"));
  EXPECT_THAT(error_of<Error>([&] {
                graph_from_graph_def(graph_def_from_text(replaced(tensor_list_graph(), "input: \"element_shape\" input: \"n\"",
                                                                  "input: \"^zero\" input: \"element_shape\" input: \"n\"")));
              }),
              HasSubstr("follows a control input"));
  // A list whose element shape has no rank is refused naming the node.
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(tensor_list_graph("tensor_shape { } int_val: -1"))); }),
              HasSubstr("node 'outputs' (TensorListReserve): the list's element_shape has no rank"));
  // A hostile element_shape (one value standing for 2^40 dims) is refused, not expanded.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                graph_from_graph_def(graph_def_from_text(tensor_list_graph("tensor_shape { dim { size: 1099511627776 } } int_val: 3")));
              }),
              HasSubstr("the list's element_shape has 1099511627776 dims; tapeflow takes at most 32"));
}

// Inside a loop body, a list argument that only a nested While takes: the While's T entry takes
// the dtype of the buffer the argument holds, its output_shapes entry becomes unknown.
TEST(GraphDefTensorArraysTest, AListArgumentOnlyANestedWhileTakesIsTypedToo) {
  const GraphDef def = graph_def_from_text(R"pb(
    node { name: "arg_0" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } } }
    node { name: "inner" op: "StatelessWhile" input: "arg_0"
           attr { key: "T" value { list { type: DT_VARIANT } } }
           attr { key: "output_shapes" value { list { shape { } } } }
           attr { key: "body" value { func { name: "b" } } } attr { key: "cond" value { func { name: "c" } } } })pb");
  const absl::StatusOr<std::optional<GraphDef>> out = graph_def_internal::rewrite_tensor_lists(def);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->has_value());
  const proto::NodeDef& inner = (**out).node(1);
  EXPECT_EQ(inner.attr().at("T").list().type(0), proto::DT_FLOAT);
  EXPECT_TRUE(inner.attr().at("output_shapes").list().shape(0).unknown_rank());
}

TEST(GraphDefTensorArraysTest, WhatCannotBeReadIsATypedErrorNamingTheNode) {
  const std::string text = running_sum_graph();
  const std::string unknown_rank = replaced(text, "value { shape { dim { size: 3 } } } } attr { key: \"dynamic_size\"",
                                            "value { shape { unknown_rank: true } } } attr { key: \"dynamic_size\"");
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(unknown_rank)); }),
              HasSubstr("node 'rnn/TensorArray' (TensorArrayV3): the TensorArray's element_shape has no rank"));
  // Beside an op type tapeflow lacks and no rewrite reads, the import names that one (its error
  // lists every unknown op type), not the rewrite's refusal; the same for TensorFlow 2's lists.
  const std::string mystery = node("mystery", "MysteryOp", {"x"}, type_attr("DT_FLOAT"));
  for (const std::string& def : {absl::StrCat(unknown_rank, mystery),
                                 absl::StrCat(tensor_list_graph("tensor_shape { } int_val: -1"), mystery)}) {
    const std::string error = error_of<Error>([&] { graph_from_graph_def(graph_def_from_text(def)); });
    EXPECT_THAT(error, AllOf(HasSubstr("MysteryOp"), HasSubstr("mystery"), Not(HasSubstr("has no rank"))));
  }
  // A failed import changes nothing in the graph it imports into.
  Graph target;
  {
    auto scope = target.as_default();
    placeholder(DType::kFloat32, {}, "already_here");
  }
  EXPECT_THAT(error_of<UnimplementedError>([&] { import_graph_def(target, graph_def_from_text(unknown_rank)); }),
              HasSubstr("the TensorArray's element_shape has no rank"));
  EXPECT_EQ(target.num_nodes(), 1);
  // A handle read by something else than a TensorArray op or control flow.
  const std::string handle_read =
      absl::StrCat(text, node("odd", "Identity", {"rnn/TensorArray"}, type_attr("DT_RESOURCE")),
                   node("odd_reader", "ZerosLike", {"odd"}, type_attr("DT_RESOURCE")));
  EXPECT_THAT(error_of<UnimplementedError>([&] { graph_from_graph_def(graph_def_from_text(handle_read)); }),
              HasSubstr("node 'odd_reader' (ZerosLike): reads the handle of TensorArray 'rnn/TensorArray'"));
  // A read of one array's handle with another's flow.
  const std::string mixed = replaced(text, "name: \"rnn/while/TensorArrayReadV3/Enter\" op: \"Enter\" input: \"rnn/TensorArray\"",
                                     "name: \"rnn/while/TensorArrayReadV3/Enter\" op: \"Enter\" input: \"rnn/TensorArray_1\"");
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { graph_from_graph_def(graph_def_from_text(mixed)); }),
              HasSubstr("node 'rnn/while/TensorArrayReadV3' (TensorArrayReadV3): reads the handle of TensorArray "
                        "'rnn/TensorArray_1' and the flow of 'rnn/TensorArray'"));
  // A stack() whose flow is a control input: no pattern, a typed error, no crash.
  const std::string control_flow =
      replaced(text, "input: \"rnn/TensorArrayStack/range\" input: \"rnn/while/Exit_2\"",
               "input: \"rnn/TensorArrayStack/range\" input: \"^rnn/while/Exit_2\"");
  EXPECT_THAT(error_of<Error>([&] { graph_from_graph_def(graph_def_from_text(control_flow)); }),
              HasSubstr("[import_graph_def] node 'rnn/TensorArrayStack/"));
  // A control input ahead of the data ones: the import's own error, no rewrite.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                graph_from_graph_def(graph_def_from_text(replaced(text, "input: \"rnn/TensorArray_1\" input: \"rnn/TensorArrayStack/range\"",
                                                                  "input: \"^x\" input: \"rnn/TensorArray_1\" input: \"rnn/TensorArrayStack/range\"")));
              }),
              HasSubstr("follows a control input"));
  // A read past the end fails the run, naming the op and the sizes.
  const Graph g = graph_from_graph_def(graph_def_from_text(replaced(
      text, "input: \"rnn/while/Identity\" input: \"rnn/while/TensorArrayReadV3/Enter_1\"",
      "input: \"rnn/while/add_1\" input: \"rnn/while/TensorArrayReadV3/Enter_1\"")));
  Session sess(g);
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                sess.run(g.get_tensor_by_name("y:0"), {{g.get_tensor_by_name("x:0"), rows({1.f, 2.f, 3.f}, 1)}});
              }),
              HasSubstr("index 1 is outside the TensorArray of size 1"));
}

}  // namespace
}  // namespace tapeflow
