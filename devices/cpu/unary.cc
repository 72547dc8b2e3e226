// CPU kernels of the unary elementwise family (eager/ops/unary.cc). The math is in
// devices/functors.h, shared with the CUDA kernels.
#include "devices/cpu/register.h"
#include "devices/cpu/thread_pool.h"
#include "devices/cpu/unary_kernel.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

template <typename F, int Cost = 1>
void register_numeric(KernelRegistry& r, const char* op) {
  register_each<float, double, int32_t, int64_t>(
      r, op, DeviceType::kCPU, []<typename T>() -> KernelFn { return unary_kernel<T, T, F, Cost>; });
}

template <typename F, int Cost = 20>
void register_floating(KernelRegistry& r, const char* op) {
  register_each<float, double>(r, op, DeviceType::kCPU,
                               []<typename T>() -> KernelFn { return unary_kernel<T, T, F, Cost>; });
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  register_numeric<functors::Neg>(r, "Neg");
  register_numeric<functors::Abs>(r, "Abs");
  register_numeric<functors::Sign>(r, "Sign");
  register_numeric<functors::Square>(r, "Square");
  r.add("Abs", DeviceType::kCPU, DType::kUInt8, unary_kernel<uint8_t, uint8_t, functors::Abs, 1>);
  r.add("Square", DeviceType::kCPU, DType::kUInt8, unary_kernel<uint8_t, uint8_t, functors::Square, 1>);
  r.add("Sign", DeviceType::kCPU, DType::kUInt8, unary_kernel<uint8_t, uint8_t, functors::Sign, 1>);
  register_floating<functors::Sqrt>(r, "Sqrt");
  register_floating<functors::Rsqrt>(r, "Rsqrt");
  register_floating<functors::Exp>(r, "Exp");
  register_floating<functors::Log>(r, "Log");
  register_floating<functors::Log1p>(r, "Log1p");
  register_floating<functors::Tanh>(r, "Tanh");
  register_floating<functors::Sigmoid>(r, "Sigmoid");
  register_floating<functors::Floor, 2>(r, "Floor");
  r.add("LogicalNot", DeviceType::kCPU, DType::kBool, unary_kernel<bool, bool, functors::LogicalNot, 1>);
}

}  // namespace tapeflow::cpu
