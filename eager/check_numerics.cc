#include "eager/check_numerics.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "devices/numerics.h"

namespace tapeflow {
namespace {

// Note [Check numerics cost]: the flag is read with a relaxed load on every op's path (eager
// context and executor); a Session's plans are not rebuilt when it changes, so turning the
// checks on or off takes effect at the next op or node anywhere.
std::atomic<bool> g_check_numerics{false};

}  // namespace

void enable_check_numerics() { g_check_numerics.store(true, std::memory_order_relaxed); }
void disable_check_numerics() { g_check_numerics.store(false, std::memory_order_relaxed); }
bool check_numerics_enabled() { return g_check_numerics.load(std::memory_order_relaxed); }

namespace internal {

absl::Status check_outputs_finite(absl::Span<const DeviceTensor> outputs,
                                  absl::Span<const DeviceTensor* const> inputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    absl::Status st = check_finite(outputs[k], absl::StrCat("check_numerics: output ", k));
    if (st.ok()) continue;
    std::string described;
    for (const DeviceTensor* in : inputs) {
      absl::StrAppend(&described, described.empty() ? "" : ", ", in->shape.to_string(), " ", dtype_name(in->dtype));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(st.message(), "; inputs: ", described.empty() ? "none" : described));
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace tapeflow
