/// @file newmark.hpp
/// @brief Newmark's method, explicit case beta = 0, any gamma.
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
/// momentum update is arranged as p_{1/2} + h (1/2 - gamma) f_k + h gamma f_{k+1}, so that
/// gamma = 1/2 performs Verlet's arithmetic. Any other gamma is only order 1 and NOT symplectic
/// (gamma > 1/2 dissipates energy, gamma < 1/2 pumps it in): a negative control. kOrder = 2 and
/// kSymplectic = true describe the default gamma = 1/2 only.
///
/// beta is accepted and stored (option "beta", default 0) but this step implements beta = 0
/// only; the host rejects beta != 0 (the implicit case, symplectic for gamma = 1/2 in the shifted
/// variable x = q + beta h^2 M^{-1} grad V(q), is a separate integrator).
/// Explicit; one force evaluation per step (the end force is cached in Phase::f).
/// References: N. M. Newmark, J. Eng. Mech. Div. ASCE 85 (1959) 67–94; Marsden & West 2001, Acta
/// Numerica, §2.6 (Newmark as a variational integrator; gamma = 1/2, beta = 0 from the L_d above,
/// §1.1), and vigor's SCIENCE.md §1.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

template <class Real>
struct NewmarkExplicit {
  static constexpr const char* kName = "newmark";
  static constexpr const char* kDescription =
      "Newmark, explicit (beta = 0); gamma = 1/2 is Verlet, other gamma order 1, not symplectic";
  static constexpr const char* kReference =
      "Newmark 1959; Marsden & West 2001, Acta Numerica, sec. 2.6";
  static constexpr int kOrder = 2;           ///< for gamma = 1/2 only (else 1)
  static constexpr bool kSymplectic = true;  ///< for gamma = 1/2 only
  static constexpr bool kExplicit = true;
  static constexpr std::array<ParamSpec, 2> kOptions{{
      {"gamma", 0.5, Rule::kFinite,
       "velocity weight of the end acceleration; 1/2: Verlet (order 2, symplectic)"},
      {"beta", 0.0, Rule::kNonNegative,
       "position weight of the end acceleration; only 0 (explicit) is implemented"},
  }};

  Real gamma;  ///< velocity-update weight of the new force
  Real beta;   ///< stored only; step() implements beta = 0

  static NewmarkExplicit from_options(const double* v) { return {Real(v[0]), Real(v[1])}; }

  template <class M>
  VIGOR_HD VIGOR_INLINE void step(const M& m, Phase<Real, M::dof>& s, Real h) const {
    const Real hh = Real(0.5) * h;
    const Real w0 = h * (Real(0.5) - gamma);  // p_{k+1} - p_{1/2} = w0 f_k + w1 f_{k+1}
    const Real w1 = h * gamma;
    Vec<Real, M::dof> f0 = s.f;
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) s.p[i] += hh * f0[i];
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) s.q[i] += h * m.inv_mass(i) * s.p[i];
    s.f = force(m, s.q);
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) s.p[i] = s.p[i] + w0 * f0[i] + w1 * s.f[i];
  }
};

}  // namespace vigor::kernels
