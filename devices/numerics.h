// Finding NaN and infinity in a tensor's values (enable_check_numerics, eager/check_numerics.h).
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "devices/device.h"

namespace tapeflow {

// OK when `t` is not floating point or all its values are finite; otherwise InvalidArgumentError
// "<what> has NaN at element [1,2] of a [2,3] float32 tensor" (the first one found). Memory the
// host cannot read is copied to the CPU first.
absl::Status check_finite(const DeviceTensor& t, std::string_view what);

}  // namespace tapeflow
