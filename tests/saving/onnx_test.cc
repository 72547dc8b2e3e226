// ONNX export: the written ModelProto parsed back with ONNX's schema (opset, inputs, outputs,
// nodes, initializers and their values), NHWC layout handling, and the export's errors. That
// the models are valid and compute what tapeflow computes is checked outside C++ by onnx's
// checker and ONNX Runtime (tests/saving/onnx/, ctests onnx_checker and onnx_runtime).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "proto/onnx/onnx.pb.h"
#include "saving/onnx_convert.h"
#include "tests/saving/onnx_models.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using onnx_test::ExportedCase;

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m;
}

std::vector<std::string> op_types(const onnx::GraphProto& g) {
  std::vector<std::string> out;
  for (const auto& n : g.node()) out.push_back(n.op_type());
  return out;
}

const onnx::TensorProto* initializer(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

const onnx::NodeProto* first_node(const onnx::GraphProto& g, const std::string& op_type, int skip = 0) {
  for (const auto& n : g.node())
    if (n.op_type() == op_type && skip-- == 0) return &n;
  return nullptr;
}

std::vector<int64_t> ints_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return {-999};
}

std::vector<float> floats_of(const onnx::TensorProto& t) {
  std::vector<float> v(t.raw_data().size() / sizeof(float));
  std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
  return v;
}

std::vector<int64_t> int64s_of(const onnx::TensorProto& t) {
  std::vector<int64_t> v(t.raw_data().size() / sizeof(int64_t));
  std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(int64_t));
  return v;
}

// Every node input is a graph input, an initializer or an earlier node's output (ONNX's
// topological order); every initializer is used; every output is produced.
void expect_well_formed(const onnx::GraphProto& g) {
  std::set<std::string> defined, used;
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& t : g.initializer()) EXPECT_TRUE(defined.insert(t.name()).second) << "duplicate " << t.name();
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) {
      if (in.empty()) continue;  // an optional input left out (Resize's roi and scales)
      EXPECT_TRUE(defined.contains(in)) << n.name() << " (" << n.op_type() << ") reads undefined '" << in << "'";
      used.insert(in);
    }
    for (const auto& out : n.output()) {  // "" leaves an optional output out (Unique's indices)
      if (!out.empty()) {
        EXPECT_TRUE(defined.insert(out).second) << "value written twice: " << out;
      }
    }
  }
  for (const auto& t : g.initializer()) EXPECT_TRUE(used.contains(t.name())) << "unused initializer " << t.name();
  for (const auto& o : g.output()) EXPECT_TRUE(defined.contains(o.name())) << "output not produced: " << o.name();
}

std::vector<int64_t> dims_of(const onnx::ValueInfoProto& v, std::vector<std::string>* params = nullptr) {
  std::vector<int64_t> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    if (params) params->push_back(d.dim_param());
  }
  return dims;
}

TEST(OnnxExportTest, MlpIsOpset17WithFrozenWeightsAndNamedInputsAndOutputs) {
  const ExportedCase c = onnx_test::mlp_case();
  const onnx::ModelProto m = parse(c.bytes);
  EXPECT_EQ(m.ir_version(), 8);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).domain(), "");
  EXPECT_EQ(m.opset_import(0).version(), 17);
  EXPECT_EQ(m.producer_name(), "tapeflow");
  const onnx::GraphProto& g = m.graph();
  EXPECT_EQ(g.name(), "mlp");
  expect_well_formed(g);

  ASSERT_EQ(g.input_size(), 1);
  EXPECT_EQ(g.input(0).name(), "args_0");
  EXPECT_EQ(g.input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  std::vector<std::string> params;
  EXPECT_THAT(dims_of(g.input(0), &params), ElementsAre(-1, 784));
  EXPECT_EQ(params[0], "args_0_d0");
  ASSERT_EQ(g.output_size(), 1);
  EXPECT_EQ(g.output(0).name(), "output_0");
  EXPECT_THAT(dims_of(g.output(0)), ElementsAre(-1, 10));

  // Flatten, Dense relu, Dense, softmax (one node, over the last axis as TensorFlow's).
  const std::vector<std::string> ops = op_types(g);
  EXPECT_THAT(ops, ElementsAre("Reshape", "MatMul", "Add", "Relu", "MatMul", "Add", "Softmax"));
  // The weights are initializers holding the variables' current values, under their names.
  ASSERT_EQ(c.variables.size(), 4u);
  int found = 0;
  for (const Variable& v : c.variables) {
    for (const auto& t : g.initializer()) {
      if (t.dims_size() != v.shape().rank() || floats_of(t) != v.read().to_vector<float>()) continue;
      EXPECT_THAT(std::vector<int64_t>(t.dims().begin(), t.dims().end()), ElementsAreArray(v.shape().dims()));
      EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT);
      ++found;
      break;
    }
  }
  EXPECT_EQ(found, 4);
  // Flatten's target shape is an int64 initializer.
  const onnx::TensorProto* shape = initializer(g, first_node(g, "Reshape")->input(1));
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->data_type(), onnx::TensorProto::INT64);
  EXPECT_THAT(int64s_of(*shape), ElementsAre(-1, 784));
  // ONNX's Softmax (opset 13+) is over the last axis by default, as TensorFlow's.
  const onnx::NodeProto* soft = first_node(g, "Softmax");
  ASSERT_NE(soft, nullptr);
  EXPECT_EQ(soft->attribute_size(), 0);
  // The output node writes "output_0" itself.
  EXPECT_EQ(g.node(g.node_size() - 1).output(0), "output_0");
}

