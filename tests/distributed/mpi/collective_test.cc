// all_reduce, broadcast and barrier run eagerly and on a GradientTape across two ranks (ctest
// runs this binary under mpirun -np 2), their errors, and the errors without MPI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "distributed/mpi/collective.h"
#include "tapeflow.h"

namespace tapeflow {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The tests assume two ranks (what ctest starts); r is this rank, 0 or 1.
class MpiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mpi::size(), 2) << "run under mpirun -np 2";
    r = mpi::rank();
  }
  int r = 0;
};

TEST_F(MpiTest, RanksAreZeroAndOne) {
  EXPECT_TRUE(mpi::initialized());
  // The sum of the ranks is 0 + 1: each rank is a different one.
  EXPECT_EQ(all_reduce(Tensor(int32_t(r))).item<int32_t>(), 1);
}

TEST_F(MpiTest, SumGivesEveryRankTheSameResultOfTheInputDtypeAndShape) {
  const float k = static_cast<float>(r + 1);  // rank 0: 1, rank 1: 2
  Tensor x({{k, 10 * k, 100 * k}, {-k, 0.5f * k, 0.f}});
  Tensor y = all_reduce(x, ReduceOp::kSum);
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  EXPECT_EQ(y.shape(), Shape({2, 3}));
  EXPECT_THAT(y.to_vector<float>(), ElementsAre(3.f, 30.f, 300.f, -3.f, 1.5f, 0.f));
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(k, 10 * k, 100 * k, -k, 0.5f * k, 0.f));  // input unchanged
}

TEST_F(MpiTest, MeanDividesTheSumByTheNumberOfRanks) {
  const double k = r + 1;
  EXPECT_THAT(all_reduce(Tensor({k, 3 * k}), ReduceOp::kMean).to_vector<double>(), ElementsAre(1.5, 4.5));
}

TEST_F(MpiTest, MinAndMax) {
  Tensor x({r == 0 ? 5 : -2, r == 0 ? 1 : 7});
  EXPECT_THAT(all_reduce(x, ReduceOp::kMin).to_vector<int32_t>(), ElementsAre(-2, 1));
  EXPECT_THAT(all_reduce(x, ReduceOp::kMax).to_vector<int32_t>(), ElementsAre(5, 7));
}

TEST_F(MpiTest, IntegerDtypesSum) {
  EXPECT_EQ(all_reduce(Tensor(int64_t{1} << 40)).item<int64_t>(), int64_t{1} << 41);
  Tensor u = all_reduce(Tensor(std::vector<uint8_t>{uint8_t(r + 1), 100}, Shape{2}));
  EXPECT_EQ(u.dtype(), DType::kUInt8);
  EXPECT_THAT(u.to_vector<uint8_t>(), ElementsAre(3, 200));
}

TEST_F(MpiTest, AnEmptyTensorReducesToAnEmptyTensor) {
  Tensor y = all_reduce(zeros({0, 4}), ReduceOp::kMean);
  EXPECT_EQ(y.shape(), Shape({0, 4}));
}

// L = sum over ranks of sum(c_r * y), y = all_reduce(x * x): dL/dx_r = (sum of the c's) * 2 x_r.
TEST_F(MpiTest, GradientOfASumIsTheSumOfTheIncomingGradients) {
  Variable x(Tensor({1.f, 2.f}), "x");
  const float c = static_cast<float>(r + 1);
  GradientTape tape;
  Tensor y = all_reduce(x * x, ReduceOp::kSum);
  Tensor loss = reduce_sum(c * y);
  EXPECT_THAT(tape.gradient(loss, {x})[0].to_vector<float>(), ElementsAre(3.f * 2.f, 3.f * 4.f));
}

TEST_F(MpiTest, GradientOfAMeanIsTheMeanOfTheIncomingGradients) {
  Variable x(Tensor({1.f, 2.f}), "x");
  const float c = static_cast<float>(r + 1);
  GradientTape tape;
  Tensor loss = reduce_sum(c * all_reduce(x * x, ReduceOp::kMean));
  EXPECT_THAT(tape.gradient(loss, {x})[0].to_vector<float>(), ElementsAre(1.5f * 2.f, 1.5f * 4.f));
}

