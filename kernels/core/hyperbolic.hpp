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
/// Method, for a = |x| (sinh and tanh are odd, cosh even); sinh and cosh need no division:
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
///  - tanh a = a + a^3 T(a^2) for a < 1/2 (T of degree 10, float 5), and (1 - F)/(1 + F) with
///    F = e^-2a above: F from exp's unrounded pair, a double-word quotient (arith.hpp's divide)
///    rounded once, so that the error shrinks with 1 - tanh a and the result never steps back.
///    (tanh as the quotient sinh/cosh stepped back thousands of times per binade from a = 2.4
///    on, where tanh changes by less per ulp of a than that quotient's error.)
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
  static constexpr double kPolyLimit = 0.5;  // below it sinh and tanh are odd polynomials
  /// (sinh r - r)/r^3 as a polynomial in z = r^2 <= 1/4, relative error 2^-54 (the rounding of
  /// its leading coefficient 1/6).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R sinh_poly(const R& z) {
    return horner(z, 0x1.5555555555555p-3, 0x1.11111111112c7p-7, 0x1.a01a019f7adb3p-13,
                  0x1.71de3bd757e7p-19, 0x1.ae60faa64a746p-26, 0x1.645500821bf55p-33);
  }
  /// (tanh a - a)/a^3 as a polynomial in z = a^2 <= 1/4, relative error 2^-54 (degree 10).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R tanh_poly(const R& z) {
    return horner(z, -0x1.5555555555555p-2, 0x1.1111111111035p-3, -0x1.ba1ba1ba067dfp-5,
                  0x1.664f487b323c9p-6, -0x1.226e33db3bc09p-7, 0x1.d6d3717fb91c3p-9,
                  -0x1.7d9bc90dcfb6ap-10, 0x1.34f1509ada0d5p-11, -0x1.ee4e076719f34p-13,
                  0x1.6d146011f4c42p-14, -0x1.725f95c0ede92p-16);
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
  /// (tanh a - a)/a^3 on a^2 <= 1/4, relative error 2^-25 (degree 5).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R tanh_poly(const R& z) {
    return horner(z, -0x1.555556p-2f, 0x1.111176p-3f, -0x1.ba3c96p-5f, 0x1.6867fep-6f,
                  -0x1.2f258p-7f, 0x1.d6a7f6p-9f);
  }
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

/// cosh a and sinh a of 0 <= a <= kFastLimit, each rounded once.
template <class T, class R>
VIGOR_HD VIGOR_INLINE void cosh_sinh(const R& a, R& cosh_a, R& sinh_a) {
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
  cosh_a = sum.hi + (sum.lo + cosh_small);
  sinh_a = difference.hi + (difference.lo + sinh_small);
}

/// sinh a: a + a^3 Ps(a^2) below kPolyLimit (cosh_sinh's sum for k = 1, a in [ln2/2, 1/2),
/// cancels to a third and carries c's absolute error: up to 0.3 ulp), cosh_sinh's above.
template <class T, class R>
VIGOR_HD VIGOR_INLINE R sinh_magnitude(const R& a) {
  using C = HyperbolicCoefficients<T>;
  const R z = mul_unfused(a, a);
  const R small = a + mul_unfused(mul_unfused(a, z), C::sinh_poly(z));
  R c, s;
  cosh_sinh<T>(a, c, s);
  return select(a < R(C::kPolyLimit), small, s);
}
template <class T, class R>
VIGOR_HD VIGOR_INLINE R cosh_magnitude(const R& a) {
  R c, s;
  cosh_sinh<T>(a, c, s);
  return c;
}

/// tanh a = a + a^3 T(a^2) for a < kPolyLimit, and (1 - F)/(1 + F) with F = e^-2a above: F from
/// exp's unrounded pair, 1 -+ F split exactly, a double-word quotient rounded once. The error then
/// lies in F (0.15·2^-p of it), so it shrinks with 1 - tanh a and the result is non-decreasing as
/// the true value is. (sinh/cosh as a quotient carries an error of about 2^-56 of the result,
/// more than tanh changes per ulp of a from a = 2.4 on: it stepped back there.) Beyond a = 20 the
/// result is 1 (from a = 19.06, float 9.01, on it rounds to 1), so a is clamped there and F
/// stays normal.
template <class T, class R>
VIGOR_HD VIGOR_INLINE R tanh_magnitude(const R& a) {
  using C = HyperbolicCoefficients<T>;
  const auto small = a < R(C::kPolyLimit);
  R v_small(T(0)), v_large(T(0));
  if (any_of(small)) {
    // a^3 to twice the precision (z and a z split by FMAs): the term a^3 T reaches 0.09 of the
    // result, and with a^3 rounded twice the sampled maximum was 0.68 ulp.
    const R z = mul_unfused(a, a);
    const R z_lo = fma(a, a, -z);
    const R cube = mul_unfused(a, z);
    const R cube_lo = fma(a, z, -cube) + mul_unfused(a, z_lo);
    const R poly = C::tanh_poly(z);
    v_small = a + fma(cube, poly, mul_unfused(cube_lo, poly));
  }
  if (any_of(!small)) {
    const R clamped = select(a < R(T(20)), a, R(T(20)));
    R ks, hi, lo;
    exp_log_detail::reduce_by_ln2<T>(R(T(-2)) * clamped, ks, hi, lo);
    const DoubleWord<R> e = exp_log_detail::exp_near_zero_pair<T>(hi, lo);
    const R scale = pow2_of_shifted(ks);  // 2^k, k in [-58, -1]: F exact from e's pair
    const DoubleWord<R> f = fast_two_sum(mul_unfused(e.hi, scale), mul_unfused(e.lo, scale));
    const DoubleWord<R> one_minus = fast_two_sum(R(T(1)), -f.hi);
    const DoubleWord<R> one_plus = fast_two_sum(R(T(1)), f.hi);
    const DoubleWord<R> q = divide(DoubleWord<R>{one_minus.hi, one_minus.lo - f.lo},
                                   DoubleWord<R>{one_plus.hi, one_plus.lo + f.lo});
    v_large = q.hi + q.lo;
  }
  return select(small, v_small, v_large);
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
