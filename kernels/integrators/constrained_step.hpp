/// @file constrained_step.hpp
/// @brief What SHAKE and RATTLE share: the constrained kick–drift with its multiplier solve, and
/// the projection of a momentum onto the constraint's tangent space.
///
/// For a separable model (diagonal mass M, force f = -grad V) with constraints g(q) = 0, G = dg/dq:
///
///     p_{1/2} = p_0 + (h/2) (f(q_0) - G(q_0)^T lambda)
///     q_1     = q_0 + h M^{-1} p_{1/2},       g(q_1) = 0  (k equations for the k multipliers).
///
/// In the scaled multiplier nu = (h^2/2) lambda (position units, no division by h^2):
/// q_1(nu) = q_free - W nu with q_free = q_0 + h M^{-1} (p_0 + (h/2) f(q_0)) (the unconstrained
/// Verlet drift) and W = M^{-1} G(q_0)^T. Newton on F(nu) = g(q_1(nu)) from nu = 0, whose exact
/// Jacobian is -G(q_1) W (= -(h^2/2) G(q_1) M^{-1} G(q_0)^T per lambda; G by AD of g), so it
/// converges quadratically: the predictor q_free misses the manifold by O(h^2) (g(q_0) = 0 kills
/// the O(1) term, and the O(h) term h G(q_0) M^{-1} p_0 vanishes for RATTLE's tangent momenta and
/// is O(h^2) for SHAKE's), then each iteration squares the relative error. A FIXED number of
/// iterations (no test on the residual), so the step runs unchanged in SIMD lanes and GPU warps.
#pragma once

#include <array>
#include <type_traits>

#include "kernels/core/config.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/lu.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/core/vec.hpp"

namespace vigor::kernels {

/// What SHAKE and RATTLE integrate: diagonal mass and potential, holonomic constraints, no forcing.
template <class M>
concept ConstrainedSeparableModel = SeparableModel<M> && ConstrainedModel<M> && !ForcedModel<M>;

/// A = G_a M^{-1} G_b^T (k x k) for constraint Jacobians G_a, G_b (k x n).
template <class M, class Real>
VIGOR_HD VIGOR_INLINE Mat<Real, constraint_count<M>> constraint_gram(
    const M& m, const Real (&Ga)[constraint_count<M>][M::dof],
    const Real (&Gb)[constraint_count<M>][M::dof]) {
  constexpr int n = M::dof;
  constexpr int k = constraint_count<M>;
  Mat<Real, k> A;
  VIGOR_UNROLL
  for (int a = 0; a < k; ++a) {
    VIGOR_UNROLL
    for (int b = 0; b < k; ++b) {
      Real s = Ga[a][0] * m.inv_mass(0) * Gb[b][0];
      VIGOR_UNROLL
      for (int i = 1; i < n; ++i) s += Ga[a][i] * m.inv_mass(i) * Gb[b][i];
      A[a][b] = s;
    }
  }
  return A;
}

/// The constrained kick–drift: on entry s = (q_0, p_0, f(q_0)); on exit s.q = q_1 (the final
/// Newton iterate) and s.p = p_{1/2}; s.f is left at f(q_0). `iterations` Newton iterations
/// (uniform over the ensemble).
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void constrained_kick_drift(const M& m, Phase<Real, M::dof>& s, Real h,
                                                  int iterations) {
  constexpr int n = M::dof;
  constexpr int k = constraint_count<M>;
  Vec<Real, k> g;
  Real G0[k][n];
  constraint_jacobian(m, s.q, g, G0);

  const Real hh = Real(0.5) * h;
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) s.p[i] += hh * s.f[i];
  Vec<Real, n> q_free;
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) q_free[i] = s.q[i] + h * m.inv_mass(i) * s.p[i];

  Vec<Real, k> nu = Vec<Real, k>::filled(Real(0));
  Vec<Real, n> q1 = q_free;
  for (int it = 0; it < iterations; ++it) {
    Real G1[k][n];
    constraint_jacobian(m, q1, g, G1);
    // F(nu) = g(q_free - W nu), F' = -G(q_1) M^{-1} G(q_0)^T: nu += (G1 M^{-1} G0^T)^{-1} g.
    // No pivoting: this matrix is within O(h) of G M^{-1} G^T, symmetric positive definite for
    // independent constraints, whose leading minors stay away from zero (solve_nopivot).
    nu += solve_nopivot(constraint_gram(m, G1, G0), g);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      Real w = G0[0][i] * nu[0];
      VIGOR_UNROLL
      for (int a = 1; a < k; ++a) w += G0[a][i] * nu[a];
      q1[i] = q_free[i] - m.inv_mass(i) * w;
    }
  }
  // p_{1/2} = p_0 + (h/2) f_0 - G0^T nu / h: the momentum that drifts q_0 to q_1 in time h.
  const Real inv_h = Real(1) / h;
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) {
    Real w = G0[0][i] * nu[0];
    VIGOR_UNROLL
    for (int a = 1; a < k; ++a) w += G0[a][i] * nu[a];
    s.p[i] -= w * inv_h;
  }
  s.q = q1;
}

