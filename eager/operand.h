// Operand: what binary op functions and C++ operators accept. A Tensor, a Variable (read
// when used), a nested initializer list, or a plain C++ scalar. A plain scalar is "weak": it
// takes the dtype of the other operand, as a Python number does in TensorFlow
// (`x * 2` keeps x's float32), and it is an error when the value does not fit that dtype.
//
// Operand also remembers where it was made. For `a + b` that is the line of the expression,
// so errors from C++ operators still name the user's line.
#pragma once

#include <concepts>
#include <source_location>
#include <variant>

#include "eager/tensor.h"

namespace tapeflow {

// Note [Operand refers]: made from a named tensor, an Operand refers to it instead of copying
// the handle (as std::string_view refers to a string): a copy costs two atomic reference-count
// updates, a tenth of a small op. An Operand is a parameter type; one made from a temporary
// (`a + b`) owns it, and copying an Operand copies the tensor handle, so only a named Operand
// variable that outlives its tensor could dangle.
class Operand {
 public:
  Operand(const Tensor& t, std::source_location loc = std::source_location::current())
      : ref_(&t), loc_(loc) {}
  Operand(Tensor&& t, std::source_location loc = std::source_location::current())
      : tensor_(std::move(t)), loc_(loc) {}
  Operand(const Operand& other)
      : tensor_(other.strong()), weak_(other.weak_), weak_dtype_(other.weak_dtype_), loc_(other.loc_) {}
  Operand& operator=(const Operand& other) {
    if (this != &other) {
      tensor_ = other.strong();
      ref_ = nullptr;
      weak_ = other.weak_;
      weak_dtype_ = other.weak_dtype_;
      loc_ = other.loc_;
    }
    return *this;
  }
  template <TensorScalar T>
  Operand(T v, std::source_location loc = std::source_location::current())
      : weak_(weak_value(v)), weak_dtype_(dtype_of<T>()), loc_(loc) {}
  template <TensorScalar T>
  Operand(std::initializer_list<T> v, std::source_location loc = std::source_location::current())
      : tensor_(v), loc_(loc) {}
  template <TensorScalar T>
  Operand(std::initializer_list<std::initializer_list<T>> v,
          std::source_location loc = std::source_location::current())
      : tensor_(v), loc_(loc) {}
  // Anything with a read() returning a Tensor (Variable).
  template <typename V>
    requires requires(const V& v) { { v.read() } -> std::same_as<Tensor>; }
  Operand(const V& v, std::source_location loc = std::source_location::current())
      : tensor_(v.read(loc)), loc_(loc) {}  // the read node carries the user's line too

  // The tensor when this operand is one (not a weak scalar, not empty); else null.
  const Tensor* tensor() const {
    const Tensor& t = strong();
    return t.defined() ? &t : nullptr;
  }
  bool is_weak() const { return !strong().defined() && !std::holds_alternative<std::monostate>(weak_); }
  const std::source_location& location() const { return loc_; }
  // The tensor; a weak scalar becomes a tensor of `dtype` (or of its own C++ type's dtype
  // when dtype_hint is null). Throws InvalidArgumentError naming `op` if the value does not fit.
  // A weak scalar is made on `device` (the other operand's), or per Tensor::from_host's rule.
  Tensor resolve(const char* op, const DType* dtype_hint, Device* device = nullptr) const;

 private:
  template <typename T> static std::variant<std::monostate, double, int64_t, bool> weak_value(T v) {
    if constexpr (std::is_same_v<T, bool>) return v;
    else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(v);
    else return static_cast<int64_t>(v);
  }

  const Tensor& strong() const { return ref_ ? *ref_ : tensor_; }

  Tensor tensor_;
  const Tensor* ref_ = nullptr;  // Note [Operand refers]
  std::variant<std::monostate, double, int64_t, bool> weak_;
  DType weak_dtype_ = DType::kFloat32;
  std::source_location loc_;
};

// Resolves two operands together: a weak one adopts the other's dtype.
std::pair<Tensor, Tensor> resolve_pair(const char* op, const Operand& x, const Operand& y);

}  // namespace tapeflow
