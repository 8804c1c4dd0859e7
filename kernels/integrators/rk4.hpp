/// @file rk4.hpp
/// @brief Classical fourth-order Runge–Kutta on (q, p): a non-symplectic high-order control.
///
/// For y = (q, p), y' = F(y) = (M^{-1} p, f(q)), f = -grad V:
///
///     k1 = F(y_k)                    (k1's force is the cached Phase::f)
///     k2 = F(y_k + (h/2) k1)
///     k3 = F(y_k + (h/2) k2)
///     k4 = F(y_k + h k3)
///     y_{k+1} = y_k + (h/6)(k1 + 2 k2 + 2 k3 + k4)
///
/// Order 4, explicit, NOT symplectic and not symmetric: the energy error drifts — for oscillatory
/// problems a slow monotone loss of energy, linear in time (the numerical damping of Marsden &
/// West 2001, Fig. 1), and angular momentum (quadratic) drifts too although linear momentum maps
/// are conserved. Kept as the control that a high order is not structure preservation.
/// Four force evaluations per step (k2, k3, k4 and the end force cached for the next step's k1).
///
/// On a Lie group (rigid_body_so3, kirchhoff_se3) the same tableau runs on the ambient ODE
/// x' = F(x) of the stored components (the model's StateOps::rates: the attitude matrix as nine
/// numbers, dR/dt = R hat(Omega), and the body momenta). It does not keep R orthogonal (the
/// defect grows like t h^4) nor the Casimirs: the non-symplectic control of Bou-Rabee 2007,
/// thesis, §6.6 (Fig. 6.6.1's RK4).
/// On a non-separable or forced (q, p) model (a Lagrangian L(q, v), external forces F(q, v, t)) the
/// tableau runs on Hamilton's equations q' = v(q, p), p' = dL/dq(q, v) + F(q, v, t) with v from the
/// Legendre transform (kernels/core/mechanics.hpp's phase_rates), at t, t + h/2, t + h: the
/// unreduced non-symplectic control of Jalnapurkar, Leok, Marsden & West (seed 002, Fig. 7).
/// References: W. Kutta, Z. Math. Phys. 46 (1901) 435–453; Hairer, Nørsett & Wanner, Solving ODEs
/// I, 2nd ed., §II.1 (the classical RK4 tableau); Marsden & West 2001, Acta Numerica, §1.1, Fig. 1.
#pragma once

#include <array>
#include <type_traits>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/state.hpp"

namespace vigor::kernels {

template <class Real>
struct RungeKutta4 {
  static constexpr const char* kName = "rk4";
  static constexpr const char* kDescription =
      "classical 4th-order Runge-Kutta (non-symplectic control)";
  static constexpr const char* kReference = "Kutta 1901; Hairer, Norsett & Wanner I, sec. II.1";
  static constexpr int kOrder = 4;
  static constexpr bool kSymplectic = false;
  static constexpr bool kExplicit = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};
  static constexpr const char* kRequires =
      "a (q, p) model without constraints (separable, Lagrangian or forced), or a body on a Lie "
      "group (rigid_body_so3, kirchhoff_se3)";

  static RungeKutta4 from_options(const double*) { return {}; }

  /// Unconstrained (q, p) models, and Lie-group models through their ambient rates.
  template <class M>
  static constexpr bool supports() {
    return (PhaseModel<M> && !ConstrainedModel<M>) || LieGroupStateModel<M>;
  }

  /// The tangent map of the Lagrangian path differentiates phase_rates, itself forward AD of L:
  /// compiled up to 2 dof, as for midpoint (kernels/integrators/protocol.hpp).
  template <class M>
  static constexpr bool tangent_affordable() {
    return !LagrangianModel<M> || M::dof <= 2;
  }

