// CPU kernels of the sorting family (eager/ops/sorting.cc): TopKV2 (a partial sort of each row
// of positions) and Unique (one hash-map pass in input order).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

template <typename T> bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

// Position a before position b in top_k's output: larger value first, NaN above every number,
// equal values (and NaNs) by position. A strict total order, so sorting is well defined even
// with NaNs (a plain `>` is not a strict weak ordering then).
template <typename T> struct Before {
  const T* row;
  bool operator()(int32_t a, int32_t b) const {
    const T va = row[a], vb = row[b];
    const bool na = is_nan(va), nb = is_nan(vb);
    if (na || nb) return na && nb ? a < b : na;
    if (va != vb) return va > vb;
    return a < b;
  }
};

template <typename T>
absl::Status top_k_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  const int rank = x.shape.rank();
  const int64_t k = ctx.attrs.get<int64_t>("k");
  if (rank < 1) return absl::InvalidArgumentError("input 'x' must have rank >= 1");  // a kernel never trusts attrs
  const int64_t n = x.shape.dim(rank - 1);
  if (k < 0 || k > n) return absl::InvalidArgumentError(absl::StrCat("k = ", k, " is not in [0, ", n, "]"));
  if (n > std::numeric_limits<int32_t>::max())
    return absl::InvalidArgumentError(absl::StrCat("the last dimension ", n, " does not fit the int32 indices"));
  TF_ASSIGN_OR_RETURN(const int64_t rows, checked_num_elements(absl::MakeConstSpan(x.shape.dims()).subspan(0, rank - 1)));
  if (rows == 0 || k == 0) return absl::OkStatus();
  const T* in = x.data<T>();
  T* values = ctx.output(0).data<T>();
  int32_t* indices = ctx.output(1).data<int32_t>();
  parallel_for(rows, n * 4, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> order(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      const T* row = in + r * n;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), Before<T>{row});
      for (int64_t j = 0; j < k; ++j) {
        values[r * k + j] = row[order[static_cast<size_t>(j)]];
        indices[r * k + j] = order[static_cast<size_t>(j)];
      }
    }
  });
  return absl::OkStatus();
}

// Gives an output the kernel sizes itself (Note [Data-dependent output shapes]) its buffer.
absl::Status allocate(KernelContext& ctx, int i, DType dtype, int64_t n) {
  DeviceTensor& out = ctx.output(i);
  if (out.buffer && out.shape == Shape{n}) return absl::OkStatus();
  out.dtype = dtype;
  out.shape = Shape{n};
  return ctx.device->allocate_buffer(out);
}

template <typename T, typename Index>
absl::Status unique_impl(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  if (x.shape.rank() != 1) return absl::InvalidArgumentError("input 'x' must be a vector");
  const int64_t n = x.shape.dim(0);
  if (n > std::numeric_limits<Index>::max())
    return absl::InvalidArgumentError(absl::StrCat("input 'x' has ", n, " elements, more than out_idx ",
                                                   dtype_name(dtype_of<Index>()), " can count"));
  const T* in = x.data<T>();
  std::vector<Index> idx(static_cast<size_t>(n));
  std::vector<int64_t> first;  // position of each distinct value's first occurrence
  absl::flat_hash_map<T, Index> seen;
  for (int64_t i = 0; i < n; ++i) {
    T key = in[i];
    if (is_nan(key)) {  // NaN != NaN: each one is a value of its own
      idx[static_cast<size_t>(i)] = static_cast<Index>(first.size());
      first.push_back(i);
      continue;
    }
    if constexpr (std::is_floating_point_v<T>) if (key == T(0)) key = T(0);  // -0.0 is 0.0
    auto [it, inserted] = seen.try_emplace(key, static_cast<Index>(first.size()));
    if (inserted) first.push_back(i);
    idx[static_cast<size_t>(i)] = it->second;
  }
  const int64_t count = static_cast<int64_t>(first.size());
  TF_RETURN_IF_ERROR(allocate(ctx, 0, x.dtype, count));
  TF_RETURN_IF_ERROR(allocate(ctx, 1, dtype_of<Index>(), n));
  T* y = ctx.output(0).data<T>();
  for (int64_t j = 0; j < count; ++j) y[j] = in[first[static_cast<size_t>(j)]];
  std::copy(idx.begin(), idx.end(), ctx.output(1).data<Index>());
  return absl::OkStatus();
}

template <typename T>
absl::Status unique_kernel(KernelContext& ctx) {
  return ctx.attrs.get<DType>("out_idx") == DType::kInt64 ? unique_impl<T, int64_t>(ctx)
                                                          : unique_impl<T, int32_t>(ctx);
}

}  // namespace

void register_sorting_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "TopKV2", DeviceType::kCPU, []<typename T>() -> KernelFn { return top_k_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "Unique", DeviceType::kCPU, []<typename T>() -> KernelFn { return unique_kernel<T>; });
}

}  // namespace tapeflow::cpu
