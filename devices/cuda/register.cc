#include "devices/cuda/register.h"

#include "devices/kernel_registry.h"

namespace tapeflow {

void register_cuda_kernels(KernelRegistry& r) {
  cuda::register_unary_kernels(r);
  cuda::register_binary_kernels(r);
  cuda::register_activation_kernels(r);
  cuda::register_math_kernels(r);
  cuda::register_matmul_kernels(r);
}

}  // namespace tapeflow
