// Rendezvous: where a _Send leaves a tensor for its _Recv (Note [Partitions], graph/executor.h).
// A key names one transfer of one run, in TensorFlow's form:
//   "src_device;src_incarnation;dst_device;tensor_name;frame_iter"
//   "/job:localhost/replica:0/task:0/device:CPU:0;5e1f09c2a8b3d471;/job:localhost/replica:0/task:0/device:CPU:1;a:0;0:0"
// (src_incarnation: 16 hex digits that tell this process's device apart from a restarted one;
// frame_iter is "0:0": tapeflow graphs have no loops). Each run has its own Rendezvous, so two
// concurrent runs never see each other's tensors; the gRPC worker will serve the same keys.
//
//   Rendezvous r;
//   r.recv_async(key, [](const absl::Status& s, const DeviceTensor& t) { ... });  // may run later
//   r.send(key, tensor);   // runs the waiting callback, on this thread
//
// Thread-safe. Callbacks run without the lock held, exactly once each.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "devices/device.h"

namespace tapeflow {

class Rendezvous {
 public:
  using DoneCallback = std::function<void(const absl::Status& status, const DeviceTensor& value)>;

  static std::string create_key(const Device& src, const Device& dst, std::string_view tensor_name,
                                std::string_view frame_iter = "0:0");
  // This process's incarnation number of `device` (random per process, fixed per device).
  static uint64_t incarnation(const Device& device);

  // Leaves `value` under `key`, or hands it to the waiting receiver. InternalError when the key
  // was already sent; the abort status after start_abort.
  absl::Status send(const std::string& key, DeviceTensor value);
  // Calls done(OK, value) once `key` has been sent (at once, on this thread, if it has been), or
  // done(abort status, {}) if the rendezvous is aborted first.
  void recv_async(const std::string& key, DoneCallback done);
  // Fails every waiting and later receive with `status` (a failed run: Note [Partitions]).
  void start_abort(const absl::Status& status);

 private:
  struct Item {
    std::optional<DeviceTensor> value;
    DoneCallback waiting;
  };
  std::mutex mu_;
  absl::flat_hash_map<std::string, Item> table_;
  absl::Status aborted_;
};

}  // namespace tapeflow
