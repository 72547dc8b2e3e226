// Graph -> GraphDef, the OpDef forms (Note [GraphDef form]), the value conversions both
// directions share, and the text / binary / file edge. Import is graph_def_import.cc.
#include "graph/graph_def.h"
#include "graph/graph_def_functional.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "graph/graph_ops.h"

namespace tapeflow {
namespace graph_def_internal {

namespace {

absl::Status form_error(const OpDef& op, std::string_view item, absl::string_view why) {
  return absl::InternalError(absl::StrCat("[", op.api_name, "] OpDef ", op.type, ": tf_form item '",
                                          absl::string_view(item.data(), item.size()), "' ", why));
}

bool known_kind(std::string_view kind, bool input) {
  static const std::vector<std::string_view> kAttrKinds = {"int", "float", "bool", "type", "ints", "string", "shape", "hw"};
  static const std::vector<std::string_view> kInputKinds = {"int", "ints", "idx", "pairs", "shape", "val", "num"};
  for (std::string_view k : input ? kInputKinds : kAttrKinds) if (k == kind) return true;
  return false;
}

// A literal of a form (a default or a fixed attr) as a TensorFlow AttrValue.
absl::StatusOr<proto::AttrValue> parse_literal(std::string_view text, std::string_view kind) {
  proto::AttrValue v;
  auto parse_ints = [&](std::string_view t) -> absl::Status {
    if (t.size() < 2 || t.front() != '[' || t.back() != ']') return absl::InvalidArgumentError("bad list");
    v.mutable_list();
    for (absl::string_view part : absl::StrSplit(absl::string_view(t.data() + 1, t.size() - 2), ',', absl::SkipEmpty())) {
      int64_t x;
      if (!absl::SimpleAtoi(part, &x)) return absl::InvalidArgumentError("bad list entry");
      v.mutable_list()->add_i(x);
    }
    return absl::OkStatus();
  };
  const absl::string_view t(text.data(), text.size());
  DType dt;
  int64_t i;
  double d;
  if (kind == "int" || (kind.empty() && absl::SimpleAtoi(t, &i))) {
    if (!absl::SimpleAtoi(t, &i)) return absl::InvalidArgumentError("bad int");
    v.set_i(i);
  } else if (kind == "float") {
    if (!absl::SimpleAtod(t, &d)) return absl::InvalidArgumentError("bad float");
    v.set_f(static_cast<float>(d));
  } else if (kind == "bool" || (kind.empty() && (t == "true" || t == "false"))) {
    if (t != "true" && t != "false") return absl::InvalidArgumentError("bad bool");
    v.set_b(t == "true");
  } else if (kind == "type" || (kind.empty() && parse_dtype(text, &dt))) {
    if (!parse_dtype(text, &dt)) return absl::InvalidArgumentError("bad dtype");
    TF_ASSIGN_OR_RETURN(proto::DataType p, to_proto_dtype(dt));
    v.set_type(p);
  } else if (kind == "ints" || kind == "hw" || (kind.empty() && !t.empty() && t.front() == '[')) {
    TF_RETURN_IF_ERROR(parse_ints(text));
  } else if (kind == "string" || kind.empty()) {
    v.set_s(std::string(text));
  } else {
    return absl::InvalidArgumentError("no literal of this kind");
  }
  return v;
}

absl::StatusOr<Form> parse_form(const OpDef& op) {
  Form form;
  if (op.tf_form == nullptr) {
    if (op.num_inputs != 0) {
      FormItem t;
      t.kind = FormItem::Kind::kTypeOf;
      t.name = std::string(1, 'T');  // not = "T": GCC 12's -O3 -Wrestrict false positive (PR 105329)
      form.items.push_back(std::move(t));
    }
    return form;
  }
  for (absl::string_view part : absl::StrSplit(op.tf_form, ' ', absl::SkipEmpty())) {
    const std::string_view item(part.data(), part.size());
    FormItem f;
    if (item.front() == '-') {
      f.kind = FormItem::Kind::kDerived;
      f.name = std::string(item.substr(1));
    } else if (size_t at = item.find('@'); at != std::string_view::npos) {
      f.kind = FormItem::Kind::kInput;
      f.name = std::string(item.substr(0, at));
      std::string_view kind = item.substr(at + 1);
      if (size_t hash = kind.find('#'); hash != std::string_view::npos) {
        if (!absl::SimpleAtoi(absl::string_view(kind.data() + hash + 1, kind.size() - hash - 1), &f.position))
          return form_error(op, item, "has a bad position");
        kind = kind.substr(0, hash);
      }
      if (!known_kind(kind, true)) return form_error(op, item, "has an unknown input kind");
      f.value_kind = std::string(kind);
      ++form.num_const_inputs;
    } else if (size_t eq = item.find('='), colon = item.find(':'); eq != std::string_view::npos && (colon == std::string_view::npos || eq < colon)) {
      f.name = std::string(item.substr(0, eq));
      const std::string_view src = item.substr(eq + 1);
      if (src == "count") {
        f.kind = FormItem::Kind::kCount;
      } else if (src.starts_with("ins") &&
                 (src.size() == 3 || absl::SimpleAtoi(absl::string_view(src.data() + 3, src.size() - 3), &f.index))) {
        f.kind = FormItem::Kind::kTypesOfInputs;  // "ins": all inputs; "ins1": from input 1
      } else if (src == "index") {
        f.kind = FormItem::Kind::kFixed;  // written int32; int64 read too (Note [GraphDef form])
        f.index_dtype = true;
        f.default_value.set_type(proto::DT_INT32);
        f.has_default = true;
      } else if (const size_t skip = src.starts_with("out") ? 3 : src.starts_with("in") ? 2 : 0;
                 skip > 0 && src.size() > skip &&
                 absl::SimpleAtoi(absl::string_view(src.data() + skip, src.size() - skip), &f.index)) {
        f.kind = FormItem::Kind::kTypeOf;  // "in0", "out0"; "int32" is a literal
        f.of_output = skip == 3;
      } else {
        f.kind = FormItem::Kind::kFixed;
        auto lit = parse_literal(src, "");
        if (!lit.ok()) return form_error(op, item, lit.status().message());
        f.default_value = *lit;
        f.has_default = true;
      }
    } else if (colon != std::string_view::npos) {
      f.kind = FormItem::Kind::kAttr;
      std::string_view names = item.substr(0, colon), rest = item.substr(colon + 1);
      if (size_t gt = names.find('>'); gt != std::string_view::npos) {
        f.name = std::string(names.substr(0, gt));
        f.tf_name = std::string(names.substr(gt + 1));
      } else {
        f.name = f.tf_name = std::string(names);
      }
      if (rest.ends_with('?')) {
        f.omit_default = true;
        rest.remove_suffix(1);
      }
      if (size_t eq2 = rest.find('='); eq2 != std::string_view::npos) {
        auto lit = parse_literal(rest.substr(eq2 + 1), rest.substr(0, eq2));
        if (!lit.ok()) return form_error(op, item, lit.status().message());
        f.default_value = *lit;
        f.has_default = true;
        rest = rest.substr(0, eq2);
      }
      if (!known_kind(rest, false)) return form_error(op, item, "has an unknown attr kind");
      f.value_kind = std::string(rest);
    } else {
      return form_error(op, item, "is not name:kind, name@kind, X=source or -name");
    }
    form.items.push_back(std::move(f));
  }
  return form;
}

}  // namespace

bool Form::lists(std::string_view tapeflow_attr) const {
  for (const FormItem& f : items)
    if ((f.kind == FormItem::Kind::kAttr || f.kind == FormItem::Kind::kInput || f.kind == FormItem::Kind::kDerived) &&
        f.name == tapeflow_attr)
      return true;
  return false;
}

const Form& form_of(const OpDef& op) {
  // Import and export ask once per node, for the few ops a graph uses: each thread keeps the
  // answers it has had, so only an op's first use on a thread takes the shared cache's lock.
  thread_local absl::flat_hash_map<const OpDef*, const Form*> seen;
  if (auto hit = seen.find(&op); hit != seen.end()) return *hit->second;
  static std::mutex mu;
  // Node-based and never erased: a form handed out stays where it is when later ones are added.
  static auto* cache = new absl::node_hash_map<const OpDef*, Form>();
  const Form* form = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(&op);
    if (it == cache->end()) {
      absl::StatusOr<Form> parsed = parse_form(op);
      throw_if_error(parsed.status());
      it = cache->emplace(&op, *std::move(parsed)).first;
    }
    form = &it->second;
  }
  seen.emplace(&op, form);
  return *form;
}

// ---- dtypes, shapes, tensors ----

absl::StatusOr<proto::DataType> to_proto_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return proto::DT_FLOAT;
    case DType::kFloat64: return proto::DT_DOUBLE;
    case DType::kInt32: return proto::DT_INT32;
    case DType::kInt64: return proto::DT_INT64;
    case DType::kUInt8: return proto::DT_UINT8;
    case DType::kBool: return proto::DT_BOOL;
  }
  return absl::InternalError("unknown dtype");
}

