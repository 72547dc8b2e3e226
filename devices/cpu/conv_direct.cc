// Note [Small-K convolutions]: a first layer (one input channel, 5x5 taps: K = 25) hands
// OpenBLAS products 25 deep, where packing costs as much as multiplying (~35 GFLOP/s measured on
// the tutorial CNN's conv1, against ~190 for its conv2). These loops keep a block of output
// pixels in registers instead: 4 pixels x 32 output channels, one filter row loaded per tap and
// reused by the 4 pixels. They are written with GCC/Clang vector types of 16 floats and compiled
// three times (AVX-512, AVX2+FMA, baseline SSE2), because Debian builds everything else for
// baseline x86-64. This file is compiled with -ffp-contract=fast (CMakeLists.txt) so that
// `acc += a * b` becomes one fused multiply-add.
//
// Note [Explicit ISA variants]: the three copies are ordinary functions with a target attribute,
// chosen once by __builtin_cpu_supports, not GCC's target_clones. target_clones dispatches
// through an ifunc resolver that the dynamic loader runs before any sanitizer runtime is ready
// (ThreadSanitizer crashed at load time), and it let only the machine's own clone run in the
// tests; small_k_forward_with / small_k_filter_grad_with run any supported copy, so each is
// tested on a machine that has it.
#include "devices/cpu/conv_direct.h"

#include <cstring>

