// The random-op fuzzer (issue 17): random calls of every op in the registry, with random
// dtypes, ranks 0-5, zero-sized and huge dims and nonsense attributes, half of them under a
// GradientTape with a gradient asked. Every call must return or throw a tapeflow::Error, and
// leave its inputs as they were; run in the ASan+UBSan build, no sanitizer report either.
//
//   op_fuzzer --calls 20000 --seed 1        # what ctest runs (asan preset too)
//   op_fuzzer --calls 2000000 --seed $RANDOM --verbose   # a long run (README)
//
// The op table is the registry itself (OpRegistry::global()), so a newly registered op is
// fuzzed without editing this file. Attribute names and kinds come from each op's tf_form
// (Note [GraphDef form] in graph/graph_def.h) plus a pool of common names, with values of the
// right kind most of the time and of a wrong kind sometimes.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <typeinfo>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/checked_size.h"
#include "tapeflow.h"

namespace tapeflow {
namespace {

using Rng = std::mt19937_64;

int64_t pick(Rng& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool chance(Rng& rng, int percent) { return pick(rng, 0, 99) < percent; }

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8,
                             DType::kBool};

DType random_dtype(Rng& rng) { return kDTypes[pick(rng, 0, std::size(kDTypes) - 1)]; }

// A dim: small mostly, sometimes zero, rarely huge (for attrs; tensors stay small).
int64_t random_dim(Rng& rng, bool allow_huge) {
  const int64_t r = pick(rng, 0, 99);
  if (r < 10) return 0;
  if (allow_huge && r < 14) return (int64_t{1} << pick(rng, 31, 62)) - pick(rng, 0, 1);
  if (allow_huge && r < 17) return -pick(rng, 1, 3);
  return pick(rng, 1, 4);
}

// A small concrete tensor: rank 0-5, at most 64 elements, values that include the edges of
// each dtype (0, negatives, NaN and infinities for floats, INT_MIN for ints).
Tensor random_tensor(Rng& rng, DType dtype) {
  Shape shape;
  const int rank = static_cast<int>(pick(rng, 0, 5));
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = random_dim(rng, false);
    if (n * std::max<int64_t>(d, 1) > 64) d = 1;
    shape.push_back(d);
    n *= d;
  }
  std::vector<double> values(static_cast<size_t>(n));
  for (double& v : values) {
    const int64_t r = pick(rng, 0, 99);
    if (r < 3) v = std::numeric_limits<double>::quiet_NaN();
    else if (r < 5) v = std::numeric_limits<double>::infinity() * (r == 3 ? 1 : -1);
    else if (r < 8) v = -2147483648.0;
    else v = static_cast<double>(pick(rng, -6, 6)) * (r < 50 ? 0.5 : 1.0);
  }
  Tensor t = Tensor::from_host(DType::kFloat64, shape, values.data());
  return cast(t, dtype);  // saturating (Note [Float to integer casts]): NaN -> 0, inf -> limits
}

std::vector<int64_t> random_ints(Rng& rng, bool allow_huge) {
  std::vector<int64_t> v(static_cast<size_t>(pick(rng, 0, 5)));
  for (int64_t& x : v) x = chance(rng, 30) ? pick(rng, -3, 3) : random_dim(rng, allow_huge);
  return v;
}

AttrValue random_attr_of_kind(Rng& rng, std::string_view kind) {
  if (kind == "int" || kind == "num" || kind == "val") {
    if (kind != "int" && chance(rng, 50)) return static_cast<double>(pick(rng, -4, 300));
    return chance(rng, 80) ? pick(rng, -3, 6) : random_dim(rng, true);
  }
  if (kind == "float") return chance(rng, 90) ? static_cast<double>(pick(rng, -10, 10)) / 4 : std::nan("");
  if (kind == "bool") return chance(rng, 50);
  if (kind == "type") return random_dtype(rng);
  if (kind == "ints" || kind == "hw" || kind == "pairs") return random_ints(rng, true);
  if (kind == "string") {
    const char* strings[] = {"SAME", "VALID", "NHWC", "NCHW", "", "bogus"};
    return std::string(strings[pick(rng, 0, std::size(strings) - 1)]);
  }
  if (kind == "shape") {
    Shape s;
    for (int i = pick(rng, 0, 4); i > 0; --i) s.push_back(random_dim(rng, true));
    return s;
  }
  return pick(rng, -2, 2);
}

AttrValue random_attr_any_kind(Rng& rng) {
  const char* kinds[] = {"int", "float", "bool", "type", "ints", "string", "shape"};
  return random_attr_of_kind(rng, kinds[pick(rng, 0, std::size(kinds) - 1)]);
}

// The (name, kind) pairs an op's tf_form names: "axes@ints", "alpha:float=0.2",
// "dtype>T:type", "axes>squeeze_dims:ints=[]". Type attrs ("T=in0") and "-name" are skipped.
std::vector<std::pair<std::string, std::string>> attrs_of(const OpDef& op) {
  std::vector<std::pair<std::string, std::string>> out;
  if (op.tf_form == nullptr) return out;
  for (absl::string_view item : absl::StrSplit(op.tf_form, ' ', absl::SkipEmpty())) {
    if (item.empty() || item[0] == '-') continue;
    const size_t at = item.find('@'), colon = item.find(':'), gt = item.find('>');
    size_t name_end = std::min({at, colon, gt, item.find('=')});
    if (name_end == absl::string_view::npos || (at == absl::string_view::npos && colon == absl::string_view::npos))
      continue;
    std::string kind;
    if (at != absl::string_view::npos) kind = std::string(item.substr(at + 1, item.find('#') - at - 1));
    else kind = std::string(item.substr(colon + 1, item.find('=', colon) - colon - 1));
    out.emplace_back(std::string(item.substr(0, name_end)), kind);
  }
  return out;
}

// Attribute names many ops read, tried with random kinds.
constexpr const char* kCommonAttrs[] = {"axis", "axes", "keep_dims", "shape", "dtype", "perm", "begin", "size",
                                        "value", "depth", "num", "start", "limit", "delta", "seed", "seed2"};

struct Counts {
  int64_t returned = 0, typed_errors = 0, failures = 0;
};

std::string describe(const OpDef& op, const std::vector<Tensor>& inputs, const AttrMap& attrs) {
  std::string out = absl::StrCat(op.type, "(");
  for (size_t i = 0; i < inputs.size(); ++i)
    absl::StrAppend(&out, i ? ", " : "", dtype_name(inputs[i].dtype()), inputs[i].shape().to_string());
  return absl::StrCat(out, ") attrs {", attrs.to_string(), "}");
}

std::vector<std::vector<char>> snapshot(const std::vector<Tensor>& inputs) {
  std::vector<std::vector<char>> bytes;
  for (const Tensor& t : inputs) {
    std::vector<char> b(t.device_tensor().bytes());
    if (!b.empty()) t.copy_to_host(b.data());
    bytes.push_back(std::move(b));
  }
  return bytes;
}

void one_call(Rng& rng, const OpDef& op, Counts& counts, bool verbose) {
  const int n_inputs = op.num_inputs >= 0 ? op.num_inputs : static_cast<int>(pick(rng, 0, 4));
  const DType common = random_dtype(rng);
  std::vector<Tensor> inputs;
  for (int i = 0; i < n_inputs; ++i) inputs.push_back(random_tensor(rng, chance(rng, 75) ? common : random_dtype(rng)));
  AttrMap attrs;
  for (const auto& [name, kind] : attrs_of(op))
    if (chance(rng, 93)) attrs.set(name, chance(rng, 90) ? random_attr_of_kind(rng, kind) : random_attr_any_kind(rng));
  for (int extra = static_cast<int>(pick(rng, 0, 2)); extra > 0; --extra)
    attrs.set(kCommonAttrs[pick(rng, 0, std::size(kCommonAttrs) - 1)], random_attr_any_kind(rng));
  const std::vector<std::vector<char>> before = snapshot(inputs);
  const std::string what = verbose ? describe(op, inputs, attrs) : std::string();
  if (verbose) std::fprintf(stderr, "call %s\n", what.c_str());
  try {
    const bool taped = chance(rng, 50);
    GradientTape tape(/*persistent=*/false);
    std::vector<Source> sources;
    if (taped)
      for (const Tensor& t : inputs)
        if (is_floating(t.dtype())) {
          tape.watch(t);
          sources.emplace_back(t);
        }
    const OpCall call{op, inputs, attrs, std::source_location::current()};
    TensorList outputs = execute(call);
    if (taped && !sources.empty() && !outputs.empty() && is_floating(outputs[0].dtype()) && op.differentiable)
      tape.gradient(reduce_sum(outputs[0]), sources);
    ++counts.returned;
  } catch (const Error&) {
    ++counts.typed_errors;
  } catch (const std::exception& e) {
    ++counts.failures;
    std::fprintf(stderr, "FAIL: untyped exception %s: %s\n  in %s\n", typeid(e).name(), e.what(),
                 describe(op, inputs, attrs).c_str());
  }
  if (snapshot(inputs) != before) {
    ++counts.failures;
    std::fprintf(stderr, "FAIL: an input changed\n  in %s\n", describe(op, inputs, attrs).c_str());
  }
}

}  // namespace
}  // namespace tapeflow

