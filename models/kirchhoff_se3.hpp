/// @file kirchhoff_se3.hpp
/// @brief A rigid ellipsoid in ideal fluid on SE(3) (Kirchhoff's equations; the thesis's
/// underwater vehicle): attitude, position and body momenta.
///
/// Configuration g = (B, x) in SE(3) (B body to space, x the body origin in space), body
/// velocities Omega = (B^T dB/dt)^vee and v = B^T dx/dt. The fluid is ideal, irrotational and at
/// rest at infinity, and the body is neutrally buoyant with coincident centres of gravity and
/// buoyancy, so no force acts and the kinetic energy of body plus fluid is the whole Lagrangian
/// (Kirchhoff; Bou-Rabee 2007, thesis, §6.1-6.2):
///     ell(Omega, v) = 1/2 Omega^T I Omega + 1/2 v^T M v,   I = diag(I1, I2, I3), M = diag(M1, M2,
///     M3),
/// body inertia and mass plus the fluid's added inertia and mass; the coupling S is zero for an
/// ellipsoid on its principal axes. Body momenta Pi = I Omega, P = M v; energy
/// H = 1/2 Pi^T I^{-1} Pi + 1/2 P^T M^{-1} P; Kirchhoff's (Euler–Poincaré) and reconstruction
/// equations (thesis (6.2.1)-(6.2.5))
///     dPi/dt = Pi × Omega + P × v,   dP/dt = P × Omega,   dB/dt = B hat(Omega),   dx/dt = B v.
/// Left invariance gives the conserved momentum map, the spatial momenta (thesis §6.2)
///     L = B Pi + x × B P (angular, about the space origin),   p = B P (linear)
/// (kMomentumNames L_x, L_y, L_z, p_x, p_y, p_z), and Pi·P, P·P are Casimirs (|p|^2 and L·p).
///
/// Default parameters: the thesis does not print I and M (they come from Aref & Jones 1993), so
/// vigor states its own body: an ellipsoid with semi-axes (a, b, c) = (1, 0.6, 0.3) on body axes
/// 1, 2, 3, neutrally buoyant, in units where a = 1 and the displaced fluid's mass is 1
/// (rho_body = rho_fluid = 3 / (4 pi abc)). Lamb's added-mass formulas (Hydrodynamics §114-115,
/// §373) give the values below; scripts/ellipsoid_added_mass.py computes them (Carlson's R_D)
/// for any ellipsoid and tests/test_lie_group_se3.cpp checks the defaults against it.
///
/// The state is NOT a canonical (q, p) pair: 18 components B00 .. B22 (row-major), x0 x1 x2,
/// Pi0 Pi1 Pi2, P0 P1 P2, seen by the drivers through the StateOps specialisation below. Only
/// variational_euler_se3 handles it (the model has neither inv_mass nor lagrangian, so it is no
/// kernels::PhaseModel). That integrator stores in (Pi, P) its staggered discrete momenta, which
/// approximate the body momenta at t_k to O(h^2): energy and momenta below are evaluated on them.
///
/// reference_state(): B = E, x = 0 and body momenta on the level set of the thesis's Poincaré
/// benchmark (Pi·P = 0, P·P = 5.22, H = 4.0, thesis §6.6 Figs. 6.6.1-6.6.3): P along body axis 2,
/// Pi in the 1-3 plane with its energy split equally between axes 1 and 3.
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "kernels/core/se3.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"

namespace vigor::models {

template <class Real>
struct KirchhoffSE3 {
  static constexpr const char* kName = "kirchhoff_se3";
  static constexpr const char* kDescription =
      "rigid ellipsoid in ideal fluid on SE(3) (Kirchhoff's equations, the underwater vehicle): "
      "attitude B, position x, body momenta Pi and P";
  static constexpr int dof = 6;
  static constexpr bool kLieGroupSE3 = true;  ///< the tag variational_euler_se3 looks for
  /// Runs in the CPU's SIMD lanes (kernels::model_on_lanes): the state, its operations and both
  /// charts' steps are plain arithmetic, selects and vigor's own sincos, with no branch on values.
  static constexpr bool kSimdLanes = true;
  static constexpr std::array<kernels::ParamSpec, 6> kParams{{
      {"I1", 0.1253259217415516, kernels::Rule::kPositive,
       "moment of inertia about body axis 1, body plus added (fluid)"},
      {"I2", 0.3939813715316293, kernels::Rule::kPositive,
       "moment of inertia about body axis 2, body plus added (fluid)"},
      {"I3", 0.2962483540272737, kernels::Rule::kPositive,
       "moment of inertia about body axis 3, body plus added (fluid)"},
      {"M1", 1.1613972017578527, kernels::Rule::kPositive,
       "mass along body axis 1, body plus added (fluid)"},
      {"M2", 1.3774779656135212, kernels::Rule::kPositive,
       "mass along body axis 2, body plus added (fluid)"},
      {"M3", 2.4212857655720033, kernels::Rule::kPositive,
       "mass along body axis 3, body plus added (fluid)"},
  }};
  static constexpr std::array<const char*, 18> kStateNames{
      {"B00", "B01", "B02", "B10", "B11", "B12", "B20", "B21", "B22", "x0", "x1", "x2", "Pi0",
       "Pi1", "Pi2", "P0", "P1", "P2"}};
  static constexpr int kMomentumMaps = 6;
  static constexpr std::array<const char*, 6> kMomentumNames{
      {"L_x", "L_y", "L_z", "p_x", "p_y", "p_z"}};
  /// Largest max |B^T B - E| accepted in an initial state (the host's kManifoldTolerance).
  static constexpr double kRotationTolerance = 1e-9;
  /// The thesis's level set (reference_state()).
  static constexpr double kBenchmarkPP = 5.22;
  static constexpr double kBenchmarkEnergy = 4.0;

