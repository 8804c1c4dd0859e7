/// @file pow.hpp
/// @brief vigor's own pow for float and double: one implementation for the scalar CPU path, the
/// SIMD lanes (kernels/simd/pack.hpp) and the GPU, so all three give the same bits.
///
/// Like exp and log (exp_log.hpp) it uses only correctly rounded operations (+, -, *, fma and
/// exact scalings by powers of two), each written so that no compiler may contract it
/// (arith.hpp). Accuracy: below 1 ulp over the whole range of float and double (tests/test_pow.cpp
/// against long double; the derivation is in docs/elementary_functions.md).
///
/// pow(x, y) = e^(y log x) for x > 0. The result's relative error is the absolute error of
/// y log x, up to 709 in size, so log x must be good to about 2^-68 relative (float: 2^-36):
///  - log x as a double-word number (Muller, "Elementary Functions", ch. 11, a table-based
///    reduction; the layout of glibc's pow): x = 2^e m with m in [sqrt(1/2), sqrt(2)), and from
///    the top 7 bits of m a table row (pow_table.hpp, written by scripts/pow_log_table.py):
///    invc, 8 significant bits near 1/m, and log c = log(1/invc) in two words. r = m invc - 1 is
///    exact (one FMA: it fits the significand) with |r| < 0.0056, and log x = e ln2 + log c +
///    log1p r with log1p r = r - r^2/2 + r^3 P(r), P an fpminimax polynomial of degree 6 (float:
///    2) for relative error 2^-54 (2^-24). The large terms e ln2_hi, log c_hi, r and -r^2/2 (split
///    exactly by an FMA) are added by TwoSum, every error word and small term beside, then
///    normalized. For x near 1 the row is invc = 1, log c = 0, so log x = log1p(m - 1) keeps its
///    relative accuracy.
///  - y log x = ph + pl: ph = y L_hi rounded, pl its error (an FMA) plus y L_lo.
///  - e^(ph + pl): exp's reduction of ph (exp_log.hpp), pl added to its low word, then exp's
///    polynomial and scaling.
/// x not a positive normal number, y infinite or NaN, and |ph| beyond exp's fast range go to
/// pow_flagged: C99 Annex F's special values (pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN,
/// negative x with integer y by the sign of y's parity, NaN for other negative x), subnormal x
/// scaled first, overflow and underflow with one rounding (ldexp).
#pragma once

#include <cstdint>
#include <limits>

#include "arith.hpp"
#include "config.hpp"
#include "exp_log.hpp"
#include "pow_table.hpp"
#include "trig.hpp"  // horner

namespace vigor::kernels {

template <class T>
struct PowCoefficients;

template <>
struct PowCoefficients<double> {
  static constexpr double kIntegerLimit = 0x1p52;  // from here on every double is an integer
  /// (log1p r - r + r^2/2)/r^3 on |r| <= 0.00556, relative error 2^-54 (fpminimax, degree 6).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R log1p_poly(const R& r) {
    return horner(r, 0x1.5555555555555p-2, -0x1.0000000000006p-2, 0x1.99999999c3b93p-3,
                  -0x1.555555526cbc8p-3, 0x1.24921f8d0e3b8p-3, -0x1.0002d950294fap-3,
                  0x1.de9685ce30676p-4);
  }
};

template <>
struct PowCoefficients<float> {
  static constexpr float kIntegerLimit = 0x1p23f;
  /// Relative error 2^-24.4 (degree 2).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R log1p_poly(const R& r) {
    return horner(r, 0x1.555556p-2f, -0x1.000104p-2f, 0x1.98bacp-3f);
  }
};

