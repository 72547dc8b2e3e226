#include "tape/gradient_tape.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/creation.h"
#include "tape/gradient_registry.h"

namespace tapeflow {

// Note [Tape records]: a record is the same shape as a graph node: op definition, attributes,
// inputs, outputs (and the user's line). Recording keeps the inputs and outputs alive, which
// also keeps the TensorImpl pointers used as ids unique while the tape holds them. Each record
// also notes, per input, which record produced it (looked up in tracked_ when recording), so
// the backward pass follows indices and hashes only the sources' ids: gradients of a record's
// outputs live in a slot per record, and only leaves (sources) need a map.

namespace {
bool carries_gradient(const Tensor& t) { return t.defined() && is_floating(t.dtype()); }
std::string where(const std::source_location& loc) {
  return loc.line() ? format_location(loc) : std::string("an unknown line");
}

// The live tapes, newest last, so that an unrecorded target's error can name the tape that did
// record it. Never destroyed: a tape may outlive static destruction (a REPL's global).
struct LiveTapes {
  std::mutex mu;
  std::vector<const GradientTape*> tapes;
};
LiveTapes& live_tapes() {
  static LiveTapes* live = new LiveTapes();
  return *live;
}
}  // namespace

// Note [Tape storage reuse]: a training loop makes one tape per step, and each records about
// as many ops as the last. Growing a fresh record vector and id map every step cost a dozen
// allocations per tape, several of them large, and glibc takes tens of thousands of
// instructions for a large one after a step's many small frees (it consolidates its free
// lists). So a finished tape hands its emptied record vector and id map, and backward() its
// scratch vectors, to the next tape on the same thread.
struct GradientTape::Spare {
  std::vector<Record> records;
  absl::flat_hash_map<Id, Producer> tracked;
  // backward()'s scratch.
  std::vector<char> useful;
  std::vector<TensorList> output_grads;
};

// This thread's spare storage, or null once the thread's thread_locals are being destroyed (a
// tape that outlives them, such as a global one in a REPL session, then just frees its own).
// The pointer and flag are trivially destructible, so they stay readable until the thread ends.
GradientTape::Spare* GradientTape::spare() {
  thread_local Spare* current = nullptr;
  thread_local bool torn_down = false;
  struct Owner {
    Spare spare;
    ~Owner() {
      current = nullptr;
      torn_down = true;
    }
  };
  if (current == nullptr && !torn_down) {
    thread_local Owner owner;
    current = &owner.spare;
  }
  return current;
}

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables, std::source_location loc)
    : persistent_(persistent), watch_accessed_variables_(watch_accessed_variables), created_at_(loc) {
  if (Spare* s = spare()) {
    records_.swap(s->records);
    tracked_.swap(s->tracked);
  }
  add_op_observer(this);
  registered_ = true;
  LiveTapes& live = live_tapes();
  std::lock_guard<std::mutex> lock(live.mu);
  live.tapes.push_back(this);
}

GradientTape::~GradientTape() {
  if (registered_) remove_op_observer(this);
  {
    LiveTapes& live = live_tapes();
    std::lock_guard<std::mutex> lock(live.mu);
    std::erase(live.tapes, this);
  }
  release_records();  // hands the storage on (Note [Tape storage reuse])
}

bool GradientTape::is_tracked(const Tensor& t) const { return t.defined() && tracked_.contains(t.impl()); }

// A leaf; a tensor that is already an op's output keeps its producer.
void GradientTape::track(const Tensor& t) { tracked_.try_emplace(t.impl(), Producer{kLeaf, 0}); }

void GradientTape::mark_reached(const Tensor& t) {
  if (t.defined() && reached_.insert(t.impl()).second) reached_alive_.push_back(t);
}

void GradientTape::watch(const Tensor& t) {
  if (!carries_gradient(t)) {  // integer and bool tensors have no gradient
    mark_reached(t);
    return;
  }
  watched_.push_back(t);
  track(t);
}

void GradientTape::watch(const Variable& v) {
  Tensor value;
  {
    PauseObservers quiet;  // this read is the tape's own
    value = v.read();
  }
  if (!carries_gradient(value)) return;
  variable_reads_[v.id()].push_back(value);
  track(value);
}