TEST_F(MpiTest, MinAndMaxHaveNoGradient) {
  Variable x(Tensor({1.f, 2.f}), "x");
  GradientTape tape;
  Tensor loss = reduce_sum(all_reduce(x * 1.f, ReduceOp::kMax));
  try {
    tape.gradient(loss, {x});
    FAIL() << "no error";
  } catch (const UnimplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[all_reduce] has no gradient for merge_op Max"));
  }
}

TEST_F(MpiTest, BroadcastGivesEveryRankTheRootsValue) {
  Tensor x({float(r), float(r) + 0.5f});
  EXPECT_THAT(mpi::broadcast(x, 0).to_vector<float>(), ElementsAre(0.f, 0.5f));
  EXPECT_THAT(mpi::broadcast(x, 1).to_vector<float>(), ElementsAre(1.f, 1.5f));
  EXPECT_THAT(mpi::broadcast(Tensor(r == 0), 0).item<bool>(), true);  // any dtype broadcasts
}

TEST_F(MpiTest, BroadcastVariablesMakesTheRanksStartIdentical) {
  std::vector<Variable> vars = {Variable(Tensor({float(r), 2.f * r}), "a"), Variable(Tensor(int64_t(r + 7)), "b")};
  mpi::broadcast_variables(vars, 0);
  EXPECT_THAT(vars[0].read().to_vector<float>(), ElementsAre(0.f, 0.f));
  EXPECT_EQ(vars[1].read().item<int64_t>(), 7);
}

TEST_F(MpiTest, BroadcastFromARankThatDoesNotExistIsAnError) {
  EXPECT_THROW(mpi::broadcast(Tensor(1.f), 2), InvalidArgumentError);
  EXPECT_THROW(mpi::broadcast(Tensor(1.f), -1), InvalidArgumentError);
  mpi::barrier();  // both ranks still in step
}

TEST_F(MpiTest, ADtypeMpiCannotReduceIsATypedErrorNamingTheCaller) {
  try {
    all_reduce(Tensor({true, false}));
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("[all_reduce] MPI cannot reduce dtype bool"), HasSubstr("collective_test.cc:")));
  }
  EXPECT_THROW(all_reduce(Tensor({1, 2}), ReduceOp::kMean), InvalidArgumentError);  // a mean of integers
}

TEST_F(MpiTest, ShapesThatDifferAcrossRanksAreAnErrorOnEveryRankNotAHang) {
  try {
    all_reduce(r == 0 ? zeros({2}) : zeros({3}));
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("[all_reduce] the ranks disagree on the number of elements"),
                                HasSubstr(r == 0 ? "shape [2]" : "shape [3]"), HasSubstr("collective_test.cc:")));
  }
  // Same element count, other dims.
  EXPECT_THROW(all_reduce(r == 0 ? zeros({2, 3}) : zeros({3, 2})), InvalidArgumentError);
  // Different dtypes.
  EXPECT_THROW(all_reduce(r == 0 ? zeros({2}) : zeros({2}, DType::kFloat64)), InvalidArgumentError);
  // Nothing is left half done: the next collective works.
  EXPECT_THAT(all_reduce(Tensor({1.f, 2.f})).to_vector<float>(), ElementsAre(2.f, 4.f));
}

TEST_F(MpiTest, CollectivesCalledInADifferentOrderAreAnErrorNotAMixUp) {
  // Rank 0 broadcasts while rank 1 all-reduces; then the other way round.
  for (int round = 0; round < 2; ++round) {
    if (r == round) EXPECT_THROW(mpi::broadcast(Tensor(1.f), 0), InvalidArgumentError);
    else EXPECT_THROW(all_reduce(Tensor(1.f)), InvalidArgumentError);
  }
  // Different instance keys: the ranks are running different collectives.
  EXPECT_THROW(all_reduce(Tensor(1.f), ReduceOp::kSum, Group::world(), /*instance_key=*/r), InvalidArgumentError);
  EXPECT_EQ(all_reduce(Tensor(1.f)).item<float>(), 2.f);
}