namespace tapeflow::cpu {

namespace {

typedef float Vec16 __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

}  // namespace

#define LOAD16(dst, src) std::memcpy(&(dst), (src), sizeof(Vec16))
#define STORE16(dst, src) std::memcpy((dst), &(src), sizeof(Vec16))

namespace {

// The bodies, inlined into each ISA's copy below (a baseline body may inline into a wider target).
[[gnu::always_inline]] inline void forward_body(const float* cols, const float* filter, float* out,
                                                int64_t pixels, int64_t k, int64_t cout) {
  int64_t co = 0;
  for (; co + 2 * kLanes <= cout; co += 2 * kLanes) {
    const float* f = filter + co;
    int64_t p = 0;
    for (; p + 4 <= pixels; p += 4) {
      const float* c = cols + p * k;
      Vec16 a0 = {}, b0 = {}, a1 = {}, b1 = {}, a2 = {}, b2 = {}, a3 = {}, b3 = {};
      for (int64_t t = 0; t < k; ++t) {
        Vec16 lo, hi;
        LOAD16(lo, f + t * cout);
        LOAD16(hi, f + t * cout + kLanes);
        const float c0 = c[t], c1 = c[k + t], c2 = c[2 * k + t], c3 = c[3 * k + t];
        a0 += c0 * lo, b0 += c0 * hi;
        a1 += c1 * lo, b1 += c1 * hi;
        a2 += c2 * lo, b2 += c2 * hi;
        a3 += c3 * lo, b3 += c3 * hi;
      }
      float* o = out + p * cout + co;
      STORE16(o, a0), STORE16(o + kLanes, b0);
      STORE16(o + cout, a1), STORE16(o + cout + kLanes, b1);
      STORE16(o + 2 * cout, a2), STORE16(o + 2 * cout + kLanes, b2);
      STORE16(o + 3 * cout, a3), STORE16(o + 3 * cout + kLanes, b3);
    }
    for (; p < pixels; ++p) {
      Vec16 a = {}, b = {};
      for (int64_t t = 0; t < k; ++t) {
        Vec16 lo, hi;
        LOAD16(lo, f + t * cout);
        LOAD16(hi, f + t * cout + kLanes);
        a += cols[p * k + t] * lo, b += cols[p * k + t] * hi;
      }
      STORE16(out + p * cout + co, a), STORE16(out + p * cout + co + kLanes, b);
    }
  }
  for (; co < cout; ++co) {  // channels past the last multiple of 32
    for (int64_t p = 0; p < pixels; ++p) {
      float sum = 0.f;
      for (int64_t t = 0; t < k; ++t) sum += cols[p * k + t] * filter[t * cout + co];
      out[p * cout + co] = sum;
    }
  }
}

[[gnu::always_inline]] inline void filter_grad_body(const float* cols, const float* dout, float* dfilter,
                                                    int64_t pixels, int64_t k, int64_t cout) {
  int64_t co = 0;
  for (; co + 2 * kLanes <= cout; co += 2 * kLanes) {
    int64_t t = 0;
    for (; t + 4 <= k; t += 4) {  // 4 taps x 32 channels of dfilter in registers
      Vec16 a0 = {}, b0 = {}, a1 = {}, b1 = {}, a2 = {}, b2 = {}, a3 = {}, b3 = {};
      for (int64_t p = 0; p < pixels; ++p) {
        Vec16 lo, hi;
        LOAD16(lo, dout + p * cout + co);
        LOAD16(hi, dout + p * cout + co + kLanes);
        const float* c = cols + p * k + t;
        a0 += c[0] * lo, b0 += c[0] * hi;
        a1 += c[1] * lo, b1 += c[1] * hi;
        a2 += c[2] * lo, b2 += c[2] * hi;
        a3 += c[3] * lo, b3 += c[3] * hi;
      }
      const Vec16 acc[8] = {a0, b0, a1, b1, a2, b2, a3, b3};
      for (int r = 0; r < 8; ++r) {
        float* d = dfilter + (t + r / 2) * cout + co + (r % 2) * kLanes;
        Vec16 v;
        LOAD16(v, d);
        v += acc[r];
        STORE16(d, v);
      }
    }
    for (; t < k; ++t) {
      Vec16 a = {}, b = {};
      for (int64_t p = 0; p < pixels; ++p) {
        Vec16 lo, hi;
        LOAD16(lo, dout + p * cout + co);
        LOAD16(hi, dout + p * cout + co + kLanes);
        a += cols[p * k + t] * lo, b += cols[p * k + t] * hi;
      }
      float* d = dfilter + t * cout + co;
      Vec16 v, w;
      LOAD16(v, d), LOAD16(w, d + kLanes);
      v += a, w += b;
      STORE16(d, v), STORE16(d + kLanes, w);
    }
  }
  for (; co < cout; ++co) {  // channels past the last multiple of 32
    for (int64_t t = 0; t < k; ++t) {
      float sum = 0.f;
      for (int64_t p = 0; p < pixels; ++p) sum += cols[p * k + t] * dout[p * cout + co];
      dfilter[t * cout + co] += sum;
    }
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TAPEFLOW_HAS_ISA_VARIANTS 1
#define TAPEFLOW_DEFINE_VARIANT(suffix, target)                                                                    \
  target void forward_##suffix(const float* cols, const float* filter, float* out, int64_t pixels, int64_t k, \
                               int64_t cout) {                                                                 \
    forward_body(cols, filter, out, pixels, k, cout);                                                          \
  }                                                                                                            \
  target void filter_grad_##suffix(const float* cols, const float* dout, float* dfilter, int64_t pixels,     \
                                   int64_t k, int64_t cout) {                                                  \
    filter_grad_body(cols, dout, dfilter, pixels, k, cout);                                                    \
  }
TAPEFLOW_DEFINE_VARIANT(avx512, __attribute__((target("avx512f"))))
TAPEFLOW_DEFINE_VARIANT(avx2, __attribute__((target("avx2,fma"))))
#undef TAPEFLOW_DEFINE_VARIANT
#endif

void forward_baseline(const float* cols, const float* filter, float* out, int64_t pixels, int64_t k,
                      int64_t cout) {
  forward_body(cols, filter, out, pixels, k, cout);
}
void filter_grad_baseline(const float* cols, const float* dout, float* dfilter, int64_t pixels, int64_t k,
                          int64_t cout) {
  filter_grad_body(cols, dout, dfilter, pixels, k, cout);
}

SmallKIsa best_supported_isa() {
  if (small_k_isa_supported(SmallKIsa::kAvx512)) return SmallKIsa::kAvx512;
  if (small_k_isa_supported(SmallKIsa::kAvx2)) return SmallKIsa::kAvx2;
  return SmallKIsa::kBaseline;
}

}  // namespace

const char* small_k_isa_name(SmallKIsa isa) {
  switch (isa) {
    case SmallKIsa::kAvx512: return "avx512f";
    case SmallKIsa::kAvx2: return "avx2+fma";
    case SmallKIsa::kBaseline: return "baseline";
  }
  return "unknown";
}

bool small_k_isa_supported(SmallKIsa isa) {
#ifdef TAPEFLOW_HAS_ISA_VARIANTS
  switch (isa) {
    case SmallKIsa::kAvx512: return __builtin_cpu_supports("avx512f");
    case SmallKIsa::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SmallKIsa::kBaseline: return true;
  }
  return false;
#else
  return isa == SmallKIsa::kBaseline;
#endif
}

SmallKIsa small_k_isa() {
  static const SmallKIsa chosen = best_supported_isa();
  return chosen;
}

void small_k_forward_with(SmallKIsa isa, const float* cols, const float* filter, float* out, int64_t pixels,
                          int64_t k, int64_t cout) {
  switch (isa) {
#ifdef TAPEFLOW_HAS_ISA_VARIANTS
    case SmallKIsa::kAvx512: return forward_avx512(cols, filter, out, pixels, k, cout);
    case SmallKIsa::kAvx2: return forward_avx2(cols, filter, out, pixels, k, cout);
#endif
    default: return forward_baseline(cols, filter, out, pixels, k, cout);
  }
}

void small_k_filter_grad_with(SmallKIsa isa, const float* cols, const float* dout, float* dfilter,
                              int64_t pixels, int64_t k, int64_t cout) {
  switch (isa) {
#ifdef TAPEFLOW_HAS_ISA_VARIANTS
    case SmallKIsa::kAvx512: return filter_grad_avx512(cols, dout, dfilter, pixels, k, cout);
    case SmallKIsa::kAvx2: return filter_grad_avx2(cols, dout, dfilter, pixels, k, cout);
#endif
    default: return filter_grad_baseline(cols, dout, dfilter, pixels, k, cout);
  }
}

void small_k_forward(const float* cols, const float* filter, float* out, int64_t pixels, int64_t k, int64_t cout) {
  small_k_forward_with(small_k_isa(), cols, filter, out, pixels, k, cout);
}

void small_k_filter_grad(const float* cols, const float* dout, float* dfilter, int64_t pixels, int64_t k,
                         int64_t cout) {
  small_k_filter_grad_with(small_k_isa(), cols, dout, dfilter, pixels, k, cout);
}

#undef LOAD16
#undef STORE16

}  // namespace tapeflow::cpu
