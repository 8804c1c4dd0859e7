/// @file dual.hpp
/// @brief Forward-mode automatic differentiation: `Dual<Real, N>` carries a value and N partials.
///
/// A model writes its potential (or Lagrangian) once as a template on the scalar type; evaluating
/// it on duals seeded with unit partials gives the exact gradient (to round-off), and running an
/// integrator step on duals gives the Jacobian of the map actually computed. `Real` may itself be
/// a Dual (nested duals give second derivatives for the Newton Jacobians of implicit steps).
///
/// Mixed arithmetic with the component type is provided by hidden friends whose scalar argument is
/// not deduced, so `x * 2` and `0.5 * x` work for any Real and never promote float to double.
#pragma once

#include <type_traits>

#include "config.hpp"
#include "math.hpp"

namespace vigor::kernels {

template <class Real, int N>
struct Dual;

template <class X>
inline constexpr bool is_dual_v = false;
template <class Real, int N>
inline constexpr bool is_dual_v<Dual<Real, N>> = true;

/// The numbers a value carries: 1 for a plain one, (N + 1) times its value's for Dual<Real, N>.
template <class X>
inline constexpr int dual_components_v = 1;
template <class Real, int N>
inline constexpr int dual_components_v<Dual<Real, N>> = (N + 1) * dual_components_v<Real>;

/// The nested duals whose sin and cos call their kernel (Dual::kTrigCalled): the second
/// derivatives in two variables and more, (2 + 1)^2 components.
inline constexpr int kTrigCalledComponents = 9;

/// A plain number S next to a dual whose value type Real is itself a dual (a nested dual): what
/// the one-step conversions and mixed operators of nested duals take.
template <class S, class Real>
concept PlainBesideNested = std::is_arithmetic_v<S> && is_dual_v<Real>;

template <class Real, int N>
struct Dual {
  Real v;     ///< value
  Real d[N];  ///< partial derivatives

