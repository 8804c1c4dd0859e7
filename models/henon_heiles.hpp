/// @file henon_heiles.hpp
/// @brief Generalised Hénon–Heiles system.
///
/// H(x, y, p_x, p_y) = 1/2 (p_x^2 + p_y^2) + 1/2 (x^2 + y^2) + a x^2 y + b y^3
///
/// State (q0, q1, p0, p1) = (x, y, p_x, p_y), unit masses, dimensionless.
/// Parameters: a (default 1), b (default -1/3). With the classic values the potential has a
/// triangle of saddles at energy 1/6 (the escape energy); the classic sections are x = 0, p_x > 0,
/// plotted in (y, p_y), at E = 1/12, 1/8, 1/6.
/// Source: M. Hénon and C. Heiles, Astron. J. 69 (1964) 73.
#pragma once

#include <array>

#include "kernels/core/arith.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct HenonHeiles {
  static constexpr const char* kName = "henon_heiles";
  static constexpr const char* kDescription =
      "generalised Henon-Heiles: H = (px^2+py^2)/2 + (x^2+y^2)/2 + a x^2 y + b y^3";
  static constexpr int dof = 2;
  static constexpr std::array<kernels::ParamSpec, 2> kParams{{
      {"a", 1.0, kernels::Rule::kFinite, "coefficient of x^2 y"},
      {"b", -1.0 / 3.0, kernels::Rule::kFinite, "coefficient of y^3"},
  }};

  Real a;
  Real b;

  static HenonHeiles from_params(const double* v) { return {Real(v[0]), Real(v[1])}; }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return Real(1); }

  /// V = x^2 (1/2 + a y) + y^2 (1/2 + b y), each bracket and the last sum one fused multiply-add:
  /// six operations where the expanded form takes twelve. H is evaluated after every step by
  /// default (diagnostics.conservation_every = 1), so this is a sixth of a section survey's
  /// arithmetic per step (docs/performance.md, "The Hénon–Heiles energy in six operations").
  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    const T& x = q[0];
    const T& y = q[1];
    using kernels::fma;
    return fma(x * x, fma(T(a), y, T(Real(0.5))), y * y * fma(T(b), y, T(Real(0.5))));
  }

  /// Hand-written for speed; tests check it against the AD gradient of potential(). The last
  /// product of each term is fused into the sum (kernels/core/arith.hpp: the same instruction on
  /// every backend), which saves an operation and a rounding per term, in the order in which a
  /// compiler contracts the plain expressions x + 2a x y and y + a x x + 3b y y:
  ///   g0 = fma(2a x, y, x),   g1 = fma(3b y, y, fma(a x, x, y)).
  VIGOR_HD VIGOR_INLINE void potential_gradient(const kernels::Vec<Real, dof>& q,
                                                kernels::Vec<Real, dof>& g) const {
    using kernels::fma;
    const Real x = q[0];
    const Real y = q[1];
    g[0] = fma(Real(2) * a * x, y, x);
    g[1] = fma(Real(3) * b * y, y, fma(a * x, x, y));
  }

  /// The force -grad V, hand-written with the sign folded into each term's last multiply-add:
  ///   f0 = -fma(2a x, y, x),   f1 = -fma(3b y, y, fma(a x, x, y)),
  /// each negated_fma one instruction. Negating potential_gradient() put one more on the step's
  /// chain per component (docs/performance.md, "The Hénon–Heiles force with its sign folded in").
  /// The same bits as -potential_gradient() but for the sign of an exactly zero component
  /// (kernels/core/arith.hpp); tests check both.
  VIGOR_HD VIGOR_INLINE void force(const kernels::Vec<Real, dof>& q,
                                   kernels::Vec<Real, dof>& f) const {
    using kernels::fma;
    using kernels::negated_fma;
    const Real x = q[0];
    const Real y = q[1];
    f[0] = negated_fma(Real(2) * a * x, y, x);
    f[1] = negated_fma(Real(3) * b * y, y, fma(a * x, x, y));
  }

  /// Hess V, hand-written for the Newton Jacobians of the implicit integrators (tests check it
  /// against nested-dual AD of potential()).
  VIGOR_HD VIGOR_INLINE void potential_hessian(const kernels::Vec<Real, dof>& q,
                                               kernels::Mat<Real, dof>& H) const {
    const Real x = q[0];
    const Real y = q[1];
    const Real hxy = Real(2) * a * x;
    H[0][0] = Real(1) + Real(2) * a * y;
    H[0][1] = hxy;
    H[1][0] = hxy;
    H[1][1] = Real(1) + Real(6) * b * y;
  }
};

}  // namespace vigor::models
