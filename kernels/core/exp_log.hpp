/// @file exp_log.hpp
/// @brief vigor's own exp and log for float and double: one implementation for the scalar CPU
/// path, the SIMD lanes (kernels/simd/pack.hpp) and the GPU, so all three give the same bits.
///
/// Like sin and cos (trig.hpp), these use only correctly rounded operations — +, -, *, /, fma and
/// exact scalings by powers of two — each written so that no compiler may contract it
/// (arith.hpp), so they round identically on every IEEE-754 machine; glibc's libm and libmvec
/// and CUDA's device library each differ from one another in the last bits. Accuracy: below 1
/// ulp over the whole range of float and double (tests/test_exp_log.cpp against long double;
/// the derivation is in docs/elementary_functions.md).
///
/// exp, for x = k ln2 + r with |r| <= ln2/2 (Tang's reduction without a table, Muller ch. 11):
///  - k = rint(x / ln2) by the 1.5·2^(p-1) rounding shift ks, whose low significand bits are k;
///    t = x - k A exact (one FMA; A = ln2 to the type's precision, |k| < 2^11); r = hi + lo with
///    hi = t - k B rounded and lo its rounding error, to far below ulp(1) (B = ln2 - A).
///  - e^r = 1 + r + r^2 P(r), P a minimax polynomial of degree 10 (double) or 5 (float) fitted
///    with Sollya's fpminimax to (e^r - 1 - r)/r^2; lo enters to first order (lo + lo hi); 1 + hi
///    is split exactly (FastTwoSum) so the only large rounding is the last one.
///  - 2^k from ks's bits. Lanes with |x| beyond kFastLimit, inf and NaN are flagged: overflow,
///    underflow (one rounding, by ldexp) and the special values, on every backend alike.
///
/// log, for x = 2^e m with m in [sqrt(1/2), sqrt(2)) (the reduction of fdlibm's e_log.c, our
/// own coefficients):
///  - f = m - 1 exact, s = f/(2 + f), so log m = 2 atanh s = f - (f^2/2 - s (f^2/2 + R)) with
///    R = s^2 Q(s^2), Q of degree 6 (double) or 3 (float) fitted with fpminimax to
///    (2 atanh(s)/s - 2)/s^2 on |s| <= 3 - 2 sqrt(2);
///  - e ln2 = e L_hi + e L_lo with L_hi short enough that e L_hi is exact; e L_hi + f is split
///    exactly (FastTwoSum), the small terms are added to its error, and the sum of the two is
///    the one large rounding (where e L_hi and f cancel, as for x just below sqrt(1/2), fdlibm's
///    order of operations rounds twice at the result's magnitude). Zero, negative, subnormal, inf
///    and NaN lanes are flagged.
#pragma once

#include <cstdint>
#include <limits>

#include "arith.hpp"
#include "config.hpp"
#include "trig.hpp"  // horner

namespace vigor::kernels {

template <class T>
struct ExpLogCoefficients;

template <>
struct ExpLogCoefficients<double> {
  static constexpr double kInvLn2 = 0x1.71547652b82fep0;
  static constexpr double kRoundingShift = 0x1.8p52;
  static constexpr double kLn2A = 0x1.62e42fefa39efp-1;  // ln2 = A + B + O(2^-110)
  static constexpr double kLn2B = 0x1.abc9e3b39803fp-56;
  static constexpr double kFastLimit = 708;     // |k| <= 1021: 2^k and the result are normal
  static constexpr double kOverflow = 709.79;   // above ln(DBL_MAX) = 709.7827: +inf
  static constexpr double kUnderflow = -745.2;  // below ln(2^-1075) = -745.1332: +0
  static constexpr double kLn2Hi = 0x1.62e42fefa38p-1;  // 42 bits: e L_hi exact for |e| < 2^11
  static constexpr double kLn2Lo = 0x1.ef35793c7673p-45;
  static constexpr int kDigits = 53;
  /// (e^r - 1 - r)/r^2 on |r| <= ln2/2, relative error 2^-58.8 (fpminimax, degree 10).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R exp_poly(const R& r) {
    return horner(r, 0x1p-1, 0x1.5555555555557p-3, 0x1.5555555555552p-5, 0x1.1111111110056p-7,
                  0x1.6c16c16c18931p-10, 0x1.a01a01ac1a73cp-13, 0x1.a01a0197bcfeap-16,
                  0x1.71de01b88045bp-19, 0x1.27e500e0a3181p-22, 0x1.af4eb2bd1e104p-26,
                  0x1.1f32eabba0b76p-29);
  }
  /// (2 atanh(s)/s - 2)/s^2 as a polynomial in z = s^2 <= 0.0295, relative error 2^-50.9.
  template <class R>
  VIGOR_HD static VIGOR_INLINE R log_poly(const R& z) {
    return horner(z, 0x1.5555555555558p-1, 0x1.9999999995323p-2, 0x1.2492492deec38p-2,
                  0x1.c71c62e6848c9p-3, 0x1.7462b4ab851ffp-3, 0x1.39fe5b50ea5e7p-3,
                  0x1.2b58abc74575fp-3);
  }
};

