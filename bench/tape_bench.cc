// Gradient-tape benchmarks:
//   - a chain of 100 scalar ops recorded on a tape, forward then backward (us per chain);
//   - one training step of an MLP (batch 64, 784-256-10, relu, softmax cross-entropy, SGD),
//     with the share of the step spent in the tape's own bookkeeping (Note [Tape share]);
//   - the same forward pass without a tape;
//   - one training step of the CNN of tutorial 04 (batch 64, Adam), in ms per step.
//
// Run: ./build/bench/tape_bench --benchmark_min_time=0.3
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "bench/bench_models.h"
#include "eager/context.h"
#include "tapeflow.h"

namespace tf = tapeflow;
namespace bench = tapeflow_bench;

namespace {

void BM_TapeChain100(benchmark::State& state) {
  tf::Tensor x = 0.5f;
  for (auto _ : state) {
    tf::Tensor g = bench::chain100(x);
    benchmark::DoNotOptimize(g);
  }
  state.counters["ops"] = 100;
}
BENCHMARK(BM_TapeChain100)->Unit(benchmark::kMicrosecond);

// Records every op run while registered (op, inputs, attributes), to run the same calls again
// later without a tape. Holding the inputs keeps them alive, so a replay runs the very same
// kernels on the very same shapes and values.
class OpCapture final : public tf::OpObserver {
 public:
  struct Call {
    const tf::OpDef* op;
    std::vector<tf::Tensor> inputs;
    tf::AttrMap attrs;
  };
  void on_op(const tf::OpCall& call, absl::Span<const tf::Tensor>) override {
    calls_.push_back(Call{&call.op, std::vector<tf::Tensor>(call.inputs.begin(), call.inputs.end()), call.attrs});
  }
  void on_variable_read(const tf::Variable&, const tf::Tensor&) override {}
  void replay() const {
    for (const Call& c : calls_) {
      tf::TensorList out = tf::execute(tf::OpCall{*c.op, c.inputs, c.attrs, {}});
      benchmark::DoNotOptimize(out);
    }
  }
  size_t size() const { return calls_.size(); }

 private:
  std::vector<Call> calls_;
};

// One training step: a loss computed from the variables, and the update applied to their
// gradients.
struct TrainStep {
  std::function<tf::Tensor()> loss;
  std::function<std::vector<tf::Variable>()> variables;
  std::function<void(const std::vector<tf::Tensor>&, const std::vector<tf::Variable>&)> update;
};

// Note [Tape share]: how much of a training step is the tape's own bookkeeping, i.e. time that
// is neither the forward pass's own work nor the kernels (and op dispatch) of the backward pass.
// A taped step is split by the clock into forward (under the tape) and tape.gradient. The same
// work then runs without a tape: the same forward code with no tape active, and a replay of the
// exact op calls tape.gradient ran (captured once, with their inputs) through the ordinary eager
// dispatch. So
//   record = forward under the tape - forward without one  (on_op/on_variable_read, records)
//   walk   = tape.gradient - replay of its ops  (record scan, gradient lookup and accumulation
//            maps, the gradient functions' C++ glue, observer dispatch)
// The replay counts the seeds, zeros and gradient sums the tape chose to run as op work, and
// reuses the scalar constants that gradient functions made (making them counts as walk).
//
// The tape never touches tensor data: its work depends on the number of ops, not their sizes.
// Measured on the full-size step, this difference of two ~1 ms timings drowned in the noise of
// a shared 2-core machine (it swung between -50 and +40 us run to run). So it is measured on the
// same step code with tiny tensors (the same op sequence; kernels nearly free), taking the
// fastest of many iterations of each part (interference only adds time), and reported as a
// share of the full-size step time. Not included: effects that grow with tensor size, such as
// the records keeping forward activations alive until the backward pass.
struct TapeOverhead {
  double record_s = 0, walk_s = 0;
  size_t backward_ops = 0;
};

TapeOverhead measure_tape_overhead(const TrainStep& step, int iterations) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  const std::vector<tf::Variable> vars = step.variables();
  OpCapture backward_ops;
  {
    tf::GradientTape tape;
    const tf::Tensor loss = step.loss();
    tf::add_op_observer(&backward_ops);
    const std::vector<tf::Tensor> grads = tape.gradient(loss, vars);
    tf::remove_op_observer(&backward_ops);
    step.update(grads, vars);
  }
  double taped_forward = 1e9, taped_gradient = 1e9, plain_forward = 1e9, replayed_gradient = 1e9;
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = Clock::now();
    std::vector<tf::Tensor> grads;
    Clock::time_point t1, t2;
    {
      tf::GradientTape tape;
      const tf::Tensor loss = step.loss();
      t1 = Clock::now();
      grads = tape.gradient(loss, vars);
      t2 = Clock::now();
    }
    step.update(grads, vars);
    const auto u0 = Clock::now();
    tf::Tensor plain_loss = step.loss();
    benchmark::DoNotOptimize(plain_loss);
    const auto u1 = Clock::now();
    backward_ops.replay();
    const auto u2 = Clock::now();
    taped_forward = std::min(taped_forward, seconds(t1 - t0));
    taped_gradient = std::min(taped_gradient, seconds(t2 - t1));
    plain_forward = std::min(plain_forward, seconds(u1 - u0));
    replayed_gradient = std::min(replayed_gradient, seconds(u2 - u1));
  }
  return TapeOverhead{taped_forward - plain_forward, taped_gradient - replayed_gradient, backward_ops.size()};
}

TrainStep train_step(bench::Mlp& m) {
  return TrainStep{[&m] { return m.loss(); }, [&m] { return m.variables(); }, bench::Mlp::update};
}

void BM_MlpTrainStep(benchmark::State& state) {
  bench::Mlp m(64, 784, 256, 10);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (auto _ : state) m.step();
  const double step_s = std::chrono::duration<double>(Clock::now() - start).count() /
                        static_cast<double>(state.iterations());
  // Note [Tape share]: the same step code on batch 2, 16-8-10.
  bench::Mlp tiny(2, 16, 8, 10);
  const TapeOverhead o = measure_tape_overhead(train_step(tiny), 500);
  state.counters["backward_ops"] = static_cast<double>(o.backward_ops);
  state.counters["record_us"] = o.record_s * 1e6;
  state.counters["walk_us"] = o.walk_s * 1e6;
  state.counters["tape_share"] = (o.record_s + o.walk_s) / step_s;
}
BENCHMARK(BM_MlpTrainStep)->Unit(benchmark::kMicrosecond);

void BM_MlpForwardOnly(benchmark::State& state) {
  bench::Mlp m(64, 784, 256, 10);
  for (auto _ : state) {
    tf::Tensor loss = m.loss();
    benchmark::DoNotOptimize(loss);
  }
}
BENCHMARK(BM_MlpForwardOnly)->Unit(benchmark::kMicrosecond);

// Tutorial 04's network and optimizer on a fixed random batch of 64 images (bench::Cnn).
void BM_CnnTrainStep(benchmark::State& state) {
  const int64_t batch = 64;
  bench::Cnn cnn(batch);
  for (auto _ : state) cnn.step();
  state.counters["examples_per_s"] =
      benchmark::Counter(static_cast<double>(batch) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CnnTrainStep)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
