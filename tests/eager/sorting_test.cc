// The sorting family (eager/ops/sorting.h): top_k (values, int32 indices, TensorFlow's tie and
// NaN order, its gradient) and unique (order of first occurrence, a data-dependent output
// length in eager mode, traced functions and Sessions), each under TensorFlow's op name in a
// GraphDef.
#include "eager/ops/sorting.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/graph_def.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TopKTest, LargestFirstTiesByLowerIndex) {
  auto [values, indices] = top_k(Tensor{1.f, 5.f, 3.f, 5.f}, 2);
  EXPECT_EQ(values.dtype(), DType::kFloat32);
  EXPECT_EQ(indices.dtype(), DType::kInt32);
  EXPECT_EQ(values.shape(), (Shape{2}));
  EXPECT_THAT(values.to_vector<float>(), ElementsAre(5.f, 5.f));
  EXPECT_THAT(indices.to_vector<int32_t>(), ElementsAre(1, 3));
  // Rows of a matrix, all of k = n (a full descending sort), integers.
  const TopK r = top_k(Tensor{{3, 1, 2}, {-1, 7, 7}}, 3);
  EXPECT_EQ(r.values.shape(), (Shape{2, 3}));
  EXPECT_THAT(r.values.to_vector<int32_t>(), ElementsAre(3, 2, 1, 7, 7, -1));
  EXPECT_THAT(r.indices.to_vector<int32_t>(), ElementsAre(0, 2, 1, 1, 2, 0));
  EXPECT_THAT(top_k(Tensor{{3, 1, 2}, {-1, 7, 7}}, 3, /*sorted=*/false).indices.to_vector<int32_t>(),
              ElementsAre(0, 2, 1, 1, 2, 0));
  // k = 0, and the default k = 1.
  EXPECT_EQ(top_k(Tensor{{1.0, 2.0}}, 0).values.shape(), (Shape{1, 0}));
  EXPECT_THAT(top_k(Tensor{uint8_t{4}, uint8_t{200}}).indices.to_vector<int32_t>(), ElementsAre(1));
  // NaN above every number; NaNs among themselves by index.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const TopK n = top_k(Tensor{1.0, nan, 3.0, nan, -2.0}, 4);
  EXPECT_THAT(n.indices.to_vector<int32_t>(), ElementsAre(1, 3, 2, 0));
  EXPECT_TRUE(std::isnan(n.values.to_vector<double>()[0]));
  EXPECT_EQ(n.values.to_vector<double>()[2], 3.0);
}

TEST(TopKTest, ErrorsNameTheOp) {
  EXPECT_THAT(error_of([] { top_k(Tensor{1.f, 2.f, 3.f}, 5); }),
              AllOf(HasSubstr("[top_k] input 'x' of shape [3] has 3 values in its last dimension, fewer than k = 5"),
                    HasSubstr("sorting_test.cc:")));
  EXPECT_THAT(error_of([] { top_k(Tensor{1.f}, -1); }), HasSubstr("[top_k] k must be >= 0, got -1"));
  EXPECT_THAT(error_of([] { top_k(Tensor(1.f), 1); }), HasSubstr("[top_k] input 'x' must have rank >= 1"));
  EXPECT_THAT(error_of([] { top_k(Tensor{true, false}, 1); }), AllOf(HasSubstr("[top_k]"), HasSubstr("bool")));
}

TEST(TopKTest, GradientGoesToTheChosenPositions) {
  const Tensor x = {{1.0, 4.0, 2.0}, {9.0, 8.0, 7.0}};
  GradientTape tape;
  tape.watch(x);
  const Tensor y = reduce_sum(top_k(x, 2).values * Tensor{{1.0, 10.0}, {100.0, 1000.0}});
  EXPECT_THAT(tape.gradient(y, x).to_vector<double>(), ElementsAre(0.0, 1.0, 10.0, 100.0, 1000.0, 0.0));
}

TEST(UniqueTest, FirstOccurrenceOrderAndIndices) {
  auto [y, idx] = unique(Tensor{4, 1, 4, 2, 1});
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_THAT(y.to_vector<int32_t>(), ElementsAre(4, 1, 2));
  EXPECT_EQ(idx.dtype(), DType::kInt32);
  EXPECT_THAT(idx.to_vector<int32_t>(), ElementsAre(0, 1, 0, 2, 1));
  const Unique w = unique(Tensor{2.5, 2.5}, DType::kInt64);
  EXPECT_EQ(w.idx.dtype(), DType::kInt64);
  EXPECT_THAT(w.y.to_vector<double>(), ElementsAre(2.5));
  EXPECT_THAT(w.idx.to_vector<int64_t>(), ElementsAre(0, 0));
  // -0.0 is 0.0; each NaN is its own value.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Unique f = unique(Tensor{0.f, nan, -0.f, nan});
  EXPECT_EQ(f.y.shape(), (Shape{3}));
  EXPECT_THAT(f.idx.to_vector<int32_t>(), ElementsAre(0, 1, 0, 2));
  EXPECT_THAT(unique(Tensor{true, true, false}).y.to_vector<bool>(), ElementsAre(true, false));
  const Unique e = unique(zeros({0}, DType::kUInt8));
  EXPECT_EQ(e.y.shape(), (Shape{0}));
  EXPECT_EQ(e.idx.shape(), (Shape{0}));
}