absl::StatusOr<DType> from_proto_dtype(proto::DataType dtype) {
  switch (dtype) {
    case proto::DT_FLOAT: return DType::kFloat32;
    case proto::DT_DOUBLE: return DType::kFloat64;
    case proto::DT_INT32: return DType::kInt32;
    case proto::DT_INT64: return DType::kInt64;
    case proto::DT_UINT8: return DType::kUInt8;
    case proto::DT_BOOL: return DType::kBool;
    default: break;
  }
  const std::string name = proto::DataType_IsValid(dtype) ? proto::DataType_Name(dtype) : absl::StrCat(int(dtype));
  return absl::UnimplementedError(absl::StrCat("dtype ", name, " is not supported by tapeflow"));
}

void shape_to_proto(const Shape& shape, proto::TensorShapeProto* out) {
  out->Clear();
  for (int64_t d : shape.dims()) out->add_dim()->set_size(d < 0 ? -1 : d);
}

absl::Status tensor_to_proto(const Tensor& tensor, proto::TensorProto* out) {
  if (!tensor.defined() || tensor.is_symbolic())
    return absl::InternalError("a Const node without a concrete value");
  TF_ASSIGN_OR_RETURN(proto::DataType dt, to_proto_dtype(tensor.dtype()));
  out->set_dtype(dt);
  shape_to_proto(tensor.shape(), out->mutable_tensor_shape());
  const int64_t n = tensor.num_elements();
  const size_t bytes = static_cast<size_t>(n) * dtype_size(tensor.dtype());
  std::string content(bytes, '\0');
  if (bytes) tensor.copy_to_host(content.data());
  const size_t width = dtype_size(tensor.dtype());
  bool all_equal = n > 1;
  for (int64_t i = 1; all_equal && i < n; ++i)
    all_equal = std::memcmp(content.data(), content.data() + i * width, width) == 0;
  if (n > kTypedValLimit && !all_equal) {
    out->set_tensor_content(std::move(content));  // little-endian, as on every machine we build for
    return absl::OkStatus();
  }
  const int64_t count = all_equal ? 1 : n;
  dispatch_dtype(tensor.dtype(), [&]<typename T>() {
    for (int64_t i = 0; i < count; ++i) {
      T x;
      std::memcpy(&x, content.data() + i * sizeof(T), sizeof(T));
      if constexpr (std::is_same_v<T, float>) out->add_float_val(x);
      else if constexpr (std::is_same_v<T, double>) out->add_double_val(x);
      else if constexpr (std::is_same_v<T, int64_t>) out->add_int64_val(x);
      else if constexpr (std::is_same_v<T, bool>) out->add_bool_val(x);
      else out->add_int_val(static_cast<int32_t>(x));  // int32, uint8: TensorFlow's int_val
    }
  });
  return absl::OkStatus();
}

