// The CUDA kernel families, one registration function per file in devices/cuda/;
// register_cuda_kernels (register.cc) calls them all.
#pragma once

namespace tapeflow {
class KernelRegistry;
namespace cuda {
void register_unary_kernels(KernelRegistry& r);   // elementwise.cc
void register_binary_kernels(KernelRegistry& r);  // elementwise.cc
void register_activation_kernels(KernelRegistry& r);  // elementwise.cc (kernels in unary.cu, binary.cu)
void register_math_kernels(KernelRegistry& r);  // elementwise.cc (kernels in unary.cu, binary.cu)
void register_matmul_kernels(KernelRegistry& r);  // matmul.cc
}  // namespace cuda
}  // namespace tapeflow
