// vigor's own sin, cos and tan (kernels/core/trig.hpp): accuracy against long double over the whole
// range of float and double, IEEE special values, and the same bits on the scalar path, in SIMD
// lanes (every lane, with huge arguments mixed in) and through sincos.
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

// The error bound the method gives (docs/elementary_functions.md): the final addition rounds once
// (0.5 ulp); in the sin kernel at |hi| = pi/4 the correction (0.11 of the result) adds four
// roundings and the polynomial's fit error, 0.33 ulp in all; the cos kernel adds under 0.05; the
// reduced argument's tail is exact to 2^-100 relative. So < 0.85 ulp. Sampled maxima are 0.78
// here and 0.81 in a search near |r| = pi/4 (0x1.9233af2080c85p-1 below); exhaustively 0.72 in
// float. A wrong coefficient, quadrant or reduction shows as errors of thousands of ulps.
constexpr double kMaxUlps = 0.85;

struct Range {
  double lo, hi;
  bool logarithmic;
};

// Arguments spread over a range, either sign; log-uniform ranges cover every binade.
template <class T>
std::vector<T> sample(const Range& r, int n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) {
    const double t = u(g);
    const double a = r.logarithmic
                         ? std::exp(std::log(r.lo) + t * (std::log(r.hi) - std::log(r.lo)))
                         : r.lo + t * (r.hi - r.lo);
    v = static_cast<T>((g() & 1) ? -a : a);
  }
  return x;
}

template <class T>
void expect_accurate(const Range& r, int n) {
  double worst_sin = 0, worst_cos = 0;
  T at_sin = 0, at_cos = 0;
  for (T x : sample<T>(r, n, 7)) {
    const double es = ulps(vk::sin(x), sinl(static_cast<long double>(x)));
    const double ec = ulps(vk::cos(x), cosl(static_cast<long double>(x)));
    if (es > worst_sin) worst_sin = es, at_sin = x;
    if (ec > worst_cos) worst_cos = ec, at_cos = x;
  }
  EXPECT_LT(worst_sin, kMaxUlps) << "sin at " << std::hexfloat << at_sin;
  EXPECT_LT(worst_cos, kMaxUlps) << "cos at " << std::hexfloat << at_cos;
}

}  // namespace

TEST(Trig, DoubleWithinOneUlpOverTheWholeRange) {
  expect_accurate<double>({0.0, 0.8, false}, 200000);      // no reduction
  expect_accurate<double>({0.0, 100.0, false}, 200000);    // angles of a model
  expect_accurate<double>({100.0, 0x1p30, true}, 200000);  // the fast reduction's far end
  expect_accurate<double>({0x1p30, 1e300, true}, 200000);  // Payne–Hanek
  expect_accurate<double>({1e-310, 1e-300, true}, 20000);  // subnormal and tiny
}

TEST(Trig, FloatWithinOneUlpOverTheWholeRange) {
  expect_accurate<float>({0.0, 0.8, false}, 200000);
  expect_accurate<float>({0.0, 100.0, false}, 200000);
  expect_accurate<float>({100.0, 0x1p15, true}, 200000);
  expect_accurate<float>({0x1p15, 3e38, true}, 200000);
  expect_accurate<float>({1e-44, 1e-36, true}, 20000);
}

namespace {

// tan's bound (docs/elementary_functions.md): the final rounding (0.5 ulp) of a double-word
// quotient of double-word sin r and cos r whose terms above ~2^-8 of the result are carried
// exactly; what is rounded (hi^5 Q(z), cos's z^2 C(z), lo's higher-order terms) stays below
// ~0.05 of 2^-53 relative, which counts at most double where the significand is near 2: < 0.6
// ulp. Sampled maxima: 0.537 (double and float). The first version, which rounded the sine's
// cubic term, reached 0.91 ulp at the first two arguments of TanWithinOneUlpOverTheWholeRange's
// list (found by a review's search).
constexpr double kMaxTanUlps = 0.6;

template <class T>
void expect_tan_accurate(const Range& r, int n) {
  double worst = 0;
  T at = 0;
  for (T x : sample<T>(r, n, 19)) {
    const double e = ulps(vk::tan(x), tanl(static_cast<long double>(x)));
    if (e > worst) worst = e, at = x;
  }
  EXPECT_LT(worst, kMaxTanUlps) << "tan at " << std::hexfloat << at;
}

}  // namespace

