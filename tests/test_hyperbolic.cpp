// vigor's own sinh, cosh and tanh (kernels/core/hyperbolic.hpp): accuracy against long double over
// the whole range of float and double, overflow, the special values, symmetry, and the same bits on
// the scalar path and in every SIMD lane (flagged lanes mixed in).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/core/dual.hpp"
#include "kernels/core/math.hpp"
#include "kernels/simd/pack.hpp"
#include "ulp_error.hpp"

namespace vk = vigor::kernels;
using vigor_test::bits;
using vigor_test::ulps;

namespace {

// The bound the method gives (docs/elementary_functions.md): the last rounding (0.5 ulp) plus the
// absolute error of the small terms c and s, a few roundings at 0.07 2^k, which is up to 0.2 ulp
// where the result lies just above a power of two; for tanh its polynomial term's roundings, or
// F = e^-2a's error times 2F/(1 - F^2) <= 1.3: below 0.85 ulp. Sampled maxima are 0.65 (sinh),
// 0.63 (cosh) and 0.63 (tanh); the exponential branch used for sinh down to a = ln2/2 gave 0.79,
// and a wrong coefficient, threshold or scaling gives errors of thousands of ulps.
constexpr double kMaxUlps = 0.85;

template <class T>
std::vector<T> sample(double lo, double hi, int n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = static_cast<T>(u(g));
  return x;
}

template <class T, class F, class Ref>
void expect_accurate(const char* name, double lo, double hi, int n, F f, Ref ref) {
  double worst = 0;
  T at = 0;
  for (T v : sample<T>(lo, hi, n, 17)) {
    const double e = ulps(f(v), ref(static_cast<long double>(v)));
    if (e > worst) worst = e, at = v;
  }
  EXPECT_LT(worst, kMaxUlps) << name << " on [" << lo << ", " << hi << "] at " << std::hexfloat
                             << at;
}

// Every range where the method changes: the polynomial (|x| < 1/2), the exponential branch where
// 1/E matters, where it does not, beyond exp's fast range and up to overflow; both signs.
template <class T>
void expect_all_accurate(int n) {
  const bool dbl = sizeof(T) == 8;
  const double fast = dbl ? 708 : 86, huge = dbl ? 710.47 : 89.41;
  const double edges[] = {0, 1e-6, 0.25, 0.5, 1, 2, 20, fast, huge};
  for (std::size_t i = 0; i + 1 < std::size(edges); ++i) {
    for (double s : {1.0, -1.0}) {
      const double lo = s * edges[i], hi = s * edges[i + 1];
      expect_accurate<T>(
          "sinh", lo, hi, n, [](T v) { return vk::sinh(v); },
          [](long double v) { return sinhl(v); });
      expect_accurate<T>(
          "cosh", lo, hi, n, [](T v) { return vk::cosh(v); },
          [](long double v) { return coshl(v); });
      expect_accurate<T>(
          "tanh", lo, hi, n, [](T v) { return vk::tanh(v); },
          [](long double v) { return tanhl(v); });
    }
  }
}

}  // namespace

TEST(Hyperbolic, DoubleWithinOneUlpOverTheWholeRange) { expect_all_accurate<double>(40000); }

TEST(Hyperbolic, FloatWithinOneUlpOverTheWholeRange) { expect_all_accurate<float>(40000); }

TEST(Hyperbolic, AcrossThePolynomialThreshold) {
  // The two branches of sinh and tanh meet at 1/2: each side within the bound, and both
  // non-decreasing across it (no step from one method to the other).
  double previous_s = 0, previous_t = 0;
  for (double x = 0.5 - 2000 * 0x1p-53; x <= 0.5 + 2000 * 0x1p-53; x += 0x1p-53) {
    const double s = vk::sinh(x), t = vk::tanh(x);
    EXPECT_LT(ulps(s, sinhl(static_cast<long double>(x))), kMaxUlps) << x;
    EXPECT_LT(ulps(t, tanhl(static_cast<long double>(x))), kMaxUlps) << x;
    EXPECT_LE(previous_s, s) << x;
    EXPECT_LE(previous_t, t) << x;
    previous_s = s, previous_t = t;
  }
  float previous = 0;
  for (float x = 0.499f; x <= 0.501f; x = std::nextafter(x, 1.0f)) {
    EXPECT_LE(previous, vk::sinh(x)) << x;
    EXPECT_LT(ulps(vk::sinh(x), sinhl(static_cast<long double>(x))), kMaxUlps) << x;
    previous = vk::sinh(x);
  }
}

