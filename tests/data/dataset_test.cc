#include "data/dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/cast.h"
#include "eager/ops/creation.h"
#include "eager/random_seed.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Element = std::vector<Tensor>;
using Ints = std::vector<int32_t>;

std::vector<Element> collect(const Dataset& ds) {
  std::vector<Element> out;
  for (const Element& e : ds) out.push_back(e);
  return out;
}

Ints ints(const Tensor& t) { return t.to_vector<int32_t>(); }

// The first component of every element, flattened: one pass's order of examples.
Ints order(const Dataset& ds) {
  Ints out;
  for (const Element& e : ds) {
    Ints v = ints(e.at(0));
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

Ints iota(int n) {
  Ints v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

Dataset numbers(int n) { return Dataset::from_tensor_slices({range<int32_t>(n)}); }


class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override { set_seed(std::nullopt); }
  void TearDown() override { set_seed(std::nullopt); }
};

// ---- from_tensor_slices ----

TEST_F(DatasetTest, SlicesAlongTheFirstAxis) {
  Tensor x = {{0, 1}, {2, 3}, {4, 5}};
  Tensor y = {10.f, 11.f, 12.f};
  Dataset ds = Dataset::from_tensor_slices({x, y});
  EXPECT_EQ(ds.cardinality(), 3);
  std::vector<Element> els = collect(ds);
  ASSERT_EQ(els.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(els[i].size(), 2u);
    EXPECT_EQ(els[i][0].shape(), (Shape{2}));
    EXPECT_EQ(els[i][0].dtype(), DType::kInt32);
    EXPECT_EQ(ints(els[i][0]), (Ints{2 * i, 2 * i + 1}));
    EXPECT_EQ(els[i][1].shape(), Shape{});
    EXPECT_EQ(els[i][1].item<float>(), 10.f + i);
  }
  // from_tensors is the same slicing dataset.
  EXPECT_EQ(order(Dataset::from_tensors({x, y})), (Ints{0, 1, 2, 3, 4, 5}));
}

TEST_F(DatasetTest, EmptyDatasetYieldsNothing) {
  Dataset ds = Dataset::from_tensor_slices({zeros({0, 3}, DType::kInt32)});
  EXPECT_EQ(ds.cardinality(), 0);
  EXPECT_TRUE(ds.begin() == ds.end());
  EXPECT_TRUE(collect(ds.batch(2)).empty());
  // Repeating nothing forever still ends.
  EXPECT_EQ(ds.repeat().cardinality(), 0);
  EXPECT_TRUE(collect(ds.repeat()).empty());
}

// ---- batch ----

TEST_F(DatasetTest, BatchExactContents) {
  Tensor labels = cast(range<int32_t>(10) * 10, DType::kInt64);
  Dataset ds = Dataset::from_tensor_slices({range<int32_t>(10), labels}).batch(4);
  EXPECT_EQ(ds.cardinality(), 3);
  std::vector<Element> b = collect(ds);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(ints(b[0][0]), (Ints{0, 1, 2, 3}));
  EXPECT_EQ(ints(b[1][0]), (Ints{4, 5, 6, 7}));
  EXPECT_EQ(ints(b[2][0]), (Ints{8, 9}));
  EXPECT_EQ(b[0][1].dtype(), DType::kInt64);
  EXPECT_EQ(b[1][1].to_vector<int64_t>(), (std::vector<int64_t>{40, 50, 60, 70}));
  EXPECT_EQ(b[2][1].shape(), (Shape{2}));
}

TEST_F(DatasetTest, BatchKeepsTheTrailingDims) {
  Tensor images = reshape(range<int32_t>(5 * 2 * 3), {5, 2, 3});
  std::vector<Element> b = collect(Dataset::from_tensor_slices({images}).batch(2));
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0][0].shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(b[1][0].at<int32_t>({1, 1, 2}), 3 * 6 + 5);
  EXPECT_EQ(b[2][0].shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(ints(b[2][0]), (Ints{24, 25, 26, 27, 28, 29}));
}

TEST_F(DatasetTest, DropRemainder) {
  Dataset ds = numbers(10).batch(4, /*drop_remainder=*/true);
  EXPECT_EQ(ds.cardinality(), 2);
  std::vector<Element> b = collect(ds);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(ints(b[1][0]), (Ints{4, 5, 6, 7}));
  EXPECT_EQ(numbers(8).batch(4, true).cardinality(), 2);
  EXPECT_EQ(numbers(3).batch(4, true).cardinality(), 0);
  EXPECT_TRUE(collect(numbers(3).batch(4, true)).empty());
}

TEST_F(DatasetTest, BatchOfMaterializedElementsStacks) {
  // map() materializes rows, so this batch takes the stacking path.
  Dataset ds = numbers(5).map([](Element e) { return Element{e[0] + 100, e[0]}; }).batch(2);
  std::vector<Element> b = collect(ds);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(ints(b[0][0]), (Ints{100, 101}));
  EXPECT_EQ(ints(b[1][1]), (Ints{2, 3}));
  EXPECT_EQ(ints(b[2][0]), (Ints{104}));
  // Batches of batches.
  std::vector<Element> bb = collect(numbers(8).batch(2).batch(2));
  ASSERT_EQ(bb.size(), 2u);
  EXPECT_EQ(bb[1][0].shape(), (Shape{2, 2}));
  EXPECT_EQ(ints(bb[1][0]), (Ints{4, 5, 6, 7}));
}

// ---- shuffle ----

TEST_F(DatasetTest, ShuffleIsReproducibleWithTheSameSeed) {
  Dataset a = numbers(20).shuffle(20, 7);
  Dataset b = numbers(20).shuffle(20, 7);
  const Ints a1 = order(a), a2 = order(a), b1 = order(b), b2 = order(b);
  EXPECT_EQ(a1, b1);  // pass k depends only on the seed
  EXPECT_EQ(a2, b2);
  EXPECT_NE(a1, a2);  // a new order each pass
  EXPECT_NE(a1, iota(20));
  for (Ints p : {a1, a2}) {
    std::sort(p.begin(), p.end());
    EXPECT_EQ(p, iota(20));  // every example exactly once
  }
}

TEST_F(DatasetTest, ShuffleDiffersWithAnotherSeed) {
  EXPECT_NE(order(numbers(20).shuffle(20, 7)), order(numbers(20).shuffle(20, 8)));
  // The global seed enters too.
  const Ints unset = order(numbers(20).shuffle(20, 7));
  set_seed(1);
  EXPECT_NE(order(numbers(20).shuffle(20, 7)), unset);
}

TEST_F(DatasetTest, ShuffleWithoutSeedFollowsTheGlobalSeed) {
  set_seed(5);
  const Ints a = order(numbers(30).shuffle(30));
  set_seed(5);
  const Ints b = order(numbers(30).shuffle(30));
  EXPECT_EQ(a, b);
  set_seed(6);
  EXPECT_NE(order(numbers(30).shuffle(30)), a);
}

TEST_F(DatasetTest, ShuffleBufferBoundsHowFarElementsMove) {
  // Buffer 1 keeps the order.
  EXPECT_EQ(order(numbers(10).shuffle(1, 3)), iota(10));
  // With buffer b, output k is one of the first k + b inputs.
  const int b = 4;
  const Ints o = order(numbers(50).shuffle(b, 3));
  for (size_t k = 0; k < o.size(); ++k) EXPECT_LT(o[k], static_cast<int>(k) + b) << "at " << k;
  Ints sorted = o;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(50));
  EXPECT_NE(o, iota(50));
}

TEST_F(DatasetTest, ShuffledBatchesSeeEveryExampleOncePerEpoch) {
  Tensor x = range<int32_t>(23);
  Tensor y = x * 2;
  Dataset ds = Dataset::from_tensor_slices({x, y}).shuffle(1000, 11).batch(5).repeat(3);
  EXPECT_EQ(ds.cardinality(), 15);
  std::vector<Element> batches = collect(ds);
  ASSERT_EQ(batches.size(), 15u);
  std::vector<Ints> epochs(3);
  for (size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(batches[i][0].shape()[0], i % 5 == 4 ? 3 : 5);
    Ints xs = ints(batches[i][0]), ys = ints(batches[i][1]);
    for (size_t j = 0; j < xs.size(); ++j) EXPECT_EQ(ys[j], 2 * xs[j]);  // components stay paired
    epochs[i / 5].insert(epochs[i / 5].end(), xs.begin(), xs.end());
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[1], epochs[2]);
  for (Ints e : epochs) {
    std::sort(e.begin(), e.end());
    EXPECT_EQ(e, iota(23));
  }
}

TEST_F(DatasetTest, ShuffleIsUniformEnough) {
  // Over many passes each value lands in position 0 about equally often.
  Dataset ds = numbers(4).shuffle(4, 123);
  std::vector<int> first(4);
  const int passes = 4000;
  for (int p = 0; p < passes; ++p) ++first[ds.begin()->at(0).item<int32_t>()];
  for (int v = 0; v < 4; ++v) EXPECT_NEAR(first[v], passes / 4, 150) << v;
}

// ---- repeat, take, map ----

TEST_F(DatasetTest, RepeatCounts) {
  EXPECT_EQ(order(numbers(3).repeat(2)), (Ints{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(numbers(3).repeat(2).cardinality(), 6);
  EXPECT_EQ(numbers(3).repeat(0).cardinality(), 0);
  EXPECT_TRUE(order(numbers(3).repeat(0)).empty());
  EXPECT_EQ(numbers(3).repeat().cardinality(), kInfiniteCardinality);
  EXPECT_EQ(numbers(3).repeat().batch(2).cardinality(), kInfiniteCardinality);
  // Batches span repetitions, as in tf.data.
  std::vector<Element> b = collect(numbers(3).repeat(3).batch(4));
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(ints(b[0][0]), (Ints{0, 1, 2, 0}));
  EXPECT_EQ(ints(b[2][0]), (Ints{2}));
}

TEST_F(DatasetTest, TakeFromForever) {
  Dataset ds = numbers(3).repeat().take(7);
  EXPECT_EQ(ds.cardinality(), 7);
  EXPECT_EQ(order(ds), (Ints{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(order(numbers(5).take(2)), (Ints{0, 1}));
  EXPECT_EQ(numbers(5).take(9).cardinality(), 5);
  EXPECT_EQ(order(numbers(5).take(-1)), iota(5));
  EXPECT_TRUE(order(numbers(5).take(0)).empty());
  EXPECT_EQ(numbers(10).batch(3).take(2).cardinality(), 2);
}

TEST_F(DatasetTest, MapIsApplied) {
  Dataset ds = numbers(6).batch(3).map([](Element b) {
    return Element{cast(b[0], DType::kFloat32) * 0.5f, b[0] + 1};
  });
  EXPECT_EQ(ds.cardinality(), 2);
  std::vector<Element> out = collect(ds);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1][0].dtype(), DType::kFloat32);
  EXPECT_EQ(out[1][0].to_vector<float>(), (std::vector<float>{1.5f, 2.f, 2.5f}));
  EXPECT_EQ(ints(out[0][1]), (Ints{1, 2, 3}));
  // Per example, with a changed number of components.
  int calls = 0;
  Dataset single = numbers(3).map([&calls](Element e) {
    ++calls;
    return Element{e[0] * e[0]};
  });
  EXPECT_EQ(order(single), (Ints{0, 1, 4}));
  EXPECT_EQ(calls, 3);
}

// ---- iteration ----

TEST_F(DatasetTest, ExplicitIterator) {
  Dataset ds = numbers(5).batch(2);
  auto it = ds.begin();
  EXPECT_EQ(it->at(0).shape(), (Shape{2}));
  EXPECT_EQ(ints((*it)[0]), (Ints{0, 1}));
  auto copy = it;  // copies share the position
  ++it;
  EXPECT_TRUE(copy == it);
  EXPECT_EQ(ints(it->at(0)), (Ints{2, 3}));
  it++;
  EXPECT_EQ(ints(it->at(0)), (Ints{4}));
  ++it;
  EXPECT_TRUE(it == ds.end());
  EXPECT_THAT(error_of<OutOfRangeError>([&] { (void)*it; }), HasSubstr("end of a dataset"));
  EXPECT_THAT(error_of<OutOfRangeError>([&] { ++it; }), HasSubstr("past the end"));
  // An iterator outlives the Dataset that made it.
  auto orphan = numbers(2).shuffle(2, 1).begin();
  ++orphan;
  EXPECT_FALSE(orphan == Dataset::Iterator());
}

TEST_F(DatasetTest, IteratorWorksWithStandardAlgorithms) {
  Dataset ds = numbers(7).batch(3);
  EXPECT_EQ(std::distance(ds.begin(), ds.end()), 3);
  static_assert(std::input_iterator<Dataset::Iterator>);
}

// ---- errors ----

TEST_F(DatasetTest, MismatchedFirstDims) {
  const std::string msg = error_of<InvalidArgumentError>(
      [] { Dataset::from_tensor_slices({zeros({4, 2}), zeros({5}, DType::kInt32)}); });
  EXPECT_THAT(msg, HasSubstr("[from_tensor_slices] component 1 has shape [5] but component 0 has shape [4,2]"));
}

TEST_F(DatasetTest, BadSourcesAndArguments) {
  EXPECT_THAT(error_of<InvalidArgumentError>([] { Dataset::from_tensor_slices({Tensor(3.f)}); }),
              HasSubstr("[from_tensor_slices] component 0 is a scalar"));
  EXPECT_THAT(error_of<InvalidArgumentError>([] { Dataset::from_tensor_slices(std::vector<Tensor>{}); }),
              HasSubstr("at least one component"));
  EXPECT_THAT(error_of<InvalidArgumentError>([] { Dataset::from_tensor_slices({Tensor()}); }),
              HasSubstr("component 0 is empty"));
  EXPECT_THAT(error_of<InvalidArgumentError>([] { numbers(3).batch(0); }),
              HasSubstr("[batch] batch_size must be positive, got 0"));
  EXPECT_THAT(error_of<InvalidArgumentError>([] { numbers(3).batch(-2); }), HasSubstr("got -2"));
  EXPECT_THAT(error_of<InvalidArgumentError>([] { numbers(3).shuffle(0); }),
              HasSubstr("[shuffle] buffer_size must be positive"));
  EXPECT_THAT(error_of<InvalidArgumentError>([] { numbers(3).repeat(-2); }), HasSubstr("[repeat]"));
  EXPECT_THAT(error_of<InvalidArgumentError>([] { numbers(3).take(-5); }), HasSubstr("[take]"));
  EXPECT_THAT(error_of<InvalidArgumentError>([] { numbers(3).map(nullptr); }), HasSubstr("[map]"));
}

TEST_F(DatasetTest, BatchingUnequalElementsFailsDuringIteration) {
  // Element i becomes a vector of i + 1 zeros.
  Dataset ds = numbers(3).map([](Element e) { return Element{zeros({e[0].item<int32_t>() + 1})}; }).batch(3);
  const std::string msg = error_of<InvalidArgumentError>([&] { ds.begin(); });
  EXPECT_THAT(msg, HasSubstr("[batch] component 0 of element 1 of a batch is [2] float32, of element 0 [1] float32"));
  Dataset counts = numbers(2).map([](Element e) { return e[0].item<int32_t>() ? Element{e[0], e[0]} : e; }).batch(2);
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { counts.begin(); }),
              HasSubstr("element 1 of a batch has 2 components, element 0 has 1"));
}

TEST_F(DatasetTest, MapErrorsEndThePass) {
  Dataset ds = numbers(3).map([](Element e) {
    if (e[0].item<int32_t>() == 1) throw InvalidArgumentError("bad example");
    return e;
  });
  auto it = ds.begin();
  EXPECT_EQ(ints(it->at(0)), (Ints{0}));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { ++it; }), HasSubstr("bad example"));
  EXPECT_TRUE(it == ds.end());
}

}  // namespace
}  // namespace tapeflow
