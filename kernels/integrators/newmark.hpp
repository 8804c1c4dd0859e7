/// @file newmark.hpp
/// @brief Newmark's method (gamma, beta): explicit for beta = 0, implicit (Newton) for beta > 0.
///
/// Newmark (gamma, beta) in velocity form, M a = f(q) = -grad V(q), p = M v:
///
///     q_{k+1} = q_k + h v_k + h^2 [(1/2 - beta) a_k + beta a_{k+1}]
///     v_{k+1} = v_k + h [(1 - gamma) a_k + gamma a_{k+1}]
///
/// With beta = 0 the position update is explicit, and in momentum form this step computes
///
///     q_{k+1} = q_k + h M^{-1} (p_k + (h/2) f(q_k))
///     p_{k+1} = p_k + h [(1 - gamma) f(q_k) + gamma f(q_{k+1})].
///
/// gamma = 1/2 is Störmer–Verlet (the DEL map of the trapezoidal discrete Lagrangian
/// L_d = h [1/2 ((q1-q0)/h)^T M ((q1-q0)/h) - (V(q0) + V(q1))/2]): order 2, symplectic,
/// symmetric, momentum maps conserved to round-off, energy error bounded without drift. The
/// momentum update is arranged as p_{1/2} + h (1/2 - gamma) f_k + h gamma f_{k+1}, in fused
/// multiply-adds as Verlet's kicks and drift are, so that gamma = 1/2 performs Verlet's arithmetic
/// (the w0 = 0 term adds an exact zero). Any other gamma is only order 1 and NOT symplectic
/// (gamma > 1/2 dissipates energy, gamma < 1/2 pumps it in): a negative control. kOrder = 2 and
/// kSymplectic = true describe gamma = 1/2 only.
///
/// beta > 0: q_{k+1} is found by a fixed number of Newton iterations on
///     F(q1) = q1 - q0 - h v0 - h^2 [(1/2 - beta) a0 + beta a(q1)],
///     J     = I + h^2 beta M^{-1} Hess V(q1),
/// written for the correction d = q1 - q_pred from the explicit (beta = 0) position q_pred, which
/// is O(h^2 beta |a1 - a0|) = O(h^3) from q1: Newton's quadratic convergence then reaches
/// round-off (~1e-16) in two iterations for h <= 0.2 and in three for h <= 0.5 (Hénon–Heiles,
/// tests/test_implicit.cpp), hence kNewtonIterations = 3 with the documented range h <= 0.5 at
/// unit frequencies. The step returns the max-norm of F at the final iterate, in units
/// of position (0 when beta = 0: no Newton iterations are performed, and the arithmetic is the
/// explicit step's, bit for bit). With gamma = 1/2, beta > 0 the method is symplectic for a
/// non-standard form — it is Verlet in the shifted variable x = q + beta h^2 M^{-1} grad V(q) —
/// and order 2; gamma = 1/2, beta = 1/4 is the trapezoidal rule (average acceleration). kExplicit
/// is false because beta > 0 is implicit; the branch on beta is on a uniform option, never on
/// data, so the step stays lane-safe.
/// One force evaluation per step for beta = 0; for beta > 0 one force and one Hessian per Newton
/// iteration plus the final force. The end force is cached in Phase::f in both cases.
/// References: N. M. Newmark, J. Eng. Mech. Div. ASCE 85 (1959) 67–94; Marsden & West 2001, Acta
/// Numerica, §2.6 (Newmark as a variational integrator), and vigor's SCIENCE.md §1.
#pragma once

#include <array>

#include "kernels/core/arith.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

/// True when a uniform option is exactly zero. For a SIMD Pack every lane holds the same option,
/// so lane 0 speaks for all; plain and dual scalars compare their value.
template <class R>
VIGOR_HD VIGOR_INLINE bool uniform_option_is_zero(const R& x) {
  if constexpr (requires { x[0]; }) {
    return x[0] == 0;
  } else {
    return value_of(x) == 0;
  }
}

