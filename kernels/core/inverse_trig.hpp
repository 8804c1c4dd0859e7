/// @file inverse_trig.hpp
/// @brief vigor's own atan, atan2, asin and acos for float and double: one implementation for the
/// scalar CPU path, the SIMD lanes (the same code with selects, kernels/simd/pack.hpp) and the
/// GPU, so all three give the same bits.
///
/// Like sin, cos, exp and log (trig.hpp, exp_log.hpp) they use only correctly rounded operations
/// (+, -, *, /, sqrt, fma), each written so that no compiler may contract it (arith.hpp).
/// Accuracy: below 1 ulp over the whole range of float and double (tests/test_inverse_trig.cpp
/// against long double; the derivation is in docs/elementary_functions.md).
///
/// atan and atan2 are m pi/2 + tau atan(a/b) with 0 <= a <= b, m in {0, 1, 2}, tau = ±1:
/// atan2(y, x) takes a/b = |y|/|x| or |x|/|y|, whichever is at most 1 (atan(t) = pi/2 -
/// atan(1/t), and pi - atan(t) for x < 0); atan x = atan2(x, 1). Then (Muller, "Elementary
/// Functions", ch. 11, a table-based reduction):
///  - q = a/b as a double-word number (the division's remainder by an FMA);
///  - c = i/8 the nearest eighth (|q - c| <= 1/16): atan q = atan c + atan u with u = (q - c) /
///    (1 + q c), again double-word (q - c is exact by Sterbenz's lemma, 1 + q c is split);
///  - atan u = u + u^3 P(u^2), P an fpminimax polynomial of degree 4 (double) or 2 (float) for
///    relative error on |u| <= 1/16;
///  - m pi/2 + tau atan c from a table of atan(i/8) to twice the type's precision, added to tau u
///    by TwoSum, the small terms summed beside, and the one large rounding last.
/// Where both arguments of atan2 are tiny they are scaled by a power of two first, so that the
/// division's remainder is exact.
///
/// asin and acos follow fdlibm's split with our own polynomial: asin x = x + x^3 Q(x^2) for |x|
/// <= 1/2, Q an fpminimax polynomial of degree 12 (float: 5); beyond, with w = (1 - |x|)/2 exact
/// and s = sqrt(w) plus its first-order correction, asin |x| = pi/2 - 2 asin s, acos x = 2 asin s
/// (x > 0) or pi - 2 asin s (x < 0), and acos x = pi/2 - asin x in the middle. (Until 2026-11-28
/// they were atan2(x, sqrt(1 - x^2)) and its mirror: 0.51 ulp but 2.5-3.8 times slower on packs.)
#pragma once

#include <cstdint>
#include <limits>

#include "arith.hpp"
#include "config.hpp"
#include "trig.hpp"  // horner

