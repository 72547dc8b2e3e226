// The op converters of the ONNX export: each TensorFlow op type (as to_graph_def writes it,
// OpDef::tf_form) -> ONNX opset 17 nodes. Also the graph builder they write through.
//
// Note [Exact ONNX forms]
// A converter gives the values tapeflow gives (ONNX Runtime within 1e-5, tests/saving/onnx/)
// with the same dtypes, for every input tapeflow accepts. Where ONNX's op means something else
// (negative indices counted from the end, OneHot's dtype combinations, Sum and Round taking
// floats only, Mod's fmod) the converter says so and composes the exact form; where no exact
// form exists the op has no converter, or its converter refuses that case with an
// UnimplementedError naming it. The ops without a converter, and why, are the allow-list of
// OnnxExportTest.EveryRegisteredOpHasAConverterOrAReason (tests/saving/onnx_test.cc).
#include <cstring>
#include <limits>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/errors.h"
#include "graph/graph_def.h"
#include "saving/onnx_convert.h"

namespace tapeflow::onnx_internal {

// ---- values ----

onnx::TensorProto::DataType onnx_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return onnx::TensorProto::FLOAT;
    case DType::kFloat64: return onnx::TensorProto::DOUBLE;
    case DType::kInt32: return onnx::TensorProto::INT32;
    case DType::kInt64: return onnx::TensorProto::INT64;
    case DType::kUInt8: return onnx::TensorProto::UINT8;
    case DType::kBool: return onnx::TensorProto::BOOL;
  }
  return onnx::TensorProto::UNDEFINED;
}

void tensor_to_onnx(const Tensor& value, const std::string& name, onnx::TensorProto* out) {
  out->set_name(name);
  out->set_data_type(onnx_dtype(value.dtype()));
  for (int64_t d : value.shape().dims()) out->add_dims(d);
  // raw_data: little-endian, one byte per bool, as tapeflow stores them.
  std::string bytes(static_cast<size_t>(value.num_elements()) * dtype_size(value.dtype()), '\0');
  if (!bytes.empty()) value.copy_to_host(bytes.data());
  out->set_raw_data(std::move(bytes));
}

std::pair<std::string, int> split_tensor_name(absl::string_view tensor) {
  const auto [name, index] = graph_def_internal::split_tensor_name(std::string_view(tensor.data(), tensor.size()));
  return {std::string(name), index};
}

// ---- the builder ----

std::string OnnxGraphBuilder::fresh(absl::string_view base) {
  std::string name(base);
  for (int i = 1; !used_.insert(name).second; ++i) name = absl::StrCat(base, "_", i);
  return name;
}

std::string OnnxGraphBuilder::value(const std::string& tf_tensor) const {
  auto it = renamed_.find(tf_tensor);
  return it == renamed_.end() ? tf_tensor : it->second;
}

std::string OnnxGraphBuilder::use(const std::string& tf_tensor) {
  std::string name = value(tf_tensor);
  if (auto it = pending_.find(name); it != pending_.end()) {
    tensor_to_onnx(it->second, name, graph_->add_initializer());
    pending_.erase(it);
  }
  return name;
}

onnx::NodeProto* OnnxGraphBuilder::add_node(absl::string_view op_type, const std::string& name,
                                            const std::vector<std::string>& inputs,
                                            const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = graph_->add_node();
  n->set_op_type(std::string(op_type));
  n->set_name(name);
  for (const std::string& i : inputs) n->add_input(i);
  for (const std::string& o : outputs) n->add_output(o);
  return n;
}

std::string OnnxGraphBuilder::add_initializer(absl::string_view base, const Tensor& value) {
  std::string name = fresh(base);
  tensor_to_onnx(value, name, graph_->add_initializer());
  return name;
}

void OnnxGraphBuilder::add_initializer_named(const std::string& name, const Tensor& value) {
  used_.insert(name);
  tensor_to_onnx(value, name, graph_->add_initializer());
}

std::string OnnxGraphBuilder::add_int64s(absl::string_view base, const std::vector<int64_t>& values) {
  return add_initializer(base, Tensor(values, Shape{static_cast<int64_t>(values.size())}));
}

// ---- the node context ----

