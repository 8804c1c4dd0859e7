// vigor's own pow (kernels/core/pow.hpp): accuracy against long double over the whole range of
// float and double (x near 1 with huge y, where log x must be good to 2^-68; subnormal x; results
// near overflow and subnormal), C99 Annex F's special values, negative x with integer y, and the
// same bits on the scalar path and in every SIMD lane (flagged lanes mixed in).
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

// The bound the method gives (docs/elementary_functions.md): exp's final rounding and its small
// terms (exp alone: under 0.65 ulp, 0.76 where the result is subnormal and rounds twice) plus the
// error of y log x, at most 709 times log's 2^-68 relative error: 2^-58.5, 0.03 ulp. So under
// 0.8 ulp; sampled maxima 0.61 for normal results and 0.75 for subnormal ones. A log that is only
// accurate to double precision (2^-53) gives errors of hundreds of ulps at |y log x| ~ 700, which
// is what the ranges near 1 with huge y catch.
constexpr double kMaxUlps = 0.8;

struct Pair {
  double x, y;
};

// n pairs: x uniform or log-uniform in [x_lo, x_hi]; y uniform in [y_lo, y_hi], or, with
// `per_log`, such that y log x is uniform in [y_lo, y_hi].
std::vector<Pair> pairs(double x_lo, double x_hi, bool logarithmic, double y_lo, double y_hi,
                        bool per_log, int n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Pair> v;
  while (static_cast<int>(v.size()) < n) {
    const double t = u(g);
    const double x = logarithmic ? std::exp(std::log(x_lo) + t * (std::log(x_hi) - std::log(x_lo)))
                                 : x_lo + t * (x_hi - x_lo);
    const double s = y_lo + u(g) * (y_hi - y_lo);
    if (per_log && std::log(x) == 0) continue;
    v.push_back({x, per_log ? s / std::log(x) : s});
  }
  return v;
}

// The largest error over the pairs, each rounded to T, against powl rounded to T where it
// overflows T (inf is then the right answer).
template <class T>
void expect_accurate(const char* what, const std::vector<Pair>& v) {
  double worst = 0;
  Pair at{0, 0};
  for (const Pair& p : v) {
    const T x = static_cast<T>(p.x), y = static_cast<T>(p.y);
    long double want = powl(static_cast<long double>(x), static_cast<long double>(y));
    if (std::fabs(want) > std::numeric_limits<T>::max()) want = static_cast<T>(want);
    const double e = ulps(vk::pow(x, y), want);
    if (e > worst) worst = e, at = {static_cast<double>(x), static_cast<double>(y)};
  }
  EXPECT_LT(worst, kMaxUlps) << what << " at x = " << std::hexfloat << at.x << ", y = " << at.y;
}

template <class T>
void expect_all_accurate(int n) {
  const bool dbl = sizeof(T) == 8;
  const double big = dbl ? 700 : 85, tiny = dbl ? 1e-300 : 1e-37;
  expect_accurate<T>("x in [0.5, 2], |y| <= 10", pairs(0.5, 2, false, -10, 10, false, n, 1));
  expect_accurate<T>("x in [1e-3, 1e3], |y| <= 3", pairs(1e-3, 1e3, true, -3, 3, false, n, 2));
  expect_accurate<T>("x over the range, |y log x| <= big",
                     pairs(tiny, 1 / tiny, true, -big, big, true, n, 3));
  expect_accurate<T>("x = 1 +- 1e-3, |y log x| <= big",
                     pairs(1 - 1e-3, 1 + 1e-3, false, -big, big, true, n, 4));
  if (dbl) {
    expect_accurate<T>("x = 1 +- 1e-9, |y log x| <= big",
                       pairs(1 - 1e-9, 1 + 1e-9, false, -big, big, true, n, 5));
  }
  // Results near overflow and subnormal ones (past exp's fast range: the flagged path).
  expect_accurate<T>("near overflow",
                     pairs(1e-2, 1e2, true, dbl ? 708 : 86, dbl ? 709.78 : 88.72, true, n / 4, 6));
  expect_accurate<T>("subnormal results",
                     pairs(1e-2, 1e2, true, dbl ? -744 : -103, dbl ? -709 : -88, true, n / 4, 7));
  // Subnormal x (scaled first), with y small enough that the result is finite.
  expect_accurate<T>("subnormal x", pairs(dbl ? 4.9e-324 : 1.4e-45, dbl ? 2.2e-308 : 1.1e-38, true,
                                          -0.5, 0.9, false, n / 4, 8));
}

}  // namespace

