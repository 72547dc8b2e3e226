#include "core/checked_size.h"

#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"

namespace tapeflow {

namespace {
int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return int64_t{1} << 47;  // the x86-64 user address space
  return checked_mul(pages, page).value_or(INT64_MAX);
}
std::atomic<int64_t>& limit() {
  static std::atomic<int64_t> bytes{physical_memory_bytes()};
  return bytes;
}
}  // namespace

std::string dims_to_string(absl::Span<const int64_t> dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) absl::StrAppend(&out, i ? "," : "", dims[i] < 0 ? "?" : std::to_string(dims[i]));
  return out + "]";
}

absl::StatusOr<int64_t> checked_num_elements(absl::Span<const int64_t> dims, bool allow_unknown) {
  int64_t nonzero = 1;
  bool zero = false, unknown = false;
  for (int64_t d : dims) {
    if (d < 0) {
      if (d == -1 && allow_unknown) {
        unknown = true;
        continue;
      }
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", dims_to_string(dims), " has a negative dimension (", d, ")"));
    }
    if (d == 0) {
      zero = true;
      continue;
    }
    std::optional<int64_t> p = checked_mul(nonzero, d);
    if (!p)
      return absl::InvalidArgumentError(absl::StrCat("shape ", dims_to_string(dims),
                                                     " is too large: its element count overflows int64"));
    nonzero = *p;
  }
  if (unknown) return int64_t{-1};
  return zero ? 0 : nonzero;
}

absl::StatusOr<int64_t> checked_tensor_bytes(absl::Span<const int64_t> dims, DType dtype) {
  absl::StatusOr<int64_t> n = checked_num_elements(dims);
  if (!n.ok()) return absl::ResourceExhaustedError(std::string(n.status().message()));
  const int64_t max = max_tensor_bytes();
  std::optional<int64_t> bytes = checked_mul(*n, static_cast<int64_t>(dtype_size(dtype)));
  if (!bytes || *bytes > max)
    return absl::ResourceExhaustedError(absl::StrCat(
        "a ", dtype_name(dtype), " tensor of shape ", dims_to_string(dims), " needs ",
        bytes ? absl::StrCat(*bytes, " bytes") : std::string("more than 2^63 bytes"),
        ", over the limit of ", max, " bytes (set_max_tensor_bytes)"));
  return *bytes;
}

int64_t max_tensor_bytes() { return limit().load(std::memory_order_relaxed); }
void set_max_tensor_bytes(int64_t bytes) { limit().store(bytes, std::memory_order_relaxed); }

}  // namespace tapeflow