absl::StatusOr<Tensor> tensor_from_proto(const proto::TensorProto& proto) {
  TF_ASSIGN_OR_RETURN(DType dtype, from_proto_dtype(proto.dtype()));
  const proto::TensorShapeProto& sp = proto.tensor_shape();
  if (sp.unknown_rank()) return absl::InvalidArgumentError("the tensor's shape has an unknown rank");
  Shape shape;
  int64_t n = 1;
  for (const auto& d : sp.dim()) {
    if (d.size() < 0) return absl::InvalidArgumentError("the tensor's shape has an unknown dimension");
    if (d.size() > 0 && n > (int64_t{1} << 40) / d.size())
      return absl::InvalidArgumentError("the tensor has more than 2^40 elements");
    n *= d.size();
    shape.push_back(d.size());
  }
  const size_t width = dtype_size(dtype);
  // One value may stand for a whole (huge) shape: the size is checked against max_tensor_bytes()
  // before the buffer below is allocated and filled (an untrusted GraphDef cannot make us touch
  // gigabytes), and running out of memory anyway is an error, not a crash.
  TF_RETURN_IF_ERROR(checked_tensor_bytes(shape.dims(), dtype).status());
  std::string data;
  try {
    data.assign(static_cast<size_t>(n) * width, '\0');
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory for a constant of shape ", shape.to_string()));
  }
  if (!proto.tensor_content().empty()) {
    if (proto.tensor_content().size() != data.size())
      return absl::InvalidArgumentError(absl::StrCat("tensor_content has ", proto.tensor_content().size(),
                                                     " bytes; shape ", shape.to_string(), " of ", dtype_name(dtype),
                                                     " needs ", data.size()));
    data = proto.tensor_content();
  } else {
    absl::Status status = absl::OkStatus();
    dispatch_dtype(dtype, [&]<typename T>() {
      auto fill = [&](const auto& field, const char* field_name) {
        const int64_t c = field.size();
        if (c > n) {
          status = absl::InvalidArgumentError(absl::StrCat(field_name, " has ", c, " values for shape ",
                                                           shape.to_string(), " (", n, " elements)"));
          return;
        }
        // TensorFlow's rule: fewer values than elements repeat the last one (one value: a fill).
        for (int64_t i = 0; i < n && c > 0; ++i) {
          const T v = static_cast<T>(field.Get(static_cast<int>(std::min(i, c - 1))));
          std::memcpy(data.data() + i * width, &v, width);
        }
      };
      if constexpr (std::is_same_v<T, float>) fill(proto.float_val(), "float_val");
      else if constexpr (std::is_same_v<T, double>) fill(proto.double_val(), "double_val");
      else if constexpr (std::is_same_v<T, int64_t>) fill(proto.int64_val(), "int64_val");
      else if constexpr (std::is_same_v<T, bool>) fill(proto.bool_val(), "bool_val");
      else fill(proto.int_val(), "int_val");
    });
    TF_RETURN_IF_ERROR(status);
  }
  try {
    return Tensor::from_host(dtype, shape, data.data());
  } catch (const Error& e) {
    return e.status();
  }
}

// ---- attrs ----

std::string natural_kind(const AttrValue& value) {
  struct K {
    std::string operator()(int64_t) const { return "int"; }
    std::string operator()(double) const { return "float"; }
    std::string operator()(bool) const { return "bool"; }
    std::string operator()(DType) const { return "type"; }
    std::string operator()(const std::vector<int64_t>&) const { return "ints"; }
    std::string operator()(const std::string&) const { return "string"; }
    std::string operator()(const Shape&) const { return "shape"; }
  };
  return std::visit(K{}, value);
}

std::string natural_kind(const proto::AttrValue& value) {
  switch (value.value_case()) {
    case proto::AttrValue::kI: return "int";
    case proto::AttrValue::kF: return "float";
    case proto::AttrValue::kB: return "bool";
    case proto::AttrValue::kType: return "type";
    case proto::AttrValue::kS: return "string";
    case proto::AttrValue::kShape: return "shape";
    case proto::AttrValue::kList: {  // only integer lists have a tapeflow attr type ("_class" lists strings)
      const auto& l = value.list();
      const bool other = l.s_size() || l.f_size() || l.b_size() || l.type_size() || l.shape_size() || l.tensor_size();
      return other ? "" : "ints";
    }
    default: return "";
  }
}

absl::StatusOr<proto::AttrValue> attr_to_proto(const AttrValue& value, std::string_view kind) {
  proto::AttrValue out;
  const auto mismatch = [&] {
    return absl::InternalError(absl::StrCat("attr of kind ", natural_kind(value), " where the form says ",
                                            absl::string_view(kind.data(), kind.size())));
  };
  if (kind == "int" && std::holds_alternative<int64_t>(value)) out.set_i(std::get<int64_t>(value));
  else if (kind == "float" && std::holds_alternative<double>(value)) out.set_f(static_cast<float>(std::get<double>(value)));
  else if (kind == "bool" && std::holds_alternative<bool>(value)) out.set_b(std::get<bool>(value));
  else if (kind == "type" && std::holds_alternative<DType>(value)) {
    TF_ASSIGN_OR_RETURN(proto::DataType dt, to_proto_dtype(std::get<DType>(value)));
    out.set_type(dt);
  } else if (kind == "ints" && std::holds_alternative<std::vector<int64_t>>(value)) {
    out.mutable_list();
    for (int64_t x : std::get<std::vector<int64_t>>(value)) out.mutable_list()->add_i(x);
  } else if (kind == "hw" && std::holds_alternative<std::vector<int64_t>>(value)) {
    const auto& v = std::get<std::vector<int64_t>>(value);
    auto* list = out.mutable_list();
    if (v.size() == 2) {
      for (int64_t x : {int64_t{1}, v[0], v[1], int64_t{1}}) list->add_i(x);
    } else {
      for (int64_t x : v) list->add_i(x);
    }
  } else if (kind == "string" && std::holds_alternative<std::string>(value)) out.set_s(std::get<std::string>(value));
  else if (kind == "shape" && std::holds_alternative<Shape>(value)) shape_to_proto(std::get<Shape>(value), out.mutable_shape());
  else return mismatch();
  return out;
}

absl::StatusOr<AttrValue> attr_from_proto(const proto::AttrValue& v, std::string_view kind) {
  const auto mismatch = [&] {
    const std::string got = natural_kind(v);
    return absl::InvalidArgumentError(absl::StrCat("has a value of type ", got.empty() ? "(none)" : got,
                                                   "; expected ", absl::string_view(kind.data(), kind.size())));
  };
  if (kind == "int") {
    if (!v.has_i()) return mismatch();
    return AttrValue(int64_t{v.i()});
  }
  if (kind == "float") {
    if (!v.has_f()) return mismatch();
    return AttrValue(double{v.f()});
  }
  if (kind == "bool") {
    if (!v.has_b()) return mismatch();
    return AttrValue(v.b());
  }
  if (kind == "type") {
    if (!v.has_type()) return mismatch();
    TF_ASSIGN_OR_RETURN(DType dt, from_proto_dtype(v.type()));
    return AttrValue(dt);
  }
  if (kind == "string") {
    if (!v.has_s()) return mismatch();
    return AttrValue(v.s());
  }
  if (kind == "ints" || kind == "hw") {
    if (!v.has_list()) return mismatch();
    std::vector<int64_t> ints(v.list().i().begin(), v.list().i().end());
    if (kind == "hw" && ints.size() == 4 && ints[0] == 1 && ints[3] == 1) ints = {ints[1], ints[2]};
    return AttrValue(std::move(ints));
  }
  if (kind == "shape") {
    if (!v.has_shape()) return mismatch();
    if (v.shape().unknown_rank()) return absl::UnimplementedError("has a shape of unknown rank, which tapeflow cannot hold");
    Shape shape;
    for (const auto& d : v.shape().dim()) shape.push_back(d.size() < 0 ? -1 : d.size());
    return AttrValue(std::move(shape));
  }
  return mismatch();
}

}  // namespace graph_def_internal

