/// @file stormer_verlet.hpp
/// @brief Störmer–Verlet, velocity form (kick–drift–kick).
///
///     p_{1/2} = p_k + (h/2) f(q_k)
///     q_{k+1} = q_k + h M^{-1} p_{1/2}
///     p_{k+1} = p_{1/2} + (h/2) f(q_{k+1}),          f = -grad V
///
/// Variational: the DEL map of the trapezoidal discrete Lagrangian
/// L_d = h [ 1/2 ((q1-q0)/h)^T M ((q1-q0)/h) - (V(q0) + V(q1))/2 ] (Marsden & West 2001, §2.6;
/// equal to 2-stage Lobatto IIIA–IIIB). Order 2, explicit, symplectic, symmetric (time-reversible);
/// conserves momentum maps of symmetries of V exactly up to round-off; energy error bounded,
/// O(h^2), without drift. One force evaluation per step (the end force is cached in Phase::f).
#pragma once

#include <array>

#include "kernels/core/compensated.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

template <class Real>
struct StormerVerlet {
  static constexpr const char* kName = "verlet";
  static constexpr const char* kDescription = "Stormer-Verlet, velocity form (kick-drift-kick)";
  static constexpr const char* kReference = "Marsden & West 2001, Acta Numerica, sec. 2.6";
  static constexpr int kOrder = 2;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = true;
  static constexpr bool kCompensable = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  static StormerVerlet from_options(const double*) { return {}; }

  /// PS is a Phase of Real or of a dual number over it (a tangent-map step, kernels/tangent.hpp;
  /// h and the coefficients stay plain, so no arithmetic is spent on their zero partials), or a
  /// CompensatedPhase (integrator.compensated).
  template <class M, class PS>
  VIGOR_HD VIGOR_INLINE void step(const M& m, PS& s, Real h) const {
    const Real hh = Real(0.5) * h;
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) add_product_to_p(s, i, hh, s.f[i]);
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) add_product_to_q(s, i, h * m.inv_mass(i), s.p[i]);
    s.f = force(m, s.q);
    VIGOR_UNROLL
    for (int i = 0; i < M::dof; ++i) add_product_to_p(s, i, hh, s.f[i]);
  }
};

}  // namespace vigor::kernels
