// ClusterSpec: construction, the text form, lookups and their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "distributed/cluster/cluster_spec.h"
#include "tapeflow.h"
#include "tests/support/test_util.h"

namespace tapeflow::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ClusterSpecTest, HoldsJobsAndTasksInOrder) {
  ClusterSpec c(JobMap{{"worker", {"127.0.0.1:2223", "127.0.0.1:2224"}}, {"ps", {"127.0.0.1:2222"}}});
  EXPECT_THAT(c.jobs(), ElementsAre("ps", "worker"));
  EXPECT_EQ(c.num_tasks("worker"), 2);
  EXPECT_EQ(c.num_tasks("chief"), 0);
  EXPECT_EQ(c.task_address("worker", 1), "127.0.0.1:2224");
  EXPECT_EQ(c.to_string(), "ps=127.0.0.1:2222;worker=127.0.0.1:2223,127.0.0.1:2224");
  EXPECT_EQ(ClusterSpec::parse(c.to_string()), c);
  EXPECT_EQ(task_device_name("ps", 1), "/job:ps/replica:0/task:1/device:CPU:0");
}

TEST(ClusterSpecTest, RejectsMalformedSpecsWithTheirReason) {
  EXPECT_THAT(error_of([] { ClusterSpec(JobMap{{"1ps", {"h:1"}}}); }), HasSubstr("job name '1ps' must start with a letter"));
  EXPECT_THAT(error_of([] { ClusterSpec(JobMap{{"ps", {}}}); }), HasSubstr("job 'ps' has no tasks"));
  EXPECT_THAT(error_of([] { ClusterSpec(JobMap{{"ps", {"localhost"}}}); }),
              HasSubstr("task 0 of job 'ps' has address 'localhost': expected host:port"));
  EXPECT_THAT(error_of([] { ClusterSpec(JobMap{{"ps", {"h:70000"}}}); }), HasSubstr("port in [0, 65535]"));
  EXPECT_THAT(error_of([] { ClusterSpec::parse("ps"); }), HasSubstr("'ps' is not job=host:port"));
  EXPECT_THAT(error_of([] { ClusterSpec::parse("ps=h:1;ps=h:2"); }), HasSubstr("job 'ps' is listed twice"));
  ClusterSpec c(JobMap{{"ps", {"h:1"}}});
  EXPECT_THAT(error_of([&] { c.task_address("ps", 1); }), HasSubstr("no task 1 in job 'ps': the cluster has ps (1 tasks)"));
  EXPECT_THAT(error_of([&] { c.set_task_address("ps", 0, "nope"); }), HasSubstr("'nope' is not host:port"));
  EXPECT_EQ(c.task_address("ps", 0), "h:1");  // unchanged
}

}  // namespace
}  // namespace tapeflow::cluster
