// A user's story: a Keras LSTM layer (TensorFlow 2, frozen with convert_variables_to_constants_v2)
// over inputs of unknown batch size. Its GraphDef is written by hand the way TensorFlow 2.x
// writes it: the initial states are Fill(Pack(batch, units), 0), the time-major inputs a
// TensorListFromTensor, the outputs a TensorListReserve, and the steps a StatelessWhile whose
// body function reads one list and writes the other. Imported, it must give what tapeflow's own
// LSTM cell gives, for each batch size fed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/graph/tf1_graph_text.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using namespace tf1_text;  // NOLINT: the text format's pieces

constexpr int kTime = 5, kFeatures = 3, kUnits = 4;

// Deterministic weights in [-0.5, 0.5].
std::vector<float> weights(int n, int seed) {
  std::vector<float> w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) w[static_cast<size_t>(i)] = 0.1f * static_cast<float>((i * 7 + seed) % 11 - 5);
  return w;
}

std::string float_const(const std::string& name, const std::vector<float>& v, const std::vector<int>& dims) {
  std::string shape, values;
  for (int d : dims) absl::StrAppend(&shape, "dim { size: ", d, " } ");
  for (float x : v) absl::StrAppend(&values, "float_val: ", x, " ");
  return node(name, "Const", {},
              absl::StrCat("attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"value\" value { tensor { "
                           "dtype: DT_FLOAT tensor_shape { ", shape, "} ", values, "} } }"));
}
std::string ints_const(const std::string& name, const std::vector<int>& v, bool scalar = false) {
  std::string values;
  for (int x : v) absl::StrAppend(&values, "int_val: ", x, " ");
  return node(name, "Const", {},
              absl::StrCat("attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
                           "dtype: DT_INT32 tensor_shape { ", scalar ? "" : absl::StrCat("dim { size: ", v.size(), " } "),
                           "} ", values, "} } }"));
}
// A node of a FunctionDef (node_def { ... }): the same fields as a graph node.
std::string fnode(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                  const std::string& attrs = "") {
  std::string n = node(name, op, inputs, attrs);
  return absl::StrCat("node_def", n.substr(4));
}
const char kFloat[] = "attr { key: \"T\" value { type: DT_FLOAT } }";
const char kInt[] = "attr { key: \"T\" value { type: DT_INT32 } }";
const char kList[] = "attr { key: \"element_dtype\" value { type: DT_FLOAT } } attr { key: \"shape_type\" value { type: DT_INT32 } }";
const char kElement[] = "attr { key: \"element_dtype\" value { type: DT_FLOAT } }";

std::string strided_slice(const std::string& name, const std::string& input, int shrink, const char* t = kInt) {
  return node(name, "StridedSlice", {input, name + "/stack", name + "/stack_1", name + "/stack_2"},
              absl::StrCat("attr { key: \"Index\" value { type: DT_INT32 } } ", t,
                           " attr { key: \"begin_mask\" value { i: 0 } } attr { key: \"ellipsis_mask\" value { i: 0 } }"
                           " attr { key: \"end_mask\" value { i: 0 } } attr { key: \"new_axis_mask\" value { i: 0 } }"
                           " attr { key: \"shrink_axis_mask\" value { i: ", shrink, " } }"));
}
std::string initial_state(const std::string& name) {
  return ints_const(name + "/packed/1", {kUnits}, true) +
         node(name + "/packed", "Pack", {"lstm/strided_slice", name + "/packed/1"},
              absl::StrCat("attr { key: \"N\" value { i: 2 } } ", kInt, " attr { key: \"axis\" value { i: 0 } }")) +
         float_const(name + "/Const", {0.f}, {}) +
         node(name, "Fill", {name + "/packed", name + "/Const"},
              absl::StrCat(kFloat, " attr { key: \"index_type\" value { type: DT_INT32 } }"));
}

// The loop's variables, as while_v2 orders them: counter, maximum_iterations, time, the output
// list, h, c, then what the body reads from outside (steps, the input list, the weights).
const std::vector<std::string> kLoopTypes = {"DT_INT32", "DT_INT32", "DT_INT32",   "DT_VARIANT", "DT_FLOAT", "DT_FLOAT",
                                             "DT_INT32", "DT_VARIANT", "DT_FLOAT", "DT_FLOAT",   "DT_FLOAT"};
