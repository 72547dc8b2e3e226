// CPU kernels of the array family (eager/ops/array.cc): transpose, concat, slice, strided_slice,
// gather, one_hot, pad and tile. Reshape, expand_dims, squeeze and identity are views and have
// no kernel.
//
// These ops only move bytes, so each kernel is instantiated once per element size (a "carrier"
// integer of that size) and registered for every dtype of that size: float32 and int32 share
// one instantiation. Most of them reduce to strided_copy, an n-d copy between two strided views
// that merges contiguous dims and copies whole rows with memcpy.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/errors.h"
#include "devices/cpu/kernel_util.h"
#include "devices/cpu/nchw.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"
#include "devices/strided_slice.h"

namespace tapeflow::cpu {

namespace {

using Dims = absl::InlinedVector<int64_t, 8>;

// Registers make.template operator()<T>() for all six dtypes.
template <typename MakeFn>
void register_all(KernelRegistry& r, const char* op, MakeFn make) {
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(r, op, DeviceType::kCPU, make);
}

int64_t product(const Dims& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t i = from; i < std::min(to, d.size()); ++i) n *= d[i];
  return n;
}

Dims dims_of(const Shape& s) { return Dims(s.dims().begin(), s.dims().end()); }

Dims contiguous_strides(const Dims& dims) {
  Dims st(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    st[i] = s;
    s *= dims[i];
  }
  return st;
}

// An n-d copy dst[idx . dst_st] = src[idx . src_st] for every idx in dims (strides in elements).
struct CopyPlan {
  Dims dims, src_st, dst_st;

  // Drops size-1 dims and merges neighbours that are contiguous on both sides, so a copy of a
  // contiguous block becomes one row (one memcpy).
  void coalesce() {
    Dims d, s, t;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 1) continue;
      if (!d.empty() && s.back() == src_st[i] * dims[i] && t.back() == dst_st[i] * dims[i]) {
        d.back() *= dims[i];
        s.back() = src_st[i];
        t.back() = dst_st[i];
      } else {
        d.push_back(dims[i]);
        s.push_back(src_st[i]);
        t.push_back(dst_st[i]);
      }
    }
    dims = std::move(d);
    src_st = std::move(s);
    dst_st = std::move(t);
  }
};

// Runs plan (already coalesced) over [begin, end) of its elements in row-major order.
template <typename U>
void copy_range(const CopyPlan& p, const U* src, U* dst, int64_t begin, int64_t end) {
  const int r = static_cast<int>(p.dims.size());
  if (r == 0) {  // a single element
    if (begin < end) *dst = *src;
    return;
  }
  const int64_t inner = p.dims[r - 1], si = p.src_st[r - 1], di = p.dst_st[r - 1];
  Dims idx(r - 1);
  int64_t so = 0, dof = 0;
  for (int64_t k = r - 2, rem = begin / inner; k >= 0; --k) {
    idx[k] = rem % p.dims[k];
    rem /= p.dims[k];
    so += idx[k] * p.src_st[k];
    dof += idx[k] * p.dst_st[k];
  }
  int64_t col = begin % inner;
  for (int64_t pos = begin; pos < end;) {
    const int64_t len = std::min(inner - col, end - pos);
    const U* s = src + so + col * si;
    U* d = dst + dof + col * di;
    if (si == 1 && di == 1) std::memcpy(d, s, static_cast<size_t>(len) * sizeof(U));
    else if (si == 0 && di == 1) std::fill(d, d + len, *s);
    else for (int64_t i = 0; i < len; ++i) d[i * di] = s[i * si];
    pos += len;
    col = 0;
    for (int k = r - 2; k >= 0; --k) {  // next row
      so += p.src_st[k];
      dof += p.dst_st[k];
      if (++idx[k] < p.dims[k]) break;
      so -= p.src_st[k] * p.dims[k];
      dof -= p.dst_st[k] * p.dims[k];
      idx[k] = 0;
    }
  }
}

template <typename U>
void strided_copy(CopyPlan plan, const U* src, U* dst) {
  const int64_t n = product(plan.dims);
  if (n == 0) return;
  plan.coalesce();
  parallel_for(n, 1, [&](int64_t begin, int64_t end) { copy_range(plan, src, dst, begin, end); });
}

// Copies a dense block of shape `dims` (row-major) into dst laid out with dst_st.
template <typename U>
void copy_into(const Dims& dims, const U* src, U* dst, const Dims& dst_st) {
  strided_copy(CopyPlan{dims, contiguous_strides(dims), dst_st}, src, dst);
}

