// GPU kernels of the unary and binary elementwise families (eager/ops/unary.cc, binary.cc):
// the same op types and dtypes as the CPU kernels, launching the CUDA kernels of unary.cu and
// binary.cu on the device's stream.
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/errors.h"
#include "devices/cuda/cuda_device.h"
#include "devices/cuda/launch.h"
#include "devices/cuda/register.h"
#include "devices/functors.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cuda {

namespace {

template <typename T, typename F>
absl::Status unary_kernel(KernelContext& ctx) {
  const int64_t n = ctx.input(0).num_elements();
  if (n == 0) return absl::OkStatus();  // a grid of 0 blocks is a launch error
  TF_ASSIGN_OR_RETURN(CudaDevice* device, as_cuda_device(ctx.device));
  TF_ASSIGN_OR_RETURN(CUstream_st* stream, device->stream());
  TF_RETURN_IF_ERROR(device->activate());
  return cuda_status(launch_unary<T, F>(stream, ctx.input(0).data<T>(), ctx.output(0).data<T>(), n),
                     absl::StrCat(ctx.op, " kernel launch"));
}

template <typename T, typename F>
absl::Status predicate_kernel(KernelContext& ctx) {
  const int64_t n = ctx.input(0).num_elements();
  if (n == 0) return absl::OkStatus();
  TF_ASSIGN_OR_RETURN(CudaDevice* device, as_cuda_device(ctx.device));
  TF_ASSIGN_OR_RETURN(CUstream_st* stream, device->stream());
  TF_RETURN_IF_ERROR(device->activate());
  return cuda_status(launch_predicate<T, F>(stream, ctx.input(0).data<T>(), ctx.output(0).data<bool>(), n),
                     absl::StrCat(ctx.op, " kernel launch"));
}

DimsRef dims_of(const Shape& s) { return DimsRef{s.dims().data(), s.rank()}; }

template <typename T, typename Out, typename F>
absl::Status binary_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  const DeviceTensor& y = ctx.input(1);
  DeviceTensor& z = ctx.output(0);
  const int64_t n = z.num_elements();
  if (n == 0) return absl::OkStatus();
  BroadcastIndexer<2> idx;
  switch (make_broadcast_indexer<2>(dims_of(z.shape), {dims_of(x.shape), dims_of(y.shape)}, &idx)) {
    case BroadcastIndexStatus::kOk:
      break;
    case BroadcastIndexStatus::kIncompatible:  // the shape function rules this out
      return absl::InvalidArgumentError(absl::StrCat("shapes ", x.shape.to_string(), " and ", y.shape.to_string(),
                                                     " do not broadcast to ", z.shape.to_string()));
    case BroadcastIndexStatus::kRankTooLarge:
      return absl::UnimplementedError(absl::StrCat(
          "the GPU kernel broadcasts at most ", kMaxBroadcastRank, " dims (after merging dims where both inputs "
          "are contiguous); shapes ", x.shape.to_string(), " and ", y.shape.to_string(), " need more"));
  }
  TF_ASSIGN_OR_RETURN(CudaDevice* device, as_cuda_device(ctx.device));
  TF_ASSIGN_OR_RETURN(CUstream_st* stream, device->stream());
  TF_RETURN_IF_ERROR(device->activate());
  return cuda_status(launch_binary<T, Out, F>(stream, x.data<T>(), y.data<T>(), z.data<Out>(), n, idx),
                     absl::StrCat(ctx.op, " kernel launch"));
}

// Note [GPU integer division by zero]: a GPU does not trap on integer division by zero, it
// returns garbage; to match the CPU kernels (InvalidArgumentError, never a crash or silent
// garbage) the divisor is copied back and checked before the launch. The copy waits for the
// stream, a cost only integer division and integer pow pay.
template <typename T, typename Pred>
absl::Status check_second_input(KernelContext& ctx, Pred bad, const char* message) {
  const DeviceTensor& y = ctx.input(1);
  if (ctx.output(0).num_elements() == 0) return absl::OkStatus();
  std::vector<T> host(static_cast<size_t>(y.num_elements()));
  TF_RETURN_IF_ERROR(ctx.device->copy_to_host(y.raw(), host.data(), y.bytes()));
  for (const T v : host) {
    if (bad(v)) return absl::InvalidArgumentError(message);
  }
  return absl::OkStatus();
}

template <typename T, typename F>
absl::Status int_division_kernel(KernelContext& ctx) {
  TF_RETURN_IF_ERROR(check_second_input<T>(ctx, [](T v) { return v == 0; }, "Integer division by zero"));
  return binary_kernel<T, T, F>(ctx);
}