template <class Real>
struct Newmark {
  static constexpr const char* kName = "newmark";
  static constexpr const char* kDescription =
      "Newmark (gamma, beta); beta = 0 explicit (gamma = 1/2: Verlet), beta > 0 implicit "
      "(Newton); gamma != 1/2 is order 1, not symplectic";
  static constexpr const char* kReference =
      "Newmark 1959; Marsden & West 2001, Acta Numerica, sec. 2.6";
  static constexpr int kOrder = 2;           ///< for gamma = 1/2 only (else 1)
  static constexpr bool kSymplectic = true;  ///< for gamma = 1/2 only (beta > 0: shifted form)
  static constexpr bool kExplicit = false;   ///< explicit only when beta = 0
  static constexpr bool kLaneSafe = true;
  static constexpr int kNewtonIterations = 3;
  static constexpr std::array<ParamSpec, 2> kOptions{{
      {"gamma", 0.5, Rule::kFinite,
       "velocity weight of the end acceleration; 1/2: order 2, symplectic"},
      {"beta", 0.0, Rule::kNonNegative,
       "position weight of the end acceleration; 0: explicit (Verlet for gamma = 1/2), "
       "> 0: implicit (1/4: trapezoidal rule)"},
  }};

  Real gamma;  ///< velocity-update weight of the new force
  Real beta;   ///< position-update weight of the new force

  /// The chart in which the step is symplectic for the canonical form (SCIENCE.md §1): (x, p)
  /// with x = q + beta h^2 M^{-1} grad V(q). C is its Jacobian at s; the tangent diagnostics
  /// (kernels/tangent.hpp) measure the defect of the form C^T J C this step preserves.
  template <class M, class R>
  VIGOR_HD VIGOR_INLINE void symplectic_chart(const M& m, const Phase<R, M::dof>& s, R h,
                                              Mat<R, 2 * M::dof>& C) const {
    constexpr int n = M::dof;
    C = Mat<R, 2 * n>::identity();
    const R bh2 = R(value_of(beta)) * h * h;
    Mat<R, n> H;
    potential_hessian(m, s.q, H);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < n; ++j) C[i][j] += bh2 * m.inv_mass(i) * H[i][j];
    }
  }
  int newton_iterations = kNewtonIterations;

  static Newmark from_options(const double* v) { return {Real(v[0]), Real(v[1])}; }

  /// One step; returns the final Newton residual (units of position; 0 for beta = 0).
  template <class M>
  VIGOR_HD VIGOR_INLINE Real step(const M& m, Phase<Real, M::dof>& s, Real h, Real) const {
    constexpr int n = M::dof;
    const Real hh = Real(0.5) * h;
    const Real w0 = h * (Real(0.5) - gamma);  // p_{k+1} - p_{1/2} = w0 f_k + w1 f_{k+1}
    const Real w1 = h * gamma;
    const Vec<Real, n> f0 = s.f;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) s.p[i] = fma(hh, f0[i], s.p[i]);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) s.q[i] = fma(h * m.inv_mass(i), s.p[i], s.q[i]);
    Real residual = Real(0);
    if (!uniform_option_is_zero(beta)) {
      // s.q holds q_pred = q0 + h v0 + (h^2/2) a0; then F(q1) = d - h^2 beta M^{-1}(f(q1) - f0)
      // with d = q1 - q_pred.
      const Vec<Real, n> q_pred = s.q;
      const Real hb = h * h * beta;
      Vec<Real, n> g, F;
      for (int it = 0; it < newton_iterations; ++it) {
        Mat<Real, n> J;
        potential_gradient_hessian(m, s.q, g, J);
        VIGOR_UNROLL
        for (int i = 0; i < n; ++i) {
          const Real c = hb * m.inv_mass(i);
          F[i] = (s.q[i] - q_pred[i]) + c * (g[i] + f0[i]);
          VIGOR_UNROLL
          for (int j = 0; j < n; ++j) J[i][j] = c * J[i][j];
          J[i][i] += Real(1);
        }
        // J = I + h^2 beta M^{-1} Hess V: an O(h^2) perturbation of I, so no pivoting is needed.
        s.q -= solve_nopivot(J, F);
      }
      s.f = force(m, s.q);
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i)
        F[i] = (s.q[i] - q_pred[i]) - hb * m.inv_mass(i) * (s.f[i] - f0[i]);
      residual = max_abs(F);
    } else {
      s.f = force(m, s.q);
    }
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) s.p[i] = fma(w1, s.f[i], fma(w0, f0[i], s.p[i]));
    return residual;
  }
};

}  // namespace vigor::kernels
