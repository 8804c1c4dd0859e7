/// @file toda_lattice.hpp
/// @brief Periodic Toda lattice of three particles: a model that is not part of vigor, written
/// in the same form as models/*.hpp and registered at run time by main.cpp.
///
///     L = sum_i 1/2 m qdot_i^2 - V(q),    V(q) = (a/b) sum_i [exp(-b (q_{i+1} - q_i)) - 1],
///     H = sum_i p_i^2 / (2 m) + V(q),     p_i = m qdot_i,
///
/// i = 0, 1, 2 on a ring (q_3 = q_0). Toda's pair potential (a/b) exp(-b r) + a r loses its linear
/// term on a ring (the separations r_i = q_{i+1} - q_i sum to zero), and the constant makes
/// V(0) = 0; V >= 0 everywhere (exp(-b r) - 1 >= -b r). Small oscillations are harmonic with
/// spring constant a b; b -> 0 is the harmonic chain, large b the hard-sphere limit.
/// State (q0, q1, q2, p0, p1, p2): positions along the ring and momenta. Parameters: m (> 0,
/// default 1), a (> 0, default 1), b (> 0, default 1).
/// Conserved: the energy H and, by translation invariance of V, the total momentum P = sum_i p_i
/// (reported as the momentum map "P"; Störmer–Verlet and Yoshida's composition keep it to
/// round-off). The lattice is completely integrable (Hénon's and Flaschka's integrals), so
/// symplectic integrators keep every orbit on a torus close to the exact one.
/// Source: M. Toda, J. Phys. Soc. Japan 22 (1967) 431; M. Hénon, Phys. Rev. B 9 (1974) 1921;
/// H. Flaschka, Phys. Rev. B 9 (1974) 1924.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace toda {

template <class Real>
struct TodaLattice {
  static constexpr const char* kName = "toda_lattice";
  static constexpr const char* kDescription =
      "periodic Toda lattice of 3 particles: H = sum p_i^2/(2m) + (a/b) sum (exp(-b (q_{i+1} - "
      "q_i)) - 1)";
  static constexpr int dof = 3;
  static constexpr std::array<vigor::kernels::ParamSpec, 3> kParams{{
      {"m", 1.0, vigor::kernels::Rule::kPositive, "particle mass"},
      {"a", 1.0, vigor::kernels::Rule::kPositive, "force scale of the Toda pair potential"},
      {"b", 1.0, vigor::kernels::Rule::kPositive, "inverse length scale of the repulsion"},
  }};
  static constexpr int kMomentumMaps = 1;
  static constexpr std::array<const char*, kMomentumMaps> kMomentumNames{{"P"}};

  Real inv_m;   ///< 1 / m
  Real a_by_b;  ///< a / b
  Real b;

  /// Host-only: the parameter values in kParams order, already validated (all > 0).
  static TodaLattice from_params(const double* v) {
    return {Real(1.0 / v[0]), Real(v[1] / v[2]), Real(v[2])};
  }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int) const { return inv_m; }

  /// Written once for every scalar type T: Real, SIMD packs of Real, and the dual numbers that
  /// give the force, the Hessian and the tangent map by automatic differentiation.
  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const vigor::kernels::Vec<T, dof>& q) const {
    using vigor::kernels::exp;
    const T e01 = exp(-b * (q[1] - q[0]));
    const T e12 = exp(-b * (q[2] - q[1]));
    const T e20 = exp(-b * (q[0] - q[2]));
    return a_by_b * (e01 + e12 + e20 - Real(3));
  }

  /// Total momentum P = p0 + p1 + p2, conserved because V depends on differences only.
  template <class T>
  VIGOR_HD VIGOR_INLINE vigor::kernels::Vec<T, kMomentumMaps> momentum_map(
      const vigor::kernels::Vec<T, dof>&, const vigor::kernels::Vec<T, dof>& p) const {
    return {{p[0] + p[1] + p[2]}};
  }
};

}  // namespace toda