template <typename U>
void parallel_fill(U* out, int64_t n, U value) {
  parallel_for(n, 1, [&](int64_t b, int64_t e) { std::fill(out + b, out + e, value); });
}

// ---- transpose ----

// One tile of a 2-d transpose: d[i * dld + j] = s[i + j * sld] for i < nr, j < nc. 4- and
// 8-byte elements use SSE register transposes (4x4 and 2x2 blocks; the shuffles move bits
// untouched, so integers and NaNs survive), which is about 3x faster than element copies.
template <typename U>
void transpose_tile(const U* s, int64_t sld, U* d, int64_t dld, int64_t nr, int64_t nc) {
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(U) == 4) {
    for (; i + 4 <= nr; i += 4) {
      int64_t j = 0;
      for (; j + 4 <= nc; j += 4) {
        const float* p = reinterpret_cast<const float*>(s + i + j * sld);
        __m128 r0 = _mm_loadu_ps(p), r1 = _mm_loadu_ps(p + sld), r2 = _mm_loadu_ps(p + 2 * sld),
               r3 = _mm_loadu_ps(p + 3 * sld);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        float* q = reinterpret_cast<float*>(d + i * dld + j);
        _mm_storeu_ps(q, r0);
        _mm_storeu_ps(q + dld, r1);
        _mm_storeu_ps(q + 2 * dld, r2);
        _mm_storeu_ps(q + 3 * dld, r3);
      }
      for (; j < nc; ++j)
        for (int64_t a = i; a < i + 4; ++a) d[a * dld + j] = s[a + j * sld];
    }
  } else if constexpr (sizeof(U) == 8) {
    for (; i + 2 <= nr; i += 2) {
      int64_t j = 0;
      for (; j + 2 <= nc; j += 2) {
        const double* p = reinterpret_cast<const double*>(s + i + j * sld);
        const __m128d r0 = _mm_loadu_pd(p), r1 = _mm_loadu_pd(p + sld);
        double* q = reinterpret_cast<double*>(d + i * dld + j);
        _mm_storeu_pd(q, _mm_unpacklo_pd(r0, r1));
        _mm_storeu_pd(q + dld, _mm_unpackhi_pd(r0, r1));
      }
      for (; j < nc; ++j)
        for (int64_t a = i; a < i + 2; ++a) d[a * dld + j] = s[a + j * sld];
    }
  }
#endif
  for (; i < nr; ++i)
    for (int64_t j = 0; j < nc; ++j) d[i * dld + j] = s[i + j * sld];
}

// Copies in square tiles so that both the strided reads and the contiguous writes stay in
// cache. Used when the output's inner dim is strided in the input; p.dims[b] is the dim that is
// contiguous in the input.
template <typename U>
void tiled_transpose(const CopyPlan& p, int b, const U* src, U* dst) {
  constexpr int64_t kTile = 16;  // measured best of 16/32/64 on 4096x4096 float32
  const int r = static_cast<int>(p.dims.size());
  Dims outer;  // the dims other than b and the last, outermost first
  for (int k = 0; k < r - 1; ++k) if (k != b) outer.push_back(k);
  const int64_t rows = p.dims[b], cols = p.dims[r - 1];
  const int64_t tb = (rows + kTile - 1) / kTile, tc = (cols + kTile - 1) / kTile;
  const int64_t n_outer = [&] { int64_t n = 1; for (int64_t k : outer) n *= p.dims[k]; return n; }();
  const int64_t row_dst = p.dst_st[b], col_src = p.src_st[r - 1];
  parallel_for(n_outer * tb * tc, kTile * kTile, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t rem = t / (tb * tc), so = 0, dof = 0;
      for (size_t j = outer.size(); j-- > 0;) {
        const int64_t k = outer[j], i = rem % p.dims[k];
        rem /= p.dims[k];
        so += i * p.src_st[k];
        dof += i * p.dst_st[k];
      }
      const int64_t r0 = (t / tc) % tb * kTile, c0 = t % tc * kTile;
      transpose_tile(src + so + r0 + c0 * col_src, col_src, dst + dof + r0 * row_dst + c0, row_dst,
                     std::min(kTile, rows - r0), std::min(kTile, cols - c0));
    }
  });
}

