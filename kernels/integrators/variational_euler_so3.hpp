/// @file variational_euler_so3.hpp
/// @brief Lie-group variational Euler (Hamilton–Pontryagin, Cayley chart) for the free rigid body.
///
/// The discrete reduced Hamilton–Pontryagin principle with tau = cay (Bou-Rabee 2007, thesis,
/// (4.6.1)-(4.6.3), (4.6.7)-(4.6.8), §5.4) gives, with x_k = h Omega_k and Pi_k = I Omega_k,
///     R_{k+1} = R_k cay(h Omega_k)                                   (reconstruction)
///     (dcay^{-1}_{h Omega_k})^* Pi_k = (dcay^{-1}_{-h Omega_{k-1}})^* Pi_{k-1}   (discrete LP)
/// with (dcay^{-1}_x)^* mu = mu + (1/2) x × mu + (1/4)(x·mu) x (kernels/core/so3.hpp). The two
/// sides of the discrete LP equation are the left-trivialised discrete momenta -D1 L_d and D2 L_d
/// of L_d(R_k, R_{k+1}) = h ell(cay^{-1}(R_k^T R_{k+1}) / h), so the state carried from step to
/// step is their common value
///     m_k = (dcay^{-1}_{h Omega_k})^* I Omega_k = (dcay^{-1}_{-h Omega_{k-1}})^* I Omega_{k-1},
/// not Pi_k = I Omega_k. One step from (R_k, m_k):
///   1. solve (dcay^{-1}_{h Omega})^* I Omega = m_k for Omega (Newton, below);
///   2. R_{k+1} = R_k cay(h Omega),   m_{k+1} = (dcay^{-1}_{-h Omega})^* I Omega.
/// Subtracting, m_{k+1} - m_k = h (I Omega) × Omega exactly (the (x·mu) x terms cancel): Euler's
/// equations dPi/dt = Pi × Omega in the limit (the sign check of the chart; the thesis's (4.6.8)
/// is the same equation written in Pi_k).
///
/// Properties: order 2 in R and in m, which approximates Pi(t_k) to O(h^2) (Pi_k = I Omega_k is
/// the average over [t_k, t_{k+1}], Pi(t_k + h/2) + O(h^2)); hence a state stored with
/// m_0 = Pi(0) IS the discrete Legendre transform of the initial data. Treating the stored value
/// as Pi_0 = I Omega_0 instead would shift the momentum by half a step and drop the method to
/// first order (tests/test_lie_group.cpp). The map (R_k, m_k) -> (R_{k+1}, m_{k+1}) is
/// symplectic for the canonical form of T*SO(3) in left trivialisation (the same map in (R, Pi_k)
/// is not: its Jacobian determinant differs from 1); the spatial momentum R m is conserved
/// (discrete Noether: cay(x) (dcay^{-1}_{-x})^* = (dcay^{-1}_x)^*) to the Newton residual; R stays
/// orthogonal to round-off (cay maps into SO(3)); energy error O(h^2), bounded, no drift.
///
/// Newton: F(Omega) = I Omega + (h/2) Omega × I Omega + (h^2/4)(Omega·I Omega) Omega - m_k,
///     dF/dOmega = I + (h/2)(hat(Omega) I - hat(I Omega)) + (h^2/4)(2 Omega (I Omega)^T +
///                 (Omega·I Omega) E),
/// a FIXED number of iterations (no early exit) from the predictor
/// Omega_0 = I^{-1}(m_k - (h/2) w × m_k), w = I^{-1} m_k, which solves F = 0 to O(h^2)
/// (the plain I^{-1} m_k errs at O(h)). Newton then squares the relative error each iteration.
/// Measured on the HLW orbit (|Omega| <= 1.4; max residual over 200 steps, tests/test_lie_group):
///     h = 0.1:  1 iteration 3e-7,  2: 3e-15,  3: 2e-16 (round-off)
///     h = 0.2:  2e-5, 2e-11, 2e-16;     h = 0.4: 7e-3, 1e-7, 3e-15, 4: 2e-16,
/// hence the default kNewtonIterations = 3: round-off up to h |Omega| ~ 0.3, 1e-14 beyond.
/// The step returns max_i |F_i| at the final iterate, in units of angular momentum (one extra
/// evaluation of F, no Jacobian).
///
/// The exponential chart (variational_euler_so3_exp): the same discrete principle with tau = exp,
/// R_{k+1} = R_k exp(h Omega_k) and (dexp^{-1}_x)^* mu = mu + (1/2) x × mu + beta(|x|) x × (x × mu)
/// (kernels/core/so3.hpp). Same order, conservation and symplecticity (any chart with
/// tau(-x) = tau(x)^{-1} gives a symmetric, symplectic scheme; thesis §4.6), a different error
/// constant (measured in docs/lie_groups.md). Its Newton Jacobian is taken by forward AD of the
/// residual (Dual<Real, 3>): beta's derivative makes the closed form long.
/// Reference: N. Bou-Rabee, Hamilton–Pontryagin Integrators on Lie Groups, PhD thesis, Caltech
/// 2007, §4.6–4.8 and §5.4; vigor's SCIENCE.md §2.
#pragma once