void GradientTape::on_variable_read(const Variable& variable, const Tensor& value) {
  if (paused_ || (used_ && !persistent_)) return;
  auto it = variable_reads_.find(variable.id());
  const bool watched = it != variable_reads_.end();
  if (!watched && !(watch_accessed_variables_ && variable.trainable())) return;
  if (!carries_gradient(value)) return;
  variable_reads_[variable.id()].push_back(value);
  track(value);
}

void GradientTape::on_op(const OpCall& call, absl::Span<const Tensor> outputs) {
  if (paused_ || (used_ && !persistent_)) return;
  absl::InlinedVector<Producer, 4> producers(call.inputs.size());
  bool any = false, reached = false;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    if (!t.defined()) continue;
    if (auto it = tracked_.find(t.impl()); it != tracked_.end()) {
      producers[i] = it->second;
      any = true;
    } else if (!reached_.empty() && reached_.contains(t.impl())) {
      reached = true;
    }
  }
  if (!any || !call.op.differentiable) {
    if (any || reached) {
      for (const Tensor& o : outputs) mark_reached(o);
    }
    return;
  }
  const auto index = static_cast<int32_t>(records_.size());
  Record& rec = records_.emplace_back();  // filled in place: no temporaries to move and destroy
  rec.op = &call.op;
  rec.inputs.assign(call.inputs.begin(), call.inputs.end());
  rec.outputs.assign(outputs.begin(), outputs.end());
  rec.producers.assign(producers.begin(), producers.end());
  rec.attrs = call.attrs;
  rec.loc = call.loc;
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (!carries_gradient(outputs[o])) {
      mark_reached(outputs[o]);
      continue;
    }
    tracked_.insert_or_assign(outputs[o].impl(), Producer{index, static_cast<int32_t>(o)});
  }
}

TapeStats GradientTape::stats() const {
  TapeStats s;
  s.recorded_ops = static_cast<int64_t>(records_.size());
  absl::flat_hash_set<Id> seen;
  absl::flat_hash_set<const Buffer*> buffers;
  for (const Record& r : records_) {
    for (const TensorList* list : {&r.inputs, &r.outputs}) {
      for (const Tensor& t : *list) {
        if (!seen.insert(t.impl()).second) continue;
        ++s.saved_tensors;
        const Buffer* b = t.device_tensor().buffer.get();
        if (b && buffers.insert(b).second) s.saved_bytes += static_cast<int64_t>(b->bytes());
      }
    }
  }
  return s;
}

void GradientTape::check_usable(std::source_location loc) const {
  if (used_ && !persistent_)
    throw FailedPreconditionError(absl::StrCat(
        "[gradient] A non-persistent GradientTape can only compute one set of gradients, and this one "
        "(created at ", where(created_at_), ") already did. Create it with persistent=true to ask again."), loc);
}

void GradientTape::throw_unrecorded_target(const Tensor& target, std::source_location loc) const {
  const GradientTape* recorder = nullptr;
  {
    LiveTapes& live = live_tapes();
    std::lock_guard<std::mutex> lock(live.mu);
    for (auto it = live.tapes.rbegin(); it != live.tapes.rend() && !recorder; ++it) {
      // Another thread's tape may be recording right now: only this thread's are read.
      if (*it != this && (*it)->thread_ == thread_ && (*it)->is_tracked(target)) recorder = *it;
    }
  }
  if (recorder) {
    const GradientTape* other = recorder;
    throw InvalidArgumentError(absl::StrCat(
        "[gradient] The target (made at ", where(target.origin()), ") was recorded by another tape (created at ",
        where(other->created_at_), "), not by this one (created at ", where(created_at_),
        "): ask that tape for the gradient, or nest the tapes so that this one sees the ops."), loc);
  }
  throw InvalidArgumentError(absl::StrCat(
      "[gradient] The target (made at ", where(target.origin()), ") was not recorded by this tape (created at ",
      where(created_at_), "): it was computed before the tape started, or from no tensor the tape watches "
      "(watch() a tensor, or read a trainable variable, while the tape records)."), loc);
}

