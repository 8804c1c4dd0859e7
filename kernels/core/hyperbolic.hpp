/// @file hyperbolic.hpp
/// @brief vigor's own sinh, cosh and tanh for float and double: one implementation for the scalar
/// CPU path, the SIMD lanes (the same code with selects, kernels/simd/pack.hpp) and the GPU, so
/// all three give the same bits.
///
/// Like exp and log (exp_log.hpp) they use only correctly rounded operations (+, -, *, /, fma and
/// exact scalings by powers of two), each written so that no compiler may contract it
/// (arith.hpp). Accuracy: below 1 ulp over the whole range of float and double
/// (tests/test_hyperbolic.cpp against long double; the derivation is in
/// docs/elementary_functions.md).
///
/// Method, for a = |x| (sinh and tanh are odd, cosh even), with no division but tanh's one:
///  - exp's reduction (exp_log.hpp): a = k ln2 + r, r = hi + lo, |hi| <= ln2/2;
///  - cosh r = 1 + c and sinh r = hi + s with c = r^2/2 + r^4 Pc(r^2) and s = hi^3 Ps(hi^2) + lo
///    (lo to first order), Pc and Ps fpminimax polynomials of degree 4 and 5 (float: 2 and 2);
///    c <= 0.061 and |s| <= 0.007 are summed beside the large parts;
///  - cosh a = 2^(k-1) e^r + 2^(-k-1) e^-r and sinh a = 2^(k-1) e^r - 2^(-k-1) e^-r, with
///    e^+-r = (1 +- hi) + c +- s: 1 +- hi split exactly (FastTwoSum), the powers of two exact,
///    the small terms grouped by c and s (so that sinh's c cancels exactly for k = 0), and one
///    large rounding last. The error is that of c and s, absolute (about 2^-56 2^k);
///  - for a < 1/2 sinh a = a + a^3 Ps(a^2) instead: for k = 1 the sum above cancels to a third
///    and its absolute error reached 0.3 ulp of the result;
///  - tanh a = sinh a / cosh a, a double-word quotient of the two unrounded values (arith.hpp's
///    divide), rounded once.
/// Beyond exp's fast range (a > kFastLimit) sinh and cosh are 2^(k-1) e^r (e^-a is below 2^-1400
/// of the result there), rounded once and scaled, overflowing to inf by the scaling; tanh is 1.
/// (A first version took e^-a as 1/e^a by a double-word division: 0.59 ulp at most, but
/// 15-25 % slower on packs; docs/elementary_functions.md.)
#pragma once

#include <limits>

#include "arith.hpp"
#include "config.hpp"
#include "exp_log.hpp"
#include "trig.hpp"  // horner

namespace vigor::kernels {

template <class T>
struct HyperbolicCoefficients;

template <>
struct HyperbolicCoefficients<double> {
  static constexpr double kHuge = 711;  // above ln(2 DBL_MAX) = 710.4759: sinh and cosh overflow
  static constexpr double kPolyLimit = 0.5;  // below it sinh x = x + x^3 P(x^2)
  /// (sinh r - r)/r^3 as a polynomial in z = r^2 <= 1/4, relative error 2^-54 (the rounding of
  /// its leading coefficient 1/6).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R sinh_poly(const R& z) {
    return horner(z, 0x1.5555555555555p-3, 0x1.11111111112c7p-7, 0x1.a01a019f7adb3p-13,
                  0x1.71de3bd757e7p-19, 0x1.ae60faa64a746p-26, 0x1.645500821bf55p-33);
  }
  /// (cosh r - 1 - r^2/2)/r^4 likewise, relative error 2^-54.
  template <class R>
  VIGOR_HD static VIGOR_INLINE R cosh_poly(const R& z) {
    return horner(z, 0x1.5555555555555p-5, 0x1.6c16c16c16dap-10, 0x1.a01a01a1caec3p-16,
                  0x1.27e4e967dc857p-22, 0x1.1f591b5e77e16p-29);
  }
};

template <>
struct HyperbolicCoefficients<float> {
  static constexpr float kHuge = 90;  // above ln(2 FLT_MAX) = 89.4160
  static constexpr float kPolyLimit = 0.5f;
  /// Relative errors 2^-25 (degree 2; sinh's on z <= 1/4).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R sinh_poly(const R& z) {
    return horner(z, 0x1.555556p-3f, 0x1.110fc4p-7f, 0x1.a2a9b8p-13f);
  }
  template <class R>
  VIGOR_HD static VIGOR_INLINE R cosh_poly(const R& z) {
    return horner(z, 0x1.555556p-5f, 0x1.6c13dcp-10f, 0x1.a58256p-16f);
  }
};

