// einsum (eager/ops/einsum.h): parses the equation and composes primitives; no OpDef, no kernel
// (Note [einsum is a composite]).
#include "eager/ops/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "eager/ops/array.h"
#include "eager/ops/matmul.h"
#include "eager/ops/reduction.h"

namespace tapeflow {

namespace {

using Ints = std::vector<int64_t>;

[[noreturn]] void fail(std::string_view equation, const std::string& what, std::source_location loc) {
  throw InvalidArgumentError(absl::StrCat("[einsum] equation '", std::string(equation), "': ", what), loc);
}

struct Parsed {
  std::vector<std::string> inputs;  // one label string per operand
  std::string output;
};

Parsed parse(std::string_view equation, absl::Span<const Tensor* const> operands, std::source_location loc) {
  std::string eq;
  for (char c : equation) if (c != ' ') eq.push_back(c);
  if (eq.find('.') != std::string::npos) fail(equation, "ellipsis ('...') is not supported", loc);
  Parsed p;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  for (size_t comma; (comma = lhs.find(',', start)) != std::string::npos; start = comma + 1)
    p.inputs.push_back(lhs.substr(start, comma - start));
  p.inputs.push_back(lhs.substr(start));
  if (p.inputs.size() != operands.size())
    fail(equation, absl::StrCat("it names ", p.inputs.size(), " operand(s) but ", operands.size(), " were given"), loc);
  std::map<char, int> count;  // occurrences over all operands
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    const std::string& s = p.inputs[k];
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (!std::isalpha(static_cast<unsigned char>(c)))
        fail(equation, absl::StrCat("'", std::string(1, c), "' in operand ", k, "'s subscripts is not a letter"), loc);
      if (s.find(c) != i)
        fail(equation, absl::StrCat("label '", std::string(1, c), "' is repeated in operand ", k, "'s subscripts '", s,
                                    "' (diagonals and traces are not supported)"), loc);
      ++count[c];
    }
    if (static_cast<int>(s.size()) != operands[k]->rank())
      fail(equation, absl::StrCat("operand ", k, " has rank ", operands[k]->rank(), " (shape ",
                                  operands[k]->shape().to_string(), ") but its subscripts '", s, "' name ", s.size(),
                                  " dimension(s)"), loc);
  }
  if (arrow == std::string::npos) {  // implicit output: the labels seen once, alphabetically
    for (const auto& [c, n] : count) if (n == 1) p.output.push_back(c);
    std::sort(p.output.begin(), p.output.end());
    return p;
  }
  p.output = eq.substr(arrow + 2);
  for (size_t i = 0; i < p.output.size(); ++i) {
    const char c = p.output[i];
    if (!std::isalpha(static_cast<unsigned char>(c)))
      fail(equation, absl::StrCat("'", std::string(1, c), "' in the output subscripts is not a letter"), loc);
    if (p.output.find(c) != i)
      fail(equation, absl::StrCat("label '", std::string(1, c), "' is repeated in the output"), loc);
    if (!count.count(c)) fail(equation, absl::StrCat("output label '", std::string(1, c), "' appears in no operand"), loc);
  }
  return p;
}

// The size of each label, checked to agree between operands (unknown dims agree with anything).
std::map<char, int64_t> label_sizes(std::string_view equation, const Parsed& p,
                                    absl::Span<const Tensor* const> operands, std::source_location loc) {
  std::map<char, int64_t> size;
  std::map<char, size_t> from;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    for (size_t i = 0; i < p.inputs[k].size(); ++i) {
      const char c = p.inputs[k][i];
      const int64_t d = operands[k]->shape().dim(static_cast<int>(i));
      auto [it, inserted] = size.try_emplace(c, d);
      if (inserted || it->second < 0) {
        it->second = d;
        from[c] = k;
      } else if (d >= 0 && d != it->second) {
        fail(equation, absl::StrCat("label '", std::string(1, c), "' has size ", it->second, " in operand ", from[c],
                                    " but size ", d, " in operand ", k), loc);
      }
    }
  }
  return size;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// x with its labels put in `order` (a permutation of `labels`); no node when already so.
