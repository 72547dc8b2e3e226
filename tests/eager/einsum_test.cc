// einsum (eager/ops/einsum.h): each supported form against the primitives it stands for, the
// errors of bad equations, gradients through the primitives, and a traced / Session / GraphDef
// run whose nodes are those primitives (Note [einsum is a composite]).
#include "eager/ops/einsum.h"

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

Tensor eye_of(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * n + i)] = 1.0;
  return Tensor(v, Shape{n, n});
}

Tensor rnd(std::vector<int64_t> shape, int64_t seed) {
  return random_uniform(Shape(shape), -1.0, 1.0, DType::kFloat64, seed);
}

TEST(EinsumTest, TwoOperandFormsMatchThePrimitives) {
  const Tensor a = rnd({2, 3}, 1), b = rnd({3, 4}, 2), c = rnd({2, 4}, 3);
  expect_close(einsum("ij,jk->ik", a, b), matmul(a, b), 1e-12);
  expect_close(einsum("ij,jk", a, b), matmul(a, b), 1e-12);           // implicit output "ik"
  expect_close(einsum("ij,kj->ik", a, transpose(b)), matmul(a, b), 1e-12);
  expect_close(einsum("ji,jk->ki", a, c), matmul(transpose(c), a), 1e-12);
  expect_close(einsum("ij,jk->ki", a, b), transpose(matmul(a, b)), 1e-12);
  const Tensor x = rnd({5, 2, 3}, 4), y = rnd({5, 3, 4}, 5);
  expect_close(einsum("bij,bjk->bik", x, y), matmul(x, y), 1e-12);
  expect_close(einsum("bij,jk->bik", x, b), matmul(x, b), 1e-12);
  expect_close(einsum("bij,bkj->bik", x, transpose(y, {0, 2, 1})), matmul(x, y), 1e-12);
  expect_close(einsum("bij,bjk->bki", x, y), transpose(matmul(x, y), {0, 2, 1}), 1e-12);
  const Tensor u = Tensor{1.0, 2.0, 3.0}, v = Tensor{4.0, 5.0};
  const Tensor outer = einsum("i,j->ij", u, v);
  EXPECT_EQ(outer.shape(), (Shape{3, 2}));
  EXPECT_THAT(outer.to_vector<double>(), ElementsAre(4.0, 5.0, 8.0, 10.0, 12.0, 15.0));
  const Tensor dot = einsum("i,i->", u, u);
  EXPECT_EQ(dot.shape(), (Shape{}));
  EXPECT_EQ(dot.item<double>(), 14.0);
  expect_close(einsum("ij,ij->ij", a, a), a * a, 1e-12);               // every label a batch label
  expect_close(einsum("ij,ij->", a, a), reduce_sum(a * a), 1e-12);
  expect_close(einsum("ij,jk->i", a, b), reduce_sum(matmul(a, b), {1}), 1e-12);
  expect_close(einsum("ij,k->ik", a, u), matmul(reshape(reduce_sum(a, {1}), {2, 1}), reshape(u, {1, 3})), 1e-12);
  // Integers and float32 keep their dtype.
  EXPECT_THAT(einsum("ij,jk->ik", Tensor{{1, 2}}, Tensor{{3}, {4}}).to_vector<int32_t>(), ElementsAre(11));
  EXPECT_EQ(einsum("i,j->ij", Tensor{1.f}, Tensor{2.f}).dtype(), DType::kFloat32);
}

TEST(EinsumTest, OneOperandFormsTransposeAndSum) {
  const Tensor a = rnd({2, 3, 4}, 6);
  expect_close(einsum("ijk->kij", a), transpose(a, {2, 0, 1}), 0);
  expect_close(einsum("ij->ji", Tensor{{1.0, 2.0}}), Tensor{{1.0}, {2.0}}, 0);
  expect_close(einsum("ijk->", a), reduce_sum(a), 1e-12);
  expect_close(einsum("ijk->ki", a), transpose(reduce_sum(a, {1})), 1e-12);
  expect_close(einsum("ijk", a), a, 0);  // implicit: every label once, already in order
  expect_close(einsum("ijk->ijk", a), a, 0);
}

