// CPU kernels of the reduction family (eager/ops/reduction.cc): Sum, Mean, Max, Min, Prod, All,
// Any, ArgMax, ArgMin.
//
// Note [Reduction plan]: size-1 dims are dropped and adjacent dims that are both reduced (or
// both kept) are merged, so any reduction becomes a few passes over an (outer, R, inner) block:
// out[o, i] = op over r of x[o, r, i]. With one reduced group (the usual case) that is one
// pass; otherwise the innermost reduced group is reduced first into a temporary, and so on.
// Each pass runs contiguously when inner == 1 and column-wise (vectorised across i) otherwise.
// Float sums are pairwise, so the rounding error grows with log R rather than R. When there are
// few outputs and R is long, R is split into fixed-size chunks whose partial results are then
// reduced again; the split depends on the shape only, so results do not change with the
// number of threads.
#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

constexpr int64_t kTile = 1024;           // columns one task reduces in a column-wise pass
constexpr int64_t kChunkWork = 1 << 16;   // elements per task when R itself is split
constexpr int64_t kPairwiseLeaf = 128;    // below this, pairwise summation adds sequentially

// Integer arithmetic goes through the unsigned type, so overflow wraps (as TensorFlow's does)
// instead of being undefined behaviour.
template <typename T, bool = std::is_integral_v<T>> struct WrapOf { using type = T; };
template <typename T> struct WrapOf<T, true> { using type = std::make_unsigned_t<T>; };
template <typename T> using Wrap = typename WrapOf<T>::type;

template <typename T> inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <typename T> struct SumOp {
  static constexpr bool kPairwise = std::is_floating_point_v<T>;
  static constexpr bool kHasIdentity = true;
  static T identity() { return T(0); }
  static T apply(T a, T b) { return static_cast<T>(static_cast<Wrap<T>>(a) + static_cast<Wrap<T>>(b)); }
};
template <typename T> struct ProdOp {
  static constexpr bool kPairwise = false;
  static constexpr bool kHasIdentity = true;
  static T identity() { return T(1); }
  static T apply(T a, T b) { return static_cast<T>(static_cast<Wrap<T>>(a) * static_cast<Wrap<T>>(b)); }
};
// NaN propagates, as NumPy's max.
template <typename T> struct MaxOp {
  static constexpr bool kPairwise = false;
  static constexpr bool kHasIdentity = std::is_floating_point_v<T>;
  static T identity() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  static T apply(T a, T b) { return (b > a || is_nan(b)) ? b : a; }
};
template <typename T> struct MinOp {
  static constexpr bool kPairwise = false;
  static constexpr bool kHasIdentity = std::is_floating_point_v<T>;
  static T identity() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  static T apply(T a, T b) { return (b < a || is_nan(b)) ? b : a; }
};

// Logical and / or (All, Any), on the bytes of bools (0 or 1): std::vector<bool> has no data()
// for the passes' temporaries, and bitwise & and | vectorise.
struct AllOp {
  static constexpr bool kPairwise = false;
  static constexpr bool kHasIdentity = true;
  static uint8_t identity() { return 1; }
  static uint8_t apply(uint8_t a, uint8_t b) { return a & b; }
};
struct AnyOp {
  static constexpr bool kPairwise = false;
  static constexpr bool kHasIdentity = true;
  static uint8_t identity() { return 0; }
  static uint8_t apply(uint8_t a, uint8_t b) { return a | b; }
};

// Eight independent accumulators break the dependency chain so the loop vectorises.
template <typename T, typename Op> T reduce_contiguous(const T* p, int64_t n) {
  if (n < 8) {
    T acc = p[0];
    for (int64_t i = 1; i < n; ++i) acc = Op::apply(acc, p[i]);
    return acc;
  }
  T acc[8];
  for (int k = 0; k < 8; ++k) acc[k] = p[k];
  int64_t i = 8;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] = Op::apply(acc[k], p[i + k]);
  T res = Op::apply(Op::apply(Op::apply(acc[0], acc[1]), Op::apply(acc[2], acc[3])),
                    Op::apply(Op::apply(acc[4], acc[5]), Op::apply(acc[6], acc[7])));
  for (; i < n; ++i) res = Op::apply(res, p[i]);
  return res;
}