// ---- export ----

namespace {

using namespace graph_def_internal;

std::string tensor_name(const Node& node, int index) {
  return index == 0 ? node.name : absl::StrCat(node.name, ":", index);
}

// A fresh node name "<base>/<suffix>" not used by the graph or the GraphDef so far.
std::string fresh_name(absl::flat_hash_set<std::string>& used, const std::string& base) {
  std::string name = base;
  for (int i = 1; !used.insert(name).second; ++i) name = absl::StrCat(base, "_", i);
  return name;
}

// A Const NodeDef holding `value` (the constant inputs of Note [GraphDef form]).
absl::Status add_const_node(GraphDef& def, const std::string& name, const Tensor& value, const std::string& device) {
  proto::NodeDef* n = def.add_node();
  n->set_name(name);
  n->set_op("Const");
  n->set_device(device);
  TF_ASSIGN_OR_RETURN(proto::DataType dt, to_proto_dtype(value.dtype()));
  (*n->mutable_attr())["dtype"].set_type(dt);
  return tensor_to_proto(value, (*n->mutable_attr())["value"].mutable_tensor());
}

// The constant tensor that carries a tapeflow attr as a TensorFlow input.
// `index_dtype`: the dtype of the Tindices input, for kind "idx".
absl::StatusOr<Tensor> const_input_value(const AttrValue& value, std::string_view kind, DType out_dtype,
                                         DType index_dtype) {
  using Ints = std::vector<int64_t>;
  auto to_i32 = [](const Ints& v, const Shape& shape) {
    std::vector<int32_t> w(v.begin(), v.end());
    return Tensor(w, shape);
  };
  if (kind == "int" && std::holds_alternative<int64_t>(value)) return Tensor(static_cast<int32_t>(std::get<int64_t>(value)));
  if (kind == "ints" && std::holds_alternative<Ints>(value)) {
    const Ints& v = std::get<Ints>(value);
    return to_i32(v, Shape{int64_t(v.size())});
  }
  if (kind == "idx" && std::holds_alternative<Ints>(value)) {
    const Ints& v = std::get<Ints>(value);
    if (index_dtype == DType::kInt64) return Tensor(v, Shape{int64_t(v.size())});
    return to_i32(v, Shape{int64_t(v.size())});
  }
  if (kind == "pairs" && std::holds_alternative<Ints>(value)) {
    const Ints& v = std::get<Ints>(value);
    return to_i32(v, Shape{int64_t(v.size() / 2), 2});
  }
  if (kind == "shape" && std::holds_alternative<Shape>(value)) {
    const Ints v = std::get<Shape>(value).as_vector();
    return to_i32(v, Shape{int64_t(v.size())});
  }
  if (kind == "val" || kind == "num") {
    double x = 0;
    if (const double* d = std::get_if<double>(&value)) x = *d;
    else if (const int64_t* i = std::get_if<int64_t>(&value)) x = static_cast<double>(*i);
    else if (const bool* b = std::get_if<bool>(&value)) x = *b;
    else return absl::InternalError("a scalar attr of another type");
    Tensor out;
    dispatch_dtype(out_dtype, [&]<typename T>() {
      if (const int64_t* i = std::get_if<int64_t>(&value)) out = Tensor(static_cast<T>(*i));  // exact for int64
      else out = Tensor(static_cast<T>(x));
    });
    return out;
  }
  return absl::InternalError(absl::StrCat("attr of kind ", natural_kind(value), " for a constant input of kind ",
                                          absl::string_view(kind.data(), kind.size())));
}

// Writes one tapeflow attr as its TensorFlow attr; a double that float32 cannot hold exactly also
// goes, bit for bit, into "_<name>_f64" so tapeflow reads it back unchanged.
absl::Status put_attr(proto::NodeDef& n, const std::string& tf_name, const AttrValue& value, std::string_view kind) {
  TF_ASSIGN_OR_RETURN(proto::AttrValue v, attr_to_proto(value, kind));
  (*n.mutable_attr())[tf_name] = v;
  if (const double* d = std::get_if<double>(&value); d && static_cast<double>(static_cast<float>(*d)) != *d)
    (*n.mutable_attr())[absl::StrCat("_", tf_name, "_f64")].set_i(std::bit_cast<int64_t>(*d));
  return absl::OkStatus();
}

// Note [Spare constants]: an imported node keeps TensorFlow's constant inputs as attrs, and the
// Const nodes that carried them stay in the graph (every node of an import is kept, as in
// TensorFlow) with nothing consuming them. Export writes such an attr as a constant input again:
// it reuses the spare Const under the node's name ("Mean/reduction_indices" for "Mean") when it
// holds the same value, so import and export round trips do not add "Mean/axes" beside it each
// time. Spare: a Const nothing reads, by the name of the node it sits under.
using SpareConsts = absl::flat_hash_map<std::string, std::vector<const Node*>>;

SpareConsts spare_consts(const std::vector<const Node*>& nodes) {
  std::vector<char> consumed(nodes.size(), 0);
  for (const Node* n : nodes) {
    for (const TensorRef& r : n->inputs) consumed[static_cast<size_t>(r.node)] = 1;
    for (int c : n->control_inputs) consumed[static_cast<size_t>(c)] = 1;
  }
  SpareConsts spare;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    const size_t slash = n.name.rfind('/');
    if (n.op == &kConstOp && !consumed[i] && slash != std::string::npos)
      spare[n.name.substr(0, slash)].push_back(&n);
  }
  return spare;
}

