#include "nn/module.h"

#include <algorithm>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/ops/activation.h"
#include "eager/ops/array.h"
#include "eager/ops/binary.h"
#include "eager/ops/matmul.h"
#include "eager/ops/nn.h"
#include "eager/ops/unary.h"

namespace tapeflow::nn {

// ---- unique names ----

namespace {
struct NameRegistry {
  std::mutex mu;
  absl::flat_hash_map<std::string, int64_t> counts;  // guarded by mu
};
NameRegistry& name_registry() {
  static NameRegistry* registry = new NameRegistry;  // never destroyed: layers may outlive main's statics
  return *registry;
}
}  // namespace

std::string unique_name(std::string_view base) {
  NameRegistry& r = name_registry();
  std::lock_guard lock(r.mu);
  int64_t& count = r.counts[std::string(base)];
  std::string name =
      count == 0 ? std::string(base) : absl::StrCat(absl::string_view(base.data(), base.size()), "_", count);
  ++count;
  return name;
}

void reset_unique_names() {
  NameRegistry& r = name_registry();
  std::lock_guard lock(r.mu);
  r.counts.clear();
}

// ---- Module ----

Module::Module(std::string_view name) : name_(name.empty() ? unique_name("module") : std::string(name)) {}

Variable Module::add_variable(std::string_view name, const Tensor& initial_value, bool trainable,
                              std::source_location loc) {
  Variable v(initial_value, absl::StrCat(name_, "/", absl::string_view(name.data(), name.size())), trainable, loc);
  variables_.push_back(v);
  return v;
}

void Module::truncate_variables(size_t count) {
  if (variables_.size() > count) variables_.erase(variables_.begin() + static_cast<ptrdiff_t>(count), variables_.end());
}

void Module::collect(std::vector<Variable>& out, bool trainable_only, std::vector<int64_t>& seen) const {
  if (trainable_only && !trainable_) return;
  for (const Variable& v : variables_) {
    if (trainable_only && !v.trainable()) continue;
    if (std::find(seen.begin(), seen.end(), v.id()) != seen.end()) continue;
    seen.push_back(v.id());
    out.push_back(v);
  }
  for (const auto& m : submodules_) m->collect(out, trainable_only, seen);
}

std::vector<Variable> Module::variables() const {
  std::vector<Variable> out;
  std::vector<int64_t> seen;
  collect(out, /*trainable_only=*/false, seen);
  return out;
}

std::vector<Variable> Module::trainable_variables() const {
  std::vector<Variable> out;
  std::vector<int64_t> seen;
  collect(out, /*trainable_only=*/true, seen);
  return out;
}

std::vector<Variable> Module::non_trainable_variables() const {
  const std::vector<Variable> trainable = trainable_variables();
  std::vector<Variable> out;
  for (const Variable& v : variables()) {
    const bool is_trainable =
        std::any_of(trainable.begin(), trainable.end(), [&](const Variable& t) { return t.id() == v.id(); });
    if (!is_trainable) out.push_back(v);
  }
  return out;
}

// ---- Layer ----

Tensor Layer::operator()(const Tensor& x, std::source_location loc) {
  if (!x.defined()) fail("the input is " + x.empty_reason(), loc);
  if (!built_) {
    const size_t before = num_own_variables();
    try {
      build(x, loc);
    } catch (...) {
      truncate_variables(before);
      throw;
    }
    built_ = true;
  }
  return call(x, loc);
}

void Layer::build(const Tensor&, std::source_location) {}

void Layer::fail(const std::string& message, std::source_location loc) const {
  throw InvalidArgumentError(absl::StrCat("[", name(), "] ", message), loc);
}

// ---- Activation ----

Activation::Activation(Kind kind) : kind_(kind) {}

Tensor Activation::operator()(const Tensor& x, std::source_location loc) const {
  if (fn_) return fn_(x);
  switch (kind_) {
    case kLinear:
      return x;
    case kRelu:
      return relu(x, loc);
    case kRelu6:
      return relu6(x, loc);
    case kSigmoid:
      return sigmoid(x, loc);
    case kTanh:
      return tanh(x, loc);
    case kSoftmax:
      return softmax(x, -1, loc);
    case kElu:
      return elu(x, loc);
    case kSoftplus:
      return softplus(x, loc);
  }
  return x;
}

std::string Activation::name() const {
  if (fn_) return "custom";
  switch (kind_) {
    case kLinear:
      return "linear";
    case kRelu:
      return "relu";
    case kRelu6:
      return "relu6";
    case kSigmoid:
      return "sigmoid";
    case kTanh:
      return "tanh";
    case kSoftmax:
      return "softmax";
    case kElu:
      return "elu";
    case kSoftplus:
      return "softplus";
  }
  return "unknown";
}

// ---- Dense ----

namespace {
// Validates units before a name is drawn, so a rejected layer does not use one up.
std::string dense_name(int64_t units, std::string_view name, std::source_location loc) {
  if (units <= 0)
    throw InvalidArgumentError(absl::StrCat("[Dense] units must be a positive integer, got ", units), loc);
  return name.empty() ? unique_name("dense") : std::string(name);
}
}  // namespace

Dense::Dense(int64_t units, Activation activation, bool use_bias, Initializer kernel_initializer,
             std::optional<int64_t> seed, std::string_view name, std::source_location loc)
    : Layer(dense_name(units, name, loc)),
      units_(units),
      activation_(std::move(activation)),
      use_bias_(use_bias),
      kernel_initializer_(std::move(kernel_initializer)),
      seed_(seed) {
  if (!kernel_initializer_)
    throw InvalidArgumentError(absl::StrCat("[", this->name(), "] kernel_initializer is empty"), loc);
}

Variable Dense::kernel() const {
  if (!kernel_) throw FailedPreconditionError(absl::StrCat("[", name(), "] the layer is not built yet: call it first"));
  return *kernel_;
}

Variable Dense::bias() const {
  if (!use_bias_)
    throw FailedPreconditionError(absl::StrCat("[", name(), "] the layer has no bias (use_bias = false)"));
  if (!bias_) throw FailedPreconditionError(absl::StrCat("[", name(), "] the layer is not built yet: call it first"));
  return *bias_;
}

void Dense::build(const Tensor& x, std::source_location loc) {
  const Shape& s = x.shape();
  if (s.rank() < 2) fail(absl::StrCat("expected an input of rank >= 2, got shape ", s.to_string()), loc);
  if (!is_floating(x.dtype()))
    fail(absl::StrCat("expected a floating-point input, got dtype ", dtype_name(x.dtype())), loc);
  const int64_t in = s[s.rank() - 1];
  if (in < 0)
    fail(absl::StrCat("the last dimension of the input must be known to build the layer, got shape ", s.to_string()),
         loc);
  const Shape kernel_shape{in, units_};
  Tensor init = kernel_initializer_(kernel_shape, x.dtype(), seed_);
  if (!init.defined() || init.shape() != kernel_shape || init.dtype() != x.dtype())
    fail(absl::StrCat("kernel_initializer must return a ", dtype_name(x.dtype()), " tensor of shape ",
                      kernel_shape.to_string()),
         loc);
  kernel_ = add_variable("kernel", init, true, loc);
  if (use_bias_) bias_ = add_variable("bias", initializers::zeros(Shape{units_}, x.dtype()), true, loc);
}

Tensor Dense::call(const Tensor& x, std::source_location loc) {
  const Shape& s = x.shape();
  if (s.rank() < 2) fail(absl::StrCat("expected an input of rank >= 2, got shape ", s.to_string()), loc);
  const int64_t in = kernel_->shape()[0];
  const int64_t last = s[s.rank() - 1];
  if (last >= 0 && last != in)
    fail(absl::StrCat("expected an input whose last dimension is ", in, " (the layer was built for it), got shape ",
                      s.to_string()),
         loc);
  if (x.dtype() != kernel_->dtype())
    fail(absl::StrCat("expected an input of dtype ", dtype_name(kernel_->dtype()),
                      " (the layer was built for it), got ", dtype_name(x.dtype())),
         loc);
  Tensor y = matmul(x, kernel_->read(), false, false, loc);
  if (use_bias_) y = add(y, bias_->read(), loc);
  return activation_(y, loc);
}

// ---- Flatten ----

Flatten::Flatten(std::string_view name) : Layer(name.empty() ? unique_name("flatten") : name) {}

Tensor Flatten::call(const Tensor& x, std::source_location loc) {
  const Shape& s = x.shape();
  if (s.rank() < 1) fail(absl::StrCat("expected an input of rank >= 1, got shape ", s.to_string()), loc);
  // Computed from the dims, not reshape's -1, so an empty batch still gets its feature size.
  int64_t features = 1;
  for (int i = 1; i < s.rank(); ++i) {
    if (s[i] < 0) {
      features = -1;
      break;
    }
    features *= s[i];
  }
  return reshape(x, {s[0], features}, loc);
}

// ---- Sequential ----

Sequential::Sequential(std::initializer_list<LayerRef> layers, std::string_view name)
    : Layer(name.empty() ? unique_name("sequential") : name) {
  for (const LayerRef& l : layers) add(l);
}

Sequential::Sequential(const std::vector<LayerRef>& layers, std::string_view name)
    : Layer(name.empty() ? unique_name("sequential") : name) {
  for (const LayerRef& l : layers) add(l);
}

void Sequential::add(LayerRef layer) {
  if (!layer.get()) throw InvalidArgumentError(absl::StrCat("[", name(), "] cannot add a null layer"));
  layers_.push_back(layer.get());
  add_module(layer.get());
}

Tensor Sequential::call(const Tensor& x, std::source_location loc) {
  if (layers_.empty()) fail("the model has no layers: add some before calling it", loc);
  Tensor y = x;
  for (const auto& layer : layers_) y = (*layer)(y, loc);
  return y;
}

}  // namespace tapeflow::nn