TEST(Pow, DoubleWithinOneUlpOverTheWholeRange) { expect_all_accurate<double>(100000); }

TEST(Pow, FloatWithinOneUlpOverTheWholeRange) { expect_all_accurate<float>(100000); }

TEST(Pow, NegativeBaseWithIntegerExponent) {
  // (-x)^n = (-1)^n x^n bit for bit, for integers n of either sign; non-integer y gives NaN.
  for (const Pair& p : pairs(1e-3, 1e3, true, -60, 60, false, 20000, 9)) {
    const double n = std::nearbyint(p.y);
    const double v = vk::pow(p.x, n);
    const bool odd = std::fmod(n, 2.0) != 0;
    EXPECT_EQ(bits(vk::pow(-p.x, n)), bits(odd ? -v : v)) << p.x << " " << n;
    EXPECT_LT(ulps(v, powl(static_cast<long double>(p.x), static_cast<long double>(n))), kMaxUlps);
  }
  EXPECT_TRUE(std::isnan(vk::pow(-2.0, 0.5)));
  EXPECT_TRUE(std::isnan(vk::pow(-2.0f, 1.5f)));
  EXPECT_EQ(vk::pow(-2.0, 0x1p53), std::ldexp(1.0, 0) * std::numeric_limits<double>::infinity());
  EXPECT_EQ(vk::pow(-0.5, 0x1p53 + 2), 0.0);   // even: +0
  EXPECT_EQ(vk::pow(-1.0, 0x1p52 + 1), -1.0);  // odd, above 2^52
  EXPECT_EQ(vk::pow(-1.0f, 0x1p23f + 1), -1.0f);
  EXPECT_EQ(vk::pow(-3.0, 3.0), -27.0);
  EXPECT_EQ(vk::pow(-3.0f, -2.0f), 1.0f / 9.0f);
}

