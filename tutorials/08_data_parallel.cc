// Tutorial 08: data-parallel training with MPI. Tutorial 04's convolutional network trained by
// several processes at once: each takes its share of every batch of 64, computes the gradients
// of its share, and all_reduce averages them, so every process applies the same update and the
// weights stay identical, as if one process had trained on the whole batch.
//
//   mpirun -np 2 ./build/tutorials/08_data_parallel                 # full training (6 epochs)
//   mpirun -np 2 ./build/tutorials/08_data_parallel --max-steps 20  # a smoke run (the test suite's)
//   ... --seed 7 --quick --epochs N --threads N                     # as tutorial 04, plus threads
//
// As root, Open MPI wants `mpirun --allow-run-as-root`; `--oversubscribe` lets it start more
// ranks than it counts free cores.
//
// The three steps data parallelism adds to tutorial 04's loop, marked [1], [2] and [3] below:
//   [1] broadcast rank 0's initial variables, so every process starts from the same weights;
//   [2] each rank's slice of the batch;
//   [3] all_reduce(gradient, kMean) before the optimizer's step.
// It ends by checking that every rank holds the same weights (the largest difference of any
// variable from rank 0's) and with the test accuracy, computed by the ranks together.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "absl/strings/str_format.h"
#include "devices/cpu/thread_pool.h"
#include "distributed/mpi/collective.h"
#include "tapeflow.h"

using namespace tapeflow;