NodeContext::NodeContext(const proto::NodeDef& def, OnnxGraphBuilder& builder, const Lookups& lookups)
    : def_(def), builder_(builder), lookups_(lookups) {
  for (const std::string& in : def.input())
    if (!in.starts_with("^")) inputs_.push_back(split_tensor_name(in).second == 0 ? split_tensor_name(in).first : in);
}

std::string NodeContext::out(int k) const {
  return builder_.value(k == 0 ? def_.name() : absl::StrCat(def_.name(), ":", k));
}

absl::StatusOr<TensorSpec> NodeContext::in_spec(int i) const {
  if (i >= num_inputs()) return absl::InternalError(absl::StrCat("node has no input ", i));
  auto it = lookups_.specs.find(inputs_[i]);
  if (it == lookups_.specs.end()) return absl::InternalError(absl::StrCat("no dtype and shape for '", inputs_[i], "'"));
  return it->second;
}

absl::StatusOr<TensorSpec> NodeContext::out_spec(int k) const {
  const std::string t = k == 0 ? def_.name() : absl::StrCat(def_.name(), ":", k);
  auto it = lookups_.specs.find(t);
  if (it == lookups_.specs.end()) return absl::InternalError(absl::StrCat("no dtype and shape for '", t, "'"));
  return it->second;
}

const Tensor* NodeContext::const_value(int i) const {
  if (i >= num_inputs()) return nullptr;
  auto it = lookups_.values.find(inputs_[i]);
  return it == lookups_.values.end() ? nullptr : &it->second;
}

absl::StatusOr<std::vector<int64_t>> NodeContext::const_ints(int i) const {
  const Tensor* v = const_value(i);
  if (v == nullptr)
    return absl::UnimplementedError(absl::StrCat("input ", i, " is computed; ONNX export needs it constant"));
  if (v->dtype() == DType::kInt32) {
    const std::vector<int32_t> w = v->to_vector<int32_t>();
    return std::vector<int64_t>(w.begin(), w.end());
  }
  if (v->dtype() == DType::kInt64) return v->to_vector<int64_t>();
  return absl::InternalError(absl::StrCat("constant input ", i, " is ", dtype_name(v->dtype()), ", not an integer"));
}

absl::StatusOr<const proto::AttrValue*> NodeContext::attr(absl::string_view name) const {
  auto it = def_.attr().find(std::string(name));
  if (it == def_.attr().end()) return absl::InternalError(absl::StrCat("attr '", name, "' is missing"));
  return &it->second;
}

absl::StatusOr<std::vector<int64_t>> NodeContext::attr_ints(absl::string_view name) const {
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* v, attr(name));
  return std::vector<int64_t>(v->list().i().begin(), v->list().i().end());
}

onnx::NodeProto* NodeContext::emit(absl::string_view op_type, const std::vector<std::string>& inputs,
                                   const std::vector<std::string>& outputs) {
  const std::string node_name = emitted_++ == 0 ? name() : builder_.fresh(absl::StrCat(name(), "/", op_type));
  return builder_.add_node(op_type, node_name, inputs, outputs);
}

std::string NodeContext::temp(absl::string_view what) { return builder_.fresh(absl::StrCat(name(), "/", what)); }

// ---- converters ----

