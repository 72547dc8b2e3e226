#include "devices/numerics.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "devices/device_manager.h"

namespace tapeflow {
namespace {

template <typename T>
int64_t first_non_finite(const T* values, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) return i;
  }
  return -1;
}

// "[1,2]" for element 5 of a [2,3] tensor; "[]" for a scalar.
std::string element_index(int64_t flat, const Shape& shape) {
  std::string out;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    const int64_t dim = shape.dim(d);
    out = absl::StrCat(flat % dim, out.empty() ? "" : ",", out);
    flat /= dim;
  }
  return absl::StrCat("[", out, "]");
}

}  // namespace

absl::Status check_finite(const DeviceTensor& t, std::string_view what) {
  if (!is_floating(t.dtype) || !t.buffer || t.num_elements() == 0) return absl::OkStatus();
  DeviceTensor host = t;
  if (!t.device()->host_accessible()) {
    absl::StatusOr<DeviceTensor> copy = DeviceManager::global().copy_to(t, DeviceManager::global().cpu(0));
    if (!copy.ok()) return copy.status();
    host = *std::move(copy);
  }
  const int64_t n = host.num_elements();
  const int64_t at = host.dtype == DType::kFloat32 ? first_non_finite(host.data<float>(), n)
                                                   : first_non_finite(host.data<double>(), n);
  if (at < 0) return absl::OkStatus();
  const double value = host.dtype == DType::kFloat32 ? double{host.data<float>()[at]} : host.data<double>()[at];
  const char* kind = std::isnan(value) ? "NaN" : (value > 0 ? "+Inf" : "-Inf");
  return absl::InvalidArgumentError(absl::StrCat(absl::string_view(what.data(), what.size()), " has ", kind,
                                                 " at element ", element_index(at, host.shape), " of a ",
                                                 host.shape.to_string(), " ", dtype_name(host.dtype), " tensor"));
}

}  // namespace tapeflow