TEST(EinsumTest, BadEquationsSayWhatIsWrong) {
  const Tensor a = rnd({2, 3}, 7), b = rnd({4, 5}, 8);
  EXPECT_THAT(error_of([&] { einsum("ij,jk->ik", a); }),
              AllOf(HasSubstr("[einsum] equation 'ij,jk->ik': it names 2 operand(s) but 1 were given"),
                    HasSubstr("einsum_test.cc:")));
  EXPECT_THAT(error_of([&] { einsum("ij->i", rnd({2, 2, 2}, 9)); }), HasSubstr("name 2 dimension(s)"));
  EXPECT_THAT(error_of([&] { einsum("ij->k", a); }), HasSubstr("output label 'k' appears in no operand"));
  EXPECT_THAT(error_of([&] { einsum("ij->ii", a); }), HasSubstr("label 'i' is repeated in the output"));
  EXPECT_THAT(error_of([&] { einsum("i..j->ij", a); }),
              HasSubstr("operand 0's subscripts has a '.' that is not part of one '...'"));
  EXPECT_THAT(error_of([&] { einsum("...ijk->ij", a); }),
              HasSubstr("operand 0 has rank 2 (shape [2,3]) but its subscripts '...ijk' name 3 dimension(s) besides "
                        "the ellipsis"));
  EXPECT_THAT(error_of([&] { einsum("...i,...i->...", rnd({2, 3}, 20), rnd({4, 3}, 21)); }),
              HasSubstr("the ellipsis' dim 0 has size 2 in operand 0 but size 4 in operand 1"));
  EXPECT_THAT(error_of([&] { einsum("iij->j", rnd({2, 3, 3}, 22)); }),
              HasSubstr("label 'i' is repeated in operand 0 with sizes 2 and 3"));
  EXPECT_THAT(error_of([&] { einsum("...ij,jk->ik", rnd({2, 2, 3}, 23), rnd({3, 4}, 24)); }),
              HasSubstr("the operands' ellipsis stands for 1 dim(s) but the output subscripts have no '...'"));
  EXPECT_THAT(error_of([&] { einsum("...->...", ones(Shape(std::vector<int64_t>(130, 1)))); }),
              HasSubstr("the ellipsis stands for 130 dims; einsum takes at most 127"));
  EXPECT_THAT(error_of([&] { einsum("ij,jk->ik", a, b); }),
              HasSubstr("[einsum] equation 'ij,jk->ik': label 'j' has size 3 in operand 0 but size 4 in operand 1"));
  EXPECT_THAT(error_of([&] { einsum("ijk->i", a); }),
              HasSubstr("operand 0 has rank 2 (shape [2,3]) but its subscripts 'ijk' name 3 dimension(s)"));
  EXPECT_THAT(error_of([&] { einsum("i1->i", a); }), HasSubstr("'1' in operand 0's subscripts is not a letter"));
  EXPECT_THAT(error_of([&] { einsum("ij,jk->ik", a, cast(rnd({3, 2}, 10), DType::kFloat32)); }),
              HasSubstr("operand 0 has dtype float64 but operand 1 has dtype float32"));
}

TEST(EinsumTest, EllipsisBroadcastsLikeNumpyAndTensorflow) {
  const Tensor x = rnd({2, 3, 4}, 30), w = rnd({4, 5}, 31);
  expect_close(einsum("...b,bc->...c", x, w), matmul(x, w), 1e-12);  // Keras' EinsumDense
  const Tensor y = rnd({2, 4, 5}, 32);
  expect_close(einsum("...ij,...jk->...ik", x, y), matmul(x, y), 1e-12);
  // A dim of 1 broadcasts against the other operand's; dims the ellipsis lacks are the other's.
  const Tensor a = rnd({2, 1, 3, 4}, 33), b = rnd({5, 4, 6}, 34);
  const Tensor ab = einsum("...ij,...jk->...ik", a, b);
  EXPECT_EQ(ab.shape(), (Shape{2, 5, 3, 6}));
  expect_close(ab, matmul(a, b), 1e-12);
  const Tensor u = rnd({2, 1, 3}, 35), v = rnd({4, 3}, 36);
  expect_close(einsum("...i,...i->...", u, v), reduce_sum(u * v, {2}), 1e-12);
  // Implicit output: the ellipsis first, then the letters seen once in order. An explicit output
  // needs its "..." when the ellipsis stands for dims (TensorFlow's rule), not when it is empty.
  expect_close(einsum("...ji", x), transpose(x, {0, 2, 1}), 0);
  EXPECT_THAT(error_of([&] { einsum("...ij->ij", x); }),
              HasSubstr("[einsum] equation '...ij->ij': the operands' ellipsis stands for 1 dim(s) but the output "
                        "subscripts have no '...'"));
  const Tensor m = rnd({3, 4}, 38);
  expect_close(einsum("...ij->ij", m), m, 0);
  expect_close(einsum("i...->...i", x), transpose(x, {1, 2, 0}), 0);
  expect_close(einsum("...->...", x), x, 0);
  // An ellipsis of no dims is allowed.
  const Tensor flat = rnd({3, 4}, 37);
  expect_close(einsum("...ij,jk->...ik", flat, w), matmul(flat, w), 1e-12);
}

