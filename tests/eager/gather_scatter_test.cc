// The scatter family (eager/ops/scatter.h: gather_nd, scatter_nd, tensor_scatter_update) and
// gather's batch_dims: values, shapes and dtypes, errors (type, op name, the bad index and its
// position), gradients, and each op traced, run in a Session and round-tripped through a GraphDef
// under TensorFlow's op names.
#include "eager/ops/scatter.h"

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

// ---- gather_nd ----

TEST(GatherNdTest, ElementsSlicesAndWholeTensors) {
  const Tensor p = {{1, 2}, {3, 4}};
  const Tensor e = gather_nd(p, Tensor{{1, 0}, {0, 1}});
  EXPECT_EQ(e.dtype(), DType::kInt32);
  EXPECT_EQ(e.shape(), (Shape{2}));
  EXPECT_THAT(e.to_vector<int32_t>(), ElementsAre(3, 2));
  const Tensor rows = gather_nd(p, Tensor{{1}});
  EXPECT_EQ(rows.shape(), (Shape{1, 2}));
  EXPECT_THAT(rows.to_vector<int32_t>(), ElementsAre(3, 4));
  // Batched indices [2,1,2] into [2,2,2] float: slices of the last dim.
  const Tensor p3 = reshape(range<float>(0.f, 8.f), {2, 2, 2});
  const Tensor idx64 = Tensor(std::vector<int64_t>{0, 1, 1, 0}, Shape{2, 1, 2});
  const Tensor s = gather_nd(p3, idx64);
  EXPECT_EQ(s.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_THAT(s.to_vector<float>(), ElementsAre(2.f, 3.f, 4.f, 5.f));
  // K = 0: every index row takes all of params.
  EXPECT_EQ(gather_nd(p, zeros({3, 0}, DType::kInt32)).shape(), (Shape{3, 2, 2}));
  // Empty index rows, and bool params.
  EXPECT_EQ(gather_nd(p, zeros({0, 2}, DType::kInt64)).shape(), (Shape{0}));
  EXPECT_THAT(gather_nd(Tensor{{true, false}, {false, true}}, Tensor{{1, 1}, {0, 1}}).to_vector<bool>(),
              ElementsAre(true, false));
}

TEST(GatherNdTest, ErrorsNameTheOpTheIndexAndItsPosition) {
  const Tensor p = {{1.f, 2.f}, {3.f, 4.f}};
  EXPECT_THAT(error_of([&] { gather_nd(p, Tensor{{0, 0}, {2, 1}}); }),
              AllOf(HasSubstr("[gather_nd]"), HasSubstr("indices[1] = [2, 1] does not index into param shape [2,2]"),
                    HasSubstr("gather_scatter_test.cc:")));
  EXPECT_THAT(error_of([&] { gather_nd(p, Tensor(std::vector<int32_t>{0, 0, 0, -1}, Shape{2, 1, 2})); }),
              HasSubstr("indices[1,0] = [0, -1] does not index into param shape [2,2]"));
  EXPECT_THAT(error_of([&] { gather_nd(p, Tensor{{0, 0, 0}}); }),
              AllOf(HasSubstr("[gather_nd]"), HasSubstr("is 3, more than the rank 2 of params")));
  EXPECT_THAT(error_of([&] { gather_nd(p, Tensor(1)); }), HasSubstr("[gather_nd] input 'indices' must have rank >= 1"));
  EXPECT_THAT(error_of([&] { gather_nd(p, Tensor{{0.f, 1.f}}); }),
              AllOf(HasSubstr("[gather_nd] input 'indices' has dtype float32"), HasSubstr("int32, int64")));
}

// ---- scatter_nd ----

TEST(ScatterNdTest, DuplicatesAddAndSlicesLandInPlace) {
  const Tensor a = scatter_nd(Tensor{{1}, {1}, {0}}, Tensor{5, 6, 7}, {3});
  EXPECT_EQ(a.dtype(), DType::kInt32);
  EXPECT_THAT(a.to_vector<int32_t>(), ElementsAre(7, 11, 0));
  const Tensor b = scatter_nd(Tensor{{0}, {2}}, Tensor{{1.0, 2.0}, {3.0, 4.0}}, {3, 2});
  EXPECT_EQ(b.shape(), (Shape{3, 2}));
  EXPECT_EQ(b.dtype(), DType::kFloat64);
  EXPECT_THAT(b.to_vector<double>(), ElementsAre(1.0, 2.0, 0.0, 0.0, 3.0, 4.0));
  const Tensor c = scatter_nd(Tensor(std::vector<int64_t>{1, 1, 0, 1}, Shape{2, 2}), Tensor{2.f, 3.f}, {2, 2});
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(0.f, 3.f, 0.f, 2.f));
  EXPECT_EQ(scatter_nd(zeros({0, 1}, DType::kInt32), zeros({0, 4}), {5, 4}).shape(), (Shape{5, 4}));
  EXPECT_THAT(scatter_nd(Tensor{{0}, {0}}, Tensor{uint8_t{200}, uint8_t{100}}, {1}).to_vector<uint8_t>(),
              ElementsAre(44));  // integer sums wrap
}