namespace pow_detail {

inline constexpr double kLogTableDouble[384] = {VIGOR_POW_LOG_TABLE_DOUBLE};
inline constexpr float kLogTableFloat[384] = {VIGOR_POW_LOG_TABLE_FLOAT};
#if defined(__CUDACC__)
static __constant__ double kLogTableDoubleDevice[384] = {VIGOR_POW_LOG_TABLE_DOUBLE};
static __constant__ float kLogTableFloatDevice[384] = {VIGOR_POW_LOG_TABLE_FLOAT};
#endif

VIGOR_HD VIGOR_INLINE const double* log_table(double) {
#if VIGOR_DEVICE_PASS
  return kLogTableDoubleDevice;
#else
  return kLogTableDouble;
#endif
}
VIGOR_HD VIGOR_INLINE const float* log_table(float) {
#if VIGOR_DEVICE_PASS
  return kLogTableFloatDevice;
#else
  return kLogTableFloat;
#endif
}

/// One row of the table: invc, log c = hi + lo.
template <class R>
struct LogRow {
  R invc, hi, lo;
};

/// The row for m in [sqrt(1/2), sqrt(2)): the top 7 bits of bits(m) - bits(sqrt(1/2)). (Packs
/// read one row per lane: kernels/simd/pack.hpp.)
template <class T>
VIGOR_HD VIGOR_INLINE LogRow<T> log_row(T m) {
  using B = FloatBits<T>;
  const auto i = static_cast<int>(((bits_of(m) - B::kSqrtHalf) >> (B::kMantissaBits - 7)) & 127u);
  const T* t = log_table(m);
  return {t[3 * i], t[3 * i + 1], t[3 * i + 2]};
}

/// log(2^e m) as a normalized double-word number, for m in [sqrt(1/2), sqrt(2)) and its row.
template <class T, class R>
VIGOR_HD VIGOR_INLINE DoubleWord<R> log_double_word(const R& m, const R& e, const LogRow<R>& row) {
  using C = ExpLogCoefficients<T>;
  const R r = fma(m, row.invc, R(T(-1)));       // exact
  const R half_r = mul_unfused(r, R(T(-0.5)));  // exact
  const R q = mul_unfused(half_r, r);           // -r^2/2 = q + q_lo exactly
  const R q_lo = fma(half_r, r, -q);
  const R r3 = mul_unfused(mul_unfused(r, r), r);
  const R p = mul_unfused(r3, PowCoefficients<T>::log1p_poly(r));
  // e ln2_hi is exact and at least 0.69 > |log c| unless e = 0: FastTwoSum.
  const DoubleWord<R> t1 = fast_two_sum(mul_unfused(e, R(C::kLn2Hi)), row.hi);
  const DoubleWord<R> t2 = two_sum(t1.hi, r);
  const DoubleWord<R> t3 = two_sum(t2.hi, q);
  const R lo = fma(e, R(C::kLn2Lo), row.lo) + (t1.lo + t2.lo) + (t3.lo + q_lo) + p;
  return fast_two_sum(t3.hi, lo);
}

/// y log x = ph + pl for a positive normal x (or a scaled subnormal one: e carries the scaling).
template <class T, class R>
VIGOR_HD VIGOR_INLINE DoubleWord<R> y_log_x(const R& m, const R& e, const LogRow<R>& row,
                                            const R& y) {
  const DoubleWord<R> l = log_double_word<T>(m, e, row);
  const R ph = mul_unfused(y, l.hi);
  return {ph, fma(y, l.hi, -ph) + mul_unfused(y, l.lo)};
}

/// e^(ph + pl) / 2^k, in [0.70, 1.42], with ks carrying k: exp's reduction of ph and pl added to
/// the reduced argument's low word (a TwoSum: ph - k ln2 may be the smaller).
template <class T, class R>
VIGOR_HD VIGOR_INLINE R exp_of_product(const DoubleWord<R>& p, R& ks) {
  R hi, lo;
  exp_log_detail::reduce_by_ln2<T>(p.hi, ks, hi, lo);
  const DoubleWord<R> r = two_sum(hi, lo + p.lo);
  return exp_log_detail::exp_near_zero<T>(r.hi, r.lo);
}

/// Whether the fast path takes x and y: x a positive normal number, y finite.
template <class T, class R>
VIGOR_HD VIGOR_INLINE auto pow_args_plain(const R& x, const R& y) {
  const R big(std::numeric_limits<T>::max());
  return (x >= R(std::numeric_limits<T>::min())) & (x <= big) & (abs(y) <= big);
}

/// Whether y is an integer, and an odd one.
template <class T>
VIGOR_HD VIGOR_INLINE void integer_parity(T y, bool& integer, bool& odd) {
  using C = PowCoefficients<T>;
  const T a = abs(y);
  if (a >= C::kIntegerLimit) {  // an integer; odd only below 2^53 (float: 2^24), by its last bit
    integer = true;
    odd = a < T(2) * C::kIntegerLimit && (bits_of(a) & 1u) != 0;
    return;
  }
  const T t = a + C::kIntegerLimit;  // exact rounding to an integer: its last bit is t's
  integer = t - C::kIntegerLimit == a;
  odd = integer && (bits_of(t) & 1u) != 0;
}

/// e^(ph + pl) where |ph| may be beyond exp's fast range: inf, 0, or one rounding by ldexp.
template <class T>
VIGOR_HD inline T exp_of_product_flagged(const DoubleWord<T>& p) {
  using C = ExpLogCoefficients<T>;
  if (p.hi > C::kOverflow) return std::numeric_limits<T>::infinity();
  if (p.hi < C::kUnderflow) return T(0);
  T ks;
  const T v = exp_of_product<T>(p, ks);
  return ldexp(v, static_cast<int>(ks - C::kRoundingShift));
}

/// pow(|x|, y) for x finite and nonzero, y finite (subnormal x scaled first).
template <class T>
VIGOR_HD inline T pow_of_magnitude(T x, T y) {
  using C = ExpLogCoefficients<T>;
  T a = abs(x), m, e;
  const bool subnormal = a < std::numeric_limits<T>::min();
  if (subnormal) a *= ldexp(T(1), C::kDigits + 1);
  split_exponent(a, m, e);
  if (subnormal) e -= T(C::kDigits + 1);
  const DoubleWord<T> p = y_log_x<T>(m, e, log_row(m), y);
  return exp_of_product_flagged(p);
}

/// What the fast path leaves: C99 Annex F's special cases, negative and subnormal x, and
/// results beyond exp's fast range.
template <class T>
VIGOR_HD inline T pow_flagged(T x, T y) {
  const T inf = std::numeric_limits<T>::infinity();
  if (y == T(0) || x == T(1)) return T(1);
  if (x != x || y != y) return x + y;
  const T ax = abs(x);
  if (abs(y) == inf) {
    if (ax == T(1)) return T(1);
    return (ax < T(1)) == (y < T(0)) ? inf : T(0);
  }
  bool integer, odd;
  integer_parity(y, integer, odd);
  const bool negative = sign_bit(x) && odd;  // the result's sign (x = -0 included)
  if (x == T(0) || ax == inf) {
    const bool large = (x == T(0)) == (y < T(0));  // 0^-y and inf^y are infinite
    const T v = large ? inf : T(0);
    return negative ? -v : v;
  }
  if (x < T(0) && !integer) return (x - x) / (x - x);  // NaN
  const T v = pow_of_magnitude(x, y);
  return negative ? -v : v;
}

}  // namespace pow_detail

/// x^y of floats or doubles, with C99's special values (packs: kernels/simd/pack.hpp).
template <class T>
VIGOR_HD inline T pow_of(T x, T y) {
  using namespace pow_detail;
  if (!pow_args_plain<T>(x, y)) return pow_flagged(x, y);
  T m, e;
  split_exponent(x, m, e);
  const DoubleWord<T> p = y_log_x<T>(m, e, log_row(m), y);
  if (!(abs(p.hi) <= ExpLogCoefficients<T>::kFastLimit)) return exp_of_product_flagged(p);
  T ks;
  const T v = exp_of_product<T>(p, ks);  // (ks is set here, before 2^k is read from it)
  return v * pow2_of_shifted(ks);        // exact: the result is normal
}

}  // namespace vigor::kernels