// The spare's elements equal the value's, of one dtype, in the same shape, or the spare a scalar
// where the value is one element: TensorFlow's scalar reduction index 1 is tapeflow's axes [1].
bool same_value(const Tensor& spare, const Tensor& value) {
  const Tensor& a = spare;
  const Tensor& b = value;
  if (!a.defined() || a.dtype() != b.dtype() || a.num_elements() != b.num_elements()) return false;
  if (a.shape() != b.shape() && !(a.rank() == 0 && b.rank() == 1)) return false;
  bool equal = false;
  dispatch_dtype(a.dtype(), [&]<typename T>() { equal = a.to_vector<T>() == b.to_vector<T>(); });
  return equal;
}

// The name of a spare Const under `owner` holding `value` on `device` (then no longer spare), or "".
std::string take_spare(SpareConsts& spare, const std::string& owner, const Tensor& value, const std::string& device) {
  auto it = spare.find(owner);
  if (it == spare.end()) return "";
  for (auto c = it->second.begin(); c != it->second.end(); ++c) {
    if ((*c)->requested_device.to_string() != device || !same_value((*c)->value, value)) continue;
    std::string name = (*c)->name;
    it->second.erase(c);
    return name;
  }
  return "";
}

// The values of node's constant inputs (its form's kInput items, in form order): what export
// writes as Const nodes.
absl::StatusOr<std::vector<Tensor>> constant_inputs(const GraphState& state, const Node& node, const Form& form) {
  const DType out_dtype = node.outputs.empty() ? DType::kFloat32 : node.outputs[0].dtype;
  DType index_dtype = DType::kInt32;  // kind "idx": Tindices' dtype
  for (const FormItem& f : form.items)
    if (f.kind == FormItem::Kind::kTypeOf && f.name == "Tindices" && !f.of_output &&
        f.index < static_cast<int>(node.inputs.size()))
      index_dtype = state.node(node.inputs[f.index].node).outputs[node.inputs[f.index].index].dtype;
  std::vector<Tensor> values;
  for (const FormItem& f : form.items) {
    if (f.kind != FormItem::Kind::kInput) continue;
    const AttrValue* v = node.attrs.find(f.name);
    if (v == nullptr) return absl::InternalError(absl::StrCat("attr '", f.name, "' is missing"));
    TF_ASSIGN_OR_RETURN(Tensor value, const_input_value(*v, f.value_kind, out_dtype, index_dtype));
    values.push_back(std::move(value));
  }
  return values;
}

// TensorFlow's MatMul takes matrices only; tapeflow's also batches of them, as TensorFlow's
// BatchMatMulV2 does, whose transposes are attrs adj_x and adj_y. A product of a rank other than
// 2 is written as one (and read back as MatMul: graph_def_import.cc's alias_of).
void write_batch_matmul(const GraphState& state, const Node& node, proto::NodeDef& n) {
  bool batched = false;
  for (const TensorRef& r : node.inputs) batched |= state.node(r.node).outputs[r.index].shape.rank() != 2;
  if (!batched) return;
  n.set_op("BatchMatMulV2");
  auto& attrs = *n.mutable_attr();
  for (const auto& [from, to] : {std::pair{"transpose_a", "adj_x"}, std::pair{"transpose_b", "adj_y"}}) {
    const auto it = attrs.find(from);
    if (it == attrs.end()) continue;
    proto::AttrValue value = std::move(it->second);
    attrs.erase(it);
    attrs[to] = std::move(value);
  }
}

// TensorFlow's Select wants x and y of one shape and a condition of that shape (or a vector
// picking rows); tapeflow's broadcasts all three, as SelectV2 does. Select is written only where
// the three shapes are known and equal, where both ops agree.
void write_select(const GraphState& state, const Node& node, proto::NodeDef& n) {
  const Shape& first = state.node(node.inputs[0].node).outputs[node.inputs[0].index].shape;
  bool same = first.is_fully_defined();
  for (const TensorRef& r : node.inputs) same &= state.node(r.node).outputs[r.index].shape == first;
  if (!same) n.set_op("SelectV2");
}

// An Identity whose output is less specific than its input is an imported PlaceholderWithDefault
// (graph_def_import.cc): written back as one, with its shape, so that it can still be fed.
absl::Status write_placeholder_with_default(const GraphState& state, const Node& node, proto::NodeDef& n) {
  const TensorSpec& in = state.node(node.inputs[0].node).outputs[node.inputs[0].index];
  if (node.outputs[0].shape == in.shape) return absl::OkStatus();
  n.set_op("PlaceholderWithDefault");
  n.mutable_attr()->erase("T");
  TF_ASSIGN_OR_RETURN(proto::DataType dtype, to_proto_dtype(node.outputs[0].dtype));
  (*n.mutable_attr())["dtype"].set_type(dtype);
  shape_to_proto(node.outputs[0].shape, (*n.mutable_attr())["shape"].mutable_shape());
  return absl::OkStatus();
}

// An Assert's texts (tapeflow's attrs) are TensorFlow's DT_STRING data: each a Const
// "<assert>/data_<k>" at its place among the data, its T entry DT_STRING.
absl::Status write_assert(proto::NodeDef& n, GraphDef& def, absl::flat_hash_set<std::string>& used) {
  auto& attrs = *n.mutable_attr();
  const auto texts_attr = attrs.find("_texts");
  const std::string encoded = texts_attr == attrs.end() ? std::string() : texts_attr->second.s();
  TF_ASSIGN_OR_RETURN(std::vector<std::string> texts, graph_ops_internal::decode_texts(encoded));
  std::vector<int64_t> at;
  if (const auto p = attrs.find("_text_positions"); p != attrs.end()) at.assign(p->second.list().i().begin(), p->second.list().i().end());
  attrs.erase("_texts");
  attrs.erase("_text_positions");
  if (texts.empty()) return absl::OkStatus();
  std::vector<std::string> inputs(n.input().begin(), n.input().end());
  const auto first_control = std::find_if(inputs.begin(), inputs.end(), [](const std::string& s) { return s.starts_with("^"); });
  std::vector<std::string> data(inputs.begin() + 1, first_control), control(first_control, inputs.end());
  const std::vector<int> data_types(attrs["T"].list().type().begin(), attrs["T"].list().type().end());
  std::vector<std::string> items;
  proto::AttrValue::ListValue types;
  size_t next_text = 0, next_tensor = 0;
  for (size_t k = 0; k < data.size() + texts.size(); ++k) {
    if (next_text < texts.size() && next_text < at.size() && at[next_text] == static_cast<int64_t>(k)) {
      proto::NodeDef& c = *def.add_node();
      c.set_name(fresh_name(used, absl::StrCat(n.name(), "/data_", k)));
      c.set_op("Const");
      c.set_device(n.device());
      (*c.mutable_attr())["dtype"].set_type(proto::DT_STRING);
      proto::TensorProto& value = *(*c.mutable_attr())["value"].mutable_tensor();
      value.set_dtype(proto::DT_STRING);
      value.mutable_tensor_shape();
      value.add_string_val(texts[next_text++]);
      items.push_back(c.name());
      types.add_type(proto::DT_STRING);
    } else if (next_tensor < data.size()) {
      types.add_type(static_cast<proto::DataType>(data_types.at(next_tensor)));
      items.push_back(data[next_tensor++]);
    }
  }
  *attrs["T"].mutable_list() = types;
  n.clear_input();
  n.add_input(inputs[0]);
  for (std::string& s : items) n.add_input(std::move(s));
  for (std::string& s : control) n.add_input(std::move(s));
  return absl::OkStatus();
}