TEST(ScatterNdTest, Errors) {
  EXPECT_THAT(error_of([] { scatter_nd(Tensor{{0}, {1}, {3}}, Tensor{1.f, 2.f, 3.f}, {3}); }),
              AllOf(HasSubstr("[scatter_nd]"), HasSubstr("indices[2] = [3] does not index into shape [3]")));
  EXPECT_THAT(error_of([] { scatter_nd(Tensor{{0}}, Tensor{1.f, 2.f}, {3}); }),
              AllOf(HasSubstr("[scatter_nd] input 'updates' has shape [2]"), HasSubstr("need updates of shape [1]")));
  EXPECT_THAT(error_of([] { scatter_nd(Tensor{{0}}, Tensor{1.f}, {-3}); }),
              HasSubstr("[scatter_nd] shape [-3] has a negative dimension -3"));
  EXPECT_THAT(error_of([] { scatter_nd(Tensor{{0}}, Tensor{true}, {2}); }),
              AllOf(HasSubstr("[scatter_nd] input 'updates'"), HasSubstr("bool")));
}

// ---- tensor_scatter_update ----

TEST(TensorScatterUpdateTest, ReplacesSlicesAndLeavesTheInputAlone) {
  const Tensor t = {{1, 2}, {3, 4}, {5, 6}};
  const Tensor u = tensor_scatter_update(t, Tensor{{2}, {0}}, Tensor{{9, 9}, {7, 7}});
  EXPECT_THAT(u.to_vector<int32_t>(), ElementsAre(7, 7, 3, 4, 9, 9));
  EXPECT_THAT(t.to_vector<int32_t>(), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(tensor_scatter_update(t, Tensor{{1, 1}}, Tensor{0}).to_vector<int32_t>(), ElementsAre(1, 2, 3, 0, 5, 6));
  // Repeated indices: the last update wins.
  EXPECT_THAT(tensor_scatter_update(Tensor{0.f, 0.f}, Tensor{{1}, {1}}, Tensor{1.f, 2.f}).to_vector<float>(),
              ElementsAre(0.f, 2.f));
  EXPECT_THAT(tensor_scatter_update(Tensor{false, false}, Tensor{{0}}, Tensor{true}).to_vector<bool>(),
              ElementsAre(true, false));
}

TEST(TensorScatterUpdateTest, ErrorsAreCheckedBeforeAnythingIsWritten) {
  const Tensor t = {1.f, 2.f, 3.f};
  EXPECT_THAT(error_of([&] { tensor_scatter_update(t, Tensor{{0}, {5}}, Tensor{8.f, 9.f}); }),
              AllOf(HasSubstr("[tensor_scatter_update]"), HasSubstr("indices[1] = [5] does not index into shape [3]")));
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(1.f, 2.f, 3.f));
  EXPECT_THAT(error_of([&] { tensor_scatter_update(t, Tensor{{0}}, Tensor{1.0}); }),
              HasSubstr("[tensor_scatter_update] input 'updates' has dtype float64 but 'tensor' has dtype float32"));
  EXPECT_THAT(error_of([&] { tensor_scatter_update(t, Tensor{{0}}, Tensor{1.f, 2.f}); }),
              HasSubstr("[tensor_scatter_update] input 'updates' has shape [2]"));
}

// ---- gather with batch_dims ----

TEST(GatherBatchDimsTest, EachBatchGathersFromItsOwnParams) {
  const Tensor p = {{1, 2, 3}, {4, 5, 6}};
  const Tensor i = {{2, 0}, {1, 1}};
  const Tensor g = gather(p, i, 1, 1);
  EXPECT_EQ(g.shape(), (Shape{2, 2}));
  EXPECT_THAT(g.to_vector<int32_t>(), ElementsAre(3, 1, 5, 5));
  EXPECT_THAT(gather(p, i, -1, -1).to_vector<int32_t>(), ElementsAre(3, 1, 5, 5));  // both from the end
  // params [2,2,3], indices [2,1], axis 2, batch_dims 1: out [2,2,1] = params[b, o, indices[b, :]].
  const Tensor p3 = reshape(range<double>(0.0, 12.0), {2, 2, 3});
  const Tensor g3 = gather(p3, Tensor{{2}, {0}}, 2, 1);
  EXPECT_EQ(g3.shape(), (Shape{2, 2, 1}));
  EXPECT_THAT(g3.to_vector<double>(), ElementsAre(2.0, 5.0, 6.0, 9.0));
  // batch_dims 0: params[:1] + indices.shape + params[2:].
  const Tensor g4 = gather(p3, Tensor(std::vector<int64_t>{1, 1, 0}, Shape{1, 3}), 1, 0);
  EXPECT_EQ(g4.shape(), (Shape{2, 1, 3, 3}));
  // batch_dims 1 with axis 1 and 2-d indices per batch: [2, 2, 2] + [3].
  const Tensor g5 = gather(p3, Tensor{{{1, 0}, {0, 0}}, {{1, 1}, {0, 1}}}, 1, 1);
  EXPECT_EQ(g5.shape(), (Shape{2, 2, 2, 3}));
  EXPECT_THAT(reshape(g5, {-1}).to_vector<double>(),
              ElementsAre(3, 4, 5, 0, 1, 2, 0, 1, 2, 0, 1, 2, 9, 10, 11, 9, 10, 11, 6, 7, 8, 9, 10, 11));
}

