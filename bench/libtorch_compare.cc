// tapeflow beside libtorch, in one process, on the tape benchmarks' workloads (bench_models.h):
//   - the eager add of two 1-element float32 tensors (ns per op, output allocation included);
//   - a chain of 100 scalar ops, forward and backward (us);
//   - one SGD training step of the 784-256-10 MLP, batch 64 (us);
//   - one Adam training step of tutorial 04's CNN, batch 64 (ms);
// and the peak resident memory of a process that trains the MLP for 200 steps, per framework.
// Built only when CMake finds Torch (Debian: apt-get install libtorch-dev); nothing else needs it.
//
//   ./build/bench/libtorch_compare [--rounds=7] [--seconds=0.25] [--rss-steps=200] [--omp-default]
//                                  [--tapeflow-blas-threads=N]   (default 1, tapeflow's: products split over its pool)
//                                  [--torch-threads=N]   libtorch's intra-op threads (default: OMP_NUM_THREADS
//                                                        if set, else tapeflow's count)
//                                  [--torch-blas-threads=N]  OpenBLAS's threads in libtorch's rounds (default:
//                                                        libtorch's intra-op threads)
// bench/libtorch_compare.sh runs it in the configurations a libtorch user would tune to and
// compares tapeflow with the best of them (Note [Best libtorch]).
//
// Note [Checks fail the run]: before any timing the program computes the same chain gradient and
// the same 20 MLP steps in both frameworks; if they disagree (relative difference above 1e-4) it
// prints MISMATCH and exits 1 without timing anything: a speed ratio of different math is no ratio.
//
// Note [Interleaving]: each workload runs tapeflow and libtorch alternately, in rounds of about
// --seconds each (the first framework alternates round to round), after a warm-up; a round's
// time is its mean per call, and the table shows the median and the fastest round. Machine noise
// (other processes, clock changes) so lands on both frameworks alike. Both use the same number
// of intra-op threads: tapeflow's default (hardware threads), given to torch::set_num_threads.
// Thread pools that spin a while after work (libtorch's OpenMP, OpenBLAS, Eigen's pool) can
// still slow the first calls of the next framework's round; rounds are long so that is small.
//
// Note [OpenMP spinning]: Debian's libtorch runs its intra-op work on libgomp (OpenMP) and its
// matrix products on the system BLAS, OpenBLAS with its own pthreads. With libgomp's default
// wait policy its idle workers spin (without yielding) for a while after each parallel region,
// and OpenBLAS's workers then wait for a core: on the 2-core dev machine libtorch's MLP step took
// 3-30 ms instead of ~0.8 ms. That is an artifact of the packaging (PyTorch's own builds pair
// OpenMP with MKL), so unless OMP_WAIT_POLICY is set, the program runs itself again with
// OMP_WAIT_POLICY=PASSIVE (libgomp reads it when it loads, before main). --omp-default keeps
// libgomp's default. tapeflow does not use OpenMP.
//
// Note [Same math]: the libtorch code is the idiomatic translation of bench_models.h: the chain
// on a 0-dim float tensor with autograd::grad; the MLP with mm + bias, relu, log_softmax and
// -mean(sum(labels * logp)), backward(), then p -= lr * grad under NoGradGuard and the gradients
// zeroed (what torch::optim::SGD does); the CNN with torch::nn modules and Adam (epsilon 1e-7 as
// Keras and tapeflow). The MLP starts from tapeflow's own weights and data, so both losses after
// a few steps are printed and must agree. The CNN's weights differ (each framework's
// initializers) and its layout too: torch is NCHW, tapeflow NHWC.
//
// Note [Peak RSS]: with --rss-child=tapeflow|libtorch|idle the program only trains that
// framework's MLP (idle: nothing) and exits; the main run spawns itself once per mode, before it
// does any work of its own, and reads ru_maxrss from wait4. Every child loads both libraries (the
// program links both), so "idle" is shown and subtracted. Linux carries the parent's peak into
// a child across exec (fork and posix_spawn alike), so the children run before the parent grows;
// each child also reports its own VmHWM (/proc/self/status), which must agree. Children end with
// _exit: running the libraries' static destructors touched ~8 MiB more (in every mode alike),
// which is teardown, not training.
#include <link.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_models.h"
#include "devices/cpu/blas.h"
#include "devices/cpu/thread_pool.h"

