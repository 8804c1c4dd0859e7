/// @file driven_pendulum.hpp
/// @brief Damped pendulum driven by a periodic torque (the Baker–Gollub chaotic pendulum).
///
///     L = 1/2 thdot^2 + omega0^2 cos th,     F(th, thdot, t) = -c thdot + A cos(Omega t),
///     i.e.  thddot + c thdot + omega0^2 sin th = A cos(Omega t)   (unit moment of inertia).
///
/// A separable model (unit mass, V = -omega0^2 cos th) with a time-dependent external force, which
/// the variational integrators take through the discrete Lagrange–d'Alembert principle (SCIENCE.md
/// §1); the explicit splitting methods reject it. The energy 1/2 p^2 - omega0^2 cos th is not
/// conserved. The natural section is stroboscopic: one point per drive period 2 pi / Omega.
/// State (q0, p0) = (th, p), p = thdot.
/// Parameters: omega0 (natural frequency, default 1), c (damping, default 0.5), A (drive
/// amplitude, default 1.15), Omega (drive frequency, default 2/3). The defaults are the classic
/// chaotic case of G. L. Baker and J. P. Gollub, Chaotic Dynamics: An Introduction (Cambridge
/// University Press, 2nd ed. 1996), ch. 3: in their units (omega0 = 1) damping 1/q with q = 2,
/// drive amplitude g = 1.15 and drive frequency omega_D = 2/3 give a strange attractor.
#pragma once

#include <array>

#include "kernels/core/math.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/core/vec.hpp"

namespace vigor::models {

template <class Real>
struct DrivenPendulum {
  static constexpr const char* kName = "driven_pendulum";
  static constexpr const char* kDescription =
      "damped, periodically driven pendulum: thddot + c thdot + omega0^2 sin th = A cos(Omega t)";
  static constexpr int dof = 1;
  static constexpr std::array<kernels::ParamSpec, 4> kParams{{
      {"omega0", 1.0, kernels::Rule::kPositive, "natural (small-amplitude) angular frequency"},
      {"c", 0.5, kernels::Rule::kNonNegative, "linear damping coefficient (1/q of Baker-Gollub)"},
      {"A", 1.15, kernels::Rule::kFinite, "drive amplitude (torque per unit moment of inertia)"},
      {"Omega", 2.0 / 3.0, kernels::Rule::kPositive, "drive angular frequency"},
  }};

  Real omega0_sq;  ///< omega0^2
  Real c;          ///< damping
  Real A;          ///< drive amplitude
  Real Omega;      ///< drive angular frequency

  static DrivenPendulum from_params(const double* v) {
    return {Real(v[0] * v[0]), Real(v[1]), Real(v[2]), Real(v[3])};
  }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return Real(1); }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    using kernels::cos;
    return -omega0_sq * cos(q[0]);
  }

  /// The non-conservative force: viscous damping plus the periodic drive.
  template <class T>
  VIGOR_HD VIGOR_INLINE kernels::Vec<T, dof> external_force(const kernels::Vec<T, dof>&,
                                                            const kernels::Vec<T, dof>& v,
                                                            T t) const {
    using kernels::cos;
    kernels::Vec<T, dof> F;
    F[0] = A * cos(Omega * t) - c * v[0];
    return F;
  }
};

}  // namespace vigor::models