/// Project p onto the tangent space at q, {p : G(q) M^{-1} p = 0}, along G(q)^T:
/// p <- p - G^T mu with (G M^{-1} G^T) mu = G M^{-1} p (the M^{-1}-orthogonal projection, RATTLE's
/// second multiplier). G is the constraint Jacobian at q. No pivoting: G M^{-1} G^T is symmetric
/// positive definite for independent constraints.
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void project_momentum(const M& m,
                                            const Real (&G)[constraint_count<M>][M::dof],
                                            Vec<Real, M::dof>& p) {
  constexpr int n = M::dof;
  constexpr int k = constraint_count<M>;
  Vec<Real, k> r;
  VIGOR_UNROLL
  for (int a = 0; a < k; ++a) {
    Real t = G[a][0] * m.inv_mass(0) * p[0];
    VIGOR_UNROLL
    for (int i = 1; i < n; ++i) t += G[a][i] * m.inv_mass(i) * p[i];
    r[a] = t;
  }
  const Vec<Real, k> mu = solve_nopivot(constraint_gram(m, G, G), r);
  VIGOR_UNROLL
  for (int i = 0; i < n; ++i) {
    Real w = G[0][i] * mu[0];
    VIGOR_UNROLL
    for (int a = 1; a < k; ++a) w += G[a][i] * mu[a];
    p[i] -= w;
  }
}

/// The second half kick p += (h/2) f(q1), refreshing the cached force (first-same-as-last).
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void constrained_end_kick(const M& m, Phase<Real, M::dof>& s, Real h) {
  s.f = force(m, s.q);
  const Real hh = Real(0.5) * h;
  VIGOR_UNROLL
  for (int i = 0; i < M::dof; ++i) s.p[i] += hh * s.f[i];
}

/// What SHAKE and RATTLE share besides their steps: both are second order, symplectic, implicit
/// only in the k multipliers (a fixed count of Newton iterations, no data-dependent branch), for
/// separable models with holonomic constraints.
struct ConstrainedSplittingTraits {
  static constexpr int kOrder = 2;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = false;
  static constexpr bool kLaneSafe = true;
  static constexpr int kNewtonIterations = 4;
  /// On the CPU lanes the step is called out of line (integrator_step_out_of_line): inlined into
  /// the driver, the constraint Jacobian's duals (K + 1 numbers of a block's registers each) went
  /// through memory.
  static constexpr bool kStepOutOfLine = true;
  static constexpr const char* kRequires = "a separable model with holonomic constraints";
  static constexpr std::array<ParamSpec, 0> kOptions{};

  template <class M>
  static constexpr bool supports() {
    return ConstrainedSeparableModel<M>;
  }
};

}  // namespace vigor::kernels
