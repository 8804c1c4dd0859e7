/// @file symplectic_euler_a.hpp
/// @brief Symplectic Euler A: kick then drift.
///
///     p_{k+1} = p_k + h f(q_k)
///     q_{k+1} = q_k + h M^{-1} p_{k+1},                       f = -grad V
///
/// Variational: the position–momentum form of the DEL map of the quadrature discrete Lagrangian
/// L_d = h L((1 - alpha) q0 + alpha q1, (q1 - q0)/h) with alpha = 0 (Stern & Desbrun, "Discrete
/// geometric mechanics for variational time integrators", eq. (6) and §5.3). It is the symplectic
/// Euler method of Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §VI.3,
/// eq. (3.1), left variant (H_q at q_n, H_p at p_{n+1}); its adjoint is symplectic Euler B
/// (symplectic_euler_b.hpp), and B_{h/2} ∘ A_{h/2} is Störmer–Verlet.
/// Order 1, explicit, symplectic, not symmetric; conserves momentum maps of symmetries of V
/// exactly up to round-off; energy error bounded, O(h), without drift.
/// One force evaluation per step (the end force is cached in Phase::f).
#pragma once

#include <array>

#include "kernels/core/compensated.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

template <class Real>
struct SymplecticEulerA {
  static constexpr const char* kName = "symplectic_euler_a";
  static constexpr const char* kDescription = "symplectic Euler A (kick then drift, alpha = 0)";
  static constexpr const char* kReference =
      "Stern & Desbrun, eq. 6 with alpha = 0; Hairer, Lubich & Wanner, GNI, VI.3 eq. (3.1)";
  static constexpr int kOrder = 1;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = true;
  static constexpr bool kCompensable = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  static SymplecticEulerA from_options(const double*) { return {}; }

  /// PS is a Phase of Real or of a dual number over it (a tangent-map step, kernels/tangent.hpp;
  /// h and the coefficients stay plain, so no arithmetic is spent on their zero partials), or a
  /// CompensatedPhase (integrator.compensated).
  template <class M, class PS>
  VIGOR_HD VIGOR_INLINE void step(const M& m, PS& s, Real h) const {
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) add_product_to_p(s, i, h, s.f[i]);
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) add_product_to_q(s, i, h * m.inv_mass(i), s.p[i]);
    s.f = force(m, s.q);
  }
};

}  // namespace vigor::kernels
