// Every differentiable op in the registry, checked against central differences in float64.
//
// The table below has one or more cases per op type. A differentiable op without a case, or
// without a registered gradient, fails RegistryIsCovered; a wrong gradient fails its case.
#include <functional>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

struct Case {
  std::string name;
  std::vector<Tensor> inputs;   // float64 inputs are differentiated; others are held fixed
  std::function<Tensor(const std::vector<Tensor>&)> fn;
};

Tensor rnd(std::vector<int64_t> shape, double lo, double hi, int64_t seed) {
  return random_uniform(Shape(shape), lo, hi, DType::kFloat64, seed);
}

// Signed values with |x| in [0.5, 2]: away from the kinks of abs, sign and relu.
Tensor signed_away_from_zero(std::vector<int64_t> shape, int64_t seed) {
  Tensor m = rnd(shape, 0.5, 2.0, seed);
  Tensor s = where(greater(rnd(shape, 0, 1, seed + 1000), 0.5), 1.0, -1.0);
  return m * s;
}

// 0..n-1 scrambled: i * 7 mod n is a permutation when n is coprime to 7 (distinct values).
Tensor scrambled_values(int64_t n) { return mod(range<int64_t>(0, n) * 7, n); }

std::map<std::string, std::vector<Case>> make_cases() {
  std::map<std::string, std::vector<Case>> c;
  auto add = [&](const std::string& type, std::vector<Tensor> in, std::function<Tensor(const std::vector<Tensor>&)> f) {
    c[type].push_back(Case{type + "#" + std::to_string(c[type].size()), std::move(in), std::move(f)});
  };
  using V = std::vector<Tensor>;
  // Unary.
  add("Neg", {rnd({2, 3}, -1, 1, 1)}, [](const V& v) { return neg(v[0]); });
  add("Abs", {signed_away_from_zero({2, 3}, 2)}, [](const V& v) { return abs(v[0]); });
  add("Sign", {signed_away_from_zero({4}, 3)}, [](const V& v) { return sign(v[0]); });
  add("Square", {rnd({3}, -2, 2, 4)}, [](const V& v) { return square(v[0]); });
  add("Sqrt", {rnd({3}, 0.5, 3, 5)}, [](const V& v) { return sqrt(v[0]); });
  add("Rsqrt", {rnd({3}, 0.5, 3, 6)}, [](const V& v) { return rsqrt(v[0]); });
  add("Exp", {rnd({2, 2}, -1, 1, 7)}, [](const V& v) { return exp(v[0]); });
  add("Log", {rnd({3}, 0.5, 3, 8)}, [](const V& v) { return log(v[0]); });
  add("Log1p", {rnd({3}, 0.1, 3, 9)}, [](const V& v) { return log1p(v[0]); });
  add("Tanh", {rnd({3}, -2, 2, 10)}, [](const V& v) { return tanh(v[0]); });
  add("Sigmoid", {rnd({3}, -3, 3, 11)}, [](const V& v) { return sigmoid(v[0]); });
  // The math family (eager/ops/math.h); rounding ops away from their jumps.
  add("Reciprocal", {signed_away_from_zero({2, 3}, 140)}, [](const V& v) { return reciprocal(v[0]); });
  add("Expm1", {rnd({3}, -2, 2, 141)}, [](const V& v) { return expm1(v[0]); });
  add("Sin", {rnd({2, 2}, -3, 3, 142)}, [](const V& v) { return sin(v[0]); });
  add("Cos", {rnd({2, 2}, -3, 3, 143)}, [](const V& v) { return cos(v[0]); });
  add("Tan", {rnd({3}, -1.2, 1.2, 144)}, [](const V& v) { return tan(v[0]); });
  add("DepthToSpace", {rnd({1, 2, 1, 8}, -1, 1, 249)}, [](const V& v) { return depth_to_space(v[0], 2); });
  add("SpaceToDepth", {rnd({1, 2, 4, 2}, -1, 1, 250)}, [](const V& v) { return space_to_depth(v[0], 2, "NCHW"); });
  add("SpaceToBatchND", {rnd({2, 3, 2, 2}, -1, 1, 255)},
      [](const V& v) { return space_to_batch_nd(v[0], {2, 2}, {{1, 0}, {0, 2}}); });
  add("BatchToSpaceND", {rnd({4, 2, 2, 1}, -1, 1, 256)},
      [](const V& v) { return batch_to_space_nd(v[0], {2, 1}, {{1, 2}, {0, 1}}); });
  add("MatrixBandPart", {rnd({2, 3, 4}, -1, 1, 248)}, [](const V& v) { return matrix_band_part(v[0], 1, 0); });
  add("Atan2", {rnd({2, 3}, -2, 2, 251), rnd({3}, 0.5, 2, 252)}, [](const V& v) { return atan2(v[0], v[1]); });
  add("CheckNumerics", {rnd({2, 3}, -2, 2, 262)}, [](const V& v) { return check_numerics(v[0], "checked"); });
  add("L2Loss", {rnd({2, 3}, -2, 2, 261)}, [](const V& v) { return l2_loss(v[0]); });
  add("Xlogy", {rnd({2, 3}, -2, 2, 257), rnd({3}, 0.5, 2, 258)}, [](const V& v) { return xlogy(v[0], v[1]); });
  add("Xdivy", {rnd({3}, -2, 2, 259), rnd({2, 3}, 0.5, 2, 260)}, [](const V& v) { return xdivy(v[0], v[1]); });
  add("Atan2", {rnd({3}, -2, 2, 253), rnd({2, 3}, -2, -0.5, 254)}, [](const V& v) { return atan2(v[0], v[1]); });
  add("Asin", {rnd({3}, -0.9, 0.9, 240)}, [](const V& v) { return asin(v[0]); });
  add("Acos", {rnd({3}, -0.9, 0.9, 241)}, [](const V& v) { return acos(v[0]); });
  add("Atan", {rnd({3}, -3, 3, 242)}, [](const V& v) { return atan(v[0]); });
  add("Sinh", {rnd({3}, -2, 2, 243)}, [](const V& v) { return sinh(v[0]); });
  add("Cosh", {rnd({3}, -2, 2, 244)}, [](const V& v) { return cosh(v[0]); });
  add("Asinh", {rnd({3}, -3, 3, 245)}, [](const V& v) { return asinh(v[0]); });
  add("Acosh", {rnd({3}, 1.2, 4, 246)}, [](const V& v) { return acosh(v[0]); });
  add("Atanh", {rnd({3}, -0.9, 0.9, 247)}, [](const V& v) { return atanh(v[0]); });
  add("Erf", {rnd({4}, -2, 2, 145)}, [](const V& v) { return erf(v[0]); });
  add("Erfc", {rnd({4}, -2, 2, 146)}, [](const V& v) { return erfc(v[0]); });
  add("SquaredDifference", {rnd({2, 3}, -1, 1, 147), rnd({3}, -1, 1, 148)},
      [](const V& v) { return squared_difference(v[0], v[1]); });
  add("DivNoNan", {rnd({2, 3}, -1, 1, 149), signed_away_from_zero({3}, 150)},
      [](const V& v) { return div_no_nan(v[0], v[1]); });
  add("AddN", {rnd({2, 3}, -1, 1, 151), rnd({2, 3}, -1, 1, 152), rnd({2, 3}, -1, 1, 153)},
      [](const V& v) { return add_n({v[0], v[1], v[2] * v[0]}); });
  // Values away from the bounds; scalar bounds and bounds of t's shape.
  add("ClipByValue", {Tensor{-2.0, -0.3, 0.4, 1.7}, Tensor{-1.0}, Tensor{1.0}},
      [](const V& v) { return clip_by_value(v[0], reshape(v[1], {}), reshape(v[2], {})); });
  add("ClipByValue", {Tensor{{-2.0, 0.5}, {0.1, 3.0}}, Tensor{{-1.0, 0.0}, {0.2, -1.0}}, Tensor{{1.0, 2.0}, {0.3, 1.0}}},
      [](const V& v) { return clip_by_value(v[0], v[1], v[2]); });
  // Activations (away from their kinks) and their gradient ops.
  add("Relu", {signed_away_from_zero({2, 3}, 101)}, [](const V& v) { return relu(v[0]); });
  add("Relu6", {Tensor{-1.0, 0.5, 3.0, 5.5, 7.0}}, [](const V& v) { return relu6(v[0]); });
  add("Elu", {signed_away_from_zero({2, 3}, 102)}, [](const V& v) { return elu(v[0]); });
  add("Selu", {signed_away_from_zero({2, 3}, 103)}, [](const V& v) { return selu(v[0]); });
  add("Softplus", {rnd({4}, -3, 3, 104)}, [](const V& v) { return softplus(v[0]); });
  add("Softsign", {signed_away_from_zero({4}, 105)}, [](const V& v) { return softsign(v[0]); });
  add("LeakyRelu", {signed_away_from_zero({4}, 106)}, [](const V& v) { return leaky_relu(v[0], 0.3); });
  add("ReluGrad", {rnd({4}, -1, 1, 107), signed_away_from_zero({4}, 108)},
      [](const V& v) { return relu_grad(v[0], v[1]); });
  add("Relu6Grad", {rnd({4}, -1, 1, 109), Tensor{-1.0, 0.5, 5.5, 7.0}}, [](const V& v) { return relu6_grad(v[0], v[1]); });
  add("EluGrad", {rnd({4}, -1, 1, 110), Tensor{-0.9, -0.3, 0.4, 2.0}}, [](const V& v) { return elu_grad(v[0], v[1]); });
  add("SeluGrad", {rnd({4}, -1, 1, 111), Tensor{-1.5, -0.3, 0.4, 2.0}}, [](const V& v) { return selu_grad(v[0], v[1]); });
  add("SoftplusGrad", {rnd({4}, -1, 1, 112), rnd({4}, -3, 3, 113)}, [](const V& v) { return softplus_grad(v[0], v[1]); });
  add("SoftsignGrad", {rnd({4}, -1, 1, 114), signed_away_from_zero({4}, 115)},
      [](const V& v) { return softsign_grad(v[0], v[1]); });
  add("LeakyReluGrad", {rnd({4}, -1, 1, 116), signed_away_from_zero({4}, 117)},
      [](const V& v) { return leaky_relu_grad(v[0], v[1], 0.3); });
  add("SigmoidGrad", {rnd({4}, 0.1, 0.9, 118), rnd({4}, -1, 1, 119)}, [](const V& v) { return sigmoid_grad(v[0], v[1]); });
  add("TanhGrad", {rnd({4}, -0.9, 0.9, 120), rnd({4}, -1, 1, 121)}, [](const V& v) { return tanh_grad(v[0], v[1]); });
  // Softmax and LogSoftmax over the last axis, and another axis (moved last around the node).
  add("Softmax", {rnd({2, 4}, -2, 2, 188)}, [](const V& v) { return softmax(v[0]); });
  add("Softmax", {rnd({3, 2}, -2, 2, 189)}, [](const V& v) { return softmax(v[0], 0); });
  add("LogSoftmax", {rnd({2, 4}, -2, 2, 190)}, [](const V& v) { return log_softmax(v[0]); });
  // Binary, including broadcasting in both directions.
  add("Add", {rnd({2, 3}, -1, 1, 12), rnd({3}, -1, 1, 13)}, [](const V& v) { return v[0] + v[1]; });
  add("Add", {rnd({2, 1}, -1, 1, 14), rnd({1, 3}, -1, 1, 15)}, [](const V& v) { return v[0] + v[1]; });
  add("Sub", {rnd({3}, -1, 1, 16), rnd({2, 3}, -1, 1, 17)}, [](const V& v) { return v[0] - v[1]; });
  add("Mul", {rnd({2, 3}, -1, 1, 18), rnd({2, 1}, -1, 1, 19)}, [](const V& v) { return v[0] * v[1]; });
  add("Div", {rnd({2, 3}, -1, 1, 20), rnd({3}, 0.5, 2, 21)}, [](const V& v) { return v[0] / v[1]; });
  add("FloorMod", {rnd({3}, 0.1, 0.9, 22), rnd({3}, 2, 3, 23)}, [](const V& v) { return mod(v[0], v[1]); });
  add("Pow", {rnd({3}, 0.5, 2, 24), rnd({3}, -1, 2, 25)}, [](const V& v) { return pow(v[0], v[1]); });
  add("Maximum", {Tensor{0.1, 2.5, -1.0}, Tensor{1.0, 0.5, -3.0}}, [](const V& v) { return maximum(v[0], v[1]); });
  add("Minimum", {Tensor{0.1, 2.5, -1.0}, Tensor{1.0, 0.5, -3.0}}, [](const V& v) { return minimum(v[0], v[1]); });
  add("Select", {Tensor{true, false, true}, rnd({2, 3}, -1, 1, 26), rnd({3}, -1, 1, 27)},
      [](const V& v) { return where(v[0], v[1], v[2]); });
  add("Cast", {rnd({3}, -1, 1, 28)}, [](const V& v) { return cast(v[0], DType::kFloat64); });
  // Array.
  add("Reshape", {rnd({2, 3}, -1, 1, 29)}, [](const V& v) { return reshape(v[0], {3, -1}); });
  add("ExpandDims", {rnd({2, 3}, -1, 1, 30)}, [](const V& v) { return expand_dims(v[0], 1); });
  add("Squeeze", {rnd({2, 1, 3}, -1, 1, 31)}, [](const V& v) { return squeeze(v[0]); });
  add("Identity", {rnd({3}, -1, 1, 32)}, [](const V& v) { return identity(v[0]); });
  add("IdentityN", {rnd({3}, -1, 1, 30), rnd({2, 2}, -1, 1, 31)}, [](const V& v) {
    const std::vector<Tensor> both = identity_n({v[0], v[1]});
    return both[0] * reduce_sum(both[1] * both[1]);
  });
  add("Transpose", {rnd({2, 3, 4}, -1, 1, 33)}, [](const V& v) { return transpose(v[0], {2, 0, 1}); });
  add("ConcatV2", {rnd({2, 3}, -1, 1, 34), rnd({2, 2}, -1, 1, 35)}, [](const V& v) { return concat({v[0], v[1]}, 1); });
  add("Slice", {rnd({3, 4}, -1, 1, 36)}, [](const V& v) { return slice(v[0], {1, 1}, {2, -1}); });
  add("StridedSlice", {rnd({4, 5}, -1, 1, 37)},
      [](const V& v) { return strided_slice(v[0], {3, 0}, {0, 5}, {-1, 2}); });
  add("GatherV2", {rnd({4, 3}, -1, 1, 38), Tensor{2, 0, 2}}, [](const V& v) { return gather(v[0], v[1]); });
  add("GatherV2", {rnd({2, 4, 3}, -1, 1, 39), Tensor{{3, 1}, {1, 1}}}, [](const V& v) { return gather(v[0], v[1], 1); });
  add("PadV2", {rnd({2, 3}, -1, 1, 40)}, [](const V& v) { return pad(v[0], {{1, 0}, {2, 1}}, 2.0); });
  add("Pad", {rnd({2, 3}, -1, 1, 182)}, [](const V& v) { return pad(v[0], {{1, 0}, {2, 1}}); });
  // Stacking and splitting; one piece left unused gets a zero gradient.
  add("Pack", {rnd({2, 3}, -1, 1, 183), rnd({2, 3}, -1, 1, 184)}, [](const V& v) { return stack({v[0], v[1] * v[0]}, 1); });
  add("Unpack", {rnd({3, 2, 2}, -1, 1, 185)}, [](const V& v) {
    const std::vector<Tensor> parts = unstack(v[0], 1);
    return parts[0] * parts[1] + parts[0];
  });
  add("Split", {rnd({2, 6}, -1, 1, 186)}, [](const V& v) {
    const std::vector<Tensor> parts = split(v[0], 3, 1);
    return parts[0] * parts[2];
  });
  add("SplitV", {rnd({4, 3}, -1, 1, 187)}, [](const V& v) {
    const std::vector<Tensor> parts = split(v[0], {1, -1}, 0);
    return parts[1] * reduce_sum(parts[0]);
  });
  add("Tile", {rnd({2, 3}, -1, 1, 41)}, [](const V& v) { return tile(v[0], {2, 3}); });
  add("UnsortedSegmentSum", {rnd({4, 2}, -1, 1, 42), Tensor{1, 0, 1, 2}},
      [](const V& v) { return unsorted_segment_sum(v[0], v[1], 3); });
  add("ReverseV2", {rnd({2, 3, 4}, -1, 1, 160)}, [](const V& v) { return reverse(v[0], {0, -1}); });
  add("MirrorPad", {rnd({3, 4}, -1, 1, 175)}, [](const V& v) { return mirror_pad(v[0], {{2, 1}, {0, 3}}, "REFLECT"); });
  add("MirrorPad", {rnd({2, 3, 2}, -1, 1, 176)},
      [](const V& v) { return mirror_pad(v[0], {{1, 2}, {3, 0}, {2, 2}}, "SYMMETRIC"); });
  add("BroadcastTo", {rnd({3, 1}, -1, 1, 161)}, [](const V& v) { return broadcast_to(v[0], {2, 3, 4}); });
  // Scans, every exclusive / reverse combination (cumprod away from 0: its gradient divides by x).
  for (int flags = 0; flags < 4; ++flags) {
    const bool exclusive = flags & 1, reverse = flags & 2;
    add("Cumsum", {rnd({3, 4}, -1, 1, 162 + flags)},
        [=](const V& v) { return cumsum(v[0], flags % 2 ? 1 : 0, exclusive, reverse); });
    add("Cumprod", {rnd({3, 4}, 0.5, 1.5, 166 + flags) * signed_away_from_zero({3, 4}, 170 + flags)},
        [=](const V& v) { return cumprod(v[0], flags % 2 ? -1 : 0, exclusive, reverse); });
  }
  // Reductions (distinct values, so max/min have no ties; nonzero for prod).
  add("Sum", {rnd({2, 3, 4}, -1, 1, 43)}, [](const V& v) { return reduce_sum(v[0], {0, 2}); });
  add("Mean", {rnd({2, 3, 4}, -1, 1, 180)}, [](const V& v) { return reduce_mean(v[0], {0, 2}); });
  add("Mean", {rnd({2, 3}, -1, 1, 181)}, [](const V& v) { return reduce_mean(v[0], {-1}, true); });
  add("Sum", {rnd({2, 3}, -1, 1, 122)}, [](const V& v) { return reduce_sum(v[0], {}) * v[0]; });  // axis=[]: none
  add("Sum", {rnd({2, 3}, -1, 1, 44)}, [](const V& v) { return reduce_sum(v[0], {-1}, true); });
  add("Max", {rnd({3, 4}, -1, 1, 45)}, [](const V& v) { return reduce_max(v[0], {1}); });
  add("Min", {rnd({3, 4}, -1, 1, 46)}, [](const V& v) { return reduce_min(v[0], {0}, true); });
  add("Prod", {rnd({2, 3}, 0.5, 1.5, 47)}, [](const V& v) { return reduce_prod(v[0], {1}); });
  // Zeros (prod is multilinear, so central differences are exact there too): one zero in a
  // reduced slice, two zeros in one, and zeros across non-adjacent reduced axes.
  add("Prod", {Tensor{{0.7, 0.0, 1.3, -0.9}, {1.1, 0.8, -1.2, 0.6}}},
      [](const V& v) { return reduce_prod(v[0], {1}); });
  add("Prod", {Tensor{{0.0, 1.2, 0.0}, {0.5, 0.0, 1.5}, {0.9, 1.1, 1.3}}},
      [](const V& v) { return reduce_prod(v[0], {0}); });
  {
    std::vector<double> mask(30, 1.0);
    mask[1] = 0;                  // [0, 0, 1]: one zero in slice 0
    mask[19] = mask[25] = 0;      // [1, 1, 4] and [2, 1, 0]: two zeros in slice 1
    add("Prod", {rnd({3, 2, 5}, 0.5, 1.5, 70) * Tensor(mask, Shape{3, 2, 5})},
        [](const V& v) { return reduce_prod(v[0], {0, 2}, true); });
  }
  add("Prod", {Tensor{{0.0, 1.5}, {0.0, -2.0}}}, [](const V& v) { return reduce_prod(v[0]); });
  // Matrix products: every flag combination and broadcast batch dims.
  for (int flags = 0; flags < 4; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    add("MatMul", {rnd(ta ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3}, -1, 1, 48 + flags),
                   rnd(tb ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4}, -1, 1, 52 + flags)},
        [ta, tb](const V& v) { return matmul(v[0], v[1], ta, tb); });
  }
  add("MatMul", {rnd({2, 1, 2, 3}, -1, 1, 56), rnd({3, 3, 2}, -1, 1, 57)},
      [](const V& v) { return matmul(v[0], v[1]); });
  // Convolutions and pooling (NHWC), SAME and VALID, strides 1 and 2.
  add("Conv2D", {rnd({2, 5, 5, 2}, -1, 1, 58), rnd({3, 3, 2, 3}, -1, 1, 59)},
      [](const V& v) { return conv2d(v[0], v[1], {1, 1}, "SAME"); });
  add("Conv2D", {rnd({1, 6, 5, 1}, -1, 1, 60), rnd({2, 3, 1, 2}, -1, 1, 61)},
      [](const V& v) { return conv2d(v[0], v[1], {2, 2}, "VALID"); });
  add("Conv2DBackpropInput", {rnd({3, 3, 2, 3}, -1, 1, 62), rnd({1, 3, 3, 3}, -1, 1, 63)},
      [](const V& v) { return conv2d_backprop_input({1, 5, 5, 2}, v[0], v[1], {2, 2}, "SAME"); });
  add("Conv2DBackpropFilter", {rnd({1, 5, 5, 2}, -1, 1, 64), rnd({1, 3, 3, 3}, -1, 1, 65)},
      [](const V& v) { return conv2d_backprop_filter(v[0], {3, 3, 2, 3}, v[1], {2, 2}, "SAME"); });
  // Distinct values per window (a permutation), so max_pool has no ties.
  add("MaxPool", {reshape(cast(scrambled_values(36), DType::kFloat64) * 0.1, {1, 6, 6, 1})},
      [](const V& v) { return max_pool(v[0], {2, 2}, {2, 2}, "VALID"); });
  add("MaxPool", {reshape(cast(scrambled_values(50), DType::kFloat64) * 0.1, {1, 5, 5, 2})},
      [](const V& v) { return max_pool(v[0], {3, 3}, {2, 2}, "SAME"); });
  // The gradient primitives of max_pool (second order): linear in their grad input, constant
  // in orig_input and orig_output away from ties (the numeric derivative there is 0).
  {
    const Tensor x1 = reshape(cast(scrambled_values(36), DType::kFloat64) * 0.1, {1, 6, 6, 1});
    const Tensor x2 = reshape(cast(scrambled_values(50), DType::kFloat64) * 0.1, {1, 5, 5, 2});
    const Tensor y1 = max_pool(x1, {2, 2}, {2, 2}, "VALID"), y2 = max_pool(x2, {3, 3}, {2, 2}, "SAME");
    add("MaxPoolGrad", {x1, y1, rnd({1, 3, 3, 1}, -1, 1, 71)},
        [](const V& v) { return max_pool_grad(v[0], v[1], v[2], {2, 2}, {2, 2}, "VALID"); });
    add("MaxPoolGrad", {x2, y2, rnd({1, 3, 3, 2}, -1, 1, 72)},
        [](const V& v) { return max_pool_grad(v[0], v[1], v[2], {3, 3}, {2, 2}, "SAME"); });
    add("MaxPoolGradGrad", {x1, y1, rnd({1, 6, 6, 1}, -1, 1, 73)},
        [](const V& v) { return max_pool_grad_grad(v[0], v[1], v[2], {2, 2}, {2, 2}, "VALID"); });
    add("MaxPoolGradGrad", {x2, y2, rnd({1, 5, 5, 2}, -1, 1, 74)},
        [](const V& v) { return max_pool_grad_grad(v[0], v[1], v[2], {3, 3}, {2, 2}, "SAME"); });
  }
  add("AvgPool", {rnd({1, 5, 5, 2}, -1, 1, 68)}, [](const V& v) { return avg_pool(v[0], {3, 3}, {2, 2}, "SAME"); });
  add("AvgPoolGrad", {rnd({1, 3, 3, 2}, -1, 1, 69)},
      [](const V& v) { return avg_pool_grad({1, 5, 5, 2}, v[0], {3, 3}, {2, 2}, "SAME"); });
  // N-d gathers and scatters (repeated indices add up in the gradients), gather's batch_dims.
  add("GatherNd", {rnd({3, 4}, -1, 1, 180), Tensor{{2, 1}, {0, 3}, {2, 1}}}, [](const V& v) { return gather_nd(v[0], v[1]); });
  add("GatherNd", {rnd({3, 2, 2}, -1, 1, 181), Tensor{{{1}, {1}}, {{0}, {2}}}},
      [](const V& v) { return gather_nd(v[0], v[1]); });
  add("ScatterNd", {Tensor{{1}, {3}, {1}}, rnd({3, 2}, -1, 1, 182)}, [](const V& v) { return scatter_nd(v[0], v[1], {4, 2}); });
  add("ScatterNd", {Tensor{{1, 0}, {0, 2}}, rnd({2}, -1, 1, 183)}, [](const V& v) { return scatter_nd(v[0], v[1], {2, 3}); });
  add("TensorScatterUpdate", {rnd({4, 3}, -1, 1, 184), Tensor{{1}, {3}}, rnd({2, 3}, -1, 1, 185)},
      [](const V& v) { return tensor_scatter_update(v[0], v[1], v[2]); });
  add("TensorScatterUpdate", {rnd({2, 3}, -1, 1, 186), Tensor{{0, 2}, {1, 0}}, rnd({2}, -1, 1, 187)},
      [](const V& v) { return tensor_scatter_update(v[0], v[1], v[2]); });
  add("GatherV2", {rnd({2, 4, 3}, -1, 1, 188), Tensor{{3, 1, 3}, {0, 0, 2}}},
      [](const V& v) { return gather(v[0], v[1], 1, 1); });
  add("GatherV2", {rnd({2, 3, 4, 2}, -1, 1, 189), Tensor{{{3}, {1}}, {{0}, {0}}}},
      [](const V& v) { return gather(v[0], v[1], 2, -2); });
  // top_k: distinct values 0.1 apart, so a finite difference never reorders them.
  add("TopKV2", {reshape(cast(scrambled_values(12), DType::kFloat64) * 0.1, {3, 4}) + rnd({3, 4}, 0, 0.01, 190)},
      [](const V& v) { return top_k(v[0], 2).values; });
  // TensorFlow parity (issue 14).
  add("Conv2D", {rnd({1, 7, 6, 2}, -1, 1, 200), rnd({2, 3, 2, 2}, -1, 1, 201)},
      [](const V& v) { return conv2d(v[0], v[1], {1, 1}, "SAME", {2, 2}); });
  add("Conv2DBackpropInput", {rnd({2, 2, 2, 3}, -1, 1, 202), rnd({1, 2, 2, 3}, -1, 1, 203)},
      [](const V& v) { return conv2d_backprop_input({1, 6, 5, 2}, v[0], v[1], {2, 2}, "VALID", {2, 1}); });
  add("Conv2DBackpropFilter", {rnd({1, 6, 5, 2}, -1, 1, 204), rnd({1, 3, 3, 3}, -1, 1, 205)},
      [](const V& v) { return conv2d_backprop_filter(v[0], {2, 2, 2, 3}, v[1], {2, 2}, "SAME", {1, 2}); });
  add("DepthwiseConv2dNative", {rnd({2, 5, 5, 2}, -1, 1, 206), rnd({3, 3, 2, 2}, -1, 1, 207)},
      [](const V& v) { return depthwise_conv2d(v[0], v[1], {1, 1}, "SAME"); });
  add("DepthwiseConv2dNative", {rnd({1, 7, 6, 3}, -1, 1, 208), rnd({2, 2, 3, 1}, -1, 1, 209)},
      [](const V& v) { return depthwise_conv2d(v[0], v[1], {2, 2}, "VALID", {2, 2}); });
  add("DepthwiseConv2dNativeBackpropInput", {rnd({3, 3, 2, 2}, -1, 1, 210), rnd({1, 3, 3, 4}, -1, 1, 211)},
      [](const V& v) { return depthwise_conv2d_backprop_input({1, 5, 5, 2}, v[0], v[1], {2, 2}, "SAME", {1, 2}); });
  add("DepthwiseConv2dNativeBackpropFilter", {rnd({1, 5, 5, 2}, -1, 1, 212), rnd({1, 3, 3, 4}, -1, 1, 213)},
      [](const V& v) { return depthwise_conv2d_backprop_filter(v[0], {3, 3, 2, 2}, v[1], {2, 2}, "SAME", {2, 1}); });
  // NCHW convolutions (Note [NCHW kernels]): their gradients are the backprop ops in NCHW.
  add("Conv2D", {rnd({1, 2, 5, 4}, -1, 1, 230), rnd({3, 2, 2, 3}, -1, 1, 231)},
      [](const V& v) { return conv2d(v[0], v[1], {2, 1}, "SAME", {1, 1}, "NCHW"); });
  add("Conv2DBackpropInput", {rnd({2, 2, 2, 3}, -1, 1, 232), rnd({1, 3, 3, 2}, -1, 1, 233)},
      [](const V& v) { return conv2d_backprop_input({1, 2, 5, 4}, v[0], v[1], {2, 2}, "SAME", {1, 1}, "NCHW"); });
  add("Conv2DBackpropFilter", {rnd({1, 2, 5, 4}, -1, 1, 234), rnd({1, 3, 3, 2}, -1, 1, 235)},
      [](const V& v) { return conv2d_backprop_filter(v[0], {2, 2, 2, 3}, v[1], {2, 2}, "SAME", {1, 1}, "NCHW"); });
  add("DepthwiseConv2dNative", {rnd({1, 2, 5, 5}, -1, 1, 236), rnd({2, 2, 2, 2}, -1, 1, 237)},
      [](const V& v) { return depthwise_conv2d(v[0], v[1], {1, 1}, "VALID", {2, 1}, "NCHW"); });
  add("BiasAdd", {rnd({2, 3, 2}, -1, 1, 214), rnd({2}, -1, 1, 215)}, [](const V& v) { return bias_add(v[0], v[1]); });
  add("BiasAdd", {rnd({2, 3, 2, 2}, -1, 1, 216), rnd({3}, -1, 1, 217)},
      [](const V& v) { return bias_add(v[0], v[1], "NCHW"); });
  add("BiasAddGrad", {rnd({2, 3, 4}, -1, 1, 218)}, [](const V& v) { return bias_add_grad(v[0]); });
  add("BiasAddGrad", {rnd({2, 3, 2, 2}, -1, 1, 219)}, [](const V& v) { return bias_add_grad(v[0], "NCHW"); });
  {
    // Every output that carries a gradient: y, batch_mean and batch_variance, flattened.
    auto all = [](const FusedBatchNormOutputs& t) {
      return concat({reshape(t.y, {-1}), t.batch_mean, t.batch_variance}, 0);
    };
    add("FusedBatchNormV3", {rnd({2, 3, 2, 3}, -1, 1, 220), rnd({3}, 0.5, 1.5, 221), rnd({3}, -1, 1, 222),
                             rnd({0}, 0, 1, 223), rnd({0}, 0, 1, 224)},
        [=](const V& v) { return all(fused_batch_norm(v[0], v[1], v[2], v[3], v[4], 0.01)); });
    add("FusedBatchNormV3", {rnd({2, 2, 3, 2}, -1, 1, 225), rnd({2}, 0.5, 1.5, 226), rnd({2}, -1, 1, 227),
                             rnd({2}, -1, 1, 228), rnd({2}, 0.5, 1.5, 229)},
        [=](const V& v) { return all(fused_batch_norm(v[0], v[1], v[2], v[3], v[4], 0.001, 0.3, "NCHW")); });
    add("FusedBatchNormV3", {rnd({2, 2, 2, 3}, -1, 1, 230), rnd({3}, 0.5, 1.5, 231), rnd({3}, -1, 1, 232),
                             rnd({3}, -1, 1, 233), rnd({3}, 0.5, 1.5, 234)},
        [=](const V& v) { return all(fused_batch_norm(v[0], v[1], v[2], v[3], v[4], 0.001, 1.0, "NHWC", false)); });
  }
  add("LRN", {rnd({1, 2, 2, 5}, -1, 1, 235)},
      [](const V& v) { return local_response_normalization(v[0], 2, 1.5, 0.7, 0.75); });
  add("LRN", {rnd({2, 1, 1, 3}, -2, 2, 236)}, [](const V& v) { return local_response_normalization(v[0], 0, 1, 1, 0.5); });
  add("MaxPool", {reshape(cast(scrambled_values(50), DType::kFloat64) * 0.1, {1, 2, 5, 5})},
      [](const V& v) { return max_pool(v[0], {3, 3}, {2, 2}, "SAME", "NCHW"); });
  add("AvgPool", {rnd({1, 2, 5, 4}, -1, 1, 237)},
      [](const V& v) { return avg_pool(v[0], {1, 1, 3, 2}, {1, 1, 2, 1}, "VALID", "NCHW"); });
  add("AvgPoolGrad", {rnd({1, 2, 3, 3}, -1, 1, 238)},
      [](const V& v) { return avg_pool_grad({1, 2, 5, 5}, v[0], {3, 3}, {2, 2}, "SAME", "NCHW"); });
  {
    const Tensor x = reshape(cast(scrambled_values(50), DType::kFloat64) * 0.1, {1, 2, 5, 5});
    const Tensor y = max_pool(x, {3, 3}, {2, 2}, "SAME", "NCHW");
    add("MaxPoolGrad", {x, y, rnd({1, 2, 3, 3}, -1, 1, 239)},
        [](const V& v) { return max_pool_grad(v[0], v[1], v[2], {3, 3}, {2, 2}, "SAME", "NCHW"); });
    add("MaxPoolGradGrad", {x, y, rnd({1, 2, 5, 5}, -1, 1, 240)},
        [](const V& v) { return max_pool_grad_grad(v[0], v[1], v[2], {3, 3}, {2, 2}, "SAME", "NCHW"); });
  }
  for (int flags = 0; flags < 3; ++flags) {
    const bool align = flags == 1, half = flags == 2;
    add("ResizeBilinear", {rnd({1, 3, 4, 2}, -1, 1, 241 + flags)},
        [=](const V& v) { return resize_bilinear(v[0], {5, 3}, align, half); });
    add("ResizeNearestNeighbor", {rnd({2, 3, 4, 1}, -1, 1, 244 + flags)},
        [=](const V& v) { return resize_nearest_neighbor(v[0], {5, 3}, align, half); });
    add("ResizeBilinearGrad", {rnd({1, 5, 3, 2}, -1, 1, 247 + flags), rnd({1, 3, 4, 2}, -1, 1, 250 + flags)},
        [=](const V& v) { return resize_bilinear_grad(v[0], v[1], align, half); });
    add("ResizeNearestNeighborGrad", {rnd({2, 5, 3, 1}, -1, 1, 253 + flags)},
        [=](const V& v) { return resize_nearest_neighbor_grad(v[0], {3, 4}, align, half); });
  }
  {
    // Boxes whose samples sit between pixel rows and columns (one box partly outside the image),
    // so the bilinear crop is smooth in them: image rows 0.3, 1.35, 2.4 and columns 0.52, 3.68;
    // flipped, rows 2.7, 1.65, 0.6; outside, row -0.6 and column 5.2.
    const std::vector<double> corners{0.1, 0.13, 0.8, 0.92, 0.9, 0.7, 0.2, 0.05, -0.2, 0.3, 0.6, 1.3};
    const Tensor boxes(corners, Shape{3, 4});
    const Tensor fixed_boxes = cast(boxes, DType::kFloat32);
    const Tensor ind(std::vector<int32_t>{0, 1, 1}, Shape{3});
    add("CropAndResize", {rnd({2, 4, 5, 2}, -1, 1, 263), boxes, ind},
        [](const V& v) { return crop_and_resize(v[0], v[1], v[2], {3, 2}, "bilinear", 0.5f); });
    add("CropAndResize", {rnd({2, 4, 5, 2}, -1, 1, 264), fixed_boxes, ind},
        [](const V& v) { return crop_and_resize(v[0], v[1], v[2], {3, 2}, "nearest"); });
    const Tensor image_size(std::vector<int32_t>{2, 4, 5, 2}, Shape{4});
    for (const char* method : {"bilinear", "nearest"})
      add("CropAndResizeGradImage", {rnd({3, 3, 2, 2}, -1, 1, 265), fixed_boxes, ind, image_size},
          [=](const V& v) { return crop_and_resize_grad_image(v[0], v[1], v[2], v[3], DType::kFloat64, method); });
  }
  {
    // Control flow over functions (graph ops, graph/functional_ops.h), traced so that the tape
    // differentiates the If, Case or While node (eagerly the chosen function runs instead).
    auto zero = [](const Tensor& t) { return zeros_like(t); };
    static auto if_fn = function([=](const Tensor& x, const Tensor& y) {
      const Tensor s = reduce_sum(x);
      return cond(greater(s, zero(s)), [&] { return x * y * y; }, [&] { return sin(x) + y; });
    });
    add("If", {rnd({3}, 0.5, 1, 270), rnd({3}, -1, 1, 271)}, [](const V& v) { return if_fn(v[0], v[1]); });
    add("If", {rnd({3}, -1, -0.5, 272), rnd({3}, -1, 1, 273)}, [](const V& v) { return if_fn(v[0], v[1]); });
    static auto case_fn = function([](const Tensor& i, const Tensor& x) {
      return switch_case(i, {[&] { return V{x * x}; }, [&] { return V{exp(x) * x}; }})[0];
    });
    for (int32_t i : {0, 1, 5})
      add("Case", {Tensor(i), rnd({2, 2}, -1, 1, 274 + i)}, [](const V& v) { return case_fn(v[0], v[1]); });
    // Three iterations of x <- x * w + sin(x), w read unchanged (a capture passed through).
    static auto while_fn = function([](const Tensor& x, const Tensor& w) {
      return while_loop([](const V& v) { return less(v[1], 3); },
                        [&](const V& v) { return V{v[0] * w + sin(v[0]), v[1] + 1}; }, {x, Tensor(int32_t{0})})[0];
    });
    add("While", {rnd({3}, -1, 1, 280), rnd({3}, 0.5, 1.5, 281)}, [](const V& v) { return while_fn(v[0], v[1]); });
  }
  return c;
}

