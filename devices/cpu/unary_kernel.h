// The CPU's one-input elementwise loop, shared by the unary, math and activation families
// (devices/cpu/{unary,math,activation}.cc): y = F(x), the math in devices/functors.h.
#pragma once

#include "absl/status/status.h"
#include "devices/cpu/thread_pool.h"
#include "devices/kernel_registry.h"

namespace tapeflow::cpu {

// A functor with a parameter (LeakyRelu's alpha) takes it from the op's "alpha" attribute.
template <typename F>
F make_functor(const KernelContext& ctx) {
  if constexpr (requires { F{0.0}; }) return F{ctx.attrs.get<double>("alpha")};
  else return F{};
}

// Cost: parallel_for's work per element (about 1 for a compare, 20 for a transcendental).
template <typename T, typename Out, typename F, int Cost>
absl::Status unary_kernel(KernelContext& ctx) {
  const T* x = ctx.input(0).data<T>();
  Out* y = ctx.output(0).data<Out>();
  const F f = make_functor<F>(ctx);
  parallel_for(ctx.input(0).num_elements(), Cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
  return absl::OkStatus();
}

}  // namespace tapeflow::cpu
