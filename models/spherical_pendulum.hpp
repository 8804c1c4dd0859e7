/// @file spherical_pendulum.hpp
/// @brief Spherical pendulum in Cartesian coordinates, held on its sphere by a constraint.
///
/// q = (x, y, z) in R^3 (z up), diagonal mass m, one constraint:
///
///     L = 1/2 m |qdot|^2 - m g z,        g(q) = (|q|^2 - l^2) / (2 l) = 0,
///
/// in position units (|q| - l to first order; see pendulum_cartesian.hpp). Rotations about the z
/// axis leave L and the constraint invariant; their momentum map J_z = x p_y - y p_x is conserved
/// by SHAKE and RATTLE (discrete Noether; the constraint force is central, so this holds whatever
/// the multiplier, to round-off).
/// Parameters: m (> 0, default 1), l (> 0, default 1), g (>= 0, default 1).
/// Source: Marsden & Wendlandt 1997; Bou-Rabee 2007 (thesis).
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct SphericalPendulum {
  static constexpr const char* kName = "spherical_pendulum";
  static constexpr const char* kDescription =
      "spherical pendulum in (x, y, z), constrained to |q| = l: H = |p|^2/(2 m) + m g z";
  static constexpr int dof = 3;
  static constexpr int kConstraints = 1;
  static constexpr int kMomentumMaps = 1;
  static constexpr std::array<const char*, kMomentumMaps> kMomentumNames{{"Jz"}};
  static constexpr std::array<kernels::ParamSpec, 3> kParams{{
      {"m", 1.0, kernels::Rule::kPositive, "bob mass"},
      {"l", 1.0, kernels::Rule::kPositive, "rod length"},
      {"g", 1.0, kernels::Rule::kNonNegative, "gravitational acceleration (along -z)"},
  }};

  Real inv_m;   ///< 1 / m
  Real mg;      ///< m g
  Real l2;      ///< l^2
  Real inv_2l;  ///< 1 / (2 l)

  static SphericalPendulum from_params(const double* v) {
    return {Real(1.0 / v[0]), Real(v[0] * v[2]), Real(v[1] * v[1]), Real(0.5 / v[1])};
  }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return inv_m; }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    return mg * q[2];
  }

  /// The force is constant; tests check this against AD.
  VIGOR_HD VIGOR_INLINE void potential_gradient(const kernels::Vec<Real, dof>&,
                                                kernels::Vec<Real, dof>& g) const {
    g[0] = Real(0);
    g[1] = Real(0);
    g[2] = mg;
  }

  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kConstraints> constraints(
      const kernels::Vec<T, dof>& q) const {
    return {{(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] - l2) * inv_2l}};
  }

  /// J_z = x p_y - y p_x.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kMomentumMaps> momentum_map(
      const kernels::Vec<T, dof>& q, const kernels::Vec<T, dof>& p) const {
    return {{q[0] * p[1] - q[1] * p[0]}};
  }
};

}  // namespace vigor::models
