// GradientTape: records eager ops on watched tensors and differentiates them on demand,
// TensorFlow 2's tf.GradientTape as an RAII object.
//
//   Variable w(random_normal({3, 1}), "w");
//   Tensor loss;
//   GradientTape tape;                      // records while alive
//   loss = reduce_mean(square(matmul(x, w) - y));
//   auto grads = tape.gradient(loss, {w});  // one Tensor per source
//
// Trainable variables are watched when read; tape.watch(t) watches any floating tensor.
// Outputs of recorded ops are watched in turn; integer and bool results carry no gradient.
// A non-persistent tape answers one gradient() call and then frees its records; a persistent
// one may be asked many times. Nested tapes give higher-order gradients because gradient
// functions run public ops, which the outer tape records.
//
// A tape belongs to the thread that made it. Destroy tapes in reverse order of creation.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <string>
#include <variant>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "eager/context.h"
#include "eager/tensor.h"
#include "eager/variable.h"

namespace tapeflow {

// What an unconnected source gets (tf.UnconnectedGradients).
enum class Unconnected { kNone, kZero, kError };

// A gradient source: a tensor or a variable.
class Source {
 public:
  Source(const Tensor& t) : v_(t) {}
  Source(const Variable& v) : v_(v) {}
  const Tensor* tensor() const { return std::get_if<Tensor>(&v_); }
  const Variable* variable() const { return std::get_if<Variable>(&v_); }

 private:
  std::variant<Tensor, Variable> v_;
};

struct TapeStats {
  int64_t recorded_ops = 0;
  int64_t saved_tensors = 0;
  int64_t saved_bytes = 0;  // bytes of the distinct buffers the records keep alive
};

class GradientTape : public OpObserver {
 public:
  explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true,
                        std::source_location loc = std::source_location::current());
  ~GradientTape() override;
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  void watch(const Tensor& t);
  void watch(const Variable& v);

  // d(target)/d(source) for each source; output_gradients seeds the backward pass (ones by
  // default, i.e. the gradient of sum(target)). A source the target does not depend on gets,
  // as `unconnected` asks: kNone, an empty tensor (defined() is false, TensorFlow's None) that an
  // op refuses naming the source and this call's line (Note [Unconnected gradients] in
  // eager/tensor.h); kZero, zeros like the source; kError, an InvalidArgumentError.
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Source>& sources,
                               const Tensor& output_gradients = Tensor(),
                               Unconnected unconnected = Unconnected::kNone,
                               std::source_location loc = std::source_location::current());
  Tensor gradient(const Tensor& target, const Source& source, const Tensor& output_gradients = Tensor(),
                  Unconnected unconnected = Unconnected::kNone,
                  std::source_location loc = std::source_location::current());

  // A braced list, `tape.gradient(loss, {w})` or `{w, b}`: one gradient per source. Without this
  // overload `{w}` is ambiguous between the two above (a one-element vector or one Source); a
  // list that converts to std::initializer_list wins over both ([over.ics.rank]/3.1).
  std::vector<Tensor> gradient(const Tensor& target, std::initializer_list<Source> sources,
                               const Tensor& output_gradients = Tensor(),
                               Unconnected unconnected = Unconnected::kNone,
                               std::source_location loc = std::source_location::current()) {
    return gradient(target, std::vector<Source>(sources), output_gradients, unconnected, loc);
  }

  // For model.trainable_variables(): one gradient per variable. (A template, so that a braced
  // list such as {w, b} still picks the overload above.)
  template <typename V>
    requires std::same_as<V, Variable>
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<V>& variables,
                               const Tensor& output_gradients = Tensor(),
                               Unconnected unconnected = Unconnected::kNone,
                               std::source_location loc = std::source_location::current()) {
    return gradient(target, std::vector<Source>(variables.begin(), variables.end()), output_gradients,
                    unconnected, loc);
  }

  // d(target[i...])/d(source[j...]): shape target.shape + source.shape.
  Tensor jacobian(const Tensor& target, const Source& source,
                  std::source_location loc = std::source_location::current());

  // Pauses this tape's recording while alive (tf.GradientTape.stop_recording).
  class StopRecording {
   public:
    explicit StopRecording(GradientTape* tape) : tape_(tape) { ++tape_->paused_; }
    ~StopRecording() { --tape_->paused_; }
    StopRecording(const StopRecording&) = delete;
    StopRecording& operator=(const StopRecording&) = delete;

   private:
    GradientTape* tape_;
  };
  [[nodiscard]] StopRecording stop_recording() { return StopRecording(this); }

  TapeStats stats() const;
  bool persistent() const { return persistent_; }

  // OpObserver
  void on_op(const OpCall& call, absl::Span<const Tensor> outputs) override;
  void on_variable_read(const Variable& variable, const Tensor& value) override;

 private:
  using Id = const TensorImpl*;
  // Where a tracked tensor comes from: output `output` of records_[record], or kLeaf (a watched
  // tensor or a variable's value). Inputs that were not tracked when recorded are kUntracked.
  static constexpr int32_t kLeaf = -1, kUntracked = -2;
  struct Producer {
    int32_t record = kUntracked;
    int32_t output = 0;
  };
  // Note [Tape records] in gradient_tape.cc.
  struct Record {
    const OpDef* op;
    TensorList inputs;
    TensorList outputs;
    absl::InlinedVector<Producer, 2> producers;  // one per input
    AttrMap attrs;
    std::source_location loc;
  };

  bool is_tracked(const Tensor& t) const;
  void track(const Tensor& t);
  void mark_reached(const Tensor& t);
  [[noreturn]] void throw_unrecorded_target(const Tensor& target, std::source_location loc) const;
  void check_usable(std::source_location loc) const;
  void release_records();
  struct Spare;
  static Spare* spare();
  std::vector<Tensor> backward(const Tensor& target, const std::vector<Source>& sources,
                               const Tensor& seed, Unconnected unconnected, std::source_location loc);

  bool persistent_;
  bool watch_accessed_variables_;
  bool used_ = false;
  int paused_ = 0;
  bool registered_ = false;
  std::source_location created_at_;
  std::thread::id thread_ = std::this_thread::get_id();  // the tape records this thread's ops only
  std::vector<Record> records_;
  absl::flat_hash_map<Id, Producer> tracked_;  // watched tensors and outputs of recorded ops
  std::vector<Tensor> watched_;                // keeps watched tensors (and so their ids) alive
  // Note [Non-differentiable paths]: tensors computed from watched ones through no differentiable
  // path (integer casts, comparisons, stop_gradient); kept alive so that their ids stay theirs.
  absl::flat_hash_set<Id> reached_;
  std::vector<Tensor> reached_alive_;
  absl::flat_hash_map<int64_t, std::vector<Tensor>> variable_reads_;  // variable id -> values read
};

}  // namespace tapeflow