TEST(UniqueTest, Errors) {
  EXPECT_THAT(error_of([] { unique(Tensor{{1, 2}}); }), HasSubstr("[unique] input 'x' must be a vector, got shape [1,2]"));
  EXPECT_THAT(error_of([] { unique(Tensor{1, 2}, DType::kFloat32); }),
              HasSubstr("[unique] out_idx must be int32 or int64, got float32"));
}

TEST(SortingGraphTest, ShapeFunctionsAcceptUnknownDims) {
  Graph g;
  auto scope = g.as_default();
  const TopK t = top_k(placeholder(DType::kFloat32, {-1, -1}, "x"), 3);
  EXPECT_EQ(t.values.shape(), (Shape{-1, 3}));
  EXPECT_EQ(t.indices.shape(), (Shape{-1, 3}));
  EXPECT_EQ(t.indices.dtype(), DType::kInt32);
  EXPECT_THAT(error_of([] { top_k(placeholder(DType::kFloat32, {-1, 2}, "y"), 3); }),
              HasSubstr("[top_k] input 'x' of shape [?,2] has 2 values in its last dimension, fewer than k = 3"));
  const Unique u = unique(placeholder(DType::kUInt8, {-1}, "z"), DType::kInt64);
  EXPECT_EQ(u.y.shape(), (Shape{-1}));
  EXPECT_EQ(u.idx.dtype(), DType::kInt64);
}

TEST(SortingGraphTest, TracedSessionAndGraphDef) {
  // unique in a traced function: one trace serves inputs whose y lengths differ.
  auto f = function([](const Tensor& x) {
    auto [y, idx] = unique(x);
    auto [v, i] = top_k(cast(x, DType::kFloat64), 2);
    return std::vector<Tensor>{y, idx, v, i};
  });
  std::vector<Tensor> a = f(Tensor{3, 3, 3, 1});
  std::vector<Tensor> b = f(Tensor{5, 6, 7, 5});
  EXPECT_EQ(f.trace_count(), 1);
  EXPECT_THAT(a[0].to_vector<int32_t>(), ElementsAre(3, 1));
  EXPECT_THAT(b[0].to_vector<int32_t>(), ElementsAre(5, 6, 7));
  EXPECT_THAT(b[1].to_vector<int32_t>(), ElementsAre(0, 1, 2, 0));
  EXPECT_THAT(a[2].to_vector<double>(), ElementsAre(3.0, 3.0));
  EXPECT_THAT(b[3].to_vector<int32_t>(), ElementsAre(2, 1));

  Graph g;
  Tensor x, y, idx, v, dx, w, wy;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat64, {4}, "x");
    const Unique u = unique(x);
    y = u.y;
    idx = u.idx;
    EXPECT_EQ(y.shape(), (Shape{-1}));
    EXPECT_EQ(idx.shape(), (Shape{4}));
    w = placeholder(DType::kInt64, {-1}, "w");
    wy = unique(w).idx;  // both outputs' sizes unknown: the kernel allocates both
    EXPECT_EQ(wy.shape(), (Shape{-1}));
    v = top_k(x, 2).values;
    EXPECT_EQ(v.shape(), (Shape{2}));
    dx = gradients({reduce_sum(v * Tensor{1.0, 10.0})}, {x})[0];
  }
  const GraphDef def = to_graph_def(g);
  int uniques = 0, topks = 0;
  for (const auto& n : def.node()) {
    if (n.op() == "Unique") {
      ++uniques;
      EXPECT_EQ(n.attr().at("out_idx").type(), proto::DT_INT32);
    }
    if (n.op() == "TopKV2") {
      ++topks;
      EXPECT_TRUE(n.attr().at("sorted").b());
      EXPECT_EQ(n.input_size(), 2);  // k travels as a Const input, as in TensorFlow
    }
  }
  EXPECT_EQ(uniques, 2);
  EXPECT_EQ(topks, 1);
  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  const Tensor xv = {2.0, 9.0, 2.0, 4.0};
  for (Graph* graph : {&g, &back}) {
    Session s(*graph);
    const Tensor gx = graph->get_tensor_by_name("x:0");
    std::vector<Tensor> out = s.run({graph->get_tensor_by_name(y.name()), graph->get_tensor_by_name(idx.name()),
                                     graph->get_tensor_by_name(v.name()), graph->get_tensor_by_name(dx.name())},
                                    {{gx, xv}});
    EXPECT_THAT(out[0].to_vector<double>(), ElementsAre(2.0, 9.0, 4.0));
    EXPECT_THAT(out[1].to_vector<int32_t>(), ElementsAre(0, 1, 0, 2));
    EXPECT_THAT(out[2].to_vector<double>(), ElementsAre(9.0, 4.0));
    EXPECT_THAT(out[3].to_vector<double>(), ElementsAre(0.0, 1.0, 0.0, 10.0));
    const Tensor gw = graph->get_tensor_by_name("w:0");
    EXPECT_THAT(s.run(graph->get_tensor_by_name(wy.name()), {{gw, Tensor{int64_t{7}, int64_t{8}, int64_t{7}}}})
                    .to_vector<int32_t>(),
                ElementsAre(0, 1, 0));
  }
}

}  // namespace
}  // namespace tapeflow
