// ClusterSpec: the jobs of a cluster and the address of each of their tasks, as TensorFlow's
// tf.train.ClusterSpec.
//
//   ClusterSpec cluster({{"ps", {"127.0.0.1:2222"}},
//                        {"worker", {"127.0.0.1:2223", "127.0.0.1:2224"}}});
//   cluster.task_address("worker", 1);     // "127.0.0.1:2224"
//   cluster.to_string();                   // "ps=127.0.0.1:2222;worker=127.0.0.1:2223,127.0.0.1:2224"
//   ClusterSpec::parse("ps=127.0.0.1:2222;worker=127.0.0.1:2223");
//
// A port of 0 means "the OS picks one when that task's Server binds" (the Server then knows its
// own address; Server::set_cluster hands the others theirs). A value type; not synchronised.
#pragma once

#include <map>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

namespace tapeflow::cluster {

// job name -> the addresses of tasks 0, 1, ...
using JobMap = std::map<std::string, std::vector<std::string>>;

class ClusterSpec {
 public:
  ClusterSpec() = default;
  // job name -> the addresses ("host:port") of tasks 0, 1, ... Throws InvalidArgumentError for
  // an empty or malformed job name (letters, digits and '_', starting with a letter), a job
  // without tasks, or an address that is not host:port with a port in [0, 65535].
  explicit ClusterSpec(std::map<std::string, std::vector<std::string>> jobs,
                       std::source_location loc = std::source_location::current());
  // "job=addr,addr;job=addr" (to_string's form). InvalidArgumentError as above.
  static ClusterSpec parse(std::string_view text, std::source_location loc = std::source_location::current());
  std::string to_string() const;

  std::vector<std::string> jobs() const;
  int num_tasks(const std::string& job) const;  // 0 for an unknown job
  bool has_task(const std::string& job, int task) const;
  // InvalidArgumentError naming the cluster's jobs for an unknown job or task.
  const std::string& task_address(const std::string& job, int task,
                                  std::source_location loc = std::source_location::current()) const;
  void set_task_address(const std::string& job, int task, std::string address,
                        std::source_location loc = std::source_location::current());
  const std::map<std::string, std::vector<std::string>>& as_map() const { return jobs_; }
  bool empty() const { return jobs_.empty(); }
  friend bool operator==(const ClusterSpec&, const ClusterSpec&) = default;

 private:
  std::map<std::string, std::vector<std::string>> jobs_;
};

// "/job:ps/replica:0/task:1/device:CPU:0": the device a task serves to the cluster.
std::string task_device_name(const std::string& job, int task);
// "/job:ps/replica:0/task:1", for messages.
std::string task_name(const std::string& job, int task);

}  // namespace tapeflow::cluster
