// Op attributes: typed, named values that configure an op call (axis, transpose flags, ...).
// The same AttrMap travels with an eager call, a kernel invocation and, later, a graph node.
//
//   AttrMap attrs;
//   attrs.set("transpose_a", true);
//   attrs.get<bool>("transpose_a");   // true
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace tapeflow {

using AttrValue = std::variant<int64_t, double, bool, DType, std::vector<int64_t>, std::string, Shape>;

class AttrMap {
 public:
  AttrMap() = default;
  AttrMap(std::initializer_list<std::pair<std::string, AttrValue>> init) : items_(init) {}

  void set(std::string_view name, AttrValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttrValue* find(std::string_view name) const;

  // Typed access. The public op functions always set their ops' attributes, but a node from a
  // GraphDef or a fuzzer may lack one or carry another type: that is an InvalidArgumentError
  // naming the attribute, never a crash.
  template <typename T> const T& get(std::string_view name) const {
    const AttrValue* v = find(name);
    if (v == nullptr || !std::holds_alternative<T>(*v)) [[unlikely]]
      throw_bad_attr(name, v, AttrValue(std::in_place_type<T>).index());
    return std::get<T>(*v);
  }
  template <typename T> T get_or(std::string_view name, T fallback) const {
    const AttrValue* v = find(name);
    if (v == nullptr) return fallback;
    if (!std::holds_alternative<T>(*v)) [[unlikely]]
      throw_bad_attr(name, v, AttrValue(std::in_place_type<T>).index());
    return std::get<T>(*v);
  }
  bool empty() const { return items_.empty(); }
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  std::string to_string() const;

 private:
  [[noreturn]] static void throw_bad_attr(std::string_view name, const AttrValue* found, size_t wanted_index);
  std::vector<std::pair<std::string, AttrValue>> items_;
};

std::string attr_value_to_string(const AttrValue& v);

}  // namespace tapeflow