void set_ints(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
void set_int(onnx::NodeProto* n, const char* name, int64_t value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}
void set_float(onnx::NodeProto* n, const char* name, float value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}
void set_string(onnx::NodeProto* n, const char* name, const std::string& value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

Tensor scalar_of(DType dtype, double value) {
  return dispatch_dtype(dtype, [&]<typename T>() { return Tensor(static_cast<T>(value)); });
}

std::string scalar_initializer(NodeContext& n, absl::string_view what, DType dtype, double value) {
  return n.builder().add_initializer(absl::StrCat(n.name(), "/", what), scalar_of(dtype, value));
}

absl::StatusOr<std::string> as_int64(NodeContext& n, int i) {
  TF_ASSIGN_OR_RETURN(TensorSpec spec, n.in_spec(i));
  if (spec.dtype == DType::kInt64) return n.in(i);
  const std::string out = n.temp("int64");
  set_int(n.emit("Cast", {n.in(i)}, {out}), "to", onnx::TensorProto::INT64);
  return out;
}

namespace {

Converter same(absl::string_view onnx_op) {
  return [op = std::string(onnx_op)](NodeContext& n) {
    std::vector<std::string> ins;
    for (int i = 0; i < n.num_inputs(); ++i) ins.push_back(n.in(i));
    n.emit(op, ins, {n.out()});
    return absl::OkStatus();
  };
}

// Two ONNX ops in a row: second(first(inputs)).
Converter chain(absl::string_view first, absl::string_view second) {
  return [first = std::string(first), second = std::string(second)](NodeContext& n) {
    std::vector<std::string> ins;
    for (int i = 0; i < n.num_inputs(); ++i) ins.push_back(n.in(i));
    const std::string mid = n.temp(first);
    n.emit(first, ins, {mid});
    n.emit(second, {mid}, {n.out()});
    return absl::OkStatus();
  };
}

// IdentityN: one Identity per input.
absl::Status identity_n(NodeContext& n) {
  for (int k = 0; k < n.num_inputs(); ++k) n.emit("Identity", {n.in(k)}, {n.out(k)});
  return absl::OkStatus();
}

absl::Status square(NodeContext& n) {
  const std::string x = n.in(0);
  n.emit("Mul", {x, x}, {n.out()});
  return absl::OkStatus();
}

absl::Status log1p(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  const std::string one = n.builder().add_initializer(absl::StrCat(n.name(), "/one"), scalar_of(x.dtype, 1));
  const std::string sum = n.temp("plus_one");
  n.emit("Add", {n.in(0), one}, {sum});
  n.emit("Log", {sum}, {n.out()});
  return absl::OkStatus();
}

absl::Status relu6(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  const std::string lo = n.builder().add_initializer(absl::StrCat(n.name(), "/min"), scalar_of(x.dtype, 0));
  const std::string hi = n.builder().add_initializer(absl::StrCat(n.name(), "/max"), scalar_of(x.dtype, 6));
  n.emit("Clip", {n.in(0), lo, hi}, {n.out()});
  return absl::OkStatus();
}

absl::Status leaky_relu(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(const proto::AttrValue* alpha, n.attr("alpha"));
  set_float(n.emit("LeakyRelu", {n.in(0)}, {n.out()}), "alpha", alpha->f());
  return absl::OkStatus();
}

absl::Status cast(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec y, n.out_spec());
  set_int(n.emit("Cast", {n.in(0)}, {n.out()}), "to", onnx_dtype(y.dtype));
  return absl::OkStatus();
}

// The permutation that swaps the last two axes of a rank-r tensor.
std::vector<int64_t> swap_last_two(int rank) {
  std::vector<int64_t> perm(rank);
  for (int i = 0; i < rank; ++i) perm[i] = i;
  if (rank >= 2) std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

// MatMul (transpose_a, transpose_b) and BatchMatMulV2 (adj_x, adj_y, graph_def.cc's
// write_batch_matmul): ONNX's MatMul broadcasts batch dims as both do.
absl::Status matmul_with(NodeContext& n, const char* transpose_a, const char* transpose_b) {
  std::string operands[2];
  for (int i = 0; i < 2; ++i) {
    TF_ASSIGN_OR_RETURN(const proto::AttrValue* t, n.attr(i == 0 ? transpose_a : transpose_b));
    operands[i] = n.in(i);
    if (!t->b()) continue;
    TF_ASSIGN_OR_RETURN(TensorSpec spec, n.in_spec(i));
    const std::string transposed = n.temp(i == 0 ? "a_transposed" : "b_transposed");
    set_ints(n.emit("Transpose", {operands[i]}, {transposed}), "perm", swap_last_two(spec.shape.rank()));
    operands[i] = transposed;
  }
  n.emit("MatMul", {operands[0], operands[1]}, {n.out()});
  return absl::OkStatus();
}
absl::Status matmul(NodeContext& n) { return matmul_with(n, "transpose_a", "transpose_b"); }
absl::Status batch_matmul(NodeContext& n) { return matmul_with(n, "adj_x", "adj_y"); }

// ---- shapes and layout ----

absl::Status reshape(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, n.const_ints(1));
  const bool zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  const bool infer = std::find(shape.begin(), shape.end(), -1) != shape.end();
  if (zero && infer) return absl::UnimplementedError("a shape with both 0 and -1 (ONNX's Reshape cannot say it)");
  const std::string s = n.builder().add_int64s(absl::StrCat(n.name(), "/shape"), shape);
  onnx::NodeProto* node = n.emit("Reshape", {n.in(0), s}, {n.out()});
  if (zero) set_int(node, "allowzero", 1);  // TensorFlow's 0 is a zero-sized dim, not "copy"
  return absl::OkStatus();
}

absl::Status expand_dims(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axis, n.const_ints(1));
  const std::string axes = n.builder().add_int64s(absl::StrCat(n.name(), "/axes"), axis);
  n.emit("Unsqueeze", {n.in(0), axes}, {n.out()});
  return absl::OkStatus();
}

absl::Status squeeze(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, n.attr_ints("squeeze_dims"));
  std::vector<std::string> ins = {n.in(0)};
  if (!dims.empty()) ins.push_back(n.builder().add_int64s(absl::StrCat(n.name(), "/axes"), dims));
  n.emit("Squeeze", ins, {n.out()});
  return absl::OkStatus();
}

