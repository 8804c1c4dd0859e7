// Forward-mode dual numbers: every operator and math function against analytic derivatives,
// second derivatives from nested duals, and the float instantiation.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/core/dual.hpp"

namespace vigor::kernels {
namespace {

using D2 = Dual<double, 2>;
using DD = Dual<D2, 2>;

// A dual partial is one or two roundings of f'(x) * dx; the reference f' comes from a different
// formula (1/cos^2 against 1 + tan^2, ...) with its own few roundings, and libm adds ~1 ulp. That
// is < 10 ulps in all; 1e-14 (45 ulps) leaves margin, and a wrong derivative is off at O(1).
constexpr double kRel = 1e-14;

// |got - want| <= rel * scale, with scale the size of what was summed (defaults to |want|).
void ExpectClose(double got, double want, double rel, double scale = -1.0) {
  if (scale < 0.0) scale = std::abs(want);
  EXPECT_NEAR(got, want, rel * scale) << "got " << got << ", want " << want;
}

// A dual with value x and partials (1, -0.5): f(u) must carry f'(x) times each of them.
D2 Seed(double x) {
  D2 u(x);
  u.d[0] = 1.0;
  u.d[1] = -0.5;
  return u;
}

struct UnaryCase {
  std::string name;
  std::function<D2(const D2&)> dual_fn;
  std::function<double(double)> fn;
  std::function<double(double)> derivative;  // written independently of dual.hpp's formula
  std::vector<double> points;
};

TEST(Dual, EveryUnaryFunctionMatchesItsAnalyticDerivative) {
  const std::vector<UnaryCase> cases = {
      {"sqrt",
       [](const D2& u) { return sqrt(u); },
       [](double x) { return std::sqrt(x); },
       [](double x) { return 1.0 / (2.0 * std::sqrt(x)); },
       {0.01, 0.7, 2.0, 123.0}},
      {"cbrt",
       [](const D2& u) { return cbrt(u); },
       [](double x) { return std::cbrt(x); },
       [](double x) { return 1.0 / (3.0 * std::cbrt(x) * std::cbrt(x)); },
       {-8.0, -0.3, 0.5, 27.0}},
      {"sin",
       [](const D2& u) { return sin(u); },
       [](double x) { return std::sin(x); },
       [](double x) { return std::cos(x); },
       {-2.0, 0.3, 1.0, 4.0}},
      {"cos",
       [](const D2& u) { return cos(u); },
       [](double x) { return std::cos(x); },
       [](double x) { return -std::sin(x); },
       {-2.0, 0.3, 1.0, 4.0}},
      {"tan",
       [](const D2& u) { return tan(u); },
       [](double x) { return std::tan(x); },
       [](double x) { return 1.0 / (std::cos(x) * std::cos(x)); },
       {-1.2, 0.3, 1.0, 2.5}},
      {"asin",
       [](const D2& u) { return asin(u); },
       [](double x) { return std::asin(x); },
       [](double x) { return 1.0 / std::sqrt((1.0 - x) * (1.0 + x)); },
       {-0.9, -0.2, 0.4, 0.8}},
      {"acos",
       [](const D2& u) { return acos(u); },
       [](double x) { return std::acos(x); },
       [](double x) { return -1.0 / std::sqrt((1.0 - x) * (1.0 + x)); },
       {-0.9, -0.2, 0.4, 0.8}},
      {"atan",
       [](const D2& u) { return atan(u); },
       [](double x) { return std::atan(x); },
       [](double x) { return 1.0 / (1.0 + x * x); },
       {-3.0, -0.2, 0.4, 10.0}},
      {"sinh",
       [](const D2& u) { return sinh(u); },
       [](double x) { return std::sinh(x); },
       [](double x) { return std::cosh(x); },
       {-2.0, 0.1, 1.5}},
      {"cosh",
       [](const D2& u) { return cosh(u); },
       [](double x) { return std::cosh(x); },
       [](double x) { return std::sinh(x); },
       {-2.0, 0.1, 1.5}},
      {"tanh",
       [](const D2& u) { return tanh(u); },
       [](double x) { return std::tanh(x); },
       [](double x) { return 1.0 / (std::cosh(x) * std::cosh(x)); },
       {-2.0, 0.1, 1.5}},
      {"exp",
       [](const D2& u) { return exp(u); },
       [](double x) { return std::exp(x); },
       [](double x) { return std::exp(x); },
       {-3.0, 0.0, 0.5, 5.0}},
      {"log",
       [](const D2& u) { return log(u); },
       [](double x) { return std::log(x); },
       [](double x) { return 1.0 / x; },
       {0.01, 0.9, 3.0, 1e5}},
      {"abs",
       [](const D2& u) { return abs(u); },
       [](double x) { return std::abs(x); },
       [](double x) { return x < 0.0 ? -1.0 : 1.0; },
       {-2.5, -0.1, 0.1, 3.0}},
      {"pow(u, 2.5)",
       [](const D2& u) { return pow(u, 2.5); },
       [](double x) { return std::pow(x, 2.5); },
       [](double x) { return 2.5 * x * std::sqrt(x); },
       {0.3, 1.0, 4.0}},
      {"pow(u, -1.5)",
       [](const D2& u) { return pow(u, -1.5); },
       [](double x) { return std::pow(x, -1.5); },
       [](double x) { return -1.5 / (x * x * std::sqrt(x)); },
       {0.3, 1.0, 4.0}},
      // An integral exponent is defined for negative bases too.
      {"pow(u, 3.0)",
       [](const D2& u) { return pow(u, 3.0); },
       [](double x) { return x * x * x; },
       [](double x) { return 3.0 * x * x; },
       {-2.0, -0.5, 1.5}},
  };
  for (const UnaryCase& c : cases) {
    for (double x : c.points) {
      SCOPED_TRACE(c.name + " at " + std::to_string(x));
      const D2 r = c.dual_fn(Seed(x));
      ExpectClose(r.v, c.fn(x), kRel);
      const double df = c.derivative(x);
      ExpectClose(r.d[0], df, kRel);
      ExpectClose(r.d[1], -0.5 * df, kRel);
    }
  }
}

TEST(Dual, ArithmeticBetweenDuals) {
  const double x0 = 1.3, y0 = -0.7;
  const D2 x = D2::variable(x0, 0), y = D2::variable(y0, 1);

  const D2 s = x + y, d = x - y, p = x * y, q = x / y;
  EXPECT_EQ(s.v, x0 + y0);
  EXPECT_EQ(s.d[0], 1.0);
  EXPECT_EQ(s.d[1], 1.0);
  EXPECT_EQ(d.v, x0 - y0);
  EXPECT_EQ(d.d[0], 1.0);
  EXPECT_EQ(d.d[1], -1.0);
  EXPECT_EQ(p.v, x0 * y0);
  EXPECT_EQ(p.d[0], y0);
  EXPECT_EQ(p.d[1], x0);
  ExpectClose(q.v, x0 / y0, kRel);
  ExpectClose(q.d[0], 1.0 / y0, kRel);
  ExpectClose(q.d[1], -x0 / (y0 * y0), kRel);

  const D2 n = -x;
  EXPECT_EQ(n.v, -x0);
  EXPECT_EQ(n.d[0], -1.0);
  EXPECT_EQ(n.d[1], 0.0);
  const D2 u = +y;
  EXPECT_EQ(u.v, y0);
  EXPECT_EQ(u.d[1], 1.0);

  // The compound forms, including a dual combined with itself (the argument aliasing *this).
  D2 a = x;
  const D2& self = a;
  a += y;
  EXPECT_EQ(a.d[0], 1.0);
  EXPECT_EQ(a.d[1], 1.0);
  a = x;
  a -= y;
  EXPECT_EQ(a.d[1], -1.0);
  a = x;
  a *= self;  // x^2
  EXPECT_EQ(a.v, x0 * x0);
  EXPECT_EQ(a.d[0], 2.0 * x0);
  EXPECT_EQ(a.d[1], 0.0);
  a = x;
  a /= self;  // 1, with zero derivative
  EXPECT_EQ(a.v, 1.0);
  EXPECT_EQ(a.d[0], 0.0);
  a = x;
  a -= self;
  EXPECT_EQ(a.v, 0.0);
  EXPECT_EQ(a.d[0], 0.0);
}

TEST(Dual, ArithmeticWithARealOnEitherSide) {
  const double x0 = 1.3, c = 2.5;
  const D2 x = D2::variable(x0, 0);
  struct Case {
    const char* name;
    D2 r;
    double value, derivative;
  };
  const Case cases[] = {
      {"x + c", x + c, x0 + c, 1.0},
      {"c + x", c + x, c + x0, 1.0},
      {"x - c", x - c, x0 - c, 1.0},
      {"c - x", c - x, c - x0, -1.0},
      {"x * c", x * c, x0 * c, c},
      {"c * x", c * x, c * x0, c},
      {"x / c", x / c, x0 / c, 1.0 / c},
      {"c / x", c / x, c / x0, -c / (x0 * x0)},
      // An int converts to the component type, never to a wider one.
      {"2 * x", 2 * x, 2.0 * x0, 2.0},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    ExpectClose(k.r.v, k.value, kRel);
    ExpectClose(k.r.d[0], k.derivative, kRel);
    EXPECT_EQ(k.r.d[1], 0.0);
  }

  D2 a = x;
  a += c;
  EXPECT_EQ(a.v, x0 + c);
  EXPECT_EQ(a.d[0], 1.0);
  a = x;
  a -= c;
  EXPECT_EQ(a.v, x0 - c);
  EXPECT_EQ(a.d[0], 1.0);
  a = x;
  a *= c;
  EXPECT_EQ(a.d[0], c);
  a = x;
  a /= c;
  ExpectClose(a.v, x0 / c, kRel);
  ExpectClose(a.d[0], 1.0 / c, kRel);
}

TEST(Dual, FmaRoundsOnceAndDifferentiatesEachFactor) {
  // The steps' kicks and drifts are fused multiply-adds (kernels/core/compensated.hpp); on a dual
  // state the value must be the plain fma's, bit for bit, or a tangent-map run would leave the
  // plain run's trajectory. The operands are chosen so that a * b + c rounded twice differs from
  // the fused result: a * b = 1 + 2^-30 + 2^-60 exactly, whose 2^-60 a separate product drops.
  const double a0 = 1.0 + 0x1p-30, b0 = 1.0 + 0x1p-30, c0 = -1.0;
  ASSERT_NE(std::fma(a0, b0, c0), a0 * b0 + c0);
  D2 a = D2::variable(a0, 0), b = D2::variable(b0, 1), c(c0);
  c.d[0] = 0.25;
  c.d[1] = -3.0;

  const D2 r = fma(a, b, c);  // both factors differentiated: d = a' b + a b' + c'
  EXPECT_EQ(r.v, std::fma(a0, b0, c0));
  ExpectClose(r.d[0], b0 + 0.25, kRel);
  ExpectClose(r.d[1], a0 - 3.0, kRel);

  const D2 s = fma(2.5, b, c);  // a plain coefficient, as a step's h: d = 2.5 b' + c'
  EXPECT_EQ(s.v, std::fma(2.5, b0, c0));
  EXPECT_EQ(s.d[0], 0.25);
  EXPECT_EQ(s.d[1], 2.5 - 3.0);

  // Nested: the value of the value is still one rounding.
  const DD nested = fma(DD(a), DD(b), DD(c));
  EXPECT_EQ(nested.v.v, std::fma(a0, b0, c0));
}

TEST(Dual, ComparisonsLookAtValuesOnly) {
  D2 a = D2::variable(1.0, 0);
  D2 b(2.0);
  b.d[0] = -100.0;  // partials must not take part
  EXPECT_TRUE(a < b);
  EXPECT_FALSE(a > b);
  EXPECT_TRUE(a <= b);
  EXPECT_FALSE(a >= b);
  EXPECT_TRUE(b >= b);
  EXPECT_TRUE(b <= b);
  EXPECT_TRUE(a < 1.5);
  EXPECT_TRUE(a > 0.5);
  EXPECT_TRUE(0.5 < a);
  EXPECT_TRUE(1.5 > a);
  EXPECT_FALSE(a < 1.0);
}

TEST(Dual, PowWithBothArgumentsDifferentiated) {
  const double x0 = 1.7, y0 = 2.3;
  const D2 r = pow(D2::variable(x0, 0), D2::variable(y0, 1));
  // exp(y log x): the rounding of log x is amplified by |y log x| ~ 1.2, still a few ulps.
  ExpectClose(r.v, std::pow(x0, y0), kRel);
  ExpectClose(r.d[0], y0 * std::pow(x0, y0 - 1.0), kRel);
  ExpectClose(r.d[1], std::pow(x0, y0) * std::log(x0), kRel);
}

TEST(Dual, Atan2InEveryQuadrant) {
  const double pts[][2] = {{0.3, 1.2}, {0.3, -1.2}, {-0.3, -1.2}, {-2.0, 0.4}, {5.0, 1e-3}};
  for (const auto& pt : pts) {
    const double y0 = pt[0], x0 = pt[1];
    SCOPED_TRACE("atan2(" + std::to_string(y0) + ", " + std::to_string(x0) + ")");
    const D2 r = atan2(D2::variable(y0, 0), D2::variable(x0, 1));
    const double r2 = x0 * x0 + y0 * y0;
    EXPECT_EQ(r.v, std::atan2(y0, x0));
    ExpectClose(r.d[0], x0 / r2, kRel);
    ExpectClose(r.d[1], -y0 / r2, kRel);
  }
}

TEST(Dual, FiniteCheckSeesValueAndPartials) {
  D2 a = D2::variable(1.0, 0);
  EXPECT_TRUE(isfinite(a));
  a.d[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(isfinite(a));
  EXPECT_FALSE(isfinite(log(D2::variable(0.0, 0))));   // value -inf
  EXPECT_FALSE(isfinite(sqrt(D2::variable(0.0, 0))));  // value 0, partial inf
}

// Nested duals: the outer partials of the inner partials are the Hessian.
DD Variable2(double x, int i) {
  DD r;
  r.v = D2::variable(x, i);
  r.d[i] = D2(1.0);
  return r;
}

TEST(Dual, NestedDualsGiveTheHessian) {
  const double pts[][2] = {{0.8, 1.3}, {-1.1, 0.4}, {2.0, 2.5}};
  for (const auto& pt : pts) {
    const double x0 = pt[0], y0 = pt[1];
    SCOPED_TRACE("at (" + std::to_string(x0) + ", " + std::to_string(y0) + ")");
    const DD x = Variable2(x0, 0), y = Variable2(y0, 1);
    // Touches sin, sqrt, atan2, a Real divided by a dual and a Real times a dual at both levels.
    const DD f = sin(x * y) + x * x * sqrt(y) + atan2(y, x) + 3.0 / (x + y) + 0.5 * x;

    const double s = std::sin(x0 * y0), c = std::cos(x0 * y0), sy = std::sqrt(y0);
    const double r2 = x0 * x0 + y0 * y0, r4 = r2 * r2, w = x0 + y0;
    const double fx[] = {y0 * c, 2.0 * x0 * sy, -y0 / r2, -3.0 / (w * w), 0.5};
    const double fy[] = {x0 * c, x0 * x0 / (2.0 * sy), x0 / r2, -3.0 / (w * w)};
    const double fxx[] = {-y0 * y0 * s, 2.0 * sy, 2.0 * x0 * y0 / r4, 6.0 / (w * w * w)};
    const double fyy[] = {-x0 * x0 * s, -x0 * x0 / (4.0 * y0 * sy), -2.0 * x0 * y0 / r4,
                          6.0 / (w * w * w)};
    const double fxy[] = {c - x0 * y0 * s, x0 / sy, (y0 * y0 - x0 * x0) / r4, 6.0 / (w * w * w)};
    // Terms can cancel, so compare against the size of the terms, not of their sum.
    auto sum = [](const auto& t) {
      double v = 0.0, a = 0.0;
      for (double e : t) v += e, a += std::abs(e);
      return std::pair{v, a};
    };
    const auto [gx, sgx] = sum(fx);
    const auto [gy, sgy] = sum(fy);
    const auto [hxx, shxx] = sum(fxx);
    const auto [hyy, shyy] = sum(fyy);
    const auto [hxy, shxy] = sum(fxy);

    ExpectClose(f.v.d[0], gx, kRel, sgx);
    ExpectClose(f.d[0].v, gx, kRel, sgx);
    ExpectClose(f.v.d[1], gy, kRel, sgy);
    ExpectClose(f.d[1].v, gy, kRel, sgy);
    ExpectClose(f.d[0].d[0], hxx, kRel, shxx);
    ExpectClose(f.d[1].d[1], hyy, kRel, shyy);
    ExpectClose(f.d[0].d[1], hxy, kRel, shxy);
    ExpectClose(f.d[1].d[0], hxy, kRel, shxy);
    static_assert(std::is_same_v<ScalarBase<DD>::type, double>);
    static_assert(std::is_same_v<decltype(value_of(f)), double>);
    EXPECT_EQ(value_of(f), f.v.v);
  }
}

TEST(Dual, FloatDualsStayFloat) {
  using F2 = Dual<float, 2>;
  const float x0 = 0.7f, y0 = 1.9f;
  const F2 x = F2::variable(x0, 0), y = F2::variable(y0, 1);
  const F2 f = sqrt(x) * sin(y) + pow(x, 3.0f) / y - 2.0f * exp(x * y);
  static_assert(std::is_same_v<decltype(f.v), float>);
  static_assert(std::is_same_v<decltype(value_of(f)), float>);
  // Reference in double at the same (float) inputs: a dozen float roundings of O(1) terms give
  // ~1e-6 relative to the size of the terms (float epsilon 6e-8).
  const double xd = x0, yd = y0, e = std::exp(xd * yd);
  const double fx[] = {std::sin(yd) / (2.0 * std::sqrt(xd)), 3.0 * xd * xd / yd, -2.0 * yd * e};
  const double fy[] = {std::sqrt(xd) * std::cos(yd), -xd * xd * xd / (yd * yd), -2.0 * xd * e};
  const double fv[] = {std::sqrt(xd) * std::sin(yd), xd * xd * xd / yd, -2.0 * e};
  constexpr double kFloatRel = 1e-6;
  auto check = [&](float got, const double(&t)[3]) {
    ExpectClose(got, t[0] + t[1] + t[2], kFloatRel,
                std::abs(t[0]) + std::abs(t[1]) + std::abs(t[2]));
  };
  check(f.v, fv);
  check(f.d[0], fx);
  check(f.d[1], fy);
}

TEST(Dual, ConstantsHaveZeroPartials) {
  const D2 c(3.0);
  EXPECT_EQ(c.v, 3.0);
  EXPECT_EQ(c.d[0], 0.0);
  EXPECT_EQ(c.d[1], 0.0);
  const D2 z;
  EXPECT_EQ(z.v, 0.0);
  EXPECT_EQ(z.d[0], 0.0);
}

}  // namespace
}  // namespace vigor::kernels