// Pairwise summation (as NumPy): blocks of up to kPairwiseLeaf elements are summed with eight
// accumulators and the halves are added recursively.
template <typename T> T pairwise_sum(const T* p, int64_t n) {
  if (n <= kPairwiseLeaf) return reduce_contiguous<T, SumOp<T>>(p, n);
  int64_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(p, half) + pairwise_sum(p + half, n - half);
}

template <typename T> using EigenVector = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// One contiguous row. Eigen's vectorised max/min (NaN-propagating for floats) run about 3x
// faster than the generic loop, whose NaN test does not vectorise.
template <typename T, typename Op> T reduce_row(const T* p, int64_t n) {
  if (n < 16) {
    T acc = p[0];
    for (int64_t i = 1; i < n; ++i) acc = Op::apply(acc, p[i]);
    return acc;
  }
  if constexpr (Op::kPairwise) {
    return pairwise_sum(p, n);
  } else if constexpr (std::is_same_v<Op, MaxOp<T>>) {
    if constexpr (std::is_floating_point_v<T>) return EigenVector<T>(p, n).template maxCoeff<Eigen::PropagateNaN>();
    else return EigenVector<T>(p, n).maxCoeff();
  } else if constexpr (std::is_same_v<Op, MinOp<T>>) {
    if constexpr (std::is_floating_point_v<T>) return EigenVector<T>(p, n).template minCoeff<Eigen::PropagateNaN>();
    else return EigenVector<T>(p, n).minCoeff();
  } else {
    return reduce_contiguous<T, Op>(p, n);
  }
}

// Column-wise: out[i] = op over r < rows of x[r * stride + i], for i < w.
template <typename T, typename Op>
void reduce_columns(const T* x, int64_t rows, int64_t stride, int64_t w, T* out) {
  std::copy(x, x + w, out);
  for (int64_t r = 1; r < rows; ++r) {
    const T* row = x + r * stride;
    for (int64_t i = 0; i < w; ++i) out[i] = Op::apply(out[i], row[i]);
  }
}

// Pairwise over rows; scratch holds w elements per recursion level.
template <typename T>
void pairwise_columns(const T* x, int64_t rows, int64_t stride, int64_t w, T* out, T* scratch) {
  if (rows <= kPairwiseLeaf) {
    reduce_columns<T, SumOp<T>>(x, rows, stride, w, out);
    return;
  }
  const int64_t half = rows / 2;
  pairwise_columns(x, half, stride, w, out, scratch);
  pairwise_columns(x + half * stride, rows - half, stride, w, scratch, scratch + w);
  for (int64_t i = 0; i < w; ++i) out[i] += scratch[i];
}

int pairwise_depth(int64_t rows) {
  int depth = 1;
  while (rows > kPairwiseLeaf) { rows = (rows + 1) / 2; ++depth; }
  return depth;
}

// Reduces rows x[r * stride + i] (r < rows, i < w) into out[0, w).
template <typename T, typename Op>
void reduce_block(const T* x, int64_t rows, int64_t stride, int64_t w, T* out, std::vector<T>& scratch) {
  if (stride == 1) {  // w == 1 and the elements are adjacent
    out[0] = reduce_row<T, Op>(x, rows);
    return;
  }
  if constexpr (Op::kPairwise) {
    const size_t need = static_cast<size_t>(pairwise_depth(rows) * w);
    if (scratch.size() < need) scratch.resize(need);
    pairwise_columns(x, rows, stride, w, out, scratch.data());
  } else {
    reduce_columns<T, Op>(x, rows, stride, w, out);
  }
}