template <>
struct ExpLogCoefficients<float> {
  static constexpr float kInvLn2 = 0x1.715476p0f;
  static constexpr float kRoundingShift = 0x1.8p23f;
  static constexpr float kLn2A = 0x1.62e43p-1f;  // ln2 = A + B + O(2^-54)
  static constexpr float kLn2B = -0x1.05c61p-29f;
  static constexpr float kFastLimit = 86;        // |k| <= 124
  static constexpr float kOverflow = 88.73f;     // above ln(FLT_MAX) = 88.7228: +inf
  static constexpr float kUnderflow = -104;      // below ln(2^-150) = -103.9721: +0
  static constexpr float kLn2Hi = 0x1.62e4p-1f;  // 16 bits: e L_hi exact for |e| < 2^8
  static constexpr float kLn2Lo = 0x1.7f7d1cp-20f;
  static constexpr int kDigits = 24;
  /// Relative error 2^-27.8 (degree 5).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R exp_poly(const R& r) {
    return horner(r, 0x1p-1f, 0x1.555556p-3f, 0x1.555502p-5f, 0x1.110ff2p-7f, 0x1.6d2ep-10f,
                  0x1.a2676p-13f);
  }
  /// Relative error 2^-25 (degree 3).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R log_poly(const R& z) {
    return horner(z, 0x1.555556p-1f, 0x1.99986cp-2f, 0x1.24c21ep-2f, 0x1.ce597p-3f);
  }
};

