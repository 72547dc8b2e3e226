#include "eager/tensor.h"

#include <cmath>
#include <atomic>
#include <cstring>
#include <limits>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/errors.h"
#include "core/small_object_pool.h"
#include "devices/device_manager.h"
#include "eager/context.h"

namespace tapeflow {

namespace {
// An accessor's error for an empty tensor, or for an unconnected gradient (Note [Unconnected
// gradients]) whose source and gradient() call it names.
[[noreturn]] void throw_empty_read(const Tensor& t, const char* api, std::source_location loc) {
  if (t.unconnected()) throw InvalidArgumentError(absl::StrCat("[", api, "] The tensor is ", t.empty_reason()), loc);
  throw InvalidArgumentError(absl::StrCat("[", api, "] The tensor is empty (default-constructed)"), loc);
}
}  // namespace

namespace internal {
void throw_ragged(size_t expected, size_t got) {
  throw InvalidArgumentError(absl::StrCat("[tensor] Ragged or mismatched values: expected ", expected,
                                          " elements, got ", got),
                             std::source_location());
}

void check_host_read(const Tensor& t, DType requested, const char* api, std::source_location loc) {
  if (!t.defined()) [[unlikely]] throw_empty_read(t, api, loc);
  if (!t.device_tensor().buffer)
    throw FailedPreconditionError(absl::StrCat("[", api, "] '", t.name(), "' is a symbolic (graph) tensor and has "
                                               "no value; run it in a Session (or call eval()) to get one"),
                                  loc);
  if (t.dtype() != requested)
    throw InvalidArgumentError(absl::StrCat("[", api, "] Requested ", dtype_name(requested), " elements from a ",
                                            dtype_name(t.dtype()), " tensor"),
                               loc);
}
}  // namespace internal

void Tensor::throw_empty() const {
  if (unconnected()) throw InvalidArgumentError(absl::StrCat("[tensor] The tensor is ", empty_reason()), {});
  throw InvalidArgumentError("[tensor] The tensor is empty (default-constructed): it has no dtype, shape or value",
                             std::source_location());
}

namespace {
// Note [Unconnected gradients]: the deleter of a null shared_ptr<TensorImpl> carries the record;
// std::get_deleter finds it again. It deletes nothing (there is no TensorImpl).
struct UnconnectedNote {
  UnconnectedGradient info;
  void operator()(TensorImpl*) const {}
};
}  // namespace

Tensor Tensor::none_gradient(UnconnectedGradient info) {
  return Tensor(std::shared_ptr<TensorImpl>(nullptr, UnconnectedNote{std::move(info)}));
}

const UnconnectedGradient* Tensor::unconnected() const {
  if (impl_ != nullptr) return nullptr;
  const UnconnectedNote* note = std::get_deleter<UnconnectedNote>(impl_);
  return note ? &note->info : nullptr;
}

std::string Tensor::empty_reason() const {
  const UnconnectedGradient* u = unconnected();
  if (u == nullptr) return "an empty tensor";
  return absl::StrCat("the gradient of source ", u->source_index, " (", u->source,
                      ") that the target does not depend on (an unconnected gradient, asked at ",
                      format_location(u->asked_at), "); pass Unconnected::kZero to get zeros");
}

Tensor Tensor::from_host(DType dtype, const Shape& shape, const void* data, Device* device, std::source_location loc) {
  if (!shape.is_fully_defined())
    throw InvalidArgumentError(absl::StrCat("[tensor] A concrete tensor needs a fully defined shape, got ",
                                            shape.to_string()), loc);
  if (device == nullptr) device = default_device();
  absl::StatusOr<DeviceTensor> allocated = device->allocate(dtype, shape);
  if (!allocated.ok()) throw_status(with_op_prefix(allocated.status(), "tensor"), loc);
  DeviceTensor t = *std::move(allocated);
  if (data != nullptr) throw_if_error(device->copy_from_host(data, t.raw(), t.bytes()));
  return from_device_tensor(std::move(t));
}

Tensor Tensor::from_device_tensor(DeviceTensor t, std::source_location origin) {
  return Tensor(std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>(), std::move(t), origin));
}

Tensor Tensor::make_output(std::source_location origin, DeviceTensor** storage) {
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->origin = origin;
  *storage = &impl->data;
  return Tensor(std::move(impl));
}

Tensor Tensor::make_symbolic(SymbolicRef ref, DType dtype, Shape shape, std::source_location origin) {
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->data.dtype = dtype;
  impl->data.shape = std::move(shape);
  impl->origin = origin;
  impl->symbolic = std::move(ref);
  return Tensor(std::move(impl));
}

namespace {
std::atomic<EvalHook> g_eval_hook{nullptr};
}  // namespace

