// Tensor construction, element access and NumPy-style printing.
#include "eager/tensor.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/creation.h"
#include "graph/graph.h"
#include "graph/graph_context.h"
#include "graph/graph_ops.h"

namespace tapeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;

std::string print(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

TEST(TensorTest, ConstructionFromScalarsListsAndVectors) {
  Tensor s = 2.5;
  EXPECT_EQ(s.dtype(), DType::kFloat64);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);
  Tensor m = {{1, 2, 3}, {4, 5, 6}};
  EXPECT_EQ(m.dtype(), DType::kInt32);
  EXPECT_EQ(m.shape(), (Shape{2, 3}));
  EXPECT_EQ(m.at<int32_t>({1, 2}), 6);
  Tensor cube = {{{1.f, 2.f}}, {{3.f, 4.f}}};
  EXPECT_EQ(cube.shape(), (Shape{2, 1, 2}));
  Tensor v(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, Shape{3, 2});
  EXPECT_EQ(v.at<int64_t>({2, 1}), 6);
  Tensor u = uint8_t{7};
  EXPECT_EQ(u.dtype(), DType::kUInt8);
}

TEST(TensorTest, BadConstructionAndAccessAreTypedErrors) {
  EXPECT_THROW((Tensor{{1, 2}, {3}}), InvalidArgumentError);               // ragged
  EXPECT_THROW(Tensor(std::vector<float>{1, 2, 3}, Shape{2, 2}), InvalidArgumentError);
  Tensor m = {{1, 2}, {3, 4}};
  EXPECT_THROW(m.at<int32_t>({2, 0}), OutOfRangeError);
  EXPECT_THROW(m.at<int32_t>({0}), InvalidArgumentError);
  try {
    m.item<float>();
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_THAT(e.what(), HasSubstr("Requested float32 elements from a int32 tensor"));
  }
  EXPECT_THROW(m.item<int32_t>(), InvalidArgumentError);  // four elements
  EXPECT_THROW(Tensor().to_vector<float>(), InvalidArgumentError);
}

