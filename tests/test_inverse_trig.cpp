// vigor's own atan, atan2, asin and acos (kernels/core/inverse_trig.hpp): accuracy against long
// double over the whole range of float and double and in every quadrant, C99's special values,
// symmetries bit for bit, the same bits in every SIMD lane, and their Dual derivatives.
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

// The error bound the method gives (docs/elementary_functions.md): the last addition rounds once
// (0.5 ulp); everything else is carried beside it in double-word arithmetic to about 2^-58 of the
// result (the polynomial's fit, 2^-60.5, and its roundings at 2^-9.6 of the result; the table's
// and the quotients' tails to 2^-100), at most 0.07 ulp where the result's significand is near 2.
// So < 0.6 ulp; sampled maxima are 0.508. A wrong table entry, bin or quadrant shows as errors of
// thousands of ulps.
constexpr double kMaxUlps = 0.6;
// asin and acos (fdlibm's split, one polynomial): the last addition (0.5 ulp), the rounded term
// t = b z Q(z) at most 0.047 of the result with about two roundings of its own (0.1 ulp), and the
// tiny terms' sums (0.03 ulp): < 0.7 ulp; sampled maxima 0.64. A wrong branch or coefficient
// shows as errors of thousands of ulps.
constexpr double kMaxUlpsAsinAcos = 0.7;

// n arguments in [lo, hi], uniform or log-uniform (lo > 0), with random signs if `signed_`.
template <class T>
std::vector<T> sample(double lo, double hi, bool logarithmic, bool signed_, int n,
                      std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) {
    const double t = u(g);
    double a = logarithmic ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo)))
                           : lo + t * (hi - lo);
    if (signed_ && u(g) < 0.5) a = -a;
    v = static_cast<T>(a);
  }
  return x;
}

// The largest error of f over `x` against the long-double `ref`, below `bound`.
template <class T, class F, class Ref>
void expect_accurate(const char* name, const std::vector<T>& x, F f, Ref ref,
                     double bound = kMaxUlps) {
  double worst = 0;
  T at = 0;
  for (T v : x) {
    const double e = ulps(f(v), ref(static_cast<long double>(v)));
    if (e > worst) worst = e, at = v;
  }
  EXPECT_LT(worst, bound) << name << " at " << std::hexfloat << at;
}

template <class T>
void expect_atan_accurate(double lo, double hi, bool logarithmic, int n) {
  expect_accurate(
      "atan", sample<T>(lo, hi, logarithmic, true, n, 5), [](T v) { return vk::atan(v); },
      [](long double v) { return atanl(v); });
}

// asin and acos on the same arguments.
template <class T>
void expect_asin_acos_accurate(const std::vector<T>& x) {
  expect_accurate(
      "asin", x, [](T v) { return vk::asin(v); }, [](long double v) { return asinl(v); },
      kMaxUlpsAsinAcos);
  expect_accurate(
      "acos", x, [](T v) { return vk::acos(v); }, [](long double v) { return acosl(v); },
      kMaxUlpsAsinAcos);
}

// 1 - d and d - 1 for d log-uniform in [lo, hi]: arguments near +1 and -1.
template <class T>
std::vector<T> near_one(double lo, double hi, int n) {
  std::vector<T> x = sample<T>(lo, hi, true, false, n, 17);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i % 2 ? T(-1) : T(1)) * (T(1) - x[i]);
  return x;
}

// atan2 over pairs whose exponents differ by up to `spread` binades, in all four quadrants.
template <class T>
void expect_atan2_accurate(int spread, int n) {
  std::mt19937_64 g(23);
  std::uniform_real_distribution<double> u(-1, 1);
  double worst = 0;
  T wy = 0, wx = 0;
  for (int i = 0; i < n; ++i) {
    const T y = static_cast<T>(u(g) * std::exp2(std::floor(u(g) * spread)));
    const T x = static_cast<T>(u(g) * std::exp2(std::floor(u(g) * spread)));
    const double e = ulps(vk::atan2(y, x), atan2l(static_cast<long double>(y), x));
    if (e > worst) worst = e, wy = y, wx = x;
  }
  EXPECT_LT(worst, kMaxUlps) << "atan2 at " << std::hexfloat << wy << ", " << wx;
}

}  // namespace