TEST(Hyperbolic, NonDecreasingWhereTheTrueValueIs) {
  // sinh, cosh and tanh never step back as x grows (x >= 0): every float in [1/4, 10], and every
  // double within 20000 ulps of the method's seams, (k + 1/2) ln2 where exp's reduction changes k,
  // and the branch points 1/2 and 1. (tanh as sinh/cosh stepped back thousands of times per
  // window from a = 2.4 on, where tanh changes by less than the quotient's error per ulp.)
  float previous[3] = {0, 0, 0};
  for (float x = 0.25f; x <= 10.0f; x = std::nextafter(x, 11.0f)) {
    const float v[3] = {vk::sinh(x), vk::cosh(x), vk::tanh(x)};
    for (int f = 0; f < 3; ++f) {
      ASSERT_LE(previous[f], v[f]) << "function " << f << " at " << std::hexfloat << x;
      previous[f] = v[f];
    }
  }
  std::vector<double> seams = {0.5, 1.0};
  for (int k = 0; k <= 12; ++k) seams.push_back((k + 0.5) * 0x1.62e42fefa39efp-1);
  for (double seam : seams) {
    double x = seam, before[3];
    for (int i = 0; i < 20000; ++i) x = std::nextafter(x, 0.0);
    before[0] = vk::sinh(x), before[1] = vk::cosh(x), before[2] = vk::tanh(x);
    for (int i = 0; i < 40000; ++i) {
      x = std::nextafter(x, 100.0);
      const double v[3] = {vk::sinh(x), vk::cosh(x), vk::tanh(x)};
      for (int f = 0; f < 3; ++f) {
        ASSERT_LE(before[f], v[f]) << "function " << f << " at " << std::hexfloat << x;
        before[f] = v[f];
      }
    }
  }
}

TEST(Hyperbolic, SpecialValuesAndLimits) {
  const double inf = std::numeric_limits<double>::infinity();
  const float inff = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bits(vk::sinh(0.0)), bits(0.0));
  EXPECT_EQ(bits(vk::sinh(-0.0)), bits(-0.0));
  EXPECT_EQ(bits(vk::tanh(-0.0)), bits(-0.0));
  EXPECT_EQ(vk::cosh(-0.0), 1.0);
  EXPECT_EQ(vk::sinh(inf), inf);
  EXPECT_EQ(vk::sinh(-inf), -inf);
  EXPECT_EQ(vk::cosh(-inf), inf);
  EXPECT_EQ(vk::tanh(inf), 1.0);
  EXPECT_EQ(vk::tanh(-inf), -1.0);
  EXPECT_TRUE(std::isnan(vk::sinh(std::nan(""))));
  EXPECT_TRUE(std::isnan(vk::cosh(std::nan(""))));
  EXPECT_TRUE(std::isnan(vk::tanh(std::nan(""))));
  // Overflow where the result passes DBL_MAX: ln(2 DBL_MAX) = 710.4758600739439.
  EXPECT_LT(vk::cosh(710.4758600739439), inf);
  EXPECT_EQ(vk::cosh(710.475860073944), inf);
  EXPECT_EQ(vk::sinh(-710.475860073944), -inf);
  EXPECT_EQ(vk::cosh(1e300), inf);
  // ln(2 FLT_MAX) = 89.41598629: the floats on either side.
  EXPECT_LT(vk::cosh(89.41598f), inff);
  EXPECT_EQ(vk::cosh(89.41599f), inff);
  EXPECT_EQ(vk::sinh(-89.41599f), -inff);
  // Tiny and subnormal arguments: sinh x = tanh x = x, cosh x = 1.
  for (double x : {0x1p-1074, 1e-300, 1e-20, -3e-9}) {
    EXPECT_EQ(vk::sinh(x), x);
    EXPECT_EQ(vk::tanh(x), x);
    EXPECT_EQ(vk::cosh(x), 1.0);
  }
  EXPECT_EQ(vk::sinh(0x1p-149f), 0x1p-149f);
  EXPECT_EQ(vk::tanh(1e-20f), 1e-20f);
  // tanh reaches 1 where 1 - tanh x = 2 e^-2x is below half an ulp of 1.
  EXPECT_EQ(vk::tanh(20.0), 1.0);
  EXPECT_LT(vk::tanh(18.0), 1.0);
  EXPECT_EQ(vk::tanh(9.1f), 1.0f);
}