// fn throws an E whose message contains `text` and names this file and `line`, the line of the
// accessor call, as op errors name theirs: "... (at tensor_test.cc:<line>)".
template <typename E = InvalidArgumentError, typename Fn>
void expect_error_at(int line, Fn fn, const std::string& text) {
  SCOPED_TRACE("the call on line " + std::to_string(line));
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    EXPECT_THAT(e.what(), HasSubstr(text));
    EXPECT_THAT(e.what(), HasSubstr("(at tensor_test.cc:" + std::to_string(line) + ")"));
    EXPECT_EQ(e.location().line(), static_cast<uint_least32_t>(line));
    EXPECT_THAT(e.location().file_name(), EndsWith("tensor_test.cc"));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

TEST(TensorTest, AccessorErrorsAreTypedAndNameTheCallersLine) {
  const Tensor v = {1.f, 2.f};
  const Tensor m = {{1, 2}, {3, 4}};
  // item(): one element only, of the right dtype.
  expect_error_at(__LINE__, [&] { (void)v.item<float>(); },
                  "[item] needs exactly one element, the tensor has shape [2]");
  expect_error_at(__LINE__, [&] { (void)m.item<float>(); },
                  "[item] Requested float32 elements from a int32 tensor");
  // at(): the dtype, one index per dimension, each in range.
  expect_error_at(__LINE__, [&] { (void)v.at<double>({0}); },
                  "[at] Requested float64 elements from a float32 tensor");
  expect_error_at(__LINE__, [&] { (void)m.at<int32_t>({0}); },
                  "[at] got 1 indices for a tensor of rank 2 (shape [2,2])");
  expect_error_at<OutOfRangeError>(__LINE__, [&] { (void)m.at<int32_t>({0, 2}); },
                  "[at] index 2 is out of range for dimension 1 of size 2");
  expect_error_at<OutOfRangeError>(__LINE__, [&] { (void)m.at<int32_t>({-1, 0}); },
                  "[at] index -1 is out of range for dimension 0");
  // to_vector(): the dtype.
  expect_error_at(__LINE__, [&] { (void)m.to_vector<int64_t>(); },
                  "[to_vector] Requested int64 elements from a int32 tensor");
  // An empty (default-constructed) tensor.
  const Tensor empty;
  expect_error_at(__LINE__, [&] { (void)empty.item<float>(); },
                  "[item] The tensor is empty (default-constructed)");
  expect_error_at(__LINE__, [&] { (void)empty.at<float>({0}); },
                  "[at] The tensor is empty (default-constructed)");
  expect_error_at(__LINE__, [&] { (void)empty.to_vector<float>(); },
                  "[to_vector] The tensor is empty (default-constructed)");
  float sink = 0;
  expect_error_at(__LINE__, [&] { empty.copy_to_host(&sink); },
                  "[copy_to_host] The tensor is empty");
  // A symbolic (graph) tensor has no value to read.
  Graph g;
  Tensor x;
  {
    auto scope = g.as_default();
    x = placeholder(DType::kFloat32, {2}, "x");
  }
  expect_error_at<FailedPreconditionError>(__LINE__, [&] { (void)x.item<float>(); },
                  "[item] 'x:0' is a symbolic (graph) tensor and has no value");
  expect_error_at<FailedPreconditionError>(__LINE__, [&] { (void)x.at<float>({0}); },
                  "[at] 'x:0' is a symbolic");
  expect_error_at<FailedPreconditionError>(__LINE__, [&] { (void)x.to_vector<float>(); },
                  "[to_vector] 'x:0' is a symbolic");
  // Good reads still work, with or without a location.
  EXPECT_EQ(m.at<int32_t>({1, 0}), 3);
  EXPECT_EQ(Tensor(2.5f).item<float>(), 2.5f);
}

TEST(TensorTest, CopiesShareTheBuffer) {
  Tensor a = {1.f, 2.f};
  Tensor b = a;
  EXPECT_TRUE(b.shares_buffer_with(a));
  Tensor r = reshape(a, {2, 1});
  EXPECT_TRUE(r.shares_buffer_with(a));  // reshape is a view
}

TEST(TensorPrintTest, MatchesNumPy) {
  EXPECT_EQ(print(Tensor{1.5f, -0.25f}), "tapeflow.Tensor([ 1.5  -0.25], shape=(2,), dtype=float32)");
  EXPECT_EQ(print(Tensor{1.f, 2.f}), "tapeflow.Tensor([1. 2.], shape=(2,), dtype=float32)");
  EXPECT_EQ(print(Tensor(3)), "tapeflow.Tensor(3, shape=(), dtype=int32)");
  EXPECT_EQ(print(Tensor{true, false}), "tapeflow.Tensor([ True False], shape=(2,), dtype=bool)");
  EXPECT_EQ(print(Tensor{1e-5, 1.0}), "tapeflow.Tensor([1.e-05 1.e+00], shape=(2,), dtype=float64)");
  EXPECT_EQ(print(Tensor{{{1, 2}}, {{3, 4}}}),
            "tapeflow.Tensor(\n[[[1 2]]\n\n [[3 4]]], shape=(2, 1, 2), dtype=int32)");
}

TEST(TensorPrintTest, LargeTensorsElideTheMiddle) {
  EXPECT_EQ(print(range(0, 2000)),
            "tapeflow.Tensor([   0    1    2 ... 1997 1998 1999], shape=(2000,), dtype=int32)");
  const std::string big = print(reshape(range(0, 2000), {1000, 2}));
  EXPECT_THAT(big, HasSubstr("[[   0    1]\n [   2    3]\n [   4    5]\n ...\n [1994 1995]"));
}

}  // namespace
}  // namespace tapeflow