extern char** environ;

namespace tf = tapeflow;
namespace bench = tapeflow_bench;

namespace {

// ---- libtorch versions of bench_models.h (Note [Same math]) ----

torch::Tensor torch_chain100(const torch::Tensor& x) {
  torch::Tensor y = x;
  for (int i = 0; i < 50; ++i) {  // 2 ops per iteration: 100 ops
    y = y * 0.999f;
    y = y + 0.001f;
  }
  return torch::autograd::grad({y}, {x})[0];
}

torch::Tensor to_torch(const tf::Tensor& t) {
  std::vector<float> values = t.to_vector<float>();
  const std::vector<int64_t> dims = t.shape().as_vector();
  return torch::from_blob(values.data(), dims, torch::kFloat32).clone();
}

struct TorchMlp {
  // The same starting point as a tapeflow Mlp: its weights, inputs and labels.
  explicit TorchMlp(const bench::Mlp& m)
      : w1(to_torch(m.w1.read())), b1(to_torch(m.b1.read())), w2(to_torch(m.w2.read())),
        b2(to_torch(m.b2.read())), x(to_torch(m.x)), labels(to_torch(m.labels)) {
    for (torch::Tensor* p : params()) p->set_requires_grad(true);
  }
  // libtorch's own random start, for the RSS child (which must not touch tapeflow).
  TorchMlp(int64_t batch, int64_t in, int64_t hidden, int64_t classes)
      : w1(torch::randn({in, hidden}) * 0.05f), b1(torch::zeros({hidden})), w2(torch::randn({hidden, classes}) * 0.05f),
        b2(torch::zeros({classes})), x(torch::rand({batch, in})),
        labels(torch::one_hot(torch::randint(0, classes, {batch}), classes).to(torch::kFloat32)) {
    for (torch::Tensor* p : params()) p->set_requires_grad(true);
  }
  torch::Tensor w1, b1, w2, b2, x, labels;

  std::vector<torch::Tensor*> params() { return {&w1, &b1, &w2, &b2}; }
  torch::Tensor loss() const {
    torch::Tensor h = torch::relu(torch::mm(x, w1) + b1);
    torch::Tensor logits = torch::mm(h, w2) + b2;
    return torch::neg(torch::mean(torch::sum(labels * torch::log_softmax(logits, 1), 1)));
  }
  void step() {
    loss().backward();
    torch::NoGradGuard no_grad;
    for (torch::Tensor* p : params()) {
      p->add_(p->grad(), -0.01);  // p -= 0.01 * grad, fused as torch::optim::SGD does
      p->mutable_grad().zero_();
    }
  }
};

// Tutorial 04's network in NCHW: conv 32 5x5 (padding 2 = tapeflow's SAME), relu, max pool 2,
// conv 64 5x5, relu, max pool 2, flatten, linear 1024 relu, dropout 0.4, linear 10.
struct TorchCnnNet : torch::nn::Module {
  TorchCnnNet()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 5).padding(2)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 5).padding(2)))),
        fc1(register_module("fc1", torch::nn::Linear(7 * 7 * 64, 1024))),
        fc2(register_module("fc2", torch::nn::Linear(1024, 10))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = torch::relu(fc1->forward(x.flatten(1)));
    x = torch::dropout(x, 0.4, is_training());
    return fc2->forward(x);
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc1, fc2;
};