absl::Status transpose(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> perm, n.const_ints(1));
  set_ints(n.emit("Transpose", {n.in(0)}, {n.out()}), "perm", perm);
  return absl::OkStatus();
}

absl::Status concat(NodeContext& n) {
  const int count = n.num_inputs() - 1;
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axis, n.const_ints(count));
  std::vector<std::string> ins;
  for (int i = 0; i < count; ++i) ins.push_back(n.in(i));
  set_int(n.emit("Concat", ins, {n.out()}), "axis", axis.at(0));
  return absl::OkStatus();
}

absl::Status tile(NodeContext& n) {
  absl::StatusOr<std::vector<int64_t>> multiples = n.const_ints(1);
  if (!multiples.ok()) {  // run-time multiples (a DynamicTile, Note [Fills of run-time shape])
    TF_ASSIGN_OR_RETURN(std::string repeats, as_int64(n, 1));
    n.emit("Tile", {n.in(0), repeats}, {n.out()});
    return absl::OkStatus();
  }
  n.emit("Tile", {n.in(0), n.builder().add_int64s(absl::StrCat(n.name(), "/repeats"), *multiples)}, {n.out()});
  return absl::OkStatus();
}

absl::Status slice(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> begin, n.const_ints(1));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> size, n.const_ints(2));
  std::vector<int64_t> end(begin.size()), axes(begin.size());
  for (size_t i = 0; i < begin.size(); ++i) {
    end[i] = size.at(i) < 0 ? std::numeric_limits<int64_t>::max() : begin[i] + size[i];  // -1: to the end
    axes[i] = static_cast<int64_t>(i);
  }
  OnnxGraphBuilder& b = n.builder();
  n.emit("Slice",
         {n.in(0), b.add_int64s(absl::StrCat(n.name(), "/starts"), begin), b.add_int64s(absl::StrCat(n.name(), "/ends"), end),
          b.add_int64s(absl::StrCat(n.name(), "/axes"), axes)},
         {n.out()});
  return absl::OkStatus();
}

absl::Status pad(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> pairs, n.const_ints(1));
  const size_t rank = pairs.size() / 2;
  std::vector<int64_t> pads(2 * rank);
  for (size_t i = 0; i < rank; ++i) {
    pads[i] = pairs[2 * i];
    pads[rank + i] = pairs[2 * i + 1];
  }
  const std::string p = n.builder().add_int64s(absl::StrCat(n.name(), "/pads"), pads);
  // PadV2's third input is the constant; TensorFlow's Pad pads with zeros, ONNX's default.
  if (n.num_inputs() > 2) n.emit("Pad", {n.in(0), p, n.in(2)}, {n.out()});
  else n.emit("Pad", {n.in(0), p}, {n.out()});
  return absl::OkStatus();
}

// ---- reductions ----