TEST(Trig, TanWithinOneUlpOverTheWholeRange) {
  expect_tan_accurate<double>({0.0, 0.8, false}, 200000);
  expect_tan_accurate<double>({0.0, 100.0, false}, 200000);  // poles: the odd quadrants
  expect_tan_accurate<double>({100.0, 1e300, true}, 200000);
  expect_tan_accurate<double>({1e-310, 1e-300, true}, 20000);
  expect_tan_accurate<float>({0.0, 100.0, false}, 200000);
  expect_tan_accurate<float>({100.0, 3e38, true}, 200000);
  expect_tan_accurate<float>({1e-44, 1e-36, true}, 20000);
  // Results just below 1 (|r| near pi/4 in an even quadrant, where the quotient needs most
  // accuracy); next to the poles, the doubles nearest to pi/2 and 3 pi/2 (|tan| ~ 1.6e16) and
  // the float nearest to pi/2; Muller's hardest reduction.
  for (double x :
       {0x1.1bd22a7490a37p+18, 0x1.3010391145d0ap+18, 0x1.bd1fde2a652eep+10, 0x1.921fb54442d18p0,
        0x1.921fb54442d19p0, 0x1.2d97c7f3321d2p2, std::ldexp(6381956970095103.0, 797)}) {
    EXPECT_LT(ulps(vk::tan(x), tanl(static_cast<long double>(x))), kMaxTanUlps) << x;
  }
  EXPECT_LT(ulps(vk::tan(0x1.921fb6p0f), tanl(0x1.921fb6p0L)), kMaxTanUlps);
  EXPECT_EQ(bits(vk::tan(-0.0)), bits(-0.0));
  EXPECT_EQ(vk::tan(1e-200), 1e-200);
  EXPECT_TRUE(std::isnan(vk::tan(std::numeric_limits<double>::infinity())));
  EXPECT_TRUE(std::isnan(vk::tan(std::nan(""))));
  for (double x : sample<double>({0.0, 1e6, false}, 20000, 21)) {  // odd, bit for bit
    EXPECT_EQ(bits(vk::tan(-x)), bits(-vk::tan(x))) << x;
  }
}

TEST(Trig, HardestDoubleReduction) {
  // 6381956970095103 * 2^797 lies within 2^-60.9 of a multiple of pi/2, the closest of any double
  // (Muller, "Elementary Functions", 3rd ed., sec. 11.3): the reduction must keep ~114 bits.
  const double x = std::ldexp(6381956970095103.0, 797);
  EXPECT_LT(ulps(vk::sin(x), sinl(static_cast<long double>(x))), kMaxUlps);
  EXPECT_LT(ulps(vk::cos(x), cosl(static_cast<long double>(x))), kMaxUlps);
}

TEST(Trig, WorstFoundAndExtremeArguments) {
  // The worst cases a search near |r| = pi/4 found (the sin kernel's largest error budget), and
  // the largest finite values, whose Payne–Hanek window reads the last words of the 2/pi table.
  for (double x : {0x1.9233af2080c85p-1, 0x1.920b3084f0743p-1, std::numeric_limits<double>::max(),
                   -std::numeric_limits<double>::max()}) {
    EXPECT_LT(ulps(vk::sin(x), sinl(static_cast<long double>(x))), kMaxUlps) << std::hexfloat << x;
    EXPECT_LT(ulps(vk::cos(x), cosl(static_cast<long double>(x))), kMaxUlps) << std::hexfloat << x;
  }
  for (float x : {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()}) {
    EXPECT_LT(ulps(vk::sin(x), sinl(static_cast<long double>(x))), kMaxUlps);
    EXPECT_LT(ulps(vk::cos(x), cosl(static_cast<long double>(x))), kMaxUlps);
  }
}