TEST(GatherBatchDimsTest, ErrorsInTensorFlowsWords) {
  const Tensor p = {{1, 2, 3}, {4, 5, 6}};
  EXPECT_THAT(error_of([&] { gather(p, Tensor{{0}, {1}}, 0, 1); }),
              HasSubstr("[gather] batch_dims (1) must be less than or equal to axis (0)"));
  EXPECT_THAT(error_of([&] { gather(p, Tensor{{0}, {1}, {2}}, 1, 1); }),
              HasSubstr("[gather] params.shape[0]: 2 should be equal to indices.shape[0]: 3"));
  EXPECT_THAT(error_of([&] { gather(p, Tensor{{0}, {1}}, 1, 3); }),
              HasSubstr("[gather] expected batch_dims in the range [-2, 2], but got 3"));
  EXPECT_THAT(error_of([&] { gather(p, Tensor{{0}, {3}}, 1, 1); }),
              AllOf(HasSubstr("[gather]"), HasSubstr("indices[1,0] = 3 is not in [0, 3)")));
}

// ---- gradients ----

TEST(ScatterGradientTest, GatherAndScatterAreEachOthersGradient) {
  const Tensor p = {{1.0, 2.0}, {3.0, 4.0}};
  const Tensor u = {10.0, 20.0, 30.0};
  const Tensor t = {1.0, 2.0, 3.0};
  GradientTape tape(/*persistent=*/true);
  tape.watch(p);
  tape.watch(u);
  tape.watch(t);
  // Repeated indices add up in gather_nd's gradient.
  const Tensor gp = tape.gradient(reduce_sum(gather_nd(p, Tensor{{1, 0}, {1, 0}, {0, 1}}) * Tensor{1.0, 2.0, 5.0}), p);
  EXPECT_THAT(gp.to_vector<double>(), ElementsAre(0.0, 5.0, 3.0, 0.0));
  const Tensor gu = tape.gradient(reduce_sum(scatter_nd(Tensor{{2}, {0}, {2}}, u, {3}) * Tensor{1.0, 2.0, 3.0}), u);
  EXPECT_THAT(gu.to_vector<double>(), ElementsAre(3.0, 1.0, 3.0));
  const Tensor w = {1.0, 2.0, 3.0};
  const Tensor y = reduce_sum(tensor_scatter_update(t, Tensor{{1}}, Tensor{7.0}) * w);
  EXPECT_THAT(tape.gradient(y, t).to_vector<double>(), ElementsAre(1.0, 0.0, 3.0));
  const Tensor v = {5.0};
  tape.watch(v);
  const Tensor z = reduce_sum(tensor_scatter_update(t, Tensor{{2}}, v) * w);
  EXPECT_THAT(tape.gradient(z, v).to_vector<double>(), ElementsAre(3.0));
  // gather with batch_dims: each batch's rows get their own gradient.
  const Tensor q = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
  tape.watch(q);
  const Tensor gq = tape.gradient(reduce_sum(gather(q, Tensor{{2, 2}, {0, 1}}, 1, 1)), q);
  EXPECT_THAT(gq.to_vector<double>(), ElementsAre(0.0, 0.0, 2.0, 1.0, 1.0, 0.0));
}

// ---- graphs, traces, Sessions and GraphDefs ----

