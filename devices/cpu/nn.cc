// CPU kernels of the nn family (eager/ops/nn.cc): Softmax and LogSoftmax over the last axis,
// and L2Loss.
// Each row is shifted by its max first, so exp never overflows: softmax = exp(x - m) / s and
// log_softmax = (x - m) - log(s), with s = sum(exp(x - m)).
#include <algorithm>
#include <cmath>
#include <vector>

#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

namespace {

template <typename T, bool kLog>
absl::Status softmax_kernel(KernelContext& ctx) {
  const DeviceTensor& x = ctx.input(0);
  DeviceTensor& y = ctx.output(0);
  const int64_t n = y.num_elements();
  const int64_t width = x.shape.dim(x.shape.rank() - 1);
  if (n == 0 || width == 0) return absl::OkStatus();
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  parallel_for(n / width, width * 20, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* in = src + r * width;
      T* out = dst + r * width;
      const T m = *std::max_element(in, in + width);
      T sum = 0;
      for (int64_t i = 0; i < width; ++i) {
        const T e = std::exp(in[i] - m);
        if constexpr (!kLog) out[i] = e;
        sum += e;
      }
      if constexpr (kLog) {
        const T log_sum = std::log(sum);
        for (int64_t i = 0; i < width; ++i) out[i] = (in[i] - m) - log_sum;
      } else {
        for (int64_t i = 0; i < width; ++i) out[i] /= sum;
      }
    }
  });
  return absl::OkStatus();
}

// sum(t^2) / 2, accumulated in double in blocks (one partial per thread), so a large weight's
// loss loses no digits to float32 running sums.
template <typename T>
absl::Status l2_loss_kernel(KernelContext& ctx) {
  const DeviceTensor& t = ctx.input(0);
  const T* x = t.data<T>();
  const int64_t n = t.num_elements();
  constexpr int64_t kBlock = 1 << 14;
  std::vector<double> partial(static_cast<size_t>((n + kBlock - 1) / kBlock), 0.0);
  parallel_for(static_cast<int64_t>(partial.size()), kBlock, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      double s = 0;
      for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) s += static_cast<double>(x[i]) * x[i];
      partial[static_cast<size_t>(b)] = s;
    }
  });
  double sum = 0;
  for (double p : partial) sum += p;
  *ctx.output(0).data<T>() = static_cast<T>(sum / 2);
  return absl::OkStatus();
}

}  // namespace

void register_nn_kernels(KernelRegistry& r) {
  r.add("Softmax", DeviceType::kCPU, DType::kFloat32, softmax_kernel<float, false>);
  r.add("Softmax", DeviceType::kCPU, DType::kFloat64, softmax_kernel<double, false>);
  r.add("LogSoftmax", DeviceType::kCPU, DType::kFloat32, softmax_kernel<float, true>);
  r.add("LogSoftmax", DeviceType::kCPU, DType::kFloat64, softmax_kernel<double, true>);
  r.add("L2Loss", DeviceType::kCPU, DType::kFloat32, l2_loss_kernel<float>);
  r.add("L2Loss", DeviceType::kCPU, DType::kFloat64, l2_loss_kernel<double>);
}

}  // namespace tapeflow::cpu