  kernels::Vec<Real, 3> inertia;        ///< I1, I2, I3
  kernels::Vec<Real, 3> inv_inertia;    ///< 1/I1, 1/I2, 1/I3
  kernels::Vec<Real, 3> mass;           ///< M1, M2, M3
  kernels::Vec<Real, 3> inv_mass_diag;  ///< 1/M1, 1/M2, 1/M3

  static KirchhoffSE3 from_params(const double* v) {
    KirchhoffSE3 m;
    for (int i = 0; i < 3; ++i) {
      m.inertia[i] = Real(v[i]);
      m.inv_inertia[i] = Real(1.0 / v[i]);
      m.mass[i] = Real(v[3 + i]);
      m.inv_mass_diag[i] = Real(1.0 / v[3 + i]);
    }
    return m;
  }

  /// B = E, x = 0, P = (0, sqrt(5.22), 0), Pi = (Pi0, 0, Pi2) with Pi0^2 / I1 = Pi2^2 / I3 = the
  /// energy H = 4 leaves after P's (default parameters).
  static std::array<double, 18> reference_state() {
    const double I1 = kParams[0].default_value, I3 = kParams[2].default_value,
                 M2 = kParams[4].default_value;
    const double rotational = kBenchmarkEnergy - 0.5 * kBenchmarkPP / M2;
    return {1,
            0,
            0,
            0,
            1,
            0,
            0,
            0,
            1,
            0,
            0,
            0,
            std::sqrt(rotational * I1),
            0,
            std::sqrt(rotational * I3),
            0,
            std::sqrt(kBenchmarkPP),
            0};
  }

  /// ell(Omega, v) = 1/2 Omega^T I Omega + 1/2 v^T M v.
  template <class T>
  VIGOR_HD VIGOR_INLINE T reduced_lagrangian(const kernels::Vec<T, 3>& omega,
                                             const kernels::Vec<T, 3>& v) const {
    T s = T(0);
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) s += inertia[i] * omega[i] * omega[i] + mass[i] * v[i] * v[i];
    return T(0.5) * s;
  }

  /// Omega = I^{-1} Pi.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, 3> angular_velocity(const kernels::Vec<T, 3>& pi) const {
    return kernels::Vec<T, 3>{
        {inv_inertia[0] * pi[0], inv_inertia[1] * pi[1], inv_inertia[2] * pi[2]}};
  }

  /// v = M^{-1} P.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, 3> linear_velocity(const kernels::Vec<T, 3>& p) const {
    return kernels::Vec<T, 3>{
        {inv_mass_diag[0] * p[0], inv_mass_diag[1] * p[1], inv_mass_diag[2] * p[2]}};
  }

  /// Pi = I Omega.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, 3> angular_momentum(const kernels::Vec<T, 3>& omega) const {
    return kernels::Vec<T, 3>{
        {inertia[0] * omega[0], inertia[1] * omega[1], inertia[2] * omega[2]}};
  }

  /// P = M v.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, 3> linear_momentum(const kernels::Vec<T, 3>& v) const {
    return kernels::Vec<T, 3>{{mass[0] * v[0], mass[1] * v[1], mass[2] * v[2]}};
  }
};

}  // namespace vigor::models

namespace vigor::kernels {

/// How the drivers see the body's state (see kernels/state.hpp for the members). Real may be the
/// model's own R or a dual number over it (the tangent map, kernels/tangent.hpp).
template <class R, class Real>
struct StateOps<models::KirchhoffSE3<R>, Real> {
  using M = models::KirchhoffSE3<R>;
  using State = SE3State<Real>;
  static constexpr int kDim = 18;
  static constexpr int kMomentumMaps = M::kMomentumMaps;