void set_eval_hook(EvalHook hook) { g_eval_hook.store(hook); }
EvalHook eval_hook() { return g_eval_hook.load(); }

Tensor Tensor::eval(std::source_location loc) const {
  if (!defined()) throw InvalidArgumentError("[eval] the tensor is empty", loc);
  if (!is_symbolic()) return *this;
  EvalHook hook = g_eval_hook.load();
  if (hook == nullptr)
    throw FailedPreconditionError(absl::StrCat("[eval] no default session to evaluate '", name(),
                                               "' in (create an InteractiveSession)"),
                                  loc);
  return hook(*this, loc);
}

std::string Tensor::name() const {
  if (!is_symbolic()) return std::string();
  return absl::StrCat(impl_->symbolic.graph->node_name(impl_->symbolic.node), ":", impl_->symbolic.output);
}

std::string Tensor::device_name() const {
  Device* d = device();
  return d ? d->name() : std::string();
}

bool Tensor::shares_buffer_with(const Tensor& other) const {
  return defined() && other.defined() && impl_->data.buffer && impl_->data.buffer == other.impl_->data.buffer;
}

void Tensor::copy_to_host(void* dst, std::source_location loc) const {
  if (!defined()) throw_empty_read(*this, "copy_to_host", loc);
  const DeviceTensor& t = impl_->data;
  if (!t.buffer)
    throw FailedPreconditionError(
        absl::StrCat("[copy_to_host] '", name(), "' is a symbolic (graph) tensor and has no value"), loc);
  Device* d = t.device();
  throw_if_error(d->synchronize(), loc);
  throw_if_error(d->copy_to_host(t.raw(), dst, t.bytes()), loc);
}

namespace internal {

void check_one_element(const Tensor& t, std::source_location loc) {
  if (t.num_elements() != 1)
    throw InvalidArgumentError(absl::StrCat("[item] needs exactly one element, the tensor has shape ",
                                            t.shape().to_string()), loc);
}

void read_element(const Tensor& t, std::initializer_list<int64_t> index, void* out, size_t bytes,
                  std::source_location loc) {
  if (static_cast<int>(index.size()) != t.rank())
    throw InvalidArgumentError(absl::StrCat("[at] got ", index.size(), " indices for a tensor of rank ", t.rank(),
                                            " (shape ", t.shape().to_string(), ")"), loc);
  int64_t flat = 0, i = 0;
  for (int64_t v : index) {
    const int64_t dim = t.shape().dim(static_cast<int>(i));
    if (v < 0 || v >= dim)
      throw OutOfRangeError(absl::StrCat("[at] index ", v, " is out of range for dimension ", i,
                                         " of size ", dim), loc);
    flat = flat * dim + v;
    ++i;
  }
  const DeviceTensor& d = t.device_tensor();
  Device* device = d.device();
  throw_if_error(device->synchronize(), loc);
  throw_if_error(device->copy_to_host(static_cast<const char*>(d.raw()) + flat * static_cast<int64_t>(bytes), out,
                                      bytes), loc);
}

}  // namespace internal

// ---- printing ----
namespace {

constexpr int64_t kSummarizeThreshold = 1000;  // NumPy's print threshold
constexpr int64_t kEdgeItems = 3;

// Floats print as NumPy does by default: fixed notation with at most 8 decimals and trailing
// zeros dropped ("1.", "0.25"), or scientific when the magnitudes call for it.
template <typename T> std::string format_element(T v, bool scientific) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "True" : "False";
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (scientific) {
      std::string s = absl::StrFormat("%.8e", static_cast<double>(v));
      const size_t e = s.find('e');
      std::string mant = s.substr(0, e);
      while (mant.back() == '0') mant.pop_back();
      return mant + s.substr(e);
    }
    std::string s = absl::StrFormat("%.8f", static_cast<double>(v));
    while (s.back() == '0') s.pop_back();
    if (s == "-0.") return "-0.";
    return s;
  } else {
    return absl::StrCat(static_cast<int64_t>(v));
  }
}

// NumPy's rule: scientific when the largest magnitude is >= 1e16, or the smallest non-zero
// one is < 1e-4, or they differ by more than 1e3 with the smallest < 1e-4.
template <typename T> bool needs_scientific(const std::vector<T>& values) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    double max_abs = 0, min_abs = std::numeric_limits<double>::infinity();
    for (T v : values) {
      if (!std::isfinite(v) || v == 0) continue;
      max_abs = std::max(max_abs, std::fabs(double(v)));
      min_abs = std::min(min_abs, std::fabs(double(v)));
    }
    if (max_abs == 0) return false;
    return max_abs >= 1e16 || min_abs < 1e-4 || (max_abs / min_abs > 1e3 && min_abs < 1e-4);
  }
}

