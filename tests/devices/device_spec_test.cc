#include "devices/device_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace tapeflow {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

DeviceSpec parse(std::string_view s) {
  auto r = DeviceSpec::parse(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status();
  return r.ok() ? *r : DeviceSpec{};
}

// Every form TensorFlow's guide uses, with the fields it sets and its canonical string.
TEST(DeviceSpecTest, ParsesTheFormsOfTensorFlowsGuide) {
  struct Case { const char* spec; const char* canonical; };
  const Case cases[] = {
      {"/job:ps/task:0", "/job:ps/task:0"},
      {"/job:worker", "/job:worker"},
      {"/device:GPU:0", "/device:GPU:0"},
      {"/device:CPU:0", "/device:CPU:0"},
      {"/job:localhost/replica:0/task:0/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0"},
      {"/cpu:0", "/device:CPU:0"},
      {"/gpu:1", "/device:GPU:1"},
      {"/device:GPU:*", "/device:GPU:*"},
      {"/job:ps/replica:2/task:1/device:GPU:3", "/job:ps/replica:2/task:1/device:GPU:3"},
      {"/device:gpu:0", "/device:GPU:0"},  // legacy lower case is upper-cased
      {"/GPU:0", "/device:GPU:0"},
      {"/device:TPU:2", "/device:TPU:2"},  // other types are kept as written
  };
  for (const auto& c : cases) {
    const DeviceSpec s = parse(c.spec);
    EXPECT_EQ(s.to_string(), c.canonical) << c.spec;
    // The canonical string parses back to the same spec.
    EXPECT_EQ(parse(s.to_string()), s) << c.spec;
  }
}

TEST(DeviceSpecTest, FieldsOfAFullSpec) {
  const DeviceSpec s = parse("/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(s.job, "localhost");
  EXPECT_EQ(s.replica, 0);
  EXPECT_EQ(s.task, 0);
  EXPECT_EQ(s.device_type, "CPU");
  EXPECT_EQ(s.device_index, 0);
  EXPECT_FALSE(s.empty());
}

TEST(DeviceSpecTest, PartialSpecsLeaveFieldsUnset) {
  const DeviceSpec ps = parse("/job:ps/task:0");
  EXPECT_EQ(ps.job, "ps");
  EXPECT_EQ(ps.task, 0);
  EXPECT_FALSE(ps.replica.has_value());
  EXPECT_FALSE(ps.device_type.has_value());
  const DeviceSpec any_gpu = parse("/device:GPU:*");
  EXPECT_EQ(any_gpu.device_type, "GPU");
  EXPECT_FALSE(any_gpu.device_index.has_value());
  const DeviceSpec gpu1 = parse("/gpu:1");
  EXPECT_EQ(gpu1.device_type, "GPU");
  EXPECT_EQ(gpu1.device_index, 1);
  EXPECT_FALSE(gpu1.job.has_value());
}

TEST(DeviceSpecTest, EmptySpecs) {
  for (const char* s : {"", "/", "//"}) {
    const DeviceSpec e = parse(s);
    EXPECT_TRUE(e.empty()) << s;
    EXPECT_EQ(e.to_string(), "") << s;
  }
}

// Inner fields win; unset inner fields keep the outer scope's (TensorFlow's
// DeviceSpec.make_merged_spec, used for nested tf.device scopes).
TEST(DeviceSpecTest, MergesWithOuterScopesAsTensorFlowDoes) {
  struct Case { const char* outer; const char* inner; const char* merged; };
  const Case cases[] = {
      {"/job:ps/task:0", "/device:GPU:1", "/job:ps/task:0/device:GPU:1"},
      {"/job:train", "/job:ps/device:GPU:0", "/job:ps/device:GPU:0"},
      {"/job:train", "/device:GPU:1", "/job:train/device:GPU:1"},
      {"/job:worker/device:GPU:0", "/cpu:0", "/job:worker/device:CPU:0"},
      {"/job:worker/task:3", "/task:1", "/job:worker/task:1"},
      {"/device:GPU:1", "/device:GPU:*", "/device:GPU:1"},
      // An inner spec without an index keeps the outer index, even with another type.
      {"/device:GPU:1", "/device:CPU:*", "/device:CPU:1"},
      {"/job:localhost/replica:0/task:0/device:CPU:0", "/gpu:1",
       "/job:localhost/replica:0/task:0/device:GPU:1"},
      {"", "/job:ps", "/job:ps"},
      {"/job:ps", "", "/job:ps"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(parse(c.outer).merged_with(parse(c.inner)).to_string(), c.merged)
        << c.outer << " then " << c.inner;
  }
}

TEST(DeviceSpecTest, MergesThreeNestedScopes) {
  const DeviceSpec merged =
      parse("/job:worker").merged_with(parse("/task:2")).merged_with(parse("/device:GPU:0"));
  EXPECT_EQ(merged.to_string(), "/job:worker/task:2/device:GPU:0");
}

TEST(DeviceSpecTest, Compatibility) {
  EXPECT_TRUE(parse("/job:ps").is_compatible_with(parse("/device:GPU:0")));
  EXPECT_TRUE(parse("/device:GPU:*").is_compatible_with(parse("/device:GPU:3")));
  EXPECT_TRUE(parse("").is_compatible_with(parse("/job:ps/task:0/device:CPU:0")));
  EXPECT_FALSE(parse("/job:ps").is_compatible_with(parse("/job:worker")));
  EXPECT_FALSE(parse("/device:GPU:0").is_compatible_with(parse("/device:CPU:0")));
  EXPECT_FALSE(parse("/gpu:0").is_compatible_with(parse("/gpu:1")));
}

struct Malformed { const char* spec; const char* why; };

TEST(DeviceSpecTest, MalformedSpecsSayWhatIsWrong) {
  const Malformed cases[] = {
      {"/job:", "'job:' needs a job name"},
      {"/task:x", "'task:x' needs a non-negative integer"},
      {"/replica:-2", "'replica:-2' needs a non-negative integer"},
      {"/device:GPU:-1", "device index '-1' is not a non-negative integer"},
      {"/gpu:x", "device index 'x' is not a non-negative integer"},
      {"/foo:1", "unknown field 'foo'"},
      {"job:ps/task", "'task' needs a non-negative integer"},
      {"/device:GPU:0:1", "must look like device:GPU:0"},
      {"/device:", "must look like device:GPU:0"},
      {"/job:ps/job:worker", "job given twice"},
      {"/task:0/task:1", "task given twice"},
      {"/cpu:0/device:GPU:1", "device given twice"},
      {"/job:p s", "needs a job name"},
      {"/job:1ps", "needs a job name"},  // TensorFlow: a job name starts with a letter
      {"/job:_ps", "needs a job name"},
  };
  for (const auto& c : cases) {
    auto r = DeviceSpec::parse(c.spec);
    ASSERT_FALSE(r.ok()) << c.spec << " parsed as " << r->to_string();
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.spec;
    const std::string msg(r.status().message());
    EXPECT_THAT(msg, StartsWith(std::string("Malformed device specification '") + c.spec + "'"));
    EXPECT_THAT(msg, HasSubstr(c.why)) << c.spec;
  }
}

// A node's requested device: empty holds nothing, copies share one spec, it reads as the spec
// and compares by value.
TEST(SharedDeviceSpecTest, EmptyHoldsNothingCopiesShareAndEqualityIsByValue) {
  SharedDeviceSpec none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.to_string(), "");
  EXPECT_TRUE(none.get().empty());
  EXPECT_TRUE(SharedDeviceSpec(DeviceSpec{}).empty());  // an empty spec is not kept

  SharedDeviceSpec gpu = parse("/job:ps/task:1/device:GPU:0");
  ASSERT_FALSE(gpu.empty());
  const SharedDeviceSpec copy = gpu;
  EXPECT_EQ(&copy.get(), &gpu.get());  // one spec, shared
  const DeviceSpec& read = copy;
  EXPECT_EQ(read.job, "ps");
  EXPECT_EQ(read.task, 1);
  EXPECT_EQ(read.device_type, "GPU");
  EXPECT_EQ(copy.to_string(), "/job:ps/task:1/device:GPU:0");

  const SharedDeviceSpec same = parse("/job:ps/task:1/device:GPU:0");  // another spec, equal fields
  EXPECT_NE(&same.get(), &gpu.get());
  EXPECT_TRUE(same == gpu);
  EXPECT_FALSE(same == none);
  gpu = parse("/cpu:0");  // replaces this one's spec, not the copy's
  EXPECT_EQ(gpu.to_string(), "/device:CPU:0");
  EXPECT_EQ(copy.to_string(), "/job:ps/task:1/device:GPU:0");
  EXPECT_FALSE(gpu == copy);
}

}  // namespace
}  // namespace tapeflow
