// CPU kernels of the scatter family (eager/ops/scatter.cc): GatherNd, ScatterNd and
// TensorScatterUpdate. Each views indices as [N, K] (N index rows of K coordinates) and the
// indexed tensor as [its first K dims..., slice] where a slice is the block of its remaining
// dims. Every index row is validated before anything is written, as TensorFlow's CPU kernels do.
//
// GatherNd and TensorScatterUpdate only move bytes: one instantiation per element size
// (devices/cpu/kernel_util.h). ScatterNd adds, so it is typed; it runs serially (rows may repeat).
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/checked_size.h"
#include "core/errors.h"
#include "devices/cpu/kernel_util.h"
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

// The index rows of `indices` resolved to flat slice offsets into `target`'s first K dims.
struct SlicePlan {
  int64_t rows = 0;        // N
  int64_t slice = 0;       // elements per slice: product of target.dims[K:]
  std::vector<int64_t> offsets;  // per row, in elements
};

// "indices[1,0] = [5, 0]" for row `row` of indices viewed as [N, K].
std::string row_name(const Shape& indices, int64_t row, const std::vector<int64_t>& coords) {
  std::vector<int64_t> pos(static_cast<size_t>(indices.rank() - 1));
  for (int d = indices.rank() - 2; d >= 0; --d) {
    pos[static_cast<size_t>(d)] = row % indices.dim(d);
    row /= indices.dim(d);
  }
  return absl::StrCat("indices", pos.empty() ? "" : absl::StrCat("[", absl::StrJoin(pos, ","), "]"), " = [",
                      absl::StrJoin(coords, ", "), "]");
}

template <typename Index>
absl::StatusOr<SlicePlan> plan_slices(const DeviceTensor& indices, const Shape& target, const char* target_name) {
  const int rank = indices.shape.rank();
  if (rank < 1) return absl::InvalidArgumentError("input 'indices' must have rank >= 1");  // a kernel never trusts
  const int64_t k = indices.shape.dim(rank - 1);
  if (k > target.rank())
    return absl::InvalidArgumentError(absl::StrCat("the last dimension of 'indices' is ", k, ", more than the rank ",
                                                   target.rank(), " of ", target_name));
  SlicePlan p;
  TF_ASSIGN_OR_RETURN(p.rows, checked_num_elements(absl::MakeConstSpan(indices.shape.dims()).subspan(0, rank - 1)));
  TF_ASSIGN_OR_RETURN(p.slice, checked_num_elements(absl::MakeConstSpan(target.dims()).subspan(k)));
  std::vector<int64_t> stride(static_cast<size_t>(k));
  for (int64_t d = k - 1, s = p.slice; d >= 0; --d) {
    stride[static_cast<size_t>(d)] = s;
    s *= target.dim(static_cast<int>(d));  // <= target's element count, which is checked
  }
  const Index* ind = indices.data<Index>();
  p.offsets.resize(static_cast<size_t>(p.rows));
  for (int64_t r = 0; r < p.rows; ++r) {
    int64_t off = 0;
    for (int64_t d = 0; d < k; ++d) {
      const int64_t v = static_cast<int64_t>(ind[r * k + d]);
      if (v < 0 || v >= target.dim(static_cast<int>(d))) {
        std::vector<int64_t> coords(ind + r * k, ind + (r + 1) * k);
        return absl::InvalidArgumentError(absl::StrCat(row_name(indices.shape, r, coords), " does not index into ",
                                                       target_name, " ", target.to_string()));
      }
      off += v * stride[static_cast<size_t>(d)];
    }
    p.offsets[static_cast<size_t>(r)] = off;
  }
  return p;
}

// plan_slices for a scatter into `target` (its shape attribute or input): `updates` must hold one
// slice per index row.
template <typename Index>
absl::StatusOr<SlicePlan> plan_scatter(const DeviceTensor& indices, const DeviceTensor& updates, const Shape& target) {
  TF_ASSIGN_OR_RETURN(SlicePlan p, plan_slices<Index>(indices, target, "shape"));
  if (updates.num_elements() != p.rows * p.slice)
    return absl::InvalidArgumentError(absl::StrCat("input 'updates' has shape ", updates.shape.to_string(), ", not ",
                                                   p.rows, " slices of ", p.slice, " elements"));
  return p;
}