TEST(Trig, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(bits(vk::sin(-0.0)), bits(-0.0));
  EXPECT_EQ(bits(vk::sin(0.0)), bits(0.0));
  EXPECT_EQ(vk::cos(-0.0), 1.0);
  EXPECT_EQ(bits(vk::sin(-0.0f)), bits(-0.0f));
  EXPECT_TRUE(std::isnan(vk::sin(inf)));
  EXPECT_TRUE(std::isnan(vk::cos(-inf)));
  EXPECT_TRUE(std::isnan(vk::sin(std::nan(""))));
  EXPECT_TRUE(std::isnan(vk::cos(std::numeric_limits<float>::infinity())));
  // Tiny arguments: sin x = x and cos x = 1 exactly once x^2/6 is below half an ulp.
  EXPECT_EQ(vk::sin(1e-200), 1e-200);
  EXPECT_EQ(vk::cos(1e-200), 1.0);
}

TEST(Trig, OddAndEvenBitForBit) {
  std::vector<double> xs = sample<double>({0.0, 1e6, false}, 20000, 3);
  const std::vector<double> huge = sample<double>({0x1p30, 1e308, true}, 5000, 4);  // Payne–Hanek
  xs.insert(xs.end(), huge.begin(), huge.end());
  for (double x : xs) {
    EXPECT_EQ(bits(vk::sin(-x)), bits(-vk::sin(x))) << x;
    EXPECT_EQ(bits(vk::cos(-x)), bits(vk::cos(x))) << x;
  }
}

TEST(Trig, SincosGivesTheBitsOfSinAndCos) {
  for (double x : sample<double>({1e-3, 1e40, true}, 20000, 5)) {
    double s, c;
    vk::sincos(x, s, c);
    EXPECT_EQ(bits(s), bits(vk::sin(x))) << x;
    EXPECT_EQ(bits(c), bits(vk::cos(x))) << x;
  }
}

namespace {

// Every lane of a pack equals the scalar function of that lane, including lanes that take the
// Payne–Hanek path beside lanes that do not (one in five here) and the special values.
template <class T, int W>
void expect_lanes_equal_scalar() {
  using P = vk::Pack<T, W>;
  std::vector<T> x = sample<T>({1e-6, 1e4, true}, 64 * W, 11);
  const std::vector<T> far = sample<T>({1e6, 1e30, true}, 64 * W, 13);
  for (std::size_t i = 0; i < x.size(); i += 5) x[i] = far[i];
  const T special[] = {T(0), -T(0), std::numeric_limits<T>::infinity(),
                       std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min()};
  for (std::size_t i = 0; i < 5; ++i) x[7 * i + 1] = special[i];
  // Angles within round-off of k pi/2 (an inverted pendulum sits at pi): lanes the fast
  // reduction flags and hands to the scalar function.
  for (std::size_t i = 0; i < 8; ++i)
    x[11 * i + 3] = static_cast<T>((i + 1) * 1.5707963267948966192L);
  for (std::size_t b = 0; b < x.size(); b += W) {
    const P a = P::load(&x[b]);
    const P s = vk::sin(a), c = vk::cos(a), t = vk::tan(a);
    P s2, c2;
    vk::sincos(a, s2, c2);
    for (int l = 0; l < W; ++l) {
      const T v = x[b + std::size_t(l)];
      EXPECT_EQ(bits(t[l]), bits(vk::tan(v))) << std::hexfloat << v;
      EXPECT_EQ(bits(s[l]), bits(vk::sin(v))) << std::hexfloat << v;
      EXPECT_EQ(bits(c[l]), bits(vk::cos(v))) << std::hexfloat << v;
      EXPECT_EQ(bits(s2[l]), bits(vk::sin(v))) << std::hexfloat << v;
      EXPECT_EQ(bits(c2[l]), bits(vk::cos(v))) << std::hexfloat << v;
    }
  }
}

}  // namespace