// One (outer, R, inner) pass; R > 0.
template <typename T, typename Op>
void reduce_pass(const T* x, int64_t outer, int64_t R, int64_t inner, T* out) {
  const int64_t tile = std::min(inner, kTile);
  const int64_t ntiles = (inner + tile - 1) / tile;
  int64_t nchunks = 1, rc = R;
  if (outer * ntiles < 16 && R * tile > 2 * kChunkWork) {
    rc = std::max<int64_t>(kPairwiseLeaf, kChunkWork / tile);
    nchunks = (R + rc - 1) / rc;
  }
  if (inner == 1 && nchunks == 1) {  // rows: no index arithmetic per task (rows may be short)
    parallel_for(outer, R, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) out[o] = reduce_row<T, Op>(x + o * R, R);
    });
    return;
  }
  std::vector<T> partial;
  T* dst = out;
  if (nchunks > 1) {
    partial.resize(static_cast<size_t>(nchunks * outer * inner));
    dst = partial.data();
  }
  const int64_t per_chunk = outer * ntiles;
  parallel_for(nchunks * per_chunk, rc * tile, [&](int64_t begin, int64_t end) {
    std::vector<T> scratch;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t c = t / per_chunk, o = (t % per_chunk) / ntiles, ti = t % ntiles;
      const int64_t r0 = c * rc, rows = std::min(rc, R - r0);
      const int64_t i0 = ti * tile, w = std::min(tile, inner - i0);
      reduce_block<T, Op>(x + (o * R + r0) * inner + i0, rows, inner, w, dst + (c * outer + o) * inner + i0,
                          scratch);
    }
  });
  // The partials form a [nchunks, outer * inner] block: reduce its first axis.
  if (nchunks > 1) reduce_pass<T, Op>(partial.data(), 1, nchunks, outer * inner, out);
}

struct Group {
  int64_t size;
  bool reduced;
};

// Validated again here (the shape function checked it) so that a kernel never trusts attrs.
absl::Status reduced_mask(const KernelContext& ctx, int rank, std::vector<bool>* mask) {
  mask->assign(rank, false);
  for (int64_t a : ctx.attrs.get<std::vector<int64_t>>("axes")) {
    if (a < -rank || a >= rank || (*mask)[a < 0 ? a + rank : a])
      return absl::InvalidArgumentError(absl::StrCat("invalid axis ", a, " for rank ", rank));
    (*mask)[a < 0 ? a + rank : a] = true;
  }
  return absl::OkStatus();
}

template <typename T, typename Op>
absl::Status reduce_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& z = ctx.output(0);
  const int rank = x.shape.rank();
  std::vector<bool> mask;
  TF_RETURN_IF_ERROR(reduced_mask(ctx, rank, &mask));
  T* out = z.data<T>();
  const int64_t out_n = z.num_elements();
  if (out_n == 0) return absl::OkStatus();
  if (x.num_elements() == 0) {  // an empty reduced axis: the identity, where there is one
    if constexpr (!Op::kHasIdentity) {
      return absl::InvalidArgumentError(absl::StrCat("cannot reduce an empty axis of shape ",
                                                     x.shape.to_string(), " for dtype ", dtype_name(x.dtype)));
    } else {
      std::fill(out, out + out_n, Op::identity());
      return absl::OkStatus();
    }
  }

  absl::InlinedVector<Group, 8> groups;  // Note [Reduction plan]
  for (int i = 0; i < rank; ++i) {
    const int64_t d = x.shape.dim(i);
    if (d == 1) continue;
    if (!groups.empty() && groups.back().reduced == mask[i]) groups.back().size *= d;
    else groups.push_back(Group{d, mask[i]});
  }
  const T* src = x.data<T>();
  std::vector<T> temps[2];
  int pass = 0;
  while (true) {
    int j = -1, reduced_groups = 0;
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
      if (groups[g].reduced) { j = g; ++reduced_groups; }
    }
    if (j < 0) break;
    int64_t outer = 1, inner = 1;
    for (int g = 0; g < j; ++g) outer *= groups[g].size;
    for (int g = j + 1; g < static_cast<int>(groups.size()); ++g) inner *= groups[g].size;
    T* dst = out;
    if (reduced_groups > 1) {
      std::vector<T>& tmp = temps[pass++ % 2];
      tmp.resize(static_cast<size_t>(outer * inner));
      dst = tmp.data();
    }
    reduce_pass<T, Op>(src, outer, groups[j].size, inner, dst);
    src = dst;
    groups.erase(groups.begin() + j);
    if (j > 0 && j < static_cast<int>(groups.size())) {  // the kept neighbours are now adjacent
      groups[j - 1].size *= groups[j].size;
      groups.erase(groups.begin() + j);
    }
  }
  if (src != out) std::memcpy(out, src, static_cast<size_t>(out_n) * sizeof(T));  // only size-1 axes reduced
  return absl::OkStatus();
}

