// Elementwise math, written once as __host__ __device__ functors: the CPU kernels
// (devices/cpu/binary.cc, unary.cc) and the CUDA kernels (devices/cuda/*.cu) instantiate the
// same structs, so their arithmetic is tested on the CPU.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define TF_HOST_DEVICE __host__ __device__
#else
#define TF_HOST_DEVICE
#endif

namespace tapeflow::functors {

template <typename T> TF_HOST_DEVICE inline T floor_div_int(T a, T b) {
  // Callers reject b == 0 (and INT_MIN / -1 wraps through unsigned arithmetic below).
  if constexpr (std::is_unsigned_v<T>) {
    return a / b;
  } else {
    if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));  // INT_MIN % -1 is UB too
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
}

// Note [Integer wrap-around]: integer add, sub, mul, neg, abs, square and pow wrap around
// (two's complement), as TensorFlow's kernels do on every platform it runs on. Signed values
// are computed in their unsigned type, where wrapping is defined C++ (and the conversion back
// is defined since C++20), so the result is the same and UBSan stays quiet. uint8 and bool
// promote to int, which cannot overflow for them.
template <typename T>
inline constexpr bool kWrapsSigned = std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) >= sizeof(int);
template <typename T> TF_HOST_DEVICE inline T wrap_add(T a, T b) {
  if constexpr (kWrapsSigned<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T> TF_HOST_DEVICE inline T wrap_sub(T a, T b) {
  if constexpr (kWrapsSigned<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T> TF_HOST_DEVICE inline T wrap_mul(T a, T b) {
  if constexpr (kWrapsSigned<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return static_cast<T>(a * b);
  }
}

// Note [Float to integer casts]: C++ leaves a float outside the integer's range (and NaN)
// undefined, and TensorFlow leaves it implementation-defined. tapeflow saturates: NaN -> 0,
// values below the range (-inf too) -> the lowest value, above it (+inf too) -> the highest;
// in-range values truncate toward zero as static_cast does.
template <typename To, typename From> TF_HOST_DEVICE inline To saturate_cast(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>) {
    if (v != v) return To(0);
    // The bounds as From: lowest is exact (0 or -2^k); highest + 1 = 2^k is exact too.
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::lowest());
    constexpr From hi_exclusive = static_cast<From>(std::numeric_limits<To>::max() / 2 + 1) * From(2);
    if (v <= lo) return std::numeric_limits<To>::lowest();
    if (v >= hi_exclusive) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// ---- binary arithmetic ----
struct Add { template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const { return wrap_add(a, b); } };
struct Sub { template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const { return wrap_sub(a, b); } };
struct Mul { template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const { return wrap_mul(a, b); } };
struct Div {
  template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));  // no INT_MIN/-1 trap
    }
    return a / b;  // integer: truncates, as C++ and TensorFlow's truncatediv
  }
};
struct FloorDiv {
  template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return floor_div_int(a, b);
    else return std::floor(a / b);
  }
};
struct FloorMod {  // result has the sign of the divisor, as Python and tf.math.floormod
  template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>) { if (b == -1) return 0; }
      T r = a % b;
      if constexpr (std::is_signed_v<T>) { if (r != 0 && ((r < 0) != (b < 0))) r += b; }
      return r;
    } else {
      T r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
struct Pow {
  template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // Exponentiation by squaring; negative exponents are rejected by the caller.
      T result = 1;
      while (b > 0) {
        if (b & 1) result = wrap_mul(result, a);
        b >>= 1;
        if (b > 0) a = wrap_mul(a, a);
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};
struct Maximum { template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
  if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }  // NaN propagates
  return a > b ? a : b; } };
struct Minimum { template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
  if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
  return a < b ? a : b; } };