TEST(InverseTrig, DoubleAtanWithinOneUlpOverTheWholeRange) {
  expect_atan_accurate<double>(0, 1, false, 300000);  // every bin of eighths
  expect_atan_accurate<double>(1, 20, false, 200000);
  expect_atan_accurate<double>(1e-300, 1e300, true, 300000);
  expect_atan_accurate<double>(4.9e-324, 2.2e-308, true, 20000);  // subnormal
}

TEST(InverseTrig, FloatAtanWithinOneUlpOverTheWholeRange) {
  expect_atan_accurate<float>(0, 1, false, 300000);
  expect_atan_accurate<float>(1e-38, 3e38, true, 300000);
  expect_atan_accurate<float>(1.4e-45, 1.1e-38, true, 20000);
}

TEST(InverseTrig, AsinAcosWithinOneUlpOverTheWholeRange) {
  expect_asin_acos_accurate(sample<double>(0, 1, false, true, 300000, 3));
  expect_asin_acos_accurate(sample<double>(1e-300, 1, true, true, 100000, 7));
  expect_asin_acos_accurate(near_one<double>(1e-16, 0.1, 100000));  // w = sqrt(1 - x^2) small
  expect_asin_acos_accurate(sample<float>(0, 1, false, true, 300000, 3));
  expect_asin_acos_accurate(sample<float>(1e-40, 1, true, true, 100000, 7));
  expect_asin_acos_accurate(near_one<float>(6e-8, 0.1, 100000));
}

TEST(InverseTrig, Atan2WithinOneUlpInEveryQuadrant) {
  expect_atan2_accurate<double>(8, 300000);
  expect_atan2_accurate<double>(1000, 300000);  // tiny, huge and subnormal ratios and arguments
  expect_atan2_accurate<float>(8, 300000);
  expect_atan2_accurate<float>(120, 300000);
}

TEST(InverseTrig, WorstFoundArguments) {
  // The worst cases the samples found (docs/elementary_functions.md), and the arguments where
  // the first version's tails underflowed (a ratio near the subnormal range, float arguments
  // just above it).
  EXPECT_LT(ulps(vk::asin(-0x1.e82cb6f15b44p-5), asinl(-0x1.e82cb6f15b44p-5L)), kMaxUlpsAsinAcos);
  EXPECT_LT(ulps(vk::asin(0x1.035a22f60e6a4p-1), asinl(0x1.035a22f60e6a4p-1L)), kMaxUlpsAsinAcos);
  EXPECT_LT(ulps(vk::acos(0x1.2054a806f71a6p-1), acosl(0x1.2054a806f71a6p-1L)), kMaxUlpsAsinAcos);
  EXPECT_LT(ulps(vk::atan(0x1.e93a4b7f071ep-5), atanl(0x1.e93a4b7f071ep-5L)), kMaxUlps);
  EXPECT_LT(ulps(vk::atan2(-0x1.786a36f38558ap-979, 0x1.3c1213c640d6p+42),
                 atan2l(-0x1.786a36f38558ap-979L, 0x1.3c1213c640d6p+42L)),
            kMaxUlps);
  EXPECT_LT(
      ulps(vk::atan2(-0x1.b156ep-125f, 0x1.cab43ap-75f), atan2l(-0x1.b156ep-125L, 0x1.cab43ap-75L)),
      kMaxUlps);
}

