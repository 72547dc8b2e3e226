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
  std::vector<std::string> inputs;  // one label string per operand, ellipses expanded
  std::string output;
  std::string ellipsis;             // the labels "..." stands for, outermost first
};

// Note [einsum's ellipsis]: "..." stands for the dims of an operand that its letters do not
// name, aligned from the right across operands and broadcast (numpy's and TensorFlow's rule).
// parse gives them labels of their own, bytes 0x80 + i that no equation can spell (labels are
// letters), so the rest of einsum treats them as letters: in the output ("->...k", or first in
// an implicit output) they are batch or free dims. An explicit output must have the "..." when
// it stands for any dim (TensorFlow's rule; numpy would sum them).
// An ellipsis dim of size 1 facing a larger one in the other operand is squeezed out of its
// operand before the contraction (broadcast_ellipsis), so the label is the other's alone.
constexpr int kEllipsisLabel0 = 0x80;
constexpr int kMaxEllipsisDims = 127;
char ellipsis_label(int i) { return static_cast<char>(kEllipsisLabel0 + i); }
bool is_ellipsis_label(char c) { return static_cast<unsigned char>(c) >= kEllipsisLabel0; }

// A label for messages: the letter, or "the ellipsis' dim i".
std::string label_name(char c) {
  if (is_ellipsis_label(c)) return absl::StrCat("the ellipsis' dim ", static_cast<unsigned char>(c) - kEllipsisLabel0);
  return absl::StrCat("label '", std::string(1, c), "'");
}

// Splits "ab...c" into its letters before and after one "...", checking each character.
struct Subscripts {
  std::string before, after;
  bool ellipsis = false;
};
Subscripts split_subscripts(std::string_view equation, const std::string& s, const std::string& where,
                            std::source_location loc) {
  Subscripts r;
  const size_t dots = s.find("...");
  r.ellipsis = dots != std::string::npos;
  r.before = s.substr(0, r.ellipsis ? dots : s.size());
  r.after = r.ellipsis ? s.substr(dots + 3) : "";
  for (const std::string* part : {&r.before, &r.after})
    for (char c : *part) {
      if (c == '.') fail(equation, absl::StrCat(where, " has a '.' that is not part of one '...'"), loc);
      if (!std::isalpha(static_cast<unsigned char>(c)))
        fail(equation, absl::StrCat("'", std::string(1, c), "' in ", where, " is not a letter"), loc);
    }
  return r;
}

Parsed parse(std::string_view equation, absl::Span<const Tensor* const> operands, std::source_location loc) {
  std::string eq;
  for (char c : equation) if (c != ' ') eq.push_back(c);
  Parsed p;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  for (size_t comma; (comma = lhs.find(',', start)) != std::string::npos; start = comma + 1)
    terms.push_back(lhs.substr(start, comma - start));
  terms.push_back(lhs.substr(start));
  if (terms.size() != operands.size())
    fail(equation, absl::StrCat("it names ", terms.size(), " operand(s) but ", operands.size(), " were given"), loc);
  // The ellipsis' rank: the most dims any operand's "..." stands for.
  std::vector<Subscripts> subs;
  int ellipsis_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    subs.push_back(split_subscripts(equation, terms[k], absl::StrCat("operand ", k, "'s subscripts"), loc));
    const int named = static_cast<int>(subs[k].before.size() + subs[k].after.size());
    const int rank = operands[k]->rank();
    if (subs[k].ellipsis ? named > rank : named != rank)
      fail(equation, absl::StrCat("operand ", k, " has rank ", rank, " (shape ", operands[k]->shape().to_string(),
                                  ") but its subscripts '", terms[k], "' name ", named,
                                  subs[k].ellipsis ? " dimension(s) besides the ellipsis" : " dimension(s)"), loc);
    if (subs[k].ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - named);
  }
  if (ellipsis_rank > kMaxEllipsisDims)  // its labels are bytes 0x80 + i (Note [einsum's ellipsis])
    fail(equation, absl::StrCat("the ellipsis stands for ", ellipsis_rank, " dims; einsum takes at most ",
                                kMaxEllipsisDims), loc);
  for (int i = 0; i < ellipsis_rank; ++i) p.ellipsis.push_back(ellipsis_label(i));
  std::map<char, int> count;  // occurrences over all operands (a letter repeated in one counts twice)
  for (size_t k = 0; k < terms.size(); ++k) {
    const int dims = operands[k]->rank() - static_cast<int>(subs[k].before.size() + subs[k].after.size());
    const std::string mine = subs[k].ellipsis ? p.ellipsis.substr(p.ellipsis.size() - dims) : "";
    p.inputs.push_back(subs[k].before + mine + subs[k].after);
    for (char c : p.inputs.back()) ++count[c];
  }
  if (arrow == std::string::npos) {  // implicit output: the ellipsis, then the letters seen once, alphabetically
    std::string once;
    for (const auto& [c, n] : count)
      if (n == 1 && !is_ellipsis_label(c)) once.push_back(c);
    std::sort(once.begin(), once.end());
    p.output = p.ellipsis + once;
    return p;
  }
  const Subscripts out = split_subscripts(equation, eq.substr(arrow + 2), "the output subscripts", loc);
  if (!out.ellipsis && !p.ellipsis.empty())
    fail(equation, absl::StrCat("the operands' ellipsis stands for ", p.ellipsis.size(),
                                " dim(s) but the output subscripts have no '...' (TensorFlow refuses it too)"), loc);
  p.output = out.before + p.ellipsis + out.after;
  for (size_t i = 0; i < p.output.size(); ++i) {
    const char c = p.output[i];
    if (p.output.find(c) != i)
      fail(equation, absl::StrCat("label '", std::string(1, c), "' is repeated in the output"), loc);
    if (!count.count(c)) fail(equation, absl::StrCat("output label '", std::string(1, c), "' appears in no operand"), loc);
  }
  return p;
}