TEST(ScatterGraphTest, ShapeFunctionsAcceptUnknownDims) {
  Graph g;
  auto scope = g.as_default();
  const Tensor p = placeholder(DType::kFloat32, {-1, 3, -1}, "p");
  const Tensor i = placeholder(DType::kInt64, {-1, 4, 2}, "i");
  EXPECT_EQ(gather_nd(p, i).shape(), (Shape{-1, 4, -1}));
  const Tensor u = placeholder(DType::kFloat32, {-1, -1, 5}, "u");
  EXPECT_EQ(scatter_nd(i, u, {6, 7, 5}).shape(), (Shape{6, 7, 5}));
  EXPECT_EQ(tensor_scatter_update(p, i, placeholder(DType::kFloat32, {-1, -1, -1}, "v")).shape(), (Shape{-1, 3, -1}));
  // A known mismatch is still caught: updates need [?, 4, 5] here.
  EXPECT_THAT(error_of([&] { scatter_nd(i, placeholder(DType::kFloat32, {-1, 3, 5}, "w"), {6, 7, 5}); }),
              HasSubstr("need updates of shape [?,4,5]"));
  // K, the last dim of indices, decides the output rank, so it must be known.
  EXPECT_THAT(error_of([&] { gather_nd(p, placeholder(DType::kInt32, {2, -1}, "k")); }),
              HasSubstr("[gather_nd] the last dimension of 'indices' [2,?] must be known"));
  // gather with batch_dims: a batch dim known on either side is known in the output.
  const Tensor q = placeholder(DType::kFloat32, {-1, 5, 2}, "q");
  EXPECT_EQ(gather(q, placeholder(DType::kInt32, {3, -1}, "j"), 1, 1).shape(), (Shape{3, -1, 2}));
}

TEST(ScatterGraphTest, TracedSessionAndGraphDefUseTensorFlowsOps) {
  const Tensor pv = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
  auto body = [](const Tensor& p) {
    const Tensor a = gather_nd(p, Tensor{{1, 2}, {0, 0}});                    // [6, 1]
    const Tensor b = scatter_nd(Tensor{{1}, {0}}, a, {3});                    // [1, 6, 0]
    const Tensor c = tensor_scatter_update(p, Tensor{{0, 1}}, Tensor{-1.0});  // p with p[0,1] = -1
    const Tensor d = gather(c, Tensor{{2}, {0}}, 1, 1);                       // [[3], [4]]
    return reduce_sum(c) * 100.0 + reduce_sum(d * Tensor{{1.0}, {10.0}}) + b;
  };
  const Tensor want = body(pv);
  EXPECT_THAT(want.to_vector<double>(), ElementsAre(1844.0, 1849.0, 1843.0));
  auto f = function(body);
  expect_close(f(pv), want, 0);
  expect_close(f(pv * 1.0), want, 0);
  EXPECT_EQ(f.trace_count(), 1);

  Graph g;
  Tensor x, y, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat64, {2, 3}, "x");
    y = body(x);
    dx = gradients({reduce_sum(y * Tensor{1.0, 2.0, 3.0})}, {x})[0];
  }
  const GraphDef def = to_graph_def(g);
  std::map<std::string, int> ops;
  int batch_gathers = 0;
  for (const auto& n : def.node()) {
    ++ops[n.op()];
    if (n.op() == "GatherV2" && n.attr().at("batch_dims").i() == 1) ++batch_gathers;
  }
  EXPECT_GE(ops["GatherNd"], 2);             // forward, and scatter_nd's gradient
  EXPECT_GE(ops["ScatterNd"], 2);            // forward, and gather_nd's gradient
  EXPECT_GE(ops["TensorScatterUpdate"], 2);  // forward, and its own gradient
  EXPECT_EQ(batch_gathers, 1);
  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  Tensor eager_dx;
  {
    GradientTape tape;
    tape.watch(pv);
    eager_dx = tape.gradient(reduce_sum(body(pv) * Tensor{1.0, 2.0, 3.0}), pv);
  }
  Session a(g), b(back);
  expect_close(a.run(y, {{x, pv}}), want, 0);
  expect_close(b.run(back.get_tensor_by_name(y.name()), {{back.get_tensor_by_name("x:0"), pv}}), want, 0);
  expect_close(a.run(dx, {{x, pv}}), eager_dx, 1e-12);
  expect_close(b.run(back.get_tensor_by_name(dx.name()), {{back.get_tensor_by_name("x:0"), pv}}), eager_dx, 1e-12);
  // A bad index fed at run time is the kernel's error, naming the op.
  Graph h;
  Tensor hi, hy;
  {
    auto scope = h.as_default();
    hi = placeholder(DType::kInt32, {-1, 2}, "i");
    hy = gather_nd(Tensor{{1.f, 2.f}, {3.f, 4.f}}, hi);
    EXPECT_EQ(hy.shape(), (Shape{-1}));
  }
  Session s(h);
  EXPECT_THAT(s.run(hy, {{hi, Tensor{{1, 1}}}}).to_vector<float>(), ElementsAre(4.f));
  EXPECT_THAT(error_of([&] { s.run(hy, {{hi, Tensor{{1, 1}, {0, 7}}}}); }),
              AllOf(HasSubstr("[gather_nd]"), HasSubstr("indices[1] = [0, 7] does not index into param shape [2,2]")));
}

}  // namespace
}  // namespace tapeflow