// Sum takes its axes as an input from opset 13; Max, Min, Prod as an attribute until opset 18.
Converter reduce(absl::string_view onnx_op, bool axes_input) {
  return [op = std::string(onnx_op), axes_input](NodeContext& n) -> absl::Status {
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, n.const_ints(1));
    TF_ASSIGN_OR_RETURN(const proto::AttrValue* keep, n.attr("keep_dims"));
    if (axes.empty()) {  // TensorFlow: no axes reduce nothing; ONNX: no axes reduce everything
      n.emit("Identity", {n.in(0)}, {n.out()});
      return absl::OkStatus();
    }
    onnx::NodeProto* node;
    if (axes_input) {
      node = n.emit(op, {n.in(0), n.builder().add_int64s(absl::StrCat(n.name(), "/axes"), axes)}, {n.out()});
    } else {
      node = n.emit(op, {n.in(0)}, {n.out()});
      set_ints(node, "axes", axes);
    }
    set_int(node, "keepdims", keep->b() ? 1 : 0);
    return absl::OkStatus();
  };
}

Converter arg(absl::string_view onnx_op) {
  return [op = std::string(onnx_op)](NodeContext& n) -> absl::Status {
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> axis, n.const_ints(1));
    TF_ASSIGN_OR_RETURN(TensorSpec y, n.out_spec());
    const bool int64 = y.dtype == DType::kInt64;  // ONNX's ArgMax gives int64
    const std::string result = int64 ? n.out() : n.temp("int64");
    onnx::NodeProto* node = n.emit(op, {n.in(0)}, {result});
    set_int(node, "axis", axis.at(0));
    set_int(node, "keepdims", 0);
    if (!int64) set_int(n.emit("Cast", {result}, {n.out()}), "to", onnx_dtype(y.dtype));
    return absl::OkStatus();
  };
}

// ---- math (Note [Exact ONNX forms]) ----

// y = x - 1 after Exp, and 1 - Erf(x): the composite loses the relative precision of expm1 and
// erfc near their zeros, not absolute precision (well under 1e-6 for float32 inputs).
absl::Status expm1(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  const std::string e = n.temp("exp");
  n.emit("Exp", {n.in(0)}, {e});
  n.emit("Sub", {e, scalar_initializer(n, "one", x.dtype, 1)}, {n.out()});
  return absl::OkStatus();
}

absl::Status erfc(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  const std::string e = n.temp("erf");
  n.emit("Erf", {n.in(0)}, {e});
  n.emit("Sub", {scalar_initializer(n, "one", x.dtype, 1), e}, {n.out()});
  return absl::OkStatus();
}

// Round and Rint halve to even, as ONNX's Round does; integers are already whole (ONNX's Round
// takes floats only).
absl::Status round(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  n.emit(is_floating(x.dtype) ? "Round" : "Identity", {n.in(0)}, {n.out()});
  return absl::OkStatus();
}

absl::Status is_finite(NodeContext& n) {
  const std::string x = n.in(0), nan = n.temp("is_nan"), inf = n.temp("is_inf"), either = n.temp("not_finite");
  n.emit("IsNaN", {x}, {nan});
  n.emit("IsInf", {x}, {inf});
  n.emit("Or", {nan, inf}, {either});
  n.emit("Not", {either}, {n.out()});
  return absl::OkStatus();
}

absl::Status squared_difference(NodeContext& n) {
  const std::string d = n.temp("difference");
  n.emit("Sub", {n.in(0), n.in(1)}, {d});
  n.emit("Mul", {d, d}, {n.out()});
  return absl::OkStatus();
}

// ONNX's Sum takes floating types only: integers add pairwise (wrapping, as tapeflow's AddN).
absl::Status add_n(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  std::vector<std::string> ins;
  for (int i = 0; i < n.num_inputs(); ++i) ins.push_back(n.in(i));
  if (is_floating(x.dtype) || ins.size() == 1) {
    n.emit(ins.size() == 1 ? "Identity" : "Sum", ins, {n.out()});
    return absl::OkStatus();
  }
  std::string acc = ins[0];
  for (size_t i = 1; i < ins.size(); ++i) {
    const std::string next = i + 1 == ins.size() ? n.out() : n.temp("partial_sum");
    n.emit("Add", {acc, ins[i]}, {next});
    acc = next;
  }
  return absl::OkStatus();
}