// The size of each label, checked to agree between operands (unknown dims agree with anything).
std::map<char, int64_t> label_sizes(std::string_view equation, const std::vector<std::string>& labels,
                                    absl::Span<const Tensor* const> operands, std::source_location loc) {
  std::map<char, int64_t> size;
  std::map<char, size_t> from;
  for (size_t k = 0; k < labels.size(); ++k) {
    for (size_t i = 0; i < labels[k].size(); ++i) {
      const char c = labels[k][i];
      const int64_t d = operands[k]->shape().dim(static_cast<int>(i));
      auto [it, inserted] = size.try_emplace(c, d);
      if (inserted || it->second < 0) {
        it->second = d;
        from[c] = k;
      } else if (d >= 0 && d != it->second) {
        fail(equation, absl::StrCat(label_name(c), " has size ", it->second, " in operand ", from[c], " but size ", d,
                                    " in operand ", k), loc);
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

// Note [einsum's repeated labels]: a letter repeated in one operand ("ii->i", "ii", "bii->bi")
// takes the diagonal along those dims: the two dims moved last, matrix_band_part(x, 0, 0) (the
// off-diagonal entries set to 0, not multiplied by 0, so an inf there stays out of the sum),
// then summed over the last, until the letter is left once. Primitives only, so the gradient
// and the graph come from them, and no memory beyond the operand's own size. Both sizes must be
// known when einsum is called and equal (a size of 1 would broadcast silently at run time).
Tensor take_diagonals(std::string_view equation, const Tensor& operand, std::string& labels, size_t k,
                      std::source_location loc) {
  Tensor x = operand;
  for (size_t p2 = 0; p2 < labels.size();) {
    const size_t p1 = labels.find(labels[p2]);
    if (p1 == p2) {
      ++p2;
      continue;
    }
    const int64_t n1 = x.shape().dim(static_cast<int>(p1)), n2 = x.shape().dim(static_cast<int>(p2));
    if (n1 < 0 || n2 < 0)
      fail(equation, absl::StrCat("label '", std::string(1, labels[p2]), "' is repeated in operand ", k,
                                  " and its size is not known (a diagonal needs equal sizes when einsum is called)"),
           loc);
    if (n1 != n2)
      fail(equation, absl::StrCat("label '", std::string(1, labels[p2]), "' is repeated in operand ", k, " with sizes ",
                                  n1, " and ", n2), loc);
    Ints perm;
    std::string moved;
    for (size_t i = 0; i < labels.size(); ++i)
      if (i != p1 && i != p2) {
        perm.push_back(static_cast<int64_t>(i));
        moved.push_back(labels[i]);
      }
    perm.push_back(static_cast<int64_t>(p1));
    perm.push_back(static_cast<int64_t>(p2));
    moved.push_back(labels[p1]);
    const Tensor banded = matrix_band_part(transpose(x, perm, loc), 0, 0, loc);
    x = reduce_sum(banded, Axes({static_cast<int64_t>(perm.size()) - 1}), false, loc);
    labels = moved;
    p2 = 0;
  }
  return x;
}

// Note [einsum's ellipsis]: squeezes out of each operand the ellipsis dims of size 1 whose
// label has another size in the other operand, so the label stays the other's alone.
void broadcast_ellipsis(const std::string& ellipsis, std::vector<Tensor>& xs, std::vector<std::string>& labels,
                        std::source_location loc) {
  if (xs.size() != 2) return;
  for (char c : ellipsis)
    for (size_t k = 0; k < 2; ++k) {
      const size_t mine = labels[k].find(c), theirs = labels[1 - k].find(c);
      if (mine == std::string::npos || theirs == std::string::npos) continue;
      if (xs[k].shape().dim(static_cast<int>(mine)) != 1 || xs[1 - k].shape().dim(static_cast<int>(theirs)) == 1)
        continue;
      xs[k] = squeeze(xs[k], {static_cast<int64_t>(mine)}, loc);
      labels[k].erase(mine, 1);
    }
}

// One or two operands (their diagonals taken) with their labels, to the labels of `output`.
Tensor contract(std::string_view equation, std::vector<Tensor> xs, std::vector<std::string> labels,
                const std::string& output, const std::string& ellipsis, std::source_location loc) {
  broadcast_ellipsis(ellipsis, xs, labels, loc);
  std::vector<const Tensor*> ready;
  for (const Tensor& x : xs) ready.push_back(&x);
  const std::map<char, int64_t> size = label_sizes(equation, labels, ready, loc);
  if (xs.size() == 1) {
    std::string l = labels[0];
    const Tensor summed = sum_out(xs[0], l, output, loc);
    return permute(summed, l, output, loc);
  }
  // Labels of one operand that are neither in the other nor in the output are summed first.
  std::string la = labels[0], lb = labels[1];
  const Tensor a = sum_out(xs[0], la, lb + output, loc);
  const Tensor b = sum_out(xs[1], lb, la + output, loc);
  std::string batch, afree, bfree, contracted;
  for (char c : output) {
    if (has(la, c) && has(lb, c)) batch.push_back(c);
    else if (has(la, c)) afree.push_back(c);
    else bfree.push_back(c);
  }
  for (char c : la) if (has(lb, c) && !has(output, c)) contracted.push_back(c);
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
  const std::string result = batch + afree + bfree;
  for (char ch : result) full.push_back(size.at(ch));
  return permute(reshape_to(equation, c3, full, loc), result, output, loc);
}

Tensor einsum_impl(std::string_view equation, absl::Span<const Tensor* const> operands, std::source_location loc) {
  if (operands.empty()) throw InvalidArgumentError("[einsum] needs at least one operand", loc);
  for (size_t k = 0; k < operands.size(); ++k)
    if (!operands[k]->defined()) throw InvalidArgumentError(absl::StrCat("[einsum] operand ", k, " is ", operands[k]->empty_reason()), loc);
  const Parsed p = parse(equation, operands, loc);
  for (size_t k = 1; k < operands.size(); ++k)
    if (operands[k]->dtype() != operands[0]->dtype())
      fail(equation, absl::StrCat("operand 0 has dtype ", dtype_name(operands[0]->dtype()), " but operand ", k,
                                  " has dtype ", dtype_name(operands[k]->dtype())), loc);
  std::vector<Tensor> xs;
  std::vector<std::string> labels = p.inputs;
  for (size_t k = 0; k < operands.size(); ++k) xs.push_back(take_diagonals(equation, *operands[k], labels[k], k, loc));
  if (operands.size() == 1 && labels[0] == p.output) return labels[0] == p.inputs[0] ? identity(xs[0], loc) : xs[0];
  if (operands.size() <= 2) return contract(equation, xs, labels, p.output, p.ellipsis, loc);
  // Note [einsum of three or more]: left to right, two at a time (TensorFlow's Python splits
  // such an einsum into pairs too); each partial result keeps the labels that a later operand
  // or the output still needs, in the order they first appear.
  Tensor acc = xs[0];
  std::string acc_labels = labels[0];
  for (size_t k = 1; k < xs.size(); ++k) {
    std::string keep;
    if (k + 1 == xs.size()) {
      keep = p.output;
    } else {
      std::string later = p.output;
      for (size_t j = k + 1; j < labels.size(); ++j) later += labels[j];
      for (char c : acc_labels + labels[k])
        if (has(later, c) && !has(keep, c)) keep.push_back(c);
    }
    acc = contract(equation, {acc, xs[k]}, {acc_labels, labels[k]}, keep, p.ellipsis, loc);
    acc_labels = keep;
  }
  return acc;
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

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands, std::source_location loc) {
  std::vector<const Tensor*> ops;
  for (const Tensor& t : operands) ops.push_back(&t);
  return einsum_impl(equation, ops, loc);
}

}  // namespace tapeflow
