// Multi-process clusters for tests: each task is a tapeflow_server child process on 127.0.0.1.
//
//   ProcessCluster cluster({{"ps", 1}, {"worker", 2}});   // ports picked by the OS
//   Session s(cluster.target("worker", 0), g);
//   cluster.kill("worker", 1);                             // SIGKILL, reaped
//   cluster.restart("worker", 1);                          // same port again
//
// Ports: every child binds port 0 and writes the port it got to a file (no race: nobody picks
// a port before binding it); once all have answered, the harness writes the full cluster to a
// file every child waits for. A restarted task binds its old port again (free once its
// process died). Children die with the test process (PR_SET_PDEATHSIG) and are killed and
// reaped by the destructor; every wait is bounded.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/cluster/cluster_spec.h"

namespace tapeflow::cluster::testing {

class ProcessCluster {
 public:
  explicit ProcessCluster(const std::map<std::string, int>& jobs, std::string token = "") : token_(std::move(token)) {
    char pattern[] = "/tmp/tapeflow_cluster_XXXXXX";
    if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    JobMap zero;
    for (const auto& [job, n] : jobs) zero[job] = std::vector<std::string>(static_cast<size_t>(n), "127.0.0.1:0");
    const std::string spec = ClusterSpec(zero).to_string();
    for (const auto& [job, n] : jobs)
      for (int t = 0; t < n; ++t) start(job, t, spec);
    JobMap full;
    for (const auto& [job, n] : jobs)
      for (int t = 0; t < n; ++t) full[job].push_back(absl::StrCat("127.0.0.1:", wait_port(job, t)));
    cluster_ = ClusterSpec(full);
    const std::string file = dir_ + "/cluster";
    {
      std::ofstream out(file + ".tmp");
      out << cluster_.to_string() << "\n";
    }
    std::filesystem::rename(file + ".tmp", file);
    for (const auto& [job, n] : jobs)
      for (int t = 0; t < n; ++t) wait_port(job, t, ".ready");
  }
  ~ProcessCluster() {
    for (auto& [key, pid] : pids_) reap(pid);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ProcessCluster(const ProcessCluster&) = delete;
  ProcessCluster& operator=(const ProcessCluster&) = delete;

  const ClusterSpec& spec() const { return cluster_; }
  std::string target(const std::string& job, int task) const {
    return absl::StrCat("grpc://", cluster_.task_address(job, task));
  }
  void kill(const std::string& job, int task) { reap(pids_.at({job, task})); }
  // Starts the task again on its old port, with the full cluster at once.
  void restart(const std::string& job, int task) {
    kill(job, task);
    std::filesystem::remove(port_file(job, task));
    std::filesystem::remove(port_file(job, task) + ".ready");
    start(job, task, cluster_.to_string());
    wait_port(job, task, ".ready");
  }

 private:
  std::string port_file(const std::string& job, int task) const { return absl::StrCat(dir_, "/", job, task, ".port"); }

  void start(const std::string& job, int task, const std::string& spec) {
    std::vector<std::string> args = {TAPEFLOW_SERVER_BINARY, "--cluster", spec, "--job", job, "--task",
                                     std::to_string(task), "--port-file", port_file(job, task),
                                     "--cluster-file", dir_ + "/cluster", "--wait-s", "60"};
    if (!token_.empty()) args.insert(args.end(), {"--token", token_});
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    pids_[{job, task}] = pid;
  }

  // The port from the task's port file (suffix ".ready": once it serves the whole cluster).
  int wait_port(const std::string& job, int task, const std::string& suffix = "") {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(port_file(job, task) + suffix);
      int port = 0;
      if (in >> port && port > 0) return port;
      int status = 0;
      if (waitpid(pids_.at({job, task}), &status, WNOHANG) > 0) {
        pids_[{job, task}] = -1;
        throw std::runtime_error(absl::StrCat("tapeflow_server ", job, ":", task, " exited early"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error(absl::StrCat("tapeflow_server ", job, ":", task, " wrote no port in 30 s"));
  }

  static void reap(pid_t& pid) {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
  }

  std::string dir_;
  std::string token_;
  ClusterSpec cluster_;
  std::map<std::pair<std::string, int>, pid_t> pids_;
};

}  // namespace tapeflow::cluster::testing
