/// @file explicit_euler.hpp
/// @brief Explicit (forward) Euler on (q, p): a non-symplectic negative control.
///
///     q_{k+1} = q_k + h M^{-1} p_k
///     p_{k+1} = p_k + h f(q_k),                                f = -grad V
///
/// Order 1, explicit, NOT symplectic (the one-step Jacobian has det = 1 + h^2 k/m > 1 for the
/// harmonic oscillator): phase-space area expands and the energy grows without bound — the
/// amplifying pendulum of Stern & Desbrun's Fig. 2. Angular momentum is not conserved either: for
/// a central force f = -k(|q|) q (unit mass) L_{k+1} = q_{k+1} x p_{k+1} = (1 + h^2 k(|q_k|)) L_k.
/// Kept as a control for the structure-preservation tests.
/// One force evaluation per step (the end force is cached in Phase::f).
/// References: Stern & Desbrun, "Discrete geometric mechanics for variational time integrators",
/// §3.2 (explicit Euler); Hairer, Nørsett & Wanner, Solving ODEs I, 2nd ed., §II.1.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

template <class Real>
struct ExplicitEuler {
  static constexpr const char* kName = "explicit_euler";
  static constexpr const char* kDescription = "explicit Euler (non-symplectic control)";
  static constexpr const char* kReference = "Stern & Desbrun, sec. 3.2; Hairer, Norsett & Wanner I";
  static constexpr int kOrder = 1;
  static constexpr bool kSymplectic = false;
  static constexpr bool kExplicit = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  static ExplicitEuler from_options(const double*) { return {}; }

  template <class M>
  VIGOR_HD VIGOR_INLINE void step(const M& m, Phase<Real, M::dof>& s, Real h) const {
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) s.q[i] += h * m.inv_mass(i) * s.p[i];
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) s.p[i] += h * s.f[i];
    s.f = force(m, s.q);
  }
};

}  // namespace vigor::kernels
