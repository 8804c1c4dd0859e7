/// @file kepler.hpp
/// @brief Planar Kepler problem (one body about a fixed centre).
///
/// L = 1/2 |v|^2 + mu / |q|,   H = 1/2 |p|^2 - mu / |q|,   q, p in R^2, unit mass.
/// Parameter: mu (gravitational parameter, > 0, default 1).
/// Test orbit (Hairer, Lubich & Wanner, Geometric Numerical Integration, §I.2.3): eccentricity e,
/// q0 = (1 - e, 0), p0 = (0, sqrt((1 + e)/(1 - e))); e = 0.6 gives q0 = (0.4, 0), p0 = (0, 2),
/// period 2 pi. Angular momentum L = q0 p1 - q1 p0 is conserved (rotational symmetry).
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct Kepler {
  static constexpr const char* kName = "kepler";
  static constexpr const char* kDescription = "planar Kepler problem: H = |p|^2/2 - mu/|q|";
  static constexpr int dof = 2;
  static constexpr std::array<kernels::ParamSpec, 1> kParams{{
      {"mu", 1.0, kernels::Rule::kPositive, "gravitational parameter G M"},
  }};

  Real mu;

  static Kepler from_params(const double* v) { return {Real(v[0])}; }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return Real(1); }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    using kernels::sqrt;
    return -mu / sqrt(q[0] * q[0] + q[1] * q[1]);
  }

  /// Hand-written for speed (one sqrt, one divide); tests check it against AD.
  VIGOR_HD VIGOR_INLINE void potential_gradient(const kernels::Vec<Real, dof>& q,
                                                kernels::Vec<Real, dof>& g) const {
    using kernels::sqrt;
    // Unfused on purpose: fma(x, x, y y) ran the FP64 lanes 20 % slower (docs/performance.md).
    const Real r2 = q[0] * q[0] + q[1] * q[1];
    const Real inv_r = Real(1) / sqrt(r2);
    const Real k = mu * inv_r * inv_r * inv_r;
    g[0] = k * q[0];
    g[1] = k * q[1];
  }

  /// Angular momentum L = q0 p1 - q1 p0 (the momentum map of rotations).
  VIGOR_HD VIGOR_INLINE Real angular_momentum(const kernels::Vec<Real, dof>& q,
                                              const kernels::Vec<Real, dof>& p) const {
    return q[0] * p[1] - q[1] * p[0];
  }
};

}  // namespace vigor::models
