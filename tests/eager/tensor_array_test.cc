// The TensorArray buffer ops (Note [TensorArrays as buffers], eager/ops/tensor_array.cc) run on
// concrete tensors: values, shapes, the first write's dims, and typed errors for bad indices,
// shapes and dtypes. They have no API function; a GraphDef's TensorArray ops become them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow {
namespace {

using ::testing::HasSubstr;

Tensor run_op(const std::string& type, const std::vector<Tensor>& inputs, const AttrMap& attrs = {}) {
  const OpDef* op = OpRegistry::global().find(type);
  if (op == nullptr) throw std::logic_error("no op " + type);
  return execute_single(*op, inputs, attrs, std::source_location::current());
}

Tensor new_buffer(int32_t size, const Shape& element, DType dtype = DType::kFloat32) {
  return run_op("TensorArrayBuffer", {Tensor(size)}, AttrMap{{"dtype", dtype}, {"element_shape", element}});
}

TEST(TensorArrayTest, WriteReadGatherScatterUnstackAndSize) {
  Tensor b = new_buffer(3, Shape{2});
  EXPECT_EQ(b.shape(), (Shape{3, 2}));
  EXPECT_EQ(b.to_vector<float>(), std::vector<float>(6, 0.f));
  b = run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{1}), Tensor{5.f, 6.f}});
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 0, 5, 6, 0, 0}));
  EXPECT_EQ(run_op("TensorArrayBufferRead", {b, Tensor(int32_t{1})}).to_vector<float>(), (std::vector<float>{5, 6}));
  EXPECT_EQ(run_op("TensorArrayBufferRead", {b, Tensor(int32_t{0})}).to_vector<float>(), (std::vector<float>{0, 0}));
  const Tensor g = run_op("TensorArrayBufferGather", {b, Tensor(std::vector<int32_t>{1, 1, 0}, Shape{3})});
  EXPECT_EQ(g.shape(), (Shape{3, 2}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{5, 6, 5, 6, 0, 0}));
  b = run_op("TensorArrayBufferScatter",
             {b, Tensor(std::vector<int32_t>{2, 0}, Shape{2}), Tensor(std::vector<float>{1, 2, 3, 4}, Shape{2, 2})});
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{3, 4, 5, 6, 1, 2}));
  b = run_op("TensorArrayBufferUnstack", {b, Tensor(std::vector<float>{9, 9}, Shape{1, 2})});
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{9, 9, 5, 6, 1, 2}));
  const Tensor size = run_op("TensorArrayBufferSize", {b});
  EXPECT_EQ(size.dtype(), DType::kInt32);
  EXPECT_EQ(size.to_vector<int32_t>(), std::vector<int32_t>{3});
  // Any of the element dtypes: int64 elements are copied whole.
  Tensor ints = new_buffer(2, Shape{}, DType::kInt64);
  ints = run_op("TensorArrayBufferWrite", {ints, Tensor(int32_t{1}), Tensor(int64_t{1} << 40)});
  EXPECT_EQ(ints.to_vector<int64_t>(), (std::vector<int64_t>{0, int64_t{1} << 40}));
}

TEST(TensorArrayTest, UnknownElementDimsTakeTheFirstWritesAndThenHold) {
  Tensor b = new_buffer(2, Shape{-1, 2});
  EXPECT_EQ(b.shape(), (Shape{2, 0, 2}));  // empty until written
  b = run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{1}), Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{3, 2})});
  EXPECT_EQ(b.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{0}), Tensor(std::vector<float>{1, 2}, Shape{1, 2})});
              }),
              HasSubstr("[tensor_array_write] 'value' [1,2] does not fit the TensorArray's elements (buffer [2,3,2])"));
}

