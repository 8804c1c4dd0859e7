/// @file pendulum_cartesian.hpp
/// @brief Planar pendulum in Cartesian coordinates, held on its circle by a holonomic constraint.
///
/// q = (x, y) in the plane (y up), diagonal mass m, one constraint:
///
///     L = 1/2 m (xdot^2 + ydot^2) - m g y,        g(q) = (x^2 + y^2 - l^2) / (2 l) = 0.
///
/// The constraint is written in position units: (|q|^2 - l^2)/(2l) = (|q| - l)(|q| + l)/(2l), which
/// is |q| - l to first order off the circle, so SHAKE/RATTLE residuals read as lengths, and it is a
/// polynomial (the Newton solve for the multiplier sees a quadratic, no square root).
/// With x = l sin(th), y = -l cos(th) this is models/pendulum.hpp (th from the downward vertical,
/// V = -m g l cos th, p_th = m l^2 thdot = x p_y - y p_x), the test of the constrained integrators
/// against an unconstrained one. Gravity breaks the rotation symmetry: no momentum map.
/// Parameters: m (> 0, default 1), l (> 0, default 1), g (>= 0, default 1), as models/pendulum.hpp.
/// Source: Stern & Desbrun (the pendulum); constraints by multipliers: Marsden & Wendlandt 1997.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct PendulumCartesian {
  static constexpr const char* kName = "pendulum_cartesian";
  static constexpr const char* kDescription =
      "planar pendulum in (x, y), constrained to |q| = l: H = |p|^2/(2 m) + m g y";
  static constexpr int dof = 2;
  static constexpr int kConstraints = 1;
  static constexpr std::array<kernels::ParamSpec, 3> kParams{{
      {"m", 1.0, kernels::Rule::kPositive, "bob mass"},
      {"l", 1.0, kernels::Rule::kPositive, "rod length"},
      {"g", 1.0, kernels::Rule::kNonNegative, "gravitational acceleration (along -y)"},
  }};

  Real inv_m;   ///< 1 / m
  Real mg;      ///< m g
  Real l2;      ///< l^2
  Real inv_2l;  ///< 1 / (2 l)

  static PendulumCartesian from_params(const double* v) {
    return {Real(1.0 / v[0]), Real(v[0] * v[2]), Real(v[1] * v[1]), Real(0.5 / v[1])};
  }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return inv_m; }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    return mg * q[1];
  }

  /// The force is constant; tests check this against AD.
  VIGOR_HD VIGOR_INLINE void potential_gradient(const kernels::Vec<Real, dof>&,
                                                kernels::Vec<Real, dof>& g) const {
    g[0] = Real(0);
    g[1] = mg;
  }

  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, kConstraints> constraints(
      const kernels::Vec<T, dof>& q) const {
    return {{(q[0] * q[0] + q[1] * q[1] - l2) * inv_2l}};
  }
};

}  // namespace vigor::models