TEST(EinsumTest, RepeatedLabelsTakeDiagonals) {
  const Tensor m(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{3, 3});
  EXPECT_THAT(einsum("ii->i", m).to_vector<double>(), ElementsAre(1, 5, 9));
  EXPECT_EQ(einsum("ii", m).item<double>(), 15);  // implicit: i is seen twice, so summed: the trace
  EXPECT_EQ(einsum("ii->", m).item<double>(), 15);
  const Tensor cube = rnd({3, 3, 3}, 40);
  const std::vector<double> c = cube.to_vector<double>();
  EXPECT_THAT(einsum("iii->i", cube).to_vector<double>(), ElementsAre(c[0], c[13], c[26]));
  const Tensor batched = rnd({2, 3, 3}, 41);
  const std::vector<double> bv = batched.to_vector<double>();
  EXPECT_THAT(einsum("bii->bi", batched).to_vector<double>(), ElementsAre(bv[0], bv[4], bv[8], bv[9], bv[13], bv[17]));
  EXPECT_THAT(einsum("iib->bi", transpose(batched, {1, 2, 0})).to_vector<double>(),
              ElementsAre(bv[0], bv[4], bv[8], bv[9], bv[13], bv[17]));
  // With a second operand: out[i, j] = a[i, j] * b[j, j].
  const Tensor a = rnd({2, 3}, 42);
  expect_close(einsum("ij,jj->ij", a, m), a * Tensor(std::vector<double>{1, 5, 9}, Shape{3}), 1e-12);
  EXPECT_EQ(einsum("ii->i", Tensor(std::vector<int32_t>{1, 2, 3, 4}, Shape{2, 2})).dtype(), DType::kInt32);
  // Off the diagonal an inf or a NaN stays out (a product with 0 would be NaN).
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor wild(std::vector<float>{1, inf, std::nanf(""), 2}, Shape{2, 2});
  EXPECT_THAT(einsum("ii->i", wild).to_vector<float>(), ElementsAre(1, 2));
  EXPECT_EQ(einsum("ii", wild).item<float>(), 3);
  // The gradient of the trace is the identity.
  GradientTape tape;
  tape.watch(m);
  EXPECT_THAT(tape.gradient(einsum("ii", m), m).to_vector<double>(), ElementsAre(1, 0, 0, 0, 1, 0, 0, 0, 1));
}

TEST(EinsumTest, EllipsisAndDiagonalsTraceWithUnknownDims) {
  const Tensor w = rnd({4, 5}, 50);
  Graph g;
  Tensor x, y, d;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat64, {-1, 3, 4}, "x");
    y = einsum("...b,bc->...c", x, w);
    EXPECT_EQ(y.shape(), (Shape{-1, 3, 5}));
    d = einsum("bii->bi", placeholder(DType::kFloat64, {-1, 3, 3}, "m"));
    EXPECT_EQ(d.shape(), (Shape{-1, 3}));
    // A repeated label of unknown size has no mask.
    EXPECT_THAT(error_of([&] { einsum("ii->i", placeholder(DType::kFloat64, {-1, -1}, "u")); }),
                HasSubstr("label 'i' is repeated in operand 0 and its size is not known"));
  }
  const Tensor xv = rnd({2, 3, 4}, 51), mv = rnd({2, 3, 3}, 52);
  Session s(g);
  expect_close(s.run(y, {{x, xv}}), matmul(xv, w), 1e-12);
  expect_close(s.run(d, {{g.get_tensor_by_name("m:0"), mv}}), einsum("bii->bi", mv), 0);
}