TEST(InverseTrig, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double pi = 0x1.921fb54442d18p1, half_pi = 0x1.921fb54442d18p0;  // correctly rounded
  const double quarter_pi = 0x1.921fb54442d18p-1, three_quarters_pi = 0x1.2d97c7f3321d2p1;
  // C99 Annex F, F.9.1.4: signed zeros pick the half plane, infinities the octant.
  EXPECT_EQ(bits(vk::atan2(0.0, 1.0)), bits(0.0));
  EXPECT_EQ(bits(vk::atan2(-0.0, 1.0)), bits(-0.0));
  EXPECT_EQ(bits(vk::atan2(0.0, 0.0)), bits(0.0));
  EXPECT_EQ(bits(vk::atan2(-0.0, 0.0)), bits(-0.0));
  EXPECT_EQ(vk::atan2(0.0, -0.0), pi);
  EXPECT_EQ(vk::atan2(-0.0, -0.0), -pi);
  EXPECT_EQ(vk::atan2(0.0, -1.0), pi);
  EXPECT_EQ(vk::atan2(-0.0, -1.0), -pi);
  EXPECT_EQ(vk::atan2(1.0, 0.0), half_pi);
  EXPECT_EQ(vk::atan2(-1.0, -0.0), -half_pi);
  EXPECT_EQ(vk::atan2(inf, inf), quarter_pi);
  EXPECT_EQ(vk::atan2(-inf, -inf), -three_quarters_pi);
  EXPECT_EQ(vk::atan2(inf, 1.0), half_pi);
  EXPECT_EQ(vk::atan2(-1.0, inf), -0.0);
  EXPECT_TRUE(std::signbit(vk::atan2(-1.0, inf)));
  EXPECT_EQ(vk::atan2(1.0, -inf), pi);
  EXPECT_TRUE(std::isnan(vk::atan2(nan, 1.0)));
  EXPECT_TRUE(std::isnan(vk::atan2(1.0, nan)));
  EXPECT_EQ(vk::atan2(1.0, 1.0), quarter_pi);
  EXPECT_EQ(vk::atan2(1.0, -1.0), three_quarters_pi);
  EXPECT_EQ(vk::atan2(0x1p-1074, 0x1p-1074), quarter_pi);  // scaled before dividing
  EXPECT_EQ(vk::atan2(0x1p-1074, 1.0), 0x1p-1074);
  EXPECT_EQ(vk::atan2(1e308, 1e-308), half_pi);
  EXPECT_EQ(vk::atan2(1.0f, -1.0f), static_cast<float>(3 * M_PIl / 4));
  EXPECT_EQ(vk::atan2(-std::numeric_limits<float>::infinity(), -1.0f),
            static_cast<float>(-M_PIl / 2));

  EXPECT_EQ(vk::atan(inf), half_pi);
  EXPECT_EQ(vk::atan(-inf), -half_pi);
  EXPECT_EQ(bits(vk::atan(-0.0)), bits(-0.0));
  EXPECT_EQ(vk::atan(1.0), quarter_pi);
  EXPECT_EQ(vk::atan(0x1p-1074), 0x1p-1074);
  EXPECT_TRUE(std::isnan(vk::atan(nan)));
  EXPECT_EQ(vk::atan(std::numeric_limits<float>::infinity()), static_cast<float>(M_PIl / 2));

  EXPECT_EQ(vk::asin(1.0), half_pi);
  EXPECT_EQ(vk::asin(-1.0), -half_pi);
  EXPECT_EQ(bits(vk::asin(-0.0)), bits(-0.0));
  EXPECT_EQ(vk::acos(1.0), 0.0);
  EXPECT_FALSE(std::signbit(vk::acos(1.0)));
  EXPECT_EQ(vk::acos(-1.0), pi);
  EXPECT_EQ(vk::acos(0.0), half_pi);
  EXPECT_EQ(vk::acos(-0.0), half_pi);
  for (double bad : {1.0000000000000002, -1.5, inf, -inf, nan}) {
    EXPECT_TRUE(std::isnan(vk::asin(bad))) << bad;
    EXPECT_TRUE(std::isnan(vk::acos(bad))) << bad;
  }
  EXPECT_TRUE(std::isnan(vk::asin(1.0000001f)));
  EXPECT_EQ(vk::acos(-1.0f), static_cast<float>(M_PIl));
}

