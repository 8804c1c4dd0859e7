/// @file midpoint.hpp
/// @brief The implicit midpoint variational integrator, for every (q, p) model: separable or
/// Lagrangian, with or without holonomic constraints and external forces.
///
/// Discrete Lagrangian L_d(q0, q1) = h L((q0 + q1)/2, (q1 - q0)/h) (Stern & Desbrun eq. 6 with
/// alpha = 1/2), in position–momentum form with the discrete Lagrange–d'Alembert forces
/// F_d^- = F_d^+ = (h/2) F(mid, v, t + h/2) and multipliers for constraints g(q) = 0:
///
///     p0 = -D1 L_d(q0, q1) - F_d^- - G(q0)^T lambda,   g(q1) = 0      (solved for q1, lambda)
///     p1 =  D2 L_d(q0, q1) + F_d^+ + G(q1)^T mu,        G(q1) v(q1, p1) = 0   (mu: RATTLE)
///
/// with v = (q1 - q0)/h, mid = q0 + (h/2) v, D1 L_d = (h/2) L_q - L_v, D2 L_d = (h/2) L_q + L_v.
/// Order 2, symmetric, symplectic (on the constraint manifold T*N for constrained models);
/// momentum maps of symmetries of L_d conserved (discrete Noether) and the energy error bounded
/// without drift — all to the level of the final Newton residual, which the step returns.
///
/// Two paths, chosen at compile time:
///  * separable, unconstrained, unforced (L = 1/2 v^T M v - V): unknown q1,
///        F(q1) = q1 - q0 - h M^{-1} (p0 + (h/2) f(mid)),   J = I + (h^2/4) M^{-1} Hess V(mid),
///        p1 = p0 + h f(mid),
///    predictor: the Störmer–Verlet position q0 + h M^{-1} (p0 + (h/2) f(q0)) (f(q0) is the cached
///    Phase::f), which is O(h^3) from q1, so Newton's quadratic convergence reaches round-off in
///    two iterations at the usual steps. The residual is in units of position. Phase::f = f(q1)
///    is kept valid (it is the next step's predictor force).
///  * general: unknown v (and lambda), F(v) = p0 + (h/2) L_q(mid, v) - L_v(mid, v)
///    [+ (h/2) F(mid, v, t + h/2)] [+ G(q0)^T lambda], with g(q0 + h v) = 0; the Jacobian dF/dv
///    comes from forward AD of F in v (nested duals over the model's Lagrangian). Predictor: the
///    velocity at the explicit Euler half step, O(h^2) from the solution; for constrained models
///    v(q0, p0) instead (O(h), but tangent to the constraint). The saddle-point system
///    [A G0^T; h G1 0] is solved by its Schur complement (see constrained_newton_update). For
///    constrained models p1 is then projected onto the hidden constraint G(q1) v(q1, p1) = 0
///    (RATTLE). Phase::f is left untouched (no consumer needs it for such models). The residual
///    is the max-norm of (F, g): F in units of momentum, g in the constraint's own units.
///
/// Fixed Newton iteration count (no data-dependent branch): kLaneSafe. kNewtonIterations = 3,
/// measured in tests/test_implicit.cpp (max residual over 20 time units, unit frequencies): the
/// separable path reaches round-off (~1e-16) with 2 iterations for h <= 0.2 (4e-12 at h = 0.5);
/// the general path — double pendulum, driven pendulum, Cartesian pendulum — with 3 for
/// h <= 0.2 (2 leave up to 1e-8 there). Documented range of the default: h <= 0.2 where the
/// fastest linear frequency omega is O(1) (h omega <= 0.37 on the unit double pendulum). Beyond
/// it raise the job's newton_iterations, or set newton_tolerance to flag unconverged steps.
/// References: Marsden & West 2001, Acta Numerica, §2.2 and §3.2 (forcing), §3.5 (constraints);
/// Stern & Desbrun, "Discrete geometric mechanics for variational time integrators".
#pragma once

#include <array>

#include "kernels/core/dual.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/lu.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

template <class Real>
struct Midpoint {
  static constexpr const char* kName = "midpoint";
  static constexpr const char* kDescription =
      "implicit midpoint variational integrator (any (q, p) model: Lagrangian, constrained, "
      "forced)";
  static constexpr const char* kReference =
      "Marsden & West 2001, Acta Numerica, sec. 2.2, 3.2, 3.5; Stern & Desbrun";
  static constexpr int kOrder = 2;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = false;
  static constexpr bool kLaneSafe = true;
  static constexpr int kNewtonIterations = 3;
  static constexpr const char* kRequires =
      "a (q, p) model (separable or Lagrangian, optionally constrained or forced)";
  static constexpr std::array<ParamSpec, 0> kOptions{};

  int newton_iterations = kNewtonIterations;

