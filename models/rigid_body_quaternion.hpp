/// @file rigid_body_quaternion.hpp
/// @brief Free rigid body with its attitude as a unit quaternion in R^4 (a constrained Lagrangian).
///
/// q = (q0, q1, q2, q3) in R^4, one constraint g(q) = (|q|^2 - 1)/2 = 0 (dimensionless). With the
/// quaternion product * and conj(q) = (q0, -q1, -q2, -q3), let w = 2 conj(q) * qdot; its vector
/// part is the body angular velocity Omega (qdot = q * (0, Omega) / 2 on the sphere), its scalar
/// part w0 = 2 q . qdot = d|q|^2/dt vanishes on the constraint's tangent space. Then
///
///     L(q, qdot) = 1/2 (I0 w0^2 + I1 Omega1^2 + I2 Omega2^2 + I3 Omega3^2).
///
/// Marsden & Wendlandt 1997 write diag(0, I): in R^4 that L is singular (no Legendre transform, so
/// no velocity_of, energy or Newton Jacobian). vigor uses a positive fictitious I0 = (I1+I2+I3)/3
/// (the mean, so the mass matrix 4 Lq diag(I0, I) Lq^T is as well conditioned as the body allows).
/// It does not change the discrete solution on the manifold: the midpoint discrete Lagrangian sees
/// w0 at q_mid = (q0 + q1)/2 with v = (q1 - q0)/h, where q_mid . v = (|q1|^2 - |q0|^2)/(2h) = 0
/// when both ends are unit; the I0 term 1/2 I0 w0^2 and its gradient I0 w0 dw0 vanish there, so the
/// discrete Euler–Lagrange equations (and the multiplier) are those of the paper's L. L itself is
/// independent of I0 at any (q, v) with q . v = 0 (tests/test_constrained.cpp).
///
/// Symmetry: q -> r * q for unit r (a spatial rotation) leaves w, so L and g, invariant. Its
/// momentum map, with the infinitesimal generator xi * q / 2 for the angular velocity xi, is the
/// spatial angular momentum
///     J = 1/2 vec(p * conj(q)) = |q|^2 R(q/|q|) (I Omega),
/// because p = dL/dv = 2 q * (I0 w0, I Omega) and the scalar part I0 w0 |q|^2 drops out of the
/// vector part: J needs only (q, p), never I0 or a Legendre solve. Parameters: principal moments
/// I1, I2, I3 (> 0; defaults 1, 2, 3). reference_state(): the paper's q0 = (1,0,0,0), Omega = (0,
/// 3, 4): energy 33, J = (0, 6, 12). Source: Marsden & Wendlandt 1997.
#pragma once

#include <array>

#include "kernels/core/specs.hpp"
#include "kernels/core/vec.hpp"

namespace vigor::models {

template <class Real>
struct RigidBodyQuaternion {
  static constexpr const char* kName = "rigid_body_quaternion";
  static constexpr const char* kDescription =
      "free rigid body, attitude a unit quaternion q in R^4: L = 1/2 Omega^T I Omega, "
      "(0, Omega) = 2 conj(q) * qdot";
  static constexpr int dof = 4;
  static constexpr int kConstraints = 1;
  static constexpr int kMomentumMaps = 3;
  static constexpr std::array<const char*, kMomentumMaps> kMomentumNames{{"Jx", "Jy", "Jz"}};
  static constexpr std::array<kernels::ParamSpec, 3> kParams{{
      {"I1", 1.0, kernels::Rule::kPositive, "principal moment of inertia about body axis 1"},
      {"I2", 2.0, kernels::Rule::kPositive, "principal moment of inertia about body axis 2"},
      {"I3", 3.0, kernels::Rule::kPositive, "principal moment of inertia about body axis 3"},
  }};

  Real I0;  ///< fictitious moment of the normal direction (mean of I1..I3; see above)
  Real I1, I2, I3;

  static RigidBodyQuaternion from_params(const double* v) {
    return {Real((v[0] + v[1] + v[2]) / 3.0), Real(v[0]), Real(v[1]), Real(v[2])};
  }

  /// w = 2 conj(q) * v: (w0, Omega).
  template <class T>
  VIGOR_HD VIGOR_INLINE static kernels::Vec<T, 4> body_velocity(const kernels::Vec<T, 4>& q,
                                                                const kernels::Vec<T, 4>& v) {
    return {{Real(2) * (q[0] * v[0] + q[1] * v[1] + q[2] * v[2] + q[3] * v[3]),
             Real(2) * (q[0] * v[1] - v[0] * q[1] - (q[2] * v[3] - q[3] * v[2])),
             Real(2) * (q[0] * v[2] - v[0] * q[2] - (q[3] * v[1] - q[1] * v[3])),
             Real(2) * (q[0] * v[3] - v[0] * q[3] - (q[1] * v[2] - q[2] * v[1]))}};
  }

  template <class T>
  VIGOR_HD VIGOR_INLINE T lagrangian(const kernels::Vec<T, dof>& q,
                                     const kernels::Vec<T, dof>& v) const {
    const kernels::Vec<T, 4> w = body_velocity(q, v);
    return Real(0.5) * (I0 * w[0] * w[0] + I1 * w[1] * w[1] + I2 * w[2] * w[2] + I3 * w[3] * w[3]);
  }

  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kConstraints> constraints(
      const kernels::Vec<T, dof>& q) const {
    return {{Real(0.5) * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - Real(1))}};
  }

  /// Spatial angular momentum J = 1/2 vec(p * conj(q)).
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kMomentumMaps> momentum_map(
      const kernels::Vec<T, dof>& q, const kernels::Vec<T, dof>& p) const {
    return {{Real(0.5) * (q[0] * p[1] - p[0] * q[1] + q[2] * p[3] - q[3] * p[2]),
             Real(0.5) * (q[0] * p[2] - p[0] * q[2] + q[3] * p[1] - q[1] * p[3]),
             Real(0.5) * (q[0] * p[3] - p[0] * q[3] + q[1] * p[2] - q[2] * p[1])}};
  }

  /// The paper's initial data for the default moments, as (q, p): q = (1, 0, 0, 0), body angular
  /// velocity Omega = (0, 3, 4), qdot = q * (0, Omega) / 2 = (0, 0, 3/2, 2), and
  /// p = dL/dv = 2 q * (0, I Omega) = (0, 0, 12, 24) (closed form; tests check it against AD).
  /// Host-only.
  static std::array<double, 8> reference_state() {
    const double Om[3] = {0.0, 3.0, 4.0};
    std::array<double, 8> s{1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (int i = 0; i < 3; ++i) s[5 + i] = 2.0 * kParams[i].default_value * Om[i];
    return s;
  }
};

}  // namespace vigor::models