template <typename U>
absl::Status transpose_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  const auto& perm = ctx.attrs.get<std::vector<int64_t>>("perm");
  const Dims in_st = contiguous_strides(dims_of(x.shape));
  CopyPlan p{dims_of(y.shape), {}, contiguous_strides(dims_of(y.shape))};
  for (int64_t k : perm) p.src_st.push_back(in_st[k]);
  if (y.num_elements() == 0) return absl::OkStatus();
  p.coalesce();
  const int r = static_cast<int>(p.dims.size());
  // After coalescing, the input's innermost dim (stride 1) is some output dim b; when it is not
  // the output's innermost, rows are not contiguous in the input and tiling pays.
  int b = -1;
  for (int k = 0; k < r - 1; ++k) if (p.src_st[k] == 1) b = k;
  if (b >= 0 && p.src_st[r - 1] != 1) {
    tiled_transpose(p, b, x.data<U>(), y.data<U>());
  } else {
    const U* src = x.data<U>();
    U* dst = y.data<U>();
    parallel_for(y.num_elements(), 1, [&](int64_t begin, int64_t end) { copy_range(p, src, dst, begin, end); });
  }
  return absl::OkStatus();
}

// ---- concat ----

// Each output row (one index over the dims before the axis) is the inputs' chunks side by side.
// The output is split into equal element ranges, whatever the inputs' sizes, so a concat of two
// large tensors along axis 0 parallelises as well as one of many small rows. Pack is the same
// copy: each input is one chunk of a row (its elements over the number of rows), where
// ConcatV2's is its size along the axis times the dims after it.
template <typename U>
absl::Status concat_kernel(KernelContext& ctx) {
  DeviceTensor& y = ctx.output(0);
  const int rank = y.shape.rank();
  const int axis = static_cast<int>(ctx.attrs.get<int64_t>("axis") < 0 ? ctx.attrs.get<int64_t>("axis") + rank
                                                                       : ctx.attrs.get<int64_t>("axis"));
  const int64_t rows = product(dims_of(y.shape), 0, static_cast<size_t>(axis));
  if (y.num_elements() == 0) return absl::OkStatus();
  const size_t n = ctx.inputs.size();
  absl::InlinedVector<int64_t, 8> chunk(n), start(n + 1, 0);  // per input; start = prefix sums
  absl::InlinedVector<const U*, 8> src(n);
  for (size_t k = 0; k < n; ++k) {
    chunk[k] = ctx.input(static_cast<int>(k)).num_elements() / rows;
    start[k + 1] = start[k] + chunk[k];
    src[k] = ctx.input(static_cast<int>(k)).data<U>();
  }
  const int64_t row = start[n];
  U* dst = y.data<U>();
  parallel_for(y.num_elements(), 1, [&](int64_t begin, int64_t end) {
    // Locate begin once, then walk the chunks in order.
    int64_t r = begin / row, off = begin % row;
    size_t k = std::upper_bound(start.begin(), start.end(), off) - start.begin() - 1;
    off -= start[k];
    for (int64_t pos = begin; pos < end;) {
      const int64_t len = std::min(chunk[k] - off, end - pos);
      std::memcpy(dst + pos, src[k] + r * chunk[k] + off, static_cast<size_t>(len) * sizeof(U));
      pos += len;
      off = 0;
      do {  // next non-empty chunk, wrapping to the next row
        if (++k == n) {
          k = 0;
          ++r;
        }
      } while (chunk[k] == 0);
    }
  });
  return absl::OkStatus();
}

// Split, SplitV and Unpack: concat's copy the other way. Each input row (one index over the
// dims before the axis) is the outputs' chunks side by side; one task copies one chunk.
template <typename U>
absl::Status split_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  const int rank = x.shape.rank();
  const int64_t a = ctx.attrs.get<int64_t>("axis");
  const int64_t rows = product(dims_of(x.shape), 0, static_cast<size_t>(a < 0 ? a + rank : a));
  if (x.num_elements() == 0) return absl::OkStatus();
  const size_t n = ctx.outputs.size();
  absl::InlinedVector<int64_t, 8> chunk(n), start(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    chunk[k] = ctx.output(static_cast<int>(k)).num_elements() / rows;
    start[k + 1] = start[k] + chunk[k];
  }
  const int64_t row = start[n];
  const U* src = x.data<U>();
  parallel_for(rows * static_cast<int64_t>(n), std::max<int64_t>(1, row / static_cast<int64_t>(n)),
               [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r = t / static_cast<int64_t>(n);
      const size_t k = static_cast<size_t>(t % static_cast<int64_t>(n));
      std::memcpy(ctx.output(static_cast<int>(k)).data<U>() + r * chunk[k], src + r * row + start[k],
                  static_cast<size_t>(chunk[k]) * sizeof(U));
    }
  });
  return absl::OkStatus();
}