// ---- activations and their gradients (eager/ops/activation.cc) ----
// NaN passes through every activation (x < 0 and x > 0 are both false for it).
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
struct Relu { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return x < T(0) ? T(0) : x; } };
struct Relu6 { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  return x < T(0) ? T(0) : (x > T(6) ? T(6) : x); } };
struct Elu { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return x > T(0) ? x : std::expm1(x); } };
struct Selu { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  return x > T(0) ? T(kSeluScale) * x : T(kSeluScale * kSeluAlpha) * std::expm1(x); } };
struct Softplus { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  // log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0.
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); } };
struct Softsign { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  return x / (T(1) + (x < T(0) ? -x : x)); } };
struct LeakyRelu {
  double alpha;
  template <typename T> TF_HOST_DEVICE T operator()(T x) const { return x > T(0) ? x : static_cast<T>(alpha) * x; }
};
// TensorFlow's gradient ops: (gradients, features) or (gradients, outputs) -> backprops; the
// kinks pass nothing (ReluGrad at exactly 0, Relu6Grad at 0 and 6), as TensorFlow's do.
struct ReluGrad { template <typename T> TF_HOST_DEVICE T operator()(T g, T x) const { return x > T(0) ? g : T(0); } };
struct Relu6Grad { template <typename T> TF_HOST_DEVICE T operator()(T g, T x) const {
  return (x > T(0) && x < T(6)) ? g : T(0); } };
struct EluGrad { template <typename T> TF_HOST_DEVICE T operator()(T g, T y) const { return y > T(0) ? g : g * (y + T(1)); } };
struct SeluGrad { template <typename T> TF_HOST_DEVICE T operator()(T g, T y) const {
  return y > T(0) ? g * T(kSeluScale) : g * (y + T(kSeluScale * kSeluAlpha)); } };
struct SoftplusGrad { template <typename T> TF_HOST_DEVICE T operator()(T g, T x) const {
  return g / (T(1) + std::exp(-x)); } };
struct SoftsignGrad { template <typename T> TF_HOST_DEVICE T operator()(T g, T x) const {
  const T d = T(1) + (x < T(0) ? -x : x);
  return g / (d * d); } };
struct LeakyReluGrad {
  double alpha;
  template <typename T> TF_HOST_DEVICE T operator()(T g, T x) const { return x > T(0) ? g : static_cast<T>(alpha) * g; }
};
struct SigmoidGrad { template <typename T> TF_HOST_DEVICE T operator()(T y, T dy) const { return dy * y * (T(1) - y); } };
struct TanhGrad { template <typename T> TF_HOST_DEVICE T operator()(T y, T dy) const { return dy * (T(1) - y * y); } };

// ---- the math family (eager/ops/math.cc) ----
struct Reciprocal { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return T(1) / x; } };
struct Expm1 { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::expm1(x); } };
struct Sin { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::sin(x); } };
struct Cos { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::cos(x); } };
struct Tan { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::tan(x); } };
struct Asin { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::asin(x); } };
struct Acos { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::acos(x); } };
struct Atan { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::atan(x); } };
struct Sinh { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::sinh(x); } };
struct Cosh { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::cosh(x); } };
struct Asinh { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::asinh(x); } };
struct Acosh { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::acosh(x); } };
struct Atanh { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::atanh(x); } };
struct Erf { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::erf(x); } };
struct Erfc { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::erfc(x); } };
struct Ceil { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::ceil(x); } };
// Round and Rint: to the nearest integer, halves to the even one (banker's rounding), as
// TensorFlow's Round and Rint. Spelled out rather than std::nearbyint, which follows the
// thread's rounding mode. Integers are already whole. inf and NaN pass through.
struct RoundHalfEven { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  if constexpr (std::is_integral_v<T>) {
    return x;
  } else {
    const T r = std::floor(x);
    const T d = x - r;
    if (d > T(0.5)) return r + T(1);
    if (d < T(0.5)) return r;
    return std::fmod(r, T(2)) == T(0) ? r : r + T(1);  // exactly half (or inf: inf + 1)
  } } };