// tapeflow clips with maximum, then minimum. ONNX's Clip does the same but takes scalar bounds
// only; bounds of x's shape use Max and Min.
absl::Status clip_by_value(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec lo, n.in_spec(1));
  TF_ASSIGN_OR_RETURN(TensorSpec hi, n.in_spec(2));
  if (lo.shape.rank() == 0 && hi.shape.rank() == 0) {
    n.emit("Clip", {n.in(0), n.in(1), n.in(2)}, {n.out()});
    return absl::OkStatus();
  }
  const std::string raised = n.temp("max");
  n.emit("Max", {n.in(0), n.in(1)}, {raised});
  n.emit("Min", {raised, n.in(2)}, {n.out()});
  return absl::OkStatus();
}

// Floats: floor(x / y). Integers: ONNX's integer Div truncates, and its Mod (fmod = 0) takes the
// divisor's sign as FloorMod does, so x - mod(x, y) is a multiple of y that Div divides exactly.
absl::Status floor_div(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  const std::string a = n.in(0), b = n.in(1);
  if (is_floating(x.dtype)) {
    const std::string q = n.temp("quotient");
    n.emit("Div", {a, b}, {q});
    n.emit("Floor", {q}, {n.out()});
  } else if (x.dtype == DType::kUInt8) {
    n.emit("Div", {a, b}, {n.out()});
  } else {
    const std::string m = n.temp("mod"), d = n.temp("multiple");
    set_int(n.emit("Mod", {a, b}, {m}), "fmod", 0);
    n.emit("Sub", {a, m}, {d});
    n.emit("Div", {d, b}, {n.out()});
  }
  return absl::OkStatus();
}

// Integers: ONNX's Mod with fmod = 0 is FloorMod. Floats need fmod = 1 (C's fmod, the dividend's
// sign), then the divisor added where the signs differ, as tapeflow's functor does.
absl::Status floor_mod(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  const std::string a = n.in(0), b = n.in(1);
  if (!is_floating(x.dtype)) {
    set_int(n.emit("Mod", {a, b}, {n.out()}), "fmod", 0);
    return absl::OkStatus();
  }
  const std::string zero = scalar_initializer(n, "zero", x.dtype, 0);
  const std::string r = n.temp("fmod"), r_zero = n.temp("r_is_zero"), r_nonzero = n.temp("r_nonzero"),
                    r_neg = n.temp("r_negative"), b_neg = n.temp("y_negative"), signs = n.temp("signs_differ"),
                    fix = n.temp("fix"), shifted = n.temp("shifted");
  set_int(n.emit("Mod", {a, b}, {r}), "fmod", 1);
  n.emit("Equal", {r, zero}, {r_zero});
  n.emit("Not", {r_zero}, {r_nonzero});
  n.emit("Less", {r, zero}, {r_neg});
  n.emit("Less", {b, zero}, {b_neg});
  n.emit("Xor", {r_neg, b_neg}, {signs});
  n.emit("And", {r_nonzero, signs}, {fix});
  n.emit("Add", {r, b}, {shifted});
  n.emit("Where", {fix, shifted, r}, {n.out()});
  return absl::OkStatus();
}

// TruncateMod: the dividend's sign, ONNX's Mod with fmod = 1 (integers and floats).
absl::Status truncate_mod(NodeContext& n) {
  set_int(n.emit("Mod", {n.in(0), n.in(1)}, {n.out()}), "fmod", 1);
  return absl::OkStatus();
}

// 0 wherever y is 0, even for 0/0 and inf/0.
absl::Status div_no_nan(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  const std::string zero = scalar_initializer(n, "zero", x.dtype, 0);
  const std::string is_zero = n.temp("y_is_zero"), q = n.temp("quotient");
  n.emit("Equal", {n.in(1), zero}, {is_zero});
  n.emit("Div", {n.in(0), n.in(1)}, {q});
  n.emit("Where", {is_zero, zero, q}, {n.out()});
  return absl::OkStatus();
}

// L2Loss: ReduceSumSquare over every axis (ONNX's default without axes), halved.
absl::Status l2_loss(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
  const std::string squares = n.temp("sum_of_squares");
  set_int(n.emit("ReduceSumSquare", {n.in(0)}, {squares}), "keepdims", 0);
  n.emit("Mul", {squares, scalar_initializer(n, "half", x.dtype, 0.5)}, {n.out()});
  return absl::OkStatus();
}

