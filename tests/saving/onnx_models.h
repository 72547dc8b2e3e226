// The models the ONNX export tests export: the tutorials' MLP and CNN (smaller widths, the same
// layers), functions that use every other op the export converts (ops, math, array), and
// convolutions and slices over unknown sizes. Shared by
// onnx_test.cc (structure) and onnx/onnx_cases.cc (files for onnx's checker and ONNX Runtime).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "tapeflow.h"

namespace tapeflow::onnx_test {

struct ExportedCase {
  std::string name;
  std::vector<Tensor> inputs;    // sample values
  std::vector<Tensor> expected;  // tapeflow's outputs on them (the traced graph, run by a Session)
  std::string bytes;             // the ONNX model
  std::vector<Variable> variables;
};

// Deterministic values in about [-scale, scale].
inline Tensor pattern(const Shape& shape, float scale, int salt = 0) {
  std::vector<float> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(0.37f * float(i) + 0.11f * float(salt) + 0.5f);
  return Tensor(v, shape);
}

template <typename F>
ExportedCase export_case(std::string name, F fn, const std::vector<TensorSpec>& specs, std::vector<Tensor> inputs,
                         std::vector<Variable> variables = {}) {
  auto traced = function(std::move(fn), FunctionOptions{.name = name});
  ConcreteFunction& cf = traced.get_concrete_function(specs);
  ExportedCase c{std::move(name), std::move(inputs), {}, onnx_model_bytes(cf), std::move(variables)};
  c.expected = cf(c.inputs);
  return c;
}

// Tutorial 03's MLP (Flatten, Dense relu, Dense) with a softmax, on [batch, 784].
inline ExportedCase mlp_case() {
  set_seed(3);
  auto model = std::make_shared<nn::Sequential>(
      std::initializer_list<nn::LayerRef>{nn::Flatten(), nn::Dense(32, nn::Activation::kRelu), nn::Dense(10)});
  (*model)(pattern({1, 784}, 1.f));  // builds the weights eagerly
  return export_case("mlp", [model](const Tensor& x) { return softmax((*model)(x)); },
                     {{DType::kFloat32, {-1, 784}}}, {pattern({3, 784}, 1.f)}, model->trainable_variables());
}

// Tutorial 04's CNN (Conv 5x5 relu, pool, Conv 5x5 relu, pool, Flatten, Dense relu, Dropout,
// Dense) in inference mode, on [batch, 28, 28, 1].
inline ExportedCase cnn_case() {
  set_seed(4);
  auto model = std::make_shared<nn::Sequential>(std::initializer_list<nn::LayerRef>{
      nn::Conv2D(4, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(), nn::Conv2D(8, {5, 5}, nn::Activation::kRelu),
      nn::MaxPool2D(), nn::Flatten(), nn::Dense(16, nn::Activation::kRelu), nn::Dropout(0.4), nn::Dense(10)});
  model->set_training(false);
  (*model)(pattern({1, 28, 28, 1}, 1.f));
  return export_case("cnn", [model](const Tensor& x) { return (*model)(x); }, {{DType::kFloat32, {-1, 28, 28, 1}}},
                     {pattern({2, 28, 28, 1}, 1.f)}, model->trainable_variables());
}

// Every other converted op, on x [2, 3, 4] and an image [1, 6, 6, 2].
inline ExportedCase ops_case() {
  const Tensor w = pattern({4, 3}, 0.5f, 1), k = pattern({3, 3, 2, 3}, 0.5f, 2);
  auto fn = [w, k](const Tensor& x, const Tensor& img) -> std::vector<Tensor> {
    const Tensor a = rsqrt(abs(x) + 1.f) + log1p(square(x)) - relu6(x * 4.f) + leaky_relu(x, 0.1) +
                     matmul(matmul(x, x, false, true), x) * 0.01f;  // batched: BatchMatMulV2 in the GraphDef
    const Tensor b = elu(x) * selu(x) + softplus(x) / (softsign(x) + 2.f) + sigmoid(x) * tanh(x);
    const Tensor c = maximum(floor(x * 3.f), sign(x)) + minimum(-x, pow(abs(x) + 0.5f, 1.5f));
    const Tensor m = matmul(reshape(a + b + c, {6, 4}), w);                       // [6, 3]
    const Tensor mt = matmul(m, reshape(x, {6, 4}), true, false);                 // [3, 4]
    const Tensor joined = concat({transpose(mt, {1, 0}), tile(slice(m, {1, 0}, {4, -1}), {1, 1})}, 0);  // [8, 3]
    const Tensor g = gather(joined, Tensor(std::vector<int32_t>{7, 0, 3}, Shape{3}), 0);              // [3, 3]
    const Tensor p = pad(squeeze(expand_dims(g, 0), {0}), {{1, 0}, {0, 2}}, 0.25);                   // [4, 5]
    const Tensor r = reduce_sum(p, {1}, true) + reduce_max(p, {0}) - reduce_min(p, {1}, true) +
                     reduce_prod(p * 0.5f + 1.f, {0}, true) + reduce_mean(p);                        // [4, 5]
    const Tensor cmp = cast(logical_and(greater(r, 0.f), logical_not(equal(r, 1.f))), DType::kFloat32) +
                       cast(less_equal(r, 0.5f), DType::kFloat32) * 2.f;
    const Tensor conv = conv2d(img, k, {2, 2}, "SAME");                            // [1, 3, 3, 3]
    const Tensor pooled = avg_pool(conv, {2, 2}, {1, 1}, "SAME") + max_pool(conv, {3, 3}, {1, 1}, "SAME");
    return {where(greater(r, 1.f), r + cmp, -r), argmax(r, 1), argmin(r, 0, DType::kInt32), pooled, cast(r * 10.f, DType::kInt32)};
  };
  return export_case("ops", fn, {{DType::kFloat32, {2, 3, 4}}, {DType::kFloat32, {1, 6, 6, 2}}},
                     {pattern({2, 3, 4}, 1.5f, 3), pattern({1, 6, 6, 2}, 1.f, 4)});
}

// Convolution and pooling over images of unknown size: SAME padding becomes auto_pad.
inline ExportedCase dynamic_conv_case() {
  const Tensor k = pattern({3, 3, 2, 4}, 0.5f, 5);
  auto fn = [k](const Tensor& img) { return max_pool(relu(conv2d(img, k, {2, 2}, "SAME")), {3, 3}, {2, 2}, "SAME"); };
  return export_case("dynamic_conv", fn, {{DType::kFloat32, {-1, -1, -1, 2}}}, {pattern({2, 7, 9, 2}, 1.f, 6)});
}

// The math family (Note [Exact ONNX forms] in saving/onnx_ops.cc), on x and y [2, 3, 4] and
// integers a and b [6]. Bool results leave as int32 (the manifest has no bool).
inline ExportedCase math_case() {
  auto fn = [](const Tensor& x, const Tensor& y, const Tensor& a, const Tensor& b) -> std::vector<Tensor> {
    const Tensor unary = reciprocal(x + 3.f) + expm1(x) + sin(x) * cos(x) + tan(x * 0.5f) + erf(x) + erfc(x) +
                         ceil(x * 2.f) + round(x * 2.f) + rint(x * 3.f) + asin(tanh(x)) + acos(tanh(x)) + atan(x) +
                         sinh(x * 0.5f) + cosh(x * 0.5f) + asinh(x) + acosh(1.f + x * x) + atanh(tanh(x) * 0.9f) +
                         atan2(x, y) + atan2(y, 0.f) + atan2(0.f, x) + xlogy(x, x * x + 1.f) +
                         xlogy(floor(x), abs(y)) + xdivy(floor(y), x * x + 0.5f) + l2_loss(x * 0.1f);
    const Tensor halves = Tensor({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f, 0.49f});
    const Tensor rounded = round(halves) * 10.f + rint(halves);
    const Tensor logs = log(x), inverse = reciprocal(floor(x));  // NaN below 0; inf where floor(x) = 0
    const Tensor tests = cast(is_nan(logs), DType::kInt32) + cast(is_inf(inverse), DType::kInt32) * 2 +
                         cast(is_finite(logs + inverse), DType::kInt32) * 4;
    const Tensor lo = y * 0.5f, hi = lo + 1.f;
    const Tensor combined = squared_difference(x, y) + add_n({x, y, x * y}) + clip_by_value(x, -0.5f, 0.7f) +
                            clip_by_value(x, lo, hi);
    const Tensor d = where(less(y, 0.f), y - 0.3f, y + 0.3f);  // no zeros
    const Tensor divided = concat({floor_div(x * 3.f, d), mod(x * 3.f, d), truncate_mod(x * 3.f, d),
                                   div_no_nan(x, floor(y))}, 0);
    const Tensor ints = concat({floor_div(a, b), mod(a, b), truncate_div(a, b), truncate_mod(a, b), add_n({a, b, a}),
                                squared_difference(a, b), clip_by_value(a, Tensor(int32_t{-3}), Tensor(int32_t{4})), floor_div(a, 3)}, 0);
    const Tensor logic = cast(reduce_all(greater(x, -1.f), {1}), DType::kInt32) +
                         cast(reduce_any(greater(x, 1.f), {1}), DType::kInt32) * 2;
    const Tensor a64 = cast(a, DType::kInt64), b64 = cast(b, DType::kInt64);
    const Tensor longs = concat({floor_div(a64, b64), mod(a64, b64), truncate_mod(a64, b64), add_n({a64, b64})}, 0);
    const Tensor u = cast(abs(a), DType::kUInt8), v = cast(abs(b), DType::kUInt8);
    const Tensor bytes = cast(concat({floor_div(u, v), mod(u, v), truncate_div(u, v), add_n({u, v}),
                                      clip_by_value(u, Tensor(uint8_t{2}), Tensor(uint8_t{9}))}, 0), DType::kInt32);
    return {unary, rounded, tests, combined, divided, ints, logic, longs, bytes};
  };
  const std::vector<int32_t> a = {7, -7, 7, -7, 0, 13}, b = {2, 2, -2, -2, 3, -4};
  return export_case("math", fn,
                     {{DType::kFloat32, {2, 3, 4}}, {DType::kFloat32, {2, 3, 4}}, {DType::kInt32, {6}},
                      {DType::kInt32, {6}}},
                     {pattern({2, 3, 4}, 1.5f, 7), pattern({2, 3, 4}, 2.f, 8), Tensor(a, Shape{6}), Tensor(b, Shape{6})});
}

// Indexing, scatter, sorting, creation, scans, padding, stacking and splitting, on x [4, 5] and
// int32 ids [6].
inline ExportedCase array_case() {
  auto fn = [](const Tensor& x, const Tensor& ids) -> std::vector<Tensor> {
    const Tensor i32(std::vector<int32_t>{0, 2, -1, 5}, Shape{4});  // -1 and 5: all off
    const Tensor row = Tensor({1.f, -2.f, 3.f, -4.f, 5.f});
    return {
        one_hot(i32, 4),                                                           // 0
        one_hot(i32, 3, 5, -1, 0, DType::kInt32),                                  // 1: [3, 4]
        strided_slice(x, {1, 0}, {0, 0}, {1, -2}, {.begin_mask = 2, .end_mask = 3}),  // 2: x[1:, ::-2]
        strided_slice(x, {0, 1}, {0, 0}, {1, 1}, {.ellipsis_mask = 1, .shrink_axis_mask = 2}),  // 3: x[..., 1]
        strided_slice(x, {0, -1, 1}, {0, 0, 4}, {1, 1, 1}, {.new_axis_mask = 1, .shrink_axis_mask = 2}),  // 4
        strided_slice(x, {-2, -7}, {0, 0}, {-1, -1}, {.end_mask = 3}),           // 5: x[-2::-1, -7::-1]: [3, 0]
        strided_slice(x, {-2, 0}, {0, 0}, {-1, -1}, {.begin_mask = 2, .end_mask = 3}),  // 6: x[-2::-1, ::-1]
        range(0.5, 3, 0.25, DType::kFloat32),                                      // 7
        range(1, 10, 3, DType::kInt32),                                            // 8
        fill({2, 3}, 1.5f),                                                        // 9
        zeros_like(x) + ones_like(x) * 2.f + x,                                    // 10
        concat({cumsum(x, 1), cumsum(x, 1, true, false), cumsum(x, 0, false, true), cumsum(x, 1, true, true)}, 0),
        cumsum(ids, 0, true, false),                                               // 12
        reverse(x, {0, 1}) + broadcast_to(row, {4, 5}) + reverse(x, {1}),          // 13
        mirror_pad(x, {{1, 2}, {2, 1}}, "REFLECT"),                                // 14
        mirror_pad(x, {{2, 1}, {0, 3}}, "SYMMETRIC"),                              // 15
        where(greater(x, 0.3f)),                                                   // 16: int64 [n, 2]
        gather_nd(x, Tensor(std::vector<int64_t>{0, 1, 3, 4, 2, 2}, Shape{3, 2})),  // 17
        gather_nd(x, Tensor(std::vector<int32_t>{1, 3}, Shape{2, 1})),             // 18: rows
        scatter_nd(Tensor(std::vector<int32_t>{1, 3, 1}, Shape{3, 1}), slice(x, {0, 0}, {3, 5}), {4, 5}),  // 19
        tensor_scatter_update(x, Tensor(std::vector<int64_t>{0, 1, 2, 3}, Shape{2, 2}), Tensor({9.f, -9.f})),
        unsorted_segment_sum(x, Tensor(std::vector<int32_t>{0, 2, 0, 1}, Shape{4}), 3),  // 21
        top_k(x, 3).values,                                                        // 22
        top_k(x, 3).indices,                                                       // 23
        unique(ids).y,                                                             // 24
        unique(ids).idx,                                                           // 25
        unique(reshape(floor(x * 2.f), {20}), DType::kInt64).y,                    // 26
        unique(reshape(floor(x * 2.f), {20}), DType::kInt64).idx,                  // 27
        gather(x, Tensor(std::vector<int32_t>{0, 4, 1, 1, 2, 0, 3, 3}, Shape{4, 2}), 1, 1),  // 28: batch_dims 1
        linspace(-1, 2, 7) + linspace(0.1, 0.7, 7),                                // 29
        top_k(concat({x, reshape(Tensor({1.f, 5.f, 3.f, 5.f, 5.f}), {1, 5})}, 0), 3).indices,  // 30: ties
        gather(reshape(x, {2, 2, 5, 1}), Tensor(std::vector<int64_t>{4, 0, 1, 2, 2, 3}, Shape{2, 3}), 2, 1),  // 31
        gather(reshape(x, {2, 5, 2}), Tensor(std::vector<int32_t>{4, 0, 1, 2}, Shape{2, 2}), 1, 1),  // 32: [2, 2, 2]
        stack({x, x * 2.f}, -1),                                                   // 33: Pack
        unstack(x, 1)[3],                                                          // 34: Unpack
        split(x, 2, 0)[1],                                                         // 35: Split
        split(x, {2, -1}, 1)[1],                                                   // 36: SplitV
        pad(x, {{1, 0}, {0, 2}}),                                                  // 37: Pad (zeros)
        shape(x),                                                                  // 38: int32
        shape(x, DType::kInt64),                                                   // 39
        reduce_mean(x, {1}),                                                       // 40
        softmax(x, 0),                                                             // 41
        log_softmax(x),                                                            // 42
        stack({size(x), rank(x), size(ids)}),                                      // 43: int32
        size(x, DType::kInt64),                                                    // 44
        matrix_band_part(x, 1, 2) + matrix_band_part(x, -1, 0) * 2.f + matrix_band_part(x, 0, -1) * 4.f +
            matrix_band_part(x, -1, -1) * 8.f,                                     // 45: Trilu
        invert_permutation(top_k(reshape(x, {20}), 20).indices),                   // 46: int32
        invert_permutation(cast(top_k(reshape(x, {20}), 20).indices, DType::kInt64)),  // 47
    };
  };
  return export_case("array", fn, {{DType::kFloat32, {4, 5}}, {DType::kInt32, {6}}},
                     {pattern({4, 5}, 1.f, 9), Tensor(std::vector<int32_t>{3, 1, 3, 2, 1, 0}, Shape{6})});
}

// The array converters over unknown dims: Slice bounds that clamp at run time, and
// unsorted_segment_sum's zeros shaped from the data's runtime shape.
inline ExportedCase dynamic_array_case() {
  auto fn = [](const Tensor& x) -> std::vector<Tensor> {
    return {strided_slice(x, {0, 1}, {0, 0}, {1, 2}, {.begin_mask = 1, .end_mask = 3}),           // x[:, 1::2]
            strided_slice(x, {0, -1}, {0, 0}, {1, 1}, {.ellipsis_mask = 1, .shrink_axis_mask = 2}),  // x[..., -1]
            unsorted_segment_sum(x, Tensor(std::vector<int32_t>{0, 2, 0, 1}, Shape{4}), 3), reverse(x, {1}),
            zeros_like(x) - ones_like(x)};
  };
  return export_case("dynamic_array", fn, {{DType::kFloat32, {4, -1}}}, {pattern({4, 6}, 1.f, 10)});
}
// The image layers of onnx_ops_image.cc on an image [2, 6, 6, 2]: depthwise convolutions (a
// channel multiplier, SAME and VALID, a dilation), inference batch norm in both layouts, LRN,
// and both resizes under their three coordinate rules, upsampling one axis and downsampling the
// other (6 -> 4 columns is where ONNX's Resize would pick another pixel than TensorFlow), and
// of a uint8 image; SpaceToBatchND / BatchToSpaceND around a Conv (an atrous convolution).
inline ExportedCase layers_case() {
  const Tensor k = pattern({3, 3, 2, 2}, 0.5f, 7);
  const Tensor scale = Tensor({1.5f, 0.75f}), offset = Tensor({0.1f, -0.2f});
  const Tensor mean = Tensor({0.05f, -0.1f}), variance = Tensor({0.8f, 1.3f});
  auto fn = [=](const Tensor& img) -> std::vector<Tensor> {
    const Tensor depthwise = depthwise_conv2d(img, k, {1, 1}, "SAME") +
                             depthwise_conv2d(img, k, {1, 1}, "SAME", {2, 2});              // [2, 6, 6, 4]
    const Tensor strided = depthwise_conv2d(img, k, {2, 2}, "VALID");                        // [2, 2, 2, 4]
    const Tensor nhwc = fused_batch_norm(img, scale, offset, mean, variance, 0.001, 1.0, "NHWC", false).y;
    const Tensor nchw = fused_batch_norm(transpose(img, {0, 3, 1, 2}), scale, offset, mean, variance, 0.01, 1.0,
                                         "NCHW", false).y;
    const Tensor normalized =
        concat({nhwc + transpose(nchw, {0, 2, 3, 1}), local_response_normalization(depthwise, 1, 1.5, 0.3, 0.6)}, 3);
    std::vector<Tensor> resized, shrunk;
    for (auto [align, half] : {std::pair{false, false}, {true, false}, {false, true}}) {
      resized.push_back(resize_bilinear(img, {9, 4}, align, half));
      resized.push_back(resize_nearest_neighbor(img, {9, 4}, align, half));
      shrunk.push_back(resize_nearest_neighbor(img, {3, 5}, align, half));
    }
    // A uint8 image (as decoded) resizes in float32: a Cast before ONNX's Resize. Scaled to [0, 1]
    // as a serving graph does (at 255, a float32's last bit is 1.5e-5).
    const Tensor pixels = cast(abs(img) * 100.f, DType::kUInt8);
    // TensorFlow 1's atrous convolution (rate 2, SAME): SpaceToBatchND, Conv2D, BatchToSpaceND;
    // and one blocked dim with a crop.
    const Tensor atrous = batch_to_space_nd(conv2d(space_to_batch_nd(img, {2, 2}, {{2, 2}, {2, 2}}), k, {1, 1}, "VALID"),
                                            {2, 2}, {{0, 0}, {0, 0}});
    const Tensor rows = batch_to_space_nd(space_to_batch_nd(img, {3}, {{1, 2}}) * 2.f, {3}, {{2, 1}});
    return {normalized, strided, concat(resized, 3), concat(shrunk, 3),
            resize_bilinear(pixels, {9, 4}, false, true) * (1.f / 255),
            resize_nearest_neighbor(pixels, {3, 5}), atrous, rows};
  };
  return export_case("layers", fn, {{DType::kFloat32, {2, 6, 6, 2}}}, {pattern({2, 6, 6, 2}, 1.f, 8)});
}

// A channels-first network (data_format NCHW, ONNX's own layout): Conv, its bias, a dilated
// depthwise Conv and both pools, with no Transpose between them; and DepthToSpace (ONNX's DCR
// mode) / SpaceToDepth in both layouts.
inline ExportedCase nchw_case() {
  const Tensor k = pattern({3, 3, 2, 4}, 0.25f, 11), kd = pattern({2, 2, 4, 1}, 0.5f, 12);
  const Tensor bias = Tensor({0.5f, -0.25f, 0.125f, 0.f});
  auto fn = [=](const Tensor& img) -> std::vector<Tensor> {
    const Tensor conv = relu(bias_add(conv2d(img, k, {2, 1}, "SAME", {1, 1}, "NCHW"), bias, "NCHW"));  // [2,4,4,7]
    const Tensor depthwise = depthwise_conv2d(conv, kd, {1, 1}, "VALID", {1, 2}, "NCHW");              // [2,4,3,5]
    const Tensor nhwc = transpose(conv, {0, 2, 3, 1});  // [2, 4, 7, 4]
    return {max_pool(depthwise, {2, 2}, {1, 2}, "SAME", "NCHW"), avg_pool(conv, {1, 1, 3, 2}, {1, 1, 1, 2}, "VALID", "NCHW"),
            depth_to_space(conv, 2, "NCHW"), depth_to_space(nhwc, 2), space_to_depth(slice(nhwc, {0, 0, 0, 0}, {-1, 4, 6, -1}), 2),
            space_to_depth(slice(conv, {0, 0, 0, 0}, {-1, -1, 4, 6}), 2, "NCHW")};
  };
  return export_case("nchw", fn, {{DType::kFloat32, {2, 2, 7, 7}}}, {pattern({2, 2, 7, 7}, 1.f, 13)});
}

// Non-maximum suppression over an unknown number of boxes (ONNX's NonMaxSuppression on one batch
// and class): three clusters, distinct scores (ONNX Runtime may order equal ones otherwise), a
// score threshold, a zero-area box and corners in both orders; then the kept boxes gathered.
inline ExportedCase detection_case() {
  auto fn = [](const Tensor& boxes, const Tensor& scores) -> std::vector<Tensor> {
    const Tensor keep = non_max_suppression(boxes, scores, 4, 0.5f, 0.2f);
    return {keep, gather(boxes, keep), non_max_suppression(boxes, scores, 10, 0.85f)};
  };
  const Tensor boxes(std::vector<float>{0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 1, 0.9f, 0, -0.1f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f,
                                        0, 100, 1, 101, 3, 3, 3, 4, 50, 50, 52, 52},
                     Shape{8, 4});
  const Tensor scores({0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f, 0.8f, 0.1f});
  return export_case("detection", fn, {{DType::kFloat32, {-1, 4}}, {DType::kFloat32, {-1}}}, {boxes, scores});
}

// Image layers over images of unknown batch and size: depthwise SAME padding becomes auto_pad,
// and the bilinear resize's sizes come from the input's shape.
inline ExportedCase dynamic_layers_case() {
  const Tensor k = pattern({3, 3, 2, 3}, 0.5f, 9);
  auto fn = [k](const Tensor& img) {
    return resize_bilinear(depthwise_conv2d(img, k, {2, 2}, "SAME"), {5, 7}, false, true);
  };
  return export_case("dynamic_layers", fn, {{DType::kFloat32, {-1, -1, -1, 2}}}, {pattern({2, 7, 9, 2}, 1.f, 10)});
}

}  // namespace tapeflow::onnx_test
