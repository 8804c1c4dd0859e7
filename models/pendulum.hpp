/// @file pendulum.hpp
/// @brief Planar pendulum in its angle.
///
/// L = 1/2 m l^2 thdot^2 + m g l cos(th)   (th = 0 hanging down),
/// H = p^2 / (2 m l^2) - m g l cos(th),    p = m l^2 thdot.
/// State (q0, p0) = (th, p). Parameters: m (> 0, default 1), l (> 0, default 1), g (>= 0, default
/// 1). Source: Stern & Desbrun, "Discrete geometric mechanics for variational time integrators"
/// (the pendulum of their figures, h = 0.01; g and l are not given there, hence unit defaults).
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct Pendulum {
  static constexpr const char* kName = "pendulum";
  static constexpr const char* kDescription =
      "planar pendulum in its angle: H = p^2/(2 m l^2) - m g l cos(q)";
  static constexpr int dof = 1;
  static constexpr std::array<kernels::ParamSpec, 3> kParams{{
      {"m", 1.0, kernels::Rule::kPositive, "bob mass"},
      {"l", 1.0, kernels::Rule::kPositive, "rod length"},
      {"g", 1.0, kernels::Rule::kNonNegative, "gravitational acceleration"},
  }};

  Real inv_ml2;  ///< 1 / (m l^2)
  Real mgl;      ///< m g l

  static Pendulum from_params(const double* v) {
    return {Real(1.0 / (v[0] * v[1] * v[1])), Real(v[0] * v[2] * v[1])};
  }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return inv_ml2; }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    using kernels::cos;
    return -mgl * cos(q[0]);
  }
};

}  // namespace vigor::models
