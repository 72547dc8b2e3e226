#include "core/attr.h"

#include <iterator>

#include "core/errors.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tapeflow {

void AttrMap::set(std::string_view name, AttrValue value) {
  for (auto& [k, v] : items_) {
    if (k == name) { v = std::move(value); return; }
  }
  items_.emplace_back(std::string(name), std::move(value));
}

const AttrValue* AttrMap::find(std::string_view name) const {
  for (const auto& [k, v] : items_) if (k == name) return &v;
  return nullptr;
}

std::string attr_value_to_string(const AttrValue& v) {
  struct Printer {
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const { return absl::StrCat(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(DType x) const { return std::string(dtype_name(x)); }
    std::string operator()(const std::vector<int64_t>& x) const {
      return absl::StrCat("[", absl::StrJoin(x, ","), "]");
    }
    std::string operator()(const std::string& x) const { return absl::StrCat("\"", x, "\""); }
    std::string operator()(const Shape& x) const { return x.to_string(); }
  };
  return std::visit(Printer{}, v);
}

namespace {
// The AttrValue alternatives' names, in index order.
constexpr const char* kAttrKinds[] = {"int", "float", "bool", "type", "ints", "string", "shape"};
static_assert(std::size(kAttrKinds) == std::variant_size_v<AttrValue>);
}  // namespace

void AttrMap::throw_bad_attr(std::string_view name, const AttrValue* found, size_t wanted_index) {
  if (found == nullptr)
    throw InvalidArgumentError(absl::StrCat("attribute '", absl::string_view(name.data(), name.size()),
                                            "' is missing (expected ", kAttrKinds[wanted_index], ")"),
                               std::source_location());
  throw InvalidArgumentError(absl::StrCat("attribute '", absl::string_view(name.data(), name.size()), "' is ",
                                          kAttrKinds[found->index()], " ", attr_value_to_string(*found),
                                          "; expected ", kAttrKinds[wanted_index]),
                             std::source_location());
}

std::string AttrMap::to_string() const {
  std::string out = "{";
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i) out += ", ";
    absl::StrAppend(&out, items_[i].first, "=", attr_value_to_string(items_[i].second));
  }
  return out + "}";
}

}  // namespace tapeflow