TEST(InverseTrig, SymmetriesBitForBit) {
  // atan, asin and atan2 in y are odd by construction (the sign is applied last), and
  // atan2(y, x) with y and x scaled by the same power of two is unchanged (same ratio).
  for (double x : sample<double>(1e-20, 1e20, true, false, 20000, 29)) {
    EXPECT_EQ(bits(vk::atan(-x)), bits(-vk::atan(x))) << x;
    EXPECT_EQ(bits(vk::atan2(-x, 0.3)), bits(-vk::atan2(x, 0.3))) << x;
    EXPECT_EQ(bits(vk::atan2(x * 0x1p-40, 0.3 * 0x1p-40)), bits(vk::atan2(x, 0.3))) << x;
  }
  for (double x : sample<double>(0, 1, false, false, 20000, 31)) {
    EXPECT_EQ(bits(vk::asin(-x)), bits(-vk::asin(x))) << x;
  }
}

namespace {

// Every lane of a pack equals the scalar function of that lane, including the lanes handed to
// the scalar function (infinite, NaN, zero and tiny arguments of atan2; |x| > 1 for asin and
// acos) beside ordinary ones, in every quadrant and octant.
template <class T, int W>
void expect_lanes_equal_scalar() {
  using P = vk::Pack<T, W>;
  std::vector<T> x = sample<T>(0, 1.2, false, true, 64 * W, 37);
  std::vector<T> y = sample<T>(1e-3, 1e3, true, true, 64 * W, 41);
  const T inf = std::numeric_limits<T>::infinity(), tiny = std::numeric_limits<T>::denorm_min();
  const T special[] = {T(0), -T(0), inf,   -inf,     std::numeric_limits<T>::quiet_NaN(),
                       tiny, T(1),  T(-1), T(1e-20), std::numeric_limits<T>::max()};
  for (std::size_t i = 0; i < std::size(special); ++i) {
    x[13 * i + 2] = special[i];
    y[17 * i + 5] = special[i];
    x[19 * i + 7] = y[19 * i + 7] = special[i];  // both special, or both tiny
  }
  for (std::size_t b = 0; b < x.size(); b += W) {
    const P px = P::load(&x[b]), py = P::load(&y[b]);
    const P at = vk::atan(py), a2 = vk::atan2(py, px), as = vk::asin(px), ac = vk::acos(px);
    for (int k = 0; k < W; ++k) {
      const std::size_t i = b + std::size_t(k);
      EXPECT_EQ(bits(at[k]), bits(vk::atan(y[i]))) << std::hexfloat << y[i];
      EXPECT_EQ(bits(a2[k]), bits(vk::atan2(y[i], x[i]))) << std::hexfloat << y[i] << ", " << x[i];
      EXPECT_EQ(bits(as[k]), bits(vk::asin(x[i]))) << std::hexfloat << x[i];
      EXPECT_EQ(bits(ac[k]), bits(vk::acos(x[i]))) << std::hexfloat << x[i];
    }
  }
}

}  // namespace

TEST(InverseTrig, PackLanesGiveTheScalarBits) {
  vigor_test::for_each_pack_shape([]<class T, int W>() { expect_lanes_equal_scalar<T, W>(); });
}

TEST(InverseTrig, DualDerivatives) {
  using D = vk::Dual<double, 1>;
  D x(0.3), y(-0.8);
  x.d[0] = 1.0;
  const D t = atan(x), s = asin(x), c = acos(x), a = atan2(y, x);  // hidden friends, by ADL
  EXPECT_EQ(t.v, vk::atan(0.3));
  EXPECT_EQ(s.v, vk::asin(0.3));
  EXPECT_EQ(c.v, vk::acos(0.3));
  EXPECT_EQ(a.v, vk::atan2(-0.8, 0.3));
  EXPECT_NEAR(t.d[0], 1 / 1.09, 1e-15);
  EXPECT_NEAR(s.d[0], 1 / std::sqrt(0.91), 1e-15);
  EXPECT_NEAR(c.d[0], -1 / std::sqrt(0.91), 1e-15);
  EXPECT_NEAR(a.d[0], 0.8 / 0.73, 1e-15);  // d/dx atan2(y, x) = -y / (x^2 + y^2)
}
