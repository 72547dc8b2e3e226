// NaN hunting: with checks on, every op checks its floating-point outputs and throws at the first
// NaN or infinity, naming the op, its inputs' shapes and the user's line that made it, in eager
// code and in Session runs alike (TensorFlow's tf.debugging.enable_check_numerics).
//
//   enable_check_numerics();
//   auto y = log(x);    // InvalidArgumentError: [log] check_numerics: output 0 has -Inf at element [2]
//                       //   of a [4] float32 tensor; inputs: [4] float32 (at model.cc:12)
//
// Off by default; when off an op pays one relaxed atomic load (Note [Check numerics cost]).
#pragma once

#include <string>

#include "absl/types/span.h"
#include "devices/device.h"

namespace tapeflow {

void enable_check_numerics();
void disable_check_numerics();
bool check_numerics_enabled();

// Turns the checks on for a scope and restores what was there before.
class CheckNumericsGuard {
 public:
  CheckNumericsGuard() : previous_(check_numerics_enabled()) { enable_check_numerics(); }
  ~CheckNumericsGuard() { previous_ ? enable_check_numerics() : disable_check_numerics(); }
  CheckNumericsGuard(const CheckNumericsGuard&) = delete;
  CheckNumericsGuard& operator=(const CheckNumericsGuard&) = delete;

 private:
  bool previous_;
};

namespace internal {
// The check itself, for execution contexts: OK, or InvalidArgumentError "check_numerics: output k
// has NaN at element [..] of a [..] float32 tensor; inputs: [2,3] float32, ...".
absl::Status check_outputs_finite(absl::Span<const DeviceTensor> outputs,
                                  absl::Span<const DeviceTensor* const> inputs);
}  // namespace internal

}  // namespace tapeflow
