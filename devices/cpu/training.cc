// CPU kernels of the fused optimizer updates (eager/ops/training.cc): one pass over the elements.
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "devices/cpu/blas.h"

namespace tapeflow::cpu {

namespace {

// The arithmetic, and its order, of Adam's elementwise form (nn/adam.cc): the same results.
template <typename T>
absl::Status adam_update_kernel(KernelContext& ctx) {
  const T* var = ctx.input(0).data<T>();
  const T* m = ctx.input(1).data<T>();
  const T* v = ctx.input(2).data<T>();
  const T* g = ctx.input(3).data<T>();
  const T lr = *ctx.input(4).data<T>();
  const double beta_1 = ctx.attrs.get<double>("beta_1"), beta_2 = ctx.attrs.get<double>("beta_2");
  const T b1 = static_cast<T>(beta_1), one_minus_b1 = static_cast<T>(1 - beta_1);
  const T b2 = static_cast<T>(beta_2), one_minus_b2 = static_cast<T>(1 - beta_2);
  const T eps = static_cast<T>(ctx.attrs.get<double>("epsilon"));
  T* var_t = ctx.output(0).data<T>();
  T* m_t = ctx.output(1).data<T>();
  T* v_t = ctx.output(2).data<T>();
  parallel_for(ctx.output(0).num_elements(), 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T mi = m[i] * b1 + g[i] * one_minus_b1;
      const T vi = v[i] * b2 + g[i] * g[i] * one_minus_b2;
      m_t[i] = mi;
      v_t[i] = vi;
      var_t[i] = var[i] - mi * lr / (std::sqrt(vi) + eps);
    }
  });
  return absl::OkStatus();
}

// var + scale op(a) op(b): var copied into the output, then one product accumulated onto it
// (beta = 1), so neither the product nor its scaled copy is ever stored.
template <typename T>
absl::Status matmul_update_kernel(KernelContext& ctx) {
  const DeviceTensor& var = ctx.input(0);
  const DeviceTensor& a = ctx.input(1);
  const DeviceTensor& b = ctx.input(2);
  const T scale = *ctx.input(3).data<T>();
  const bool ta = ctx.attrs.get<bool>("transpose_a"), tb = ctx.attrs.get<bool>("transpose_b");
  DeviceTensor& out = ctx.output(0);
  const int64_t m = out.shape.dim(0), n = out.shape.dim(1), k = a.shape.dim(ta ? 0 : 1);
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (m > kIntMax || n > kIntMax || k > kIntMax)
    return absl::UnimplementedError("matrices with a dimension above 2^31 - 1 are not supported");
  T* c = out.data<T>();
  const T* v = var.data<T>();
  if (c != v) {
    parallel_for(m * n, 1, [&](int64_t begin, int64_t end) {
      std::memcpy(c + begin, v + begin, sizeof(T) * static_cast<size_t>(end - begin));
    });
  }
  if (m == 0 || n == 0 || k == 0) return absl::OkStatus();
  const T alpha = ctx.attrs.get<bool>("subtract") ? -scale : scale;
  gemm<T>(ta, tb, m, n, k, alpha, a.data<T>(), b.data<T>(), T(1), c);
  return absl::OkStatus();
}

// var - alpha delta, elementwise. The output may be var's own storage (an in-place update).
template <typename T>
absl::Status gradient_descent_update_kernel(KernelContext& ctx) {
  const T* var = ctx.input(0).data<T>();
  const T alpha = *ctx.input(1).data<T>();
  const T* delta = ctx.input(2).data<T>();
  T* out = ctx.output(0).data<T>();
  parallel_for(ctx.output(0).num_elements(), 2, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = var[i] - alpha * delta[i];
  });
  return absl::OkStatus();
}

}  // namespace

void register_training_kernels(KernelRegistry& r) {
  register_each<float, double>(r, "GradientDescentUpdate", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return gradient_descent_update_kernel<T>; });
  register_each<float, double>(r, "AdamUpdate", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return adam_update_kernel<T>; });
  register_each<float, double>(r, "MatMulUpdate", DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return matmul_update_kernel<T>; });
}

}  // namespace tapeflow::cpu