// ---- ArgMax / ArgMin ----

// v beats best when strictly greater (smaller), or when v is the first NaN (as NumPy).
template <bool kMax, typename T> inline bool beats(T v, T best) {
  return (kMax ? v > best : v < best) || (is_nan(v) && !is_nan(best));
}

template <bool kMax, typename T> T block_best(const T* p, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    return kMax ? EigenVector<T>(p, n).template maxCoeff<Eigen::PropagateNaN>()
                : EigenVector<T>(p, n).template minCoeff<Eigen::PropagateNaN>();
  } else {
    return kMax ? EigenVector<T>(p, n).maxCoeff() : EigenVector<T>(p, n).minCoeff();
  }
}

// A contiguous row: the best value block by block with Eigen's vectorised max/min, then a scan
// of the one block that first holds it (or of the first block holding a NaN).
template <bool kMax, typename T> int64_t arg_row(const T* p, int64_t n) {
  constexpr int64_t kBlock = 1024;
  int64_t from = 0, len = n;
  if (n > 64) {
    T best{};
    for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
      const int64_t bl = std::min(kBlock, n - b0);
      const T m = block_best<kMax>(p + b0, bl);
      if (is_nan(m)) {
        from = b0;
        len = bl;
        break;
      }
      if (b0 == 0 || (kMax ? m > best : m < best)) {
        best = m;
        from = b0;
        len = bl;
      }
    }
  }
  int64_t bi = from;
  for (int64_t r = from + 1; r < from + len; ++r) {
    if (beats<kMax>(p[r], p[bi])) bi = r;
  }
  return bi;
}

template <typename T, typename I, typename Idx, bool kMax>
void arg_columns(const T* x, int64_t outer, int64_t R, int64_t inner, Idx* out) {
  const int64_t tile = std::min(inner, kTile);
  const int64_t ntiles = (inner + tile - 1) / tile;
  parallel_for(outer * ntiles, R * tile, [&](int64_t begin, int64_t end) {
    std::vector<T> best;
    std::vector<I> idx;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / ntiles, i0 = (t % ntiles) * tile, w = std::min(tile, inner - i0);
      const T* p = x + o * R * inner + i0;
      best.assign(p, p + w);
      idx.assign(w, I{0});
      for (int64_t r = 1; r < R; ++r) {
        const T* row = p + r * inner;
        const I ri = static_cast<I>(r);
        for (int64_t i = 0; i < w; ++i) {  // selects rather than branches
          const T v = row[i], b = best[i];
          const bool take = beats<kMax>(v, b);
          best[i] = take ? v : b;
          idx[i] = take ? ri : idx[i];
        }
      }
      std::copy(idx.begin(), idx.end(), out + o * inner + i0);
    }
  });
}