TEST_F(MpiTest, AGroupKeyNoGroupHasIsATypedErrorWhenTheOpIsMade) {
  try {
    all_reduce(Tensor(1.f), ReduceOp::kSum, Group{.key = 999});
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("[all_reduce] group_key 999 names no group of this process"),
                                HasSubstr("collective_test.cc:")));
  }
  EXPECT_THROW(mpi::group_ranks(Group{.key = 999}), InvalidArgumentError);
}

// The group tests proper need more ranks (group_test.cc, four); these need two.
TEST_F(MpiTest, NewGroupChecksItsRanksOnEveryRank) {
  const std::pair<std::vector<int>, std::string> bad[] = {
      {{}, "[mpi::new_group] a group needs at least one rank"},
      {{0, 2}, "[mpi::new_group] rank 2 is not a rank of this world (size 2)"},
      {{-1, 0}, "[mpi::new_group] rank -1 is not a rank of this world"},
      {{1, 0, 1}, "[mpi::new_group] rank 1 is listed twice"}};
  for (const auto& [ranks, message] : bad) {
    try {
      mpi::new_group(ranks);
      ADD_FAILURE() << "no error for " << ranks.size() << " ranks";
    } catch (const InvalidArgumentError& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(message), HasSubstr("collective_test.cc:")));
    }
  }
  // Ranks passing different lists: an error on both, not a hang or two different groups.
  try {
    mpi::new_group(r == 0 ? std::vector<int>{0} : std::vector<int>{1});
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("[mpi::new_group] the ranks disagree"));
  }
  // Nothing half made: the next group works, and a one-rank group reduces alone.
  Group both = mpi::new_group({0, 1});
  EXPECT_EQ(all_reduce(Tensor(float(r + 1)), ReduceOp::kSum, both).item<float>(), 3.f);
  Group me0 = mpi::new_group({0});
  if (r == 0) EXPECT_EQ(all_reduce(Tensor(5.f), ReduceOp::kMean, me0).item<float>(), 5.f);
  else EXPECT_THROW(all_reduce(Tensor(5.f), ReduceOp::kMean, me0), InvalidArgumentError);
}

TEST_F(MpiTest, ASecondContextNestsAndLeavesMpiRunning) {
  { mpi::Context again; }
  EXPECT_TRUE(mpi::initialized());
  EXPECT_EQ(all_reduce(Tensor(1.f)).item<float>(), 2.f);
}

// Run alone (ctest's mpi_not_initialized: tapeflow_mpi_tests --no-mpi).
TEST(MpiNotInitialized, AllReduceIsAFailedPreconditionNamingTheOpAndTheCaller) {
  ASSERT_FALSE(mpi::initialized());
  try {
    all_reduce(Tensor({1.f, 2.f}));
    FAIL() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("[all_reduce] MPI is not initialised"), HasSubstr("mpi::Context"),
                                HasSubstr("collective_test.cc:")));
  }
}

TEST(MpiNotInitialized, RankSizeBarrierAndBroadcastAreFailedPreconditions) {
  EXPECT_THROW(mpi::rank(), FailedPreconditionError);
  EXPECT_THROW(mpi::size(), FailedPreconditionError);
  EXPECT_THROW(mpi::barrier(), FailedPreconditionError);
  EXPECT_THROW(mpi::broadcast(Tensor(1.f)), FailedPreconditionError);
}

TEST(MpiNotInitialized, AGraphBuildsButItsRunIsAFailedPrecondition) {
  Graph g;
  Tensor x, y;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
    y = all_reduce(x, ReduceOp::kMean);
  }
  Session sess(g);
  try {
    sess.run(y, {{x, Tensor({1.f, 2.f})}});
    FAIL() << "no error";
  } catch (const FailedPreconditionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("MPI is not initialised"));
  }
}

}  // namespace
}  // namespace tapeflow