// Shape: the input's dims, as int32 or int64 (out_type). No element of the input is read.
absl::Status shape_kernel(KernelContext& ctx) {
  const Shape& s = ctx.input(0).shape;
  DeviceTensor& y = ctx.output(0);
  for (int i = 0; i < s.rank(); ++i) {
    if (y.dtype == DType::kInt32) y.data<int32_t>()[i] = static_cast<int32_t>(s.dim(i));
    else y.data<int64_t>()[i] = s.dim(i);
  }
  return absl::OkStatus();
}

template <typename I>
absl::Status invert_permutation_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  const int64_t n = x.num_elements();
  const I* p = x.data<I>();
  I* y = ctx.output(0).data<I>();
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = static_cast<int64_t>(p[i]);
    if (v < 0 || v >= n)
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] x[", i, "] = ", v, " is not in [0, ", n, ")"));
    if (seen[static_cast<size_t>(v)])
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] ", v, " is repeated in x (at ", i, "): not a permutation"));
    seen[static_cast<size_t>(v)] = true;
    y[v] = static_cast<I>(i);
  }
  return absl::OkStatus();
}

absl::Status size_kernel(KernelContext& ctx) {
  const int64_t n = ctx.input(0).shape.num_elements();
  DeviceTensor& y = ctx.output(0);
  if (y.dtype == DType::kInt32) {
    if (n > std::numeric_limits<int32_t>::max())
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] ", n, " elements do not fit out_type int32"));
    *y.data<int32_t>() = static_cast<int32_t>(n);
  } else {
    *y.data<int64_t>() = n;
  }
  return absl::OkStatus();
}

absl::Status rank_kernel(KernelContext& ctx) {
  *ctx.output(0).data<int32_t>() = ctx.input(0).shape.rank();
  return absl::OkStatus();
}

// IdentityN: each output is its input's buffer, as a view is; nothing is copied. (The executor
// reuses a buffer in place only when nothing else holds it, so the shared buffer is safe.)
absl::Status identity_n_kernel(KernelContext& ctx) {
  for (size_t i = 0; i < ctx.outputs.size(); ++i) ctx.outputs[i] = *ctx.inputs[i];
  return absl::OkStatus();
}

// ---- slicing ----

template <typename U>
absl::Status slice_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  if (y.num_elements() == 0) return absl::OkStatus();
  const auto& begin = ctx.attrs.get<std::vector<int64_t>>("begin");
  const Dims in_st = contiguous_strides(dims_of(x.shape));
  int64_t base = 0;
  for (size_t i = 0; i < begin.size(); ++i) base += begin[i] * in_st[i];
  const Dims out_dims = dims_of(y.shape);
  strided_copy(CopyPlan{out_dims, in_st, contiguous_strides(out_dims)}, x.data<U>() + base, y.data<U>());
  return absl::OkStatus();
}

template <typename U>
absl::Status strided_slice_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  auto spec = resolve_strided_slice(x.shape, ctx.attrs);
  if (!spec.ok()) return spec.status();
  if (y.num_elements() == 0) return absl::OkStatus();
  const Dims in_st = contiguous_strides(dims_of(x.shape));
  // The output holds the dense per-input-dim block (shrunk dims read one element, new axes add
  // none), so it is copied as that block.
  CopyPlan p;
  int64_t base = 0;
  for (size_t i = 0; i < spec->size.size(); ++i) {
    p.dims.push_back(spec->size[i]);
    p.src_st.push_back(spec->stride[i] * in_st[i]);
    base += spec->begin[i] * in_st[i];
  }
  p.dst_st = contiguous_strides(p.dims);
  strided_copy(std::move(p), x.data<U>() + base, y.data<U>());
  return absl::OkStatus();
}

// ---- gather ----

// "indices[1,2]" for a multi-dimensional indices tensor, "indices[5]" otherwise.
std::string index_name(const Shape& shape, int64_t flat) {
  Dims idx(std::max(shape.rank(), 1));
  for (int k = shape.rank() - 1; k >= 0; --k) {
    idx[k] = flat % shape.dim(k);
    flat /= shape.dim(k);
  }
  if (shape.rank() == 0) idx[0] = flat;
  return absl::StrCat("indices[", absl::StrJoin(idx, ","), "]");
}

