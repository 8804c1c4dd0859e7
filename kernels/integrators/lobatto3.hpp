/// @file lobatto3.hpp
/// @brief 3-stage Lobatto IIIA–IIIB partitioned Runge–Kutta method: a variational (VPRK)
/// integrator of order 4 for separable models.
///
/// VPRK (Bou-Rabee 2007, thesis §2.5; Marsden & West 2001, §2.6.5): positions by the 3-stage
/// Lobatto IIIA tableau a = [[0, 0, 0], [5/24, 1/3, -1/24], [1/6, 2/3, 1/6]], b = (1/6, 2/3, 1/6);
/// momenta by abar_ij = b_j - b_j a_ji / b_i = [[1/6, -1/6, 0], [1/6, 1/3, 0], [1/6, 5/6, 0]]
/// (3-stage Lobatto IIIB). For L = 1/2 v^T M v - V the stages collapse: Q1 = q0, Q3 = q1, the
/// momentum stages are explicit in f1 = f(q0), f2 = f(Q2), and the only nonlinear unknown is
///
///     Q2 = q0 + (h/2) M^{-1} p0 + h^2 M^{-1} (f1/12 + f2/24),
///     q1 = q0 + h M^{-1} p0 + h^2 M^{-1} (f1/6 + f2/3),
///     p1 = p0 + h (f1/6 + 2 f2/3 + f(q1)/6).
///
/// Q2 by a fixed number of Newton iterations with J = I + (h^2/24) M^{-1} Hess V(Q2), from the
/// Taylor predictor Q2 ~ q0 + (h/2) M^{-1} p0 + (h^2/8) M^{-1} f1 (O(h^3) from Q2; the
/// Jacobian's h^2/24 makes each iteration contract strongly), so two iterations reach round-off
/// (~1e-16) for h <= 0.5 (Hénon–Heiles, pendulum; tests/test_implicit.cpp): kNewtonIterations = 2,
/// documented range h <= 0.5 at unit frequencies. The step returns the max-norm of the Q2
/// equation at the final iterate, in units of position.
/// Order 4, symplectic, symmetric; momentum maps of symmetries of V conserved to the Newton
/// residual; energy error O(h^4), bounded without drift. First-same-as-last: f(q0) is the cached
/// Phase::f and f(q1) is left there for the next step.
/// References: N. Bou-Rabee, Hamilton–Pontryagin integrators on Lie groups (thesis, Caltech
/// 2007), §2.5; Hairer, Lubich & Wanner, Geometric Numerical Integration, §II.2.2 and §VI.6.3.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

template <class Real>
struct LobattoIIIAB3 {
  static constexpr const char* kName = "lobatto3";
  static constexpr const char* kDescription =
      "3-stage Lobatto IIIA-IIIB partitioned RK (variational, order 4, implicit)";
  static constexpr const char* kReference =
      "Bou-Rabee 2007 (thesis), sec. 2.5; Hairer, Lubich & Wanner, GNI, sec. II.2.2";
  static constexpr int kOrder = 4;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = false;
  static constexpr bool kLaneSafe = true;
  static constexpr int kNewtonIterations = 2;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  int newton_iterations = kNewtonIterations;

  static LobattoIIIAB3 from_options(const double*) { return {}; }

  /// One step; returns the final Newton residual of the Q2 equation (units of position).
  template <class M>
  VIGOR_HD VIGOR_INLINE Real step(const M& m, Phase<Real, M::dof>& s, Real h, Real) const {
    constexpr int n = M::dof;
    const Real hh = Real(0.5) * h;
    const Real h2 = h * h;
    const Real c24 = h2 / Real(24);
    const Vec<Real, n> f1 = s.f;
    // The part of Q2 that does not depend on f(Q2): q0 + (h/2) M^{-1} p0 + (h^2/12) M^{-1} f1.
    Vec<Real, n> base, Q2, g, F;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      const Real w = m.inv_mass(i);
      base[i] = s.q[i] + hh * w * s.p[i] + (h2 / Real(12)) * w * f1[i];
      Q2[i] = base[i] + c24 * w * f1[i];  // f2 ~ f1: the predictor (h^2/8) M^{-1} f1
    }
    for (int it = 0; it < newton_iterations; ++it) {
      Mat<Real, n> J;
      potential_gradient_hessian(m, Q2, g, J);
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) {
        const Real c = c24 * m.inv_mass(i);
        F[i] = Q2[i] - base[i] + c * g[i];
        VIGOR_UNROLL
        for (int j = 0; j < n; ++j) J[i][j] = c * J[i][j];
        J[i][i] += Real(1);
      }
      // J = I + (h^2/24) M^{-1} Hess V: an O(h^2) perturbation of I; no pivoting needed.
      Q2 -= solve_nopivot(J, F);
    }
    const Vec<Real, n> f2 = force(m, Q2);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      const Real w = m.inv_mass(i);
      F[i] = Q2[i] - base[i] - c24 * w * f2[i];
      s.q[i] += h * w * s.p[i] + h2 * w * (f1[i] / Real(6) + f2[i] / Real(3));
    }
    s.f = force(m, s.q);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i)
      s.p[i] += h * ((f1[i] + s.f[i]) / Real(6) + Real(2) * f2[i] / Real(3));
    return max_abs(F);
  }
};

}  // namespace vigor::kernels