struct TorchCnn {
  explicit TorchCnn(int64_t batch = 64)
      : net(std::make_shared<TorchCnnNet>()),
        optimizer(net->parameters(), torch::optim::AdamOptions(1e-3).eps(1e-7)),
        images(torch::rand({batch, 1, 28, 28})),  // NCHW (tapeflow: NHWC)
        labels(torch::randint(0, 10, {batch}, torch::kInt64)) {
    net->train();
  }
  std::shared_ptr<TorchCnnNet> net;
  torch::optim::Adam optimizer;
  torch::Tensor images, labels;

  void step() {
    optimizer.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(images), labels).backward();
    optimizer.step();
  }
};

// ---- timing (Note [Interleaving]) ----

using Clock = std::chrono::steady_clock;

double seconds_per_call(const std::function<void()>& fn, int64_t calls) {
  const auto start = Clock::now();
  for (int64_t i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double>(Clock::now() - start).count() / static_cast<double>(calls);
}

struct Timing {
  double median = 0, min = 0;
};

Timing summarize(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const size_t n = t.size();
  return Timing{n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]), t.front()};
}

// Note [Paired ratio]: the machine's speed drifts by up to 2x for seconds at a time, which can
// fall on one framework's rounds more than the other's and move the ratio of medians. Each round
// times both frameworks back to back, so the median over rounds of the two times' ratio compares
// them at the same machine speed: the figure to quote.
struct Comparison {
  Timing tapeflow, libtorch;
  double paired_ratio = 0;  // median over rounds of tapeflow's time / libtorch's (Note [Paired ratio])
};

// Note [Shared OpenBLAS]: both frameworks call the one OpenBLAS in this process. libtorch relies
// on OpenBLAS's threads; tapeflow keeps OpenBLAS single-threaded and splits its products over
// its own pool (Note [BLAS threads], devices/cpu/blas.h) unless --tapeflow-blas-threads=N > 1.
// OpenBLAS gets libtorch's thread count (--torch-blas-threads) around each libtorch round, and
// tapeflow's after it.
int tapeflow_blas_threads = 0;  // --tapeflow-blas-threads: OpenBLAS's threads in tapeflow's rounds
int torch_blas_threads = 0;     // --torch-blas-threads: OpenBLAS's threads in libtorch's rounds
struct TorchBlasThreads {
  TorchBlasThreads() { tf::cpu::set_blas_threads(torch_blas_threads); }
  ~TorchBlasThreads() { tf::cpu::set_blas_threads(tapeflow_blas_threads); }
};

Comparison interleave(const std::function<void()>& tapeflow, const std::function<void()>& libtorch, int warmup,
                      int rounds, double round_s, int64_t min_calls = 1) {
  const std::function<void()>* fns[2] = {&tapeflow, &libtorch};
  int64_t calls[2];
  for (int f = 0; f < 2; ++f) {
    std::optional<TorchBlasThreads> blas;
    if (f == 1) blas.emplace();
    for (int i = 0; i < warmup; ++i) (*fns[f])();
    const double t = seconds_per_call(*fns[f], 1);
    calls[f] = std::clamp<int64_t>(static_cast<int64_t>(round_s / t), min_calls, 1000000);
  }
  std::vector<double> times[2];
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 2; ++k) {
      const int f = (r + k) % 2;  // the first framework alternates
      std::optional<TorchBlasThreads> blas;
      if (f == 1) blas.emplace();
      times[f].push_back(seconds_per_call(*fns[f], calls[f]));
    }
  }
  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) ratios.push_back(times[0][r] / times[1][r]);
  return Comparison{summarize(times[0]), summarize(times[1]), summarize(ratios).median};
}

// ---- peak RSS (Note [Peak RSS]) ----