absl::Status export_node(const GraphState& state, const Node& node, GraphDef& def,
                         absl::flat_hash_set<std::string>& used, SpareConsts& spare,
                         graph_def_internal::LibraryWriter& library) {
  const OpDef& op = *node.op;
  if (std::string_view(op.type) == "PartitionedCall")
    return absl::UnimplementedError("calls of traced functions cannot be written: GraphDef function libraries are "
                                    "not supported; export the concrete function's own graph instead");
  const Form& form = form_of(op);
  const std::string device = node.requested_device.to_string();
  proto::NodeDef n;
  n.set_name(node.name);
  n.set_op(op.type);
  n.set_device(device);
  std::vector<std::string> inputs;
  std::vector<int> control = node.control_inputs;
  std::string variable_handle;  // a variable op's handle node
  // Note [Variables in a GraphDef]: the handle, a control input here, is TensorFlow's input 0.
  const bool variable_op = &op == &kReadVariableOp || &op == &kAssignVariableOp || &op == &kAssignAddVariableOp ||
                           &op == &kAssignSubVariableOp;
  if (variable_op) {
    auto it = std::find_if(control.begin(), control.end(), [&](int c) { return state.node(c).op == &kVarHandleOp; });
    if (it == control.end()) return absl::InternalError("a variable op without its VarHandleOp");
    inputs.push_back(state.node(*it).name);
    variable_handle = state.node(*it).name;
    control.erase(it);
  }
  for (const TensorRef& r : node.inputs) inputs.push_back(tensor_name(state.node(r.node), r.index));
  TF_ASSIGN_OR_RETURN(std::vector<Tensor> constants, constant_inputs(state, node, form));
  size_t next_constant = 0;
  for (const FormItem& f : form.items) {
    using K = FormItem::Kind;
    if (f.kind == K::kAttr) {
      if (const AttrValue* v = node.attrs.find(f.name)) {
        TF_RETURN_IF_ERROR(put_attr(n, f.tf_name, *v, f.value_kind));
        if (f.omit_default && n.attr().at(f.tf_name).SerializeAsString() == f.default_value.SerializeAsString())
          n.mutable_attr()->erase(f.tf_name);
      }
    } else if (f.kind == K::kInput) {
      const Tensor& value = constants[next_constant++];
      std::string name = take_spare(spare, node.name, value, device);  // Note [Spare constants]
      if (name.empty()) {
        name = fresh_name(used, absl::StrCat(node.name, "/", f.name));
        TF_RETURN_IF_ERROR(add_const_node(def, name, value, device));
      }
      const size_t pos = f.position < 0 ? inputs.size() : static_cast<size_t>(f.position);
      if (pos > inputs.size()) return absl::InternalError("a constant input position past the inputs");
      inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(pos), name);
    } else if (f.kind == K::kTypeOf) {
      const auto& specs = f.of_output ? node.outputs : OutputSpecs{};
      DType dt;
      if (f.of_output) {
        if (f.index >= static_cast<int>(specs.size())) return absl::InternalError("type of a missing output");
        dt = specs[f.index].dtype;
      } else {
        if (f.index >= static_cast<int>(node.inputs.size())) return absl::InternalError("type of a missing input");
        dt = state.node(node.inputs[f.index].node).outputs[node.inputs[f.index].index].dtype;
      }
      TF_ASSIGN_OR_RETURN(proto::DataType p, to_proto_dtype(dt));
      (*n.mutable_attr())[f.name].set_type(p);
    } else if (f.kind == K::kTypesOfInputs) {
      proto::AttrValue::ListValue* types = (*n.mutable_attr())[f.name].mutable_list();
      for (size_t k = static_cast<size_t>(f.index); k < node.inputs.size(); ++k) {
        const TensorRef& r = node.inputs[k];
        TF_ASSIGN_OR_RETURN(proto::DataType p, to_proto_dtype(state.node(r.node).outputs[r.index].dtype));
        types->add_type(p);
      }
    } else if (f.kind == K::kCount) {
      (*n.mutable_attr())[f.name].set_i(static_cast<int64_t>(node.inputs.size()));
    } else if (f.kind == K::kFixed) {
      (*n.mutable_attr())[f.name] = f.default_value;
    }
  }
  for (const auto& [name, value] : node.attrs.items()) {  // tapeflow-only attrs, Note [GraphDef form]
    if (form.lists(name)) continue;
    TF_RETURN_IF_ERROR(put_attr(n, absl::StrCat("_", name), value, natural_kind(value)));
  }
  if (&op == &kConstOp) TF_RETURN_IF_ERROR(tensor_to_proto(node.value, (*n.mutable_attr())["value"].mutable_tensor()));
  if (&op == &kVarHandleOp) (*n.mutable_attr())["shared_name"].set_s(node.name);
  // Note [Colocation groups] (graph/placer.h): a variable's reads and updates, and the nodes
  // an imported "_class" colocated, carry TensorFlow's "_class", sorted as TensorFlow sorts it.
  std::vector<std::string> colocation = node.colocate_with();
  if (!variable_handle.empty()) colocation.push_back(variable_handle);
  if (!colocation.empty()) {
    std::sort(colocation.begin(), colocation.end());
    colocation.erase(std::unique(colocation.begin(), colocation.end()), colocation.end());
    auto* list = (*n.mutable_attr())["_class"].mutable_list();
    for (const std::string& x : colocation) list->add_s(absl::StrCat("loc:@", x));
  }
  for (int c : control) inputs.push_back(absl::StrCat("^", state.node(c).name));
  for (std::string& in : inputs) n.add_input(std::move(in));
  static const OpDef* const matmul = OpRegistry::global().find("MatMul");
  static const OpDef* const select = OpRegistry::global().find("Select");
  static const OpDef* const random_normal = OpRegistry::global().find("RandomNormal");
  static const OpDef* const identity = OpRegistry::global().find("Identity");
  if (&op == matmul) write_batch_matmul(state, node, n);
  if (&op == select) write_select(state, node, n);
  if (&op == random_normal) n.set_op("RandomStandardNormal");  // TensorFlow's name; read back by alias_of
  if (const char* tf_type = graph_def_internal::tf_type_of_run_time_form(op.type)) n.set_op(tf_type);
  if (&op == identity) TF_RETURN_IF_ERROR(write_placeholder_with_default(state, node, n));
  if (&op == &kAssertOp) TF_RETURN_IF_ERROR(write_assert(n, def, used));
  if (is_functional_op(&op)) [[unlikely]]
    TF_RETURN_IF_ERROR(graph_def_internal::write_functional_node(state, node, n, library));
  *def.add_node() = std::move(n);
  return absl::OkStatus();
}

}  // namespace