template <typename Index, typename U>
absl::Status gather_nd_impl(KernelContext& ctx) {
  const DeviceTensor& params = ctx.input(0);
  TF_ASSIGN_OR_RETURN(SlicePlan p, plan_slices<Index>(ctx.input(1), params.shape, "param shape"));
  if (p.rows == 0 || p.slice == 0) return absl::OkStatus();
  const U* src = params.data<U>();
  U* dst = ctx.output(0).data<U>();
  TF_ASSIGN_OR_RETURN(int64_t bytes, checked_tensor_bytes({p.slice}, ctx.output(0).dtype));
  parallel_for(p.rows, p.slice, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      std::memcpy(dst + r * p.slice, src + p.offsets[static_cast<size_t>(r)], static_cast<size_t>(bytes));
  });
  return absl::OkStatus();
}

template <typename U>
absl::Status gather_nd_kernel(KernelContext& ctx) {
  return with_index_type(ctx.input(1).dtype, [&]<typename Index>() { return gather_nd_impl<Index, U>(ctx); });
}

template <typename Index, typename T>
absl::Status scatter_nd_impl(KernelContext& ctx) {
  DeviceTensor& out = ctx.output(0);
  TF_ASSIGN_OR_RETURN(SlicePlan p, plan_scatter<Index>(ctx.input(0), ctx.input(1), out.shape));
  T* o = out.data<T>();
  if (out.num_elements() > 0) std::memset(static_cast<void*>(o), 0, out.bytes());
  const T* u = ctx.input(1).data<T>();
  for (int64_t r = 0; r < p.rows; ++r) {
    T* dst = o + p.offsets[static_cast<size_t>(r)];
    const T* src = u + r * p.slice;
    for (int64_t j = 0; j < p.slice; ++j) dst[j] = functors::wrap_add(dst[j], src[j]);  // Note [Integer wrap-around]
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status scatter_nd_kernel(KernelContext& ctx) {
  return with_index_type(ctx.input(0).dtype, [&]<typename Index>() { return scatter_nd_impl<Index, T>(ctx); });
}

template <typename Index, typename U>
absl::Status tensor_scatter_update_impl(KernelContext& ctx) {
  const DeviceTensor& tensor = ctx.input(0);
  DeviceTensor& out = ctx.output(0);
  TF_ASSIGN_OR_RETURN(SlicePlan p, plan_scatter<Index>(ctx.input(1), ctx.input(2), tensor.shape));
  U* o = out.data<U>();
  if (out.num_elements() > 0 && o != tensor.data<U>()) std::memcpy(o, tensor.data<U>(), out.bytes());
  if (p.slice == 0) return absl::OkStatus();
  TF_ASSIGN_OR_RETURN(int64_t bytes, checked_tensor_bytes({p.slice}, out.dtype));
  const U* u = ctx.input(2).data<U>();
  for (int64_t r = 0; r < p.rows; ++r)  // in order: the last of repeated indices wins
    std::memcpy(o + p.offsets[static_cast<size_t>(r)], u + r * p.slice, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

template <typename U>
absl::Status tensor_scatter_update_kernel(KernelContext& ctx) {
  return with_index_type(ctx.input(1).dtype,
                         [&]<typename Index>() { return tensor_scatter_update_impl<Index, U>(ctx); });
}

}  // namespace

void register_scatter_kernels(KernelRegistry& r) {
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "GatherNd", DeviceType::kCPU, []<typename T>() -> KernelFn { return gather_nd_kernel<CarrierOf<T>>; });
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, "ScatterNd", DeviceType::kCPU, []<typename T>() -> KernelFn { return scatter_nd_kernel<T>; });
  register_each<float, double, int32_t, int64_t, uint8_t, bool>(
      r, "TensorScatterUpdate", DeviceType::kCPU,
      []<typename T>() -> KernelFn { return tensor_scatter_update_kernel<CarrierOf<T>>; });
}

}  // namespace tapeflow::cpu
