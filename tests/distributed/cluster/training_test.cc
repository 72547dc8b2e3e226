// Between-graph replicated training: 1 ps and 2 workers as tapeflow_server processes on
// 127.0.0.1; two clients (threads here, each with its own Graph and Session, as two worker
// programs would be) train tutorial 03's 784-256-10 MLP asynchronously with the variables on the
// ps (replica_device_setter). The cluster's test accuracy must be within 0.01 of the same model
// trained in one process on the same batches for the same number of steps. Both end with a
// phase at a tenth of the rate: asynchronous updates make the last steps' weights differ, and
// at the full rate the test accuracy of either moves by 0.01-0.02 from one step to the next
// (one run in five ended 0.02 apart under load), so the comparison would be of that noise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "tapeflow.h"
#include "tests/distributed/cluster/cluster_process.h"
#include "tests/support/test_util.h"

namespace tapeflow::cluster {
namespace {

constexpr int kSteps = 400;  // in all: one process does 400, each of 2 workers 200
constexpr int kFineFrom = 300;  // steps from here on use train_fine
constexpr int kBatch = 100;

struct Mlp {
  Graph g;
  Tensor x, labels, accuracy;
  Operation train, train_fine, init;
  // worker < 0: no device requests (one process); else variables on /job:ps, the rest on
  // /job:worker/task:<worker>.
  explicit Mlp(int worker) {
    auto scope = g.as_default();
    auto placement = device(replica_device_setter(worker < 0 ? 0 : 1, "/job:ps",
                                                  worker < 0 ? "" : absl::StrCat("/job:worker/task:", worker)));
    // Fixed batch shapes: graph gradients need known dims (graph/gradients.h, Limitation).
    x = placeholder(DType::kFloat32, {kBatch, 784}, "x");
    labels = placeholder(DType::kInt64, {kBatch}, "labels");
    Variable w1(random_normal({784, 256}, 0, 0.05, DType::kFloat32, 11), "w1");
    Variable b1(zeros({256}), "b1");
    Variable w2(random_normal({256, 10}, 0, 0.05, DType::kFloat32, 12), "w2");
    Variable b2(zeros({10}), "b2");
    Tensor logits = matmul(relu(matmul(x, w1) + b1), w2) + b2;
    Tensor loss = neg(reduce_mean(reduce_sum(one_hot(labels, 10) * log_softmax(logits), {1})));
    train = nn::SGD(0.1).minimize(loss);
    train_fine = nn::SGD(0.01).minimize(loss);
    accuracy = reduce_mean(cast(equal(argmax(logits, 1), labels), DType::kFloat64));
    init = g.global_variables_initializer();
  }
};

struct Data {
  Tensor train_x, train_y, test_x, test_y;
  Data() {
    MnistSplit train = load_mnist(default_fashion_mnist_dir(), "train");
    MnistSplit test = load_mnist(default_fashion_mnist_dir(), "t10k");
    const int64_t n = int64_t{kSteps} * kBatch;
    train_x = cast(reshape(slice(train.images, {0, 0, 0}, {n, 28, 28}), {n, 784}), DType::kFloat32) / 255.f;
    train_y = cast(slice(train.labels, {0}, {n}), DType::kInt64);
    test_x = cast(reshape(test.images, {-1, 784}), DType::kFloat32) / 255.f;
    test_y = cast(test.labels, DType::kInt64);
  }
  FeedList batch(const Mlp& m, int step) const {
    return {{m.x, slice(train_x, {int64_t{step} * kBatch, 0}, {kBatch, 784})},
            {m.labels, slice(train_y, {int64_t{step} * kBatch}, {kBatch})}};
  }
  // Test accuracy over the 10000 test images, kBatch at a time.
  double accuracy(Session& sess, const Mlp& m) const {
    double sum = 0;
    const int batches = 10000 / kBatch;
    for (int b = 0; b < batches; ++b)
      sum += sess.run(m.accuracy, {{m.x, slice(test_x, {int64_t{b} * kBatch, 0}, {kBatch, 784})},
                                   {m.labels, slice(test_y, {int64_t{b} * kBatch}, {kBatch})}})
                 .item<double>();
    return sum / batches;
  }
};

TEST(TrainingTest, SlowBetweenGraphReplicasReachTheSingleProcessAccuracy) {
  if (!std::filesystem::exists(default_fashion_mnist_dir() + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)";
  const Data data;
  // One process.
  double single = 0;
  {
    Mlp m(-1);
    Session sess(m.g);
    sess.run(std::vector<Fetch>{}, {}, {m.init});
    for (int s = 0; s < kSteps; ++s)
      sess.run(std::vector<Fetch>{}, data.batch(m, s), {s < kFineFrom ? m.train : m.train_fine});
    single = data.accuracy(sess, m);
  }
  // The cluster: worker i runs steps i, i + 2, ... concurrently with the other.
  testing::ProcessCluster cluster({{"ps", 1}, {"worker", 2}});
  Mlp m0(0), m1(1);
  Session s0(cluster.target("worker", 0), m0.g);
  Session s1(cluster.target("worker", 1), m1.g);
  s0.run(std::vector<Fetch>{}, {}, {m0.init});  // the chief initialises the ps's variables
  RunOptions options;
  options.timeout_in_ms = 60000;
  std::exception_ptr failed[2];
  auto work = [&](Session& sess, const Mlp& m, int worker) {
    try {
      for (int s = worker; s < kSteps; s += 2)
        sess.run({}, data.batch(m, s), {s < kFineFrom ? m.train : m.train_fine}, &options, nullptr);
    } catch (...) {
      failed[worker] = std::current_exception();
    }
  };
  std::thread t0(work, std::ref(s0), std::cref(m0), 0), t1(work, std::ref(s1), std::cref(m1), 1);
  t0.join();
  t1.join();
  for (auto& f : failed)
    if (f) std::rethrow_exception(f);
  const double distributed = data.accuracy(s1, m1);
  std::cerr << "test accuracy after " << kSteps << " steps: one process " << single << ", 1 ps + 2 workers "
            << distributed << "\n";
  EXPECT_GT(single, 0.7);
  EXPECT_NEAR(distributed, single, 0.01);
}

}  // namespace
}  // namespace tapeflow::cluster