  VIGOR_HD VIGOR_INLINE Dual() : v(0) {
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] = Real(0);
  }
  // Implicit on purpose: constants in model code become duals with zero partials.
  VIGOR_HD VIGOR_INLINE Dual(Real x) : v(x) {  // NOLINT(google-explicit-constructor)
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] = Real(0);
  }

  // Nested duals (Real itself a Dual): a plain number converts in one step at any depth, so model
  // code such as `I0 * w` (I0 a double member) works when w is a dual of a dual of a dual.
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE Dual(S x)
      : v(Real(x)) {  // NOLINT(google-explicit-constructor)
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] = Real(0);
  }

  /// The independent variable number `i` with value `x` (unit partial in slot i).
  VIGOR_HD VIGOR_INLINE static Dual variable(Real x, int i) {
    Dual r(x);
    r.d[i] = Real(1);
    return r;
  }

  VIGOR_HD VIGOR_INLINE Dual operator-() const {
    Dual r;
    r.v = -v;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) r.d[i] = -d[i];
    return r;
  }
  VIGOR_HD VIGOR_INLINE Dual operator+() const { return *this; }

  VIGOR_HD VIGOR_INLINE Dual& operator+=(const Dual& o) {
    v += o.v;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] += o.d[i];
    return *this;
  }
  VIGOR_HD VIGOR_INLINE Dual& operator-=(const Dual& o) {
    v -= o.v;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] -= o.d[i];
    return *this;
  }
  VIGOR_HD VIGOR_INLINE Dual& operator*=(const Dual& o) {
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] = d[i] * o.v + v * o.d[i];
    v *= o.v;
    return *this;
  }
  VIGOR_HD VIGOR_INLINE Dual& operator/=(const Dual& o) {
    // The value is divided, not multiplied by a rounded reciprocal, so the primal part of a dual
    // computation is bit-identical to the plain one (a tangent map differentiates the very map
    // the plain step computes).
    const Real inv = Real(1) / o.v;
    const Real q = v / o.v;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] = (d[i] - q * o.d[i]) * inv;
    v = q;
    return *this;
  }
  VIGOR_HD VIGOR_INLINE Dual& operator+=(const Real& s) {
    v += s;
    return *this;
  }
  VIGOR_HD VIGOR_INLINE Dual& operator-=(const Real& s) {
    v -= s;
    return *this;
  }
  VIGOR_HD VIGOR_INLINE Dual& operator*=(const Real& s) {
    v *= s;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] *= s;
    return *this;
  }
  VIGOR_HD VIGOR_INLINE Dual& operator/=(const Real& s) {
    const Real inv = Real(1) / s;
    v = v / s;  // divided, for bit-identical primals (see operator/=(Dual))
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) d[i] *= inv;
    return *this;
  }

  // Hidden friends: found only through ADL, with the scalar side a plain (non-deduced) Real.
  VIGOR_HD VIGOR_INLINE friend Dual operator+(Dual a, const Dual& b) { return a += b; }
  VIGOR_HD VIGOR_INLINE friend Dual operator-(Dual a, const Dual& b) { return a -= b; }
  VIGOR_HD VIGOR_INLINE friend Dual operator*(Dual a, const Dual& b) { return a *= b; }
  VIGOR_HD VIGOR_INLINE friend Dual operator/(Dual a, const Dual& b) { return a /= b; }
  VIGOR_HD VIGOR_INLINE friend Dual operator+(Dual a, const Real& s) { return a += s; }
  VIGOR_HD VIGOR_INLINE friend Dual operator+(const Real& s, Dual a) { return a += s; }
  VIGOR_HD VIGOR_INLINE friend Dual operator-(Dual a, const Real& s) { return a -= s; }
  VIGOR_HD VIGOR_INLINE friend Dual operator-(const Real& s, const Dual& a) {
    Dual r = -a;
    r.v += s;
    return r;
  }
  VIGOR_HD VIGOR_INLINE friend Dual operator*(Dual a, const Real& s) { return a *= s; }
  VIGOR_HD VIGOR_INLINE friend Dual operator*(const Real& s, Dual a) { return a *= s; }
  VIGOR_HD VIGOR_INLINE friend Dual operator/(Dual a, const Real& s) { return a /= s; }
  VIGOR_HD VIGOR_INLINE friend Dual operator/(const Real& s, const Dual& a) {
    Dual r;
    r.v = s / a.v;
    const Real k = -r.v / a.v;  // d(s/a) = -s/a^2 da
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) r.d[i] = k * a.d[i];
    return r;
  }

  /// a * b + c with one rounding in the value and in each partial (a plain coefficient, as the
  /// steps' h-multiples are): the value is the plain fma's, so a dual state's primal keeps the bits
  /// of the plain run.
  VIGOR_HD VIGOR_INLINE friend Dual fma(const Real& a, const Dual& b, const Dual& c) {
    Dual r;
    r.v = fma(a, b.v, c.v);
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) r.d[i] = fma(a, b.d[i], c.d[i]);
    return r;
  }

  /// a * b + c over duals (a step differentiated in h or in its coefficients): the value one
  /// fma, each partial a.v b'_i + (a'_i b.v + c'_i) by two.
  VIGOR_HD VIGOR_INLINE friend Dual fma(const Dual& a, const Dual& b, const Dual& c) {
    Dual r;
    r.v = fma(a.v, b.v, c.v);
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) r.d[i] = fma(a.v, b.d[i], fma(a.d[i], b.v, c.d[i]));
    return r;
  }

  // Plain numbers against nested duals: exact matches, so they beat the conversions above.
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE friend Dual operator*(const S& s,
                                                                                  Dual a) {
    return a *= Real(s);
  }
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE friend Dual operator*(Dual a,
                                                                                  const S& s) {
    return a *= Real(s);
  }
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE friend Dual operator+(const S& s,
                                                                                  Dual a) {
    return a += Real(s);
  }
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE friend Dual operator+(Dual a,
                                                                                  const S& s) {
    return a += Real(s);
  }
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE friend Dual operator-(Dual a,
                                                                                  const S& s) {
    return a -= Real(s);
  }
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE friend Dual operator-(const S& s,
                                                                                  const Dual& a) {
    return Real(s) - a;
  }
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE friend Dual operator/(Dual a,
                                                                                  const S& s) {
    return a /= Real(s);
  }
  template <class S>
  requires PlainBesideNested<S, Real> VIGOR_HD VIGOR_INLINE friend Dual operator/(const S& s,
                                                                                  const Dual& a) {
    return Real(s) / a;
  }

  // Comparisons look at values only: branches in model code follow the primal computation. On
  // packs they give the values' lane mask, for select.
  VIGOR_HD VIGOR_INLINE friend auto operator==(const Dual& a, const Dual& b) { return a.v == b.v; }
  VIGOR_HD VIGOR_INLINE friend auto operator!=(const Dual& a, const Dual& b) { return a.v != b.v; }
  VIGOR_HD VIGOR_INLINE friend auto operator==(const Dual& a, const Real& b) { return a.v == b; }
  VIGOR_HD VIGOR_INLINE friend auto operator!=(const Dual& a, const Real& b) { return a.v != b; }
  VIGOR_HD VIGOR_INLINE friend auto operator<(const Dual& a, const Dual& b) { return a.v < b.v; }
  VIGOR_HD VIGOR_INLINE friend auto operator>(const Dual& a, const Dual& b) { return a.v > b.v; }
  VIGOR_HD VIGOR_INLINE friend auto operator<=(const Dual& a, const Dual& b) { return a.v <= b.v; }
  VIGOR_HD VIGOR_INLINE friend auto operator>=(const Dual& a, const Dual& b) { return a.v >= b.v; }
  VIGOR_HD VIGOR_INLINE friend auto operator<(const Dual& a, const Real& b) { return a.v < b; }
  VIGOR_HD VIGOR_INLINE friend auto operator>(const Dual& a, const Real& b) { return a.v > b; }
  VIGOR_HD VIGOR_INLINE friend auto operator<(const Real& a, const Dual& b) { return a < b.v; }
  VIGOR_HD VIGOR_INLINE friend auto operator>(const Real& a, const Dual& b) { return a > b.v; }

  /// Chain rule for a unary function: value f, derivative df at v.
  VIGOR_HD VIGOR_INLINE Dual chain(const Real& f, const Real& df) const {
    Dual r;
    r.v = f;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) r.d[i] = df * d[i];
    return r;
  }

  VIGOR_HD VIGOR_INLINE friend Dual sqrt(const Dual& a) {
    const Real s = sqrt(a.v);
    return a.chain(s, Real(0.5) / s);
  }
  VIGOR_HD VIGOR_INLINE friend Dual cbrt(const Dual& a) {
    const Real c = cbrt(a.v);
    return a.chain(c, c / (Real(3) * a.v));
  }
  /// Whether sin and cos of this dual call the kernel of their innermost value rather than inline
  /// it. The second derivatives of a model of two or more degrees of freedom (a nested dual of 9
  /// or more components: a Lagrangian's mass matrix, a Newton Jacobian) carry every sin and cos
  /// through as many chain-rule products, so there the kernel is a small part of the work and one
  /// copy per unit serves every use (pack.hpp, sincos_called: the same bits). Smaller duals, such
  /// as a force (2 components) or a one-degree Hessian (4), inline it: there the kernel is most of
  /// the step. The choice is written out in sin, cos and sincos: behind one more inline helper GCC
  /// emitted slightly different code for the inline case (docs/performance.md).
  static constexpr bool kTrigCalled =
      is_dual_v<Real> && dual_components_v<Dual> >= kTrigCalledComponents;

  // sin and cos need each other for the derivative: one sincos of the value (the same bits as
  // sin and cos apart, trig.hpp).
  VIGOR_HD VIGOR_INLINE friend void sincos(const Dual& a, Dual& sin_a, Dual& cos_a) {
    Real s, c;
    if constexpr (kTrigCalled)
      sincos_called(a.v, s, c);
    else
      sincos(a.v, s, c);
    sin_a = a.chain(s, c);
    cos_a = a.chain(c, -s);
  }
  VIGOR_HD VIGOR_INLINE friend Dual sin(const Dual& a) {
    Real s, c;
    if constexpr (kTrigCalled)
      sincos_called(a.v, s, c);
    else
      sincos(a.v, s, c);
    return a.chain(s, c);
  }
  VIGOR_HD VIGOR_INLINE friend Dual cos(const Dual& a) {
    Real s, c;
    if constexpr (kTrigCalled)
      sincos_called(a.v, s, c);
    else
      sincos(a.v, s, c);
    return a.chain(c, -s);
  }
  /// sincos of a dual inside a nested one: the same values, with the sincos of its innermost
  /// value called rather than inlined on the CPU's lanes (pack.hpp, sincos_called).
  VIGOR_HD VIGOR_INLINE friend void sincos_called(const Dual& a, Dual& sin_a, Dual& cos_a) {
    Real s, c;
    sincos_called(a.v, s, c);
    sin_a = a.chain(s, c);
    cos_a = a.chain(c, -s);
  }

  VIGOR_HD VIGOR_INLINE friend Dual tan(const Dual& a) {
    const Real t = tan(a.v);
    return a.chain(t, Real(1) + t * t);
  }
  VIGOR_HD VIGOR_INLINE friend Dual asin(const Dual& a) {
    return a.chain(asin(a.v), Real(1) / sqrt(Real(1) - a.v * a.v));
  }
  VIGOR_HD VIGOR_INLINE friend Dual acos(const Dual& a) {
    return a.chain(acos(a.v), Real(-1) / sqrt(Real(1) - a.v * a.v));
  }
  VIGOR_HD VIGOR_INLINE friend Dual atan(const Dual& a) {
    return a.chain(atan(a.v), Real(1) / (Real(1) + a.v * a.v));
  }
  VIGOR_HD VIGOR_INLINE friend Dual sinh(const Dual& a) { return a.chain(sinh(a.v), cosh(a.v)); }
  VIGOR_HD VIGOR_INLINE friend Dual cosh(const Dual& a) { return a.chain(cosh(a.v), sinh(a.v)); }
  VIGOR_HD VIGOR_INLINE friend Dual tanh(const Dual& a) {
    const Real t = tanh(a.v);
    return a.chain(t, Real(1) - t * t);
  }
  VIGOR_HD VIGOR_INLINE friend Dual exp(const Dual& a) {
    const Real e = exp(a.v);
    return a.chain(e, e);
  }
  VIGOR_HD VIGOR_INLINE friend Dual log(const Dual& a) { return a.chain(log(a.v), Real(1) / a.v); }
  VIGOR_HD VIGOR_INLINE friend Dual abs(const Dual& a) { return a.v < Real(0) ? -a : a; }
  /// x^y with a constant exponent.
  VIGOR_HD VIGOR_INLINE friend Dual pow(const Dual& a, const Real& y) {
    const Real p = pow(a.v, y);
    return a.chain(p, y * pow(a.v, y - Real(1)));
  }
  /// x^y with both arguments differentiated (x > 0).
  VIGOR_HD VIGOR_INLINE friend Dual pow(const Dual& a, const Dual& y) { return exp(y * log(a)); }
  VIGOR_HD VIGOR_INLINE friend Dual atan2(const Dual& y, const Dual& x) {
    Dual r;
    r.v = atan2(y.v, x.v);
    const Real inv = Real(1) / (x.v * x.v + y.v * y.v);
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) r.d[i] = (x.v * y.d[i] - y.v * x.d[i]) * inv;
    return r;
  }
  VIGOR_HD VIGOR_INLINE friend bool isfinite(const Dual& a) {
    bool ok = isfinite(a.v);
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) ok = ok && isfinite(a.d[i]);
    return ok;
  }
  VIGOR_HD VIGOR_INLINE friend auto value_of(const Dual& a) { return value_of(a.v); }
};

/// Lane by lane on packs: the value and every derivative taken from a where the mask m (the lane
/// mask of a comparison of values) is set, from b elsewhere. A bool mask takes arith.hpp's select.
template <class Mask, class Real, int N>
requires(!std::is_same_v<Mask, bool>)
    VIGOR_HD VIGOR_INLINE Dual<Real, N> select(const Mask& m, const Dual<Real, N>& a,
                                               const Dual<Real, N>& b) {
  Dual<Real, N> r;
  r.v = select(m, a.v, b.v);
  VIGOR_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = select(m, a.d[i], b.d[i]);
  return r;
}

/// The component type a scalar is built on: Real for Real, Real for Dual<Dual<Real>>.
template <class T>
struct ScalarBase {
  using type = T;
};
template <class Real, int N>
struct ScalarBase<Dual<Real, N>> {
  using type = typename ScalarBase<Real>::type;
};

}  // namespace vigor::kernels