std::vector<Tensor> GradientTape::backward(const Tensor& target, const std::vector<Source>& sources,
                                           const Tensor& seed, Unconnected unconnected,
                                           std::source_location loc) {
  if (!target.defined()) throw InvalidArgumentError("[gradient] The target is " + target.empty_reason(), loc);
  if (std::this_thread::get_id() != thread_)
    throw FailedPreconditionError(absl::StrCat(
        "[gradient] This tape (created at ", where(created_at_), ") belongs to another thread: a tape records "
        "only the ops of the thread that created it, and its gradient must be asked on that thread"), loc);
  // Note [Non-differentiable paths]: a target computed from watched tensors only through
  // non-differentiable ops (cast to an integer, a comparison, stop_gradient) has no gradient: each
  // source gets none, or zeros when asked (TensorFlow returns None). Only a target this tape never
  // saw at all is an error, which says whether another tape recorded it.
  const bool no_differentiable_path = !is_tracked(target) && reached_.contains(target.impl());
  if (!is_tracked(target) && !no_differentiable_path) throw_unrecorded_target(target, loc);

  // Ids of each source (a variable's are the values read from it while recording).
  std::vector<absl::InlinedVector<Id, 1>> source_ids(sources.size());
  // Usually a handful of ids: a linear scan beats hashing until there are many.
  absl::InlinedVector<Id, 8> source_list;
  absl::flat_hash_set<Id> source_set;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (const Tensor* t = sources[i].tensor()) {
      // Only a watched tensor or a recorded op's output is a source (TensorFlow's rule): an
      // unwatched constant gets no gradient even when the target uses it.
      if (is_tracked(*t)) source_ids[i].push_back(t->impl());
    } else {
      auto it = variable_reads_.find(sources[i].variable()->id());
      if (it != variable_reads_.end()) {
        // Reads between assignments return the same tensor: count each value once.
        for (const Tensor& v : it->second) {
          if (std::find(source_ids[i].begin(), source_ids[i].end(), v.impl()) == source_ids[i].end())
            source_ids[i].push_back(v.impl());
        }
      }
    }
    source_list.insert(source_list.end(), source_ids[i].begin(), source_ids[i].end());
  }
  const bool hash_sources = source_list.size() > 8;
  if (hash_sources) source_set.insert(source_list.begin(), source_list.end());
  auto is_source = [&](Id id) {
    return hash_sources ? source_set.contains(id)
                        : std::find(source_list.begin(), source_list.end(), id) != source_list.end();
  };
  // Scratch vectors sized like the records come from the thread's spare storage (Note [Tape
  // storage reuse]); taken, not borrowed, so a backward pass nested in a gradient function
  // simply allocates its own.
  std::vector<char> useful;
  std::vector<TensorList> output_grads;
  if (Spare* s = spare()) {
    useful.swap(s->useful);
    output_grads.swap(s->output_grads);
  }
  struct GiveBack {
    std::vector<char>& useful;
    std::vector<TensorList>& grads;
    ~GiveBack() {
      grads.clear();  // the gradients are released here, with the scratch kept
      Spare* s = spare();
      if (s && useful.capacity() > s->useful.capacity()) s->useful.swap(useful);
      if (s && grads.capacity() > s->output_grads.capacity()) s->output_grads.swap(grads);
    }
  } give_back{useful, output_grads};
  useful.assign(records_.size(), 0);
  // Forward pass over the records: which depend on some source. An input leads to a source if
  // it is one, or if the record that made it depends on one.
  auto leads_to_source = [&](const Record& rec, size_t i) {
    const Producer p = rec.producers[i];
    return (p.record >= 0 && useful[static_cast<size_t>(p.record)]) || is_source(rec.inputs[i].impl());
  };
  for (size_t r = 0; r < records_.size(); ++r) {
    const Record& rec = records_[r];
    for (size_t i = 0; i < rec.inputs.size() && !useful[r]; ++i) useful[r] = leads_to_source(rec, i);
  }

  // Our own backward ops must not be recorded by this tape (outer tapes do record them).
  ++paused_;
  struct Unpause { int* p; ~Unpause() { --*p; } } unpause{&paused_};

  // Gradients: per record output (indexed like the records) and per source id.
  output_grads.resize(records_.size());
  absl::flat_hash_map<Id, Tensor> leaf_grads;
  auto accumulate = [](Tensor& slot, const Tensor& g) { slot = slot.defined() ? add(slot, g) : g; };
  auto grad_slot = [&](Producer p, Id id) -> Tensor& {
    if (p.record < 0) return leaf_grads[id];
    TensorList& list = output_grads[static_cast<size_t>(p.record)];
    if (list.empty()) list.resize(records_[static_cast<size_t>(p.record)].outputs.size());
    return list[static_cast<size_t>(p.output)];
  };
  Tensor initial = seed;
  if (seed.defined()) {
    if (seed.shape() != target.shape() || seed.dtype() != target.dtype())
      throw InvalidArgumentError(absl::StrCat("[gradient] output_gradients has dtype ", dtype_name(seed.dtype()),
                                              " and shape ", seed.shape().to_string(), "; the target has ",
                                              dtype_name(target.dtype()), " and ", target.shape().to_string()), loc);
  } else {
    initial = ones_like(target);
  }
  if (!no_differentiable_path) grad_slot(tracked_.at(target.impl()), target.impl()) = initial;

  absl::flat_hash_map<const OpDef*, GradFn> fns;  // find_gradient compares names: once per op type
  for (size_t r = records_.size(); r-- > 0;) {
    if (!useful[r] || output_grads[r].empty()) continue;
    const Record& rec = records_[r];
    // The gradients as they are (no copy) unless some output has none: those get zeros.
    absl::Span<const Tensor> out_grads = output_grads[r];
    TensorList filled;
    if (std::any_of(out_grads.begin(), out_grads.end(), [](const Tensor& g) { return !g.defined(); })) {
      filled.assign(out_grads.begin(), out_grads.end());
      for (size_t o = 0; o < rec.outputs.size(); ++o)
        if (!filled[o].defined()) filled[o] = zeros_like(rec.outputs[o]);
      out_grads = filled;
    }
    auto [fn_it, inserted] = fns.try_emplace(rec.op, nullptr);
    if (inserted) fn_it->second = find_gradient(rec.op->type);
    if (fn_it->second == nullptr)
      throw UnimplementedError(absl::StrCat("[gradient] No gradient is defined for op ", rec.op->type, " (",
                                            rec.op->api_name, ", recorded at ", where(rec.loc), ")"), loc);
    GradInputs op{*rec.op, rec.inputs, rec.outputs, rec.attrs};
    for (size_t i = 0; i < rec.inputs.size() && i < 64; ++i) {
      if (!leads_to_source(rec, i)) op.wanted &= ~(uint64_t{1} << i);
    }
    GradList in_grads;
    try {
      in_grads = fn_it->second(op, out_grads);
    } catch (Error& e) {  // an op of the gradient failed: say whose gradient, and where it was asked
      e.add_context(absl::StrCat("while computing the gradient of ", rec.op->type, " (", rec.op->api_name,
                                 ", recorded at ", where(rec.loc), ") asked at ", where(loc)));
      throw;
    }
    for (size_t i = 0; i < rec.inputs.size() && i < in_grads.size(); ++i) {
      if (!in_grads[i].defined() || !leads_to_source(rec, i)) continue;
      accumulate(grad_slot(rec.producers[i], rec.inputs[i].impl()), in_grads[i]);
    }
  }

  std::vector<Tensor> result(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    Tensor total;
    for (Id id : source_ids[i]) {
      // A source that is an op's output has its gradient in that record's slot.
      const auto it = tracked_.find(id);
      const Producer p = it == tracked_.end() ? Producer{kLeaf, 0} : it->second;
      Tensor g;
      if (p.record >= 0) {
        const TensorList& list = output_grads[static_cast<size_t>(p.record)];
        if (!list.empty()) g = list[static_cast<size_t>(p.output)];
      } else if (const auto leaf = leaf_grads.find(id); leaf != leaf_grads.end()) {
        g = leaf->second;
      }
      if (g.defined()) accumulate(total, g);
    }
    if (total.defined()) { result[i] = total; continue; }
    const Tensor* source_tensor = sources[i].tensor();
    const Variable* source_variable = sources[i].variable();
    std::string source = source_tensor ? absl::StrCat("made at ", where(source_tensor->origin()))
                                       : absl::StrCat("variable '", source_variable->name(), "' created at ",
                                                      where(source_variable->created_at()));
    if (unconnected == Unconnected::kNone) {
      // Note [Unconnected gradients] in eager/tensor.h: empty, but an op given it says whose it is.
      result[i] = Tensor::none_gradient({static_cast<int>(i), std::move(source), loc});
      continue;
    }
    const std::string what = absl::StrCat("source ", i, " (", source, ")");
    if (unconnected == Unconnected::kZero) {
      Tensor value = source_tensor ? *source_tensor : Tensor();
      if (!source_tensor) {
        PauseObservers quiet;  // the tape's own read
        value = source_variable->read();
      }
      result[i] = zeros_like(value);
      continue;
    }
    const bool watched = !source_ids[i].empty() &&
                         std::any_of(source_ids[i].begin(), source_ids[i].end(),
                                     [&](Id id) { return tracked_.contains(id); });
    throw InvalidArgumentError(absl::StrCat(
        "[gradient] ", what, " is not connected to the target: ",
        no_differentiable_path ? "the target depends on the watched tensors only through ops that have no gradient "
                                 "(an integer cast, a comparison, stop_gradient)"
        : watched ? "it was watched, but the target does not depend on it"
                : "it was never watched by this tape (call tape.watch(), or read the variable while the tape "
                  "records)"), loc);
  }
  return result;
}

