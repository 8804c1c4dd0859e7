// vigor's own exp and log (kernels/core/exp_log.hpp): accuracy against long double over the whole
// range of float and double, overflow, underflow and the special values, and the same bits on the
// scalar path and in every SIMD lane (flagged lanes mixed in).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
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

// The error bounds the methods give (docs/elementary_functions.md). exp: the last addition rounds
// once (0.5 ulp); the rest is summed beside it at ~2^-55 relative (hi^2, the polynomial's
// 2^-58.8 fit, lo to first order), under 0.65 ulp; sampled maxima 0.75. log: the last addition
// (0.5 ulp), hfsq = f^2/2 rounded and the small terms' sum, each 2^-57 absolute, which is a
// quarter ulp where e L_hi and f cancel (x just below sqrt(1/2)): under 0.9 ulp; sampled 0.84.
// Exhaustively in float (every float, vigor-bench-elementary --exhaustive-float): exp 0.758 and
// log 0.840. A wrong coefficient, reduction or exponent shows as errors of thousands of ulps.
constexpr double kMaxUlps = 0.9;

// n arguments uniform in [lo, hi], or log-uniform in [lo, hi] with lo > 0.
template <class T>
std::vector<T> sample(double lo, double hi, bool logarithmic, int n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) {
    const double t = u(g);
    v = static_cast<T>(logarithmic ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo)))
                                   : lo + t * (hi - lo));
  }
  return x;
}

// The largest error of f over `x` against the long-double `ref`, below kMaxUlps.
template <class T, class F, class Ref>
void expect_accurate(const char* name, const std::vector<T>& x, F f, Ref ref) {
  double worst = 0;
  T at = 0;
  for (T v : x) {
    const double e = ulps(f(v), ref(static_cast<long double>(v)));
    if (e > worst) worst = e, at = v;
  }
  EXPECT_LT(worst, kMaxUlps) << name << " at " << std::hexfloat << at;
}

template <class T>
void expect_exp_accurate(double lo, double hi, int n) {
  expect_accurate(
      "exp", sample<T>(lo, hi, false, n, 7), [](T v) { return vk::exp(v); },
      [](long double v) { return expl(v); });
}

template <class T>
void expect_log_accurate(double lo, double hi, bool logarithmic, int n) {
  expect_accurate(
      "log", sample<T>(lo, hi, logarithmic, n, 9), [](T v) { return vk::log(v); },
      [](long double v) { return logl(v); });
}

}  // namespace

TEST(ExpLog, DoubleExpWithinOneUlpOverTheWholeRange) {
  expect_exp_accurate<double>(-0.35, 0.35, 200000);  // no reduction
  expect_exp_accurate<double>(-40, 40, 200000);
  expect_exp_accurate<double>(-708, 708, 200000);     // the fast path's whole range
  expect_exp_accurate<double>(708, 709.78, 20000);    // near overflow
  expect_exp_accurate<double>(-745.1, -708, 50000);   // subnormal results: one rounding
  expect_exp_accurate<double>(-1e-10, 1e-10, 20000);  // 1 + x
}

TEST(ExpLog, FloatExpWithinOneUlpOverTheWholeRange) {
  expect_exp_accurate<float>(-0.35, 0.35, 200000);
  expect_exp_accurate<float>(-86, 86, 200000);
  expect_exp_accurate<float>(86, 88.72, 20000);
  expect_exp_accurate<float>(-103.9, -86, 50000);
}

TEST(ExpLog, DoubleLogWithinOneUlpOverTheWholeRange) {
  expect_log_accurate<double>(0.5, 2, false, 200000);  // e = -1, 0, 1: the cancelling ones
  expect_log_accurate<double>(1 - 1e-6, 1 + 1e-6, false, 50000);
  expect_log_accurate<double>(1e-300, 1e300, true, 200000);
  expect_log_accurate<double>(4.9e-324, 2.2e-308, true, 50000);  // subnormal arguments
  expect_log_accurate<double>(1e300, std::numeric_limits<double>::max(), true, 20000);
}

TEST(ExpLog, FloatLogWithinOneUlpOverTheWholeRange) {
  expect_log_accurate<float>(0.5, 2, false, 200000);
  expect_log_accurate<float>(1e-37, 3e38, true, 200000);
  expect_log_accurate<float>(1.4e-45, 1.1e-38, true, 50000);
}

TEST(ExpLog, WorstFoundArguments) {
  // The worst cases the samples above found (docs/elementary_functions.md).
  const double x = 0x1.68769fbf557e9p-1;  // log, e = -1 with f near 0.41
  EXPECT_LT(ulps(vk::log(x), logl(static_cast<long double>(x))), kMaxUlps);
  const double y = -0x1.625831f865a1cp+9;  // exp, a subnormal result
  EXPECT_LT(ulps(vk::exp(y), expl(static_cast<long double>(y))), kMaxUlps);
}

