#include "eager/operand.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/context.h"

namespace tapeflow {

namespace {
template <typename T> bool fits(double v) {
  if constexpr (std::is_floating_point_v<T>) return true;
  else if constexpr (std::is_same_v<T, bool>) return v == 0 || v == 1;
  else return std::floor(v) == v && v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
              v <= static_cast<double>(std::numeric_limits<T>::max());
}
template <typename T> bool fits_int(int64_t v) {
  if constexpr (std::is_floating_point_v<T>) return true;
  else if constexpr (std::is_same_v<T, bool>) return v == 0 || v == 1;
  else return v >= static_cast<int64_t>(std::numeric_limits<T>::lowest()) &&
              static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
}

// Note [Weak scalar cache]: `y * 0.999f` in a loop would allocate a fresh 1-element tensor for
// the scalar on every call, which costs as much as the multiply. Tensors are immutable (no API
// writes into a tensor's buffer, and the graph executor writes in place only into buffers no one
// else holds), so equal scalars on the same CPU device can share one. A small direct-mapped
// cache per thread keeps the recent ones; GPU scalars are not kept (they would outlive the
// device at exit).
struct CachedScalar {
  Device* device = nullptr;
  DType dtype = DType::kFloat32;
  uint64_t bits = 0;
  Tensor tensor;
};
constexpr int kScalarCacheBits = 4;

template <typename T> Tensor cached_scalar(DType dtype, T value, Device* device) {
  if (device == nullptr) device = default_device();
  if (device->type() != DeviceType::kCPU) return Tensor::from_host(dtype, Shape{}, &value, device);
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  thread_local std::array<CachedScalar, size_t{1} << kScalarCacheBits> cache;
  const uint64_t hash = (bits + static_cast<uint64_t>(dtype)) * 0x9E3779B97F4A7C15ull;
  CachedScalar& entry = cache[hash >> (64 - kScalarCacheBits)];
  if (!entry.tensor.defined() || entry.bits != bits || entry.dtype != dtype || entry.device != device)
    entry = CachedScalar{device, dtype, bits, Tensor::from_host(dtype, Shape{}, &value, device)};
  return entry.tensor;
}
}  // namespace

Tensor Operand::resolve(const char* op, const DType* dtype_hint, Device* device) const {
  if (ref_) return *ref_;
  if (tensor_.defined() || std::holds_alternative<std::monostate>(weak_)) return tensor_;
  const DType target = dtype_hint ? *dtype_hint : weak_dtype_;
  return dispatch_dtype(target, [&]<typename T>() -> Tensor {
    bool ok = true;
    T value{};
    const double* d = std::get_if<double>(&weak_);
    const int64_t* i = std::get_if<int64_t>(&weak_);
    if (d) {
      ok = fits<T>(*d); value = static_cast<T>(*d);
    } else if (i) {
      ok = fits_int<T>(*i); value = static_cast<T>(*i);
    } else {
      value = static_cast<T>(std::get<bool>(weak_));  // true and false fit every dtype
    }
    if (!ok)  // the text is built only here: formatting every scalar costs time on the hot path
      throw InvalidArgumentError(absl::StrCat("[", op, "] the scalar ", d ? absl::StrCat(*d) : absl::StrCat(*i),
                                              " cannot be converted to ", dtype_name(target),
                                              " without changing its value"),
                                 loc_);
    return cached_scalar<T>(target, value, device);
  });
}

namespace {
// A weak scalar is made where the op will run: the device scope's device if there is one
// (Tensor::from_host's default), else beside the other operand. Either way no copy is needed.
Device* scalar_home(const Tensor& other) {
  return in_device_scope() ? nullptr : other.device();
}
}  // namespace

std::pair<Tensor, Tensor> resolve_pair(const char* op, const Operand& x, const Operand& y) {
  if (x.is_weak() && !y.is_weak()) {
    Tensor ty = y.resolve(op, nullptr);
    if (!ty.defined())
      throw InvalidArgumentError(absl::StrCat("[", op, "] input 'y' is ", ty.empty_reason()), y.location());
    const DType dt = ty.dtype();
    return {x.resolve(op, &dt, scalar_home(ty)), ty};
  }
  Tensor tx = x.resolve(op, nullptr);
  if (y.is_weak() && tx.defined()) {
    const DType dt = tx.dtype();
    return {tx, y.resolve(op, &dt, scalar_home(tx))};
  }
  return {tx, y.resolve(op, nullptr)};
}

}  // namespace tapeflow
