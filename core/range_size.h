// The number of elements of TensorFlow's Range(start, limit, delta), or InvalidArgumentError
// naming `op` (a zero delta, a delta pointing away from limit, a non-finite bound, too many
// elements). Shared by Range's shape function (eager/ops/creation.cc) and DynamicRange's CPU
// kernel (devices/cpu/creation.cc), which sizes its output from run-time bounds.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tapeflow {

template <typename T> absl::StatusOr<int64_t> range_size(const char* op, T start, T limit, T delta) {
  if (delta == 0) return absl::InvalidArgumentError(absl::StrCat("[", op, "] delta must not be 0"));
  if (delta > 0 && start > limit)
    return absl::InvalidArgumentError(absl::StrCat("[", op, "] start (", start, ") must not exceed limit (", limit,
                                                   ") when delta (", delta, ") is positive"));
  if (delta < 0 && start < limit)
    return absl::InvalidArgumentError(absl::StrCat("[", op, "] start (", start, ") must not be below limit (",
                                                   limit, ") when delta (", delta, ") is negative"));
  if constexpr (std::is_integral_v<T>) {
    // Unsigned differences: limit - start can exceed int64's range.
    const uint64_t span = delta > 0 ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                    : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    const uint64_t step = delta > 0 ? static_cast<uint64_t>(delta) : 0 - static_cast<uint64_t>(delta);
    const uint64_t n = span / step + (span % step != 0);
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return absl::InvalidArgumentError(absl::StrCat("[", op, "] the range has too many elements"));
    return static_cast<int64_t>(n);
  } else {
    if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
      return absl::InvalidArgumentError(absl::StrCat("[", op, "] start, limit and delta must be finite, got ", start,
                                                     ", ", limit, ", ", delta));
    // Computed in T, as TensorFlow does, so sizes agree with it.
    const T n = std::ceil(std::abs((limit - start) / delta));
    if (!(n < static_cast<T>(int64_t{1} << 62)))
      return absl::InvalidArgumentError(absl::StrCat("[", op, "] the range has too many elements"));
    return static_cast<int64_t>(n);
  }
}

}  // namespace tapeflow