TEST(OnnxExportTest, CnnConvolvesNchwBetweenTransposesWithOihwFilters) {
  const ExportedCase c = onnx_test::cnn_case();
  const onnx::GraphProto g = parse(c.bytes).graph();
  expect_well_formed(g);
  EXPECT_THAT(dims_of(g.input(0)), ElementsAre(-1, 28, 28, 1));
  EXPECT_THAT(dims_of(g.output(0)), ElementsAre(-1, 10));
  std::map<std::string, int> count;
  for (const std::string& op : op_types(g)) ++count[op];
  EXPECT_EQ(count["Conv"], 2);
  EXPECT_EQ(count["MaxPool"], 2);
  EXPECT_EQ(count["Transpose"], 8);  // into and out of NCHW around each conv and pool
  EXPECT_EQ(count["Relu"], 3);
  EXPECT_EQ(count["Reshape"], 1);

  const onnx::NodeProto& conv = *first_node(g, "Conv");
  EXPECT_THAT(ints_attr(conv, "kernel_shape"), ElementsAre(5, 5));
  EXPECT_THAT(ints_attr(conv, "strides"), ElementsAre(1, 1));
  EXPECT_THAT(ints_attr(conv, "pads"), ElementsAre(2, 2, 2, 2));  // SAME, 5x5
  const onnx::NodeProto& to_nchw = *first_node(g, "Transpose");
  EXPECT_EQ(to_nchw.input(0), "args_0");
  EXPECT_THAT(ints_attr(to_nchw, "perm"), ElementsAre(0, 3, 1, 2));
  EXPECT_EQ(conv.input(0), to_nchw.output(0));
  // The first kernel [5, 5, 1, 4] (HWIO), written as OIHW [4, 1, 5, 5].
  const onnx::TensorProto* w = initializer(g, conv.input(1));
  ASSERT_NE(w, nullptr);
  EXPECT_THAT(std::vector<int64_t>(w->dims().begin(), w->dims().end()), ElementsAre(4, 1, 5, 5));
  const Variable& kernel = c.variables[0];
  ASSERT_EQ(kernel.shape(), Shape({5, 5, 1, 4}));
  const std::vector<float> hwio = kernel.read().to_vector<float>(), oihw = floats_of(*w);
  for (int h = 0; h < 5; ++h)
    for (int x = 0; x < 5; ++x)
      for (int o = 0; o < 4; ++o) ASSERT_EQ(oihw[(o * 5 + h) * 5 + x], hwio[(h * 5 + x) * 4 + o]);
  // The HWIO kernel itself is not written (only its OIHW form).
  for (const auto& t : g.initializer()) EXPECT_FALSE(t.dims_size() == 4 && t.dims(0) == 5) << t.name();
  const onnx::NodeProto& pool = *first_node(g, "MaxPool");
  EXPECT_THAT(ints_attr(pool, "kernel_shape"), ElementsAre(2, 2));
  EXPECT_THAT(ints_attr(pool, "strides"), ElementsAre(2, 2));
  EXPECT_THAT(ints_attr(pool, "pads"), ElementsAre(0, 0, 0, 0));  // VALID
  const onnx::NodeProto& back = *first_node(g, "Transpose", 1);
  EXPECT_THAT(ints_attr(back, "perm"), ElementsAre(0, 2, 3, 1));
}