// A dynamic_size array ("grow") takes writes past its end: the buffer grows to hold them.
TEST(TensorArrayTest, AGrowingArrayTakesWritesPastItsEnd) {
  const AttrMap grow{{"grow", true}};
  Tensor b = new_buffer(0, Shape{2});
  b = run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{1}), Tensor{1.f, 2.f}}, grow);
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 0, 1, 2}));
  b = run_op("TensorArrayBufferScatter", {b, Tensor(std::vector<int32_t>{3}, Shape{1}), Tensor(std::vector<float>{5, 6}, Shape{1, 2})}, grow);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 0, 1, 2, 0, 0, 5, 6}));
  b = run_op("TensorArrayBufferUnstack", {b, Tensor(std::vector<float>(10, 7.f), Shape{5, 2})}, grow);
  EXPECT_EQ(b.shape(), (Shape{5, 2}));
  EXPECT_EQ(run_op("TensorArrayBufferSize", {b}).to_vector<int32_t>(), std::vector<int32_t>{5});
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{-1}), Tensor{1.f, 2.f}}, grow);
              }),
              HasSubstr("index -1 is outside the TensorArray of size 5"));
  // Without "grow" the same write past the end is an error.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{5}), Tensor{1.f, 2.f}});
              }),
              HasSubstr("index 5 is outside the TensorArray of size 5"));
}

// A dim of 0 in element_shape is not promised after a write: an empty buffer takes the value's
// dims when the kernel runs, so a graph's static shapes leave it unknown (what reads the element
// must not size its output by a 0).
TEST(TensorArrayTest, AZeroDimIsNotPromisedPastAWrite) {
  Graph g;
  Tensor v, y;
  {
    auto scope = g.as_default();
    v = placeholder(DType::kFloat32, {-1}, "v");
    const Tensor w = run_op("TensorArrayBufferWrite", {new_buffer(2, Shape{0}), Tensor(int32_t{0}), v});
    EXPECT_EQ(w.shape(), (Shape{-1, -1}));
    const Tensor r = run_op("TensorArrayBufferRead", {w, Tensor(int32_t{0})});
    EXPECT_EQ(r.shape(), (Shape{-1}));
    y = -r;
  }
  Session sess(g);
  const Tensor out = sess.run(y, {{v, Tensor(std::vector<float>(1000, 2.f), Shape{1000})}});
  EXPECT_EQ(out.shape(), (Shape{1000}));
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(1000, -2.f));
}

TEST(TensorArrayTest, BadIndicesShapesAndDtypesAreTypedErrors) {
  const Tensor b = new_buffer(2, Shape{2});
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { run_op("TensorArrayBufferRead", {b, Tensor(int32_t{2})}); }),
              HasSubstr("[tensor_array_read] index 2 is outside the TensorArray of size 2"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{-1}), Tensor{1.f, 2.f}});
              }),
              HasSubstr("[tensor_array_write] index -1 is outside the TensorArray of size 2"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                run_op("TensorArrayBufferGather", {b, Tensor(std::vector<int32_t>{0, 5}, Shape{2})});
              }),
              HasSubstr("index 5 is outside the TensorArray of size 2"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{0}), Tensor{1.f, 2.f, 3.f}}); }),
              HasSubstr("[tensor_array_write] 'value' [3] does not fit the TensorArray's elements (buffer [2,2])"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { run_op("TensorArrayBufferWrite", {b, Tensor(int32_t{0}), Tensor{1, 2}}); }),
              HasSubstr("'value' is int32 and the TensorArray holds float32"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] {
                run_op("TensorArrayBufferUnstack", {b, Tensor(std::vector<float>(6, 1.f), Shape{3, 2})});
              }),
              HasSubstr("cannot unstack 3 rows into the TensorArray of size 2"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { new_buffer(-1, Shape{2}); }),
              HasSubstr("[tensor_array] size must be non-negative, got -1"));
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { run_op("TensorArrayBufferSize", {Tensor(1.f)}); }),
              HasSubstr("'buffer' must have a rank of at least 1"));
  // A hostile size is refused by the allocation's checked size, not attempted.
  EXPECT_THAT(error_of<InvalidArgumentError>([&] { new_buffer(INT32_MAX, Shape{INT32_MAX, INT32_MAX}); }),
              HasSubstr("[tensor_array] shape [2147483647,2147483647,2147483647] is too large: its element count "
                        "overflows int64"));
  EXPECT_THAT(error_of<ResourceExhaustedError>([&] { new_buffer(INT32_MAX, Shape{1 << 20}); }),
              HasSubstr("[tensor_array] a float32 tensor of shape [2147483647,1048576] needs 9007199250546688 bytes, over the limit"));
}

}  // namespace
}  // namespace tapeflow
