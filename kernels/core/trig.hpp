/// @file trig.hpp
/// @brief vigor's own sin, cos, sincos and tan for float and double: one implementation for the
/// scalar CPU path, the SIMD lanes (kernels/simd/pack.hpp) and the GPU, so all three give the same
/// bits.
///
/// The C library, glibc's vector library (libmvec) and CUDA's device library each compute sin in
/// their own way and differ in the last bits, so an angle model's trajectories used to depend on
/// where they ran (a chaotic pendulum parts after a few hundred steps). These functions use only
/// correctly rounded operations — +, -, *, and fma, each written out so that no compiler may
/// contract or reorder them (arith.hpp) — and therefore round identically on every IEEE-754
/// machine. Accuracy: below 1 ulp over the whole range of float and double (tests/test_trig.cpp,
/// against long double; the derivation is in docs/elementary_functions.md).
///
/// Method, for x = (4n + q) pi/2 + r with |r| <= pi/4 (Muller, "Elementary Functions", ch. 11):
///  - Reduction. Cody–Waite with three parts of pi/2 in seven operations (reduce_fast): k =
///    rint(x 2/pi) by the 1.5·2^(p-1) rounding shift, t = x - k P1 exact (an FMA; t is a multiple
///    of ulp(P1) smaller than 1), and r = hi + lo with lo = hi's rounding error. Lanes where that
///    is not exact (x within round-off of a multiple of pi/2), |x| >= kFastLimit, inf and NaN are
///    flagged and redone: with an exact product split and TwoSum (reduce_careful), or beyond
///    kFastLimit by Payne–Hanek, the mantissa times a 192-bit window of the bits of 2/pi in
///    integer arithmetic, then the fraction times pi/2 in double-word arithmetic (reduce_huge).
///  - Kernels. sin r = r + r^3 S(r^2) and cos r = 1 - r^2/2 + r^4 C(r^2) with minimax
///    polynomials of degree 5 (double) and 3 (float) in r^2, whose coefficients were fitted for
///    relative error with Sollya's fpminimax on [0, 0.7854^2] and rounded to the type (docs). lo
///    enters to first order: sin(hi + lo) = sin hi + lo (1 - hi^2/2), cos(hi + lo) = cos hi - lo
///    hi. In cos, 1 - hi^2/2 is formed exactly (hi^2 split by an FMA, then a FastTwoSum).
///  - Quadrant, from the rounding shift's two low bits. sincos evaluates both kernels; sin or cos
///    alone evaluates the one its quadrant needs, on packs by choosing each lane's coefficients and
///    terms with selects, so every lane performs the scalar code's operations.
///  - tan = sin r / cos r (even quadrants) or -cos r / sin r (odd), both as double-word numbers
///    (their leading terms carried exactly; tan_of_reduced) divided in double-word arithmetic, so
///    the quotient rounds once.
#pragma once

#include <cstdint>

#include "arith.hpp"
#include "config.hpp"

