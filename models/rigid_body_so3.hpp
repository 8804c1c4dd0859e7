/// @file rigid_body_so3.hpp
/// @brief The free rigid body on SO(3): attitude matrix and body angular momentum.
///
/// Configuration R in SO(3) (body to space), body angular velocity Omega = (R^T dR/dt)^vee.
/// Left-invariant Lagrangian L(R, dR/dt) = ell(R^T dR/dt) with the reduced Lagrangian
///     ell(Omega) = 1/2 Omega^T I Omega,   I = diag(I1, I2, I3) (principal moments of inertia),
/// body angular momentum Pi = ell'(Omega) = I Omega, energy H = 1/2 Pi^T I^{-1} Pi, and the
/// Euler–Poincaré (Euler) and reconstruction equations
///     dPi/dt = Pi × Omega,     dR/dt = R hat(Omega).
/// Left invariance gives the conserved momentum map: the spatial angular momentum L = R Pi
/// (kMomentumNames L_x, L_y, L_z); |Pi| is a Casimir.
///
/// The state is NOT a canonical (q, p) pair: 12 components R00 R01 R02 R10 ... R22 (row-major)
/// then Pi0 Pi1 Pi2, seen by the drivers through the StateOps specialisation below. Only the
/// Lie-group integrator (variational_euler_so3) handles it; the model deliberately has neither
/// inv_mass nor lagrangian, so it is no kernels::PhaseModel and every (q, p) integrator rejects
/// it. That integrator stores in Pi its staggered discrete momentum, which approximates Pi(t_k)
/// to O(h^2): energy and L below are evaluated on the stored value.
///
/// Parameters I1, I2, I3 (> 0; defaults 2, 1, 2/3 and reference_state() R = E,
/// Pi = (cos 1.1, 0, sin 1.1): the test of Hairer, Lubich & Wanner, Geometric Numerical
/// Integration, §IV.1 and §VII.5, used by Bou-Rabee 2007 (thesis, ch. 5) with h = 0.1, T = 100).
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "kernels/core/so3.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"

namespace vigor::models {

template <class Real>
struct RigidBodySO3 {
  static constexpr const char* kName = "rigid_body_so3";
  static constexpr const char* kDescription =
      "free rigid body on SO(3): attitude R and body momentum Pi, H = Pi^T I^-1 Pi / 2";
  static constexpr int dof = 3;
  static constexpr bool kLieGroupSO3 = true;  ///< the tag variational_euler_so3 looks for
  /// Runs in the CPU's SIMD lanes (kernels::model_on_lanes): the state, its operations and both
  /// charts' steps are plain arithmetic, selects and vigor's own sincos, with no branch on values.
  static constexpr bool kSimdLanes = true;
  static constexpr std::array<kernels::ParamSpec, 3> kParams{{
      {"I1", 2.0, kernels::Rule::kPositive, "principal moment of inertia about body axis 1"},
      {"I2", 1.0, kernels::Rule::kPositive, "principal moment of inertia about body axis 2"},
      {"I3", 2.0 / 3.0, kernels::Rule::kPositive, "principal moment of inertia about body axis 3"},
  }};
  static constexpr std::array<const char*, 12> kStateNames{
      {"R00", "R01", "R02", "R10", "R11", "R12", "R20", "R21", "R22", "Pi0", "Pi1", "Pi2"}};
  static constexpr int kMomentumMaps = 3;
  static constexpr std::array<const char*, 3> kMomentumNames{{"L_x", "L_y", "L_z"}};
  /// Largest max |R^T R - E| accepted in an initial state (the host's kManifoldTolerance).
  static constexpr double kRotationTolerance = 1e-9;

  kernels::Vec<Real, 3> inertia;      ///< I1, I2, I3
  kernels::Vec<Real, 3> inv_inertia;  ///< 1/I1, 1/I2, 1/I3

  static RigidBodySO3 from_params(const double* v) {
    return {{{Real(v[0]), Real(v[1]), Real(v[2])}},
            {{Real(1.0 / v[0]), Real(1.0 / v[1]), Real(1.0 / v[2])}}};
  }

  /// R = E, Pi = (cos 1.1, 0, sin 1.1) (Hairer, Lubich & Wanner's test).
  static std::array<double, 12> reference_state() {
    return {1, 0, 0, 0, 1, 0, 0, 0, 1, std::cos(1.1), 0.0, std::sin(1.1)};
  }