  template <class M>
  VIGOR_HD VIGOR_INLINE void step(const M& m, Phase<Real, M::dof>& s, Real h) const {
    constexpr int n = M::dof;
    const Real hh = Real(0.5) * h;
    const Real h6 = h / Real(6);
    // Stage 1: k1 = (M^{-1} p_k, f(q_k)).
    Vec<Real, n> kq1, kq2, kq3, kq4;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) kq1[i] = m.inv_mass(i) * s.p[i];
    const Vec<Real, n> kp1 = s.f;
    // Stage 2 at y_k + (h/2) k1.
    Vec<Real, n> y;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      y[i] = s.q[i] + hh * kq1[i];
      kq2[i] = m.inv_mass(i) * (s.p[i] + hh * kp1[i]);
    }
    const Vec<Real, n> kp2 = force(m, y);
    // Stage 3 at y_k + (h/2) k2.
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      y[i] = s.q[i] + hh * kq2[i];
      kq3[i] = m.inv_mass(i) * (s.p[i] + hh * kp2[i]);
    }
    const Vec<Real, n> kp3 = force(m, y);
    // Stage 4 at y_k + h k3.
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      y[i] = s.q[i] + h * kq3[i];
      kq4[i] = m.inv_mass(i) * (s.p[i] + h * kp3[i]);
    }
    const Vec<Real, n> kp4 = force(m, y);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      s.q[i] += h6 * (kq1[i] + Real(2) * (kq2[i] + kq3[i]) + kq4[i]);
      s.p[i] += h6 * (kp1[i] + Real(2) * (kp2[i] + kp3[i]) + kp4[i]);
    }
    s.f = force(m, s.q);
  }

  /// The step of a non-separable or forced model on Hamilton's equations (phase_rates), from time
  /// t. Phase::f is left untouched: no consumer reads it for such models (midpoint.hpp).
  template <class M>
  requires(PhaseModel<M> && !PlainSeparableModel<M>)
      VIGOR_HD VIGOR_INLINE void step(const M& m, Phase<Real, M::dof>& s, Real h, Real t) const {
    constexpr int n = M::dof;
    const Real hh = Real(0.5) * h;
    const Real h6 = h / Real(6);
    Vec<Real, n> kq1, kq2, kq3, kq4, kp1, kp2, kp3, kp4, q, p;
    phase_rates(m, s.q, s.p, t, kq1, kp1);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      q[i] = s.q[i] + hh * kq1[i];
      p[i] = s.p[i] + hh * kp1[i];
    }
    phase_rates(m, q, p, t + hh, kq2, kp2);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      q[i] = s.q[i] + hh * kq2[i];
      p[i] = s.p[i] + hh * kp2[i];
    }
    phase_rates(m, q, p, t + hh, kq3, kp3);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      q[i] = s.q[i] + h * kq3[i];
      p[i] = s.p[i] + h * kp3[i];
    }
    phase_rates(m, q, p, t + h, kq4, kp4);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      s.q[i] += h6 * (kq1[i] + Real(2) * (kq2[i] + kq3[i]) + kq4[i]);
      s.p[i] += h6 * (kp1[i] + Real(2) * (kp2[i] + kp3[i]) + kp4[i]);
    }
  }

  /// The ambient step of a Lie-group model: x = the stored components, x' = StateOps::rates.
  /// The state's own scalar (Real, or a dual over it for the tangent map) runs the arithmetic.
  template <class M, class S>
  requires LieGroupStateModel<M> VIGOR_HD VIGOR_INLINE void step(const M& m, S& s,
                                                                 Real step_h) const {
    using T = std::remove_cvref_t<decltype(s.Pi[0])>;
    using Ops = StateOps<M, T>;
    constexpr int N = Ops::kDim;
    const T h = T(step_h);
    const T hh = T(0.5) * h;
    const T h6 = h / T(6);
    Vec<T, N> x0, y, k1, k2, k3, k4;
    Ops::rates(m, s, T(0), x0, k1);
    S t;
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) y[i] = x0[i] + hh * k1[i];
    Ops::load(m, y.v, 1, t);
    Ops::rates(m, t, T(0), y, k2);
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) y[i] = x0[i] + hh * k2[i];
    Ops::load(m, y.v, 1, t);
    Ops::rates(m, t, T(0), y, k3);
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) y[i] = x0[i] + h * k3[i];
    Ops::load(m, y.v, 1, t);
    Ops::rates(m, t, T(0), y, k4);
    VIGOR_UNROLL
    for (int i = 0; i < N; ++i) y[i] = x0[i] + h6 * (k1[i] + T(2) * (k2[i] + k3[i]) + k4[i]);
    Ops::load(m, y.v, 1, s);
  }
};

}  // namespace vigor::kernels