  static Midpoint from_options(const double*) { return {}; }

  template <class M>
  static constexpr bool supports() {
    return PhaseModel<M>;
  }

  /// The general path's Newton Jacobian is a second derivative of L by nested duals; its tangent
  /// map nests once more (2 dof + 1 components per level). Compiled up to 2 dof (the double and
  /// driven pendulums); beyond that the separable fast path only. kernels/tangent.hpp still
  /// differentiates any pair (tests/test_tangent_defect.cpp does the double spherical pendulum).
  template <class M>
  static constexpr bool tangent_affordable() {
    return PlainSeparableModel<M> || M::dof <= 2;
  }

  /// One step from time t; returns the final Newton residual (see the file comment for units).
  template <class M>
  VIGOR_HD VIGOR_INLINE Real step(const M& m, Phase<Real, M::dof>& s, Real h, Real t) const {
    if constexpr (PlainSeparableModel<M>) {
      return step_separable(m, s, h);
    } else {
      return step_general(m, s, h, t);
    }
  }

 private:
  /// v(q, p) by one Newton step of the Legendre transform from v = 0: exact up to round-off for
  /// a mechanical L (quadratic in v), which is all a predictor needs. The mass matrix is
  /// symmetric positive definite: no pivoting.
  template <class M>
  VIGOR_HD VIGOR_INLINE static Vec<Real, M::dof> legendre_velocity(const M& m,
                                                                   const Vec<Real, M::dof>& q,
                                                                   const Vec<Real, M::dof>& p) {
    const Vec<Real, M::dof> zero = Vec<Real, M::dof>::filled(Real(0));
    Vec<Real, M::dof> p_at_zero;
    Mat<Real, M::dof> mass;
    momentum_and_mass(m, q, zero, p_at_zero, mass);
    return solve_nopivot(mass, p - p_at_zero);
  }

