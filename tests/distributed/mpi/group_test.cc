// all_reduce and broadcast on groups made by mpi::new_group, with four ranks (ctest's
// mpi_groups: mpirun -np 4, --gtest_filter=MpiGroup*): two disjoint pairs at once, a group of
// three beside a rank that is not in it, gradients, graphs and Sessions, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "distributed/mpi/collective.h"
#include "graph/graph_def.h"
#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class MpiGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mpi::size(), 4) << "run under mpirun -np 4";
    r = mpi::rank();
    // Made on every rank, in the same order: two disjoint pairs and a trio without rank 1.
    low = mpi::new_group({1, 0});
    high = mpi::new_group({2, 3});
    trio = mpi::new_group({3, 0, 2});
    mine = r < 2 ? low : high;
  }
  void TearDown() override { mpi::barrier(); }  // every test ends with the ranks in step
  int r = 0;
  Group low, high, trio, mine;
};

TEST_F(MpiGroupTest, GroupsHaveDistinctKeysAndSortedRanks) {
  EXPECT_NE(low.key, 0);
  EXPECT_NE(low.key, high.key);
  EXPECT_NE(high.key, trio.key);
  EXPECT_THAT(mpi::group_ranks(low), ElementsAre(0, 1));
  EXPECT_THAT(mpi::group_ranks(trio), ElementsAre(0, 2, 3));
  EXPECT_THAT(mpi::group_ranks(Group::world()), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(mpi::is_member(low), r < 2);
  EXPECT_EQ(mpi::is_member(trio), r != 1);
  // Every rank assigned the same keys: the world's maximum and minimum agree.
  EXPECT_EQ(all_reduce(Tensor(trio.key), ReduceOp::kMax).item<int64_t>(), trio.key);
  EXPECT_EQ(all_reduce(Tensor(trio.key), ReduceOp::kMin).item<int64_t>(), trio.key);
}

TEST_F(MpiGroupTest, TwoDisjointPairsReduceAtOnce) {
  const float k = static_cast<float>(r + 1);
  Tensor y = all_reduce(Tensor({k, 10 * k}), ReduceOp::kSum, mine);
  EXPECT_EQ(y.shape(), Shape({2}));
  if (r < 2) EXPECT_THAT(y.to_vector<float>(), ElementsAre(3.f, 30.f));    // ranks 0 and 1: 1 + 2
  else EXPECT_THAT(y.to_vector<float>(), ElementsAre(7.f, 70.f));          // ranks 2 and 3: 3 + 4
  // The mean divides by the group's size (2), not the world's.
  EXPECT_THAT(all_reduce(Tensor({double(k)}), ReduceOp::kMean, mine).to_vector<double>(),
              ElementsAre(r < 2 ? 1.5 : 3.5));
  EXPECT_EQ(all_reduce(Tensor(int32_t(r)), ReduceOp::kMax, mine).item<int32_t>(), r < 2 ? 1 : 3);
}

TEST_F(MpiGroupTest, ATrioReducesWhileTheOtherRankWorksAlone) {
  if (r == 1) {
    EXPECT_EQ((Tensor(2.f) * 3.f).item<float>(), 6.f);  // no collective on rank 1
    return;
  }
  EXPECT_EQ(all_reduce(Tensor(float(r + 1)), ReduceOp::kSum, trio).item<float>(), 1.f + 3.f + 4.f);
  EXPECT_FLOAT_EQ(all_reduce(Tensor(float(r + 1)), ReduceOp::kMean, trio).item<float>(), 8.f / 3.f);
}

TEST_F(MpiGroupTest, ARankOutsideTheGroupGetsATypedErrorNamingTheGroupAndItself) {
  if (r != 1) {  // the members go on with their own work, unaffected
    EXPECT_EQ(all_reduce(Tensor(1), ReduceOp::kSum, trio).item<int32_t>(), 3);
    return;
  }
  Tensor x({1.f, 2.f});
  try {
    all_reduce(x, ReduceOp::kSum, trio);
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("[all_reduce] rank 1 is not a member of group"),
                                HasSubstr("(world ranks {0, 2, 3})"), HasSubstr("group_test.cc:")));
  }
  EXPECT_THROW(mpi::broadcast(x, 0, trio), InvalidArgumentError);
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(1.f, 2.f));  // the input is left as it was
}