GraphDef to_graph_def(const Graph& graph, std::source_location loc) {
  const GraphState& state = *graph.state();
  const std::vector<const Node*> nodes = state.snapshot();
  absl::flat_hash_set<std::string> used;
  for (const Node* n : nodes) used.insert(n->name);
  SpareConsts spare = spare_consts(nodes);
  GraphDef def;
  def.mutable_versions()->set_producer(27);
  def.mutable_versions()->set_min_consumer(12);
  graph_def_internal::LibraryWriter library(def);
  for (const Node* n : nodes) {
    absl::Status s = export_node(state, *n, def, used, spare, library);
    if (!s.ok())
      throw_status(absl::Status(s.code(), absl::StrCat("[to_graph_def] ", describe_node(*n), ": ", s.message())), loc);
  }
  return def;
}

namespace graph_def_internal {

std::vector<std::pair<int, int>> spare_constant_edges(const GraphState& state, const std::vector<const Node*>& nodes) {
  SpareConsts spare = spare_consts(nodes);
  std::vector<std::pair<int, int>> edges;
  if (spare.empty()) return edges;
  absl::flat_hash_map<std::string_view, int> id_of;
  for (const Node* n : nodes) id_of.emplace(n->name, n->id);
  for (const Node* n : nodes) {
    if (!spare.contains(n->name)) continue;
    const Form& form = form_of(*n->op);
    if (form.num_const_inputs == 0) continue;
    absl::StatusOr<std::vector<Tensor>> constants = constant_inputs(state, *n, form);
    if (!constants.ok()) continue;  // export reports it; a picture leaves the edge out
    for (const Tensor& value : *constants) {
      const std::string name = take_spare(spare, n->name, value, n->requested_device.to_string());
      if (!name.empty()) edges.emplace_back(id_of.at(name), n->id);
    }
  }
  return edges;
}

}  // namespace graph_def_internal

// ---- formats and files ----

namespace {

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

std::string graph_def_to_text(const GraphDef& graph_def) {
  // Fields this schema does not declare (a newer TensorFlow's, a FunctionDef's contents) would
  // print as bare numbers ("7: ..."), which no text parser reads back: the text leaves them out.
  google::protobuf::TextFormat::Printer printer;
  printer.SetHideUnknownFields(true);
  std::string out;
  printer.PrintToString(graph_def, &out);
  return out;
}

GraphDef graph_def_from_text(std::string_view text, std::source_location loc) {
  GraphDef def;
  graph_def_internal::parse_text_into(def, text, "graph_def_from_text", loc);
  return def;
}

std::string graph_def_to_binary(const GraphDef& graph_def) {
  // Deterministic: attr maps in key order, so one graph always gives the same bytes.
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    graph_def.SerializeToCodedStream(&coded);
  }
  return out;
}

GraphDef graph_def_from_binary(std::string_view bytes, std::source_location loc) {
  GraphDef def;
  graph_def_internal::parse_binary_into(def, bytes, "graph_def_from_binary", loc);
  return def;
}

namespace graph_def_internal {

void parse_text_into(GraphDef& def, std::string_view text, const char* who, std::source_location loc) {
  CollectErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &def))
    throw InvalidArgumentError(absl::StrCat("[", who, "] not a GraphDef in text format: ", errors.first()), loc);
}

void parse_binary_into(GraphDef& def, std::string_view bytes, const char* who, std::source_location loc) {
  // Note [Quiet protobuf]: on some bad input (a string field that is not UTF-8) libprotobuf
  // logs a line of its own to stderr before the parse returns false. Our error says it, once:
  // a library must not print, and the CLI promises one line (Note [CLI errors]). LogSilencer
  // drops non-fatal messages (of every thread: it is a process-wide count) while it lives.
  google::protobuf::LogSilencer quiet;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !def.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw InvalidArgumentError(absl::StrCat("[", who, "] ", bytes.size(), " bytes are not a GraphDef in binary format"),
                               loc);
}

}  // namespace graph_def_internal

namespace {

bool is_text_path(const std::string& path) { return path.ends_with(".pbtxt") || path.ends_with(".pbtext"); }

// Protobuf parses at most this many bytes as one message (its sizes are ints).
constexpr size_t kMaxGraphDefBytes = static_cast<size_t>(std::numeric_limits<int>::max());

[[noreturn]] void throw_too_large(const std::string& path, const std::string& size, size_t limit,
                                  std::source_location loc) {
  throw ResourceExhaustedError(
      absl::StrCat("[read_graph_def] '", path, "': ", size, ", over the limit of ", limit, " bytes for a GraphDef file"),
      loc);
}

}  // namespace