// params viewed as [batch, outer, n, inner] (batch: the batch_dims leading dims), indices as
// [batch, m]; the output is [batch, outer, m, inner].
template <typename U, typename Index>
absl::Status gather_impl(KernelContext& ctx) {
  const DeviceTensor& params = ctx.input(0);
  const DeviceTensor& indices = ctx.input(1);
  DeviceTensor& y = ctx.output(0);
  const int rank = params.shape.rank();
  const int64_t axis_attr = ctx.attrs.get<int64_t>("axis");
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + rank : axis_attr);
  int64_t bd = ctx.attrs.get_or<int64_t>("batch_dims", 0);
  if (bd < 0) bd += indices.shape.rank();
  if (bd < 0 || bd > axis || bd > indices.shape.rank())  // validated again: a kernel never trusts attrs
    return absl::InvalidArgumentError(absl::StrCat("invalid batch_dims ", ctx.attrs.get_or<int64_t>("batch_dims", 0)));
  const int b = static_cast<int>(bd);
  const Dims pd = dims_of(params.shape);
  const int64_t outer = product(pd, b, axis), n = pd[axis], inner = product(pd, axis + 1);
  const int64_t m = product(dims_of(indices.shape), b);
  const int64_t total = indices.num_elements();
  const Index* ind = indices.data<Index>();
  // Validate every index before writing anything (the kernel never reads out of bounds).
  for (int64_t i = 0; i < total; ++i) {
    const int64_t v = static_cast<int64_t>(ind[i]);
    if (v < 0 || v >= n)
      return absl::InvalidArgumentError(
          absl::StrCat(index_name(indices.shape, i), " = ", v, " is not in [0, ", n, ")"));
  }
  if (y.num_elements() == 0) return absl::OkStatus();
  const U* src = params.data<U>();
  U* dst = y.data<U>();
  parallel_for(y.num_elements() / inner, inner, [&](int64_t begin, int64_t end) {
    int64_t bo = begin / m, i = begin % m;  // bo: the [batch, outer] block, i: the index within it
    for (int64_t t = begin; t < end;) {
      // A run of indices within one params[bo] block: a tight loop for scalar slices.
      const U* block = src + bo * n * inner;
      const Index* row = ind + bo / outer * m;
      const int64_t run = std::min(m - i, end - t);
      if (inner == 1) {
        for (int64_t j = 0; j < run; ++j) dst[t + j] = block[row[i + j]];
      } else {
        for (int64_t j = 0; j < run; ++j)
          std::memcpy(dst + (t + j) * inner, block + static_cast<int64_t>(row[i + j]) * inner,
                      static_cast<size_t>(inner) * sizeof(U));
      }
      t += run;
      i = 0;
      ++bo;
    }
  });
  return absl::OkStatus();
}

template <typename U>
absl::Status gather_kernel(KernelContext& ctx) {
  return with_index_type(ctx.input(1).dtype, [&]<typename Index>() { return gather_impl<U, Index>(ctx); });
}

// ---- one_hot ----

template <typename T, typename Index>
absl::Status one_hot_impl(KernelContext& ctx) {
  const DeviceTensor& indices = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  const int64_t depth = ctx.attrs.get<int64_t>("depth");
  const int rank = indices.shape.rank();
  const int64_t axis_attr = ctx.attrs.get<int64_t>("axis");
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + rank + 1 : axis_attr);
  const Dims id = dims_of(indices.shape);
  const int64_t outer = product(id, 0, axis), inner = product(id, axis);
  const T on = static_cast<T>(ctx.attrs.get<double>("on_value"));
  const T off = static_cast<T>(ctx.attrs.get<double>("off_value"));
  const Index* ind = indices.data<Index>();
  T* out = y.data<T>();
  // Each task writes whole [depth, inner] blocks of the output, one per outer index.
  parallel_for(outer, depth * inner, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      T* block = out + o * depth * inner;
      std::fill(block, block + depth * inner, off);
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t v = static_cast<int64_t>(ind[o * inner + i]);
        if (v >= 0 && v < depth) block[v * inner + i] = on;  // out-of-range: an all-off row
      }
    }
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status one_hot_kernel(KernelContext& ctx) {
  switch (ctx.input(0).dtype) {
    case DType::kInt32: return one_hot_impl<T, int32_t>(ctx);
    case DType::kInt64: return one_hot_impl<T, int64_t>(ctx);
    default: return one_hot_impl<T, uint8_t>(ctx);
  }
}

// ---- pad and tile ----

