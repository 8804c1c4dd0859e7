/// @file variational_euler_se3.hpp
/// @brief Lie-group variational Euler (Hamilton–Pontryagin, Cayley chart) on SE(3): the rigid
/// body in ideal fluid (Kirchhoff's equations).
///
/// The discrete reduced Hamilton–Pontryagin principle with tau = cay on SE(3) (Bou-Rabee 2007,
/// thesis, §6.4, (6.4.2)-(6.4.6)) with xi_k = (Omega_k, v_k), mu_k = ell'(xi_k) = (I Omega_k,
/// M v_k) for ell(Omega, v) = 1/2 Omega^T I Omega + 1/2 v^T M v gives
///     g_{k+1} = g_k cay(h xi_k):  B_{k+1} = B_k cay(h Omega_k),
///                                 x_{k+1} = x_k + B_k (E - h hat Omega_k / 2)^{-1} h v_k,
///     (dcay^{-1}_{h xi_k})^* mu_k = (dcay^{-1}_{-h xi_{k-1}})^* mu_{k-1}      (discrete LP)
/// with the dual map of kernels/core/se3.hpp; written out in (Pi, p) it is the thesis's
/// (6.4.5)-(6.4.6) term by term. As on SO(3) (variational_euler_so3.hpp) the two sides are the
/// left-trivialised discrete momenta -D1 L_d and D2 L_d, and the state carries their common value
///     m_k = (dcay^{-1}_{h xi_k})^* mu_k = (dcay^{-1}_{-h xi_{k-1}})^* mu_{k-1}.
/// One step from (g_k, m_k):
///   1. solve (dcay^{-1}_{h xi})^* ell'(xi) = m_k for xi = (Omega, v) (Newton, 6x6, below);
///   2. g_{k+1} = g_k cay(h xi),   m_{k+1} = (dcay^{-1}_{-h xi})^* ell'(xi).
/// Subtracting, m_{k+1} - m_k = h (Pi × Omega + P × v, P × Omega) exactly: Kirchhoff's equations
/// dPi/dt = Pi × Omega + P × v, dP/dt = P × Omega in the limit (thesis (6.2.4)-(6.2.5)).
///
/// Properties (tests/test_lie_group_se3.cpp): order 2 in g and in m (m_0 = the body momenta at
/// t = 0 is the discrete Legendre transform to O(h^2), as on SO(3)); the map (g_k, m_k) ->
/// (g_{k+1}, m_{k+1}) is symplectic for the canonical form of T*SE(3) in left trivialisation;
/// m_{k+1} = Ad*_{cay(h xi)} m_k, so the spatial momenta (B Pi + x × B P, B P) and the Casimirs
/// Pi·P and P·P are conserved to the Newton residual and round-off; B stays orthogonal to
/// round-off; energy error O(h^2), bounded.
///
/// Newton on F(xi) = (dcay^{-1}_{h xi})^* ell'(xi) - m with Pi = I Omega, P = M v,
/// b = P + (h/2) Omega × P:
///     F_P  = b - m_P,
///     F_Pi = I Omega + (h/2) Omega × I Omega + (h^2/4)(Omega·I Omega) Omega + (h/2) v × b - m_Pi,
/// Jacobian blocks
///     dF_P/dOmega  = -(h/2) hat P,           dF_P/dv  = M + (h/2) hat Omega M,
///     dF_Pi/dOmega = J_SO(3) - (h^2/4) hat v hat P,
///     dF_Pi/dv     = -(h/2) hat b + (h/2) hat v (M + (h/2) hat Omega M),
/// J_SO(3) as in variational_euler_so3.hpp. Its diagonal is (I, M) + O(h^2) and the rest O(h |xi|
/// |mu|): no pivoting while h |xi| is well below 1. A FIXED number of iterations from the
/// predictor xi_0 = ell'^{-1}(m - (h/2)(w × m_Pi + u × m_P, w × m_P)), (w, u) = ell'^{-1}(m),
/// which solves F = 0 to O(h^2); Newton then squares the error. Measured on the Kirchhoff test
/// orbit (tests/test_lie_group_se3.cpp, |xi| <= 3): the default 3 iterations reach round-off up to
/// h = 0.05. The step returns max_i |F_i| at the final iterate (momentum units).
///
/// The exponential chart (variational_euler_se3_exp): tau = exp on SE(3), g_{k+1} = g_k exp(h xi_k)
/// and the dual of dexp^{-1} (kernels/core/se3.hpp); same properties, another error constant
/// (docs/lie_groups.md). Its Newton Jacobian is taken by forward AD of the residual
/// (Dual<Real, 6>).
/// Reference: N. Bou-Rabee, Hamilton–Pontryagin Integrators on Lie Groups, PhD thesis, Caltech
/// 2007, §6.2 and §6.4; vigor's SCIENCE.md §2.
#pragma once