TEST(OnnxExportTest, OpsCaseUsesOnnxFormsOfEveryConvertedOp) {
  const ExportedCase c = onnx_test::ops_case();
  const onnx::GraphProto g = parse(c.bytes).graph();
  expect_well_formed(g);
  ASSERT_EQ(g.output_size(), 5);
  EXPECT_EQ(g.output(1).type().tensor_type().elem_type(), onnx::TensorProto::INT64);  // argmax
  EXPECT_EQ(g.output(2).type().tensor_type().elem_type(), onnx::TensorProto::INT32);  // argmin, cast back
  EXPECT_EQ(g.output(4).type().tensor_type().elem_type(), onnx::TensorProto::INT32);
  std::set<std::string> ops;
  for (const std::string& op : op_types(g)) ops.insert(op);
  for (const char* op : {"Sqrt", "Reciprocal", "Log", "Clip", "LeakyRelu", "Elu", "Selu", "Softplus", "Softsign",
                         "Sigmoid", "Tanh", "Floor", "Sign", "Max", "Min", "Neg", "Pow", "MatMul", "Transpose",
                         "Concat", "Tile", "Slice", "Gather", "Unsqueeze", "Squeeze", "Pad", "ReduceSum", "ReduceMax",
                         "ReduceMin", "ReduceProd", "Greater", "Equal", "Not", "And", "LessOrEqual", "Cast", "Conv",
                         "AveragePool", "MaxPool", "ArgMax", "ArgMin", "Reshape", "Abs", "Where"})
    EXPECT_TRUE(ops.contains(op)) << op;
  // ReduceSum takes its axes as an input (opset 13+), ReduceMax as an attribute (until 18).
  EXPECT_EQ(first_node(g, "ReduceSum")->input_size(), 2);
  EXPECT_FALSE(ints_attr(*first_node(g, "ReduceMax"), "axes").empty());
  // Conv 3x3 stride 2 SAME on 6x6: TensorFlow pads 0 before and 1 after.
  EXPECT_THAT(ints_attr(*first_node(g, "Conv"), "pads"), ElementsAre(0, 0, 1, 1));
  // Relu6 is Clip with float scalar bounds.
  const onnx::NodeProto& clip = *first_node(g, "Clip");
  ASSERT_EQ(clip.input_size(), 3);
  EXPECT_THAT(floats_of(*initializer(g, clip.input(1))), ElementsAre(0.f));
  EXPECT_THAT(floats_of(*initializer(g, clip.input(2))), ElementsAre(6.f));
  // matmul(m, x, transpose_a): a Transpose swapping the two axes feeds the MatMul.
  std::set<std::string> swapped;
  for (const auto& n : g.node())
    if (n.op_type() == "Transpose" && ints_attr(n, "perm") == std::vector<int64_t>{1, 0}) swapped.insert(n.output(0));
  int transposed_operands = 0;
  for (const auto& n : g.node())
    if (n.op_type() == "MatMul") transposed_operands += swapped.contains(n.input(0)) + swapped.contains(n.input(1));
  EXPECT_EQ(transposed_operands, 1);
}

TEST(OnnxExportTest, UnknownImageSizesPadWithAutoPadSameUpper) {
  const onnx::GraphProto g = parse(onnx_test::dynamic_conv_case().bytes).graph();
  expect_well_formed(g);
  std::vector<std::string> params;
  EXPECT_THAT(dims_of(g.input(0), &params), ElementsAre(-1, -1, -1, 2));
  EXPECT_THAT(params, ElementsAre("args_0_d0", "args_0_d1", "args_0_d2", ""));
  for (const char* op : {"Conv", "MaxPool"}) {
    const onnx::NodeProto& n = *first_node(g, op);
    EXPECT_THAT(ints_attr(n, "pads"), ElementsAre(-999)) << op;  // not set
    bool same_upper = false;
    for (const auto& a : n.attribute()) same_upper |= a.name() == "auto_pad" && a.s() == "SAME_UPPER";
    EXPECT_TRUE(same_upper) << op;
  }
}

TEST(OnnxExportTest, GraphOverloadFreezesTensorsAndAddsIdentitiesForPassThroughOutputs) {
  Graph g;
  Tensor x, scale, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, 2}, "x");
    scale = placeholder(DType::kFloat32, {2}, "scale");
    y = x * scale;
  }
  const onnx::GraphProto og =
      parse(onnx_model_bytes(g, {x}, {y, x, y}, {{scale, Tensor({2.f, 3.f})}})).graph();
  expect_well_formed(og);
  EXPECT_EQ(og.input_size(), 1);
  ASSERT_EQ(og.initializer_size(), 1);
  EXPECT_EQ(og.initializer(0).name(), "scale");
  EXPECT_THAT(floats_of(og.initializer(0)), ElementsAre(2.f, 3.f));
  ASSERT_EQ(og.output_size(), 3);
  EXPECT_THAT(op_types(og), ElementsAre("Mul", "Identity", "Identity"));
  EXPECT_EQ(og.node(0).output(0), "output_0");
  EXPECT_EQ(og.node(1).input(0), "x");
  EXPECT_EQ(og.node(2).input(0), "output_0");

  EXPECT_THAT(error_of([&] { onnx_model_bytes(g, {x}, {y}); }),
              HasSubstr("[export_onnx] placeholders that are neither inputs nor frozen: scale"));
  EXPECT_THAT(error_of([&] { onnx_model_bytes(g, {y}, {y}); }), HasSubstr("is a Mul, not a placeholder"));
  EXPECT_THAT(error_of([&] { onnx_model_bytes(g, {x}, {Tensor(1.f)}); }), HasSubstr("output 0 is not a graph tensor"));
  Graph other;
  EXPECT_THAT(error_of([&] { onnx_model_bytes(other, {x}, {y}); }), HasSubstr("belongs to"));
}

