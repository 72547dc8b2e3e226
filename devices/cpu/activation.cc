// CPU kernels of the activation family (eager/ops/activation.cc): one elementwise loop per op,
// the math in devices/functors.h (shared with the CUDA kernels).
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/cpu/unary_kernel.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

// Elements per parallel_for grain unit: cheap compares, or a transcendental.
constexpr int kCheap = 1, kTranscendental = 20;

// (a, b) -> out of one shape (the shape function checked it): the gradient ops.
template <typename T, typename F, int Cost>
absl::Status activation_grad_kernel(KernelContext& ctx) {
  const T* a = ctx.input(0).data<T>();
  const T* b = ctx.input(1).data<T>();
  T* out = ctx.output(0).data<T>();
  const F f = make_functor<F>(ctx);
  parallel_for(ctx.output(0).num_elements(), Cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], b[i]);
  });
  return absl::OkStatus();
}

// An activation (x -> y) or a gradient op ((a, b) -> out) for the CPU's numeric or floating dtypes.
template <typename F, int Cost = kCheap>
void register_numeric_activation(KernelRegistry& r, const char* op) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, op, DeviceType::kCPU, []<typename T>() -> KernelFn { return unary_kernel<T, T, F, Cost>; });
}
template <typename F, int Cost = kCheap>
void register_numeric_grad(KernelRegistry& r, const char* op) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, op, DeviceType::kCPU, []<typename T>() -> KernelFn { return activation_grad_kernel<T, F, Cost>; });
}
template <typename F, int Cost = kCheap>
void register_floating_activation(KernelRegistry& r, const char* op) {
  register_each<float, double>(r, op, DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return unary_kernel<T, T, F, Cost>; });
}
template <typename F, int Cost = kCheap>
void register_floating_grad(KernelRegistry& r, const char* op) {
  register_each<float, double>(r, op, DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return activation_grad_kernel<T, F, Cost>; });
}

}  // namespace

void register_activation_kernels(KernelRegistry& r) {
  register_numeric_activation<functors::Relu>(r, "Relu");
  register_numeric_activation<functors::Relu6>(r, "Relu6");
  register_numeric_grad<functors::ReluGrad>(r, "ReluGrad");
  register_numeric_grad<functors::Relu6Grad>(r, "Relu6Grad");
  register_floating_activation<functors::Elu, kTranscendental>(r, "Elu");
  register_floating_activation<functors::Selu, kTranscendental>(r, "Selu");
  register_floating_activation<functors::Softplus, kTranscendental>(r, "Softplus");
  register_floating_activation<functors::Softsign>(r, "Softsign");
  register_floating_activation<functors::LeakyRelu>(r, "LeakyRelu");
  register_floating_grad<functors::EluGrad>(r, "EluGrad");
  register_floating_grad<functors::SeluGrad>(r, "SeluGrad");
  register_floating_grad<functors::SoftplusGrad, kTranscendental>(r, "SoftplusGrad");
  register_floating_grad<functors::SoftsignGrad>(r, "SoftsignGrad");
  register_floating_grad<functors::LeakyReluGrad>(r, "LeakyReluGrad");
  register_floating_grad<functors::SigmoidGrad>(r, "SigmoidGrad");
  register_floating_grad<functors::TanhGrad>(r, "TanhGrad");
}

}  // namespace tapeflow::cpu
