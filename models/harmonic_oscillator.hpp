/// @file harmonic_oscillator.hpp
/// @brief One-dimensional harmonic oscillator.
///
/// L = 1/2 m v^2 - 1/2 k q^2,   H = p^2 / (2m) + k q^2 / 2,   p = m v.
/// Parameters: m (mass, > 0, default 1), k (stiffness, > 0, default 1); any consistent units.
/// Exact solution q(t) = q0 cos(w t) + p0/(m w) sin(w t), w = sqrt(k/m): the reference for section
/// accuracy and convergence tests. Source: standard.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct HarmonicOscillator {
  static constexpr const char* kName = "harmonic_oscillator";
  static constexpr const char* kDescription = "harmonic oscillator: H = p^2/(2m) + k q^2/2";
  static constexpr int dof = 1;
  static constexpr std::array<kernels::ParamSpec, 2> kParams{{
      {"m", 1.0, kernels::Rule::kPositive, "mass"},
      {"k", 1.0, kernels::Rule::kPositive, "spring stiffness"},
  }};

  Real inv_m;
  Real k;

  static HarmonicOscillator from_params(const double* v) { return {Real(1.0 / v[0]), Real(v[1])}; }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return inv_m; }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    return Real(0.5) * k * q[0] * q[0];
  }
};

}  // namespace vigor::models