const std::vector<std::string> kArgs = {"lstm_while_loop_counter", "lstm_while_maximum_iterations", "placeholder",
                                        "placeholder_1", "placeholder_2", "placeholder_3",
                                        "lstm_strided_slice_1_0", "tensorarrayv2read_tensorlistgetitem_lstm_tensorarrayunstack_tensorlistfromtensor_0",
                                        "lstm_cell_matmul_lstm_kernel_0", "lstm_cell_matmul_1_lstm_recurrent_kernel_0",
                                        "lstm_cell_biasadd_lstm_bias_0"};

std::string signature(const std::string& name, const std::vector<std::string>& outputs, const std::vector<std::string>& output_types) {
  std::string s = absl::StrCat("signature { name: \"", name, "\" ");
  for (size_t i = 0; i < kArgs.size(); ++i) absl::StrAppend(&s, "input_arg { name: \"", kArgs[i], "\" type: ", kLoopTypes[i], " } ");
  for (size_t i = 0; i < outputs.size(); ++i) absl::StrAppend(&s, "output_arg { name: \"", outputs[i], "\" type: ", output_types[i], " } ");
  return s + "} ";
}

std::string keras_lstm_graph() {
  std::string outer = absl::StrCat(
      node("x", "Placeholder", {},
           absl::StrCat("attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"shape\" value { shape { dim { size: -1 } "
                        "dim { size: ", kTime, " } dim { size: ", kFeatures, " } } } }")),
      node("lstm/Shape", "Shape", {"x"}, absl::StrCat(kFloat, " attr { key: \"out_type\" value { type: DT_INT32 } }")),
      ints_const("lstm/strided_slice/stack", {0}), ints_const("lstm/strided_slice/stack_1", {1}),
      ints_const("lstm/strided_slice/stack_2", {1}), strided_slice("lstm/strided_slice", "lstm/Shape", 1),
      initial_state("lstm/zeros"), initial_state("lstm/zeros_1"),
      ints_const("lstm/transpose/perm", {1, 0, 2}),
      node("lstm/transpose", "Transpose", {"x", "lstm/transpose/perm"},
           absl::StrCat(kFloat, " attr { key: \"Tperm\" value { type: DT_INT32 } }")),
      node("lstm/Shape_1", "Shape", {"lstm/transpose"}, absl::StrCat(kFloat, " attr { key: \"out_type\" value { type: DT_INT32 } }")),
      ints_const("lstm/strided_slice_1/stack", {0}), ints_const("lstm/strided_slice_1/stack_1", {1}),
      ints_const("lstm/strided_slice_1/stack_2", {1}), strided_slice("lstm/strided_slice_1", "lstm/Shape_1", 1),
      ints_const("lstm/TensorArrayV2/element_shape", {-1, kUnits}),
      node("lstm/TensorArrayV2_1", "TensorListReserve", {"lstm/TensorArrayV2/element_shape", "lstm/strided_slice_1"}, kList),
      ints_const("lstm/TensorArrayUnstack/Const", {-1, kFeatures}),
      node("lstm/TensorArrayUnstack/TensorListFromTensor", "TensorListFromTensor",
           {"lstm/transpose", "lstm/TensorArrayUnstack/Const"}, kList),
      ints_const("lstm/time", {0}, true), ints_const("lstm/while/maximum_iterations", {kTime}, true),
      ints_const("lstm/while/loop_counter", {0}, true),
      float_const("lstm/lstm_cell/kernel", weights(kFeatures * 4 * kUnits, 1), {kFeatures, 4 * kUnits}),
      float_const("lstm/lstm_cell/recurrent_kernel", weights(kUnits * 4 * kUnits, 2), {kUnits, 4 * kUnits}),
      float_const("lstm/lstm_cell/bias", weights(4 * kUnits, 3), {4 * kUnits}));
  std::string types, shapes;
  for (const std::string& t : kLoopTypes) absl::StrAppend(&types, "type: ", t, " ");
  const std::vector<std::string> loop_shapes = {"", "", "", "", "dim { size: -1 } dim { size: 4 }", "dim { size: -1 } dim { size: 4 }",
                                                "", "", "dim { size: 3 } dim { size: 16 }", "dim { size: 4 } dim { size: 16 }",
                                                "dim { size: 16 }"};
  for (const std::string& s : loop_shapes) absl::StrAppend(&shapes, "shape { ", s, " } ");
  absl::StrAppend(
      &outer,
      node("lstm/while", "StatelessWhile",
           {"lstm/while/loop_counter", "lstm/while/maximum_iterations", "lstm/time", "lstm/TensorArrayV2_1", "lstm/zeros",
            "lstm/zeros_1", "lstm/strided_slice_1", "lstm/TensorArrayUnstack/TensorListFromTensor", "lstm/lstm_cell/kernel",
            "lstm/lstm_cell/recurrent_kernel", "lstm/lstm_cell/bias"},
           absl::StrCat("attr { key: \"T\" value { list { ", types, "} } } ",
                        "attr { key: \"_lower_using_switch_merge\" value { b: true } } ",
                        "attr { key: \"_num_original_outputs\" value { i: 11 } } ",
                        "attr { key: \"body\" value { func { name: \"lstm_while_body_1043\" } } } ",
                        "attr { key: \"cond\" value { func { name: \"lstm_while_cond_1042\" } } } ",
                        "attr { key: \"output_shapes\" value { list { ", shapes, "} } } ",
                        "attr { key: \"parallel_iterations\" value { i: 32 } }")),
      ints_const("lstm/TensorArrayV2Stack/TensorListStack/element_shape", {-1, kUnits}),
      node("lstm/TensorArrayV2Stack/TensorListStack", "TensorListStack",
           {"lstm/while:3", "lstm/TensorArrayV2Stack/TensorListStack/element_shape"},
           absl::StrCat(kElement, " attr { key: \"num_elements\" value { i: ", kTime, " } }")),
      ints_const("lstm/strided_slice_2/stack", {-1}), ints_const("lstm/strided_slice_2/stack_1", {0}),
      ints_const("lstm/strided_slice_2/stack_2", {1}),
      strided_slice("lstm/strided_slice_2", "lstm/TensorArrayV2Stack/TensorListStack", 1, kFloat),
      ints_const("lstm/transpose_1/perm", {1, 0, 2}),
      node("lstm/transpose_1", "Transpose", {"lstm/TensorArrayV2Stack/TensorListStack", "lstm/transpose_1/perm"},
           absl::StrCat(kFloat, " attr { key: \"Tperm\" value { type: DT_INT32 } }")));

  const std::string cond = absl::StrCat(
      "function { ", signature("lstm_while_cond_1042", {"identity"}, {"DT_BOOL"}),
      fnode("Less", "Less", {"placeholder", "lstm_strided_slice_1_0"}, kInt),
      fnode("Less_1", "Less", {"lstm_while_loop_counter", "lstm_while_maximum_iterations"}, kInt),
      fnode("LogicalAnd", "LogicalAnd", {"Less_1:z:0", "Less:z:0"}),
      fnode("Identity", "Identity", {"LogicalAnd:z:0"}, "attr { key: \"T\" value { type: DT_BOOL } }"),
      "ret { key: \"identity\" value: \"Identity:output:0\" } } ");

  const std::vector<std::string> outs = {"identity", "identity_1", "identity_2", "identity_3", "identity_4", "identity_5",
                                         "lstm_strided_slice_1", "tensorarrayv2read_tensorlistgetitem_lstm_tensorarrayunstack_tensorlistfromtensor",
                                         "lstm_cell_matmul_lstm_kernel", "lstm_cell_matmul_1_lstm_recurrent_kernel", "lstm_cell_biasadd_lstm_bias"};
  auto int_fconst = [](const std::string& name, int v) {
    return fnode(name, "Const", {},
                 absl::StrCat("attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
                              "dtype: DT_INT32 tensor_shape { } int_val: ", v, " } } }"));
  };
  std::string body = absl::StrCat(
      "function { ", signature("lstm_while_body_1043", outs, kLoopTypes),
      fnode("TensorArrayV2Read/Const", "Const", {},
            absl::StrCat("attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" value { tensor { "
                         "dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: -1 int_val: ", kFeatures, " } } }")),
      fnode("TensorArrayV2Read/TensorListGetItem", "TensorListGetItem",
            {kArgs[7], "placeholder", "TensorArrayV2Read/Const:output:0"}, kElement),
      fnode("lstm_cell/MatMul", "MatMul", {"TensorArrayV2Read/TensorListGetItem:item:0", kArgs[8]},
            absl::StrCat(kFloat, " attr { key: \"transpose_a\" value { b: false } } attr { key: \"transpose_b\" value { b: false } }")),
      fnode("lstm_cell/MatMul_1", "MatMul", {"placeholder_2", kArgs[9]},
            absl::StrCat(kFloat, " attr { key: \"transpose_a\" value { b: false } } attr { key: \"transpose_b\" value { b: false } }")),
      fnode("lstm_cell/add", "AddV2", {"lstm_cell/MatMul:product:0", "lstm_cell/MatMul_1:product:0"}, kFloat),
      fnode("lstm_cell/BiasAdd", "BiasAdd", {"lstm_cell/add:z:0", kArgs[10]},
            absl::StrCat(kFloat, " attr { key: \"data_format\" value { s: \"NHWC\" } }")),
      int_fconst("lstm_cell/split/split_dim", 1),
      fnode("lstm_cell/split", "Split", {"lstm_cell/split/split_dim:output:0", "lstm_cell/BiasAdd:output:0"},
            absl::StrCat(kFloat, " attr { key: \"num_split\" value { i: 4 } }")),
      fnode("lstm_cell/Sigmoid", "Sigmoid", {"lstm_cell/split:output:0"}, kFloat),
      fnode("lstm_cell/Sigmoid_1", "Sigmoid", {"lstm_cell/split:output:1"}, kFloat),
      fnode("lstm_cell/mul", "Mul", {"lstm_cell/Sigmoid_1:y:0", "placeholder_3"}, kFloat),
      fnode("lstm_cell/Tanh", "Tanh", {"lstm_cell/split:output:2"}, kFloat),
      fnode("lstm_cell/mul_1", "Mul", {"lstm_cell/Sigmoid:y:0", "lstm_cell/Tanh:y:0"}, kFloat),
      fnode("lstm_cell/add_1", "AddV2", {"lstm_cell/mul:z:0", "lstm_cell/mul_1:z:0"}, kFloat),
      fnode("lstm_cell/Sigmoid_2", "Sigmoid", {"lstm_cell/split:output:3"}, kFloat),
      fnode("lstm_cell/Tanh_1", "Tanh", {"lstm_cell/add_1:z:0"}, kFloat),
      fnode("lstm_cell/mul_2", "Mul", {"lstm_cell/Sigmoid_2:y:0", "lstm_cell/Tanh_1:y:0"}, kFloat),
      fnode("TensorArrayV2Write/TensorListSetItem", "TensorListSetItem", {"placeholder_1", "placeholder", "lstm_cell/mul_2:z:0"},
            kElement),
      int_fconst("add/y", 1), fnode("add", "AddV2", {"placeholder", "add/y:output:0"}, kInt),
      int_fconst("add_1/y", 1), fnode("add_1", "AddV2", {"lstm_while_loop_counter", "add_1/y:output:0"}, kInt),
      fnode("Identity", "Identity", {"add_1:z:0"}, kInt),
      fnode("Identity_1", "Identity", {"lstm_while_maximum_iterations"}, kInt),
      fnode("Identity_2", "Identity", {"add:z:0"}, kInt),
      fnode("Identity_3", "Identity", {"TensorArrayV2Write/TensorListSetItem:output_handle:0"},
            "attr { key: \"T\" value { type: DT_VARIANT } }"),
      fnode("Identity_4", "Identity", {"lstm_cell/mul_2:z:0"}, kFloat),
      fnode("Identity_5", "Identity", {"lstm_cell/add_1:z:0"}, kFloat));
  const std::vector<std::string> rets = {"Identity:output:0", "Identity_1:output:0", "Identity_2:output:0", "Identity_3:output:0",
                                         "Identity_4:output:0", "Identity_5:output:0", kArgs[6], kArgs[7], kArgs[8], kArgs[9], kArgs[10]};
  for (size_t i = 0; i < outs.size(); ++i) absl::StrAppend(&body, "ret { key: \"", outs[i], "\" value: \"", rets[i], "\" } ");
  body += "} ";
  return absl::StrCat(outer, "library { ", cond, body, "} versions { producer: 1286 min_consumer: 12 }");
}

// The same layer computed with tapeflow's eager ops: h and c start at zero; per step
// z = x_t K + h R + b, split into i, f, g, o; c = s(f) c + s(i) tanh(g); h = s(o) tanh(c).
std::pair<Tensor, Tensor> reference_lstm(const Tensor& x) {
  const int64_t batch = x.shape().dim(0);
  const Tensor k(weights(kFeatures * 4 * kUnits, 1), Shape{kFeatures, 4 * kUnits});
  const Tensor r(weights(kUnits * 4 * kUnits, 2), Shape{kUnits, 4 * kUnits});
  const Tensor b(weights(4 * kUnits, 3), Shape{4 * kUnits});
  Tensor h = zeros({batch, kUnits}), c = zeros({batch, kUnits});
  std::vector<Tensor> steps;
  for (int t = 0; t < kTime; ++t) {
    const Tensor xt = reshape(slice(x, {0, t, 0}, {batch, 1, kFeatures}), {batch, kFeatures});
    const std::vector<Tensor> z = split(matmul(xt, k) + matmul(h, r) + b, 4, 1);
    c = sigmoid(z[1]) * c + sigmoid(z[0]) * tanh(z[2]);
    h = sigmoid(z[3]) * tanh(c);
    steps.push_back(h);
  }
  return {h, stack(steps, 1)};
}

TEST(GraphDefKerasLstmTest, AFrozenKerasLstmOfUnknownBatchImportsAndMatchesTheCell) {
  const Graph g = graph_from_graph_def(graph_def_from_text(keras_lstm_graph()));
  EXPECT_EQ(g.get_operation_by_name("lstm/zeros").type(), "DynamicFill");
  Session s(g);
  for (int64_t batch : {2, 7}) {
    std::vector<float> xs(static_cast<size_t>(batch * kTime * kFeatures));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.37f * static_cast<float>(i));
    const Tensor x(xs, Shape{batch, kTime, kFeatures});
    const std::vector<Tensor> out =
        s.run({g.get_tensor_by_name("lstm/strided_slice_2:0"), g.get_tensor_by_name("lstm/transpose_1:0")},
              {{g.get_tensor_by_name("x:0"), x}});
    const auto [last, sequence] = reference_lstm(x);
    EXPECT_EQ(out[0].shape(), (Shape{batch, kUnits}));
    EXPECT_EQ(out[1].shape(), (Shape{batch, kTime, kUnits}));
    const std::vector<float> got_last = out[0].to_vector<float>(), want_last = last.to_vector<float>();
    const std::vector<float> got_seq = out[1].to_vector<float>(), want_seq = sequence.to_vector<float>();
    ASSERT_EQ(got_seq.size(), want_seq.size());
    for (size_t i = 0; i < got_last.size(); ++i) EXPECT_NEAR(got_last[i], want_last[i], 1e-5f) << batch << " " << i;
    for (size_t i = 0; i < got_seq.size(); ++i) EXPECT_NEAR(got_seq[i], want_seq[i], 1e-5f) << batch << " " << i;
    EXPECT_GT(std::abs(want_last[0]) + std::abs(want_last[1]), 0.01f);  // not a run of zeros
    // Written back and read again (the lists as tapeflow's buffers, the Fills as Fill): the same.
    const Graph back = graph_from_graph_def(to_graph_def(g));
    Session again(back);
    EXPECT_EQ(again.run(back.get_tensor_by_name("lstm/transpose_1:0"), {{back.get_tensor_by_name("x:0"), x}}).to_vector<float>(),
              got_seq);
  }
}

}  // namespace
}  // namespace tapeflow
