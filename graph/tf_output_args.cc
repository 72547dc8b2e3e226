#include "graph/tf_output_args.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"

namespace tapeflow::graph_def_internal {

namespace {

// From TensorFlow's op registrations (tensorflow/core/ops/*.cc): "Type arg arg* ...;", `*`
// marking a list arg.
constexpr const char* kTable =
    // The types import_graph_def reads as another op (alias_of) or as a composite.
    "FusedBatchNorm y batch_mean batch_variance reserve_space_1 reserve_space_2;"
    "FusedBatchNormV2 y batch_mean batch_variance reserve_space_1 reserve_space_2;"
    "BatchMatMul output;BatchMatMulV3 output;Snapshot output;PreventGradient output;Inv y;BiasAddV1 output;"
    "Mod z;NonMaxSuppression selected_indices;NonMaxSuppressionV2 selected_indices;"
    "NonMaxSuppressionV4 selected_indices valid_outputs;SpaceToBatch output;BatchToSpace output;"
    // The types tapeflow writes.
    "Abs y;Acos y;Acosh y;Add z;AddV2 z;AddN sum;All output;Any output;ArgMax output;ArgMin output;"
    "Asin y;Asinh y;Atan y;Atan2 z;Atanh y;AvgPool output;AvgPoolGrad output;BatchToSpaceND output;"
    "BiasAdd output;BiasAddGrad output;BroadcastTo output;Cast y;Ceil y;CheckNumerics output;"
    "ClipByValue output;"
    "CombinedNonMaxSuppression nmsed_boxes nmsed_scores nmsed_classes valid_detections;"
    "ConcatV2 output;Conv2D output;Conv2DBackpropFilter output;Conv2DBackpropInput output;Cos y;"
    "Cosh y;CropAndResize crops;CropAndResizeGradBoxes output;CropAndResizeGradImage output;"
    "Cumprod out;Cumsum out;DepthToSpace output;DepthwiseConv2dNative output;"
    "DepthwiseConv2dNativeBackpropFilter output;DepthwiseConv2dNativeBackpropInput output;Div z;"
    "RealDiv z;DivNoNan z;Elu activations;EluGrad backprops;Equal z;Erf y;Erfc y;Exp y;"
    "ExpandDims output;Expm1 y;Fill output;Floor y;FloorDiv z;FloorMod z;"
    "FusedBatchNormV3 y batch_mean batch_variance reserve_space_1 reserve_space_2 reserve_space_3;"
    "GatherNd output;GatherV2 output;Greater z;GreaterEqual z;Identity output;IdentityN output*;"
    "InvertPermutation y;IsFinite y;IsInf y;IsNan y;L2Loss output;LRN output;LRNGrad output;"
    "LeakyRelu activations;LeakyReluGrad backprops;Less z;LessEqual z;LinSpace output;Log y;Log1p y;"
    "LogSoftmax logsoftmax;LogicalAnd z;LogicalNot y;LogicalOr z;MatMul product;BatchMatMulV2 output;"
    "MatrixBandPart band;Max output;MaxPool output;MaxPoolGrad output;MaxPoolGradGrad output;"
    "Maximum z;Mean output;Min output;Minimum z;MirrorPad output;Mul z;Neg y;"
    "NonMaxSuppressionV3 selected_indices;"
    "NonMaxSuppressionV5 selected_indices selected_scores valid_outputs;NotEqual z;OneHot output;"
    "OnesLike y;Pack output;Pad output;PadV2 output;Pow z;Prod output;RandomStandardNormal output;"
    "RandomUniform output;Range output;Rank output;Reciprocal y;Relu activations;Relu6 activations;"
    "Relu6Grad backprops;ReluGrad backprops;Reshape output;ResizeBilinear resized_images;"
    "ResizeBilinearGrad output;ResizeNearestNeighbor resized_images;ResizeNearestNeighborGrad output;"
    "ReverseV2 output;Rint y;Round y;Rsqrt y;ScatterNd output;Select output;SelectV2 output;"
    "Selu activations;SeluGrad backprops;Shape output;Sigmoid y;SigmoidGrad z;Sign y;Sin y;Sinh y;"
    "Size output;Slice output;Softmax softmax;Softplus activations;SoftplusGrad backprops;"
    "Softsign activations;SoftsignGrad backprops;SpaceToBatchND output;SpaceToDepth output;"
    "Split output*;SplitV output*;Sqrt y;Square y;SquaredDifference z;Squeeze output;"
    "StopGradient output;StridedSlice output;Sub z;Sum output;Tan y;Tanh y;TanhGrad z;"
    "TensorScatterUpdate output;Tile output;TopKV2 values indices;Transpose y;TruncateDiv z;"
    "TruncateMod z;TruncatedNormal output;Unique y idx;Unpack output*;UnsortedSegmentSum output;"
    "Where index;Xdivy z;Xlogy z;ZerosLike y;Const output;Placeholder output;"
    "PlaceholderWithDefault output;NoOp;Assert;Print output;VarHandleOp resource;"
    "ReadVariableOp value;AssignVariableOp;AssignAddVariableOp;AssignSubVariableOp;If output*;"
    "StatelessIf output*;While output*;StatelessWhile output*;Case output*;StatelessCase output*;"
    "Einsum output;"
    // TensorFlow 2's TensorLists, read as those buffers (Note [TensorLists in a GraphDef]).
    "TensorListReserve handle;TensorListFromTensor output_handle;EmptyTensorList handle;"
    "TensorListSetItem output_handle;TensorListGetItem item;TensorListStack tensor;TensorListLength length;"
    "TensorListGather values;TensorListPushBack output_handle;"
    // tapeflow's own: TensorArrays held as buffers (Note [TensorArrays in a GraphDef]).
    "TensorArrayBuffer output;TensorArrayBufferWrite output;TensorArrayBufferScatter output;TensorArrayBufferUnstack output;"
    "TensorArrayBufferRead output;TensorArrayBufferGather output;TensorArrayBufferSize output;";

}  // namespace

const std::vector<OutputArg>* tf_output_args(std::string_view tf_type) {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string_view, std::vector<OutputArg>>();
    for (absl::string_view entry : absl::StrSplit(kTable, ';', absl::SkipEmpty())) {
      std::vector<absl::string_view> words = absl::StrSplit(entry, ' ', absl::SkipEmpty());
      std::vector<OutputArg>& args = (*t)[std::string_view(words[0].data(), words[0].size())];
      for (size_t k = 1; k < words.size(); ++k) {
        const bool list = words[k].back() == '*';
        args.push_back(OutputArg{std::string_view(words[k].data(), words[k].size() - (list ? 1 : 0)), list});
      }
    }
    return t;
  }();
  const auto it = table->find(tf_type);
  return it == table->end() ? nullptr : &it->second;
}

std::optional<std::pair<std::string_view, int>> output_arg_of(const std::vector<OutputArg>& args, int index) {
  int first = 0;
  for (const OutputArg& a : args) {
    if (a.list) return std::make_pair(a.name, index - first);  // a list arg is an op's last
    if (index == first) return std::make_pair(a.name, 0);
    ++first;
  }
  return std::nullopt;
}

int output_index_of(const std::vector<OutputArg>& args, std::string_view arg, int index) {
  int first = 0;
  for (const OutputArg& a : args) {
    if (a.name == arg) return a.list ? first + index : (index == 0 ? first : -1);
    ++first;
  }
  return -1;
}

}  // namespace tapeflow::graph_def_internal
