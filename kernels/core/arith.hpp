/// @file arith.hpp
/// @brief The arithmetic primitives vigor's own elementary functions are written with, for float
/// and double on host and device (SIMD packs overload them in kernels/simd/pack.hpp).
///
/// `fma` is the fused multiply-add: one rounding of a*b + c on every backend (the hardware
/// instruction on the GPU and on x86 with FMA; the C library's exact emulation elsewhere), so an
/// expression written with it gives the same bits everywhere. `mul_unfused` is a product that no
/// compiler may fuse into a following addition: on the host vigor compiles with
/// -ffp-contract=off, but nvcc contracts a*b + c into an FMA unless the product is written with
/// the round-to-nearest intrinsic. Double-word arithmetic (trig.hpp) relies on both.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "config.hpp"

namespace vigor::kernels {

VIGOR_HD VIGOR_INLINE double fma(double a, double b, double c) { return ::fma(a, b, c); }
VIGOR_HD VIGOR_INLINE float fma(float a, float b, float c) { return ::fmaf(a, b, c); }

/// -(a*b + c) with one rounding, written as fma(-a, b, -c): one instruction with no negation
/// after it (x86's vfnmsub, sign modifiers on the GPU's FMA, kernels/simd/pack.hpp for packs).
/// -fma(a, b, c) is a second instruction on the packs' intrinsics and under nvcc, which keep the
/// sign of zero; GCC folds it into vfnmsub on scalars. In round to nearest the two forms agree in
/// every bit but one case: an exactly zero a*b + c is +0 here and -0 from -fma(a, b, c) done as
/// written. So this form also gives every backend the bits GCC's scalar code already had.
template <class T>
VIGOR_HD VIGOR_INLINE T negated_fma(const T& a, const T& b, const T& c) {
  return fma(-a, b, -c);
}

VIGOR_HD VIGOR_INLINE double mul_unfused(double a, double b) {
#if VIGOR_DEVICE_PASS
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
VIGOR_HD VIGOR_INLINE float mul_unfused(float a, float b) {
#if VIGOR_DEVICE_PASS
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

// sqrt is correctly rounded on every backend (IEEE 754; nvcc's default --prec-sqrt=true).
VIGOR_HD VIGOR_INLINE double sqrt(double x) { return ::sqrt(x); }
VIGOR_HD VIGOR_INLINE float sqrt(float x) { return ::sqrtf(x); }
VIGOR_HD VIGOR_INLINE double abs(double x) { return ::fabs(x); }
VIGOR_HD VIGOR_INLINE float abs(float x) { return ::fabsf(x); }
VIGOR_HD VIGOR_INLINE double ldexp(double x, int e) { return ::ldexp(x, e); }
VIGOR_HD VIGOR_INLINE float ldexp(float x, int e) { return ::ldexpf(x, e); }

/// a where m, else b (both evaluated): the scalar form of the lane-wise select of SIMD packs
/// (kernels/simd/pack.hpp), so code written with it runs on either.
template <class T>
VIGOR_HD VIGOR_INLINE T select(bool m, T a, T b) {
  return m ? a : b;
}

/// The bits of a float or double as an unsigned integer of the same width.
VIGOR_HD VIGOR_INLINE std::uint64_t bits_of(double x) {
  std::uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
VIGOR_HD VIGOR_INLINE std::uint32_t bits_of(float x) {
  std::uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/// Whether a mask of lanes has any lane set: for the one lane of a float or double, the bool
/// itself. (Packs: kernels/simd/pack.hpp.)
VIGOR_HD VIGOR_INLINE bool any_of(bool m) { return m; }

/// Whether the sign bit of x is set (-0 included). (Packs: kernels/simd/pack.hpp.)
template <class T>
VIGOR_HD VIGOR_INLINE bool sign_bit(T x) {
  return (bits_of(x) >> (sizeof(T) * 8 - 1)) != 0;
}

/// The float or double with the given bits.
VIGOR_HD VIGOR_INLINE double from_bits(std::uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}
VIGOR_HD VIGOR_INLINE float from_bits(std::uint32_t u) {
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/// The layout of an IEEE-754 binary format.
template <class T>
struct FloatBits;
template <>
struct FloatBits<double> {
  using U = std::uint64_t;
  using I = std::int64_t;
  static constexpr int kMantissaBits = 52;
  static constexpr U kBias = 1023;
  static constexpr U kSqrtHalf = 0x3fe6a09e667f3bcdull;  // the bits of sqrt(1/2), rounded
};
template <>
struct FloatBits<float> {
  using U = std::uint32_t;
  using I = std::int32_t;
  static constexpr int kMantissaBits = 23;
  static constexpr U kBias = 127;
  static constexpr U kSqrtHalf = 0x3f3504f3u;
};

/// 2^k from ks = 1.5·2^(p-1) + k, the rounding shift's result (exp_log.hpp), whose low
/// significand bits are k in two's complement: shifted into the exponent field with the bias
/// added. Valid while 2^k is normal. (Packs: kernels/simd/pack.hpp.)
template <class T>
VIGOR_HD VIGOR_INLINE T pow2_of_shifted(T ks) {
  using B = FloatBits<T>;
  return from_bits(static_cast<typename B::U>((bits_of(ks) + B::kBias) << B::kMantissaBits));
}

/// x = 2^e m with m in [sqrt(1/2), sqrt(2)), for a positive normal x: the exponent field taken
/// relative to sqrt(1/2)'s bits, so the split needs no comparison. e is exact in T.
template <class T>
VIGOR_HD VIGOR_INLINE void split_exponent(T x, T& m, T& e) {
  using B = FloatBits<T>;
  using U = typename B::U;
  const U u = bits_of(x);
  const U shifted = static_cast<U>(u - B::kSqrtHalf);
  const U exponent_field = static_cast<U>(~((U(1) << B::kMantissaBits) - 1));
  m = from_bits(static_cast<U>(u - (shifted & exponent_field)));
  e = static_cast<T>(static_cast<typename B::I>(shifted) >> B::kMantissaBits);
}

/// An unevaluated sum hi + lo with |lo| small against |hi|: double-word arithmetic, for the
/// elementary functions that need twice the type's precision before their last rounding.
template <class T>
struct DoubleWord {
  T hi, lo;
};

/// a + b exactly (Knuth's TwoSum).
template <class T>
VIGOR_HD VIGOR_INLINE DoubleWord<T> two_sum(T a, T b) {
  const T s = a + b;
  const T bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

/// a + b exactly, for |a| >= |b| or a = 0 (Dekker's FastTwoSum).
template <class T>
VIGOR_HD VIGOR_INLINE DoubleWord<T> fast_two_sum(T a, T b) {
  const T s = a + b;
  return {s, b - (s - a)};
}

/// a / b in double-word arithmetic, to about twice the type's precision, with one division:
/// q = a.hi (1/b.hi) is within about an ulp of a.hi/b.hi, and the remainder a - q b, formed by
/// FMAs to its own relative precision (b.lo and a.lo to first order), times 1/b.hi carries the
/// rest. q is not the correctly rounded quotient; q.hi + q.lo is, to about 2^-100 relative, while
/// nothing underflows (the remainder is about 2^-p of a).
template <class T>
VIGOR_HD VIGOR_INLINE DoubleWord<T> divide(const DoubleWord<T>& a, const DoubleWord<T>& b) {
  const T inverse = T(1) / b.hi;
  const T q = mul_unfused(a.hi, inverse);
  const T r = fma(-q, b.hi, a.hi) + fma(-q, b.lo, a.lo);
  return {q, mul_unfused(r, inverse)};
}

/// The high and low 64 bits of the 128-bit product a * b.
VIGOR_HD VIGOR_INLINE void mul_64x64(std::uint64_t a, std::uint64_t b, std::uint64_t& hi,
                                     std::uint64_t& lo) {
#if VIGOR_DEVICE_PASS
  hi = __umul64hi(a, b);
  lo = a * b;
#else
  __extension__ typedef unsigned __int128 U128;  // a GCC/Clang extension, as -Wpedantic notes
  const U128 p = static_cast<U128>(a) * b;
  hi = static_cast<std::uint64_t>(p >> 64);
  lo = static_cast<std::uint64_t>(p);
#endif
}

/// Leading zero bits of a non-zero 64-bit integer.
VIGOR_HD VIGOR_INLINE int leading_zeros(std::uint64_t x) {
#if VIGOR_DEVICE_PASS
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

}  // namespace vigor::kernels