void GradientTape::release_records() {
  used_ = true;
  records_.clear();
  // Note [Tape storage reuse]; a huge tape's storage is not worth keeping.
  constexpr size_t kMaxSpareRecords = 4096;
  Spare* s = spare();
  if (s && records_.capacity() <= kMaxSpareRecords && records_.capacity() > s->records.capacity())
    records_.swap(s->records);
  // clear() frees a table of more than 127 slots; erasing keeps it (absl reuses erased slots).
  if (!s || tracked_.capacity() <= 127) {
    tracked_.clear();
  } else {
    for (auto it = tracked_.begin(); it != tracked_.end();) tracked_.erase(it++);
  }
  if (s && tracked_.capacity() <= 2 * kMaxSpareRecords && tracked_.capacity() > s->tracked.capacity())
    tracked_.swap(s->tracked);
  watched_.clear();
  reached_.clear();
  reached_alive_.clear();
  variable_reads_.clear();
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Source>& sources,
                                           const Tensor& output_gradients, Unconnected unconnected,
                                           std::source_location loc) {
  check_usable(loc);
  std::vector<Tensor> result = backward(target, sources, output_gradients, unconnected, loc);
  if (!persistent_) release_records();
  return result;
}

Tensor GradientTape::gradient(const Tensor& target, const Source& source, const Tensor& output_gradients,
                              Unconnected unconnected, std::source_location loc) {
  return gradient(target, std::vector<Source>{source}, output_gradients, unconnected, loc)[0];
}