  /// Explicit predictor of the midpoint velocity v = (q1 - q0)/h: the velocity at the explicit
  /// Euler half step (q0 + (h/2) v0, p0 + (h/2) pdot0), O(h^2) from the solution (v(q0, p0)
  /// alone is O(h) away, which costs one more Newton iteration at moderate h).
  template <class M>
  VIGOR_HD VIGOR_INLINE static Vec<Real, M::dof> midpoint_velocity_guess(
      const M& m, const Vec<Real, M::dof>& q0, const Vec<Real, M::dof>& p0, Real t, Real hh) {
    constexpr int n = M::dof;
    const Vec<Real, n> v0 = legendre_velocity(m, q0, p0);
    if constexpr (ConstrainedModel<M>) {
      // The half step would miss the O(1) constraint force and land O(h) off the solution:
      // v(q0, p0), which satisfies the hidden constraint, is the better guess here.
      return v0;
    } else {
      Vec<Real, n> pdot, Lv;
      lagrangian_gradient(m, q0, v0, pdot, Lv);
      if constexpr (ForcedModel<M>) pdot += external_force_of(m, q0, v0, t);
      Vec<Real, n> qh, ph;
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) {
        qh[i] = q0[i] + hh * v0[i];
        ph[i] = p0[i] + hh * pdot[i];
      }
      return legendre_velocity(m, qh, ph);
    }
  }

  template <class M>
  VIGOR_HD VIGOR_INLINE Real step_separable(const M& m, Phase<Real, M::dof>& s, Real h) const {
    constexpr int n = M::dof;
    const Real hh = Real(0.5) * h;
    const Real hq = Real(0.25) * h * h;
    const Vec<Real, n> q0 = s.q;
    const Vec<Real, n> p0 = s.p;
    Vec<Real, n> q1, mid, g, F;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) q1[i] = q0[i] + h * m.inv_mass(i) * (p0[i] + hh * s.f[i]);
    for (int it = 0; it < newton_iterations; ++it) {
      Mat<Real, n> J;
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) mid[i] = Real(0.5) * (q0[i] + q1[i]);
      potential_gradient_hessian(m, mid, g, J);
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) {
        F[i] = q1[i] - q0[i] - h * m.inv_mass(i) * (p0[i] - hh * g[i]);
        const Real c = hq * m.inv_mass(i);
        VIGOR_UNROLL
        for (int j = 0; j < n; ++j) J[i][j] = c * J[i][j];
        J[i][i] += Real(1);
      }
      // J = I + (h^2/4) M^{-1} Hess V: a perturbation of I by O(h^2) (similar to a symmetric
      // matrix for any diagonal M), so within the documented steps (h^2 |M^{-1} Hess V|/4 << 1)
      // elimination without pivoting meets pivots near 1.
      q1 -= solve_nopivot(J, F);
    }
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) mid[i] = Real(0.5) * (q0[i] + q1[i]);
    const Vec<Real, n> fm = force(m, mid);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      F[i] = q1[i] - q0[i] - h * m.inv_mass(i) * (p0[i] + hh * fm[i]);
      s.p[i] = p0[i] + h * fm[i];
    }
    s.q = q1;
    s.f = force(m, q1);
    return max_abs(F);
  }

  /// The general path: Newton on the midpoint velocity v (and the multipliers lambda), then the
  /// new state from the final iterate (see the file comment).
  template <class M>
  VIGOR_HD VIGOR_INLINE Real step_general(const M& m, Phase<Real, M::dof>& s, Real h,
                                          Real t) const {
    constexpr int n = M::dof;
    constexpr int k = constraint_count<M>;
    constexpr int kc = k > 0 ? k : 1;  // array extent when there are no constraints
    const Real hh = Real(0.5) * h;
    const Real tm = t + hh;
    const Vec<Real, n> q0 = s.q;
    const Vec<Real, n> p0 = s.p;
    Vec<Real, n> v = midpoint_velocity_guess(m, q0, p0, t, hh);
    Vec<Real, kc> lambda = Vec<Real, kc>::filled(Real(0));
    Real G0[kc][n];
    if constexpr (k > 0) {
      Vec<Real, k> g0;
      constraint_jacobian(m, q0, g0, G0);
    }
    for (int it = 0; it < newton_iterations; ++it) {
      Mat<Real, n> A;
      Vec<Real, n> F;
      residual_and_jacobian(m, q0, p0, v, hh, tm, F, A);
      if constexpr (k == 0) {
        v -= solve_nopivot(A, F);
      } else {
        VIGOR_UNROLL
        for (int a = 0; a < k; ++a) {
          VIGOR_UNROLL
          for (int i = 0; i < n; ++i) F[i] += G0[a][i] * lambda[a];
        }
        constrained_newton_update(m, q0, h, A, F, G0, v, lambda);
      }
    }
    return new_state(m, q0, p0, v, lambda, G0, h, hh, tm, s);
  }

  /// F(v) = p0 + (h/2) L_q(mid, v) - L_v(mid, v) [+ (h/2) F_ext] and A = dF/dv in one pass: v
  /// seeded as n dual variables, mid = q0 + (h/2) v.
  ///
  /// A = -L_vv + (h/2)(L_qv - L_qv^T) + (h^2/4) L_qq: -A has the symmetric part
  /// M - (h^2/4) L_qq (M = L_vv, positive definite for a mechanical L; the correction small at
  /// the documented steps) and an O(h) skew part. Gaussian elimination without pivoting is stable
  /// for a matrix with positive definite symmetric part: its pivots are bounded below by that
  /// part's smallest eigenvalue.
  template <class M>
  VIGOR_HD VIGOR_INLINE static void residual_and_jacobian(const M& m, const Vec<Real, M::dof>& q0,
                                                          const Vec<Real, M::dof>& p0,
                                                          const Vec<Real, M::dof>& v, Real hh,
                                                          Real tm, Vec<Real, M::dof>& F,
                                                          Mat<Real, M::dof>& A) {
    constexpr int n = M::dof;
    using D = Dual<Real, n>;
    Vec<D, n> vd, md, Lq, Lv;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      vd[i] = D::variable(v[i], i);
      md[i] = q0[i] + hh * vd[i];
    }
    lagrangian_gradient(m, md, vd, Lq, Lv);
    Vec<D, n> Fd;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) Fd[i] = p0[i] + hh * Lq[i] - Lv[i];
    if constexpr (ForcedModel<M>) {
      const Vec<D, n> fe = external_force_of(m, md, vd, D(tm));
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) Fd[i] += hh * fe[i];
    }
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      F[i] = Fd[i].v;
      VIGOR_UNROLL
      for (int j = 0; j < n; ++j) A[i][j] = Fd[i].d[j];
    }
  }

  /// One Newton update of (v, lambda) on [F; g] for a constrained model, F including
  /// G0^T lambda: [A  G0^T; h G1  0] [dv; dl] = [F; g1] with G1, g1 at q1 = q0 + h v. Schur
  /// complement: dv = y - Z dl with y = A^{-1} F, Z = A^{-1} G0^T, and (h G1 Z) dl = h G1 y - g1.
  /// S = h G1 A^{-1} G0^T ~ -h G M^{-1} G^T + O(h^2): definite for independent constraints
  /// (full-rank G), so it too needs no pivoting.
  template <class M, int k = constraint_count<M>>
  VIGOR_HD VIGOR_INLINE static void constrained_newton_update(
      const M& m, const Vec<Real, M::dof>& q0, Real h, const Mat<Real, M::dof>& A,
      const Vec<Real, M::dof>& F, const Real (&G0)[k][M::dof], Vec<Real, M::dof>& v,
      Vec<Real, k>& lambda) {
    constexpr int n = M::dof;
    Vec<Real, n> q1;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) q1[i] = q0[i] + h * v[i];
    Vec<Real, k> g1;
    Real G1[k][n];
    constraint_jacobian(m, q1, g1, G1);
    const Vec<Real, n> y = solve_nopivot(A, F);
    Vec<Real, n> Z[k];
    Mat<Real, k> S = schur_complement(A, G1, G0, Z);
    Vec<Real, k> rhs;
    VIGOR_UNROLL
    for (int a = 0; a < k; ++a) {
      rhs[a] = h * dot_row(G1[a], y) - g1[a];
      VIGOR_UNROLL
      for (int b = 0; b < k; ++b) S[a][b] = h * S[a][b];
    }
    const Vec<Real, k> dl = solve_nopivot(S, rhs);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      Real dv = y[i];
      VIGOR_UNROLL
      for (int b = 0; b < k; ++b) dv -= Z[b][i] * dl[b];
      v[i] -= dv;
    }
    VIGOR_UNROLL
    for (int a = 0; a < k; ++a) lambda[a] -= dl[a];
  }

  /// The final iterate: its residual and the new momentum from the same gradient, the RATTLE
  /// projection for a constrained model, and the new state in s. Returns the residual.
  template <class M, int kc>
  VIGOR_HD VIGOR_INLINE static Real new_state(const M& m, const Vec<Real, M::dof>& q0,
                                              const Vec<Real, M::dof>& p0,
                                              const Vec<Real, M::dof>& v,
                                              const Vec<Real, kc>& lambda,
                                              const Real (&G0)[kc][M::dof], Real h, Real hh,
                                              Real tm, Phase<Real, M::dof>& s) {
    constexpr int n = M::dof;
    constexpr int k = constraint_count<M>;
    Vec<Real, n> mid, q1, Lq, Lv;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      mid[i] = q0[i] + hh * v[i];
      q1[i] = q0[i] + h * v[i];
    }
    lagrangian_gradient(m, mid, v, Lq, Lv);
    Vec<Real, n> R, p1;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      R[i] = p0[i] + hh * Lq[i] - Lv[i];
      p1[i] = hh * Lq[i] + Lv[i];
    }
    if constexpr (ForcedModel<M>) {
      const Vec<Real, n> fe = external_force_of(m, mid, v, tm);
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) {
        R[i] += hh * fe[i];
        p1[i] += hh * fe[i];
      }
    }
    Real residual;
    if constexpr (k == 0) {
      residual = max_abs(R);
    } else {
      VIGOR_UNROLL
      for (int a = 0; a < k; ++a) {
        VIGOR_UNROLL
        for (int i = 0; i < n; ++i) R[i] += G0[a][i] * lambda[a];
      }
      Vec<Real, k> g1;
      Real G1[k][n];
      constraint_jacobian(m, q1, g1, G1);
      residual = max_of(max_abs(R), max_abs(g1));
      rattle_projection(m, q1, v, G1, p1);
    }
    s.q = q1;
    s.p = p1;
    return residual;
  }

  /// RATTLE projection p1 += G1^T mu with G1 v(q1, p1) = 0. A mechanical L is quadratic in v, so
  /// v(q1, p) = v - M1^{-1} (p(q1, v) - p) is exact for any v, with M1 = d^2L/dv^2(q1)
  /// (independent of v), and the condition is linear in mu: (G1 M1^{-1} G1^T) mu = -G1 v1. M1 is
  /// symmetric positive definite and G1 M1^{-1} G1^T is too for independent constraints, so
  /// neither solve needs pivoting.
  template <class M, int k>
  VIGOR_HD VIGOR_INLINE static void rattle_projection(const M& m, const Vec<Real, M::dof>& q1,
                                                      const Vec<Real, M::dof>& v,
                                                      const Real (&G1)[k][M::dof],
                                                      Vec<Real, M::dof>& p1) {
    constexpr int n = M::dof;
    Vec<Real, n> pv;
    Mat<Real, n> M1;
    momentum_and_mass(m, q1, v, pv, M1);
    const Vec<Real, n> v1 = v - solve_nopivot(M1, pv - p1);
    Vec<Real, n> W[k];
    const Mat<Real, k> S = schur_complement(M1, G1, G1, W);
    Vec<Real, k> rhs;
    VIGOR_UNROLL
    for (int a = 0; a < k; ++a) rhs[a] = -dot_row(G1[a], v1);
    const Vec<Real, k> mu = solve_nopivot(S, rhs);
    VIGOR_UNROLL
    for (int a = 0; a < k; ++a) {
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) p1[i] += G1[a][i] * mu[a];
    }
  }
};

}  // namespace vigor::kernels