#include <array>

#include "kernels/core/dual.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/se3.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::kernels {

/// The step for either chart (se3::CayleyChart, se3::ExpChart); the named integrators follow.
template <class Real, class Chart>
struct VariationalEulerSE3Step {
  static constexpr int kOrder = 2;
  static constexpr bool kSymplectic = true;  ///< in (g, m), m the staggered discrete momenta
  static constexpr bool kExplicit = false;
  static constexpr bool kLaneSafe = true;  ///< fixed iterations, no data-dependent branch
  /// The CPU lanes take sub-blocks for the Cayley chart's Jacobian of plain numbers, one pack
  /// for the exponential chart's forward AD (bench/lane_shape; docs/performance.md).
  static constexpr bool kLaneSubBlocks = Chart::kAnalyticJacobian;
  static constexpr const char* kRequires = "a rigid body on SE(3) (kirchhoff_se3)";
  static constexpr int kNewtonIterations = 3;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  int newton_iterations = kNewtonIterations;

  template <class M>
  static constexpr bool supports() {
    if constexpr (requires { M::kLieGroupSE3; })
      return bool(M::kLieGroupSE3);
    else
      return false;
  }

  /// F(xi) = (dtau^{-1}_{h xi})^* ell'(xi) - (m_Pi, m_P), as (F_Pi, F_P) (T = Real, or a dual
  /// over it for the AD Jacobian).
  template <class M, class T>
  VIGOR_HD VIGOR_INLINE static void residual(const M& m, const Vec<T, 3>& omega, const Vec<T, 3>& v,
                                             const Vec<Real, 3>& m_pi, const Vec<Real, 3>& m_p,
                                             Real h, Vec<T, 3>& f_pi, Vec<T, 3>& f_p) {
    Chart::inv_tangent_dual(T(h) * omega, T(h) * v, m.angular_momentum(omega), m.linear_momentum(v),
                            f_pi, f_p);
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) {
      f_pi[i] = f_pi[i] - T(m_pi[i]);
      f_p[i] = f_p[i] - T(m_p[i]);
    }
  }

  /// F(xi) as one 6-vector (F_Pi, F_P) and its Jacobian dF/d(Omega, v).
  template <class M>
  VIGOR_HD VIGOR_INLINE static void newton_system(const M& m, const Vec<Real, 3>& omega,
                                                  const Vec<Real, 3>& v, const Vec<Real, 3>& m_pi,
                                                  const Vec<Real, 3>& m_p, Real h, Vec<Real, 6>& F,
                                                  Mat<Real, 6>& J) {
    if constexpr (Chart::kAnalyticJacobian) {
      Vec<Real, 3> f_pi, f_p;
      residual(m, omega, v, m_pi, m_p, h, f_pi, f_p);
      VIGOR_UNROLL
      for (int i = 0; i < 3; ++i) {
        F[i] = f_pi[i];
        F[3 + i] = f_p[i];
      }
      J = jacobian(m, omega, v, h);
    } else {
      using D = Dual<Real, 6>;
      Vec<D, 3> od, vd, f_pi, f_p;
      VIGOR_UNROLL
      for (int i = 0; i < 3; ++i) {
        od[i] = D::variable(omega[i], i);
        vd[i] = D::variable(v[i], 3 + i);
      }
      residual(m, od, vd, m_pi, m_p, h, f_pi, f_p);
      VIGOR_UNROLL
      for (int i = 0; i < 3; ++i) {
        F[i] = f_pi[i].v;
        F[3 + i] = f_p[i].v;
        VIGOR_UNROLL
        for (int j = 0; j < 6; ++j) {
          J[i][j] = f_pi[i].d[j];
          J[3 + i][j] = f_p[i].d[j];
        }
      }
    }
  }

  /// The 6x6 Jacobian dF/d(Omega, v) of the file comment (the Cayley chart).
  template <class M>
  VIGOR_HD VIGOR_INLINE static Mat<Real, 6> jacobian(const M& m, const Vec<Real, 3>& omega,
                                                     const Vec<Real, 3>& v, Real h) {
    const Real hh = Real(0.5) * h;
    const Real qh = Real(0.25) * h * h;
    const Vec<Real, 3> pi = m.angular_momentum(omega);
    const Vec<Real, 3> p = m.linear_momentum(v);
    const Vec<Real, 3> wp = so3::cross(omega, p);
    Vec<Real, 3> b;
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) b[i] = p[i] + hh * wp[i];
    const Real om = dot(omega, pi);
    const Mat<Real, 3> hw = so3::hat(omega);
    const Mat<Real, 3> hpi = so3::hat(pi);
    const Mat<Real, 3> hp = so3::hat(p);
    const Mat<Real, 3> hv = so3::hat(v);
    const Mat<Real, 3> hb = so3::hat(b);
    // dF_P/dv = M + (h/2) hat Omega M, needed twice.
    Mat<Real, 3> dbdv;
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < 3; ++j) dbdv[i][j] = hh * hw[i][j] * m.mass[j];
      dbdv[i][i] = dbdv[i][i] + m.mass[i];
    }
    const Mat<Real, 3> vp = so3::mul(hv, hp);
    const Mat<Real, 3> vdb = so3::mul(hv, dbdv);
    Mat<Real, 6> J;
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < 3; ++j) {
        J[i][j] = hh * (hw[i][j] * m.inertia[j] - hpi[i][j]) + qh * (Real(2) * omega[i] * pi[j]) -
                  qh * vp[i][j];
        J[i][3 + j] = hh * (vdb[i][j] - hb[i][j]);
        J[3 + i][j] = Real(-1) * hh * hp[i][j];
        J[3 + i][3 + j] = dbdv[i][j];
      }
      J[i][i] = J[i][i] + m.inertia[i] + qh * om;
    }
    return J;
  }

  /// Solve (dcay^{-1}_{h xi})^* ell'(xi) = (m_Pi, m_P) for xi = (Omega, v) with
  /// newton_iterations Newton steps; returns max_i |F_i| at the final iterate.
  template <class M>
  VIGOR_HD VIGOR_INLINE Real solve_velocity(const M& m, const Vec<Real, 3>& m_pi,
                                            const Vec<Real, 3>& m_p, Real h, Vec<Real, 3>& omega,
                                            Vec<Real, 3>& v) const {
    const Real hh = Real(0.5) * h;
    const Vec<Real, 3> w = m.angular_velocity(m_pi);
    const Vec<Real, 3> u = m.linear_velocity(m_p);
    const Vec<Real, 3> wp = so3::cross(w, m_p);
    omega = m.angular_velocity(m_pi - hh * (so3::cross(w, m_pi) + so3::cross(u, m_p)));
    v = m.linear_velocity(m_p - hh * wp);
    Vec<Real, 3> f_pi, f_p;
    for (int it = 0; it < newton_iterations; ++it) {
      Vec<Real, 6> F;
      Mat<Real, 6> J;
      newton_system(m, omega, v, m_pi, m_p, h, F, J);
      const Vec<Real, 6> d = solve_nopivot(J, F);
      VIGOR_UNROLL
      for (int i = 0; i < 3; ++i) {
        omega[i] = omega[i] - d[i];
        v[i] = v[i] - d[3 + i];
      }
    }
    residual(m, omega, v, m_pi, m_p, h, f_pi, f_p);
    return max_of(max_abs(f_pi), max_abs(f_p));
  }

  /// One step (g_k, m_k) -> (g_{k+1}, m_{k+1}); s.Pi and s.P hold m. Returns the final Newton
  /// residual max_i |F_i| in momentum units.
  template <class M>
  VIGOR_HD VIGOR_INLINE Real step(const M& m, SE3State<Real>& s, Real h, Real) const {
    Vec<Real, 3> omega, v;
    const Real r = solve_velocity(m, s.Pi, s.P, h, omega, v);
    const Vec<Real, 3> hw = h * omega;
    const Vec<Real, 3> hv = h * v;
    s.x += so3::mul(s.B, Chart::translation(hw, hv));
    s.B = so3::mul(s.B, Chart::rotation(hw));
    Chart::inv_tangent_dual(Real(-1) * hw, Real(-1) * hv, m.angular_momentum(omega),
                            m.linear_momentum(v), s.Pi, s.P);
    return r;
  }
};

template <class Real>
struct VariationalEulerSE3 : VariationalEulerSE3Step<Real, se3::CayleyChart> {
  static constexpr const char* kName = "variational_euler_se3";
  static constexpr const char* kDescription =
      "Lie-group variational Euler (Hamilton-Pontryagin, Cayley chart) for a rigid body on SE(3)";
  static constexpr const char* kReference = "Bou-Rabee 2007, thesis, sec. 6.4 (6.4.2)-(6.4.6)";
  static VariationalEulerSE3 from_options(const double*) { return {}; }
};

template <class Real>
struct VariationalEulerSE3Exp : VariationalEulerSE3Step<Real, se3::ExpChart> {
  static constexpr const char* kName = "variational_euler_se3_exp";
  static constexpr const char* kDescription =
      "Lie-group variational Euler (Hamilton-Pontryagin, exponential chart) for a rigid body on "
      "SE(3)";
  static constexpr const char* kReference =
      "Bou-Rabee 2007, thesis, sec. 4.6 (tau = exp), sec. 6.4";
  static VariationalEulerSE3Exp from_options(const double*) { return {}; }
};

}  // namespace vigor::kernels