Tensor GradientTape::jacobian(const Tensor& target, const Source& source, std::source_location loc) {
  check_usable(loc);
  if (!target.defined()) throw InvalidArgumentError("[jacobian] The target is an empty tensor", loc);
  Tensor source_value;
  if (const Tensor* t = source.tensor()) {
    source_value = *t;
  } else {
    PauseObservers quiet;
    source_value = source.variable()->read();
  }
  const int64_t n = target.num_elements();
  std::vector<Tensor> rows;
  rows.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    Tensor seed;
    {
      ++paused_;
      struct Unpause { int* p; ~Unpause() { --*p; } } unpause{&paused_};
      seed = reshape(one_hot(Tensor(static_cast<int64_t>(i)), n, 1.0, 0.0, -1, target.dtype()),
                     target.shape().as_vector());
    }
    rows.push_back(backward(target, {source}, seed, Unconnected::kZero, loc)[0]);
  }
  if (!persistent_) release_records();
  std::vector<int64_t> shape = target.shape().as_vector();
  for (int64_t d : source_value.shape().dims()) shape.push_back(d);
  ++paused_;
  struct Unpause { int* p; ~Unpause() { --*p; } } unpause{&paused_};
  if (rows.empty()) return zeros(Shape(shape), source_value.dtype());
  return reshape(stack(rows, 0), shape);
}

}  // namespace tapeflow