template <typename T>
absl::Status int_pow_kernel(KernelContext& ctx) {
  if constexpr (std::is_signed_v<T>) {
    TF_RETURN_IF_ERROR(check_second_input<T>(ctx, [](T v) { return v < 0; },
                                             "Integers to negative integer powers are not allowed"));
  }
  return binary_kernel<T, T, functors::Pow>(ctx);
}

constexpr DeviceType kGPU = DeviceType::kGPU;

template <typename F>
void register_unary_numeric(KernelRegistry& r, const char* op) {
  register_each<float, double, int32_t, int64_t>(r, op, kGPU,
                                                 []<typename T>() -> KernelFn { return unary_kernel<T, F>; });
}
template <typename F>
void register_unary_floating(KernelRegistry& r, const char* op) {
  register_each<float, double>(r, op, kGPU, []<typename T>() -> KernelFn { return unary_kernel<T, F>; });
}
template <typename F>
void register_arith(KernelRegistry& r, const char* op) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, op, kGPU, []<typename T>() -> KernelFn { return binary_kernel<T, T, F>; });
}
template <typename F>
void register_floating(KernelRegistry& r, const char* op) {
  register_each<float, double>(r, op, kGPU, []<typename T>() -> KernelFn { return binary_kernel<T, T, F>; });
}
template <typename F>
void register_int_division(KernelRegistry& r, const char* op) {
  register_each<int32_t, int64_t, uint8_t>(r, op, kGPU,
                                           []<typename T>() -> KernelFn { return int_division_kernel<T, F>; });
}
// A compile-time flag: each bool instantiation must exist in binary.cu.
template <typename F, bool kWithBool>
void register_compare(KernelRegistry& r, const char* op) {
  register_each<float, double, int32_t, int64_t, uint8_t>(
      r, op, kGPU, []<typename T>() -> KernelFn { return binary_kernel<T, bool, F>; });
  if constexpr (kWithBool) r.add(op, kGPU, DType::kBool, binary_kernel<bool, bool, F>);
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  register_unary_numeric<functors::Neg>(r, "Neg");
  register_unary_numeric<functors::Abs>(r, "Abs");
  register_unary_numeric<functors::Sign>(r, "Sign");
  register_unary_numeric<functors::Square>(r, "Square");
  r.add("Abs", kGPU, DType::kUInt8, unary_kernel<uint8_t, functors::Abs>);
  r.add("Square", kGPU, DType::kUInt8, unary_kernel<uint8_t, functors::Square>);
  r.add("Sign", kGPU, DType::kUInt8, unary_kernel<uint8_t, functors::Sign>);
  register_unary_floating<functors::Sqrt>(r, "Sqrt");
  register_unary_floating<functors::Rsqrt>(r, "Rsqrt");
  register_unary_floating<functors::Exp>(r, "Exp");
  register_unary_floating<functors::Log>(r, "Log");
  register_unary_floating<functors::Log1p>(r, "Log1p");
  register_unary_floating<functors::Tanh>(r, "Tanh");
  register_unary_floating<functors::Sigmoid>(r, "Sigmoid");
  register_unary_floating<functors::Floor>(r, "Floor");
  r.add("LogicalNot", kGPU, DType::kBool, unary_kernel<bool, functors::LogicalNot>);
}

// The activation family (eager/ops/activation.cc). LeakyRelu and LeakyReluGrad carry an alpha
// attribute the launchers' default-constructed functors cannot take: they run on the CPU
// (soft placement) until a GPU user needs them.
void register_activation_kernels(KernelRegistry& r) {
  register_unary_numeric<functors::Relu>(r, "Relu");
  register_unary_numeric<functors::Relu6>(r, "Relu6");
  r.add("Relu", kGPU, DType::kUInt8, unary_kernel<uint8_t, functors::Relu>);
  r.add("Relu6", kGPU, DType::kUInt8, unary_kernel<uint8_t, functors::Relu6>);
  register_unary_floating<functors::Elu>(r, "Elu");
  register_unary_floating<functors::Selu>(r, "Selu");
  register_unary_floating<functors::Softplus>(r, "Softplus");
  register_unary_floating<functors::Softsign>(r, "Softsign");
  register_arith<functors::ReluGrad>(r, "ReluGrad");
  register_arith<functors::Relu6Grad>(r, "Relu6Grad");
  register_floating<functors::EluGrad>(r, "EluGrad");
  register_floating<functors::SeluGrad>(r, "SeluGrad");
  register_floating<functors::SoftplusGrad>(r, "SoftplusGrad");
  register_floating<functors::SoftsignGrad>(r, "SoftsignGrad");
  register_floating<functors::SigmoidGrad>(r, "SigmoidGrad");
  register_floating<functors::TanhGrad>(r, "TanhGrad");
}