int64_t vm_hwm_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoll(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

int rss_child(const std::string& mode, int steps) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));  // tapeflow's default
  if (mode == "tapeflow") {
    bench::Mlp m(64, 784, 256, 10);
    for (int i = 0; i < steps; ++i) m.step();
  } else if (mode == "libtorch") {
    torch::set_num_threads(threads);
    tf::cpu::set_blas_threads(threads);  // Note [Shared OpenBLAS]
    TorchMlp m(64, 784, 256, 10);
    for (int i = 0; i < steps; ++i) m.step();
  } else if (mode != "idle") {
    std::fprintf(stderr, "unknown --rss-child mode '%s' (tapeflow, libtorch or idle)\n", mode.c_str());
    return 2;
  }
  std::printf("%lld\n", static_cast<long long>(vm_hwm_kib()));
  std::fflush(stdout);
  _exit(0);  // skips the libraries' static destructors, which touch ~8 MiB more (Note [Peak RSS])
}

struct PeakRss {
  double maxrss_mib = -1, vmhwm_mib = -1;
};

// Runs this program with --rss-child=mode; ru_maxrss from wait4, VmHWM from the child's stdout.
PeakRss spawn_rss_child(const std::string& mode, int steps) {
  int out[2];
  if (pipe(out) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addclose(&actions, out[1]);
  std::string arg_mode = "--rss-child=" + mode, arg_steps = "--rss-steps=" + std::to_string(steps);
  char name[] = "libtorch_compare";
  char* argv[] = {name, arg_mode.data(), arg_steps.data(), nullptr};
  pid_t pid = 0;
  const int err = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (err != 0) {
    close(out[0]);
    std::fprintf(stderr, "posix_spawn: %s\n", std::strerror(err));
    return {};
  }
  std::string text;
  char buf[256];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "--rss-child=%s failed\n", mode.c_str());
    return {};
  }
  return PeakRss{static_cast<double>(usage.ru_maxrss) / 1024.0, std::strtod(text.c_str(), nullptr) / 1024.0};
}

// ---- the report ----

// The loaded libraries that decide the speed of both: BLAS, OpenMP, oneDNN (resolved paths).
std::string loaded_compute_libraries() {
  std::string out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string path = info->dlpi_name ? info->dlpi_name : "";
        const std::string base = path.substr(path.find_last_of('/') + 1);
        for (const char* key : {"blas", "lapack", "gomp", "dnnl", "mkl", "tapeflow"}) {
          if (base.find(key) == std::string::npos) continue;
          char* real = realpath(path.c_str(), nullptr);
          auto& s = *static_cast<std::string*>(data);
          s += "  " + base + (real && path != real ? std::string(" -> ") + real : std::string()) + "\n";
          std::free(real);
          break;
        }
        return 0;
      },
      &out);
  return out;
}

// Each row is printed twice: for people, and as one "row," line that bench/libtorch_compare.sh
// reads (workload key, unit, tapeflow median, libtorch median, paired ratio).
void print_row(const char* key, const char* name, const char* unit, double scale, const Comparison& c) {
  std::printf("%-34s %-3s %9.1f %9.1f   %9.1f %9.1f   %6.2f %6.2f\n", name, unit, c.tapeflow.median * scale,
              c.tapeflow.min * scale, c.libtorch.median * scale, c.libtorch.min * scale,
              c.tapeflow.median / c.libtorch.median, c.paired_ratio);
  std::printf("row,%s,%s,%.4g,%.4g,%.4f\n", key, unit, c.tapeflow.median * scale, c.libtorch.median * scale,
              c.paired_ratio);
}

// Note [Checks fail the run]. Prints the check and returns whether the two agree.
bool agree(const char* what, double tapeflow, double libtorch, double reference_note = NAN) {
  const double rel = std::fabs(tapeflow - libtorch) / std::max(1e-12, std::max(std::fabs(tapeflow), std::fabs(libtorch)));
  const bool ok = rel <= 1e-4;
  std::printf("check: %-26s tapeflow %.6f  libtorch %.6f  relative difference %.1e  %s", what, tapeflow, libtorch, rel,
              ok ? "ok" : "MISMATCH");
  if (!std::isnan(reference_note)) std::printf("  (expected %.6f)", reference_note);
  std::printf("\n");
  return ok;
}