const std::map<std::string, std::vector<Case>>& cases() {
  static const auto* c = new std::map<std::string, std::vector<Case>>(make_cases());
  return *c;
}

// Ops whose gradient refuses with UnimplementedError, as TensorFlow has none (a wrong zero would
// be silent): tests/eager/crop_and_resize_test.cc checks the refusal.
const std::set<std::string> kGradientNotImplemented = {"CropAndResizeGradBoxes"};

TEST(GradientCheckTest, RegistryIsCovered) {
  for (const OpDef* op : OpRegistry::global().ops()) {
    if (!op->differentiable) continue;
    EXPECT_NE(find_gradient(op->type), nullptr) << op->type << " is differentiable but has no gradient";
    if (kGradientNotImplemented.contains(op->type)) continue;
    EXPECT_TRUE(cases().count(op->type)) << op->type << " has no numerical gradient check case";
  }
}

// Loss = sum(f(inputs) * weights): a fixed random projection checks every output element.
double loss_value(const Case& c, const std::vector<Tensor>& inputs, const Tensor& weights) {
  return reduce_sum(cast(c.fn(inputs), DType::kFloat64) * weights).item<double>();
}

class GradientCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(GradientCheck, MatchesCentralDifferences) {
  for (const Case& c : cases().at(GetParam())) {
    SCOPED_TRACE(c.name);
    const Tensor out = c.fn(c.inputs);
    const Tensor weights = rnd(out.shape().as_vector(), -1, 1, 99);
    std::vector<Source> sources;
    std::vector<size_t> diff;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (c.inputs[i].dtype() == DType::kFloat64) { sources.emplace_back(c.inputs[i]); diff.push_back(i); }
    }
    std::vector<Tensor> analytic;
    {
      GradientTape tape;
      for (size_t i : diff) tape.watch(c.inputs[i]);
      Tensor loss = reduce_sum(cast(c.fn(c.inputs), DType::kFloat64) * weights);
      analytic = tape.gradient(loss, sources, Tensor(), Unconnected::kZero);
    }
    const double eps = 1e-6;
    for (size_t k = 0; k < diff.size(); ++k) {
      const size_t i = diff[k];
      ASSERT_TRUE(analytic[k].defined());
      ASSERT_EQ(analytic[k].shape(), c.inputs[i].shape());
      const std::vector<double> a = analytic[k].to_vector<double>();
      std::vector<double> base = c.inputs[i].to_vector<double>();
      for (size_t e = 0; e < base.size(); ++e) {
        std::vector<Tensor> plus = c.inputs, minus = c.inputs;
        std::vector<double> p = base, m = base;
        p[e] += eps;
        m[e] -= eps;
        plus[i] = Tensor(p, c.inputs[i].shape());
        minus[i] = Tensor(m, c.inputs[i].shape());
        const double numeric = (loss_value(c, plus, weights) - loss_value(c, minus, weights)) / (2 * eps);
        EXPECT_NEAR(a[e], numeric, 1e-6 + 1e-5 * std::fabs(numeric)) << "input " << i << " element " << e;
      }
    }
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [type, list] : cases()) names.push_back(type);
  return names;
}