// The math family (eager/ops/math.cc). AddN and ClipByValue have CPU kernels only (soft
// placement runs them there).
void register_math_kernels(KernelRegistry& r) {
  register_unary_floating<functors::Reciprocal>(r, "Reciprocal");
  register_unary_floating<functors::Expm1>(r, "Expm1");
  register_unary_floating<functors::Sin>(r, "Sin");
  register_unary_floating<functors::Cos>(r, "Cos");
  register_unary_floating<functors::Tan>(r, "Tan");
  register_unary_floating<functors::Asin>(r, "Asin");
  register_unary_floating<functors::Acos>(r, "Acos");
  register_unary_floating<functors::Atan>(r, "Atan");
  register_unary_floating<functors::Sinh>(r, "Sinh");
  register_unary_floating<functors::Cosh>(r, "Cosh");
  register_unary_floating<functors::Asinh>(r, "Asinh");
  register_unary_floating<functors::Acosh>(r, "Acosh");
  register_unary_floating<functors::Atanh>(r, "Atanh");
  register_unary_floating<functors::Erf>(r, "Erf");
  register_unary_floating<functors::Erfc>(r, "Erfc");
  register_unary_floating<functors::Ceil>(r, "Ceil");
  register_unary_floating<functors::RoundHalfEven>(r, "Rint");
  register_unary_numeric<functors::RoundHalfEven>(r, "Round");
  register_each<float, double>(r, "IsNan", kGPU, []<typename T>() -> KernelFn { return predicate_kernel<T, functors::IsNan>; });
  register_each<float, double>(r, "IsInf", kGPU, []<typename T>() -> KernelFn { return predicate_kernel<T, functors::IsInf>; });
  register_each<float, double>(r, "IsFinite", kGPU,
                               []<typename T>() -> KernelFn { return predicate_kernel<T, functors::IsFinite>; });
  register_floating<functors::SquaredDifference>(r, "SquaredDifference");
  register_each<int32_t, int64_t>(r, "SquaredDifference", kGPU,
                                  []<typename T>() -> KernelFn { return binary_kernel<T, T, functors::SquaredDifference>; });
  register_floating<functors::DivNoNan>(r, "DivNoNan");
  register_floating<functors::Atan2>(r, "Atan2");
  register_floating<functors::Xlogy>(r, "Xlogy");
  register_floating<functors::Xdivy>(r, "Xdivy");
  register_int_division<functors::Div>(r, "TruncateDiv");
  register_floating<functors::TruncateMod>(r, "TruncateMod");
  register_each<int32_t, int64_t>(r, "TruncateMod", kGPU,
                                  []<typename T>() -> KernelFn { return int_division_kernel<T, functors::TruncateMod>; });
}

void register_binary_kernels(KernelRegistry& r) {
  register_arith<functors::Add>(r, "Add");
  register_arith<functors::Sub>(r, "Sub");
  register_arith<functors::Mul>(r, "Mul");
  register_arith<functors::Maximum>(r, "Maximum");
  register_arith<functors::Minimum>(r, "Minimum");
  register_floating<functors::Div>(r, "Div");
  register_floating<functors::FloorDiv>(r, "FloorDiv");
  register_floating<functors::FloorMod>(r, "FloorMod");
  register_floating<functors::Pow>(r, "Pow");
  register_int_division<functors::Div>(r, "Div");
  register_int_division<functors::FloorDiv>(r, "FloorDiv");
  register_int_division<functors::FloorMod>(r, "FloorMod");
  register_each<int32_t, int64_t, uint8_t>(r, "Pow", kGPU, []<typename T>() -> KernelFn { return int_pow_kernel<T>; });

  register_compare<functors::Equal, true>(r, "Equal");
  register_compare<functors::NotEqual, true>(r, "NotEqual");
  register_compare<functors::Less, false>(r, "Less");
  register_compare<functors::LessEqual, false>(r, "LessEqual");
  register_compare<functors::Greater, false>(r, "Greater");
  register_compare<functors::GreaterEqual, false>(r, "GreaterEqual");
  r.add("LogicalAnd", kGPU, DType::kBool, binary_kernel<bool, bool, functors::LogicalAnd>);
  r.add("LogicalOr", kGPU, DType::kBool, binary_kernel<bool, bool, functors::LogicalOr>);
}

}  // namespace tapeflow::cuda