template <typename U>
absl::Status pad_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  const double cv = ctx.attrs.get_or<double>("constant_value", 0.0);  // TF's Pad: zeros
  U fill{};
  dispatch_dtype(x.dtype, [&]<typename T>() {
    if constexpr (sizeof(T) == sizeof(U)) {
      const T v = static_cast<T>(cv);
      std::memcpy(&fill, &v, sizeof(U));
    }
  });
  parallel_fill(y.data<U>(), y.num_elements(), fill);
  if (x.num_elements() == 0) return absl::OkStatus();
  const auto& paddings = ctx.attrs.get<std::vector<int64_t>>("paddings");
  const Dims out_st = contiguous_strides(dims_of(y.shape));
  int64_t base = 0;
  for (int i = 0; i < x.shape.rank(); ++i) base += paddings[2 * i] * out_st[i];
  copy_into(dims_of(x.shape), x.data<U>(), y.data<U>() + base, out_st);
  return absl::OkStatus();
}

// The output seen as [m0, d0, m1, d1, ...] reads x at stride 0 along each m: one strided copy.
template <typename U> void tile_into(const DeviceTensor& x, const std::vector<int64_t>& multiples, DeviceTensor& y) {
  if (y.num_elements() == 0) return;
  const Dims in_st = contiguous_strides(dims_of(x.shape));
  CopyPlan p;
  for (int i = 0; i < x.shape.rank(); ++i) {
    p.dims.push_back(multiples[i]);
    p.src_st.push_back(0);
    p.dims.push_back(x.shape.dim(i));
    p.src_st.push_back(in_st[i]);
  }
  p.dst_st = contiguous_strides(p.dims);
  strided_copy(std::move(p), x.data<U>(), y.data<U>());
}

template <typename U> absl::Status tile_kernel(KernelContext& ctx) {
  tile_into<U>(ctx.input(0), ctx.attrs.get<std::vector<int64_t>>("multiples"), ctx.output(0));
  return absl::OkStatus();
}

// DynamicTile (eager/ops/array.cc): the multiples are input 1's values, checked here.
template <typename U> absl::Status dynamic_tile_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& m = ctx.input(1);
  std::vector<int64_t> multiples(static_cast<size_t>(m.num_elements()));
  std::vector<int64_t> dims(multiples.size());
  with_index_type(m.dtype, [&]<typename Index>() { std::copy_n(m.data<Index>(), multiples.size(), multiples.begin()); });
  for (size_t i = 0; i < multiples.size(); ++i) {
    const int64_t d = x.shape.dim(static_cast<int>(i));
    if (multiples[i] < 0 || (multiples[i] > 0 && d > std::numeric_limits<int64_t>::max() / multiples[i]))
      return absl::InvalidArgumentError(absl::StrCat("[", ctx.op, "] multiples[", i, "] = ", multiples[i],
                                                     " is negative or makes dim ", i, " (", d, ") too large"));
    dims[i] = d * multiples[i];
  }
  DeviceTensor& y = ctx.output(0);
  y.dtype = x.dtype;
  y.shape = Shape(dims);
  TF_RETURN_IF_ERROR(ctx.device->allocate_buffer(y));  // checked against the tensor size limit
  tile_into<U>(x, multiples, y);
  return absl::OkStatus();
}

// ReverseV2: a strided copy that reads each reversed dim from its end with a negative stride.
template <typename U>
absl::Status reverse_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  if (y.num_elements() == 0) return absl::OkStatus();
  const int rank = x.shape.rank();
  CopyPlan p{dims_of(x.shape), contiguous_strides(dims_of(x.shape)), contiguous_strides(dims_of(x.shape))};
  int64_t base = 0;
  for (int64_t a : ctx.attrs.get<std::vector<int64_t>>("axis")) {
    if (a < -rank || a >= rank) return absl::InvalidArgumentError(absl::StrCat("invalid axis ", a));
    const size_t i = static_cast<size_t>(a < 0 ? a + rank : a);
    if (p.src_st[i] < 0) return absl::InvalidArgumentError(absl::StrCat("repeated axis ", a));
    base += (p.dims[i] - 1) * p.src_st[i];
    p.src_st[i] = -p.src_st[i];
  }
  strided_copy(std::move(p), x.data<U>() + base, y.data<U>());
  return absl::OkStatus();
}