struct IsNan { template <typename T> TF_HOST_DEVICE bool operator()(T x) const { return std::isnan(x); } };
struct IsInf { template <typename T> TF_HOST_DEVICE bool operator()(T x) const { return std::isinf(x); } };
struct IsFinite { template <typename T> TF_HOST_DEVICE bool operator()(T x) const { return std::isfinite(x); } };
struct SquaredDifference { template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
  const T d = wrap_sub(a, b);
  return wrap_mul(d, d); } };
struct Atan2 { template <typename T> TF_HOST_DEVICE T operator()(T y, T x) const { return std::atan2(y, x); } };
// x * log(y) and x / y, each 0 where x is 0 (even for y 0 or NaN): TensorFlow's Xlogy, Xdivy.
struct Xlogy { template <typename T> TF_HOST_DEVICE T operator()(T x, T y) const {
  return x == T(0) ? T(0) : x * std::log(y); } };
struct Xdivy { template <typename T> TF_HOST_DEVICE T operator()(T x, T y) const {
  return x == T(0) ? T(0) : x / y; } };
struct DivNoNan { template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
  return b == T(0) ? T(0) : a / b; } };  // 0 even for 0/0 and inf/0
// TruncateDiv on integers is Div's integer branch (truncates toward zero).
struct TruncateMod {  // the sign of the dividend, as C's % and fmod
  template <typename T> TF_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>) { if (b == -1) return 0; }  // INT_MIN % -1 is UB
      return a % b;  // callers reject b == 0
    } else {
      return std::fmod(a, b);
    }
  }
};

// ---- comparisons and logic (bool results) ----
struct Equal { template <typename T> TF_HOST_DEVICE bool operator()(T a, T b) const { return a == b; } };
struct NotEqual { template <typename T> TF_HOST_DEVICE bool operator()(T a, T b) const { return a != b; } };
struct Less { template <typename T> TF_HOST_DEVICE bool operator()(T a, T b) const { return a < b; } };
struct LessEqual { template <typename T> TF_HOST_DEVICE bool operator()(T a, T b) const { return a <= b; } };
struct Greater { template <typename T> TF_HOST_DEVICE bool operator()(T a, T b) const { return a > b; } };
struct GreaterEqual { template <typename T> TF_HOST_DEVICE bool operator()(T a, T b) const { return a >= b; } };
struct LogicalAnd { TF_HOST_DEVICE bool operator()(bool a, bool b) const { return a && b; } };
struct LogicalOr { TF_HOST_DEVICE bool operator()(bool a, bool b) const { return a || b; } };

// ---- unary ----
struct Neg { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  if constexpr (std::is_integral_v<T>) return wrap_sub(T(0), x); else return -x; } };
struct Abs { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  if constexpr (std::is_unsigned_v<T>) return x;
  else if constexpr (std::is_integral_v<T>) return x < 0 ? wrap_sub(T(0), x) : x;  // abs(INT_MIN) == INT_MIN
  else return x < 0 ? -x : x; } };
struct Sign { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  if constexpr (std::is_floating_point_v<T>) { if (x != x) return x; }
  return static_cast<T>((T(0) < x) - (x < T(0))); } };
struct Square { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return wrap_mul(x, x); } };
struct Sqrt { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::sqrt(x); } };
struct Rsqrt { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return T(1) / std::sqrt(x); } };
struct Exp { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::exp(x); } };
struct Log { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::log(x); } };
struct Log1p { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::log1p(x); } };
struct Tanh { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::tanh(x); } };
struct Sigmoid { template <typename T> TF_HOST_DEVICE T operator()(T x) const {
  // Stable on both tails: never exponentiates a large positive number.
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e); } };
struct Floor { template <typename T> TF_HOST_DEVICE T operator()(T x) const { return std::floor(x); } };
struct LogicalNot { TF_HOST_DEVICE bool operator()(bool x) const { return !x; } };

}  // namespace tapeflow::functors