// BiasAdd is one node since it has data_format: NHWC becomes ONNX's broadcasting Add, NCHW an
// Add of the bias reshaped to [C, 1, 1] (its channels are dim 1).
TEST(OnnxExportTest, NhwcBiasAddIsAnAddAndNchwAddsTheBiasReshaped) {
  Graph g;
  Tensor x, b, y, c, z;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {-1, 2, 2, 3}, "x");
    b = placeholder(DType::kFloat32, {3}, "b");
    y = bias_add(x, b);
    c = placeholder(DType::kFloat32, {2}, "c");
    z = bias_add(x, c, "NCHW");
  }
  const onnx::GraphProto og = parse(onnx_model_bytes(g, {x, b}, {y})).graph();
  expect_well_formed(og);
  EXPECT_THAT(op_types(og), ElementsAre("Add"));
  EXPECT_EQ(og.node(0).input(0), "x");
  EXPECT_EQ(og.node(0).input(1), "b");
  const onnx::GraphProto nchw = parse(onnx_model_bytes(g, {x, c}, {z})).graph();
  expect_well_formed(nchw);
  EXPECT_THAT(op_types(nchw), ElementsAre("Reshape", "Add"));
  const onnx::TensorProto* dims = initializer(nchw, nchw.node(0).input(1));
  ASSERT_NE(dims, nullptr);
  EXPECT_EQ(int64s_of(*dims), (std::vector<int64_t>{-1, 1, 1}));
  EXPECT_EQ(nchw.node(1).input(0), "x");
}