// MatrixBandPart: row i of each matrix keeps columns [i - num_lower, i + num_upper] (clipped;
// a negative bound: unbounded on that side), zeros the rest. Zero bits are 0 in every dtype.
template <typename U>
absl::Status band_part_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  if (y.num_elements() == 0) return absl::OkStatus();
  const int rank = x.shape.rank();
  const int64_t rows = x.shape.dim(rank - 2), cols = x.shape.dim(rank - 1);
  const int64_t lower = ctx.attrs.get<int64_t>("num_lower"), upper = ctx.attrs.get<int64_t>("num_upper");
  const U* src = x.data<U>();
  U* dst = y.data<U>();
  parallel_for(x.num_elements() / cols, cols, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t i = r % rows;
      // Bounds wider than the matrix are the matrix (and cannot overflow i +- bound).
      const int64_t begin = lower < 0 ? 0 : std::clamp<int64_t>(i - std::min(lower, rows), 0, cols);
      const int64_t end = upper < 0 ? cols : std::clamp<int64_t>(i + std::min(upper, cols) + 1, begin, cols);
      const U* in = src + r * cols;
      U* out = dst + r * cols;
      std::fill(out, out + begin, U{});
      std::copy(in + begin, in + end, out + begin);
      std::fill(out + end, out + cols, U{});
    }
  });
  return absl::OkStatus();
}

// DepthToSpace / SpaceToDepth on NHWC: pixel (h, w), block position (i, j) holds the run of
// C channels at depth (i * bs + j) * C of the deep side. One memcpy per run.
template <typename U, bool kToSpace>
absl::Status block_move_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  if (y.num_elements() == 0) return absl::OkStatus();
  const Shape& deep = kToSpace ? x.shape : y.shape;  // [N, H, W, C * bs^2]
  const int64_t bs = ctx.attrs.get<int64_t>("block_size");
  const int64_t n = deep.dim(0), h = deep.dim(1), w = deep.dim(2), c = deep.dim(3) / (bs * bs);
  const U* src = x.data<U>();
  U* dst = y.data<U>();
  parallel_for(n * h, w * bs * bs * c, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {  // r = (image, deep row)
      const int64_t b = r / h, row = r % h;
      for (int64_t col = 0; col < w; ++col)
        for (int64_t i = 0; i < bs; ++i)
          for (int64_t j = 0; j < bs; ++j) {
            const int64_t deep_at = ((r * w + col) * bs * bs + i * bs + j) * c;
            const int64_t wide_at = (((b * h + row) * bs + i) * w * bs + col * bs + j) * c;
            if constexpr (kToSpace) std::memcpy(dst + wide_at, src + deep_at, static_cast<size_t>(c) * sizeof(U));
            else std::memcpy(dst + deep_at, src + wide_at, static_cast<size_t>(c) * sizeof(U));
          }
    }
  });
  return absl::OkStatus();
}

// BroadcastTo: a strided copy that reads x at stride 0 along its size-1 and missing dims.
template <typename U>
absl::Status broadcast_to_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  if (y.num_elements() == 0) return absl::OkStatus();
  const Dims out = dims_of(y.shape), in_st = contiguous_strides(dims_of(x.shape));
  const int lead = y.shape.rank() - x.shape.rank();
  CopyPlan p{out, Dims(out.size(), 0), contiguous_strides(out)};
  for (int i = std::max(lead, 0); i < y.shape.rank(); ++i)
    if (x.shape.dim(i - lead) != 1) p.src_st[static_cast<size_t>(i)] = in_st[static_cast<size_t>(i - lead)];
  strided_copy(std::move(p), x.data<U>(), y.data<U>());
  return absl::OkStatus();
}