namespace hyperbolic_detail {

/// cosh a and sinh a of 0 <= a <= kFastLimit as normalized double-word numbers.
template <class T, class R>
VIGOR_HD VIGOR_INLINE void cosh_sinh(const R& a, DoubleWord<R>& cosh_a, DoubleWord<R>& sinh_a) {
  using C = HyperbolicCoefficients<T>;
  R ks, hi, lo;
  exp_log_detail::reduce_by_ln2<T>(a, ks, hi, lo);
  const R z = mul_unfused(hi, hi);
  // cosh r - 1 and sinh r - hi; lo enters to first order (cosh' = sinh ~ hi, sinh' ~ 1). z/2
  // is added last, so that c's error is z's rounding and one more at c's magnitude.
  const R c_rest = fma(mul_unfused(z, z), C::cosh_poly(z), mul_unfused(lo, hi));
  const R c = mul_unfused(z, R(T(0.5))) + c_rest;
  const R s = fma(mul_unfused(hi, z), C::sinh_poly(z), lo);
  const R one(T(1));
  const DoubleWord<R> up = fast_two_sum(one, hi), down = fast_two_sum(one, -hi);
  // 2^(k-1) and 2^(-k-1), normal for k <= 1021 (float: 124): ks' = 3·2^(p-1) - ks carries -k.
  const R two_k = pow2_of_shifted(ks);
  const R two_minus_k = pow2_of_shifted(R(T(2) * ExpLogCoefficients<T>::kRoundingShift) - ks);
  const R p = mul_unfused(two_k, R(T(0.5))), m = mul_unfused(two_minus_k, R(T(0.5)));
  // cosh a = p e^r + m e^-r with e^+-r = (1 +- hi) + c +- s: the large parts p up.hi and m
  // down.hi (p up.hi the larger: p >= m, and up.hi >= down.hi for k = 0 where hi = a >= 0),
  // the small ones grouped by c and s, so that for k = 0 (p = m) sinh's c cancels exactly.
  const R u = mul_unfused(p, up.hi), d = mul_unfused(m, down.hi);
  const R pu = mul_unfused(p, up.lo), md = mul_unfused(m, down.lo);
  const R p_plus_m = p + m, p_minus_m = p - m;  // exact for k <= 26 (float: 11)
  const R cosh_small = fma(p_plus_m, c, fma(p_minus_m, s, pu + md));
  const R sinh_small = fma(p_plus_m, s, fma(p_minus_m, c, pu - md));
  const DoubleWord<R> sum = fast_two_sum(u, d), difference = fast_two_sum(u, -d);
  cosh_a = fast_two_sum(sum.hi, sum.lo + cosh_small);
  sinh_a = fast_two_sum(difference.hi, difference.lo + sinh_small);
}

/// sinh a for 0 <= a < kPolyLimit: a + t, split exactly. (cosh_sinh's sum for k = 1, a in
/// [ln2/2, 1/2), cancels to a third and carries c's absolute error: up to 0.3 ulp.)
template <class T, class R>
VIGOR_HD VIGOR_INLINE DoubleWord<R> sinh_small(const R& a) {
  const R z = mul_unfused(a, a);
  return fast_two_sum(a, mul_unfused(mul_unfused(a, z), HyperbolicCoefficients<T>::sinh_poly(z)));
}

/// sinh a as a double-word number: the polynomial below kPolyLimit, cosh_sinh's above.
template <class T, class R>
VIGOR_HD VIGOR_INLINE DoubleWord<R> sinh_either(const R& a, const DoubleWord<R>& sinh_a) {
  const auto small = a < R(HyperbolicCoefficients<T>::kPolyLimit);
  const DoubleWord<R> s = sinh_small<T>(a);
  return {select(small, s.hi, sinh_a.hi), select(small, s.lo, sinh_a.lo)};
}

template <class T, class R>
VIGOR_HD VIGOR_INLINE R sinh_magnitude(const R& a) {
  DoubleWord<R> c, s;
  cosh_sinh<T>(a, c, s);
  return sinh_either<T>(a, s).hi;
}
template <class T, class R>
VIGOR_HD VIGOR_INLINE R cosh_magnitude(const R& a) {
  DoubleWord<R> c, s;
  cosh_sinh<T>(a, c, s);
  return c.hi;
}
template <class T, class R>
VIGOR_HD VIGOR_INLINE R tanh_magnitude(const R& a) {
  DoubleWord<R> c, s;
  cosh_sinh<T>(a, c, s);
  const DoubleWord<R> q = divide(sinh_either<T>(a, s), c);
  return q.hi + q.lo;
}

/// Lanes (or the one value) beyond the fast range: a > kFastLimit, inf and NaN.
template <class T, class R>
VIGOR_HD VIGOR_INLINE auto hyperbolic_needs_care(const R& a) {
  return !(a <= R(ExpLogCoefficients<T>::kFastLimit));
}

/// e^a / 2 for kFastLimit < a <= kHuge: one rounding, then the exact scaling (or overflow).
template <class T>
VIGOR_HD inline T half_exp_flagged(T a) {
  using C = ExpLogCoefficients<T>;
  if (!(a <= HyperbolicCoefficients<T>::kHuge)) return std::numeric_limits<T>::infinity();
  T ks;
  const T y = exp_log_detail::exp_reduced<T>(a, ks);
  return ldexp(y, static_cast<int>(ks - C::kRoundingShift) - 1);
}

}  // namespace hyperbolic_detail

/// sinh x of a float or double (the packs' are in kernels/simd/pack.hpp).
template <class T>
VIGOR_HD inline T sinh_of(T x) {
  using namespace hyperbolic_detail;
  const T a = abs(x);
  if (x != x) return x + x;
  const T v = hyperbolic_needs_care<T>(a) ? half_exp_flagged(a) : sinh_magnitude<T>(a);
  return sign_bit(x) ? -v : v;
}

/// cosh x of a float or double.
template <class T>
VIGOR_HD inline T cosh_of(T x) {
  using namespace hyperbolic_detail;
  const T a = abs(x);
  if (x != x) return x + x;
  return hyperbolic_needs_care<T>(a) ? half_exp_flagged(a) : cosh_magnitude<T>(a);
}

/// tanh x of a float or double.
template <class T>
VIGOR_HD inline T tanh_of(T x) {
  using namespace hyperbolic_detail;
  const T a = abs(x);
  if (x != x) return x + x;
  const T v = hyperbolic_needs_care<T>(a) ? T(1) : tanh_magnitude<T>(a);
  return sign_bit(x) ? -v : v;
}

}  // namespace vigor::kernels
