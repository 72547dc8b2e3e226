// Register-blocked products for convolutions with few taps per output (K = KH*KW*Cin small, as in
// a first layer on grey or RGB images), used by devices/cpu/conv.cc (Note [Small-K convolutions]).
// Row-major float32 throughout:
//   cols     [pixels, k]   the patches of some output pixels (an L1-sized block of im2col)
//   filter   [k, cout]
//   out      [pixels, cout]
#pragma once

#include <cstdint>

namespace tapeflow::cpu {

// out = cols * filter.
void small_k_forward(const float* cols, const float* filter, float* out, int64_t pixels, int64_t k, int64_t cout);

// dfilter += cols^T * dout (dout: [pixels, cout]).
void small_k_filter_grad(const float* cols, const float* dout, float* dfilter, int64_t pixels, int64_t k,
                         int64_t cout);

// The instruction sets these loops are compiled for (Note [Explicit ISA variants]).
enum class SmallKIsa { kAvx512, kAvx2, kBaseline };
const char* small_k_isa_name(SmallKIsa isa);
bool small_k_isa_supported(SmallKIsa isa);  // by this CPU
SmallKIsa small_k_isa();                    // the one small_k_forward/small_k_filter_grad use

// The same products with a given copy; the caller makes sure the CPU supports it.
void small_k_forward_with(SmallKIsa isa, const float* cols, const float* filter, float* out, int64_t pixels,
                          int64_t k, int64_t cout);
void small_k_filter_grad_with(SmallKIsa isa, const float* cols, const float* dout, float* dfilter,
                              int64_t pixels, int64_t k, int64_t cout);

}  // namespace tapeflow::cpu
