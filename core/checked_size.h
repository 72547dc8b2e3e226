// Checked sizes: every element count, byte size and offset computed from user input goes
// through these helpers, so a huge or hostile shape is a typed error before anything is
// allocated, never a wrapped product (Note [Checked sizes]).
//
//   TF_ASSIGN_OR_RETURN(int64_t n, checked_num_elements(shape.dims()));
//   std::optional<int64_t> end = checked_add(offset, length);   // nullopt on overflow
//   set_max_tensor_bytes(int64_t{1} << 30);                     // refuse tensors over 1 GiB
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"

namespace tapeflow {

// Note [Checked sizes]: a shape is valid when each dim is >= 0 (or -1, unknown, in a graph) and
// the product of its non-zero dims fits in int64. Zero dims are left out of that product on
// purpose: [2^32, 2^32, 0] holds no element, but strides and per-dim loops multiply the other
// dims, so it is refused as TensorFlow refuses it. A tensor's bytes must also stay within
// max_tensor_bytes() (ResourceExhausted), checked before the allocator is asked.

inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The number of elements of fully known dims, or InvalidArgument ("shape [..] is too large:
// ...") when a dim is negative or the non-zero dims' product overflows int64. Unknown dims (-1)
// are accepted when allow_unknown is set and then count as 1 for the check (the result is -1).
absl::StatusOr<int64_t> checked_num_elements(absl::Span<const int64_t> dims, bool allow_unknown = false);

// elements * dtype_size(dtype), or ResourceExhausted when it overflows or exceeds
// max_tensor_bytes(); the message names the shape, the dtype and the limit.
absl::StatusOr<int64_t> checked_tensor_bytes(absl::Span<const int64_t> dims, DType dtype);

// The largest tensor a device may allocate, in bytes. Default: the machine's physical memory
// (no allocator can ever serve more). Thread-safe.
int64_t max_tensor_bytes();
void set_max_tensor_bytes(int64_t bytes);

// "[2,3]" for messages (core/shape.h's format, without needing a Shape).
std::string dims_to_string(absl::Span<const int64_t> dims);

}  // namespace tapeflow
