// Tensor: a cheap, copyable handle to an n-dimensional array on a device.
//
//   Tensor a = {{1.f, 2.f}, {3.f, 4.f}};      // float32, shape [2,2], on CPU:0
//   Tensor s = 3.0;                            // float64 scalar
//   Tensor v(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
//   a.at<float>({1, 0});                       // 3
//   std::cout << a;                            // NumPy-style, with shape and dtype
//
// Copies share the buffer (no data is copied); ops never modify their inputs, so sharing is
// safe. A concrete tensor owns memory on one device; reading it from the host (at, item,
// to_vector, printing) copies it back when the device is not host-accessible.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "devices/device.h"
#include "eager/symbolic.h"

namespace tapeflow {

template <typename T>
concept TensorScalar = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                       std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                       std::is_same_v<T, uint8_t> || std::is_same_v<T, bool>;

struct TensorImpl {
  TensorImpl() = default;
  TensorImpl(DeviceTensor d, std::source_location o) : data(std::move(d)), origin(o) {}
  DeviceTensor data;  // buffer is null for a symbolic (graph) tensor
  std::source_location origin;  // the op call that made it (line 0 when unknown)
  SymbolicRef symbolic;         // set for a symbolic tensor: the graph node output it names
};

// What an unconnected gradient remembers (Note [Unconnected gradients]).
struct UnconnectedGradient {
  int source_index = 0;           // which of the sources passed to gradient()
  std::string source;             // "variable 'w' created at train.cc:10", "made at train.cc:12"
  std::source_location asked_at;  // the gradient() call
};

class Tensor {
 public:
  // An empty handle: defined() is false. Ops reject it with InvalidArgumentError.
  Tensor() = default;

  // Note [Unconnected gradients]: what GradientTape::gradient gives a source the target does not
  // depend on (TensorFlow's None). It is an empty handle like Tensor() (defined() is false,
  // impl() is null, so `if (!g.defined())` and optimizers that skip empty gradients work as
  // before), but it remembers which source it belongs to and where gradient() was asked, so an
  // op given it says so instead of "empty tensor". The record lives in the control block of an
  // otherwise null shared_ptr; copies keep it, and Tensor's size and layout do not change.
  static Tensor none_gradient(UnconnectedGradient info);
  // The record of a tensor made by none_gradient(); null for any other tensor.
  const UnconnectedGradient* unconnected() const;
  // How an op names an empty input, after "input 0 is ": "an empty tensor", or for an
  // unconnected gradient which source it belongs to and where it was asked.
  std::string empty_reason() const;

  // Scalars.
  template <TensorScalar T> Tensor(T value) : Tensor(std::vector<T>{value}, Shape{}) {}
  // Nested initializer lists; ragged lists throw InvalidArgumentError.
  template <TensorScalar T> Tensor(std::initializer_list<T> v) : Tensor(std::vector<T>(v), Shape{int64_t(v.size())}) {}
  template <TensorScalar T> Tensor(std::initializer_list<std::initializer_list<T>> v);
  template <TensorScalar T>
  Tensor(std::initializer_list<std::initializer_list<std::initializer_list<T>>> v);
  // Values in row-major order with a shape; the count must match.
  template <TensorScalar T>
  Tensor(const std::vector<T>& values, const Shape& shape, std::source_location loc = std::source_location::current());
  // Raw host bytes of the given dtype and shape, copied to `device`; when null, to the device
  // of the innermost device scope (as tf.constant inside `with tf.device`), else CPU:0. A shape
  // too large to allocate is a ResourceExhaustedError naming [tensor] and the caller's line.
  static Tensor from_host(DType dtype, const Shape& shape, const void* data, Device* device = nullptr,
                          std::source_location loc = std::source_location::current());
  // Wraps a kernel output.
  static Tensor from_device_tensor(DeviceTensor t, std::source_location origin = {});
  // For execution contexts: a tensor with no dtype, shape or storage yet; *storage points at its
  // DeviceTensor, which the context fills (a buffer the kernel writes) before anyone else sees
  // the tensor, so an op's output is made in place rather than built and moved.
  static Tensor make_output(std::source_location origin, DeviceTensor** storage);
  // A symbolic tensor: output `ref.output` of a graph node, with a possibly partial shape.
  static Tensor make_symbolic(SymbolicRef ref, DType dtype, Shape shape, std::source_location origin = {});
  // The user's line whose op call produced this tensor (line() == 0 when unknown).
  const std::source_location& origin() const { return checked_impl().origin; }

  bool defined() const { return impl_ != nullptr; }
  // True for a graph tensor (it has a dtype and a possibly partial shape, but no value).
  bool is_symbolic() const { return impl_ != nullptr && impl_->symbolic.graph != nullptr; }
  const SymbolicRef& symbolic() const { return checked_impl().symbolic; }
  // A symbolic tensor's name, "op_name:index" (as TensorFlow names it); "" for a concrete one.
  std::string name() const;
  // dtype(), shape() and the accessors below throw InvalidArgumentError for an empty tensor.
  DType dtype() const { return checked_impl().data.dtype; }
  const Shape& shape() const { return checked_impl().data.shape; }
  int rank() const { return shape().rank(); }
  int64_t num_elements() const { return shape().num_elements(); }
  Device* device() const { return checked_impl().data.buffer ? impl_->data.buffer->device() : nullptr; }
  // The device's full name, "" for a symbolic tensor.
  std::string device_name() const;
  const DeviceTensor& device_tensor() const { return checked_impl().data; }
  // True when two handles share one buffer (views and copies of the handle).
  bool shares_buffer_with(const Tensor& other) const;