double flag_value(int argc, char** argv, const char* name, double fallback) {
  const size_t len = std::strlen(name);
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], name, len) == 0 && argv[i][len] == '=') return std::strtod(argv[i] + len + 1, nullptr);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int rss_steps = static_cast<int>(flag_value(argc, argv, "--rss-steps", 200));
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rss-child=", 12) == 0) return rss_child(argv[i] + 12, rss_steps);
  }
  bool omp_default = false;
  for (int i = 1; i < argc; ++i) omp_default |= std::strcmp(argv[i], "--omp-default") == 0;
  if (!omp_default && std::getenv("OMP_WAIT_POLICY") == nullptr) {  // Note [OpenMP spinning]
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr, "could not run again with OMP_WAIT_POLICY=PASSIVE: %s\n", std::strerror(errno));
  }
  const char* omp_policy = std::getenv("OMP_WAIT_POLICY");
  const int rounds = std::max(1, static_cast<int>(flag_value(argc, argv, "--rounds", 7)));
  const double round_s = flag_value(argc, argv, "--seconds", 0.25);

  // Children first, while this process is still small (Note [Peak RSS]).
  const PeakRss idle = spawn_rss_child("idle", rss_steps);
  const PeakRss tapeflow_rss = spawn_rss_child("tapeflow", rss_steps);
  const PeakRss libtorch_rss = spawn_rss_child("libtorch", rss_steps);

  const int threads = tf::intra_op_threads();
  tapeflow_blas_threads = static_cast<int>(flag_value(argc, argv, "--tapeflow-blas-threads", 1));
  const char* omp_threads = std::getenv("OMP_NUM_THREADS");
  const int torch_threads = std::max(1, static_cast<int>(flag_value(
                                            argc, argv, "--torch-threads", omp_threads ? std::atoi(omp_threads) : threads)));
  torch_blas_threads = std::max(1, static_cast<int>(flag_value(argc, argv, "--torch-blas-threads", torch_threads)));
  torch::set_num_threads(torch_threads);
  std::printf("tapeflow vs libtorch %s (CPU), same process, %d interleaved rounds of ~%.2f s each\n", TORCH_VERSION,
              rounds, round_s);
  std::printf("threads: hardware %u; tapeflow intra-op %d (OpenBLAS %d); "
              "libtorch intra-op %d, inter-op %d, OpenBLAS %d (Note [Shared OpenBLAS])\n",
              std::thread::hardware_concurrency(), threads, tapeflow_blas_threads, torch::get_num_threads(),
              torch::get_num_interop_threads(), torch_blas_threads);
  std::printf("libtorch's OpenMP: OMP_WAIT_POLICY=%s%s\n", omp_policy ? omp_policy : "(unset: libgomp's default)",
              omp_policy && !omp_default && std::strcmp(omp_policy, "PASSIVE") == 0 ? " (Note [OpenMP spinning])" : "");
  std::printf("OpenBLAS kernels: %s (OPENBLAS_CORETYPE=%s)\n", tf::cpu::blas_core_name(),
              std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset");
  std::printf("compute libraries loaded:\n%s", loaded_compute_libraries().c_str());

  // Same math: the chain's gradient, and the MLP's loss from the same start (Note [Same math]).
  const tf::Tensor tf_x = 0.5f;
  const torch::Tensor torch_x = torch::scalar_tensor(0.5, torch::dtype(torch::kFloat32).requires_grad(true));
  std::printf("\n");
  bool same_math = agree("chain dy/dx", bench::chain100(tf_x).item<float>(), torch_chain100(torch_x).item<float>(),
                         std::pow(0.999, 50));
  {
    bench::Mlp m(64, 784, 256, 10);
    TorchMlp t(m);
    same_math &= agree("MLP loss at the start", m.loss().item<float>(), t.loss().item<float>());
    for (int i = 0; i < 20; ++i) {
      m.step();
      t.step();
    }
    same_math &= agree("MLP loss after 20 steps", m.loss().item<float>(), t.loss().item<float>());
  }
  if (!same_math) {  // Note [Checks fail the run]
    std::printf("MISMATCH: the two frameworks do not compute the same thing; no timing is meaningful\n");
    return 1;
  }

  tf::cpu::set_blas_threads(tapeflow_blas_threads);  // after tapeflow's first op set it to 1
  std::printf("\n%-34s %-3s %19s   %19s   %13s\n", "", "", "tapeflow", "libtorch", "ratio tf/lt");
  std::printf("%-34s %-3s %9s %9s   %9s %9s   %6s %6s\n", "workload", "", "median", "min", "median", "min",
              "medians", "paired");
  {
    const tf::Tensor a = 1.f, b = 2.f;
    const torch::Tensor ta = torch::ones({1}), tb = torch::ones({1});
    const Comparison c = interleave([&] { for (int i = 0; i < 100; ++i) tf::add(a, b); },
                                    [&] { for (int i = 0; i < 100; ++i) torch::add(ta, tb); }, 200, rounds, round_s);
    print_row("add", "eager add, 1-element float32", "ns", 1e9 / 100, c);
  }
  {
    const Comparison c = interleave([&] { bench::chain100(tf_x); }, [&] { torch_chain100(torch_x); }, 200, rounds,
                                    round_s);
    print_row("chain", "chain of 100 scalar ops, fwd+bwd", "us", 1e6, c);
  }
  {
    bench::Mlp m(64, 784, 256, 10);
    TorchMlp t(m);
    const Comparison c = interleave([&] { m.step(); }, [&] { t.step(); }, 20, rounds, round_s);
    print_row("mlp", "MLP train step (64, 784-256-10)", "us", 1e6, c);
  }
  {
    bench::Cnn cnn(64);
    TorchCnn t(64);
    const Comparison c = interleave([&] { cnn.step(); }, [&] { t.step(); }, 2, rounds, round_s, 3);
    print_row("cnn", "CNN train step (tutorial 04, 64)", "ms", 1e3, c);
  }

  std::printf("\npeak resident memory of a process training the MLP (%d steps), MiB\n", rss_steps);
  std::printf("%-34s %9s %9s   %9s\n", "", "ru_maxrss", "over idle", "VmHWM");
  auto rss_row = [&](const char* name, const PeakRss& r) {
    std::printf("%-34s %9.1f %9.1f   %9.1f\n", name, r.maxrss_mib, r.maxrss_mib - idle.maxrss_mib, r.vmhwm_mib);
  };
  rss_row("idle (both libraries loaded)", idle);
  rss_row("tapeflow", tapeflow_rss);
  rss_row("libtorch", libtorch_rss);
  std::printf("%-34s %9.2f %9.2f\n", "ratio tapeflow/libtorch", tapeflow_rss.maxrss_mib / libtorch_rss.maxrss_mib,
              (tapeflow_rss.maxrss_mib - idle.maxrss_mib) / (libtorch_rss.maxrss_mib - idle.maxrss_mib));
  std::printf("row,rss_growth,MiB,%.4g,%.4g,%.4f\n", tapeflow_rss.maxrss_mib - idle.maxrss_mib,
              libtorch_rss.maxrss_mib - idle.maxrss_mib,
              (tapeflow_rss.maxrss_mib - idle.maxrss_mib) / (libtorch_rss.maxrss_mib - idle.maxrss_mib));
  // The two measures of each child's peak must agree (Note [Peak RSS]); a failed child is -1.
  for (const PeakRss* r : {&idle, &tapeflow_rss, &libtorch_rss}) {
    if (r->maxrss_mib < 0 || std::fabs(r->maxrss_mib - r->vmhwm_mib) > 1.0) {
      std::printf("MISMATCH: a child's ru_maxrss %.1f MiB and VmHWM %.1f MiB disagree (or it failed)\n",
                  r->maxrss_mib, r->vmhwm_mib);
      return 1;
    }
  }
  return 0;
}