// Pads the cells so decimal points line up: integer parts right-aligned, fractions left-aligned.
void align_decimal_points(std::vector<std::string>& cells) {
  size_t int_w = 0, frac_w = 0;
  for (const auto& c : cells) {
    if (c.empty()) continue;
    const size_t dot = c.find('.');
    if (dot == std::string::npos || c.find('e') != std::string::npos) return;  // not fixed notation
    int_w = std::max(int_w, dot);
    frac_w = std::max(frac_w, c.size() - dot - 1);
  }
  for (auto& c : cells) {
    if (c.empty()) continue;
    const size_t dot = c.find('.');
    c = std::string(int_w - dot, ' ') + c + std::string(frac_w - (c.size() - dot - 1), ' ');
  }
}

struct Printer {
  const std::vector<std::string>& cells;
  const Shape& shape;
  bool summarize;
  size_t width;
  std::string out;

  // Prints the sub-array at `dim` starting at flat element `offset`.
  void print(int dim, int64_t offset, int indent) {
    if (dim == shape.rank()) {
      const std::string& c = cells[static_cast<size_t>(offset)];
      out += std::string(width - c.size(), ' ') + c;
      return;
    }
    int64_t stride = 1;
    for (int d = dim + 1; d < shape.rank(); ++d) stride *= shape.dim(d);
    const int64_t n = shape.dim(dim);
    out += "[";
    const bool elide = summarize && n > 2 * kEdgeItems;
    for (int64_t i = 0; i < n; ++i) {
      if (elide && i == kEdgeItems) {
        out += dim + 1 == shape.rank() ? "..." : "...";
        i = n - kEdgeItems;
        separator(dim, indent);
      }
      print(dim + 1, offset + i * stride, indent + 1);
      if (i + 1 < n) separator(dim, indent);
    }
    out += "]";
  }
  void separator(int dim, int indent) {
    if (dim + 1 == shape.rank()) { out += " "; return; }
    out += std::string(static_cast<size_t>(shape.rank() - dim - 1), '\n');
    out += std::string(static_cast<size_t>(indent + 1), ' ');
  }
};

// Flat indices that will be printed (all of them unless summarizing).
bool is_printed(int64_t flat, const Shape& shape, bool summarize) {
  if (!summarize) return true;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    const int64_t i = flat % shape.dim(d);
    flat /= shape.dim(d);
    if (shape.dim(d) > 2 * kEdgeItems && i >= kEdgeItems && i < shape.dim(d) - kEdgeItems) return false;
  }
  return true;
}

// Python's tuple form, as NumPy and TensorFlow print shapes: "(3,)", "(2, 2)", "(None, 3)".
std::string shape_tuple(const Shape& s) {
  auto dim = [&](int i) { return s.dim(i) < 0 ? std::string("None") : absl::StrCat(s.dim(i)); };
  if (s.rank() == 1) return absl::StrCat("(", dim(0), ",)");
  std::string out = "(";
  for (int i = 0; i < s.rank(); ++i) absl::StrAppend(&out, i ? ", " : "", dim(i));
  return out + ")";
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) {
    const UnconnectedGradient* u = unconnected();
    if (u == nullptr) return "tapeflow.Tensor(<empty>)";
    return absl::StrCat("tapeflow.Tensor(<empty: the unconnected gradient of source ", u->source_index,
                        ", asked at ", format_location(u->asked_at), ">)");
  }
  if (!impl_->data.buffer)
    return absl::StrCat("tapeflow.Tensor(\"", name(), "\", shape=", shape_tuple(shape()), ", dtype=", dtype_name(dtype()), ")");
  const bool summarize = num_elements() > kSummarizeThreshold;
  std::vector<std::string> cells(static_cast<size_t>(num_elements()));
  size_t width = 0;
  dispatch_dtype(dtype(), [&]<typename T>() {
    const std::vector<T> values = to_vector<T>();
    const bool scientific = needs_scientific(values);
    for (size_t i = 0; i < values.size(); ++i) {
      if (!is_printed(static_cast<int64_t>(i), shape(), summarize)) continue;
      cells[i] = format_element<T>(values[i], scientific);
    }
    if constexpr (std::is_floating_point_v<T>) align_decimal_points(cells);
    for (const auto& c : cells) width = std::max(width, c.size());
  });
  Printer p{cells, shape(), summarize, width, {}};
  p.print(0, 0, 0);
  const bool multiline = p.out.find('\n') != std::string::npos;
  return absl::StrCat("tapeflow.Tensor(", multiline ? "\n" : "", p.out, ", shape=", shape_tuple(shape()),
                      ", dtype=", dtype_name(dtype()), ")");
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace tapeflow