  VIGOR_HD VIGOR_INLINE static void load(const M&, const Real* base, std::int64_t stride,
                                         State& s) {
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < 3; ++j) s.B[i][j] = base[(3 * i + j) * stride];
      s.x[i] = base[(9 + i) * stride];
      s.Pi[i] = base[(12 + i) * stride];
      s.P[i] = base[(15 + i) * stride];
    }
  }

  VIGOR_HD VIGOR_INLINE static void store(const State& s, Real* base, std::int64_t stride) {
    VIGOR_UNROLL
    for (int i = 0; i < 3; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < 3; ++j) base[(3 * i + j) * stride] = s.B[i][j];
      base[(9 + i) * stride] = s.x[i];
      base[(12 + i) * stride] = s.Pi[i];
      base[(15 + i) * stride] = s.P[i];
    }
  }

  /// Component i (run-time index) by unrolled compares: the state stays in registers.
  VIGOR_HD VIGOR_INLINE static Real component(const State& s, int i) {
    Real r = Real(0);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b)
        if (3 * a + b == i) r = s.B[a][b];
      if (9 + a == i) r = s.x[a];
      if (12 + a == i) r = s.Pi[a];
      if (15 + a == i) r = s.P[a];
    }
    return r;
  }

  VIGOR_HD VIGOR_INLINE static Vec<Real, kDim> as_vector(const State& s) {
    Vec<Real, kDim> r;
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) r[3 * a + b] = s.B[a][b];
      r[9 + a] = s.x[a];
      r[12 + a] = s.Pi[a];
      r[15 + a] = s.P[a];
    }
    return r;
  }

  /// H = 1/2 Pi^T I^{-1} Pi + 1/2 P^T M^{-1} P.
  VIGOR_HD VIGOR_INLINE static Real energy(const M& m, const State& s) {
    Real e = s.Pi[0] * s.Pi[0] * m.inv_inertia[0] + s.P[0] * s.P[0] * m.inv_mass_diag[0];
    VIGOR_UNROLL
    for (int i = 1; i < 3; ++i)
      e += s.Pi[i] * s.Pi[i] * m.inv_inertia[i] + s.P[i] * s.P[i] * m.inv_mass_diag[i];
    return Real(0.5) * e;
  }

  /// dB/dt = B hat(Omega) (row a of it is row a of B crossed with Omega), dx/dt = B v,
  /// dPi/dt = Pi × Omega + P × v, dP/dt = P × Omega.
  VIGOR_HD VIGOR_INLINE static void rates(const M& m, const State& s, Real, Vec<Real, kDim>& x,
                                          Vec<Real, kDim>& xdot) {
    const Vec<Real, 3> omega = m.angular_velocity(s.Pi);
    const Vec<Real, 3> v = m.linear_velocity(s.P);
    x = as_vector(s);
    const Vec<Real, 3> dx = so3::mul(s.B, v);
    const Vec<Real, 3> dpi = so3::cross(s.Pi, omega) + so3::cross(s.P, v);
    const Vec<Real, 3> dp = so3::cross(s.P, omega);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      const Vec<Real, 3> row{{s.B[a][0], s.B[a][1], s.B[a][2]}};
      const Vec<Real, 3> d = so3::cross(row, omega);
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) xdot[3 * a + b] = d[b];
      xdot[9 + a] = dx[a];
      xdot[12 + a] = dpi[a];
      xdot[15 + a] = dp[a];
    }
  }

  /// No escape test: the body drifts freely (no force binds x), so a radius would only measure
  /// time; the job reader refuses escape_radius for this model.
  VIGOR_HD VIGOR_INLINE static Real position_norm2(const State&) { return Real(0); }

  /// The spatial momenta (L, p) = (B Pi + x × B P, B P).
  VIGOR_HD VIGOR_INLINE static Vec<Real, kMomentumMaps> momentum(const M&, const State& s) {
    const Vec<Real, 3> p = so3::mul(s.B, s.P);
    const Vec<Real, 3> L = so3::mul(s.B, s.Pi) + so3::cross(s.x, p);
    Vec<Real, kMomentumMaps> r;
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      r[a] = L[a];
      r[3 + a] = p[a];
    }
    return r;
  }

  /// max_ij |(B^T B - E)_ij|.
  VIGOR_HD VIGOR_INLINE static Real orthogonality_defect(const State& s) {
    return so3::orthogonality_defect(s.B);
  }

  /// Host only (std::string): "" when B is a rotation (orthogonal to kRotationTolerance, det
  /// +1), else what is wrong, for the job checker's message.
  static std::string manifold_defect(const M&, const State& s) {
    return so3::rotation_defect(s.B, M::kRotationTolerance, 'B');
  }
};

