#include "eager/ops/array.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "core/errors.h"
#include "eager/ops/cast.h"
#include "devices/kernel_registry.h"
#include "eager/context.h"
#include "eager/op_def.h"
#include "graph/graph_def.h"
#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using F = std::vector<float>;
using I = std::vector<int32_t>;
using L = std::vector<int64_t>;

// The message of the InvalidArgumentError thrown by f (other error types fail the test).
template <typename Fn> std::string error_of(Fn f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "<no error>";
}

Tensor iota_f(const Shape& s) {
  F v(static_cast<size_t>(s.num_elements()));
  std::iota(v.begin(), v.end(), 0.f);
  return Tensor(v, s);
}

Tensor x23() { return Tensor{{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}; }

// ---------------------------------------------------------------- views

TEST(ReshapeTest, InfersMinusOneAndSharesTheBuffer) {
  Tensor x = x23();
  Tensor y = reshape(x, {3, -1});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(y.to_vector<float>(), (F{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(y.shares_buffer_with(x));
  EXPECT_EQ(reshape(x, {-1}).shape(), (Shape{6}));
  EXPECT_EQ(reshape(Tensor(7), {1, 1}).to_vector<int32_t>(), (I{7}));
  EXPECT_EQ(reshape(Tensor{7}, {}).shape(), Shape{});
  EXPECT_EQ(reshape(Tensor(L{}, Shape{0, 4}), {2, 0}).shape(), (Shape{2, 0}));
}

TEST(ReshapeTest, ErrorsNameBothShapes) {
  Tensor x = x23();
  EXPECT_THAT(error_of([&] { reshape(x, {4, 2}); }),
              AllOf(HasSubstr("[reshape]"), HasSubstr("[2,3]"), HasSubstr("[4,2]"), HasSubstr("6 elements")));
  EXPECT_THAT(error_of([&] { reshape(x, {-1, -1}); }), AllOf(HasSubstr("[reshape]"), HasSubstr("more than one -1")));
  EXPECT_THAT(error_of([&] { reshape(x, {4, -1}); }), AllOf(HasSubstr("[2,3]"), HasSubstr("[4,-1]")));
  EXPECT_THAT(error_of([&] { reshape(x, {-2, 3}); }), HasSubstr("negative dimension -2"));
  EXPECT_THAT(error_of([&] { reshape(Tensor(F{}, Shape{0, 3}), {0, -1}); }), HasSubstr("[reshape]"));
  EXPECT_EQ(x.shape(), (Shape{2, 3}));
  EXPECT_EQ(x.at<float>({1, 2}), 6.f);
}

TEST(ReshapeTest, ErrorCarriesTheCallerLine) {
  Tensor x = x23();
  const int line = __LINE__ + 2;
  try {
    reshape(x, {5});
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(static_cast<int>(e.location().line()), line);
    EXPECT_THAT(std::string(e.what()), HasSubstr("array_test.cc:" + std::to_string(line)));
  }
}

TEST(ViewTest, ExpandDimsSqueezeIdentity) {
  Tensor x = x23();
  EXPECT_EQ(expand_dims(x, 0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(expand_dims(x, 2).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(expand_dims(x, -1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(expand_dims(x, -3).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(expand_dims(Tensor(true), 0).shape(), (Shape{1}));
  Tensor e = expand_dims(x, 1);
  EXPECT_TRUE(e.shares_buffer_with(x));
  EXPECT_EQ(e.to_vector<float>(), x.to_vector<float>());

  Tensor ones = iota_f(Shape{1, 2, 1, 3, 1});
  EXPECT_EQ(squeeze(ones).shape(), (Shape{2, 3}));
  EXPECT_EQ(squeeze(ones, {0, -1}).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(squeeze(ones, {2}).shape(), (Shape{1, 2, 3, 1}));
  EXPECT_TRUE(squeeze(ones).shares_buffer_with(ones));
  EXPECT_EQ(squeeze(Tensor(F{5}, Shape{1, 1})).shape(), Shape{});

  Tensor id = identity(x);
  EXPECT_TRUE(id.shares_buffer_with(x));
  EXPECT_EQ(id.shape(), x.shape());
  EXPECT_EQ(identity(Tensor{true, false}).to_vector<bool>(), (std::vector<bool>{true, false}));
}

// identity_n: views of every input, whatever their dtypes; traced, it is one IdentityN node that
// a GraphDef carries with TensorFlow's list(type) attr T.
TEST(ViewTest, IdentityNIsAViewOfEachInput) {
  const Tensor x = x23(), flags{true, false}, n(int64_t{7});
  const std::vector<Tensor> out = identity_n({x, flags, n});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].shares_buffer_with(x));
  EXPECT_TRUE(out[1].shares_buffer_with(flags));
  EXPECT_EQ(out[0].to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(out[1].dtype(), DType::kBool);
  EXPECT_EQ(out[2].item<int64_t>(), 7);
  EXPECT_THAT(error_of([&] { identity_n({}); }), HasSubstr("[identity_n] needs at least one input"));
  EXPECT_THAT(error_of([&] { identity_n({x, Tensor()}); }), AllOf(HasSubstr("[identity_n] input 1"), HasSubstr("empty")));

  Graph g;
  {
    auto scope = g.as_default();
    const Tensor a = placeholder(DType::kFloat32, {2}, "a");
    const Tensor b = placeholder(DType::kInt32, {}, "b");
    identity_n({a, b});
  }
  const GraphDef def = to_graph_def(g);
  const proto::NodeDef& node = def.node(2);
  EXPECT_EQ(node.op(), "IdentityN");
  EXPECT_EQ(node.attr().at("T").list().type_size(), 2);
  EXPECT_EQ(node.attr().at("T").list().type(1), proto::DT_INT32);
  Graph back = graph_from_graph_def(def);
  Session sess(back);
  const std::vector<Tensor> got = sess.run({back.get_tensor_by_name(node.name() + ":0"), back.get_tensor_by_name(node.name() + ":1")},
                                           {{back.get_tensor_by_name("a:0"), Tensor{1.f, 2.f}},
                                            {back.get_tensor_by_name("b:0"), Tensor(int32_t{3})}});
  EXPECT_EQ(got[0].to_vector<float>(), (F{1.f, 2.f}));
  EXPECT_EQ(got[1].item<int32_t>(), 3);
  // In a graph, an IdentityN output shares its input's buffer: a consumer that could write in
  // place (Neg on its last use) must leave the input, which another node still reads, intact.
  Graph h;
  Tensor a, r, z;
  {
    auto scope = h.as_default();
    a = placeholder(DType::kFloat32, {3}, "a");
    const Tensor doubled = a * 2.f;
    r = -identity_n({doubled})[0];
    z = doubled + 1.f;
  }
  const std::vector<Tensor> rz = Session(h).run({r, z}, {{a, Tensor{1.f, 2.f, 3.f}}});
  EXPECT_EQ(rz[0].to_vector<float>(), (F{-2.f, -4.f, -6.f}));
  EXPECT_EQ(rz[1].to_vector<float>(), (F{3.f, 5.f, 7.f}));
  // A T that does not list the inputs' dtypes is the import's error, naming both lists.
  GraphDef wrong = def;
  wrong.mutable_node(2)->mutable_attr()->at("T").mutable_list()->set_type(1, proto::DT_FLOAT);
  Graph other;
  EXPECT_THAT(error_of([&] { import_graph_def(other, wrong); }),
              HasSubstr("attr 'T' lists [float32, float32] but the inputs are [float32, int32]"));
}

TEST(ViewTest, AxisErrorsNameAxisAndRank) {
  Tensor x = x23();
  EXPECT_THAT(error_of([&] { expand_dims(x, 3); }),
              AllOf(HasSubstr("[expand_dims]"), HasSubstr("axis 3"), HasSubstr("rank 2"), HasSubstr("[-3, 3)")));
  EXPECT_THAT(error_of([&] { expand_dims(x, -4); }), HasSubstr("axis -4"));
  EXPECT_THAT(error_of([&] { squeeze(x, {2}); }),
              AllOf(HasSubstr("[squeeze]"), HasSubstr("axis 2"), HasSubstr("rank 2")));
  EXPECT_THAT(error_of([&] { squeeze(x, {1}); }),
              AllOf(HasSubstr("[squeeze]"), HasSubstr("dimension 1"), HasSubstr("[2,3]"), HasSubstr("not 1")));
  EXPECT_THAT(error_of([&] { identity(Tensor()); }), AllOf(HasSubstr("[identity]"), HasSubstr("empty")));
  EXPECT_EQ(x.at<float>({0, 1}), 2.f);
}

// ---------------------------------------------------------------- transpose

// out[i] = in[perm-mapped index], by index arithmetic (the reference for transpose tests).
F reference_transpose(const F& in, const Shape& s, const L& perm) {
  const int r = s.rank();
  auto in_st = row_major_strides(s);
  Shape os;
  for (int64_t p : perm) os.push_back(s.dim(static_cast<int>(p)));
  F out(in.size());
  for (int64_t flat = 0; flat < static_cast<int64_t>(out.size()); ++flat) {
    int64_t rem = flat, src = 0;
    for (int k = r - 1; k >= 0; --k) {
      src += (rem % os.dim(k)) * in_st[perm[k]];
      rem /= os.dim(k);
    }
    out[flat] = in[src];
  }
  return out;
}

TEST(TransposeTest, SmallValues) {
  Tensor y = transpose(x23());
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.to_vector<float>(), (F{1, 4, 2, 5, 3, 6}));
  // [2,2,3] with perm {2,0,1}: out[k][i][j] = in[i][j][k].
  Tensor z = transpose(Tensor{{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {10, 11, 12}}}, {2, 0, 1});
  EXPECT_EQ(z.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(z.to_vector<int32_t>(), (I{1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12}));
  EXPECT_EQ(transpose(Tensor{{true, false}}).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(transpose(Tensor(3.0)).item<double>(), 3.0);
  EXPECT_EQ(transpose(Tensor(L{}, Shape{0, 3})).shape(), (Shape{3, 0}));
}

TEST(TransposeTest, MatchesReferenceForManyShapesAndSizes) {
  struct Case { Shape s; L perm; };
  const std::vector<Case> cases = {
      {Shape{67, 129}, {1, 0}},            // tiled, ragged tiles
      {Shape{300, 400}, {1, 0}},           // tiled and parallel
      {Shape{3, 50, 70}, {2, 1, 0}},
      {Shape{3, 50, 70}, {0, 2, 1}},       // batched matrix transpose
      {Shape{30, 50, 70}, {1, 0, 2}},      // inner rows stay contiguous: memcpy path
      {Shape{4, 1, 5, 6}, {3, 1, 0, 2}},   // size-1 dims dropped
      {Shape{2, 3, 4, 5}, {0, 1, 2, 3}},   // identity permutation
      {Shape{5, 6, 7, 8, 9}, {4, 2, 0, 3, 1}},
  };
  for (const Case& c : cases) {
    Tensor x = iota_f(c.s);
    Tensor y = transpose(x, c.perm);
    EXPECT_EQ(y.to_vector<float>(), reference_transpose(x.to_vector<float>(), c.s, c.perm)) << c.s.to_string();
  }
  // One instantiation per element size: check 1- and 8-byte dtypes too.
  std::vector<uint8_t> bytes(6 * 7);
  std::iota(bytes.begin(), bytes.end(), uint8_t{0});
  Tensor b = transpose(Tensor(bytes, Shape{6, 7}));
  EXPECT_EQ(b.at<uint8_t>({3, 2}), 2 * 7 + 3);
  Tensor d = transpose(Tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, Shape{3, 2}));
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{1, 3, 5, 2, 4, 6}));
  for (const auto& [s, perm] : std::vector<std::pair<Shape, L>>{{Shape{37, 53}, {1, 0}}, {Shape{5, 7, 9}, {2, 1, 0}}}) {
    const F ref = reference_transpose(iota_f(s).to_vector<float>(), s, perm);
    EXPECT_EQ(transpose(cast(iota_f(s), DType::kFloat64), perm).to_vector<double>(),
              std::vector<double>(ref.begin(), ref.end()));
    EXPECT_EQ(transpose(cast(iota_f(s), DType::kInt64), perm).to_vector<int64_t>(), L(ref.begin(), ref.end()));
  }
}

TEST(TransposeTest, PermErrors) {
  Tensor x = x23();
  EXPECT_THAT(error_of([&] { transpose(x, {0, 0}); }),
              AllOf(HasSubstr("[transpose]"), HasSubstr("[0,0]"), HasSubstr("not a permutation")));
  EXPECT_THAT(error_of([&] { transpose(x, {0, 2}); }), HasSubstr("not a permutation of [0, 2)"));
  EXPECT_THAT(error_of([&] { transpose(x, {1, 0, 2}); }), AllOf(HasSubstr("3 entries"), HasSubstr("rank 2")));
  EXPECT_THAT(error_of([&] { transpose(Tensor()); }), HasSubstr("[transpose]"));
  EXPECT_EQ(x.at<float>({1, 0}), 4.f);
}

// ---------------------------------------------------------------- concat, stack, unstack, split

TEST(ConcatTest, AlongEachAxis) {
  Tensor a = x23();
  Tensor b = Tensor{{7.f, 8.f, 9.f}};
  Tensor c0 = concat({a, b}, 0);
  EXPECT_EQ(c0.shape(), (Shape{3, 3}));
  EXPECT_EQ(c0.to_vector<float>(), (F{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  Tensor c = Tensor{{10.f}, {20.f}};
  Tensor c1 = concat({a, c, a}, -1);
  EXPECT_EQ(c1.shape(), (Shape{2, 7}));
  EXPECT_EQ(c1.to_vector<float>(), (F{1, 2, 3, 10, 1, 2, 3, 4, 5, 6, 20, 4, 5, 6}));
  // An input with 0 along the axis contributes nothing.
  Tensor empty(F{}, Shape{2, 0});
  EXPECT_EQ(concat({empty, c, empty}, 1).to_vector<float>(), (F{10, 20}));
  EXPECT_EQ(concat({Tensor{true}, Tensor{false, true}}, 0).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(concat({Tensor(L{1, 2}, Shape{2})}, 0).to_vector<int64_t>(), (L{1, 2}));
}

TEST(ConcatTest, LargeInputsMatchReference) {
  // Axis 0 of two big blocks (one row, split in ranges) and axis 1 of many rows.
  Tensor a = iota_f(Shape{300, 257});
  Tensor b = iota_f(Shape{200, 257});
  const F va = a.to_vector<float>(), vb = b.to_vector<float>();
  F expect = va;
  expect.insert(expect.end(), vb.begin(), vb.end());
  EXPECT_EQ(concat({a, b}, 0).to_vector<float>(), expect);
  Tensor bt = iota_f(Shape{300, 100});
  const F vbt = bt.to_vector<float>();
  F expect1;
  for (int i = 0; i < 300; ++i) {
    expect1.insert(expect1.end(), va.begin() + i * 257, va.begin() + (i + 1) * 257);
    expect1.insert(expect1.end(), vbt.begin() + i * 100, vbt.begin() + (i + 1) * 100);
  }
  EXPECT_EQ(concat({a, bt}, 1).to_vector<float>(), expect1);
  // Narrow rows with an empty input in the middle, split over threads mid-row.
  Tensor n1 = iota_f(Shape{1000, 3}), n2 = iota_f(Shape{1000, 70});
  Tensor c = concat({n1, Tensor(F{}, Shape{1000, 0}), n2}, 1);
  EXPECT_EQ(c.shape(), (Shape{1000, 73}));
  const F vc = c.to_vector<float>();
  for (int i = 0; i < 1000; i += 37) {
    EXPECT_EQ(vc[i * 73 + 2], i * 3 + 2) << i;
    EXPECT_EQ(vc[i * 73 + 3], i * 70) << i;
    EXPECT_EQ(vc[i * 73 + 72], i * 70 + 69) << i;
  }
}

TEST(ConcatTest, Errors) {
  Tensor a = x23();
  Tensor b = Tensor{{1.f, 2.f}, {3.f, 4.f}};
  EXPECT_THAT(error_of([&] { concat({a, a, b}, 0); }),
              AllOf(HasSubstr("[concat]"), HasSubstr("input 2"), HasSubstr("[2,2]"), HasSubstr("dimension 1")));
  EXPECT_THAT(error_of([&] { concat({a, Tensor{{1, 2, 3}}}, 0); }),
              AllOf(HasSubstr("input 1"), HasSubstr("int32"), HasSubstr("float32")));
  EXPECT_THAT(error_of([&] { concat({a, Tensor{1.f, 2.f, 3.f}}, 0); }),
              AllOf(HasSubstr("input 1"), HasSubstr("rank 1")));
  EXPECT_THAT(error_of([&] { concat({a, a}, 2); }),
              AllOf(HasSubstr("[concat]"), HasSubstr("axis 2"), HasSubstr("rank 2")));
  EXPECT_THAT(error_of([&] { concat({}, 0); }), HasSubstr("at least one input"));
  EXPECT_THAT(error_of([&] { concat({Tensor(1.f), Tensor(2.f)}, 0); }), HasSubstr("scalars"));
  EXPECT_EQ(a.at<float>({0, 2}), 3.f);
  EXPECT_EQ(b.at<float>({1, 1}), 4.f);
}

TEST(StackTest, AlongNewAxes) {
  Tensor a = Tensor{1, 2, 3}, b = Tensor{4, 5, 6};
  Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.shape(), (Shape{2, 3}));
  EXPECT_EQ(s0.to_vector<int32_t>(), (I{1, 2, 3, 4, 5, 6}));
  Tensor s1 = stack({a, b}, 1);
  EXPECT_EQ(s1.shape(), (Shape{3, 2}));
  EXPECT_EQ(s1.to_vector<int32_t>(), (I{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(stack({a, b}, -1).to_vector<int32_t>(), s1.to_vector<int32_t>());
  EXPECT_EQ(stack({Tensor(1.5), Tensor(2.5)}).to_vector<double>(), (std::vector<double>{1.5, 2.5}));

  EXPECT_THAT(error_of([&] { stack({a, Tensor{1, 2}}); }),
              AllOf(HasSubstr("[stack]"), HasSubstr("input 1"), HasSubstr("[2]"), HasSubstr("[3]")));
  EXPECT_THAT(error_of([&] { stack({a, Tensor{1.f, 2.f, 3.f}}); }), AllOf(HasSubstr("[stack]"), HasSubstr("dtype")));
  EXPECT_THAT(error_of([&] { stack({a, b}, 2); }),
              AllOf(HasSubstr("[stack]"), HasSubstr("axis 2"), HasSubstr("rank 1"), HasSubstr("[-2, 2)")));
  EXPECT_THAT(error_of([&] { stack({}); }), HasSubstr("[stack]"));
  EXPECT_THAT(error_of([&] { stack({a, Tensor()}); }), HasSubstr("values[1]"));
}

TEST(UnstackTest, SlicesAlongAxis) {
  Tensor x = x23();
  auto rows = unstack(x);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].shape(), (Shape{3}));
  EXPECT_EQ(rows[1].to_vector<float>(), (F{4, 5, 6}));
  auto cols = unstack(x, -1);
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_EQ(cols[2].to_vector<float>(), (F{3, 6}));
  EXPECT_EQ(stack(cols, 1).to_vector<float>(), x.to_vector<float>());
  EXPECT_THAT(error_of([&] { unstack(x, 2); }), AllOf(HasSubstr("[unstack]"), HasSubstr("axis 2")));
  EXPECT_THAT(error_of([&] { unstack(Tensor(1)); }), HasSubstr("rank 0"));
}

TEST(SplitTest, EvenAndSized) {
  Tensor x = iota_f(Shape{2, 6});
  auto parts = split(x, 3, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[1].to_vector<float>(), (F{2, 3, 8, 9}));
  auto sized = split(x, {1, -1, 2}, -1);
  ASSERT_EQ(sized.size(), 3u);
  EXPECT_EQ(sized[0].to_vector<float>(), (F{0, 6}));
  EXPECT_EQ(sized[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(sized[1].to_vector<float>(), (F{1, 2, 3, 7, 8, 9}));
  EXPECT_EQ(sized[2].to_vector<float>(), (F{4, 5, 10, 11}));
  auto whole = split(x, {2});  // sizes {2} along axis 0, not two pieces
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].shape(), (Shape{2, 6}));
  EXPECT_EQ(split(x, {0, 6}, 1)[0].shape(), (Shape{2, 0}));

  EXPECT_THAT(error_of([&] { split(x, 4, 1); }), AllOf(HasSubstr("[split]"), HasSubstr("not divisible by 4")));
  EXPECT_THAT(error_of([&] { split(x, {1, 2}, 1); }), AllOf(HasSubstr("[split]"), HasSubstr("do not sum")));
  EXPECT_THAT(error_of([&] { split(x, {-1, -1}, 1); }), HasSubstr("one -1"));
  EXPECT_THAT(error_of([&] { split(x, {7, -1}, 1); }), HasSubstr("do not sum"));
  EXPECT_THAT(error_of([&] { split(x, 0, 1); }), HasSubstr("[split] num_split must be positive, got 0"));
  EXPECT_THAT(error_of([&] { split(x, 2, -3); }), AllOf(HasSubstr("axis -3"), HasSubstr("rank 2")));
  EXPECT_EQ(x.at<float>({1, 5}), 11.f);
}

// ---------------------------------------------------------------- slice and strided_slice

TEST(SliceTest, ValuesAndToTheEnd) {
  Tensor x = iota_f(Shape{3, 4});
  Tensor s = slice(x, {1, 1}, {2, 2});
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(s.to_vector<float>(), (F{5, 6, 9, 10}));
  EXPECT_EQ(slice(x, {0, 2}, {-1, -1}).to_vector<float>(), (F{2, 3, 6, 7, 10, 11}));
  EXPECT_EQ(slice(x, {3, 0}, {-1, 4}).shape(), (Shape{0, 4}));
  EXPECT_EQ(slice(Tensor{true, false, true}, {1}, {2}).to_vector<bool>(), (std::vector<bool>{false, true}));
  // A large slice with contiguous rows (parallel, memcpy rows).
  Tensor big = iota_f(Shape{400, 300});
  Tensor bs = slice(big, {10, 20}, {380, 250});
  EXPECT_EQ(bs.at<float>({0, 0}), 10 * 300 + 20);
  EXPECT_EQ(bs.at<float>({379, 249}), 389 * 300 + 269);
}

TEST(SliceTest, Errors) {
  Tensor x = iota_f(Shape{3, 4});
  EXPECT_THAT(error_of([&] { slice(x, {1, 3}, {1, 2}); }),
              AllOf(HasSubstr("[slice]"), HasSubstr("[3, 5)"), HasSubstr("dimension 1"), HasSubstr("[3,4]")));
  EXPECT_THAT(error_of([&] { slice(x, {4, 0}, {-1, -1}); }), HasSubstr("out of bounds"));
  EXPECT_THAT(error_of([&] { slice(x, {-1, 0}, {1, 1}); }), HasSubstr("begin[0] = -1"));
  EXPECT_THAT(error_of([&] { slice(x, {0, 0}, {1, -2}); }), HasSubstr("size[1] = -2"));
  EXPECT_THAT(error_of([&] { slice(x, {0}, {1}); }), HasSubstr("one entry per dimension"));
  EXPECT_EQ(x.at<float>({2, 3}), 11.f);
}

// Python's slice semantics on range(n), written the way CPython does it.
std::vector<int64_t> python_slice(int64_t n, int64_t b, int64_t e, int64_t s) {
  auto adjust = [&](int64_t v) {
    if (v < 0) {
      v += n;
      if (v < 0) v = s < 0 ? -1 : 0;
    } else if (v >= n) {
      v = s < 0 ? n - 1 : n;
    }
    return v;
  };
  std::vector<int64_t> out;
  for (int64_t i = adjust(b); s > 0 ? i < adjust(e) : i > adjust(e); i += s) out.push_back(i);
  return out;
}

TEST(StridedSliceTest, MatchesPythonSlicingIn1D) {
  Tensor x(L{0, 1, 2, 3, 4}, Shape{5});
  for (int64_t b = -7; b <= 7; ++b)
    for (int64_t e = -7; e <= 7; ++e)
      for (int64_t s : {-3, -2, -1, 1, 2, 3}) {
        Tensor y = strided_slice(x, {b}, {e}, {s});
        EXPECT_EQ(y.to_vector<int64_t>(), python_slice(5, b, e, s)) << b << ":" << e << ":" << s;
      }
}

TEST(StridedSliceTest, MasksAs2DIndexing) {
  Tensor x = iota_f(Shape{3, 4});
  // x[:, ::-1]
  Tensor r = strided_slice(x, {0, 0}, {0, 0}, {1, -1}, {.begin_mask = 3, .end_mask = 3});
  EXPECT_EQ(r.to_vector<float>(), (F{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}));
  // x[1:, 1:3]
  Tensor s = strided_slice(x, {1, 1}, {0, 3}, {}, {.end_mask = 1});
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(s.to_vector<float>(), (F{5, 6, 9, 10}));
  // x[-1] (shrink) and x[:, 2] (shrink on axis 1)
  Tensor last = strided_slice(x, {-1}, {0}, {1}, {.shrink_axis_mask = 1});
  EXPECT_EQ(last.shape(), (Shape{4}));
  EXPECT_EQ(last.to_vector<float>(), (F{8, 9, 10, 11}));
  Tensor col = strided_slice(x, {0, 2}, {0, 3}, {1, 1}, {.begin_mask = 1, .end_mask = 1, .shrink_axis_mask = 2});
  EXPECT_EQ(col.shape(), (Shape{3}));
  EXPECT_EQ(col.to_vector<float>(), (F{2, 6, 10}));
  EXPECT_EQ(strided_slice(x, {1, 2}, {0, 0}, {1, 1}, {.shrink_axis_mask = 3}).item<float>(), 6.f);
  // x[..., 1] and x[tf.newaxis, ::2]
  Tensor e = strided_slice(x, {0, 1}, {0, 2}, {1, 1}, {.ellipsis_mask = 1, .shrink_axis_mask = 2});
  EXPECT_EQ(e.to_vector<float>(), (F{1, 5, 9}));
  Tensor n = strided_slice(x, {0, 0}, {0, 0}, {1, 2}, {.begin_mask = 2, .end_mask = 2, .new_axis_mask = 1});
  EXPECT_EQ(n.shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(n.to_vector<float>(), (F{0, 1, 2, 3, 8, 9, 10, 11}));
  // x[::2, ::-3] of a large tensor against index arithmetic.
  Tensor big = iota_f(Shape{300, 301});
  Tensor bs = strided_slice(big, {0, 0}, {0, 0}, {2, -3}, {.begin_mask = 3, .end_mask = 3});
  EXPECT_EQ(bs.shape(), (Shape{150, 101}));
  EXPECT_EQ(bs.at<float>({7, 5}), 14 * 301 + 300 - 15);
}

TEST(StridedSliceTest, Errors) {
  Tensor x = iota_f(Shape{3, 4});
  EXPECT_THAT(error_of([&] { strided_slice(x, {0}, {2}, {0}); }),
              AllOf(HasSubstr("[strided_slice]"), HasSubstr("strides[0] must be non-zero")));
  EXPECT_THAT(error_of([&] { strided_slice(x, {5}, {6}, {1}, {.shrink_axis_mask = 1}); }),
              AllOf(HasSubstr("index 5"), HasSubstr("dimension 0 of size 3"), HasSubstr("[3,4]")));
  EXPECT_THAT(error_of([&] { strided_slice(x, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}); }), HasSubstr("too many"));
  EXPECT_THAT(error_of([&] { strided_slice(x, {0}, {1, 2}, {1}); }), HasSubstr("same length"));
  EXPECT_THAT(error_of([&] { strided_slice(x, {0, 0}, {1, 1}, {1, 1}, {.ellipsis_mask = 3}); }),
              HasSubstr("one ellipsis"));
  EXPECT_EQ(x.at<float>({2, 0}), 8.f);
}

// ---------------------------------------------------------------- gather and one_hot

TEST(GatherTest, AlongAxesWithBothIndexTypes) {
  Tensor p = Tensor{{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}, {7.f, 8.f, 9.f}};
  Tensor g = gather(p, Tensor{2, 0, 2});
  EXPECT_EQ(g.shape(), (Shape{3, 3}));
  EXPECT_EQ(g.to_vector<float>(), (F{7, 8, 9, 1, 2, 3, 7, 8, 9}));
  Tensor g1 = gather(p, Tensor(L{2, 0}, Shape{2}), 1);
  EXPECT_EQ(g1.to_vector<float>(), (F{3, 1, 6, 4, 9, 7}));
  EXPECT_EQ(gather(p, Tensor(int64_t{1}), -1).to_vector<float>(), (F{2, 5, 8}));  // scalar index drops the dim
  Tensor g2 = gather(Tensor{10, 20, 30}, Tensor{{0, 1}, {2, 2}});
  EXPECT_EQ(g2.shape(), (Shape{2, 2}));
  EXPECT_EQ(g2.dtype(), DType::kInt32);
  EXPECT_EQ(g2.to_vector<int32_t>(), (I{10, 20, 30, 30}));
  EXPECT_EQ(gather(Tensor{true, false}, Tensor{1, 1, 0}).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(gather(p, Tensor(I{}, Shape{0})).shape(), (Shape{0, 3}));
}

TEST(GatherTest, LargeAlongInnerAxisMatchesReference) {
  Tensor p = iota_f(Shape{300, 500});
  L idx(400);
  for (int i = 0; i < 400; ++i) idx[i] = (i * 7919) % 500;
  const F g = gather(p, Tensor(idx, Shape{400}), 1).to_vector<float>();
  ASSERT_EQ(g.size(), 300u * 400u);
  for (int o = 0; o < 300; ++o)
    for (int i = 0; i < 400; ++i) ASSERT_EQ(g[o * 400 + i], o * 500 + idx[i]) << o << "," << i;
  Tensor rows = gather(iota_f(Shape{100, 1000}), Tensor(I{99, 0, 42}, Shape{3}));
  EXPECT_EQ(rows.at<float>({2, 999}), 42999.f);
}

TEST(GatherTest, Errors) {
  Tensor p = Tensor{{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}};
  EXPECT_THAT(error_of([&] { gather(p, Tensor{0, 5}); }),
              AllOf(HasSubstr("[gather]"), HasSubstr("indices[1] = 5 is not in [0, 2)")));
  EXPECT_THAT(error_of([&] { gather(p, Tensor{{0, 1}, {-1, 0}}, 1); }),
              HasSubstr("indices[1,0] = -1 is not in [0, 3)"));
  EXPECT_THAT(error_of([&] { gather(p, Tensor{0.f}); }),
              AllOf(HasSubstr("[gather]"), HasSubstr("'indices'"), HasSubstr("float32")));
  EXPECT_THAT(error_of([&] { gather(p, Tensor{0}, 2); }),
              AllOf(HasSubstr("axis 2"), HasSubstr("'params'"), HasSubstr("rank 2")));
  EXPECT_EQ(p.at<float>({1, 2}), 6.f);
}

TEST(OneHotTest, ValuesAxesAndOutOfRangeRows) {
  Tensor y = one_hot(Tensor{0, 2, 5, -1}, 3);
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(y.to_vector<float>(), (F{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  Tensor t = one_hot(Tensor(L{1, 0}, Shape{2}), 3, 5, -1, 0, DType::kInt32);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.to_vector<int32_t>(), (I{-1, 5, 5, -1, -1, -1}));
  Tensor m = one_hot(Tensor{{0, 1}, {1, 1}}, 2, 1, 0, 1, DType::kBool);
  EXPECT_EQ(m.shape(), (Shape{2, 2, 2}));  // [i, depth, j]
  EXPECT_EQ(m.to_vector<bool>(), (std::vector<bool>{true, false, false, true, false, false, true, true}));
  Tensor u = one_hot(Tensor(std::vector<uint8_t>{2}, Shape{1}), 3, 1, 0, -1, DType::kFloat64);
  EXPECT_EQ(u.to_vector<double>(), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(one_hot(Tensor{1}, 0).shape(), (Shape{1, 0}));
}

TEST(OneHotTest, Errors) {
  Tensor i = Tensor{0, 1};
  EXPECT_THAT(error_of([&] { one_hot(i, -2); }), AllOf(HasSubstr("[one_hot]"), HasSubstr("depth -2")));
  EXPECT_THAT(error_of([&] { one_hot(Tensor{0.f}, 2); }), AllOf(HasSubstr("'indices'"), HasSubstr("float32")));
  EXPECT_THAT(error_of([&] { one_hot(i, 2, 1, 0, 2); }),
              AllOf(HasSubstr("axis 2"), HasSubstr("rank 1"), HasSubstr("[-2, 2)")));
  EXPECT_THAT(error_of([&] { one_hot(i, 2, 300, 0, -1, DType::kUInt8); }),
              AllOf(HasSubstr("on_value 300"), HasSubstr("uint8")));
  EXPECT_EQ(i.to_vector<int32_t>(), (I{0, 1}));
}

// ---------------------------------------------------------------- pad and tile

TEST(PadTest, ConstantValues) {
  Tensor p = pad(Tensor{{1, 2}, {3, 4}}, {{1, 0}, {0, 2}}, 9);
  EXPECT_EQ(p.shape(), (Shape{3, 4}));
  EXPECT_EQ(p.dtype(), DType::kInt32);
  EXPECT_EQ(p.to_vector<int32_t>(), (I{9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9}));
  EXPECT_EQ(pad(Tensor{1.5f}, {{2, 1}}).to_vector<float>(), (F{0, 0, 1.5f, 0}));
  EXPECT_EQ(pad(Tensor{true}, {{1, 1}}, 0).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(pad(Tensor(F{}, Shape{0, 2}), {{1, 0}, {0, 0}}, -1).to_vector<float>(), (F{-1, -1}));
  EXPECT_EQ(pad(Tensor(2.0), {}).item<double>(), 2.0);
  Tensor big = pad(iota_f(Shape{300, 300}), {{2, 3}, {4, 5}}, -1);
  EXPECT_EQ(big.shape(), (Shape{305, 309}));
  EXPECT_EQ(big.at<float>({1, 100}), -1.f);
  EXPECT_EQ(big.at<float>({2, 4}), 0.f);
  EXPECT_EQ(big.at<float>({301, 303}), 299 * 300 + 299);
  EXPECT_EQ(big.at<float>({301, 304}), -1.f);
}

TEST(PadTest, Errors) {
  Tensor x = x23();
  EXPECT_THAT(error_of([&] { pad(x, {{0, 0}, {-1, 0}}); }),
              AllOf(HasSubstr("[pad]"), HasSubstr("paddings[1] = (-1, 0)"), HasSubstr("non-negative")));
  EXPECT_THAT(error_of([&] { pad(x, {{0, 0}}); }), AllOf(HasSubstr("1 (before, after) pairs"), HasSubstr("rank 2")));
  EXPECT_THAT(error_of([&] { pad(Tensor{1, 2}, {{1, 1}}, 0.5); }), HasSubstr("constant_value 0.5"));
  EXPECT_EQ(x.at<float>({0, 0}), 1.f);
}

TEST(TileTest, RepeatsAlongEachDim) {
  Tensor t = tile(Tensor{{1, 2}, {3, 4}}, {2, 3});
  EXPECT_EQ(t.shape(), (Shape{4, 6}));
  EXPECT_EQ(t.to_vector<int32_t>(),
            (I{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_EQ(tile(Tensor{1.f, 2.f}, {3}).to_vector<float>(), (F{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(tile(Tensor{{5.0}}, {1, 4}).to_vector<double>(), (std::vector<double>{5, 5, 5, 5}));
  EXPECT_EQ(tile(x23(), {0, 2}).shape(), (Shape{0, 6}));
  EXPECT_EQ(tile(Tensor{true, false}, {2}).to_vector<bool>(), (std::vector<bool>{true, false, true, false}));
  Tensor big = tile(iota_f(Shape{3, 1000}), {100, 2});
  EXPECT_EQ(big.shape(), (Shape{300, 2000}));
  EXPECT_EQ(big.at<float>({299, 1999}), 2999.f);
  EXPECT_EQ(big.at<float>({4, 1500}), 1500.f);
}

TEST(TileTest, Errors) {
  Tensor x = x23();
  EXPECT_THAT(error_of([&] { tile(x, {1, -1}); }), AllOf(HasSubstr("[tile]"), HasSubstr("multiples[1] = -1")));
  EXPECT_THAT(error_of([&] { tile(x, {2}); }), AllOf(HasSubstr("[tile]"), HasSubstr("[2]"), HasSubstr("rank 2")));
  EXPECT_EQ(x.at<float>({1, 1}), 5.f);
}

// ---------------------------------------------------------------- registry

TEST(ArrayRegistryTest, EveryOpHasAllSixDTypeKernels) {
  for (const char* type : {"Reshape", "ExpandDims", "Squeeze", "Identity"}) {
    const OpDef* op = OpRegistry::global().find(type);
    ASSERT_NE(op, nullptr) << type;
    EXPECT_EQ(op->forward_input, 0) << type;
  }
  for (const char* type :
       {"Transpose", "ConcatV2", "Slice", "StridedSlice", "GatherV2", "OneHot", "PadV2", "Tile"}) {
    ASSERT_NE(OpRegistry::global().find(type), nullptr) << type;
    EXPECT_EQ(KernelRegistry::global().dtypes_for(type, DeviceType::kCPU).size(), 6u) << type;
  }
  EXPECT_EQ(OpRegistry::global().find("ConcatV2")->num_inputs, -1);
}

// Shape functions accept partially known shapes (graph placeholders).
TEST(ArrayShapeFnTest, UnknownDimsPropagate) {
  auto infer = [](const char* type, std::vector<TensorSpec> in, const AttrMap& attrs) {
    const OpDef* op = OpRegistry::global().find(type);
    return op->infer(InferenceContext{op->api_name, in, attrs});
  };
  const TensorSpec x{DType::kFloat32, Shape{-1, 3}};
  EXPECT_EQ(infer("Reshape", {x}, {{"shape", L{-1}}})->at(0).shape, (Shape{-1}));
  EXPECT_EQ(infer("Transpose", {x}, {{"perm", L{1, 0}}})->at(0).shape, (Shape{3, -1}));
  EXPECT_EQ(infer("ConcatV2", {x, TensorSpec{DType::kFloat32, Shape{2, -1}}}, {{"axis", int64_t{0}}})->at(0).shape,
            (Shape{-1, 3}));
  EXPECT_EQ(infer("Slice", {x}, {{"begin", L{0, 1}}, {"size", L{-1, 2}}})->at(0).shape, (Shape{-1, 2}));
  EXPECT_EQ(infer("Tile", {x}, {{"multiples", L{2, 2}}})->at(0).shape, (Shape{-1, 6}));
  EXPECT_EQ(infer("PadV2", {x}, {{"paddings", L{1, 1, 1, 1}}, {"constant_value", 0.0}})->at(0).shape,
            (Shape{-1, 5}));
  EXPECT_EQ(infer("GatherV2", {x, TensorSpec{DType::kInt32, Shape{-1, 2}}}, {{"axis", int64_t{1}}})->at(0).shape,
            (Shape{-1, -1, 2}));
  auto ss = infer("StridedSlice", {x},
                  {{"begin", L{0, 0}}, {"end", L{0, 0}}, {"strides", L{1, 1}}, {"begin_mask", int64_t{0}},
                   {"end_mask", int64_t{0}}, {"ellipsis_mask", int64_t{0}}, {"new_axis_mask", int64_t{0}},
                   {"shrink_axis_mask", int64_t{1}}});
  EXPECT_EQ(ss->at(0).shape, (Shape{0}));
}

TEST(ArrayTest, MatrixBandPartKeepsTheBandOfEachMatrix) {
  const Tensor x = reshape(range(1, 13, 1, DType::kInt32), {3, 4});
  // A causal mask: the lower triangle with its diagonal.
  EXPECT_THAT(matrix_band_part(x, -1, 0).to_vector<int32_t>(), ElementsAre(1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0));
  EXPECT_THAT(matrix_band_part(x, 0, -1).to_vector<int32_t>(), ElementsAre(1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12));
  EXPECT_THAT(matrix_band_part(x, 1, 1).to_vector<int32_t>(), ElementsAre(1, 2, 0, 0, 5, 6, 7, 0, 0, 10, 11, 12));
  EXPECT_THAT(matrix_band_part(x, 0, 0).to_vector<int32_t>(), ElementsAre(1, 0, 0, 0, 0, 6, 0, 0, 0, 0, 11, 0));
  EXPECT_EQ(matrix_band_part(x, -1, -1).to_vector<int32_t>(), x.to_vector<int32_t>());
  EXPECT_EQ(matrix_band_part(x, 7, 9).to_vector<int32_t>(), x.to_vector<int32_t>());  // wider than the matrix
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(matrix_band_part(x, kMax, kMax).to_vector<int32_t>(), x.to_vector<int32_t>());
  // Per matrix of a batch, any dtype.
  const Tensor b = cast(reshape(range(0, 8, 1, DType::kInt32), {2, 2, 2}), DType::kFloat64) + 1.0;
  EXPECT_THAT(matrix_band_part(b, 0, 1).to_vector<double>(), ElementsAre(1, 2, 0, 4, 5, 6, 0, 8));
  EXPECT_THAT(matrix_band_part(ones({2, 3}, DType::kBool), -1, 0).to_vector<bool>(),
              ElementsAre(true, false, false, true, true, false));
  EXPECT_EQ(matrix_band_part(zeros({0, 3}), -1, 0).shape(), (Shape{0, 3}));
  EXPECT_THAT(error_of([] { matrix_band_part(Tensor{1.f, 2.f}, -1, 0); }),
              HasSubstr("[matrix_band_part] input must have rank >= 2 (a batch of matrices), got shape [2]"));
}

TEST(ArrayTest, InvertPermutationAndItsErrors) {
  auto ints32 = [](std::vector<int32_t> v) { const Shape s{static_cast<int64_t>(v.size())}; return Tensor(v, s); };
  EXPECT_EQ(invert_permutation(ints32({2, 0, 3, 1})).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 3, 0, 2}));
  const Tensor p64(std::vector<int64_t>{1, 2, 0}, Shape{3});
  EXPECT_EQ(invert_permutation(p64).dtype(), DType::kInt64);
  EXPECT_EQ(invert_permutation(invert_permutation(p64)).to_vector<int64_t>(), p64.to_vector<int64_t>());
  EXPECT_EQ(invert_permutation(ints32({})).shape(), (Shape{0}));
  EXPECT_THAT(error_of([&] { invert_permutation(ints32({0, 3, 1})); }),
              HasSubstr("[invert_permutation] x[1] = 3 is not in [0, 3)"));
  EXPECT_THAT(error_of([&] { invert_permutation(ints32({1, 0, 1})); }),
              HasSubstr("[invert_permutation] 1 is repeated in x (at 2): not a permutation"));
  EXPECT_THAT(error_of([&] { invert_permutation(ints32({-1})); }), HasSubstr("x[0] = -1 is not in [0, 1)"));
  EXPECT_THAT(error_of([] { invert_permutation(Tensor{1.f, 0.f}); }),
              HasSubstr("[invert_permutation] input 'x' has dtype float32; expected one of int32, int64"));
  EXPECT_THAT(error_of([] { invert_permutation(Tensor(std::vector<int32_t>{0, 1}, Shape{1, 2})); }),
              HasSubstr("input 'x' must be a vector, got shape [1,2]"));
}

// tf.nn.depth_to_space's documented example: [1, 1, 1, 4] with block 2 is the 2x2 image
// [[1, 2], [3, 4]]; with 12 channels each pixel of the block takes a run of 3.
TEST(ArrayTest, DepthToSpaceSpreadsEachPixelsDepthOverABlock) {
  const Tensor x = reshape(range(1, 5, 1, DType::kInt32), {1, 1, 1, 4});
  const Tensor y = depth_to_space(x, 2);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 1}));
  EXPECT_THAT(y.to_vector<int32_t>(), ElementsAre(1, 2, 3, 4));
  const Tensor deep = reshape(range(1, 25, 1, DType::kInt32), {1, 2, 1, 12});
  const Tensor wide = depth_to_space(deep, 2);
  EXPECT_EQ(wide.shape(), (Shape{1, 4, 2, 3}));
  // Row 0 of the image: pixel (0, 0) = channels 0-2, (0, 1) = 3-5; row 1: 6-8, 9-11.
  EXPECT_THAT(wide.to_vector<int32_t>(), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                                                     20, 21, 22, 23, 24));
  const Tensor img = random_uniform(Shape{2, 6, 4, 3}, -1, 1, DType::kFloat64, 5);
  const Tensor packed = space_to_depth(img, 2);
  EXPECT_EQ(packed.shape(), (Shape{2, 3, 2, 12}));
  EXPECT_EQ(depth_to_space(packed, 2).to_vector<double>(), img.to_vector<double>());  // inverses
  // Pixel (1, 0)'s block starts at image row 2: packed[0, 1, 0, 0:3] = img[0, 2, 0, :].
  EXPECT_EQ(slice(packed, {0, 1, 0, 0}, {1, 1, 1, 3}).to_vector<double>(),
            slice(img, {0, 2, 0, 0}, {1, 1, 1, 3}).to_vector<double>());
  // NCHW is the NHWC result between transposes, for a 1-byte dtype too.
  const Tensor bytes = cast(reshape(range(0, 96, 1, DType::kInt32), {2, 3, 4, 4}), DType::kUInt8);
  EXPECT_EQ(space_to_depth(bytes, 2, "NCHW").to_vector<uint8_t>(),
            transpose(space_to_depth(transpose(bytes, {0, 2, 3, 1}), 2), {0, 3, 1, 2}).to_vector<uint8_t>());
  EXPECT_EQ(depth_to_space(zeros({2, 12, 3, 2}), 2, "NCHW").shape(), (Shape{2, 3, 6, 4}));
  EXPECT_THAT(error_of([&] { depth_to_space(img, 2); }),
              HasSubstr("[depth_to_space] the depth 3 of input [2,6,4,3] must be divisible by block_size * block_size = 4"));
  EXPECT_THAT(error_of([&] { space_to_depth(img, 4); }),
              HasSubstr("[space_to_depth] the height and width of input [2,6,4,3] must be divisible by block_size 4"));
  EXPECT_THAT(error_of([&] { space_to_depth(img, 1); }), HasSubstr("block_size must be in [2, 65536], got 1"));
  EXPECT_THAT(error_of([&] { space_to_depth(zeros({4, 4}), 2); }), HasSubstr("input must have rank 4"));
  // An attr the op does not read may hold anything (a GraphDef's, a fuzzer's): a stray string
  // "strides" on an NCHW DepthToSpace is left alone.
  const Tensor in[1] = {zeros({1, 4, 2, 2})};
  const Tensor spread = execute_single(*OpRegistry::global().find("DepthToSpace"), in,
                                       AttrMap{{"block_size", int64_t{2}}, {"data_format", std::string("NCHW")},
                                               {"strides", std::string("junk")}, {"dilations", true}},
                                       std::source_location::current());
  EXPECT_EQ(spread.shape(), (Shape{1, 1, 4, 4}));
  // A static dim too large to spread (beside an unknown depth): an error, not a wrapped-around dim.
  Graph g;
  auto scope = g.as_default();
  EXPECT_THAT(error_of([] { depth_to_space(placeholder(DType::kFloat32, {1, int64_t{1} << 62, 1, -1}), 2); }),
              HasSubstr("[depth_to_space] the height or width of input [1,4611686018427387904,1,?] times block_size "
                        "overflows"));
}

TEST(ArrayTest, SizeAndRankAreScalarsOfTheirDtype) {
  const Tensor x = zeros({2, 3, 4});
  EXPECT_EQ(size(x).dtype(), DType::kInt32);
  EXPECT_EQ(size(x).shape(), Shape({}));
  EXPECT_EQ(size(x).to_vector<int32_t>(), std::vector<int32_t>{24});
  EXPECT_EQ(size(x, DType::kInt64).to_vector<int64_t>(), std::vector<int64_t>{24});
  EXPECT_EQ(size(Tensor(3.5f)).to_vector<int32_t>(), std::vector<int32_t>{1});  // a scalar has one element
  EXPECT_EQ(size(zeros({0, 5})).to_vector<int32_t>(), std::vector<int32_t>{0});
  EXPECT_EQ(rank(x).dtype(), DType::kInt32);
  EXPECT_EQ(rank(x).to_vector<int32_t>(), std::vector<int32_t>{3});
  EXPECT_EQ(rank(Tensor(true)).to_vector<int32_t>(), std::vector<int32_t>{0});
  EXPECT_THAT(error_of([&] { size(x, DType::kFloat32); }), HasSubstr("[size] out_type must be int32 or int64, got float32"));
  // Known when the graph runs: of a placeholder with unknown dims.
  Graph g;
  Tensor p, s, r;
  {
    auto scope = g.as_default();
    p = placeholder(DType::kFloat32, {-1, 3}, "p");
    s = size(p);
    r = rank(p);
  }
  EXPECT_EQ(s.shape(), Shape({}));
  Session sess(g);
  const std::vector<Tensor> out = sess.run({s, r}, {{p, zeros({5, 3})}});
  EXPECT_EQ(out[0].to_vector<int32_t>(), std::vector<int32_t>{15});
  EXPECT_EQ(out[1].to_vector<int32_t>(), std::vector<int32_t>{2});
}

// ReverseV2 and BroadcastTo (issue 14): values on several dtypes, errors, gradients, and a
// graph whose GraphDef carries TensorFlow's nodes.
using ::testing::ElementsAre;

TEST(ArrayTest, ReverseAlongAxes) {
  const Tensor x = {{1, 2, 3}, {4, 5, 6}};
  EXPECT_THAT(reverse(x, {1}).to_vector<int32_t>(), ElementsAre(3, 2, 1, 6, 5, 4));
  EXPECT_THAT(reverse(x, {0}).to_vector<int32_t>(), ElementsAre(4, 5, 6, 1, 2, 3));
  EXPECT_THAT(reverse(x, {-1, 0}).to_vector<int32_t>(), ElementsAre(6, 5, 4, 3, 2, 1));
  EXPECT_THAT(reverse(x, {}).to_vector<int32_t>(), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(reverse(Tensor{true, false, false}, {0}).to_vector<bool>(), ElementsAre(false, false, true));
  const Tensor r3 = reverse(reshape(range<int64_t>(0, 24), {2, 3, 4}), {1});
  EXPECT_EQ(r3.shape(), (Shape{2, 3, 4}));
  EXPECT_THAT(slice(r3, {0, 0, 0}, {1, 1, 4}).to_vector<int64_t>(), ElementsAre(8, 9, 10, 11));
  EXPECT_THAT(error_of([&] { reverse(x, {2}); }),
              AllOf(HasSubstr("[reverse]"), HasSubstr("axis 2 is out of range"), HasSubstr("array_test.cc:")));
  EXPECT_THAT(error_of([&] { reverse(x, {1, -1}); }), HasSubstr("[reverse] axis -1 is repeated"));
}

TEST(ArrayTest, BroadcastToRepeats) {
  EXPECT_THAT(broadcast_to(Tensor{1.f, 2.f, 3.f}, {2, 3}).to_vector<float>(), ElementsAre(1.f, 2.f, 3.f, 1.f, 2.f, 3.f));
  const Tensor col = broadcast_to(Tensor{{1}, {2}}, {2, 3});
  EXPECT_EQ(col.shape(), (Shape{2, 3}));
  EXPECT_THAT(col.to_vector<int32_t>(), ElementsAre(1, 1, 1, 2, 2, 2));
  EXPECT_THAT(broadcast_to(Tensor(uint8_t{7}), {2, 2}).to_vector<uint8_t>(), ElementsAre(7, 7, 7, 7));
  EXPECT_EQ(broadcast_to(Tensor{1.0}, {0, 1}).shape(), (Shape{0, 1}));
  EXPECT_THAT(error_of([] { broadcast_to(Tensor{1.f, 2.f}, {2, 3}); }),
              AllOf(HasSubstr("[broadcast_to] input 'input' [2] cannot be broadcast to [2,3]"),
                    HasSubstr("array_test.cc:")));
  EXPECT_THAT(error_of([] { broadcast_to(Tensor{{1.f}}, {3}); }), HasSubstr("has more dims than the target shape"));
  EXPECT_THAT(error_of([] { broadcast_to(Tensor{1.f}, {-2}); }), HasSubstr("shape[0] = -2 must be non-negative"));
}

TEST(ArrayTest, MirrorPadReflectsOrRepeatsTheEdge) {
  const Tensor v = {1, 2, 3};
  EXPECT_THAT(mirror_pad(v, {{2, 2}}, "REFLECT").to_vector<int32_t>(), ElementsAre(3, 2, 1, 2, 3, 2, 1));
  EXPECT_THAT(mirror_pad(v, {{2, 2}}, "SYMMETRIC").to_vector<int32_t>(), ElementsAre(2, 1, 1, 2, 3, 3, 2));
  EXPECT_THAT(mirror_pad(v, {{3, 0}}, "SYMMETRIC").to_vector<int32_t>(), ElementsAre(3, 2, 1, 1, 2, 3));
  const Tensor m = mirror_pad(Tensor{{1.f, 2.f}, {3.f, 4.f}}, {{1, 0}, {0, 1}}, "REFLECT");
  EXPECT_EQ(m.shape(), (Shape{3, 3}));
  EXPECT_THAT(m.to_vector<float>(), ElementsAre(3.f, 4.f, 3.f, 1.f, 2.f, 1.f, 3.f, 4.f, 3.f));
  EXPECT_THAT(error_of([&] { mirror_pad(v, {{3, 0}}, "REFLECT"); }),
              AllOf(HasSubstr("[mirror_pad] paddings[0] = (3, 0) must be in [0, 2]"), HasSubstr("array_test.cc:")));
  EXPECT_THAT(error_of([&] { mirror_pad(v, {{1, 1}}, "CONSTANT"); }), HasSubstr("[mirror_pad] mode must be"));
  EXPECT_THAT(error_of([&] { mirror_pad(v, {{1, 1}, {0, 0}}, "REFLECT"); }), HasSubstr("has rank 1"));
  // Its gradient sums each input element's copies: in REFLECT (2, 2) x0 and x2 appear twice, x1
  // three times.
  const Tensor x = {1.0, 2.0, 3.0};
  GradientTape tape;
  tape.watch(x);
  EXPECT_THAT(tape.gradient(reduce_sum(mirror_pad(x, {{2, 2}}, "REFLECT")), x).to_vector<double>(),
              ElementsAre(2.0, 3.0, 2.0));
}

TEST(ArrayTest, ReverseAndBroadcastToInGraphsAndGradients) {
  Graph g;
  Tensor x, y, dx;
  {
    auto scope = g.as_default();
    // A known shape: a graph gradient cannot tell whether an unknown dim was broadcast
    // (unbroadcast's rule, tape/gradient_registry.h).
    x = placeholder(DType::kFloat32, {1, 3}, "x");
    y = reverse(broadcast_to(x, {4, 2, 3}), {0, 2}) * reshape(range<float>(0, 24, 1), {4, 2, 3});
    EXPECT_EQ(y.shape(), (Shape{4, 2, 3}));
    dx = gradients({reduce_sum(y)}, {x})[0];
  }
  Tensor mp, total;
  {
    auto scope = g.as_default();
    mp = mirror_pad(x, {{0, 0}, {1, 2}}, "SYMMETRIC");
    total = reduce_sum(y);
  }
  bool reverse_node = false, broadcast_node = false, mirror_node = false;
  const GraphDef def = to_graph_def(g);
  for (const auto& n : def.node()) {
    reverse_node |= n.op() == "ReverseV2";
    broadcast_node |= n.op() == "BroadcastTo";
    if (n.op() == "MirrorPad") {
      mirror_node = true;
      EXPECT_EQ(n.attr().at("mode").s(), "SYMMETRIC");
    }
  }
  EXPECT_TRUE(reverse_node && broadcast_node && mirror_node);
  Graph back = graph_from_graph_def(graph_def_from_binary(graph_def_to_binary(def)));
  Session sb(back);
  EXPECT_THAT(sb.run(back.get_tensor_by_name(mp.name()), {{back.get_tensor_by_name("x:0"), Tensor{{1.f, 2.f, 3.f}}}})
                  .to_vector<float>(),
              ElementsAre(1.f, 1.f, 2.f, 3.f, 3.f, 2.f));
  Session sess(g);
  const Tensor xv = {{1.f, 2.f, 3.f}};
  // Each x[0, j] lands in 8 places; the weights it meets there are position (k, i, 2 - j).
  std::vector<float> want(3, 0.f);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want[2 - j] += static_cast<float>(k * 6 + i * 3 + j);
  EXPECT_THAT(sess.run(dx, {{x, xv}}).to_vector<float>(), ElementsAre(want[0], want[1], want[2]));
  EXPECT_FLOAT_EQ(sess.run(total, {{x, xv}}).item<float>(),
                  reduce_sum(reverse(broadcast_to(xv, {4, 2, 3}), {0, 2}) * reshape(range<float>(0, 24, 1), {4, 2, 3}))
                      .item<float>());
}

}  // namespace
}  // namespace tapeflow