// MirrorPad: each output index along a dim maps to an input index (mirrored at the edges);
// rows of the last dim are gathered through that map.
template <typename U>
absl::Status mirror_pad_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  if (y.num_elements() == 0) return absl::OkStatus();
  const auto& pads = ctx.attrs.get<std::vector<int64_t>>("paddings");
  const int64_t slack = ctx.attrs.get<std::string>("mode") == "REFLECT" ? 1 : 0;
  const int rank = x.shape.rank();
  if (static_cast<int>(pads.size()) != 2 * rank) return absl::InvalidArgumentError("paddings do not match the rank");
  if (rank == 0) {
    *y.data<U>() = *x.data<U>();
    return absl::OkStatus();
  }
  const Dims in_st = contiguous_strides(dims_of(x.shape));
  std::vector<std::vector<int64_t>> offset(static_cast<size_t>(rank));  // output index -> input offset, per dim
  for (int i = 0; i < rank; ++i) {
    const int64_t d = x.shape.dim(i), before = pads[2 * i];
    if (before > d - slack || pads[2 * i + 1] > d - slack)  // validated again: a kernel never trusts attrs
      return absl::InvalidArgumentError(absl::StrCat("paddings[", i, "] exceed dimension ", i));
    for (int64_t j = 0; j < y.shape.dim(i); ++j) {
      int64_t k = j - before;
      if (k < 0) k = -k - 1 + slack;
      else if (k >= d) k = 2 * d - 1 - slack - k;
      offset[static_cast<size_t>(i)].push_back(k * in_st[static_cast<size_t>(i)]);
    }
  }
  const int64_t inner = y.shape.dim(rank - 1), rows = y.num_elements() / inner;
  const U* src = x.data<U>();
  U* dst = y.data<U>();
  const std::vector<int64_t>& last = offset.back();
  parallel_for(rows, inner, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t base = 0, rest = r;
      for (int i = rank - 2; i >= 0; --i) {
        const int64_t n = y.shape.dim(i);
        base += offset[static_cast<size_t>(i)][static_cast<size_t>(rest % n)];
        rest /= n;
      }
      U* row = dst + r * inner;
      for (int64_t j = 0; j < inner; ++j) row[j] = src[base + last[static_cast<size_t>(j)]];
    }
  });
  return absl::OkStatus();
}

}  // namespace

void register_array_kernels(KernelRegistry& r) {
  register_all(r, "Transpose", []<typename T>() -> KernelFn { return transpose_kernel<CarrierOf<T>>; });
  register_all(r, "ConcatV2", []<typename T>() -> KernelFn { return concat_kernel<CarrierOf<T>>; });
  register_all(r, "Pack", []<typename T>() -> KernelFn { return concat_kernel<CarrierOf<T>>; });
  for (const char* op : {"Split", "SplitV", "Unpack"})
    register_all(r, op, []<typename T>() -> KernelFn { return split_kernel<CarrierOf<T>>; });
  register_all(r, "Shape", []<typename T>() -> KernelFn { return shape_kernel; });
  register_all(r, "Size", []<typename T>() -> KernelFn { return size_kernel; });
  r.add("InvertPermutation", DeviceType::kCPU, DType::kInt32, invert_permutation_kernel<int32_t>);
  r.add("InvertPermutation", DeviceType::kCPU, DType::kInt64, invert_permutation_kernel<int64_t>);
  register_all(r, "Rank", []<typename T>() -> KernelFn { return rank_kernel; });
  register_all(r, "IdentityN", []<typename T>() -> KernelFn { return identity_n_kernel; });
  register_all(r, "Slice", []<typename T>() -> KernelFn { return slice_kernel<CarrierOf<T>>; });
  register_all(r, "StridedSlice", []<typename T>() -> KernelFn { return strided_slice_kernel<CarrierOf<T>>; });
  register_all(r, "GatherV2", []<typename T>() -> KernelFn { return gather_kernel<CarrierOf<T>>; });
  register_all(r, "OneHot", []<typename T>() -> KernelFn { return one_hot_kernel<T>; });
  for (const char* op : {"Pad", "PadV2"})
    register_all(r, op, []<typename T>() -> KernelFn { return pad_kernel<CarrierOf<T>>; });
  register_all(r, "Tile", []<typename T>() -> KernelFn { return tile_kernel<CarrierOf<T>>; });
  register_all(r, "DynamicTile", []<typename T>() -> KernelFn { return dynamic_tile_kernel<CarrierOf<T>>; });
  register_all(r, "ReverseV2", []<typename T>() -> KernelFn { return reverse_kernel<CarrierOf<T>>; });
  register_all(r, "MirrorPad", []<typename T>() -> KernelFn { return mirror_pad_kernel<CarrierOf<T>>; });
  register_all(r, "MatrixBandPart", []<typename T>() -> KernelFn { return band_part_kernel<CarrierOf<T>>; });
  // Note [NCHW kernels]: NCHW between transposes.
  register_all(r, "DepthToSpace", []<typename T>() -> KernelFn {
    return nchw_or_nhwc<block_move_kernel<CarrierOf<T>, true>>;
  });
  register_all(r, "SpaceToDepth", []<typename T>() -> KernelFn {
    return nchw_or_nhwc<block_move_kernel<CarrierOf<T>, false>>;
  });
  register_all(r, "BroadcastTo", []<typename T>() -> KernelFn { return broadcast_to_kernel<CarrierOf<T>>; });
}

}  // namespace tapeflow::cpu
