#include "devices/cpu/register.h"

#include "devices/kernel_registry.h"

namespace tapeflow {

// Families registered after the ones devices/cpu/register.h lists (declared here so adding one
// does not rebuild every CPU kernel file).
namespace cpu {
void register_conv_variant_kernels(KernelRegistry& r);
void register_normalization_kernels(KernelRegistry& r);
void register_resize_kernels(KernelRegistry& r);
void register_space_batch_kernels(KernelRegistry& r);
void register_detection_kernels(KernelRegistry& r);
void register_nn_kernels(KernelRegistry& r);
void register_tensor_array_kernels(KernelRegistry& r);
}  // namespace cpu

void register_cpu_kernels(KernelRegistry& r) {
  cpu::register_unary_kernels(r);
  cpu::register_activation_kernels(r);
  cpu::register_binary_kernels(r);
  cpu::register_math_kernels(r);
  cpu::register_where_kernels(r);
  cpu::register_cast_kernels(r);
  cpu::register_segment_kernels(r);
  cpu::register_array_kernels(r);
  cpu::register_reduction_kernels(r);
  cpu::register_scan_kernels(r);
  cpu::register_matmul_kernels(r);
  cpu::register_random_kernels(r);
  cpu::register_creation_kernels(r);
  cpu::register_conv_kernels(r);
  cpu::register_pool_kernels(r);
  cpu::register_training_kernels(r);
  cpu::register_scatter_kernels(r);
  cpu::register_sorting_kernels(r);
  cpu::register_conv_variant_kernels(r);
  cpu::register_normalization_kernels(r);
  cpu::register_resize_kernels(r);
  cpu::register_tensor_array_kernels(r);
  cpu::register_space_batch_kernels(r);
  cpu::register_detection_kernels(r);
  cpu::register_nn_kernels(r);
}

}  // namespace tapeflow