TEST(EinsumTest, ThreeOrMoreOperandsContractTwoAtATime) {
  const Tensor a = rnd({2, 3}, 70), b = rnd({3, 4}, 71), c = rnd({4, 5}, 72), u = rnd({3}, 73);
  expect_close(einsum("ij,jk,kl->il", {a, b, c}), matmul(matmul(a, b), c), 1e-12);
  expect_close(einsum("ij,jk,kl", {a, b, c}), matmul(matmul(a, b), c), 1e-12);  // implicit "il"
  expect_close(einsum("i,i,i->", {u, u, u}), reduce_sum(u * u * u), 1e-12);
  // A label the last operand shares with the first stays through the middle contraction.
  const Tensor x = rnd({2, 3}, 74), y = rnd({3, 4}, 75), z = rnd({4, 2}, 76);
  expect_close(einsum("ij,jk,ki->i", {x, y, z}), reduce_sum(matmul(matmul(x, y), z) * eye_of(2), {1}), 1e-12);
  const Tensor bx = rnd({2, 2, 3}, 77), by = rnd({2, 3, 4}, 78), bz = rnd({4, 5}, 79);
  expect_close(einsum("...ij,...jk,kl->...il", {bx, by, bz}), matmul(matmul(bx, by), bz), 1e-12);
  expect_close(einsum("ij->ji", std::vector<Tensor>{a}), transpose(a), 0);
  EXPECT_THAT(error_of([&] { einsum("ij,jk,kl->il", {a, b, cast(c, DType::kFloat32)}); }),
              HasSubstr("operand 0 has dtype float64 but operand 2 has dtype float32"));
  EXPECT_THAT(error_of([&] { einsum("", std::vector<Tensor>{}); }), HasSubstr("[einsum] needs at least one operand"));
  // Gradients come through the pairs' primitives.
  GradientTape tape;
  tape.watch(b);
  const Tensor grad = tape.gradient(reduce_sum(einsum("ij,jk,kl->il", {a, b, c})), b);
  expect_close(grad, matmul(matmul(transpose(a), ones_like(matmul(matmul(a, b), c))), transpose(c)), 1e-12);
}

TEST(EinsumTest, GradientsComeThroughThePrimitives) {
  const Tensor a = rnd({2, 3}, 11), b = rnd({2, 3, 4}, 12), w = rnd({2, 2, 4}, 13);
  std::vector<Tensor> want, got;
  {
    GradientTape tape;
    tape.watch(a);
    tape.watch(b);
    want = tape.gradient(reduce_sum(matmul(a, b) * w), {Source(a), Source(b)});
  }
  {
    GradientTape tape;
    tape.watch(a);
    tape.watch(b);
    got = tape.gradient(reduce_sum(einsum("ij,bjk->bik", a, b) * w), {Source(a), Source(b)});
  }
  expect_close(got[0], want[0], 1e-12);
  expect_close(got[1], want[1], 1e-12);
}

TEST(EinsumTest, TracedAndGraphDefShowThePrimitives) {
  auto body = [](const Tensor& x, const Tensor& y) { return einsum("bij,bkj->bki", x, y); };
  const Tensor xv = rnd({2, 3, 4}, 14), yv = rnd({2, 5, 4}, 15);
  const Tensor want = body(xv, yv);
  EXPECT_EQ(want.shape(), (Shape{2, 5, 3}));
  auto f = function(body);
  expect_close(f(xv, yv), want, 0);

  Graph g;
  Tensor x, y, out, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat64, {2, 3, 4}, "x");
    y = placeholder(DType::kFloat64, {2, 5, 4}, "y");
    out = body(x, y);
    dx = gradients({reduce_sum(out * out)}, {x})[0];
  }
  const GraphDef def = to_graph_def(g);
  bool matmul_seen = false;
  for (const auto& n : def.node()) {
    EXPECT_NE(n.op(), "Einsum");
    matmul_seen |= n.op() == "BatchMatMulV2" || n.op() == "MatMul";
  }
  EXPECT_TRUE(matmul_seen);
  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  Session s(back);
  expect_close(s.run(back.get_tensor_by_name(out.name()),
                     {{back.get_tensor_by_name("x:0"), xv}, {back.get_tensor_by_name("y:0"), yv}}),
               want, 1e-12);
  Tensor eager_dx;
  {
    GradientTape tape;
    tape.watch(xv);
    const Tensor o = body(xv, yv);
    eager_dx = tape.gradient(reduce_sum(o * o), xv);
  }
  Session t(g);
  expect_close(t.run(dx, {{x, xv}, {y, yv}}), eager_dx, 1e-12);
  // An unknown batch size needs no reshape: the graph keeps it unknown and runs any batch.
  Graph h;
  Tensor hx, hy, ho;
  {
    auto scope = h.as_default();
    hx = placeholder(DType::kFloat64, {-1, 3, 4}, "x");
    hy = placeholder(DType::kFloat64, {-1, 5, 4}, "y");
    ho = body(hx, hy);
    EXPECT_EQ(ho.shape(), (Shape{-1, 5, 3}));
  }
  expect_close(Session(h).run(ho, {{hx, xv}, {hy, yv}}), want, 1e-12);
}

}  // namespace
}  // namespace tapeflow
