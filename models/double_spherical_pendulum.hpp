/// @file double_spherical_pendulum.hpp
/// @brief Double spherical pendulum in Cartesian coordinates (two rods, two constraints).
///
/// q = (x1, y1, z1, x2, y2, z2) (z up), diagonal mass (m1, m1, m1, m2, m2, m2):
///
///     L = 1/2 m1 |q1dot|^2 + 1/2 m2 |q2dot|^2 - g (m1 z1 + m2 z2),
///     g_1(q) = (|q1|^2 - l1^2) / (2 l1) = 0,    g_2(q) = (|q2 - q1|^2 - l2^2) / (2 l2) = 0,
///
/// constraints in position units (|q1| - l1 and |q2 - q1| - l2 to first order; see
/// pendulum_cartesian.hpp). Rotations about z leave L and both constraints invariant; the momentum
/// map is the total J_z = x1 p_y1 - y1 p_x1 + x2 p_y2 - y2 p_x2 (in Cartesian momenta the m2 of the
/// printed formula in Jalnapurkar et al. is automatic; SCIENCE.md §4).
/// Parameters (defaults: Marsden & Wendlandt 1997): m1 = 2.0, m2 = 3.5, l1 = 4.0, l2 = 3.0,
/// g = 9.81. reference_state() gives their initial data (see there).
#pragma once

#include <array>
#include <cmath>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct DoubleSphericalPendulum {
  static constexpr const char* kName = "double_spherical_pendulum";
  static constexpr const char* kDescription =
      "double spherical pendulum, Cartesian q1, q2 in R^3: |q1| = l1, |q2 - q1| = l2";
  static constexpr int dof = 6;
  static constexpr int kConstraints = 2;
  static constexpr int kMomentumMaps = 1;
  static constexpr std::array<const char*, kMomentumMaps> kMomentumNames{{"Jz"}};
  static constexpr std::array<kernels::ParamSpec, 5> kParams{{
      {"m1", 2.0, kernels::Rule::kPositive, "first (upper) bob mass"},
      {"m2", 3.5, kernels::Rule::kPositive, "second (lower) bob mass"},
      {"l1", 4.0, kernels::Rule::kPositive, "first rod length (pivot to bob 1)"},
      {"l2", 3.0, kernels::Rule::kPositive, "second rod length (bob 1 to bob 2)"},
      {"g", 9.81, kernels::Rule::kNonNegative, "gravitational acceleration (along -z)"},
  }};

  Real inv_m1, inv_m2;  ///< inverse masses
  Real gm1, gm2;        ///< g m1, g m2
  Real l1sq, l2sq;      ///< l1^2, l2^2
  Real inv_2l1, inv_2l2;

  static DoubleSphericalPendulum from_params(const double* v) {
    return {Real(1.0 / v[0]),  Real(1.0 / v[1]),  Real(v[4] * v[0]), Real(v[4] * v[1]),
            Real(v[2] * v[2]), Real(v[3] * v[3]), Real(0.5 / v[2]),  Real(0.5 / v[3])};
  }

  // i is a compile-time constant wherever the integrators call this (unrolled loops).
  VIGOR_HD VIGOR_INLINE Real inv_mass(int i) const { return i < 3 ? inv_m1 : inv_m2; }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    return gm1 * q[2] + gm2 * q[5];
  }

  /// The force is constant; tests check this against AD.
  VIGOR_HD VIGOR_INLINE void potential_gradient(const kernels::Vec<Real, dof>&,
                                                kernels::Vec<Real, dof>& g) const {
    g[0] = g[1] = g[3] = g[4] = Real(0);
    g[2] = gm1;
    g[5] = gm2;
  }

  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kConstraints> constraints(
      const kernels::Vec<T, dof>& q) const {
    const T dx = q[3] - q[0], dy = q[4] - q[1], dz = q[5] - q[2];
    return {{(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - l1sq) * inv_2l1,
             (dx * dx + dy * dy + dz * dz - l2sq) * inv_2l2}};
  }

  /// Total J_z = x1 p_y1 - y1 p_x1 + x2 p_y2 - y2 p_x2.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kMomentumMaps> momentum_map(
      const kernels::Vec<T, dof>& q, const kernels::Vec<T, dof>& p) const {
    return {{q[0] * p[1] - q[1] * p[0] + q[3] * p[4] - q[4] * p[3]}};
  }

  /// Marsden & Wendlandt's initial data for the default parameters, as (q1, q2, p1, p2):
  /// x1 = 2.820, y1 = 0.025, x2 = 5.085, y2 = 0.105, xdot1 = 3.381, ydot1 = 2.506,
  /// xdot2 = 2.497, ydot2 = 10.495. The paper leaves the z's to the constraints: both bobs below
  /// their pivots (z1 < 0, z2 < z1), and zdot1, zdot2 from the differentiated constraints
  /// q1 . q1dot = 0 and (q2 - q1) . (q2dot - q1dot) = 0; momenta p = m qdot. Host-only.
  static std::array<double, 12> reference_state() {
    const double m1 = kParams[0].default_value, m2 = kParams[1].default_value;
    const double l1 = kParams[2].default_value, l2 = kParams[3].default_value;
    const double x1 = 2.820, y1 = 0.025, x2 = 5.085, y2 = 0.105;
    const double vx1 = 3.381, vy1 = 2.506, vx2 = 2.497, vy2 = 10.495;
    const double z1 = -std::sqrt(l1 * l1 - x1 * x1 - y1 * y1);
    const double dx = x2 - x1, dy = y2 - y1;
    const double dz = -std::sqrt(l2 * l2 - dx * dx - dy * dy);
    const double z2 = z1 + dz;
    const double vz1 = -(x1 * vx1 + y1 * vy1) / z1;
    const double vz2 = vz1 - (dx * (vx2 - vx1) + dy * (vy2 - vy1)) / dz;
    return {x1, y1, z1, x2, y2, z2, m1 * vx1, m1 * vy1, m1 * vz1, m2 * vx2, m2 * vy2, m2 * vz2};
  }
};

}  // namespace vigor::models