TEST_F(MpiGroupTest, DisagreementInsideAGroupIsAnErrorOnItsMembersOnly) {
  if (r < 2) {
    try {
      all_reduce(r == 0 ? zeros({2}) : zeros({3}), ReduceOp::kSum, low);
      FAIL() << "no error";
    } catch (const InvalidArgumentError& e) {
      EXPECT_THAT(e.what(), HasSubstr("[all_reduce] the ranks disagree on the number of elements"));
    }
  }
  // The other pair, and afterwards the first one, still reduce.
  EXPECT_EQ(all_reduce(Tensor(1.f), ReduceOp::kSum, mine).item<float>(), 2.f);
}

// L = sum over the group of sum(c_r * y), y = all_reduce(x * x, group): dL/dx_r = (sum of the
// group's c) * 2 x_r, with c_r = r + 1.
TEST_F(MpiGroupTest, TheGradientReducesOverTheSameGroup) {
  Variable x(Tensor({1.f, 2.f}), "x");
  const float c = static_cast<float>(r + 1);
  GradientTape tape;
  Tensor loss = reduce_sum(c * all_reduce(x * x, ReduceOp::kSum, mine));
  const float s = r < 2 ? 3.f : 7.f;
  EXPECT_THAT(tape.gradient(loss, {x})[0].to_vector<float>(), ElementsAre(s * 2.f, s * 4.f));
}

TEST_F(MpiGroupTest, ASessionRunsAGroupsCollectiveAndItsSymbolicGradient) {
  const float c = static_cast<float>(r + 1);
  Graph g;
  Tensor x, y, dx;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    y = all_reduce(x, ReduceOp::kMean, mine);
    dx = gradients({reduce_sum(c * y)}, {x})[0];
  }
  Session sess(g);
  std::vector<Tensor> out = sess.run({y, dx}, {{x, Tensor({c, 1.f})}});
  EXPECT_THAT(out[0].to_vector<float>(), ElementsAre(r < 2 ? 1.5f : 3.5f, 1.f));
  // d/dx_r of the group's mean of c_r * mean(x): the mean of the group's c.
  EXPECT_THAT(out[1].to_vector<float>(), ElementsAre(r < 2 ? 1.5f : 3.5f, r < 2 ? 1.5f : 3.5f));
}

TEST_F(MpiGroupTest, ATracedFunctionCarriesTheGroup) {
  const Group group = mine;
  auto f = function([group](const Tensor& x) { return all_reduce(x * 2.f, ReduceOp::kSum, group); });
  EXPECT_EQ(f(Tensor(float(r))).item<float>(), r < 2 ? 2.f : 10.f);
  const std::string text = graph_def_to_text(to_graph_def(f.get_concrete_function({{DType::kFloat32, {}}}).graph()));
  EXPECT_THAT(text, HasSubstr("group_key"));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("i: ", group.key)));
}

TEST_F(MpiGroupTest, BroadcastWithinEachPair) {
  Tensor x({float(r), float(10 * r)});
  const int root = r < 2 ? 1 : 3;  // a world rank, a member of the caller's pair
  EXPECT_THAT(mpi::broadcast(x, root, mine).to_vector<float>(), ElementsAre(float(root), float(10 * root)));
  // A root outside the group is an error on every member, before any communication.
  try {
    mpi::broadcast(x, r < 2 ? 2 : 0, mine);
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr(r < 2 ? "[mpi::broadcast] root 2 is not a rank of group" : "root 0 is not a rank"));
  }
  std::vector<Variable> vars = {Variable(Tensor(int64_t(r)), "v")};
  mpi::broadcast_variables(vars, r < 2 ? 0 : 2, mine);
  EXPECT_EQ(vars[0].read().item<int64_t>(), r < 2 ? 0 : 2);
}

}  // namespace
}  // namespace tapeflow