namespace vigor::kernels {

/// A reduced argument: x = (4n + q) pi/2 + hi + lo. The quadrant q is carried as the value
/// 1.5·2^(p-1) + k, whose two lowest significand bits are k mod 4 (quadrant_bit reads them).
template <class R>
struct ReducedAngle {
  R hi, lo, q;
};

/// Bit b (1 or 2) of the quadrant of a reduced angle, for a float or double (packs: pack.hpp).
template <class T>
VIGOR_HD VIGOR_INLINE bool quadrant_bit(T q, unsigned b) {
  return (bits_of(q) & b) != 0;
}

/// c0 + z (c1 + z (c2 + ...)): Horner's rule with one rounding per step.
template <class R, class C>
VIGOR_HD VIGOR_INLINE R horner(const R&, const C& c0) {
  return R(c0);
}
template <class R, class C, class... Cs>
VIGOR_HD VIGOR_INLINE R horner(const R& z, const C& c0, const Cs&... rest) {
  return fma(z, horner(z, rest...), R(c0));
}

template <class T>
struct TrigCoefficients;

template <>
struct TrigCoefficients<double> {
  static constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
  static constexpr double kRoundingShift = 0x1.8p52;   // 1.5·2^52: x + it - it rounds x to integer
  static constexpr double kP1 = 0x1.921fb54442d18p+0;  // pi/2 = P1 + P2 + P3 + O(2^-163)
  static constexpr double kP2 = 0x1.1a62633145c07p-54;
  static constexpr double kP3 = -0x1.f1976b7ed8fbcp-110;
  static constexpr double kFastLimit = 0x1p30;  // Cody–Waite below, Payne–Hanek above
  static constexpr int kDigits = 53;
  static constexpr double kMinusSixthHi = -0x1.5555555555555p-3;  // -1/6 = Hi + Lo + O(2^-110)
  static constexpr double kMinusSixthLo = -0x1.5555555555555p-57;
  /// ((sin r - r)/r^3 + 1/6)/r^2 as a polynomial in z = r^2 on |r| <= pi/4, relative error 2^-56:
  /// tan's sine, whose -r^3/6 term is carried in double-word arithmetic.
  template <class R>
  VIGOR_HD static VIGOR_INLINE R tan_sine_poly(const R& z) {
    return horner(z, 0x1.1111111111111p-7, -0x1.a01a01a019ea5p-13, 0x1.71de3a5505acbp-19,
                  -0x1.ae645526fe40cp-26, 0x1.6122508214e38p-33, -0x1.ab8da127eee79p-41);
  }
  /// (sin r - r) / r^3 or (cos r - 1 + r^2/2) / r^4 as a polynomial in z = r^2: `pick` chooses
  /// each coefficient from the pair (sin's, cos's), per lane on packs.
  template <class R, class Pick>
  VIGOR_HD static VIGOR_INLINE R poly(const R& z, const Pick& pick) {
    return horner(z, pick(-0x1.5555555555555p-3, 0x1.5555555555555p-5),
                  pick(0x1.1111111110c7ap-7, -0x1.6c16c16c168cap-10),
                  pick(-0x1.a01a019e9f106p-13, 0x1.a01a019f3838dp-16),
                  pick(0x1.71de37af45d26p-19, -0x1.27e4fa02e37cfp-22),
                  pick(-0x1.ae601ea6f4a9p-26, 0x1.1eeb57d2a9dc3p-29),
                  pick(0x1.5e10cb85d556fp-33, -0x1.907384eb2e4a4p-37));
  }
};

template <>
struct TrigCoefficients<float> {
  static constexpr float kTwoOverPi = 0x1.45f306p-1f;
  static constexpr float kRoundingShift = 0x1.8p23f;
  static constexpr float kP1 = 0x1.921fb6p+0f;  // pi/2 = P1 + P2 + P3 + O(2^-76)
  static constexpr float kP2 = -0x1.777a5cp-25f;
  static constexpr float kP3 = -0x1.ee59dap-50f;
  static constexpr float kFastLimit = 0x1p15f;
  static constexpr int kDigits = 24;
  static constexpr float kMinusSixthHi = -0x1.555556p-3f;  // -1/6 = Hi + Lo + O(2^-52)
  static constexpr float kMinusSixthLo = 0x1.555556p-28f;
  /// Relative error 2^-24.
  template <class R>
  VIGOR_HD static VIGOR_INLINE R tan_sine_poly(const R& z) {
    return horner(z, 0x1.11111p-7f, -0x1.a0160ep-13f, 0x1.6e6b06p-19f);
  }
  template <class R, class Pick>
  VIGOR_HD static VIGOR_INLINE R poly(const R& z, const Pick& pick) {
    return horner(z, pick(-0x1.555556p-3f, 0x1.555556p-5f), pick(0x1.111198p-7f, -0x1.6c17d4p-10f),
                  pick(-0x1.a08316p-13f, 0x1.a0f5bp-16f), pick(0x1.877a0ap-19f, -0x1.58f12cp-22f));
  }
};

namespace trig_detail {

// 2/pi to 1216 bits, 64 to a word, most significant first: the largest double's reduction window
// ends at bit 1161, inside the last word. (The device reads them from constant memory, so that the
// rare Payne–Hanek path costs a GPU thread no stack.)
#define VIGOR_TWO_OVER_PI_WORDS                                                                   \
  0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull, 0xfe5163abdebbc561ull,     \
      0xb7246e3a424dd2e0ull, 0x06492eea09d1921cull, 0xfe1deb1cb129a73eull, 0xe88235f52ebb4484ull, \
      0xe99c7026b45f7e41ull, 0x3991d639835339f4ull, 0x9c845f8bbdf9283bull, 0x1ff897ffde05980full, \
      0xef2f118b5a0a6d1full, 0x6d367ecf27cb09b7ull, 0x4f463f669e5fea2dull, 0x7527bac7ebe5f17bull, \
      0x3d0739f78a5292eaull, 0x6bfb5fb11f8d5d08ull, 0x56033046fc7b6babull
inline constexpr std::uint64_t kTwoOverPiWords[19] = {VIGOR_TWO_OVER_PI_WORDS};
#if defined(__CUDACC__)
static __constant__ std::uint64_t kTwoOverPiWordsDevice[19] = {VIGOR_TWO_OVER_PI_WORDS};
#endif
#undef VIGOR_TWO_OVER_PI_WORDS

/// Bits j .. j + 63 of 2/pi = 0.b1 b2 b3 ... (bit j has weight 2^-j; bits j <= 0 are zero).
VIGOR_HD VIGOR_INLINE std::uint64_t two_over_pi_bits(int j) {
#if VIGOR_DEVICE_PASS
  const std::uint64_t* w = kTwoOverPiWordsDevice;
#else
  const std::uint64_t* w = kTwoOverPiWords;
#endif
  const int i = j - 1;  // offset of bit j from the first bit
  if (i < 0) return -i >= 64 ? 0 : w[0] >> -i;
  const int word = i / 64, shift = i % 64;
  if (shift == 0) return w[word];
  return (w[word] << shift) | (w[word + 1] >> (64 - shift));
}

/// Payne–Hanek reduction of a finite x (any magnitude), in integer arithmetic.
template <class T>
VIGOR_HD inline ReducedAngle<T> reduce_huge(T x) {
  using C = TrigCoefficients<T>;
  constexpr int kMantissaBits = C::kDigits - 1;
  constexpr int kExponentBits = sizeof(T) == 8 ? 11 : 8;
  constexpr int kBias = (1 << (kExponentBits - 1)) - 1;
  const std::uint64_t u = bits_of(x);
  const int biased = static_cast<int>(u >> kMantissaBits) & ((1 << kExponentBits) - 1);
  const bool negative = (u >> (sizeof(T) * 8 - 1)) != 0;
  if (biased == (1 << kExponentBits) - 1) return {x - x, T(0), T(0)};  // inf, NaN: NaN
  std::uint64_t m = u & ((std::uint64_t(1) << kMantissaBits) - 1);
  int e;  // |x| = m 2^e
  if (biased == 0) {
    e = 1 - kBias - kMantissaBits;
  } else {
    m |= std::uint64_t(1) << kMantissaBits;
    e = biased - kBias - kMantissaBits;
  }
  // |x| 2/pi = m 2^e sum b_j 2^-j. Bits j <= e - 2 give multiples of 4 (whole turns): skip them.
  // The 192 bits from j0 = e - 1 make P = m W with |x| 2/pi = P 2^-190 (mod 4) up to 2^-190 m.
  const int j0 = e - 1;
  const std::uint64_t w0 = two_over_pi_bits(j0), w1 = two_over_pi_bits(j0 + 64),
                      w2 = two_over_pi_bits(j0 + 128);
  std::uint64_t h0, l0, h1, l1, h2, l2;
  mul_64x64(m, w0, h0, l0);
  mul_64x64(m, w1, h1, l1);
  mul_64x64(m, w2, h2, l2);
  (void)h0;  // bits >= 192 of P: multiples of 4
  const std::uint64_t p0 = l2;
  const std::uint64_t p1 = h2 + l1;
  const std::uint64_t p2 = h1 + l0 + (p1 < h2 ? 1 : 0);
  // Integer part: bits 190, 191 of P; fraction: bits 189 .. 0, as a signed 128-bit fixed-point
  // number f_hi 2^-64 + f_lo 2^-128 in [-1/2, 1/2) (bit 189 becomes the sign: round to nearest).
  int q = static_cast<int>(p2 >> 62) + static_cast<int>((p2 >> 61) & 1);
  std::uint64_t f_hi = (p2 << 2) | (p1 >> 62);
  std::uint64_t f_lo = (p1 << 2) | (p0 >> 62);
  const bool fraction_negative = (f_hi >> 63) != 0;
  if (fraction_negative) {  // |f| = two's complement negation
    f_lo = ~f_lo + 1;
    f_hi = ~f_hi + (f_lo == 0 ? 1 : 0);
  }
  T fh(0), fl(0);
  if ((f_hi | f_lo) != 0) {
    // Normalise the leading 1 to bit 127, then split off the type's digits.
    const int lz = f_hi != 0 ? leading_zeros(f_hi) : 64 + leading_zeros(f_lo);
    if (lz >= 64) {
      f_hi = f_lo << (lz - 64);
      f_lo = 0;
    } else if (lz > 0) {
      f_hi = (f_hi << lz) | (f_lo >> (64 - lz));
      f_lo <<= lz;
    }
    constexpr int d = C::kDigits;
    const std::uint64_t head = f_hi >> (64 - d);                  // d bits, exact in T
    const std::uint64_t rest = (f_hi << d) | (f_lo >> (64 - d));  // the next 64 bits
    fh = ldexp(static_cast<T>(head), -d - lz);
    fl = ldexp(static_cast<T>(rest), -64 - d - lz);
  }
  // r = f pi/2 in double-word arithmetic: pi/2 = P1 + P2 to twice the type's precision.
  const T h = mul_unfused(fh, C::kP1);
  const T tail = fma(fh, C::kP2, fma(fl, C::kP1, fma(fh, C::kP1, -h)));
  const DoubleWord<T> r = fast_two_sum(h, tail);  // |h| >= |tail|
  T hi = r.hi, lo = r.lo;
  if (fraction_negative) {
    hi = -hi;
    lo = -lo;
  }
  if (negative) {  // -x = (-4n - q) pi/2 - r
    hi = -hi;
    lo = -lo;
    q = -q;
  }
  return {hi, lo, C::kRoundingShift + static_cast<T>(q & 3)};
}

/// Cody–Waite reduction with three parts of pi/2, robust to any cancellation, for |x| < kFastLimit.
template <class T>
VIGOR_HD inline ReducedAngle<T> reduce_careful(T x) {
  using C = TrigCoefficients<T>;
  const T ks = fma(x, C::kTwoOverPi, C::kRoundingShift);
  const T k = ks - C::kRoundingShift;
  const T t = fma(-k, C::kP1, x);  // exact
  const T ph = mul_unfused(k, C::kP2);
  const T pl = fma(k, C::kP2, -ph);         // k P2 = ph + pl exactly
  const DoubleWord<T> d = two_sum(t, -ph);  // t - ph exactly
  const T tail = fma(-k, C::kP3, d.lo - pl);
  const DoubleWord<T> r = fast_two_sum(d.hi, tail);  // |d.hi| >= |tail|
  return {r.hi, r.lo, ks};
}

/// The reduction of the lanes reduce_fast flagged: Cody–Waite with TwoSum, or Payne–Hanek for
/// |x| at or beyond kFastLimit and for inf and NaN.
template <class T>
VIGOR_HD inline ReducedAngle<T> reduce_flagged(T x) {
  if (abs(x) < TrigCoefficients<T>::kFastLimit) return reduce_careful(x);
  return reduce_huge(x);
}

/// The common case in seven operations: k = rint(x 2/pi) by the rounding shift; t = x - k P1,
/// exact (an FMA; t is a multiple of ulp(P1) below 1 in magnitude); hi = t - k P2 rounded once;
/// t - hi exact by Sterbenz's lemma while |k P2| <= |t|/4, so lo = (t - hi - k P2) - k P3 holds
/// hi's rounding error. `flagged` marks the lanes where that condition or |x| < kFastLimit
/// fails (x within ~4 |k| 2^-54 of a multiple of pi/2, huge, inf or NaN): reduce_flagged redoes
/// them, on every backend, so the choice and the bits are the same everywhere.
template <class T, class R, class M>
VIGOR_HD VIGOR_INLINE ReducedAngle<R> reduce_fast(const R& x, M& flagged) {
  using C = TrigCoefficients<T>;
  const R shift(C::kRoundingShift);
  const R ks = fma(x, R(C::kTwoOverPi), shift);
  const R k = ks - shift;
  const R t = fma(-k, R(C::kP1), x);  // exact
  const R hi = fma(-k, R(C::kP2), t);
  const R lo = fma(-k, R(C::kP3), fma(-k, R(C::kP2), t - hi));
  flagged = (!(abs(x) < R(C::kFastLimit))) | (!(abs(mul_unfused(k, R(T(4) * C::kP2))) <= abs(t)));
  return {hi, lo, ks};
}

/// A float or double reduced.
template <class T>
VIGOR_HD VIGOR_INLINE ReducedAngle<T> reduce_angle(T x) {
  bool flagged;
  const ReducedAngle<T> a = reduce_fast<T>(x, flagged);
  return flagged ? reduce_flagged(x) : a;
}

/// The polynomial's coefficients: sin's, cos's, or chosen lane by lane by a mask.
struct PickSin {
  template <class T>
  VIGOR_HD VIGOR_INLINE T operator()(T s, T) const {
    return s;
  }
};
struct PickCos {
  template <class T>
  VIGOR_HD VIGOR_INLINE T operator()(T, T c) const {
    return c;
  }
};
template <class R, class M>
struct PickByMask {
  M use_cos;
  template <class T>
  VIGOR_HD VIGOR_INLINE R operator()(T s, T c) const {
    return select(use_cos, R(c), R(s));
  }
};

/// sin(hi + lo) = hi + (v S(z) + lo (1 - z/2)) with z = hi^2, v = hi^3.
template <class R>
struct SinTerms {
  R base, scale, tail;
  VIGOR_HD VIGOR_INLINE SinTerms(const R& hi, const R& lo, const R& z) : base(hi) {
    scale = mul_unfused(z, hi);
    tail = mul_unfused(lo, fma(R(-0.5), z, R(1)));
  }
};

/// cos(hi + lo) = w + (z^2 C(z) + (e - zl/2 - lo hi)) with hi^2 = z + zl and 1 - z/2 = w + e,
/// both exactly.
template <class R>
struct CosTerms {
  R base, scale, tail;
  VIGOR_HD VIGOR_INLINE CosTerms(const R& hi, const R& lo, const R& z) {
    const R zl = fma(hi, hi, -z);
    const R hz = R(0.5) * z;
    const DoubleWord<R> w = fast_two_sum(R(1), -hz);  // 1 - z/2 exactly
    base = w.hi;
    tail = fma(-lo, hi, fma(R(-0.5), zl, w.lo));
    scale = mul_unfused(z, z);
  }
};

/// base + (scale P(z) + tail): the one rounding of the final sum, where the error is 0.5 ulp.
template <class T, class R, class Terms, class Pick>
VIGOR_HD VIGOR_INLINE R finish(const Terms& t, const R& z, const Pick& pick) {
  return t.base + fma(t.scale, TrigCoefficients<T>::poly(z, pick), t.tail);
}

template <class T, class R>
VIGOR_HD VIGOR_INLINE R sin_kernel(const R& hi, const R& lo) {
  const R z = mul_unfused(hi, hi);
  return finish<T>(SinTerms<R>(hi, lo, z), z, PickSin());
}

template <class T, class R>
VIGOR_HD VIGOR_INLINE R cos_kernel(const R& hi, const R& lo) {
  const R z = mul_unfused(hi, hi);
  return finish<T>(CosTerms<R>(hi, lo, z), z, PickCos());
}

/// sin_kernel where use_cos is false, cos_kernel where it is true, lane by lane, with one
/// polynomial: the same operations on the same values as the kernel each lane needs, so the same
/// bits.
template <class T, class R, class M>
VIGOR_HD VIGOR_INLINE R selected_kernel(const R& hi, const R& lo, const M& use_cos) {
  const R z = mul_unfused(hi, hi);
  const SinTerms<R> s(hi, lo, z);
  const CosTerms<R> c(hi, lo, z);
  struct Terms {
    R base, scale, tail;
  } t{select(use_cos, c.base, s.base), select(use_cos, c.scale, s.scale),
      select(use_cos, c.tail, s.tail)};
  return finish<T>(t, z, PickByMask<R, M>{use_cos});
}

/// sin and cos of the reduced angle, placed by quadrant: sin x = (s, c, -s, -c)[q] and
/// cos x = (c, -s, -c, s)[q].
template <class T, class R>
VIGOR_HD VIGOR_INLINE void place_in_quadrant(const ReducedAngle<R>& a, R& sin_x, R& cos_x) {
  const R s = sin_kernel<T>(a.hi, a.lo);
  const R c = cos_kernel<T>(a.hi, a.lo);
  const auto odd = quadrant_bit(a.q, 1);
  const auto upper = quadrant_bit(a.q, 2);
  const R sin_abs = select(odd, c, s);
  const R cos_abs = select(odd, s, c);
  sin_x = select(upper, -sin_abs, sin_abs);
  cos_x = select(odd ^ upper, -cos_abs, cos_abs);
}

/// sin x alone from its reduced angle: the one kernel its quadrant needs.
template <class T, class R>
VIGOR_HD VIGOR_INLINE R sin_of_reduced(const ReducedAngle<R>& a) {
  const R v = selected_kernel<T>(a.hi, a.lo, quadrant_bit(a.q, 1));
  return select(quadrant_bit(a.q, 2), -v, v);
}

template <class T, class R>
VIGOR_HD VIGOR_INLINE R cos_of_reduced(const ReducedAngle<R>& a) {
  const auto odd = quadrant_bit(a.q, 1);
  const R v = selected_kernel<T>(a.hi, a.lo, !odd);
  return select(odd ^ quadrant_bit(a.q, 2), -v, v);
}

/// tan of the reduced angle: sin r and cos r each as a double-word number, then sin r / cos r,
/// or -cos r / sin r in the odd quadrants, in double-word arithmetic with one final rounding.
/// Where the result is near 1 its significand is near 2, so the quotient must be good to well
/// below half an ulp: every term above ~2^-8 of the result is carried exactly.
///  - sin r = hi - hi^3/6 + hi^5 Q(z) + lo (1 - z/2): hi^3 split into two words (z's error zl,
///    the product's by an FMA), times -1/6 in two words, its leading product split by an FMA;
///    hi^5 Q(z) is at most 2^-8 of the result, so Q's rounding does not count.
///  - cos r = (1 - z/2) + z^2 C(z) + tail as in cos_kernel, with z^2 = hi^4 to two words too,
///    and lo's term to third order in hi.
template <class T, class R>
VIGOR_HD VIGOR_INLINE R tan_of_reduced(const ReducedAngle<R>& a) {
  using C = TrigCoefficients<T>;
  const R z = mul_unfused(a.hi, a.hi);
  const R zl = fma(a.hi, a.hi, -z);  // hi^2 = z + zl exactly
  const R h3 = mul_unfused(z, a.hi);
  const R h3_lo = fma(zl, a.hi, fma(z, a.hi, -h3));  // hi^3 = h3 + h3_lo to ~2^-104
  const R sixth = mul_unfused(h3, R(C::kMinusSixthHi));
  const R sixth_lo =
      fma(h3, R(C::kMinusSixthHi), -sixth) +
      fma(h3, R(C::kMinusSixthLo), mul_unfused(h3_lo, R(C::kMinusSixthHi)));  // -hi^3/6 - sixth
  const SinTerms<R> st(a.hi, a.lo, z);
  const R fifth = mul_unfused(mul_unfused(h3, z), C::tan_sine_poly(z));  // hi^5 Q(z)
  const DoubleWord<R> s0 = fast_two_sum(a.hi, sixth);
  const DoubleWord<R> s = fast_two_sum(s0.hi, s0.lo + (sixth_lo + (fifth + st.tail)));
  const CosTerms<R> ct(a.hi, a.lo, z);
  const R z2_lo = fma(R(T(2)) * z, zl, fma(z, z, -ct.scale));  // hi^4 = scale + z2_lo
  const R pc = C::poly(z, PickCos());
  // cos's tail has lo's term to first order in hi (-lo hi); -lo sin hi needs -lo (hi - hi^3/6).
  const R c_tail = fma(-a.lo, sixth, ct.tail);
  const DoubleWord<R> c = fast_two_sum(ct.base, fma(ct.scale, pc, fma(z2_lo, pc, c_tail)));
  const auto odd = quadrant_bit(a.q, 1);
  const DoubleWord<R> num{select(odd, -c.hi, s.hi), select(odd, -c.lo, s.lo)};
  const DoubleWord<R> den{select(odd, s.hi, c.hi), select(odd, s.lo, c.lo)};
  const DoubleWord<R> t = divide(num, den);
  return t.hi + t.lo;
}

}  // namespace trig_detail

/// sin x and cos x of a float or double together, for little more than the cost of one.
/// sin(±0) = ±0 as IEEE requires. (SIMD packs: kernels/simd/pack.hpp.)
template <class T>
VIGOR_HD VIGOR_INLINE void sincos_of(T x, T& sin_x, T& cos_x) {
  trig_detail::place_in_quadrant<T>(trig_detail::reduce_angle(x), sin_x, cos_x);
  sin_x = select(x == T(0), x, sin_x);
}

/// sin x and cos x of a float or double alone (the packs' are in kernels/simd/pack.hpp).
template <class T>
VIGOR_HD VIGOR_INLINE T sin_of(T x) {
  const T v = trig_detail::sin_of_reduced<T>(trig_detail::reduce_angle(x));
  return select(x == T(0), x, v);
}
template <class T>
VIGOR_HD VIGOR_INLINE T cos_of(T x) {
  return trig_detail::cos_of_reduced<T>(trig_detail::reduce_angle(x));
}

/// tan x of a float or double (the packs' is in kernels/simd/pack.hpp).
template <class T>
VIGOR_HD VIGOR_INLINE T tan_of(T x) {
  const T v = trig_detail::tan_of_reduced<T>(trig_detail::reduce_angle(x));
  return select(x == T(0), x, v);
}

}  // namespace vigor::kernels