#include <array>

#include "kernels/core/dual.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/so3.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

/// The step for either chart (so3::CayleyChart, so3::ExpChart); the named integrators follow.
template <class Real, class Chart>
struct VariationalEulerSO3Step {
  static constexpr int kOrder = 2;
  static constexpr bool kSymplectic = true;  ///< in (R, m), m the staggered discrete momentum
  static constexpr bool kExplicit = false;
  static constexpr bool kLaneSafe = true;  ///< fixed iterations, no data-dependent branch
  /// The CPU lanes take sub-blocks for the Cayley chart's Jacobian of plain numbers, one pack
  /// for the exponential chart's forward AD (bench/lane_shape; docs/performance.md).
  static constexpr bool kLaneSubBlocks = Chart::kAnalyticJacobian;
  static constexpr const char* kRequires = "the rigid body on SO(3) (rigid_body_so3)";
  static constexpr int kNewtonIterations = 3;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  int newton_iterations = kNewtonIterations;

  template <class M>
  static constexpr bool supports() {
    if constexpr (requires { M::kLieGroupSO3; })
      return bool(M::kLieGroupSO3);
    else
      return false;
  }

  /// F(Omega) = (dtau^{-1}_{h Omega})^* I Omega - mom (T = Real, or a dual over it for the AD
  /// Jacobian).
  template <class M, class T>
  VIGOR_HD VIGOR_INLINE static Vec<T, 3> residual(const M& m, const Vec<T, 3>& omega,
                                                  const Vec<Real, 3>& mom, Real h) {
    Vec<T, 3> f = Chart::inv_tangent_dual(T(h) * omega, m.body_momentum(omega));
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) f[i] = f[i] - T(mom[i]);
    return f;
  }

  /// F(Omega) and its Jacobian J = dF/dOmega.
  template <class M>
  VIGOR_HD VIGOR_INLINE static void newton_system(const M& m, const Vec<Real, 3>& omega,
                                                  const Vec<Real, 3>& mom, Real h, Vec<Real, 3>& F,
                                                  Mat<Real, 3>& J) {
    if constexpr (Chart::kAnalyticJacobian) {
      F = residual(m, omega, mom, h);
      J = cayley_jacobian(m, omega, h);
    } else {
      using D = Dual<Real, 3>;
      Vec<D, 3> od;
      VIGOR_UNROLL
      for (int i = 0; i < 3; ++i) od[i] = D::variable(omega[i], i);
      const Vec<D, 3> fd = residual(m, od, mom, h);
      VIGOR_UNROLL
      for (int i = 0; i < 3; ++i) {
        F[i] = fd[i].v;
        VIGOR_UNROLL
        for (int j = 0; j < 3; ++j) J[i][j] = fd[i].d[j];
      }
    }
  }

  /// J = I + (h/2)(hat(Omega) I - hat(mu)) + (h^2/4)(2 Omega mu^T + (Omega·mu) E), mu = I Omega:
  /// the Cayley chart's Jacobian. Its diagonal is I_i + O(h^2) and the (h/2) part has zero
  /// diagonal and entries Omega_j (I_l - I_j) etc.: for h|Omega| (I_max / I_min) below ~1 — far
  /// beyond where a second-order fixed step is accurate — it is a small perturbation of the
  /// positive diagonal I, whose leading minors stay away from zero, so no pivoting is needed.
  template <class M>
  VIGOR_HD VIGOR_INLINE static Mat<Real, 3> cayley_jacobian(const M& m, const Vec<Real, 3>& omega,
                                                            Real h) {
    const Real hh = Real(0.5) * h;
    const Real qh = Real(0.25) * h * h;
    const Vec<Real, 3> mu = m.body_momentum(omega);
    const Real om = dot(omega, mu);
    const Mat<Real, 3> hw = so3::hat(omega);
    const Mat<Real, 3> hm = so3::hat(mu);
    Mat<Real, 3> J;
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < 3; ++j)
        J[i][j] = hh * (hw[i][j] * m.inertia[j] - hm[i][j]) + qh * (Real(2) * omega[i] * mu[j]);
      J[i][i] = J[i][i] + m.inertia[i] + qh * om;
    }
    return J;
  }

  /// Solve (dtau^{-1}_{h Omega})^* I Omega = mom for Omega with newton_iterations Newton steps;
  /// returns max_i |F_i(Omega)| at the final iterate (angular momentum units).
  template <class M>
  VIGOR_HD VIGOR_INLINE Real solve_velocity(const M& m, const Vec<Real, 3>& mom, Real h,
                                            Vec<Real, 3>& omega) const {
    const Real hh = Real(0.5) * h;
    const Vec<Real, 3> w = m.body_velocity(mom);
    omega = m.body_velocity(mom - hh * so3::cross(w, mom));
    for (int it = 0; it < newton_iterations; ++it) {
      Vec<Real, 3> F;
      Mat<Real, 3> J;
      newton_system(m, omega, mom, h, F, J);
      omega -= solve_nopivot(J, F);
    }
    return max_abs(residual(m, omega, mom, h));
  }

  /// One step (R_k, m_k) -> (R_{k+1}, m_{k+1}); s.Pi holds m. Returns the final Newton residual
  /// max_i |F_i| in angular momentum units.
  template <class M>
  VIGOR_HD VIGOR_INLINE Real step(const M& m, SO3State<Real>& s, Real h, Real) const {
    Vec<Real, 3> omega;
    const Real r = solve_velocity(m, s.Pi, h, omega);
    const Vec<Real, 3> x = h * omega;
    s.R = so3::mul(s.R, Chart::map(x));
    s.Pi = Chart::inv_tangent_dual(Real(-1) * x, m.body_momentum(omega));
    return r;
  }
};

template <class Real>
struct VariationalEulerSO3 : VariationalEulerSO3Step<Real, so3::CayleyChart> {
  static constexpr const char* kName = "variational_euler_so3";
  static constexpr const char* kDescription =
      "Lie-group variational Euler (Hamilton-Pontryagin, Cayley chart) for the rigid body on SO(3)";
  static constexpr const char* kReference =
      "Bou-Rabee 2007, thesis, sec. 4.6 (4.6.1)-(4.6.3), (4.6.7)-(4.6.8), sec. 5.4";
  static VariationalEulerSO3 from_options(const double*) { return {}; }
};

template <class Real>
struct VariationalEulerSO3Exp : VariationalEulerSO3Step<Real, so3::ExpChart> {
  static constexpr const char* kName = "variational_euler_so3_exp";
  static constexpr const char* kDescription =
      "Lie-group variational Euler (Hamilton-Pontryagin, exponential chart) for the rigid body on "
      "SO(3)";
  static constexpr const char* kReference =
      "Bou-Rabee 2007, thesis, sec. 4.6 (tau = exp), sec. 5.4";
  static VariationalEulerSO3Exp from_options(const double*) { return {}; }
};

}  // namespace vigor::kernels