// Xlogy and Xdivy: x * log(y) and x / y, 0 where x is 0 (even where the other side is inf or NaN).
Converter x_times(absl::string_view onnx_op) {
  return [op = std::string(onnx_op)](NodeContext& n) -> absl::Status {
    TF_ASSIGN_OR_RETURN(TensorSpec x, n.in_spec(0));
    const std::string zero = scalar_initializer(n, "zero", x.dtype, 0);
    const std::string is_zero = n.temp("x_is_zero"), value = n.temp("value");
    n.emit("Equal", {n.in(0), zero}, {is_zero});
    if (op == "Log") {
      const std::string log_y = n.temp("log_y");
      n.emit("Log", {n.in(1)}, {log_y});
      n.emit("Mul", {n.in(0), log_y}, {value});
    } else {
      n.emit("Div", {n.in(0), n.in(1)}, {value});
    }
    n.emit("Where", {is_zero, zero, value}, {n.out()});
    return absl::OkStatus();
  };
}

// ONNX has no Atan2: atan(y / x), moved by pi (toward y's side) where x < 0, and 0 at (0, 0).
// At x = 0, y / x is +-inf and atan gives +-pi / 2 already.
absl::Status atan2(NodeContext& n) {
  TF_ASSIGN_OR_RETURN(TensorSpec y, n.in_spec(0));
  const std::string zero = scalar_initializer(n, "zero", y.dtype, 0);
  const std::string pi = scalar_initializer(n, "pi", y.dtype, std::numbers::pi);
  const std::string minus_pi = scalar_initializer(n, "minus_pi", y.dtype, -std::numbers::pi);
  const std::string q = n.temp("quotient"), a = n.temp("atan"), x_neg = n.temp("x_negative"),
                    y_neg = n.temp("y_negative"), turn = n.temp("half_turn"), turned = n.temp("turned"),
                    moved = n.temp("moved"), x_zero = n.temp("x_zero"), y_zero = n.temp("y_zero"),
                    origin = n.temp("origin");
  n.emit("Div", {n.in(0), n.in(1)}, {q});
  n.emit("Atan", {q}, {a});
  n.emit("Less", {n.in(1), zero}, {x_neg});
  n.emit("Less", {n.in(0), zero}, {y_neg});
  n.emit("Where", {y_neg, minus_pi, pi}, {turn});
  n.emit("Add", {a, turn}, {turned});
  n.emit("Where", {x_neg, turned, a}, {moved});
  n.emit("Equal", {n.in(1), zero}, {x_zero});
  n.emit("Equal", {n.in(0), zero}, {y_zero});
  n.emit("And", {x_zero, y_zero}, {origin});
  n.emit("Where", {origin, zero, moved}, {n.out()});
  return absl::OkStatus();
}

// All and Any: opset 17's ReduceMin and ReduceMax take no bool, so the bools go through int32.
Converter logical_reduce(absl::string_view onnx_op) {
  return [op = std::string(onnx_op)](NodeContext& n) -> absl::Status {
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, n.const_ints(1));
    TF_ASSIGN_OR_RETURN(const proto::AttrValue* keep, n.attr("keep_dims"));
    if (axes.empty()) {
      n.emit("Identity", {n.in(0)}, {n.out()});
      return absl::OkStatus();
    }
    const std::string ints = n.temp("int32"), reduced = n.temp("reduced");
    set_int(n.emit("Cast", {n.in(0)}, {ints}), "to", onnx::TensorProto::INT32);
    onnx::NodeProto* node = n.emit(op, {ints}, {reduced});
    set_ints(node, "axes", axes);
    set_int(node, "keepdims", keep->b() ? 1 : 0);
    set_int(n.emit("Cast", {reduced}, {n.out()}), "to", onnx::TensorProto::BOOL);
    return absl::OkStatus();
  };
}

