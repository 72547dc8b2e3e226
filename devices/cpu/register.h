// The CPU kernel families, one registration function per file in devices/cpu/.
#pragma once

namespace tapeflow {
class KernelRegistry;
namespace cpu {
void register_unary_kernels(KernelRegistry& r);
void register_activation_kernels(KernelRegistry& r);
void register_binary_kernels(KernelRegistry& r);
void register_math_kernels(KernelRegistry& r);
void register_where_kernels(KernelRegistry& r);
void register_training_kernels(KernelRegistry& r);
void register_cast_kernels(KernelRegistry& r);
void register_segment_kernels(KernelRegistry& r);
void register_array_kernels(KernelRegistry& r);
void register_reduction_kernels(KernelRegistry& r);
void register_scan_kernels(KernelRegistry& r);
void register_matmul_kernels(KernelRegistry& r);
void register_random_kernels(KernelRegistry& r);
void register_creation_kernels(KernelRegistry& r);
void register_conv_kernels(KernelRegistry& r);
void register_pool_kernels(KernelRegistry& r);
void register_scatter_kernels(KernelRegistry& r);
void register_sorting_kernels(KernelRegistry& r);
}  // namespace cpu
}  // namespace tapeflow