namespace exp_log_detail {

/// x = k ln2 + hi + lo with |hi| <= ln2/2 (to 2^-40) and lo about hi's rounding error, ks
/// = 1.5·2^(p-1) + k carrying k (pow2_of_shifted reads it). Valid for |x| <= kOverflow + 1.5 (|k| <
/// 2^11 keeps t = x - k A exact). exp and the hyperbolic functions (hyperbolic.hpp) share it.
template <class T, class R>
VIGOR_HD VIGOR_INLINE void reduce_by_ln2(const R& x, R& ks, R& hi, R& lo) {
  using C = ExpLogCoefficients<T>;
  const R shift(C::kRoundingShift);
  ks = fma(x, R(C::kInvLn2), shift);
  const R k = ks - shift;
  const R t = fma(-k, R(C::kLn2A), x);  // exact
  hi = fma(-k, R(C::kLn2B), t);
  lo = fma(-k, R(C::kLn2B), t - hi);  // t - hi exact, or tiny beside ulp(1)
}

/// e^(hi + lo) for |hi| <= ln2/2 (to 2^-40) and |lo| <= ulp(hi) or so (lo enters to first
/// order), in [0.70, 1.42], as the unrounded sum of a pair (|second| < 0.1 |first|) to about
/// 0.15·2^-p relative.
template <class T, class R>
VIGOR_HD VIGOR_INLINE DoubleWord<R> exp_near_zero_pair(const R& hi, const R& lo) {
  using C = ExpLogCoefficients<T>;
  const R z = mul_unfused(hi, hi);
  const R small = fma(z, C::exp_poly(hi), fma(lo, hi, lo));
  const DoubleWord<R> a = fast_two_sum(R(T(1)), hi);  // 1 + hi exactly
  return {a.hi, small + a.lo};
}

/// The same, rounded once.
template <class T, class R>
VIGOR_HD VIGOR_INLINE R exp_near_zero(const R& hi, const R& lo) {
  const DoubleWord<R> pair = exp_near_zero_pair<T>(hi, lo);
  return pair.hi + pair.lo;
}

/// e^(x - k ln2) in [0.70, 1.42], with ks = 1.5·2^(p-1) + k carrying k. Valid for |x| <=
/// kOverflow.
template <class T, class R>
VIGOR_HD VIGOR_INLINE R exp_reduced(const R& x, R& ks) {
  R hi, lo;
  reduce_by_ln2<T>(x, ks, hi, lo);
  return exp_near_zero<T>(hi, lo);
}

/// log(2^e m) for m in [sqrt(1/2), sqrt(2)).
template <class T, class R>
VIGOR_HD VIGOR_INLINE R log_of_split(const R& m, const R& e) {
  using C = ExpLogCoefficients<T>;
  const R f = m - R(T(1));  // exact (Sterbenz)
  const R s = f / (R(T(2)) + f);
  const R z = mul_unfused(s, s);
  const R hfsq = mul_unfused(R(T(0.5)), mul_unfused(f, f));
  const R r = mul_unfused(z, C::log_poly(z));
  const R small = fma(s, hfsq + r, mul_unfused(e, R(C::kLn2Lo)));
  const R a = mul_unfused(e, R(C::kLn2Hi));      // exact
  const DoubleWord<R> big = fast_two_sum(a, f);  // |a| >= |f| or a = 0
  return big.hi + ((big.lo - hfsq) + small);
}

/// The lanes exp's fast path leaves: |x| > kFastLimit, inf and NaN.
template <class T>
VIGOR_HD inline T exp_flagged(T x) {
  using C = ExpLogCoefficients<T>;
  if (x != x) return x + x;
  if (x > C::kOverflow) return std::numeric_limits<T>::infinity();
  if (x < C::kUnderflow) return T(0);
  T ks;
  const T y = exp_reduced<T>(x, ks);
  return ldexp(y, static_cast<int>(ks - C::kRoundingShift));  // one rounding, also subnormal
}

/// The lanes log's fast path leaves: x not a positive normal number, or inf, or NaN.
template <class T>
VIGOR_HD inline T log_flagged(T x) {
  using C = ExpLogCoefficients<T>;
  if (x != x) return x + x;
  if (x == T(0)) return -std::numeric_limits<T>::infinity();
  if (x < T(0)) return std::numeric_limits<T>::quiet_NaN();
  if (x == std::numeric_limits<T>::infinity()) return x;
  T m, e;  // subnormal: scaled into the normal range first
  split_exponent(x * ldexp(T(1), C::kDigits + 1), m, e);
  return log_of_split<T>(m, e - T(C::kDigits + 1));
}

/// Lanes the fast paths cannot take.
template <class T, class R>
VIGOR_HD VIGOR_INLINE auto exp_needs_care(const R& x) {
  return !(abs(x) <= R(ExpLogCoefficients<T>::kFastLimit));
}
template <class T, class R>
VIGOR_HD VIGOR_INLINE auto log_needs_care(const R& x) {
  return (!(x >= R(std::numeric_limits<T>::min()))) | (!(x <= R(std::numeric_limits<T>::max())));
}

}  // namespace exp_log_detail

/// e^x of a float or double (the packs' are in kernels/simd/pack.hpp).
template <class T>
VIGOR_HD VIGOR_INLINE T exp_of(T x) {
  if (exp_log_detail::exp_needs_care<T>(x)) return exp_log_detail::exp_flagged(x);
  T ks;
  const T y = exp_log_detail::exp_reduced<T>(x, ks);
  return y * pow2_of_shifted(ks);  // exact: y 2^k is normal
}

/// The natural logarithm of a float or double.
template <class T>
VIGOR_HD VIGOR_INLINE T log_of(T x) {
  if (exp_log_detail::log_needs_care<T>(x)) return exp_log_detail::log_flagged(x);
  T m, e;
  split_exponent(x, m, e);
  return exp_log_detail::log_of_split<T>(m, e);
}

}  // namespace vigor::kernels
