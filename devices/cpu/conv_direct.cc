// Note [Small-K convolutions]: a first layer (one input channel, 5x5 taps: K = 25) hands
// OpenBLAS products 25 deep, where packing costs as much as multiplying (~35 GFLOP/s measured on
// the tutorial CNN's conv1, against ~190 for its conv2). These loops keep a block of output
// pixels in registers instead: 4 pixels x 32 output channels, one filter row loaded per tap and
// reused by the 4 pixels. They are written with GCC/Clang vector types of 16 floats and compiled
// three times (target_clones: AVX-512, AVX2+FMA, baseline SSE2; the loader picks one for the CPU),
// because Debian builds everything else for baseline x86-64. This file is compiled with
// -ffp-contract=fast (CMakeLists.txt) so that `acc += a * b` becomes one fused multiply-add.
#include "devices/cpu/conv_direct.h"

#include <cstring>

namespace tapeflow::cpu {

namespace {

typedef float Vec16 __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__SANITIZE_ADDRESS__)
#define TAPEFLOW_CLONES __attribute__((target_clones("avx512f", "fma", "default")))
#else
#define TAPEFLOW_CLONES
#endif

}  // namespace

#define LOAD16(dst, src) std::memcpy(&(dst), (src), sizeof(Vec16))
#define STORE16(dst, src) std::memcpy((dst), &(src), sizeof(Vec16))

TAPEFLOW_CLONES
void small_k_forward(const float* cols, const float* filter, float* out, int64_t pixels, int64_t k, int64_t cout) {
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

TAPEFLOW_CLONES
void small_k_filter_grad(const float* cols, const float* dout, float* dfilter, int64_t pixels, int64_t k,
                         int64_t cout) {
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

#undef LOAD16
#undef STORE16

}  // namespace tapeflow::cpu