namespace graph_def_internal {

// Note [Bounded read]: a GraphDef larger than protobuf's 2 GiB message limit cannot parse, so
// read_graph_def reads at most `limit` bytes. A regular file's size is checked before any
// byte is read; anything else (/dev/zero, a pipe, a FIFO) has no size to check and is read
// until it ends or passes the limit, so `tapeflow graph /dev/zero` fails instead of growing
// without bound. A parameter so that a test can show it on /dev/zero with a small limit.
std::string read_file_bounded(const std::string& path, size_t limit, std::source_location loc) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw NotFoundError(absl::StrCat("[read_graph_def] cannot open '", path, "': ", std::strerror(errno)), loc);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw UnknownError(absl::StrCat("[read_graph_def] '", path, "': fstat failed: ", std::strerror(errno)), loc);
  if (S_ISDIR(st.st_mode))
    throw InvalidArgumentError(absl::StrCat("[read_graph_def] '", path, "' is a directory, not a GraphDef file"), loc);
  std::string bytes;
  if (S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) > limit)
      throw_too_large(path, absl::StrCat(st.st_size, " bytes"), limit, loc);  // before reading any
    bytes.reserve(static_cast<size_t>(st.st_size) + 1);  // + 1: the read that sees the end
  }
  // One byte past the limit tells "exactly the limit" from "more" (a file may grow meanwhile).
  constexpr size_t kChunk = size_t{1} << 20;
  while (bytes.size() <= limit) {
    const size_t old = bytes.size();
    size_t want = std::min(kChunk, limit + 1 - old);
    if (bytes.capacity() > old) want = std::min(want, bytes.capacity() - old);  // no copy while it fits
    bytes.resize(old + want);
    const ssize_t n = ::read(fd, bytes.data() + old, want);
    if (n < 0 && errno == EINTR) {
      bytes.resize(old);
      continue;
    }
    if (n < 0)
      throw UnknownError(absl::StrCat("[read_graph_def] '", path, "': read failed: ", std::strerror(errno)), loc);
    bytes.resize(old + static_cast<size_t>(n));
    if (n == 0) return bytes;
  }
  throw_too_large(path, absl::StrCat("more than ", limit, " bytes"), limit, loc);
}

}  // namespace graph_def_internal

void write_graph_def(const GraphDef& graph_def, const std::string& path, std::source_location loc) {
  const std::string bytes = is_text_path(path) ? graph_def_to_text(graph_def) : graph_def_to_binary(graph_def);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw UnavailableError(absl::StrCat("[write_graph_def] cannot write '", path, "'"), loc);
}

void graph_def_internal::read_file_into(GraphDef& def, const std::string& path, std::source_location loc) {
  const std::string bytes = read_file_bounded(path, kMaxGraphDefBytes, loc);
  try {
    if (is_text_path(path)) parse_text_into(def, bytes, "graph_def_from_text", loc);
    else parse_binary_into(def, bytes, "graph_def_from_binary", loc);
  } catch (const Error& e) {
    throw InvalidArgumentError(absl::StrCat("[read_graph_def] '", path, "': ", e.message()), loc);
  }
}

namespace {
// Note [Fills of run-time shape]: {TensorFlow's type, the tapeflow op that reads it with run-time inputs}.
constexpr std::pair<std::string_view, const char*> kRunTimeForms[] = {
    {"Fill", "DynamicFill"}, {"Range", "DynamicRange"}, {"Tile", "DynamicTile"}};
}  // namespace

const char* graph_def_internal::run_time_form_of(std::string_view tf_type) {
  for (const auto& [tf, ours] : kRunTimeForms)
    if (tf == tf_type) return ours;
  return nullptr;
}

const char* graph_def_internal::tf_type_of_run_time_form(std::string_view type) {
  for (const auto& [tf, ours] : kRunTimeForms)
    if (ours == type) return tf.data();
  return nullptr;
}

GraphDef read_graph_def(const std::string& path, std::source_location loc) {
  GraphDef def;
  graph_def_internal::read_file_into(def, path, loc);
  return def;
}

namespace graph_def_internal {

const proto::AttrValue* find_attr(const proto::NodeDef& node, const char* name) {
  const auto it = node.attr().find(name);
  return it == node.attr().end() ? nullptr : &it->second;
}

absl::Status node_error(const proto::NodeDef& node, absl::StatusCode code, absl::string_view message) {
  return absl::Status(code, absl::StrCat("[import_graph_def] node '", node.name(), "' (", node.op(), "): ", message));
}

absl::StatusOr<std::vector<int>> inputs_first_order(const proto::GraphDef& def, absl::Span<const int> first_edge,
                                                    absl::FunctionRef<int(int)> src_of) {
  const int n = def.node_size();
  bool inputs_first = true;
  for (int i = 0; i < n && inputs_first; ++i)
    for (int k = first_edge[i]; k < first_edge[i + 1]; ++k) inputs_first &= src_of(k) < i;
  if (inputs_first) {
    std::vector<int> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    return order;
  }
  // Kahn's algorithm over a CSR array of consumers.
  std::vector<int> pending(static_cast<size_t>(n), 0), first_consumer(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    pending[i] = first_edge[i + 1] - first_edge[i];
    for (int k = first_edge[i]; k < first_edge[i + 1]; ++k) ++first_consumer[src_of(k) + 1];
  }
  for (int i = 0; i < n; ++i) first_consumer[i + 1] += first_consumer[i];
  std::vector<int> consumers(static_cast<size_t>(first_edge[n])), fill(first_consumer.begin(), first_consumer.end() - 1);
  for (int i = 0; i < n; ++i)
    for (int k = first_edge[i]; k < first_edge[i + 1]; ++k) consumers[fill[src_of(k)]++] = i;
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) if (pending[i] == 0) order.push_back(i);
  for (size_t head = 0; head < order.size(); ++head) {
    const int i = order[head];
    for (int k = first_consumer[i]; k < first_consumer[i + 1]; ++k)
      if (--pending[consumers[k]] == 0) order.push_back(consumers[k]);
  }
  if (static_cast<int>(order.size()) != n) {
    std::vector<std::string> stuck;
    for (int i = 0; i < n; ++i) if (pending[i] > 0) stuck.push_back(def.node(i).name());
    return absl::InvalidArgumentError(absl::StrCat("[import_graph_def] the GraphDef has a cycle; these nodes wait on "
                                                   "each other: ", absl::StrJoin(stuck, ", ")));
  }
  return order;
}

}  // namespace graph_def_internal

}  // namespace tapeflow
