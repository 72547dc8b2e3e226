// Type plumbing shared by the CPU kernel files (devices/cpu/*.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace tapeflow::cpu {

// Kernels that only move bytes (transpose, concat, slice, gather, scatter updates) are
// instantiated once per element size rather than once per dtype: CarrierOf<T> is the unsigned
// integer of T's size, and such a kernel is registered for T as kernel<CarrierOf<T>>.
template <size_t N> struct Carrier;
template <> struct Carrier<1> { using type = uint8_t; };
template <> struct Carrier<2> { using type = uint16_t; };
template <> struct Carrier<4> { using type = uint32_t; };
template <> struct Carrier<8> { using type = uint64_t; };
template <typename T> using CarrierOf = typename Carrier<sizeof(T)>::type;

// fn.template operator()<Index>() for an index input of `dtype`: Index is int32_t for int32 and
// int64_t otherwise (the shape functions admit only those two). For kernels templated on both
// the element type and the index type:
//   return with_index_type(ctx.input(1).dtype, [&]<typename Index>() { return impl<Index, U>(ctx); });
template <typename Fn>
decltype(auto) with_index_type(DType dtype, Fn&& fn) {
  if (dtype == DType::kInt32) return fn.template operator()<int32_t>();
  return fn.template operator()<int64_t>();
}

}  // namespace tapeflow::cpu
