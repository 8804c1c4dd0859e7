/// @file j2_satellite.hpp
/// @brief Satellite about an oblate planet: Kepler potential plus the J2 zonal harmonic.
///
/// L = 1/2 |v|^2 - V(q),   H = 1/2 |p|^2 + V(q),   q = (x, y, z) in R^3, unit mass, p = v,
///
///     V(q) = -mu / rho + mu J2 R^2 (3 z^2 - rho^2) / (2 rho^5),   rho = |q|,
///
/// z along the planet's symmetry axis. Parameters: mu (gravitational parameter G M, > 0, default
/// 1), J2 (second zonal coefficient, finite, default 0.05: about 46 times Earth's 1.08e-3, so that
/// the nodal precession shows within a few orbits; J2 > 0 is an oblate planet), R (equatorial
/// radius, > 0, default 1). Units: lengths in R, time such that mu = 1, where
/// V = -1/rho + (J2/rho^3) ((3/2) z^2/rho^2 - 1/2).
///
/// Rotations about z leave V invariant, so L_z = x p_y - y p_x is conserved (and kept to round-off
/// by explicit variational integrators); so is the energy, and nothing else in general.
///
/// Suggested run: a = 1.5, inclination i = 20 deg, q0 = (a, 0, 0), v0 = a^(-1/2) (0, cos i, sin i)
/// (the circular Kepler speed), h = 0.3.
///
/// Source: Jalnapurkar, Leok, Marsden & West, "Discrete Routh reduction" (seed 002), CORRECTED: the
/// paper prints the Kepler term with the wrong sign (repulsive); see SCIENCE.md §4.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct J2Satellite {
  static constexpr const char* kName = "j2_satellite";
  static constexpr const char* kDescription =
      "satellite about an oblate planet: H = |p|^2/2 - mu/r + mu J2 R^2 (3z^2 - r^2)/(2 r^5)";
  static constexpr int dof = 3;
  static constexpr std::array<kernels::ParamSpec, 3> kParams{{
      {"mu", 1.0, kernels::Rule::kPositive, "gravitational parameter G M"},
      {"J2", 0.05, kernels::Rule::kFinite, "second zonal harmonic (oblateness) coefficient"},
      {"R", 1.0, kernels::Rule::kPositive, "equatorial radius of the planet"},
  }};

  Real mu;
  Real c2;  ///< mu J2 R^2: J2 and R only ever appear in this product

  static J2Satellite from_params(const double* v) {
    return {Real(v[0]), Real(v[0] * v[1] * v[2] * v[2])};
  }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return Real(1); }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    using kernels::sqrt;
    const T r2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
    const T inv_r = Real(1) / sqrt(r2);
    const T inv_r3 = inv_r * inv_r * inv_r;
    return -mu * inv_r + Real(0.5) * c2 * (Real(3) * q[2] * q[2] - r2) * inv_r3 * inv_r * inv_r;
  }

  /// Hand-written for speed (one sqrt, one divide); tests check it against AD. From
  /// d(rho^-n)/dq = -n rho^-(n+2) q:
  ///   grad V = [mu/rho^3 + (3/2) c2 (1 - 5 z^2/rho^2)/rho^5] q + (0, 0, 3 c2 z / rho^5).
  VIGOR_HD VIGOR_INLINE void potential_gradient(const kernels::Vec<Real, dof>& q,
                                                kernels::Vec<Real, dof>& g) const {
    using kernels::sqrt;
    const Real r2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
    const Real inv_r = Real(1) / sqrt(r2);
    const Real inv_r2 = inv_r * inv_r;
    const Real inv_r3 = inv_r2 * inv_r;
    const Real j5 = c2 * inv_r3 * inv_r2;  // c2 / rho^5
    const Real k = mu * inv_r3 + Real(1.5) * j5 * (Real(1) - Real(5) * q[2] * q[2] * inv_r2);
    g[0] = k * q[0];
    g[1] = k * q[1];
    g[2] = (k + Real(3) * j5) * q[2];
  }

  /// L_z = x p_y - y p_x, the momentum map of rotations about the symmetry axis.
  VIGOR_HD VIGOR_INLINE Real angular_momentum_z(const kernels::Vec<Real, dof>& q,
                                                const kernels::Vec<Real, dof>& p) const {
    return q[0] * p[1] - q[1] * p[0];
  }
};

}  // namespace vigor::models