namespace vigor::kernels {

template <class T>
struct AtanCoefficients;

template <>
struct AtanCoefficients<double> {
  static constexpr double kPiOver2Hi = 0x1.921fb54442d18p0;  // pi/2 = Hi + Lo + O(2^-107)
  static constexpr double kPiOver2Lo = 0x1.1a62633145c07p-54;
  static constexpr double kRoundingShift = 0x1.8p52;  // x + it - it rounds x to an integer
  // atan2 with both arguments below kTinyLimit scales them by kTinyScale (exact), so that the
  // division's remainder cannot underflow where it matters.
  static constexpr double kTinyLimit = 0x1p-900;
  static constexpr double kTinyScale = 0x1p1000;
  // Below it, atan q = q (1 - q^2/3) rounds as q does but for q^2/3 < 2^-61.6 of it.
  static constexpr double kOwnAtanLimit = 0x1p-30;
  /// (atan u - u)/u^3 as a polynomial in z = u^2 on |u| <= 1/16, relative error 2^-50.9: at most
  /// 2^-60.5 of atan u.
  template <class R>
  VIGOR_HD static VIGOR_INLINE R poly(const R& z) {
    return horner(z, -0x1.5555555555553p-2, 0x1.999999998a86ap-3, -0x1.249248ab241aap-3,
                  0x1.c719c74cf73b1p-4, -0x1.714e81d4bce8fp-4);
  }
};

template <>
struct AtanCoefficients<float> {
  static constexpr float kPiOver2Hi = 0x1.921fb6p0f;  // pi/2 = Hi + Lo + O(2^-50)
  static constexpr float kPiOver2Lo = -0x1.777a5cp-25f;
  static constexpr float kRoundingShift = 0x1.8p23f;
  static constexpr float kTinyLimit = 0x1p-80f;
  static constexpr float kTinyScale = 0x1p100f;
  static constexpr float kOwnAtanLimit = 0x1p-15f;  // q^2/3 < 2^-31.6
  /// Relative error 2^-25.
  template <class R>
  VIGOR_HD static VIGOR_INLINE R poly(const R& z) {
    return horner(z, -0x1.555556p-2f, 0x1.999e8cp-3f, -0x1.27994p-3f);
  }
};

/// (asin b - b)/b^3 as a polynomial in z = b^2 <= 1/4 (asin and acos, after fdlibm's split).
template <class T>
struct AsinCoefficients;

template <>
struct AsinCoefficients<double> {
  /// Relative error 2^-53 (fpminimax, degree 12): at most 2^-57.4 of asin b.
  template <class R>
  VIGOR_HD static VIGOR_INLINE R poly(const R& z) {
    return horner(z, 0x1.5555555555556p-3, 0x1.3333333332dcdp-4, 0x1.6db6db6e4397cp-5,
                  0x1.f1c71c14da09cp-6, 0x1.6e8bb2fe2329ap-6, 0x1.1c4d1bf9d28bap-6,
                  0x1.c9d1cecf332ddp-7, 0x1.780cd7fa32c2cp-7, 0x1.52df0d2513b5cp-7,
                  0x1.60a47d90796c8p-8, 0x1.205df5d5ae1eap-6, -0x1.f07d84dfcd2dbp-7,
                  0x1.da67301f78fdep-6);
  }
};

template <>
struct AsinCoefficients<float> {
  /// Relative error 2^-24 (degree 5).
  template <class R>
  VIGOR_HD static VIGOR_INLINE R poly(const R& z) {
    return horner(z, 0x1.555554p-3f, 0x1.3334c8p-4f, 0x1.6d4032p-5f, 0x1.ff9494p-6f, 0x1.10abf6p-6f,
                  0x1.1a258cp-5f);
  }
};

namespace atan_detail {

// atan(i/8) = hi + lo for i = 0 .. 8 (Sollya, 300 bits): the 16 high words (padded with zeros)
// and then the 16 low words, so that a SIMD pack reads each part from one or two registers
// (kernels/simd/pack.hpp). The device reads them from constant memory, like trig.hpp's bits of
// 2/pi.
#define VIGOR_ATAN_EIGHTHS_DOUBLE                                                                  \
  0.0, 0x1.fd5ba9aac2f6ep-4, 0x1.f5b75f92c80ddp-3, 0x1.6f61941e4def1p-2, 0x1.dac670561bb4fp-2,     \
      0x1.1e00babdefeb4p-1, 0x1.4978fa3269ee1p-1, 0x1.700a7c5784634p-1, 0x1.921fb54442d18p-1, 0.0, \
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0x1.cd37686760c17p-59, 0x1.8ab6e3cf7afbdp-57,            \
      -0x1.c63aae6f6e918p-56, 0x1.a2b7f222f65e2p-56, -0x1.928df287a668fp-58,                       \
      0x1.2419a87f2a458p-56, -0x1.8c34d25aadef6p-56, 0x1.1a62633145c07p-55, 0.0, 0.0, 0.0, 0.0,    \
      0.0, 0.0, 0.0
#define VIGOR_ATAN_EIGHTHS_FLOAT                                                                  \
  0.0f, 0x1.fd5baap-4f, 0x1.f5b76p-3f, 0x1.6f6194p-2f, 0x1.dac67p-2f, 0x1.1e00bap-1f,             \
      0x1.4978fap-1f, 0x1.700a7cp-1f, 0x1.921fb6p-1f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,   \
      0.0f, -0x1.54f424p-30f, -0x1.b4dfc8p-29f, 0x1.e4defp-30f, 0x1.586ed4p-28f, 0x1.7bdfd6p-26f, \
      0x1.934f7p-28f, 0x1.5e118cp-27f, -0x1.777a5cp-26f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f
inline constexpr double kAtanEighthsDouble[32] = {VIGOR_ATAN_EIGHTHS_DOUBLE};
inline constexpr float kAtanEighthsFloat[32] = {VIGOR_ATAN_EIGHTHS_FLOAT};
#if defined(__CUDACC__)
static __constant__ double kAtanEighthsDoubleDevice[32] = {VIGOR_ATAN_EIGHTHS_DOUBLE};
static __constant__ float kAtanEighthsFloatDevice[32] = {VIGOR_ATAN_EIGHTHS_FLOAT};
#endif
#undef VIGOR_ATAN_EIGHTHS_DOUBLE
#undef VIGOR_ATAN_EIGHTHS_FLOAT

/// The table for T: atan(i/8) = t[i] + t[16 + i].
VIGOR_HD VIGOR_INLINE const double* atan_eighths(double) {
#if VIGOR_DEVICE_PASS
  return kAtanEighthsDoubleDevice;
#else
  return kAtanEighthsDouble;
#endif
}
VIGOR_HD VIGOR_INLINE const float* atan_eighths(float) {
#if VIGOR_DEVICE_PASS
  return kAtanEighthsFloatDevice;
#else
  return kAtanEighthsFloat;
#endif
}

/// atan(c) = hi + lo for c = i/8, i = 0 .. 8 (packs: kernels/simd/pack.hpp).
template <class T>
VIGOR_HD VIGOR_INLINE void atan_of_eighth(T c, T& hi, T& lo) {
  const int i = static_cast<int>(c * T(8));
  hi = atan_eighths(c)[i];
  lo = atan_eighths(c)[16 + i];
}

/// m pi/2 + tau atan(a/b) for 0 <= a <= b (double-word), b > 0 finite, m in {0, 1, 2}, tau = ±1:
/// the file comment's method, for a float or double or a SIMD pack of them (every choice a
/// select, so each lane performs the scalar operations).
template <class T, class R>
VIGOR_HD VIGOR_INLINE R atan_of_ratio(const DoubleWord<R>& a, const DoubleWord<R>& b, const R& m,
                                      const R& tau) {
  using C = AtanCoefficients<T>;
  const DoubleWord<R> q = divide(a, b);
  // c = rint(8 q)/8 by the rounding shift (8 q is exact), so |q - c| <= 1/16; q slightly above 1
  // (a and b compared by their high words) rounds to c = 1. Where c >= 1/8, q lies in [c/2, 2c],
  // so q - c is exact (Sterbenz).
  const R shift(C::kRoundingShift);
  const R c = (fma(q.hi, R(T(8)), shift) - shift) * R(T(0.125));
  const R p = mul_unfused(q.hi, c);
  const DoubleWord<R> one_plus = fast_two_sum(R(T(1)), p);  // 1 + p, p <= 1
  const DoubleWord<R> den{one_plus.hi, one_plus.lo + fma(q.lo, c, fma(q.hi, c, -p))};
  const DoubleWord<R> u = divide(DoubleWord<R>{q.hi - c, q.lo}, den);
  const R z = mul_unfused(u.hi, u.hi);
  const R cubic_terms = mul_unfused(mul_unfused(z, u.hi), C::poly(z));  // atan u - u
  R atan_c_hi, atan_c_lo;
  atan_of_eighth(c, atan_c_hi, atan_c_lo);
  const DoubleWord<R> k = two_sum(m * R(C::kPiOver2Hi), tau * atan_c_hi);  // m pi/2 + tau atan c
  const R k_lo = k.lo + fma(m, R(C::kPiOver2Lo), tau * atan_c_lo);
  const DoubleWord<R> s = two_sum(k.hi, tau * u.hi);
  const R v = s.hi + (s.lo + fma(tau, u.lo + cubic_terms, k_lo));  // tau = ±1: exact product
  // Below kOwnAtanLimit atan q rounds as q does (to q^2/3 of an ulp), and q.lo may have
  // underflowed: the correctly rounded a.hi / b.hi is the result (a and b are single words:
  // atan2's arguments).
  const auto own = (m == R(T(0))) & (q.hi < R(C::kOwnAtanLimit));
  if (!any_of(own)) return v;
  return select(own, tau * (a.hi / b.hi), v);
}

/// atan2 of |y| and x, for y and x finite and not both zero, each as a double-word number;
/// x_negative: x's sign bit, lane by lane.
template <class T, class R, class M>
VIGOR_HD VIGOR_INLINE R atan2_magnitude(const DoubleWord<R>& ay, const DoubleWord<R>& x,
                                        const M& x_negative) {
  const R one(T(1));
  const DoubleWord<R> ax{abs(x.hi), select(x_negative, -x.lo, x.lo)};
  // |y| <= |x|: m pi/2 + tau atan(|y|/|x|) with (m, tau) = (0, 1), or (2, -1) for x < 0 (pi minus
  // it); else the same of |x|/|y| with (1, -1), or (1, 1) for x < 0.
  const auto swap = !(ay.hi <= ax.hi);
  const DoubleWord<R> a{select(swap, ax.hi, ay.hi), select(swap, ax.lo, ay.lo)};
  const DoubleWord<R> b{select(swap, ay.hi, ax.hi), select(swap, ay.lo, ax.lo)};
  const R m = select(swap, one, select(x_negative, R(T(2)), R(T(0))));
  const R tau = select(swap ^ x_negative, -one, one);
  return atan_of_ratio<T>(a, b, m, tau);
}

/// atan2 where an argument is infinite or NaN, or both are zero (C99 Annex F).
template <class T>
VIGOR_HD inline T atan2_special(T y, T x) {
  using C = AtanCoefficients<T>;
  if (x != x || y != y) return x + y;  // NaN
  const bool x_negative = sign_bit(x);
  T v;
  if (abs(y) == abs(x)) {  // both zero, or both infinite
    if (y == T(0)) {
      v = x_negative ? T(2) * C::kPiOver2Hi : T(0);
    } else {  // 3 pi/4 or pi/4, each rounded once
      v = x_negative ? fma(T(1.5), C::kPiOver2Hi, T(1.5) * C::kPiOver2Lo) : T(0.5) * C::kPiOver2Hi;
    }
  } else if (abs(y) > abs(x)) {  // y infinite
    v = C::kPiOver2Hi;
  } else {  // x infinite, y finite
    v = x_negative ? T(2) * C::kPiOver2Hi : T(0);
  }
  return sign_bit(y) ? -v : v;
}

/// Lanes (or the one value) where atan2's fast path does not apply: an argument infinite or
/// NaN, or both below kTinyLimit (both zero included), which atan2_of scales first.
template <class T, class R>
VIGOR_HD VIGOR_INLINE auto atan2_needs_care(const R& ay, const R& ax) {
  using C = AtanCoefficients<T>;
  const R inf(std::numeric_limits<T>::infinity()), tiny(C::kTinyLimit);
  const auto infinite_or_nan = !((ax < inf) & (ay < inf));
  return infinite_or_nan | ((ax < tiny) & (ay < tiny));
}

/// asin x and acos x of |x| <= 1 share their pieces (fdlibm's split, our own polynomial): for
/// |x| <= 1/2 the kernel asin b = b + b z Q(z) with b = x, z = x^2; beyond, b = s = sqrt(w) with
/// w = (1 - |x|)/2 exact and z = w (= s^2 exactly), since asin |x| = pi/2 - 2 asin s and acos x
/// = 2 asin s (x > 0) or pi - 2 asin s (x < 0). s is rounded; s_lo = (w - s^2)/(2s) (an FMA and a
/// division) carries the rest to first order.
template <class R>
struct AsinParts {
  R t;  // b z Q(z): asin b - b
  R s;  // sqrt(w), and s_lo its correction (zero where s = 0)
  R s_lo;
};
template <class T, class R>
VIGOR_HD VIGOR_INLINE AsinParts<R> asin_parts(const R& x, const R& a, const R& w) {
  const auto large = a > R(T(0.5));
  const R s = sqrt(w);
  const R s_lo = select(s > R(T(0)), fma(-s, s, w) / (s + s), R(T(0)));
  const R z = select(large, w, mul_unfused(x, x));
  const R b = select(large, s, x);
  return {mul_unfused(mul_unfused(b, z), AsinCoefficients<T>::poly(z)), s, s_lo};
}

/// asin and acos of |x| <= 1 (lanes beyond, and NaN, are flagged by !(|x| <= 1)). Each sum puts
/// its large parts together exactly (FastTwoSum against pi/2 or pi) and rounds once.
template <class T, class R>
VIGOR_HD VIGOR_INLINE R asin_of_unit(const R& x) {
  using C = AtanCoefficients<T>;
  const R a = abs(x);
  const R w = mul_unfused(R(T(1)) - a, R(T(0.5)));  // exact for a >= 1/2 (Sterbenz)
  const AsinParts<R> p = asin_parts<T>(x, a, w);
  // |x| > 1/2: pi/2 - 2 (s + s_lo + t), in [0.52, pi/2]; the sign of x restored.
  // The tiny terms are summed first, so that t's is the last rounding before the result's.
  const R minus_two(T(-2));
  const DoubleWord<R> h = fast_two_sum(R(C::kPiOver2Hi), minus_two * p.s);
  const R tiny = h.lo + fma(minus_two, p.s_lo, R(C::kPiOver2Lo));
  const R large = h.hi + fma(minus_two, p.t, tiny);
  return select(abs(x) > R(T(0.5)), select(sign_bit(x), -large, large), x + p.t);
}
template <class T, class R>
VIGOR_HD VIGOR_INLINE R acos_of_unit(const R& x) {
  using C = AtanCoefficients<T>;
  const R a = abs(x);
  const R w = mul_unfused(R(T(1)) - a, R(T(0.5)));
  const AsinParts<R> p = asin_parts<T>(x, a, w);
  const R two(T(2));
  // |x| <= 1/2: pi/2 - x - t, in [1.04, 2.10].
  const DoubleWord<R> m = fast_two_sum(R(C::kPiOver2Hi), -x);
  const R middle = m.hi + ((m.lo + R(C::kPiOver2Lo)) - p.t);
  // x > 1/2: 2 (s + s_lo + t), 2s the large part.
  const R right = fma(two, p.s_lo + p.t, two * p.s);
  // x < -1/2: pi - 2 (s + s_lo + t), in [2.09, pi].
  const DoubleWord<R> l = fast_two_sum(two * R(C::kPiOver2Hi), -two * p.s);
  const R left = l.hi + fma(-two, p.t, l.lo + fma(-two, p.s_lo, two * R(C::kPiOver2Lo)));
  return select(a > R(T(0.5)), select(x < R(T(0)), left, right), middle);
}

}  // namespace atan_detail

/// atan2(y, x) of floats or doubles, in [-pi, pi], with C99's special values (packs:
/// kernels/simd/pack.hpp).
template <class T>
VIGOR_HD inline T atan2_of(T y, T x) {
  using namespace atan_detail;
  using C = AtanCoefficients<T>;
  T ay = abs(y), ax = abs(x);
  if (atan2_needs_care<T>(ay, ax)) {
    if (!(ax < std::numeric_limits<T>::infinity() && ay < std::numeric_limits<T>::infinity()) ||
        (ax == T(0) && ay == T(0))) {
      return atan2_special(y, x);
    }
    ay *= C::kTinyScale;  // exact: the ratio is unchanged
    ax *= C::kTinyScale;
  }
  const T v = atan2_magnitude<T>(DoubleWord<T>{ay, T(0)}, DoubleWord<T>{ax, T(0)}, sign_bit(x));
  return sign_bit(y) ? -v : v;
}

/// atan x of a float or double.
template <class T>
VIGOR_HD VIGOR_INLINE T atan_of(T x) {
  return atan2_of(x, T(1));
}

/// asin x for |x| <= 1 (NaN beyond), by fdlibm's split (atan_detail::asin_of_unit).
template <class T>
VIGOR_HD inline T asin_of(T x) {
  if (!(abs(x) <= T(1))) return (x - x) / (x - x);  // NaN
  return atan_detail::asin_of_unit<T>(x);
}

/// acos x for |x| <= 1 (NaN beyond), likewise.
template <class T>
VIGOR_HD inline T acos_of(T x) {
  if (!(abs(x) <= T(1))) return (x - x) / (x - x);  // NaN
  return atan_detail::acos_of_unit<T>(x);
}

}  // namespace vigor::kernels