namespace {

std::vector<Tensor> preprocess(std::vector<Tensor> batch) {
  const int64_t n = batch[0].shape().dim(0);
  return {reshape(cast(batch[0], DType::kFloat32) / 255.f, {n, 28, 28, 1}), cast(batch[1], DType::kInt32)};
}

// Tutorial 04's learning rate, to keep the two comparable (change both together): Adam's 1e-3
// decayed along half a cosine to 0 by the last step.
nn::LearningRate learning_rate(int64_t total_steps) { return nn::CosineDecay(1e-3, total_steps); }

// Rows [begin, end) of a batch of n rows that rank `rank` of `size` takes: contiguous shares
// whose sizes differ by at most one.
std::pair<int64_t, int64_t> share(int64_t n, int rank, int size) { return {n * rank / size, n * (rank + 1) / size}; }

void progress(int epoch, int64_t step, int64_t steps, double loss, double acc, double examples_per_s,
              double seconds_left) {
  const int width = 30;
  const int done = static_cast<int>(width * step / std::max<int64_t>(steps, 1));
  std::cout << absl::StrFormat("\repoch %d [%s%s] %lld/%lld loss %.4f acc %.4f %.0f ex/s %4.0fs left", epoch,
                               std::string(done, '='), std::string(width - done, ' '), step, steps, loss, acc,
                               examples_per_s, seconds_left)
            << std::flush;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::Context mpi_context(&argc, &argv);
  const int rank = mpi::rank(), size = mpi::size();
  int epochs = 6;
  int64_t max_steps = -1;
  int64_t seed = 2024;
  // Each rank's intra-op threads: by default the cores shared out among the ranks (they are
  // assumed to run on one machine; pass --threads on a cluster).
  int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / size);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) epochs = 1;
    if (std::strcmp(argv[i], "--epochs") == 0 && i + 1 < argc) epochs = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--max-steps") == 0 && i + 1 < argc) max_steps = std::atoll(argv[++i]);
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = std::atoll(argv[++i]);
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
  }
  set_intra_op_threads(threads);
  // The same seed everywhere for the initial weights (rank 0's win anyway) and the shuffle
  // (every rank must see the batches in the same order, so the shares of a batch are disjoint).
  set_seed(seed);
  const std::string dir = default_fashion_mnist_dir();
  MnistSplit train = load_mnist(dir, "train");
  MnistSplit test = load_mnist(dir, "t10k");

  nn::Sequential model({nn::Conv2D(32, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(),
                        nn::Conv2D(64, {5, 5}, nn::Activation::kRelu), nn::MaxPool2D(), nn::Flatten(),
                        nn::Dense(1024, nn::Activation::kRelu), nn::Dropout(0.4), nn::Dense(10)});
  // [1] Create the variables (a call builds the layers) and start every rank from rank 0's.
  model.set_training(false);
  model(zeros({1, 28, 28, 1}));
  std::vector<Variable> vars = model.trainable_variables();
  mpi::broadcast_variables(vars, /*root=*/0);

  const int64_t batch_size = 64;  // the global batch: the ranks share it
  Dataset ds = Dataset::from_tensor_slices({train.images, train.labels})
                   .shuffle(60000, seed)
                   .batch(batch_size)
                   .map(preprocess);
  // The shuffle's seeds are fixed above. Dropout, from here on, draws from a seed of its own on
  // each rank: with one seed, rows i and i + 32 of a batch (one on each rank) would get the same
  // mask, where one process draws independent masks for all 64 rows.
  set_seed(seed + 1000003 * rank);
  const int64_t steps_per_epoch = (60000 + batch_size - 1) / batch_size;
  const int64_t total_steps = max_steps > 0 ? std::min<int64_t>(max_steps, steps_per_epoch * epochs)
                                            : steps_per_epoch * epochs;
  nn::Adam optimizer(learning_rate(total_steps));
  if (rank == 0)
    std::cout << absl::StrFormat("%d ranks, %d intra-op threads each, %lld examples per rank per step\n", size,
                                 threads, batch_size / size);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int64_t step = 0;
  for (int epoch = 1; epoch <= epochs && step < total_steps; ++epoch) {
    double loss_sum = 0, acc_sum = 0;
    int64_t epoch_steps = 0;
    model.set_training(true);
    for (const std::vector<Tensor>& batch : ds) {
      if (step >= total_steps) break;
      // [2] This rank's rows of the batch. Every rank must see the same batch: checked on the
      // first step of each epoch (a differently seeded shuffle would break it).
      const int64_t n = batch[0].shape().dim(0);
      if (epoch_steps == 0 && reduce_max(abs(mpi::broadcast(batch[1], 0) - batch[1])).item<int32_t>() != 0)
        throw InternalError("[08_data_parallel] the ranks see different batches");
      const auto [begin, end] = share(n, rank, size);
      Tensor images = slice(batch[0], {begin, 0, 0, 0}, {end - begin, 28, 28, 1});
      Tensor labels = slice(batch[1], {begin}, {end - begin});
      GradientTape tape;
      Tensor logits = model(images);
      // The share's summed loss over n / size: the mean of the ranks' gradients is then exactly the
      // gradient of the whole batch's mean loss, even when n does not divide evenly.
      Tensor loss = reduce_sum(sparse_softmax_cross_entropy_with_logits(labels, logits)) *
                    static_cast<float>(size / static_cast<double>(n));
      std::vector<Tensor> grads = tape.gradient(loss, vars);
      // [3] Average the gradients over the ranks: every rank gets the same, so applies the same step.
      for (Tensor& g : grads) g = all_reduce(g, ReduceOp::kMean);
      optimizer.apply_gradients(grads, vars);
      // The whole batch's loss and accuracy, for the progress bar.
      Tensor correct = reduce_sum(cast(equal(argmax(logits, 1), cast(labels, DType::kInt64)), DType::kFloat32));
      const std::vector<float> totals = all_reduce(stack({loss, correct}), ReduceOp::kSum).to_vector<float>();
      loss_sum += totals[0] / size;
      acc_sum += totals[1] / static_cast<double>(n);
      ++epoch_steps;
      ++step;
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (rank == 0 && (epoch_steps % 10 == 0 || step == total_steps))
        progress(epoch, epoch_steps, std::min(steps_per_epoch, total_steps), loss_sum / epoch_steps,
                 acc_sum / epoch_steps, step * batch_size / elapsed, elapsed / step * (total_steps - step));
    }
    if (rank == 0) std::cout << "\n";
  }
  const double train_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  // Every rank must hold the same weights: the largest difference from rank 0's, over every
  // variable, and a checksum each rank prints.
  double max_difference = 0, checksum = 0;
  for (const Variable& v : vars) {
    Tensor mine = v.read();
    Tensor diff = reduce_max(abs(mine - mpi::broadcast(mine, 0)));
    max_difference = std::max(max_difference, static_cast<double>(all_reduce(diff, ReduceOp::kMax).item<float>()));
    checksum += reduce_sum(cast(mine, DType::kFloat64)).item<double>();
  }
  for (int r = 0; r < size; ++r) {  // one line per rank, in rank order
    if (r == rank) std::cout << absl::StrFormat("rank %d: weight checksum %.17g\n", rank, checksum) << std::flush;
    mpi::barrier();
  }
  if (rank == 0)
    std::cout << absl::StrFormat("largest difference of any weight from rank 0's: %g (%s on %d ranks)\n",
                                 max_difference, max_difference == 0 ? "identical weights" : "WEIGHTS DIFFER", size);

  // Evaluate on the 10,000 test images, each rank its share of every batch (dropout off); the
  // confusion matrices add up across ranks.
  model.set_training(false);
  std::vector<int64_t> confusion(100, 0);
  for (const std::vector<Tensor>& batch :
       Dataset::from_tensor_slices({test.images, test.labels}).batch(500).map(preprocess)) {
    const auto [begin, end] = share(batch[0].shape().dim(0), rank, size);
    const std::vector<int64_t> predicted =
        argmax(model(slice(batch[0], {begin, 0, 0, 0}, {end - begin, 28, 28, 1})), 1).to_vector<int64_t>();
    const std::vector<int32_t> truth = slice(batch[1], {begin}, {end - begin}).to_vector<int32_t>();
    for (size_t i = 0; i < truth.size(); ++i) ++confusion[truth[i] * 10 + static_cast<size_t>(predicted[i])];
  }
  confusion = all_reduce(Tensor(confusion, Shape{10, 10})).to_vector<int64_t>();
  if (rank != 0) return max_difference == 0 ? 0 : 1;
  int64_t correct = 0, seen = 0;
  std::cout << "confusion matrix (rows: true class, columns: predicted)\n";
  std::cout << absl::StrFormat("%12s", "");
  for (int c = 0; c < 10; ++c) std::cout << absl::StrFormat("%6d", c);
  std::cout << "\n";
  for (int r = 0; r < 10; ++r) {
    std::cout << absl::StrFormat("%d %-10.10s", r, kFashionMnistClassNames[r]);
    for (int c = 0; c < 10; ++c) std::cout << absl::StrFormat("%6lld", confusion[r * 10 + c]);
    std::cout << "\n";
    for (int c = 0; c < 10; ++c) {
      seen += confusion[r * 10 + c];
      correct += r == c ? confusion[r * 10 + c] : 0;
    }
  }
  std::cout << absl::StrFormat("trained %lld steps in %.0f s on %d ranks\n", step, train_seconds, size);
  std::cout << absl::StrFormat("test accuracy: %.4f (%lld of %lld)\n", double(correct) / seen, correct, seen);
  return max_difference == 0 ? 0 : 1;
}