const absl::flat_hash_map<std::string, Converter>& converters() {
  static const ConverterTable* table = [] {
    auto* t = new ConverterTable{
      {"Identity", same("Identity")}, {"StopGradient", same("Identity")}, {"IdentityN", identity_n},
      // unary
      {"Neg", same("Neg")}, {"Abs", same("Abs")}, {"Sign", same("Sign")}, {"Sqrt", same("Sqrt")},
      {"Rsqrt", chain("Sqrt", "Reciprocal")}, {"Exp", same("Exp")}, {"Log", same("Log")}, {"Log1p", log1p},
      {"Square", square}, {"Tanh", same("Tanh")}, {"Sigmoid", same("Sigmoid")}, {"Floor", same("Floor")},
      {"LogicalNot", same("Not")},
      // activations (ONNX's Selu defaults are TensorFlow's constants)
      {"Relu", same("Relu")}, {"Relu6", relu6}, {"Elu", same("Elu")}, {"Selu", same("Selu")},
      {"Softplus", same("Softplus")}, {"Softsign", same("Softsign")}, {"LeakyRelu", leaky_relu},
      // binary, NumPy broadcasting on both sides
      {"Add", same("Add")}, {"Sub", same("Sub")}, {"Mul", same("Mul")}, {"Div", same("Div")}, {"Pow", same("Pow")},
      {"Maximum", same("Max")}, {"Minimum", same("Min")}, {"Equal", same("Equal")},
      {"NotEqual", chain("Equal", "Not")}, {"Less", same("Less")}, {"LessEqual", same("LessOrEqual")},
      {"Greater", same("Greater")}, {"GreaterEqual", same("GreaterOrEqual")}, {"LogicalAnd", same("And")},
      {"LogicalOr", same("Or")}, {"Select", same("Where")}, {"SelectV2", same("Where")},
      {"Cast", cast}, {"MatMul", matmul}, {"BatchMatMulV2", batch_matmul},
      {"Reshape", reshape}, {"ExpandDims", expand_dims}, {"Squeeze", squeeze}, {"Transpose", transpose},
      {"ConcatV2", concat}, {"Tile", tile}, {"Slice", slice}, {"PadV2", pad}, {"Pad", pad},
      {"Softmax", same("Softmax")}, {"LogSoftmax", same("LogSoftmax")}, {"L2Loss", l2_loss}, {"Mean", reduce("ReduceMean", false)},
      {"Sum", reduce("ReduceSum", true)}, {"Max", reduce("ReduceMax", false)}, {"Min", reduce("ReduceMin", false)},
      {"Prod", reduce("ReduceProd", false)}, {"ArgMax", arg("ArgMax")}, {"ArgMin", arg("ArgMin")},
      {"All", logical_reduce("ReduceMin")}, {"Any", logical_reduce("ReduceMax")},
      // math
      {"Reciprocal", same("Reciprocal")}, {"Expm1", expm1}, {"Sin", same("Sin")}, {"Cos", same("Cos")},
      {"Tan", same("Tan")}, {"Asin", same("Asin")}, {"Acos", same("Acos")}, {"Atan", same("Atan")},
      {"Sinh", same("Sinh")}, {"Cosh", same("Cosh")}, {"Asinh", same("Asinh")}, {"Acosh", same("Acosh")},
      {"Atanh", same("Atanh")}, {"Erf", same("Erf")}, {"Erfc", erfc}, {"Ceil", same("Ceil")}, {"Round", round},
      {"Rint", round}, {"IsNan", same("IsNaN")}, {"IsInf", same("IsInf")}, {"IsFinite", is_finite},
      {"SquaredDifference", squared_difference}, {"AddN", add_n}, {"ClipByValue", clip_by_value},
      {"FloorDiv", floor_div}, {"FloorMod", floor_mod}, {"TruncateDiv", same("Div")},
      {"TruncateMod", truncate_mod}, {"DivNoNan", div_no_nan}, {"Atan2", atan2},
      {"Xlogy", x_times("Log")},
      // ONNX cannot fail a run: the check is dropped, the values pass (README says so).
      {"CheckNumerics", same("Identity")}, {"Xdivy", x_times("Div")},
    };
    add_array_converters(*t);
    add_image_converters(*t);
    return t;
  }();
  return *table;
}

}  // namespace

const Converter* find_converter(absl::string_view tf_op) {
  const auto& table = converters();
  auto it = table.find(std::string(tf_op));
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace tapeflow::onnx_internal