TEST(Pow, ExactCasesAndC99SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  // Exact powers come out exact (the error bound is below one ulp of an exact result).
  EXPECT_EQ(vk::pow(2.0, 10.0), 1024.0);
  EXPECT_EQ(vk::pow(2.0, -1074.0), 0x1p-1074);
  EXPECT_EQ(vk::pow(2.0, 1023.0), 0x1p1023);
  EXPECT_EQ(vk::pow(4.0, 0.5), 2.0);
  EXPECT_EQ(vk::pow(10.0, 2.0), 100.0);
  EXPECT_EQ(vk::pow(9.0f, 0.5f), 3.0f);
  // C99 F.9.4.4, in its order.
  EXPECT_EQ(vk::pow(0.0, -3.0), inf);
  EXPECT_EQ(vk::pow(-0.0, -3.0), -inf);
  EXPECT_EQ(vk::pow(-0.0, -2.0), inf);
  EXPECT_EQ(vk::pow(-0.0, -0.5), inf);
  EXPECT_EQ(vk::pow(-0.0, -inf), inf);
  EXPECT_EQ(bits(vk::pow(-0.0, 3.0)), bits(-0.0));
  EXPECT_EQ(bits(vk::pow(-0.0, 2.0)), bits(0.0));
  EXPECT_EQ(bits(vk::pow(-0.0, 0.5)), bits(0.0));
  EXPECT_EQ(vk::pow(-1.0, inf), 1.0);
  EXPECT_EQ(vk::pow(-1.0, -inf), 1.0);
  EXPECT_EQ(vk::pow(1.0, nan), 1.0);
  EXPECT_EQ(vk::pow(1.0, -inf), 1.0);
  EXPECT_EQ(vk::pow(nan, 0.0), 1.0);
  EXPECT_EQ(vk::pow(-inf, -0.0), 1.0);
  EXPECT_TRUE(std::isnan(vk::pow(-1.5, 0.25)));
  EXPECT_EQ(vk::pow(0.5, -inf), inf);
  EXPECT_EQ(vk::pow(2.0, -inf), 0.0);
  EXPECT_EQ(vk::pow(-0.5, inf), 0.0);
  EXPECT_EQ(vk::pow(-2.0, inf), inf);
  EXPECT_EQ(bits(vk::pow(-inf, -3.0)), bits(-0.0));
  EXPECT_EQ(bits(vk::pow(-inf, -2.0)), bits(0.0));
  EXPECT_EQ(vk::pow(-inf, 3.0), -inf);
  EXPECT_EQ(vk::pow(-inf, 2.5), inf);
  EXPECT_EQ(bits(vk::pow(inf, -1.0)), bits(0.0));
  EXPECT_EQ(vk::pow(inf, 0.5), inf);
  EXPECT_TRUE(std::isnan(vk::pow(nan, 1.0)));
  EXPECT_TRUE(std::isnan(vk::pow(2.0, nan)));
  // Overflow and underflow.
  EXPECT_EQ(vk::pow(10.0, 309.0), inf);
  EXPECT_EQ(vk::pow(10.0, -324.0), 0.0);
  EXPECT_EQ(vk::pow(1.0000001, 1e300), inf);
  EXPECT_EQ(vk::pow(0.9999999, 1e300), 0.0);
  EXPECT_EQ(vk::pow(10.0f, 39.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(vk::pow(10.0f, -46.0f), 0.0f);
}

namespace {

// Every lane of a pack equals the scalar pow of that lane, including flagged lanes (special
// values, negative and subnormal x, results past exp's fast range) beside ordinary ones.
template <class T, int W>
void expect_lanes_equal_scalar() {
  using P = vk::Pack<T, W>;
  const bool dbl = sizeof(T) == 8;
  std::vector<T> x, y;
  for (const Pair& p : pairs(1e-3, 1e3, true, dbl ? -100 : -12, dbl ? 100 : 12, false, 64 * W, 3)) {
    x.push_back(static_cast<T>(p.x));
    y.push_back(static_cast<T>(p.y));
  }
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T special[][2] = {{T(0), T(2)},
                          {-T(0), T(-3)},
                          {inf, T(0.5)},
                          {-inf, T(3)},
                          {nan, T(0)},
                          {T(1), nan},
                          {T(-2), T(3)},
                          {T(-2), T(0.5)},
                          {std::numeric_limits<T>::denorm_min(), T(0.25)},
                          {T(2), inf},
                          {T(10), T(dbl ? 309 : 39)},
                          {T(10), T(dbl ? -320 : -40)},
                          {T(1.0001), T(dbl ? 1e7 : 8e5)}};
  for (std::size_t i = 0; i < std::size(special); ++i) {
    x[17 * i + 3] = special[i][0];
    y[17 * i + 3] = special[i][1];
  }
  for (std::size_t b = 0; b < x.size(); b += W) {
    const P v = vk::pow(P::load(&x[b]), P::load(&y[b]));
    for (int k = 0; k < W; ++k) {
      const std::size_t i = b + std::size_t(k);
      EXPECT_EQ(bits(v[k]), bits(vk::pow(x[i], y[i]))) << std::hexfloat << x[i] << " " << y[i];
    }
  }
}

}  // namespace

TEST(Pow, PackLanesGiveTheScalarBits) {
  vigor_test::for_each_pack_shape([]<class T, int W>() { expect_lanes_equal_scalar<T, W>(); });
}

TEST(Pow, DualDerivatives) {
  using D = vk::Dual<double, 1>;
  D x(0.7);
  x.d[0] = 2.0;
  const D p = pow(x, 2.5);  // hidden friend, found by ADL
  EXPECT_EQ(p.v, vk::pow(0.7, 2.5));
  EXPECT_EQ(p.d[0], 2.0 * (2.5 * vk::pow(0.7, 1.5)));
}