TEST(Trig, PackLanesGiveTheScalarBits) {
  vigor_test::for_each_pack_shape([]<class T, int W>() { expect_lanes_equal_scalar<T, W>(); });
}

TEST(Trig, DualDerivativesAreCosAndMinusSin) {
  using D = vk::Dual<double, 1>;
  D x(0.7);
  x.d[0] = 2.0;
  const D s = sin(x), c = cos(x);  // hidden friends, found by ADL
  EXPECT_EQ(s.v, vk::sin(0.7));
  EXPECT_EQ(c.v, vk::cos(0.7));
  EXPECT_EQ(s.d[0], 2.0 * vk::cos(0.7));
  EXPECT_EQ(c.d[0], 2.0 * -vk::sin(0.7));
}

namespace {

// sin, cos and sincos of a nested dual of packs with every component of every lane equal to the
// scalar nested dual's: Dual<Dual<P, N>, N> calls the pack kernel where it has 9 components or
// more (dual.hpp, Dual::kTrigCalled) and inlines it below, and both must give the scalar bits.
template <class T, int W, int N>
void expect_nested_dual_lanes_equal_scalar() {
  using P = vk::Pack<T, W>;
  using D = vk::Dual<vk::Dual<P, N>, N>;
  using S = vk::Dual<vk::Dual<T, N>, N>;
  constexpr int kParts = (N + 1) * (N + 1);
  std::vector<T> x = sample<T>({1e-3, 1e3, true}, kParts * W, 17);
  const std::vector<T> far = sample<T>({1e6, 1e30, true}, W, 19);
  for (int l = 0; l < W; l += 3) x[std::size_t(l)] = far[std::size_t(l)];  // Payne–Hanek lanes
  // Component k of the nested dual: value k = 0, then the inner partials, then the outer ones.
  const auto part = [](auto& d, int k) -> auto& {
    auto& inner = k / (N + 1) == 0 ? d.v : d.d[k / (N + 1) - 1];
    return k % (N + 1) == 0 ? inner.v : inner.d[k % (N + 1) - 1];
  };
  D a;
  for (int k = 0; k < kParts; ++k) part(a, k) = P::load(&x[std::size_t(k * W)]);
  D s2, c2;
  sincos(a, s2, c2);
  const D s = sin(a), c = cos(a);
  for (int l = 0; l < W; ++l) {
    S b;
    for (int k = 0; k < kParts; ++k) part(b, k) = x[std::size_t(k * W + l)];
    S bs, bc;
    sincos(b, bs, bc);
    for (int k = 0; k < kParts; ++k) {
      EXPECT_EQ(bits(part(s, k)[l]), bits(part(bs, k))) << "lane " << l << " component " << k;
      EXPECT_EQ(bits(part(c, k)[l]), bits(part(bc, k))) << "lane " << l << " component " << k;
      EXPECT_EQ(bits(part(s2, k)[l]), bits(part(bs, k))) << "lane " << l << " component " << k;
      EXPECT_EQ(bits(part(c2, k)[l]), bits(part(bc, k))) << "lane " << l << " component " << k;
    }
  }
}

static_assert(!vk::Dual<vk::Dual<vk::Pack<float, 16>, 1>, 1>::kTrigCalled, "4 components: inline");
static_assert(vk::Dual<vk::Dual<vk::Pack<float, 16>, 2>, 2>::kTrigCalled, "9 components: called");

}  // namespace

TEST(Trig, NestedDualLanesGiveTheScalarBits) {
  vigor_test::for_each_pack_shape([]<class T, int W>() {
    expect_nested_dual_lanes_equal_scalar<T, W, 1>();  // 4 components: the kernel inline
    expect_nested_dual_lanes_equal_scalar<T, W, 2>();  // 9: the kernel called
  });
}