  /// ell(Omega) = 1/2 Omega^T I Omega.
  template <class T>
  VIGOR_HD VIGOR_INLINE T reduced_lagrangian(const kernels::Vec<T, 3>& omega) const {
    return T(0.5) * (inertia[0] * omega[0] * omega[0] + inertia[1] * omega[1] * omega[1] +
                     inertia[2] * omega[2] * omega[2]);
  }

  /// Omega = I^{-1} Pi.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, 3> body_velocity(const kernels::Vec<T, 3>& pi) const {
    return kernels::Vec<T, 3>{
        {inv_inertia[0] * pi[0], inv_inertia[1] * pi[1], inv_inertia[2] * pi[2]}};
  }

  /// Pi = I Omega.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, 3> body_momentum(const kernels::Vec<T, 3>& omega) const {
    return kernels::Vec<T, 3>{
        {inertia[0] * omega[0], inertia[1] * omega[1], inertia[2] * omega[2]}};
  }
};

}  // namespace vigor::models

namespace vigor::kernels {

/// How the drivers see the rigid body's state (see kernels/state.hpp for the members). Real may
/// be the model's own R or a dual number over it (the tangent map, kernels/tangent.hpp).
template <class R, class Real>
struct StateOps<models::RigidBodySO3<R>, Real> {
  using M = models::RigidBodySO3<R>;
  using State = SO3State<Real>;
  static constexpr int kDim = 12;
  static constexpr int kMomentumMaps = M::kMomentumMaps;

  VIGOR_HD VIGOR_INLINE static void load(const M&, const Real* base, std::int64_t stride,
                                         State& s) {
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < 3; ++j) s.R[i][j] = base[(3 * i + j) * stride];
    }
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) s.Pi[i] = base[(9 + i) * stride];
  }

  VIGOR_HD VIGOR_INLINE static void store(const State& s, Real* base, std::int64_t stride) {
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < 3; ++j) base[(3 * i + j) * stride] = s.R[i][j];
    }
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) base[(9 + i) * stride] = s.Pi[i];
  }

  /// Component i (run-time index) by unrolled compares: the state stays in registers.
  VIGOR_HD VIGOR_INLINE static Real component(const State& s, int i) {
    Real x = Real(0);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b)
        if (3 * a + b == i) x = s.R[a][b];
      if (9 + a == i) x = s.Pi[a];
    }
    return x;
  }

  VIGOR_HD VIGOR_INLINE static Vec<Real, kDim> as_vector(const State& s) {
    Vec<Real, kDim> x;
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) x[3 * a + b] = s.R[a][b];
      x[9 + a] = s.Pi[a];
    }
    return x;
  }

  /// H = 1/2 Pi^T I^{-1} Pi.
  VIGOR_HD VIGOR_INLINE static Real energy(const M& m, const State& s) {
    return Real(0.5) *
           (s.Pi[0] * s.Pi[0] * m.inv_inertia[0] + s.Pi[1] * s.Pi[1] * m.inv_inertia[1] +
            s.Pi[2] * s.Pi[2] * m.inv_inertia[2]);
  }

  /// dR/dt = R hat(Omega) (row a of it is row a of R crossed with Omega), dPi/dt = Pi × Omega.
  VIGOR_HD VIGOR_INLINE static void rates(const M& m, const State& s, Real, Vec<Real, kDim>& x,
                                          Vec<Real, kDim>& xdot) {
    const Vec<Real, 3> omega = m.body_velocity(s.Pi);
    x = as_vector(s);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      const Vec<Real, 3> row{{s.R[a][0], s.R[a][1], s.R[a][2]}};
      const Vec<Real, 3> d = so3::cross(row, omega);
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) xdot[3 * a + b] = d[b];
    }
    const Vec<Real, 3> dpi = so3::cross(s.Pi, omega);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) xdot[9 + a] = dpi[a];
  }

  /// No escape test: the state is bounded (|R_ij| <= 1, |Pi| conserved).
  VIGOR_HD VIGOR_INLINE static Real position_norm2(const State&) { return Real(0); }

  /// The spatial angular momentum L = R Pi.
  VIGOR_HD VIGOR_INLINE static Vec<Real, kMomentumMaps> momentum(const M&, const State& s) {
    return so3::mul(s.R, s.Pi);
  }

  /// max_ij |(R^T R - E)_ij|.
  VIGOR_HD VIGOR_INLINE static Real orthogonality_defect(const State& s) {
    return so3::orthogonality_defect(s.R);
  }

  /// Host only (std::string): "" when R is a rotation (orthogonal to kRotationTolerance, det
  /// +1), else what is wrong, for the job checker's message.
  static std::string manifold_defect(const M&, const State& s) {
    return so3::rotation_defect(s.R, M::kRotationTolerance, 'R');
  }
};