// Where x is exactly 0, TensorFlow's xlogy and xdivy gradients are 0 for both inputs (even at
// y = 0, where log(y) and x / y^2 are infinite): the one point central differences cannot check.
TEST(GradientAtZeroTest, XlogyAndXdivyGiveZeroWhereXIsZero) {
  const Tensor x{0.0, 2.0, 0.0}, y{0.0, 3.0, 5.0};
  for (bool divide : {false, true}) {
    SCOPED_TRACE(divide);
    GradientTape tape;
    tape.watch(x);
    tape.watch(y);
    const Tensor out = reduce_sum(divide ? xdivy(x, y) : xlogy(x, y));
    const std::vector<Tensor> g = tape.gradient(out, {x, y});
    EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{0, divide ? 1.0 / 3 : std::log(3.0), 0}));
    EXPECT_EQ(g[1].to_vector<double>(), (std::vector<double>{0, divide ? -2.0 / 9 : 2.0 / 3, 0}));
  }
}

// A NaN in a gradient that flows back through check_numerics is caught with TensorFlow's words.
TEST(GradientAtZeroTest, CheckNumericsChecksItsGradient) {
  const Tensor x{0.0, 4.0};
  GradientTape tape;
  tape.watch(x);
  const Tensor out = reduce_sum(sqrt(check_numerics(x, "inputs")));  // d sqrt at 0 is inf
  const std::string message = error_of([&] { tape.gradient(out, {x}); });
  EXPECT_THAT(message, ::testing::HasSubstr("Not a number (NaN) or infinity (Inf) values detected in gradient. inputs : "
                                            "Tensor has +Inf at element [0]"));
  // The error says whose gradient failed and where the op and the gradient call are.
  EXPECT_THAT(message, ::testing::HasSubstr("while computing the gradient of CheckNumerics (check_numerics, recorded at "
                                            "gradient_check_test.cc:"));
  EXPECT_THAT(message, ::testing::ContainsRegex("asked at gradient_check_test.cc:[0-9]+"));
}

INSTANTIATE_TEST_SUITE_P(AllOps, GradientCheck, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace tapeflow