/// The tangent map of the body on SE(3) (kernels/tangent.hpp) in left-trivialised directions:
/// (xi, nu) in R^12, xi = (w, u), stands for dB = B hat(w), dx = B u, d(Pi, P) = nu. The canonical
/// symplectic form of T*SE(3) trivialised on the left (as for SO(3) in models/rigid_body_so3.hpp)
/// is W(mu) = [[A(mu), E], [-E, 0]] with A(mu) the matrix of (xi1, xi2) -> <mu, [xi1, xi2]>: for
/// mu = (Pi, P) and the bracket of kernels/core/se3.hpp,
///     <mu, [xi1, xi2]> = Pi·(w1 × w2) + P·(w1 × u2) - P·(w2 × u1),
///     A(mu) = [[-hat Pi, -hat P], [-hat P, 0]]
/// (SO(3)'s block -hat m is the first term alone). det W = 1, so the volume factor is det M.
template <class R, class Real>
struct TangentOps<models::KirchhoffSE3<R>, Real> {
  using M = models::KirchhoffSE3<R>;
  using Ops = StateOps<M, Real>;
  static constexpr int K = 12;
  static constexpr int kStored = Ops::kDim;
  static constexpr bool kConstrained = false;
  using D = Dual<Real, K>;
  using OpsD = StateOps<M, D>;
  using State = SE3State<Real>;
  using StateD = SE3State<D>;

  VIGOR_HD VIGOR_INLINE static State primal(const StateD& sd) {
    State s;
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) s.B[a][b] = sd.B[a][b].v;
      s.x[a] = sd.x[a].v;
      s.Pi[a] = sd.Pi[a].v;
      s.P[a] = sd.P[a].v;
    }
    return s;
  }

  /// Stored component c (as_vector's order: B row-major, x, Pi, P), in place.
  VIGOR_HD VIGOR_INLINE static const D& stored(const StateD& sd, int c) {
    return c < 9    ? sd.B[c / 3][c % 3]
           : c < 12 ? sd.x[c - 9]
           : c < 15 ? sd.Pi[c - 12]
                    : sd.P[c - 15];
  }

  VIGOR_HD VIGOR_INLINE static void scale(StateD& sd, Real c) {
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) {
      VIGOR_UNROLL
      for (int a = 0; a < 3; ++a) {
        VIGOR_UNROLL
        for (int b = 0; b < 3; ++b) sd.B[a][b].d[j] *= c;
        sd.x[a].d[j] *= c;
        sd.Pi[a].d[j] *= c;
        sd.P[a].d[j] *= c;
      }
    }
  }

  /// Column j: w = vee of the skew part of B^T dB_j (skew to first order on SO(3); the skew part
  /// discards the round-off off the group), u = B^T dx_j, then d(Pi, P)_j.
  VIGOR_HD VIGOR_INLINE static Mat<Real, K> tangent_matrix(const StateD& sd) {
    Mat<Real, K> T;
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) {
      const Vec<Real, 3> w = so3::attitude_direction(sd.B, j);
      VIGOR_UNROLL
      for (int a = 0; a < 3; ++a) {
        Real u = sd.B[0][a].v * sd.x[0].d[j];
        VIGOR_UNROLL
        for (int c = 1; c < 3; ++c) u += sd.B[c][a].v * sd.x[c].d[j];
        T[a][j] = w[a];
        T[3 + a][j] = u;
        T[6 + a][j] = sd.Pi[a].d[j];
        T[9 + a][j] = sd.P[a].d[j];
      }
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
    const Mat<Real, 3> hpi = so3::hat(x.Pi);
    const Mat<Real, 3> hp = so3::hat(x.P);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) {
        W[a][b] = -hpi[a][b];
        W[a][3 + b] = -hp[a][b];
        W[3 + a][b] = -hp[a][b];
      }
    }
    VIGOR_UNROLL
    for (int a = 0; a < 6; ++a) {
      W[a][6 + a] = Real(1);
      W[6 + a][a] = Real(-1);
    }
    return W;
  }

  VIGOR_HD VIGOR_INLINE static Mat<Real, K> projector(const M&, const State&) {
    return Mat<Real, K>::identity();
  }

  /// Value x; direction j < 3 moves B along B hat(e_j), direction 3 + a moves x along B e_a
  /// (column a of B), direction 6 + a moves (Pi, P) along e_a.
  VIGOR_HD VIGOR_INLINE static void seed(const M&, const State& x, StateD& sd) {
    so3::seed_attitude(x.B, sd.B);
    VIGOR_UNROLL
    for (int a = 0; a < 3; ++a) {
      sd.x[a] = D(x.x[a]);
      VIGOR_UNROLL
      for (int b = 0; b < 3; ++b) sd.x[a].d[3 + b] = x.B[a][b];
      sd.Pi[a] = D(x.Pi[a]);
      sd.Pi[a].d[6 + a] = Real(1);
      sd.P[a] = D(x.P[a]);
      sd.P[a].d[9 + a] = Real(1);
    }
  }
};

}  // namespace vigor::kernels