/// The tangent map of the rigid body (kernels/tangent.hpp) in left-trivialised directions:
/// (xi, nu) in R^6 stands for dR = R hat(xi), dm = nu. The canonical symplectic form of T*SO(3),
/// trivialised on the left (Abraham & Marsden, Foundations of Mechanics, Prop. 4.4.1), is
///     omega((xi1, nu1), (xi2, nu2)) = <nu2, xi1> - <nu1, xi2> - <m, xi1 × xi2>,
/// i.e. the matrix W(m) = [[-hat m, I], [-I, 0]] at the body momentum m. The stored momentum is
/// the staggered discrete one, so the variational Euler map (R_k, m_k) -> (R_k+1, m_k+1) is the
/// discrete Hamiltonian map and preserves W exactly (SCIENCE.md §2); Pi(t_k) itself would not.
/// Only first derivatives travel, so dR = R hat(xi) needs no chart: every chart agrees to first
/// order. det W(m) = 1, so the volume factor is det M in these coordinates.
template <class R, class Real>
struct TangentOps<models::RigidBodySO3<R>, Real> {
  using M = models::RigidBodySO3<R>;
  using Ops = StateOps<M, Real>;
  static constexpr int K = 6;
  static constexpr int kStored = Ops::kDim;
  static constexpr bool kConstrained = false;
  using D = Dual<Real, K>;
  using OpsD = StateOps<M, D>;
  using State = SO3State<Real>;
  using StateD = SO3State<D>;

  VIGOR_HD VIGOR_INLINE static State primal(const StateD& sd) {
    State s;
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) s.R[a][b] = sd.R[a][b].v;
      s.Pi[a] = sd.Pi[a].v;
    }
    return s;
  }

  /// Stored component c (as_vector's order: R row-major, then Pi), in place.
  VIGOR_HD VIGOR_INLINE static const D& stored(const StateD& sd, int c) {
    return c < 9 ? sd.R[c / 3][c % 3] : sd.Pi[c - 9];
  }

  VIGOR_HD VIGOR_INLINE static void scale(StateD& sd, Real c) {
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) {
      VIGOR_UNROLL
      for (int a = 0; a < 3; ++a) {
        VIGOR_UNROLL
        for (int b = 0; b < 3; ++b) sd.R[a][b].d[j] *= c;
        sd.Pi[a].d[j] *= c;
      }
    }
  }

  /// Column j: xi = vee of the skew part of R^T dR_j (R^T dR is skew to first order on SO(3);
  /// the skew part discards the round-off off the group), nu = dm_j.
  VIGOR_HD VIGOR_INLINE static Mat<Real, K> tangent_matrix(const StateD& sd) {
    Mat<Real, K> T;
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) {
      const Vec<Real, 3> xi = so3::attitude_direction(sd.R, j);
      VIGOR_UNROLL
      for (int a = 0; a < 3; ++a) T[a][j] = xi[a];
      VIGOR_UNROLL
      for (int a = 0; a < 3; ++a) T[3 + a][j] = sd.Pi[a].d[j];
    }
    return T;
  }

  VIGOR_HD VIGOR_INLINE static Mat<Real, K> form(const M&, const State& x) {
    Mat<Real, K> W;
    VIGOR_UNROLL
    for (int a = 0; a < K; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < K; ++b) W[a][b] = Real(0);
    }
    const Mat<Real, 3> hm = so3::hat(x.Pi);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) W[a][b] = -hm[a][b];
      W[a][3 + a] = Real(1);
      W[3 + a][a] = Real(-1);
    }
    return W;
  }

  VIGOR_HD VIGOR_INLINE static Mat<Real, K> projector(const M&, const State&) {
    return Mat<Real, K>::identity();
  }

  /// Value x; direction j < 3 moves R along R hat(e_j), direction 3 + a moves m along e_a.
  VIGOR_HD VIGOR_INLINE static void seed(const M&, const State& x, StateD& sd) {
    so3::seed_attitude(x.R, sd.R);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      sd.Pi[a] = D(x.Pi[a]);
      sd.Pi[a].d[3 + a] = Real(1);
    }
  }
};

}  // namespace vigor::kernels