Tensor permute(const Tensor& x, const std::string& labels, const std::string& order, std::source_location loc) {
  if (labels == order) return x;
  Ints perm;
  for (char c : order) perm.push_back(static_cast<int64_t>(labels.find(c)));
  return transpose(x, perm, loc);
}

// Sums x over its labels that are not in `keep`; updates labels.
Tensor sum_out(const Tensor& x, std::string& labels, const std::string& keep, std::source_location loc) {
  Ints axes;
  std::string rest;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (has(keep, labels[i])) rest.push_back(labels[i]);
    else axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.empty()) return x;
  labels = rest;
  return reduce_sum(x, Axes(axes), false, loc);
}

// The product of the labels' sizes, -1 when one is unknown.
int64_t group_size(const std::string& group, const std::map<char, int64_t>& size) {
  int64_t n = 1;
  for (char c : group) {
    const int64_t d = size.at(c);
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

// reshape, with no node when x already has the shape; at most one unknown entry.
Tensor reshape_to(std::string_view equation, const Tensor& x, const Ints& shape, std::source_location loc) {
  if (x.shape() == Shape(shape)) return x;
  if (std::count(shape.begin(), shape.end(), -1) > 1)
    fail(equation, "more than one group of dimensions has an unknown size; einsum needs the others known", loc);
  return reshape(x, shape, loc);
}

Tensor einsum_impl(std::string_view equation, absl::Span<const Tensor* const> operands, std::source_location loc) {
  for (size_t k = 0; k < operands.size(); ++k)
    if (!operands[k]->defined()) throw InvalidArgumentError(absl::StrCat("[einsum] operand ", k, " is ", operands[k]->empty_reason()), loc);
  Parsed p = parse(equation, operands, loc);
  const std::map<char, int64_t> size = label_sizes(equation, p, operands, loc);
  if (operands.size() == 1) {
    std::string labels = p.inputs[0];
    if (labels == p.output) return identity(*operands[0], loc);
    const Tensor summed = sum_out(*operands[0], labels, p.output, loc);
    return permute(summed, labels, p.output, loc);
  }
  if (operands[0]->dtype() != operands[1]->dtype())
    fail(equation, absl::StrCat("operand 0 has dtype ", dtype_name(operands[0]->dtype()), " but operand 1 has dtype ",
                                dtype_name(operands[1]->dtype())), loc);
  // Labels of one operand that are neither in the other nor in the output are summed first.
  std::string la = p.inputs[0], lb = p.inputs[1];
  const Tensor a = sum_out(*operands[0], la, lb + p.output, loc);
  const Tensor b = sum_out(*operands[1], lb, la + p.output, loc);
  std::string batch, afree, bfree, contracted;
  for (char c : p.output) {
    if (has(la, c) && has(lb, c)) batch.push_back(c);
    else if (has(la, c)) afree.push_back(c);
    else bfree.push_back(c);
  }
  for (char c : la) if (has(lb, c) && !has(p.output, c)) contracted.push_back(c);
  // [batch, M, K] x [batch, K, N] -> [batch, M, N] (no batch dim when there is no batch label).
  auto blocks = [&](const std::string& first, const std::string& second) {
    Ints s;
    if (!batch.empty()) s.push_back(group_size(batch, size));
    s.push_back(group_size(first, size));
    s.push_back(group_size(second, size));
    return s;
  };
  const Tensor a3 = reshape_to(equation, permute(a, la, batch + afree + contracted, loc), blocks(afree, contracted), loc);
  const Tensor b3 = reshape_to(equation, permute(b, lb, batch + contracted + bfree, loc), blocks(contracted, bfree), loc);
  const Tensor c3 = matmul(a3, b3, false, false, loc);
  Ints full;
  const std::string labels = batch + afree + bfree;
  for (char ch : labels) full.push_back(size.at(ch));
  return permute(reshape_to(equation, c3, full, loc), labels, p.output, loc);
}

}  // namespace

Tensor einsum(std::string_view equation, const Tensor& a, std::source_location loc) {
  const Tensor* ops[1] = {&a};
  return einsum_impl(equation, ops, loc);
}

Tensor einsum(std::string_view equation, const Tensor& a, const Tensor& b, std::source_location loc) {
  const Tensor* ops[2] = {&a, &b};
  return einsum_impl(equation, ops, loc);
}

}  // namespace tapeflow
