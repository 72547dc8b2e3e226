// tapeflow_server: one task of a cluster as a process of its own.
//
//   tapeflow_server --cluster "ps=127.0.0.1:2222;worker=127.0.0.1:2223" --job ps --task 0
//
// --port-file F writes the bound port to F (written to F.tmp, then renamed) once serving: with
// port 0 in --cluster the OS picks a free port and nobody races for it. --cluster-file C then
// waits (at most --wait-s seconds, 60 by default) for C to hold the whole cluster, with every
// task's real port, as a launcher writes it after collecting the port files. --token T requires
// the shared token (Note [Cluster token]); --bind A listens on A instead of 127.0.0.1. Once it
// knows the whole cluster it writes F.ready (what a launcher waits for before clients connect).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "core/errors.h"
#include "distributed/cluster/server.h"

namespace {

int usage(const char* why) {
  std::cerr << "tapeflow_server: " << why
            << "\nusage: tapeflow_server --cluster SPEC --job JOB --task N [--port-file F] [--cluster-file C]"
               " [--wait-s S] [--token T] [--bind ADDRESS]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tapeflow::cluster;
  std::string cluster, job, port_file, cluster_file;
  int task = -1, wait_s = 60;
  ServerOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage(("missing value for " + arg).c_str());
    const std::string value = argv[++i];
    if (arg == "--cluster") cluster = value;
    else if (arg == "--job") job = value;
    else if (arg == "--task") task = std::atoi(value.c_str());
    else if (arg == "--port-file") port_file = value;
    else if (arg == "--cluster-file") cluster_file = value;
    else if (arg == "--wait-s") wait_s = std::atoi(value.c_str());
    else if (arg == "--token") options.token = value;
    else if (arg == "--bind") options.bind_address = value;
    else return usage(("unknown flag " + arg).c_str());
  }
  if (cluster.empty() || job.empty() || task < 0) return usage("--cluster, --job and --task are required");
  try {
    Server server(ClusterSpec::parse(cluster), job, task, options);
    if (!port_file.empty()) {
      {
        std::ofstream out(port_file + ".tmp");
        out << server.port() << "\n";
      }
      std::rename((port_file + ".tmp").c_str(), port_file.c_str());
    }
    if (!cluster_file.empty()) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
      std::string text;
      while (text.empty()) {
        std::ifstream in(cluster_file);
        if (in) std::getline(in, text);
        if (!text.empty()) break;
        if (std::chrono::steady_clock::now() > deadline) {
          std::cerr << "tapeflow_server: no cluster in " << cluster_file << " after " << wait_s << " s\n";
          return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      server.set_cluster(ClusterSpec::parse(text));
    }
    if (!port_file.empty()) {  // "<port-file>.ready": serving with the whole cluster
      std::ofstream(port_file + ".ready") << server.port() << "\n";
    }
    std::cerr << "tapeflow_server: " << task_name(job, task) << " serving " << server.target() << "\n";
    server.join();
  } catch (const tapeflow::Error& e) {
    std::cerr << "tapeflow_server: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