template <typename T, typename Idx, bool kMax>
void arg_pass(const T* x, int64_t outer, int64_t R, int64_t inner, Idx* out) {
  if (inner == 1) {
    parallel_for(outer, R, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) out[o] = static_cast<Idx>(arg_row<kMax>(x + o * R, R));
    });
    return;
  }
  // Column-wise, with the running indices as wide as T where they fit, so the compare-and-
  // select loop vectorises (mixed 4- and 8-byte lanes do not).
  using Narrow = std::conditional_t<sizeof(T) <= 4, int32_t, int64_t>;
  using I = std::conditional_t<std::is_same_v<Idx, int32_t>, int32_t, Narrow>;
  if constexpr (!std::is_same_v<I, Idx>) {
    if (R > std::numeric_limits<I>::max()) return arg_columns<T, Idx, Idx, kMax>(x, outer, R, inner, out);
  }
  arg_columns<T, I, Idx, kMax>(x, outer, R, inner, out);
}

// The sum, then divided by the number of elements reduced into each output: the count comes from
// the run's shapes, so a graph whose reduced dims are unknown until it runs needs nothing more.
template <typename T>
absl::Status mean_kernel(KernelContext& ctx) {
  TF_RETURN_IF_ERROR((reduce_kernel<T, SumOp<T>>(ctx)));
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& z = ctx.output(0);
  const int64_t out_n = z.num_elements();
  if (out_n == 0) return absl::OkStatus();
  const int64_t count = x.num_elements() / out_n;  // 0 when a reduced dim is empty
  if (count == 1) return absl::OkStatus();
  if constexpr (std::is_integral_v<T>) {
    if (count == 0)
      return absl::InvalidArgumentError(absl::StrCat("the integer mean of the empty input of shape ",
                                                     x.shape.to_string(), " is undefined"));
  }
  T* out = z.data<T>();
  const T divisor = static_cast<T>(count);
  for (int64_t i = 0; i < out_n; ++i) out[i] = static_cast<T>(out[i] / divisor);
  return absl::OkStatus();
}

template <typename T, bool kMax>
absl::Status arg_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& z = ctx.output(0);
  const int rank = x.shape.rank();
  int64_t axis = ctx.attrs.get<int64_t>("axis");
  if (axis < -rank || axis >= rank) return absl::InvalidArgumentError(absl::StrCat("invalid axis ", axis));
  if (axis < 0) axis += rank;
  const int64_t R = x.shape.dim(static_cast<int>(axis));
  if (z.num_elements() == 0) return absl::OkStatus();
  if (R == 0) return absl::InvalidArgumentError(absl::StrCat("cannot reduce the empty axis ", axis));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.shape.dim(i);
  for (int i = static_cast<int>(axis) + 1; i < rank; ++i) inner *= x.shape.dim(i);
  if (z.dtype == DType::kInt32) arg_pass<T, int32_t, kMax>(x.data<T>(), outer, R, inner, z.data<int32_t>());
  else arg_pass<T, int64_t, kMax>(x.data<T>(), outer, R, inner, z.data<int64_t>());
  return absl::OkStatus();
}

}  // namespace

void register_reduction_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "Sum", DeviceType::kCPU, []<typename T>() -> KernelFn { return reduce_kernel<T, SumOp<T>>; });
  register_each<float, double, int32_t, int64_t>(
      r, "Mean", DeviceType::kCPU, []<typename T>() -> KernelFn { return mean_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "Max", DeviceType::kCPU, []<typename T>() -> KernelFn { return reduce_kernel<T, MaxOp<T>>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "Min", DeviceType::kCPU, []<typename T>() -> KernelFn { return reduce_kernel<T, MinOp<T>>; });
  register_each<float, double, int32_t, int64_t>(
      r, "Prod", DeviceType::kCPU, []<typename T>() -> KernelFn { return reduce_kernel<T, ProdOp<T>>; });
  r.add("All", DeviceType::kCPU, DType::kBool, reduce_kernel<uint8_t, AllOp>);
  r.add("Any", DeviceType::kCPU, DType::kBool, reduce_kernel<uint8_t, AnyOp>);
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "ArgMax", DeviceType::kCPU, []<typename T>() -> KernelFn { return arg_kernel<T, true>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "ArgMin", DeviceType::kCPU, []<typename T>() -> KernelFn { return arg_kernel<T, false>; });
}

}  // namespace tapeflow::cpu
