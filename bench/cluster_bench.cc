// The cost of the cluster (distributed/cluster/): one training step of the 784-256-10 MLP
// (batch 100, SGD) on 1 ps + 1 worker over loopback gRPC, against the same step in one process.
// Both servers run in this process (their own gRPC threads; every call still goes through
// 127.0.0.1 TCP). Prints the median step time of each, the overhead per step, and the overhead
// per tensor moved between the tasks (RecvTensor pulls, counted).
//
//   ./build/bench/cluster_bench [--steps N] [--repeats R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "distributed/cluster/grpc_client.h"
#include "distributed/cluster/server.h"
#include "tapeflow.h"

using namespace tapeflow;
using namespace tapeflow::cluster;
using Clock = std::chrono::steady_clock;

namespace {

struct Mlp {
  Graph g;
  Tensor x, labels;
  Operation train, init;
  explicit Mlp(bool on_cluster) {
    auto scope = g.as_default();
    auto placement = device(replica_device_setter(on_cluster ? 1 : 0, "/job:ps", on_cluster ? "/job:worker/task:0" : ""));
    x = placeholder(DType::kFloat32, {100, 784}, "x");
    labels = placeholder(DType::kInt64, {100}, "labels");
    Variable w1(random_normal({784, 256}, 0, 0.05, DType::kFloat32, 11), "w1");
    Variable b1(zeros({256}), "b1");
    Variable w2(random_normal({256, 10}, 0, 0.05, DType::kFloat32, 12), "w2");
    Variable b2(zeros({10}), "b2");
    Tensor logits = matmul(relu(matmul(x, w1) + b1), w2) + b2;
    Tensor loss = neg(reduce_mean(reduce_sum(one_hot(labels, 10) * log_softmax(logits), {1})));
    train = nn::SGD(0.01).minimize(loss);
    init = g.global_variables_initializer();
  }
};

// Median per-step milliseconds over `repeats` timings of `steps` steps each.
template <typename Fn> double median_step_ms(int steps, int repeats, Fn step) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    for (int s = 0; s < steps; ++s) step();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 50, repeats = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::atoi(argv[i + 1]);
  }
  const Tensor xs = random_uniform({100, 784}, 0.f, 1.f, DType::kFloat32, 5);
  const Tensor ys = cast(random_uniform({100}, 0.f, 10.f, DType::kFloat32, 6), DType::kInt64);

  Mlp local(false);
  Session one(local.g);
  one.run(std::vector<Fetch>{}, {}, {local.init});
  auto local_step = [&] { one.run(std::vector<Fetch>{}, {{local.x, xs}, {local.labels, ys}}, {local.train}); };
  local_step();  // compile the plan
  const double local_ms = median_step_ms(steps, repeats, local_step);

  const ClusterSpec zero(JobMap{{"ps", {"127.0.0.1:0"}}, {"worker", {"127.0.0.1:0"}}});
  Server ps(zero, "ps", 0), worker(zero, "worker", 0);
  const ClusterSpec full(JobMap{{"ps", {"127.0.0.1:" + std::to_string(ps.port())}},
                                {"worker", {"127.0.0.1:" + std::to_string(worker.port())}}});
  ps.set_cluster(full);
  worker.set_cluster(full);
  Mlp remote(true);
  Session sess(worker.target(), remote.g);
  sess.run(std::vector<Fetch>{}, {}, {remote.init});
  auto cluster_step = [&] { sess.run(std::vector<Fetch>{}, {{remote.x, xs}, {remote.labels, ys}}, {remote.train}); };
  cluster_step();  // register the partitions
  const int64_t pulled0 = tensors_pulled();
  cluster_step();
  const int64_t per_step = tensors_pulled() - pulled0;
  const double cluster_ms = median_step_ms(steps, repeats, cluster_step);

  const double overhead = cluster_ms - local_ms;
  std::printf("MLP 784-256-10 training step, batch 100 (median of %d x %d steps)\n", repeats, steps);
  std::printf("  one process:          %8.3f ms/step\n", local_ms);
  std::printf("  1 ps + 1 worker gRPC: %8.3f ms/step\n", cluster_ms);
  std::printf("  overhead:             %8.3f ms/step (%.2fx), %lld tensors moved between tasks per step,"
              " %.3f ms per tensor moved\n",
              overhead, cluster_ms / local_ms, static_cast<long long>(per_step),
              per_step > 0 ? overhead / static_cast<double>(per_step) : 0.0);
  return 0;
}