TEST(ExpLog, SpecialValuesAndLimits) {
  const double inf = std::numeric_limits<double>::infinity();
  const float inff = std::numeric_limits<float>::infinity();
  EXPECT_EQ(vk::exp(0.0), 1.0);
  EXPECT_EQ(vk::exp(-0.0), 1.0);
  EXPECT_EQ(vk::exp(inf), inf);
  EXPECT_EQ(bits(vk::exp(-inf)), bits(0.0));
  EXPECT_TRUE(std::isnan(vk::exp(std::nan(""))));
  EXPECT_EQ(vk::exp(709.79), inf);         // past ln(DBL_MAX)
  EXPECT_EQ(vk::exp(-745.2), 0.0);         // past ln(2^-1075)
  EXPECT_EQ(vk::exp(-745.13), 0x1p-1074);  // the smallest subnormal
  EXPECT_LT(vk::exp(709.78), inf);
  EXPECT_EQ(vk::exp(0.0f), 1.0f);
  EXPECT_EQ(vk::exp(88.73f), inff);
  EXPECT_EQ(vk::exp(-104.0f), 0.0f);
  EXPECT_EQ(vk::exp(-103.97f), 0x1p-149f);
  EXPECT_EQ(vk::exp(1e-300), 1.0);

  EXPECT_EQ(bits(vk::log(1.0)), bits(0.0));
  EXPECT_EQ(vk::log(0.0), -inf);
  EXPECT_EQ(vk::log(-0.0), -inf);
  EXPECT_TRUE(std::isnan(vk::log(-1.0)));
  EXPECT_TRUE(std::isnan(vk::log(-inf)));
  EXPECT_TRUE(std::isnan(vk::log(std::nan(""))));
  EXPECT_EQ(vk::log(inf), inf);
  EXPECT_EQ(vk::log(2.0), 0x1.62e42fefa39efp-1);  // ln 2 correctly rounded
  EXPECT_EQ(vk::log(0x1p-1074), -0x1.74385446d71c3p+9);
  EXPECT_EQ(vk::log(1.0f), 0.0f);
  EXPECT_EQ(vk::log(0.0f), -inff);
  EXPECT_TRUE(std::isnan(vk::log(-2.0f)));
  EXPECT_EQ(vk::log(inff), inff);
}

TEST(ExpLog, LogOfExpRoundTrips) {
  // log(exp x) = x to within the two functions' errors (~2 ulp of exp's result, scaled by 1/x).
  for (double x : sample<double>(-700, 700, false, 20000, 3)) {
    EXPECT_NEAR(vk::log(vk::exp(x)), x, 4e-16 * std::max(1.0, std::fabs(x))) << x;
  }
}

namespace {

// Every lane of a pack equals the scalar function of that lane, including flagged lanes (over- and
// underflow, zero, negative, subnormal, inf and NaN) beside ordinary ones.
template <class T, int W>
void expect_lanes_equal_scalar() {
  using P = vk::Pack<T, W>;
  const T big = sizeof(T) == 8 ? T(700) : T(85);
  std::vector<T> xe = sample<T>(-big, big, false, 64 * W, 11);
  std::vector<T> xl = sample<T>(1e-30, 1e30, true, 64 * W, 13);
  const T lim = std::numeric_limits<T>::max();
  const T special[] = {T(0),
                       -T(0),
                       std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity(),
                       std::numeric_limits<T>::quiet_NaN(),
                       std::numeric_limits<T>::denorm_min(),
                       T(-1),
                       lim,
                       T(1),
                       sizeof(T) == 8 ? T(-720) : T(-95),
                       sizeof(T) == 8 ? T(709) : T(88)};
  for (std::size_t i = 0; i < std::size(special); ++i) {
    xe[13 * i + 2] = special[i];
    xl[13 * i + 5] = special[i];
  }
  for (std::size_t b = 0; b < xe.size(); b += W) {
    const P e = vk::exp(P::load(&xe[b]));
    const P l = vk::log(P::load(&xl[b]));
    for (int k = 0; k < W; ++k) {
      const std::size_t i = b + std::size_t(k);
      EXPECT_EQ(bits(e[k]), bits(vk::exp(xe[i]))) << std::hexfloat << xe[i];
      EXPECT_EQ(bits(l[k]), bits(vk::log(xl[i]))) << std::hexfloat << xl[i];
    }
  }
}

}  // namespace

TEST(ExpLog, PackLanesGiveTheScalarBits) {
  vigor_test::for_each_pack_shape([]<class T, int W>() { expect_lanes_equal_scalar<T, W>(); });
}

TEST(ExpLog, DualDerivatives) {
  using D = vk::Dual<double, 1>;
  D x(0.7);
  x.d[0] = 2.0;
  const D e = exp(x), l = log(x);  // hidden friends, found by ADL
  EXPECT_EQ(e.v, vk::exp(0.7));
  EXPECT_EQ(l.v, vk::log(0.7));
  EXPECT_EQ(e.d[0], 2.0 * vk::exp(0.7));
  EXPECT_EQ(l.d[0], 2.0 * (1.0 / 0.7));
}