TEST(Hyperbolic, OddAndEvenBitForBit) {
  for (double x : sample<double>(0, 720, 20000, 5)) {
    EXPECT_EQ(bits(vk::sinh(-x)), bits(-vk::sinh(x)));
    EXPECT_EQ(bits(vk::tanh(-x)), bits(-vk::tanh(x)));
    EXPECT_EQ(bits(vk::cosh(-x)), bits(vk::cosh(x)));
  }
}

TEST(Hyperbolic, IdentitiesHoldToTheFunctionsErrors) {
  // cosh^2 - sinh^2 = 1 and tanh = sinh/cosh, to a few ulps of the terms (|x| <= 4 keeps
  // cosh^2 within 2^12 of 1, so the difference's rounding stays below 2^-40).
  for (double x : sample<double>(-4, 4, 20000, 23)) {
    const double s = vk::sinh(x), c = vk::cosh(x);
    EXPECT_NEAR(c * c - s * s, 1.0, 4 * c * c * 0x1p-52) << x;
    EXPECT_NEAR(vk::tanh(x), s / c, 4 * 0x1p-52 * std::fabs(s / c)) << x;
  }
}

namespace {

// Every lane of a pack equals the scalar function of that lane, including flagged lanes (beyond
// exp's fast range, overflow, inf and NaN) and both branches beside each other.
template <class T, int W>
void expect_lanes_equal_scalar() {
  using P = vk::Pack<T, W>;
  const bool dbl = sizeof(T) == 8;
  std::vector<T> x = sample<T>(dbl ? -40 : -20, dbl ? 40 : 20, 64 * W, 11);
  std::vector<T> y = sample<T>(-1, 1, 64 * W, 12);
  const T special[] = {T(0),
                       -T(0),
                       std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity(),
                       std::numeric_limits<T>::quiet_NaN(),
                       std::numeric_limits<T>::denorm_min(),
                       T(0.5),
                       std::nextafter(T(0.5), T(0)),
                       std::numeric_limits<T>::max(),
                       dbl ? T(-709.5) : T(-87.5),
                       dbl ? T(710) : T(89),
                       dbl ? T(720) : T(95)};
  for (std::size_t i = 0; i < std::size(special); ++i) {
    x[13 * i + 2] = special[i];
    y[11 * i + 7] = special[i];
  }
  for (const std::vector<T>* v : {&x, &y}) {
    for (std::size_t b = 0; b < v->size(); b += W) {
      const P p = P::load(&(*v)[b]);
      const P s = vk::sinh(p), c = vk::cosh(p), t = vk::tanh(p);
      for (int k = 0; k < W; ++k) {
        const T a = (*v)[b + std::size_t(k)];
        EXPECT_EQ(bits(s[k]), bits(vk::sinh(a))) << std::hexfloat << a;
        EXPECT_EQ(bits(c[k]), bits(vk::cosh(a))) << std::hexfloat << a;
        EXPECT_EQ(bits(t[k]), bits(vk::tanh(a))) << std::hexfloat << a;
      }
    }
  }
}

}  // namespace

TEST(Hyperbolic, PackLanesGiveTheScalarBits) {
  vigor_test::for_each_pack_shape([]<class T, int W>() { expect_lanes_equal_scalar<T, W>(); });
}

TEST(Hyperbolic, DualDerivatives) {
  using D = vk::Dual<double, 1>;
  D x(0.7);
  x.d[0] = 2.0;
  const D s = sinh(x), c = cosh(x);  // hidden friends, found by ADL
  EXPECT_EQ(s.v, vk::sinh(0.7));
  EXPECT_EQ(c.v, vk::cosh(0.7));
  EXPECT_EQ(s.d[0], 2.0 * vk::cosh(0.7));
  EXPECT_EQ(c.d[0], 2.0 * vk::sinh(0.7));
}