int main(int argc, char** argv) {
  using namespace tapeflow;
  int64_t calls = 20000;
  uint64_t seed = 1;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--calls") && i + 1 < argc) calls = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--verbose")) verbose = true;
    else {
      std::fprintf(stderr, "usage: op_fuzzer [--calls N] [--seed S] [--verbose]\n");
      return 2;
    }
  }
  // Random attrs ask for tensors of gigabytes that the machine could serve (range(0, 2^31)):
  // a small limit turns those into the ResourceExhausted path, which is what is under test,
  // instead of page-faulting gigabytes (and keeps an ASan run fast).
  set_max_tensor_bytes(int64_t{64} << 20);
  const std::vector<const OpDef*> ops = OpRegistry::global().ops();
  std::printf("op_fuzzer: seed %llu, %lld calls over %zu registered ops\n", static_cast<unsigned long long>(seed),
              static_cast<long long>(calls), ops.size());
  std::fflush(stdout);
  Rng rng(seed);
  Counts counts;
  for (int64_t i = 0; i < calls; ++i) one_call(rng, *ops[pick(rng, 0, static_cast<int64_t>(ops.size()) - 1)], counts, verbose);
  std::printf("op_fuzzer: %lld returned, %lld typed errors, %lld failures\n", static_cast<long long>(counts.returned),
              static_cast<long long>(counts.typed_errors), static_cast<long long>(counts.failures));
  return counts.failures == 0 ? 0 : 1;
}