  // Element access for debugging and tests. Errors are typed and name the accessor and the
  // caller's line, as op errors do: T must match dtype() and the tensor must be concrete and
  // not empty (InvalidArgumentError; FailedPreconditionError for a symbolic tensor); item()
  // needs one element (InvalidArgumentError); at() needs one index per dimension
  // (InvalidArgumentError), each in range (OutOfRangeError).
  template <TensorScalar T> T item(std::source_location loc = std::source_location::current()) const;
  template <TensorScalar T>
  T at(std::initializer_list<int64_t> index, std::source_location loc = std::source_location::current()) const;
  template <TensorScalar T>
  std::vector<T> to_vector(std::source_location loc = std::source_location::current()) const;
  // Copies all bytes to host memory (dst must hold num_elements() * dtype_size()).
  void copy_to_host(void* dst, std::source_location loc = std::source_location::current()) const;

  // TensorFlow's t.eval(): a symbolic tensor's value computed in the default session (an
  // InteractiveSession, graph/session.h); a concrete tensor is its own value.
  Tensor eval(std::source_location loc = std::source_location::current()) const;

  // NumPy-style text: "tapeflow.Tensor([1 2 3], shape=(3), dtype=int32)".
  std::string to_string() const;

  const TensorImpl* impl() const { return impl_.get(); }
  // *impl(), or InvalidArgumentError("[tensor] The tensor is empty ...") for an empty handle.
  const TensorImpl& checked_impl() const {
    if (impl_ == nullptr) [[unlikely]] throw_empty();
    return *impl_;
  }
  // True when no other handle, view or graph slot shares this tensor's storage: only then may
  // its owner (a Variable's in-place update, Note [In-place update]) write into it unseen.
  bool holds_storage_alone() const {
    return impl_ && impl_.use_count() == 1 && device_tensor().buffer && device_tensor().buffer.use_count() == 1;
  }

 private:
  [[noreturn]] void throw_empty() const;  // names an unconnected gradient as such
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- implementation details of the templates above ----
namespace internal {
[[noreturn]] void throw_ragged(size_t expected, size_t got);
// `api` names the accessor in messages ("item"); loc is the caller's line.
void check_host_read(const Tensor& t, DType requested, const char* api, std::source_location loc);
void check_one_element(const Tensor& t, std::source_location loc);
// Copies the element at `index` (checked against the shape) to out, which holds `bytes`.
void read_element(const Tensor& t, std::initializer_list<int64_t> index, void* out, size_t bytes,
                  std::source_location loc);
}  // namespace internal

template <TensorScalar T>
Tensor::Tensor(const std::vector<T>& values, const Shape& shape, std::source_location loc) {
  // The count is checked before anything is allocated (a huge shape never reaches the allocator).
  if (static_cast<int64_t>(values.size()) != shape.num_elements()) internal::throw_ragged(shape.num_elements(), values.size());
  *this = from_host(dtype_of<T>(), shape, nullptr, nullptr, loc);
  if constexpr (std::is_same_v<T, bool>) {
    bool* out = impl_->data.data<bool>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  } else {
    std::copy(values.begin(), values.end(), impl_->data.data<T>());
  }
}

template <TensorScalar T>
Tensor::Tensor(std::initializer_list<std::initializer_list<T>> v) {
  std::vector<T> flat;
  const size_t cols = v.size() ? v.begin()->size() : 0;
  for (const auto& row : v) {
    if (row.size() != cols) internal::throw_ragged(cols, row.size());
    flat.insert(flat.end(), row.begin(), row.end());
  }
  *this = Tensor(flat, Shape{int64_t(v.size()), int64_t(cols)});
}

template <TensorScalar T>
Tensor::Tensor(std::initializer_list<std::initializer_list<std::initializer_list<T>>> v) {
  std::vector<T> flat;
  const size_t rows = v.size() ? v.begin()->size() : 0;
  const size_t cols = rows ? v.begin()->begin()->size() : 0;
  for (const auto& mat : v) {
    if (mat.size() != rows) internal::throw_ragged(rows, mat.size());
    for (const auto& row : mat) {
      if (row.size() != cols) internal::throw_ragged(cols, row.size());
      flat.insert(flat.end(), row.begin(), row.end());
    }
  }
  *this = Tensor(flat, Shape{int64_t(v.size()), int64_t(rows), int64_t(cols)});
}

// Note [Accessor templates]: item, at and to_vector are defined here, not instantiated in
// tensor.cc: clang 18 and later mangle a constrained template differently from g++ 12 (a `Tk`
// part), so a REPL or a clang-built program could not link against g++'s instantiations. The
// work is in non-template functions.
template <TensorScalar T> T Tensor::item(std::source_location loc) const {
  internal::check_host_read(*this, dtype_of<T>(), "item", loc);
  internal::check_one_element(*this, loc);
  return to_vector<T>(loc)[0];
}

template <TensorScalar T> T Tensor::at(std::initializer_list<int64_t> index, std::source_location loc) const {
  internal::check_host_read(*this, dtype_of<T>(), "at", loc);
  T out{};
  internal::read_element(*this, index, &out, sizeof(T), loc);
  return out;
}

template <TensorScalar T> std::vector<T> Tensor::to_vector(std::source_location loc) const {
  internal::check_host_read(*this, dtype_of<T>(), "to_vector", loc);
  std::vector<T> out(static_cast<size_t>(num_elements()));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(out.size());
    copy_to_host(bytes.data(), loc);
    for (size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != 0;
  } else {
    copy_to_host(out.data(), loc);
  }
  return out;
}

}  // namespace tapeflow