// Channels-first convolutions and pools are ONNX's layout: no Transpose, the same attrs.
TEST(OnnxExportTest, NchwConvolutionsAndPoolsNeedNoTransposes) {
  const ExportedCase c = onnx_test::nchw_case();
  const onnx::ModelProto m = parse(c.bytes);
  const onnx::GraphProto& g = m.graph();
  expect_well_formed(g);
  const std::vector<std::string> types = op_types(g);
  // The case's own transpose to NHWC, and two around each of its NHWC DepthToSpace and
  // SpaceToDepth: none for the NCHW layers.
  EXPECT_EQ(std::count(types.begin(), types.end(), "Transpose"), 5);
  EXPECT_EQ(std::count(types.begin(), types.end(), "Conv"), 2);
  const onnx::NodeProto* conv = first_node(g, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->input(0), g.input(0).name());
  const onnx::NodeProto* d2s = first_node(g, "DepthToSpace");
  ASSERT_NE(d2s, nullptr);
  bool dcr = false;
  for (const auto& a : d2s->attribute()) dcr |= a.name() == "mode" && a.s() == "DCR";
  EXPECT_TRUE(dcr);
  EXPECT_EQ(std::count(types.begin(), types.end(), "SpaceToDepth"), 2);
  EXPECT_EQ(ints_attr(*conv, "strides"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(ints_attr(*conv, "pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  const onnx::NodeProto* depthwise = first_node(g, "Conv", 1);
  ASSERT_NE(depthwise, nullptr);
  EXPECT_EQ(ints_attr(*depthwise, "dilations"), (std::vector<int64_t>{1, 2}));
  const onnx::NodeProto* avg = first_node(g, "AveragePool");
  ASSERT_NE(avg, nullptr);
  EXPECT_EQ(ints_attr(*avg, "kernel_shape"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(ints_attr(*avg, "strides"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(dims_of(g.output(0)), (std::vector<int64_t>{2, 4, 3, 3}));
}

TEST(OnnxExportTest, UnsupportedOpsAreOneErrorListingEveryTypeAndNode) {
  Graph g;
  Tensor x, out;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {4}, "x");
    const Tensor a = cumprod(x), b = cumprod(x + 1.f);
    const Tensor c = random_normal({4});
    cumprod(x * 2.f);  // not needed by the output: not listed
    out = a + b + c;
  }
  EXPECT_THAT(error_of<UnimplementedError>([&] { onnx_model_bytes(g, {x}, {out}); }),
              HasSubstr("[export_onnx] op types without an ONNX form: Cumprod (nodes Cumprod, Cumprod_1); "
                        "RandomStandardNormal (node RandomNormal)"));
  EXPECT_THAT(error_of<UnimplementedError>([&] { onnx_model_bytes(g, {x}, {out}); }),
              ::testing::Not(HasSubstr("Cumprod_2")));
}

// Note [Exact ONNX forms]: every registered op either has a converter or is listed here with the
// reason it has none. A new op fails this test until someone writes its converter or adds it
// here, saying why.
TEST(OnnxExportTest, EveryRegisteredOpHasAConverterOrAReason) {
  const std::map<std::string, std::string> without = {
      // No exact ONNX form.
      {"Cumprod", "ONNX has no cumulative product; exp(cumsum(log x)) is wrong for zeros and negatives"},
      {"RandomUniform", "ONNX's random ops cannot draw tapeflow's Philox stream (and a model is stateless)"},
      {"RandomNormal", "as RandomUniform"},
      {"TruncatedNormal", "as RandomUniform; ONNX has no truncated normal either"},
      // Variable updates: a function with side effects is not exported at all.
      {"AdamUpdate", "an optimizer's variable update"},
      {"GradientDescentUpdate", "an optimizer's variable update"},
      {"MatMulUpdate", "an optimizer's variable update"},
      // Backward-pass ops: the export is for inference. Each could be composed from ONNX ops if
      // exporting a gradient function is ever wanted; until then an export that needs one fails
      // with the usual UnimplementedError listing them.
      {"ReluGrad", "backward pass"}, {"Relu6Grad", "backward pass"}, {"EluGrad", "backward pass"},
      {"SeluGrad", "backward pass"}, {"SoftplusGrad", "backward pass"}, {"SoftsignGrad", "backward pass"},
      {"LeakyReluGrad", "backward pass"}, {"SigmoidGrad", "backward pass"}, {"TanhGrad", "backward pass"},
      {"Conv2DBackpropInput", "backward pass (ConvTranspose could carry it: left to the convolution work)"},
      {"Conv2DBackpropFilter", "backward pass"}, {"MaxPoolGrad", "backward pass"},
      {"MaxPoolGradGrad", "backward pass"}, {"AvgPoolGrad", "backward pass"},
      {"DepthwiseConv2dNativeBackpropInput", "backward pass"}, {"DepthwiseConv2dNativeBackpropFilter", "backward pass"},
      {"BiasAddGrad", "backward pass"}, {"LRNGrad", "backward pass"}, {"ResizeBilinearGrad", "backward pass"},
      {"ResizeNearestNeighborGrad", "backward pass"},
      {"CropAndResize", "ONNX's RoiAlign averages bins, widens a box to at least one pixel and samples outside "
                        "the image otherwise: not TensorFlow's crop"},
      {"CropAndResizeGradImage", "backward pass"}, {"CropAndResizeGradBoxes", "backward pass"},
      {"NonMaxSuppressionV5", "soft NMS rescores boxes, which ONNX's NonMaxSuppression does not"},
      {"CombinedNonMaxSuppression", "ONNX's NonMaxSuppression returns the selected indices; merging the classes "
                                    "by score and padding each image's rows would need a Loop"},
      // TensorFlow 1's TensorArrays read from a GraphDef: they live in While bodies, which the
      // ONNX export does not write (a Loop with sequence ops could carry them).
      {"TensorArrayBuffer", "in While bodies (no ONNX Loop export)"},
      {"TensorArrayBufferWrite", "as TensorArrayBuffer"}, {"TensorArrayBufferScatter", "as TensorArrayBuffer"},
      {"TensorArrayBufferUnstack", "as TensorArrayBuffer"}, {"TensorArrayBufferRead", "as TensorArrayBuffer"},
      {"TensorArrayBufferGather", "as TensorArrayBuffer"}, {"TensorArrayBufferSize", "as TensorArrayBuffer"},
      {"DynamicFill", "written as TensorFlow's Fill, whose converter takes run-time dims"},
      {"DynamicRange", "written as TensorFlow's Range, whose converter takes run-time bounds"},
      {"DynamicTile", "written as TensorFlow's Tile, whose converter takes run-time multiples"},
  };
  std::vector<std::string> missing, stale;
  std::set<std::string> registered;
  for (const OpDef* op : OpRegistry::global().ops()) {
    registered.insert(op->type);
    const bool converts = onnx_internal::find_converter(op->type) != nullptr;
    if (!converts && !without.contains(op->type)) missing.push_back(op->type);
    if (converts && without.contains(op->type)) stale.push_back(op->type);
  }
  for (const auto& [type, why] : without)
    if (!registered.contains(type)) stale.push_back(type + " (not registered)");
  EXPECT_THAT(missing, ::testing::IsEmpty()) << "registered ops with neither an ONNX converter (saving/onnx_ops*.cc) "
                                                "nor a reason in this test's list";
  EXPECT_THAT(stale, ::testing::IsEmpty()) << "listed as having no converter, but they have one (or are gone)";
}

// The math family: the ONNX forms the converters compose (Note [Exact ONNX forms]).
TEST(OnnxExportTest, ImageLayersBecomeGroupedConvBatchNormLrnResizeAndGathers) {
  const ExportedCase c = onnx_test::layers_case();
  const onnx::ModelProto m = parse(c.bytes);
  const onnx::GraphProto& g = m.graph();
  expect_well_formed(g);
  // Depthwise: Conv with group = channels and [C * M, 1, kh, kw] weights; the dilated one too.
  // (The atrous convolution's Conv, group 1, sits between a Transpose and a Reshape.)
  std::vector<const onnx::NodeProto*> convs;
  int plain_convs = 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Conv") continue;
    bool grouped = false;
    for (const auto& a : n.attribute()) grouped = grouped || (a.name() == "group" && a.i() > 1);
    if (grouped) convs.push_back(&n);
    else ++plain_convs;
  }
  ASSERT_EQ(convs.size(), 3u);
  EXPECT_EQ(plain_convs, 1);
  std::multiset<std::vector<int64_t>> dilations, strides;
  for (const onnx::NodeProto* n : convs) {
    int64_t group = -1;
    for (const auto& a : n->attribute())
      if (a.name() == "group") group = a.i();
    EXPECT_EQ(group, 2) << n->name();
    dilations.insert(ints_attr(*n, "dilations"));
    strides.insert(ints_attr(*n, "strides"));
  }
  EXPECT_EQ(dilations.count({2, 2}), 1u);
  EXPECT_EQ(strides.count({2, 2}), 1u);
  const onnx::NodeProto* conv = convs[0];
  const onnx::TensorProto* w = initializer(g, conv->input(1));
  ASSERT_NE(w, nullptr);
  EXPECT_THAT(std::vector<int64_t>(w->dims().begin(), w->dims().end()), ElementsAre(4, 1, 3, 3));
  // Output channel c * M + m, tap (h, w) is filter[h, w, c, m]: channel 3 = (c 1, m 1), tap (0, 2).
  const std::vector<float> k = onnx_test::pattern({3, 3, 2, 2}, 0.5f, 7).to_vector<float>();
  EXPECT_EQ(floats_of(*w)[(3 * 3 + 0) * 3 + 2], k[((0 * 3 + 2) * 2 + 1) * 2 + 1]);
  // Batch norm: inference-mode BatchNormalization, the NCHW one without transposes around it.
  const std::vector<std::string> types = op_types(g);
  EXPECT_EQ(std::count(types.begin(), types.end(), "BatchNormalization"), 2);
  // LRN with size 2r + 1 = 3 and alpha multiplied by it.
  const onnx::NodeProto* lrn = first_node(g, "LRN");
  ASSERT_NE(lrn, nullptr);
  std::map<std::string, double> lrn_attrs;
  for (const auto& a : lrn->attribute()) lrn_attrs[a.name()] = a.name() == "size" ? double(a.i()) : double(a.f());
  EXPECT_EQ(lrn_attrs["size"], 3);
  EXPECT_NEAR(lrn_attrs["alpha"], 0.9, 1e-7);
  EXPECT_NEAR(lrn_attrs["bias"], 1.5, 1e-7);
  EXPECT_NEAR(lrn_attrs["beta"], 0.6, 1e-7);
  // Four bilinear Resizes (one per coordinate rule, and the uint8 image's, of a float32 Cast of
  // it); nearest ones are Gathers.
  std::vector<std::string> modes;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Resize") continue;
    for (const auto& a : n.attribute())
      if (a.name() == "coordinate_transformation_mode") modes.push_back(a.s());
  }
  EXPECT_THAT(modes, ElementsAre("asymmetric", "align_corners", "half_pixel", "half_pixel"));
  const onnx::NodeProto* as_float = nullptr;
  for (const auto& n : g.node())
    if (n.op_type() == "Cast" && n.output(0).ends_with("as_float")) as_float = &n;
  ASSERT_NE(as_float, nullptr);
  EXPECT_EQ(as_float->attribute(0).i(), onnx::TensorProto::FLOAT);
  // The legacy 6 -> 4 columns read columns 0, 1, 3, 4 (TensorFlow: floor(x * 1.5)).
  bool found = false;
  for (const auto& t : g.initializer())
    if (t.name().ends_with("/source_columns") && int64s_of(t) == std::vector<int64_t>{0, 1, 3, 4}) found = true;
  EXPECT_TRUE(found);
}

TEST(OnnxExportTest, ImageLayersRefuseWhatOnnxCannotComputeExactly) {
  const Tensor scale = Tensor({1.f, 1.f}), zero = Tensor({0.f, 0.f});
  auto training = function([=](const Tensor& x) { return fused_batch_norm(x, scale, zero, zero, scale).y; });
  EXPECT_THAT(error_of([&] { onnx_model_bytes(training.get_concrete_function({{DType::kFloat32, {1, 2, 2, 2}}})); }),
              HasSubstr("training mode (is_training = true)"));
  auto nearest = function([](const Tensor& x) { return resize_nearest_neighbor(x, {4, 4}); });
  EXPECT_THAT(error_of([&] { onnx_model_bytes(nearest.get_concrete_function({{DType::kFloat32, {1, -1, -1, 2}}})); }),
              HasSubstr("a nearest-neighbour resize of an image of unknown height or width"));
  auto lrn64 = function([](const Tensor& x) { return local_response_normalization(x, 1); });
  EXPECT_THAT(error_of([&] { onnx_model_bytes(lrn64.get_concrete_function({{DType::kFloat64, {1, 2, 2, 3}}})); }),
              HasSubstr("LRN of float64"));
  auto phases = function([](const Tensor& x) { return space_to_batch_nd(x, {2}, {{0, 0}}); });
  EXPECT_THAT(error_of([&] { onnx_model_bytes(phases.get_concrete_function({{DType::kFloat32, {-1, 4, -1}}})); }),
              HasSubstr("a space/batch rearrangement of [?,4,?] with unknown dims other than the batch"));
  auto empty = function([](const Tensor& x) { return space_to_batch_nd(x, {2}, {{0, 0}}); });
  EXPECT_THAT(error_of([&] { onnx_model_bytes(empty.get_concrete_function({{DType::kFloat32, {-1, 0, 3}}})); }),
              HasSubstr("a space/batch rearrangement of the empty [?,0,3]"));
}

TEST(OnnxExportTest, MathCaseUsesExactCompositesAndKeepsDtypes) {
  const ExportedCase c = onnx_test::math_case();
  const onnx::GraphProto g = parse(c.bytes).graph();
  expect_well_formed(g);
  std::set<std::string> ops;
  for (const std::string& op : op_types(g)) ops.insert(op);
  for (const char* op : {"Reciprocal", "Exp", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                         "Acosh", "Atanh", "Erf", "Ceil", "Round", "IsNaN", "IsInf", "Sum", "Clip", "Max", "Min", "Mod",
                         "Floor", "Div", "Where", "Xor", "ReduceMin", "ReduceMax"})
    EXPECT_TRUE(ops.contains(op)) << op;
  ASSERT_EQ(g.output_size(), 9);
  EXPECT_EQ(g.output(7).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(g.output(2).type().tensor_type().elem_type(), onnx::TensorProto::INT32);
  EXPECT_EQ(g.output(5).type().tensor_type().elem_type(), onnx::TensorProto::INT32);
  // Integer FloorMod is Mod with fmod 0; float FloorMod and TruncateMod use fmod 1.
  std::set<int64_t> fmods;
  for (const auto& n : g.node())
    if (n.op_type() == "Mod")
      for (const auto& a : n.attribute()) fmods.insert(a.i());
  EXPECT_THAT(fmods, ElementsAre(0, 1));
}

TEST(OnnxExportTest, ArrayCaseUsesOnnxFormsAndIndexDtypes) {
  const ExportedCase c = onnx_test::array_case();
  const onnx::GraphProto g = parse(c.bytes).graph();
  expect_well_formed(g);
  std::set<std::string> ops;
  for (const std::string& op : op_types(g)) ops.insert(op);
  for (const char* op : {"Equal", "Where", "Slice", "Squeeze", "Unsqueeze", "Range", "Expand", "Shape", "CumSum",
                         "Pad", "Concat", "NonZero", "Transpose", "GatherND", "ScatterND", "TopK", "Unique", "Cast",
                         "Split", "ReduceMean", "Softmax", "LogSoftmax", "ScatterElements"})
    EXPECT_TRUE(ops.contains(op)) << op;
  EXPECT_FALSE(ops.contains("OneHot"));  // negative indices: Equal and Where instead
  ASSERT_EQ(g.output_size(), 48);
  EXPECT_EQ(g.output(46).type().tensor_type().elem_type(), onnx::TensorProto::INT32);  // invert_permutation
  EXPECT_EQ(g.output(47).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(g.output(43).type().tensor_type().elem_type(), onnx::TensorProto::INT32);  // Size, Rank: Casts
  EXPECT_EQ(g.output(44).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(g.output(38).type().tensor_type().elem_type(), onnx::TensorProto::INT32);  // shape(x): a Cast of Shape
  EXPECT_EQ(g.output(39).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(g.output(1).type().tensor_type().elem_type(), onnx::TensorProto::INT32);   // one_hot int32
  EXPECT_EQ(g.output(16).type().tensor_type().elem_type(), onnx::TensorProto::INT64);  // where(x)
  EXPECT_EQ(g.output(23).type().tensor_type().elem_type(), onnx::TensorProto::INT32);  // top_k indices
  EXPECT_EQ(g.output(25).type().tensor_type().elem_type(), onnx::TensorProto::INT32);  // unique idx
  EXPECT_EQ(g.output(27).type().tensor_type().elem_type(), onnx::TensorProto::INT64);
  // ScatterNd sums duplicates: ScatterND with reduction "add" (so does the segment sum).
  int adds = 0;
  for (const auto& n : g.node())
    if (n.op_type() == "ScatterND")
      for (const auto& a : n.attribute()) adds += a.name() == "reduction" && a.s() == "add";
  EXPECT_EQ(adds, 2);
  // MirrorPad REFLECT is Pad mode reflect; SYMMETRIC is reversed Slices concatenated.
  const onnx::NodeProto& pad = *first_node(g, "Pad");
  ASSERT_EQ(pad.attribute_size(), 1);
  EXPECT_EQ(pad.attribute(0).s(), "reflect");
  // GatherV2 with batch_dims 1 along axis 1: GatherND with batch_dims 1.
  bool batched = false;
  for (const auto& n : g.node())
    if (n.op_type() == "GatherND")
      for (const auto& a : n.attribute()) batched |= a.name() == "batch_dims" && a.i() == 1;
  EXPECT_TRUE(batched);
  // LinSpace: tapeflow's own values, as an initializer.
  std::vector<std::vector<float>> spaced;  // the two calls, in either order
  for (const char* name : {"LinSpace/values", "LinSpace_1/values"}) {
    const onnx::TensorProto* lin = initializer(g, name);
    ASSERT_NE(lin, nullptr) << name;
    spaced.push_back(floats_of(*lin));
  }
  EXPECT_THAT(spaced, ::testing::Contains(ElementsAre(-1.f, -0.5f, 0.f, 0.5f, 1.f, 1.5f, 2.f)));
}

TEST(OnnxExportTest, InexpressibleCasesOfConvertedOpsAreRefusedNamingTheNode) {
  Graph g;
  Tensor x, sliced;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2, -1, 3}, "x");
    sliced = strided_slice(x, {0, -2}, {0, 0}, {1, -1}, {.begin_mask = 1, .end_mask = 3});
  }
  EXPECT_THAT(error_of<UnimplementedError>([&] { onnx_model_bytes(g, {x}, {sliced}); }),
              HasSubstr("[export_onnx] node 'StridedSlice' (StridedSlice): a negative begin with a negative stride "
                        "on dim 1 of unknown size"));
  // With the dim known, the same slice exports.
  Graph known;
  Tensor kx, ky;
  {
    auto scope = known.as_default();
    kx = placeholder(DType::kFloat32, {2, 4, 3}, "x");
    ky = strided_slice(kx, {0, -2}, {0, 0}, {1, -1}, {.begin_mask = 1, .end_mask = 3});
  }
  expect_well_formed(parse(onnx_model_bytes(known, {kx}, {ky})).graph());
}

TEST(OnnxExportTest, FunctionsWithSideEffectsAndGraphVariablesAreRefused) {
  Variable counter(0.f, "counter");
  auto step = function([&](const Tensor& x) {
    counter.assign_add(1.f);
    return x * 2.f;
  });
  ConcreteFunction& cf = step.get_concrete_function({{DType::kFloat32, {2}}});
  EXPECT_THAT(error_of<UnimplementedError>([&] { onnx_model_bytes(cf); }),
              HasSubstr("op types without an ONNX form: AssignAddVariableOp"));
  // An Assert cannot fail an ONNX run: named, not dropped.
  auto checked = function([](const Tensor& x) {
    assert_that(reduce_all(greater(x, 0.f)), {x}, "x must be positive");
    return x * 2.f;
  });
  EXPECT_THAT(error_of<UnimplementedError>([&] { onnx_model_bytes(checked.get_concrete_function({{DType::kFloat32, {2}}})); }),
              HasSubstr("op types without an ONNX form: Assert"));

  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    Variable v(Tensor({1.f, 2.f}), "v");
    y = x + v.read();
  }
  EXPECT_THAT(error_of<FailedPreconditionError>([&] { onnx_model_bytes(g, {x}, {y}); }),
              HasSubstr("variable 'v' (read by node 'ReadVariableOp') is a graph variable"));
  // Its read, frozen, exports.
  const Tensor read = g.get_tensor_by_name("ReadVariableOp:0");
  const onnx::GraphProto og = parse(onnx_model_bytes(g, {x}, {y}, {{read, Tensor({5.f, 6.f})}})).graph();
  expect_well_formed(og);
  EXPECT_THAT(op_types(og), ElementsAre("Add"));
}

TEST(OnnxExportTest, WritesTheFileAtomicallyAndReportsBadPaths) {
  Variable w(onnx_test::pattern({3, 2}, 1.f), "w");
  auto f = function([&](const Tensor& x) { return relu(matmul(x, w)); });
  ConcreteFunction& cf = f.get_concrete_function({{DType::kFloat32, {-1, 3}}});
  const auto dir = std::filesystem::temp_directory_path() / absl::StrCat("tapeflow_onnx_", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.onnx").string();
  export_onnx(cf, path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_EQ(bytes.str(), onnx_model_bytes(cf));
  const onnx::GraphProto og = parse(bytes.str()).graph();
  ASSERT_EQ(og.initializer_size(), 1);
  EXPECT_EQ(og.initializer(0).name(), "w");  // the variable's node name
  EXPECT_THAT(floats_of(og.initializer(0)), ElementsAreArray(w.read().to_vector<float>()));
  // Two reads of one variable share its initializer.
  auto twice = function([&](const Tensor& x) { return matmul(x, w) - matmul(x * 2.f, w); });
  const onnx::GraphProto og2 = parse(onnx_model_bytes(twice.get_concrete_function({{DType::kFloat32, {1, 3}}}))).graph();
  expect_well_formed(og2);
  ASSERT_EQ(og2.initializer_size(), 2);  // w and the scalar 2
  int reads_of_w = 0;
  for (const auto& n : og2.node()) reads_of_w += n.op_type() == "MatMul" && n.input(1) == "w";
  EXPECT_EQ(reads_of_w, 2);
  // The value is the variable's value now: an assignment shows in the next export.
  w.assign(Tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}));
  EXPECT_THAT(floats_of(parse(onnx_model_bytes(cf)).graph().initializer(0)), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(error_of<NotFoundError>([&] { export_onnx(cf, (dir / "missing" / "m.onnx").string()); }),
              HasSubstr("missing"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tapeflow
