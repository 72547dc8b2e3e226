// Saver: checkpoints of variables in safetensors files, with tf.compat.v1.train.Saver's
// behaviour (numbered checkpoints, max_to_keep, a "checkpoint" index, latest_checkpoint).
//
//   Variable w(random_normal({784, 10}), "w"), b(zeros({10}), "b");
//   nn::Adam opt(0.001);
//   Saver saver({w, b});
//   saver.add_optimizer(opt);                     // Adam's m and v and its step count too
//   std::string path = saver.save("ckpt/model", 1000);   // "ckpt/model-1000.safetensors"
//   ...
//   saver.restore(*latest_checkpoint("ckpt"));    // every variable, slot and the step count
//
//   Saver renamed({{"dense/kernel", w}});          // checkpoint key -> variable
//   renamed.restore(path_from_elsewhere);          // the file may hold more tensors
//
// Graph variables live in a Session (their state is per Session): pass it.
//
//   saver.save(sess, "ckpt/model", step);   saver.restore(sess, path);
//
// Checkpoint keys: a variable's key is its name (or the map's key); an optimizer's slots are
// "<key>/<slot>" ("w/m", "w/v"), its step counter "<optimizer name>/iterations" (int64 scalar).
// For eager training the counter is the optimizer's iterations(); for a graph, its
// iterations_variable(graph) when it exists. A file's __metadata__ records "global_step".
//
// Files: save writes "<prefix>-<global_step>.safetensors" (or "<prefix>.safetensors" without
// a step) atomically (Note [Atomic write] in saving/file_io.h): a crash or kill mid-save leaves
// the previous file intact. Then it updates the index file "checkpoint" in the prefix's
// directory, in TensorFlow's text form (what tf.train.latest_checkpoint reads), paths relative
// to that directory:
//   model_checkpoint_path: "model-1000.safetensors"
//   all_model_checkpoint_paths: "model-900.safetensors"
//   all_model_checkpoint_paths: "model-1000.safetensors"
// and deletes the oldest checkpoints this Saver wrote beyond max_to_keep.
//
// Restore (Note [All or nothing restore]): validates everything first: the file (CRC32C of
// every tensor), each key present, each dtype and shape equal to the variable's; only then
// assigns. A failed restore changes no variable, slot or counter. Errors are typed and name the
// file and the variable: NotFoundError (no file; a variable absent from the checkpoint),
// DataLossError (truncated or corrupt file, checksum mismatch), InvalidArgumentError (dtype or
// shape mismatch, a graph variable without its Session); messages start with "[save]" or
// "[restore]".
//
// Thread-safety: a Saver's save calls are serialised; restore may run beside them. Variables
// are read and assigned atomically one by one (eager) or all at once (a Session's).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "eager/variable.h"
#include "graph/session.h"
#include "nn/optimizer.h"

namespace tapeflow {

struct SaverOptions {
  // How many recent checkpoints to keep; older ones this Saver wrote are deleted. 0 keeps all.
  int max_to_keep = 5;
};

class Saver {
 public:
  // Keys are the variables' names. InvalidArgumentError for two variables with one name
  // (rename them with the map form) or an empty list.
  explicit Saver(const std::vector<Variable>& var_list, SaverOptions options = {},
                 std::source_location loc = std::source_location::current());
  // Saver({w, b}): without it the braces could also mean a map's iterator pair.
  Saver(std::initializer_list<Variable> var_list, SaverOptions options = {},
        std::source_location loc = std::source_location::current())
      : Saver(std::vector<Variable>(var_list), options, loc) {}
  // Keys chosen by the caller: checkpoint key -> variable.
  explicit Saver(const std::map<std::string, Variable>& var_map, SaverOptions options = {},
                 std::source_location loc = std::source_location::current());

  // Also saves and restores `optimizer`'s slots for every variable of this Saver and its step
  // counter, so that training resumes exactly. The optimizer must outlive the Saver. Eager
  // slots missing at save or restore time are created first (as zeros, Optimizer::build).
  void add_optimizer(nn::Optimizer& optimizer);

  // Writes the checkpoint and returns its path. Eager variables only in the first form (a graph
  // variable is an InvalidArgumentError); with a Session, graph variables are read from it.
  std::string save(const std::string& prefix, std::optional<int64_t> global_step = std::nullopt,
                   std::source_location loc = std::source_location::current());
  std::string save(Session& session, const std::string& prefix, std::optional<int64_t> global_step = std::nullopt,
                   std::source_location loc = std::source_location::current());

  // Restores every variable (and added optimizer state) from the checkpoint at `path`, by key;
  // the file may hold other tensors too. All or nothing (see above).
  void restore(const std::string& path, std::source_location loc = std::source_location::current());
  void restore(Session& session, const std::string& path,
               std::source_location loc = std::source_location::current());

  // TensorFlow's recover_last_checkpoints: adopts `paths` (oldest first, e.g. the checkpoints a
  // previous process kept) as if this Saver had written them, so that max_to_keep counts and
  // deletes them too. Paths whose files no longer exist are dropped.
  void recover_last_checkpoints(const std::vector<std::string>& paths);
  // The checkpoints this Saver wrote and keeps, oldest first.
  std::vector<std::string> last_checkpoints() const;
  // The checkpoint keys this Saver reads and writes (slots and counters included), sorted.
  std::vector<std::string> keys() const;

 private:
  struct Item;
  std::vector<Item> items(Session* session, const char* api, std::source_location loc) const;
  std::string save_impl(Session* session, const std::string& prefix, std::optional<int64_t> global_step,
                        std::source_location loc);
  void restore_impl(Session* session, const std::string& path, std::source_location loc);

  std::map<std::string, Variable> variables_;
  std::vector<nn::Optimizer*> optimizers_;
  SaverOptions options_;
  mutable std::mutex mu_;  // guards last_checkpoints_ and serialises save
  std::vector<std::string> last_checkpoints_;
};

// The newest checkpoint recorded in `dir`'s "checkpoint" index, as a path (joined with `dir`
// when relative); nullopt when there is no index. DataLossError for an index that cannot be
// parsed. Like tf.train.latest_checkpoint, it does not check that the file still exists.
std::optional<std::string> latest_checkpoint(const std::string& dir);

// The index file's text for `latest` and `all` (paths as given), and its parse; both pure.
std::string format_checkpoint_index(const std::string& latest, const std::vector<std::string>& all);
// Returns (model_checkpoint_path, all_model_checkpoint_paths). DataLossError naming `file` for
// a malformed line or a missing model_checkpoint_path.
std::pair<std::string, std::vector<std::string>> parse_checkpoint_index(std::string_view text,
                                                                        std::string_view file = "checkpoint");

}  // namespace tapeflow
