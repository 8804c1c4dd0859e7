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

/// The classical tableau on x' = F(x, t) for N components, from x0 at time t over a step h: k1 =
/// F(x0, t) is given (the separable step's force is cached), `rates(y, t, k)` sets k = F(y, t) at
/// the other three stages. Returns x0 + (h/6)(k1 + 2 k2 + 2 k3 + k4). Written once for the three
/// kinds of state below, which differ only in how they evaluate F.
template <int N, class T, class Rates>
VIGOR_HD VIGOR_INLINE Vec<T, N> rk4_tableau(const Vec<T, N>& x0, const Vec<T, N>& k1, T t, T h,
                                            const Rates& rates) {
  const T hh = T(0.5) * h;
  const T h6 = h / T(6);
  Vec<T, N> y, k2, k3, k4;
  VIGOR_UNROLL
  for (int i = 0; i < N; ++i) y[i] = x0[i] + hh * k1[i];
  rates(y, t + hh, k2);
  VIGOR_UNROLL
  for (int i = 0; i < N; ++i) y[i] = x0[i] + hh * k2[i];
  rates(y, t + hh, k3);
  VIGOR_UNROLL
  for (int i = 0; i < N; ++i) y[i] = x0[i] + h * k3[i];
  rates(y, t + h, k4);
  VIGOR_UNROLL
  for (int i = 0; i < N; ++i) y[i] = x0[i] + h6 * (k1[i] + T(2) * (k2[i] + k3[i]) + k4[i]);
  return y;
}

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

  /// The step of a separable model: x = (q, p), F = (M^-1 p, f(q)), k1's force the cached Phase::f.
  template <class M>
  VIGOR_HD VIGOR_INLINE void step(const M& m, Phase<Real, M::dof>& s, Real h) const {
    constexpr int n = M::dof;
    Vec<Real, 2 * n> x0, k1;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      x0[i] = s.q[i];
      x0[n + i] = s.p[i];
      k1[i] = m.inv_mass(i) * s.p[i];
      k1[n + i] = s.f[i];
    }
    const auto rates = [&](const Vec<Real, 2 * n>& y, Real, Vec<Real, 2 * n>& k)
                           VIGOR_LAMBDA_INLINE {
                             Vec<Real, n> q;
                             VIGOR_UNROLL
                             for (int i = 0; i < n; ++i) q[i] = y[i];
                             const Vec<Real, n> f = force(m, q);
                             VIGOR_UNROLL
                             for (int i = 0; i < n; ++i) {
                               k[i] = m.inv_mass(i) * y[n + i];
                               k[n + i] = f[i];
                             }
                           };
    const Vec<Real, 2 * n> x = rk4_tableau(x0, k1, Real(0), h, rates);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      s.q[i] = x[i];
      s.p[i] = x[n + i];
    }
    s.f = force(m, s.q);
  }

  /// The step of a non-separable or forced model on Hamilton's equations (phase_rates), from time
  /// t. Phase::f is left untouched: no consumer reads it for such models (midpoint.hpp).
  template <class M>
  requires(PhaseModel<M> && !PlainSeparableModel<M>)
      VIGOR_HD VIGOR_INLINE void step(const M& m, Phase<Real, M::dof>& s, Real h, Real t) const {
    constexpr int n = M::dof;
    const auto rates = [&](const Vec<Real, 2 * n>& y, Real time, Vec<Real, 2 * n>& k)
                           VIGOR_LAMBDA_INLINE {
                             Vec<Real, n> q, p, kq, kp;
                             VIGOR_UNROLL
                             for (int i = 0; i < n; ++i) {
                               q[i] = y[i];
                               p[i] = y[n + i];
                             }
                             phase_rates(m, q, p, time, kq, kp);
                             VIGOR_UNROLL
                             for (int i = 0; i < n; ++i) {
                               k[i] = kq[i];
                               k[n + i] = kp[i];
                             }
                           };
    Vec<Real, 2 * n> x0, k1;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      x0[i] = s.q[i];
      x0[n + i] = s.p[i];
    }
    rates(x0, t, k1);
    const Vec<Real, 2 * n> x = rk4_tableau(x0, k1, t, h, rates);
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      s.q[i] = x[i];
      s.p[i] = x[n + i];
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
    const auto rates = [&](const Vec<T, N>& y, T, Vec<T, N>& k) VIGOR_LAMBDA_INLINE {
      S at;
      Vec<T, N> stored;
      Ops::load(m, y.v, 1, at);
      Ops::rates(m, at, T(0), stored, k);
    };
    Vec<T, N> x0, k1;
    Ops::rates(m, s, T(0), x0, k1);
    const Vec<T, N> x = rk4_tableau(x0, k1, T(0), T(step_h), rates);
    Ops::load(m, x.v, 1, s);
  }
};

}  // namespace vigor::kernels
