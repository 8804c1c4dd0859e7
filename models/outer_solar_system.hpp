/// @file outer_solar_system.hpp
/// @brief The outer solar system: the Sun (with the inner planets), Jupiter, Saturn, Uranus,
/// Neptune and Pluto as six gravitating point masses.
///
/// L = sum_b 1/2 m_b |v_b|^2 + G sum_{a<b} m_a m_b / |q_a - q_b|,
/// H = sum_b |p_b|^2 / (2 m_b) - G sum_{a<b} m_a m_b / |q_a - q_b|,   p_b = m_b v_b.
///
/// State: q index 3 b + c for body b (0 Sun, 1 Jupiter, 2 Saturn, 3 Uranus, 4 Neptune, 5 Pluto) and
/// component c (x, y, z), then p in the same order. Units: AU, days, solar masses, so that
/// G = 2.95912208286e-4 AU^3 / (M_sun day^2); the Sun's mass 1.00000597682 includes the inner
/// planets. Parameters: G (> 0) and the six masses m0 .. m5 (> 0), defaults as below.
///
/// The interaction is pairwise and central, so total linear momentum and total angular momentum are
/// conserved (exactly, to round-off, by explicit variational integrators), as is the energy.
/// reference_state() is the heliocentric initial state of 5 September 1994, 0h, in the Sun-at-rest
/// frame (so the centre of mass moves uniformly: total momentum is not zero). Suggested h: 10 days.
///
/// Source: Hairer, Lubich & Wanner, Geometric Numerical Integration, §I.2.4; also used by
/// Bou-Rabee's thesis (seed 003).
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"

namespace vigor::models {

template <class Real>
struct OuterSolarSystem {
  static constexpr const char* kName = "outer_solar_system";
  static constexpr const char* kDescription =
      "outer solar system, 6 bodies (HLW I.2.4): H = sum |p|^2/(2m) - G sum m_a m_b / |q_a - q_b|";
  static constexpr int kBodies = 6;
  static constexpr int dof = 3 * kBodies;
  static constexpr std::array<kernels::ParamSpec, 1 + kBodies> kParams{{
      {"G", 2.95912208286e-4, kernels::Rule::kPositive,
       "gravitational constant, AU^3 / (solar mass day^2)"},
      {"m0", 1.00000597682, kernels::Rule::kPositive, "mass of the Sun and inner planets"},
      {"m1", 0.000954786104043, kernels::Rule::kPositive, "mass of Jupiter"},
      {"m2", 0.000285583733151, kernels::Rule::kPositive, "mass of Saturn"},
      {"m3", 4.37273164546e-5, kernels::Rule::kPositive, "mass of Uranus"},
      {"m4", 5.17759138449e-5, kernels::Rule::kPositive, "mass of Neptune"},
      {"m5", 1.0 / 1.3e8, kernels::Rule::kPositive, "mass of Pluto"},
  }};

  Real gm[kBodies];     ///< G m_b
  Real m[kBodies];      ///< m_b
  Real inv_m[kBodies];  ///< 1 / m_b

  static OuterSolarSystem from_params(const double* v) {
    OuterSolarSystem s;
    for (int b = 0; b < kBodies; ++b) {
      // Products and reciprocals in double first, so a float model is the rounded exact value.
      s.gm[b] = Real(v[0] * v[1 + b]);
      s.m[b] = Real(v[1 + b]);
      s.inv_m[b] = Real(1.0 / v[1 + b]);
    }
    return s;
  }

  VIGOR_HD VIGOR_INLINE Real inv_mass(int i) const { return inv_m[i / 3]; }

  template <class T>
  VIGOR_HD VIGOR_INLINE T potential(const kernels::Vec<T, dof>& q) const {
    using kernels::sqrt;
    T V = T(Real(0));
    VIGOR_UNROLL
    for (int a = 0; a < kBodies; ++a) {
      VIGOR_UNROLL
      for (int b = a + 1; b < kBodies; ++b) {
        const T dx = q[3 * a] - q[3 * b];
        const T dy = q[3 * a + 1] - q[3 * b + 1];
        const T dz = q[3 * a + 2] - q[3 * b + 2];
        V -= (gm[a] * m[b]) / sqrt(dx * dx + dy * dy + dz * dz);
      }
    }
    return V;
  }

  /// Hand-written O(N^2) pairwise sum, each pair visited once (Newton's third law): AD of the
  /// potential would carry 18 partials through all 15 pairs.
  VIGOR_HD VIGOR_INLINE void potential_gradient(const kernels::Vec<Real, dof>& q,
                                                kernels::Vec<Real, dof>& g) const {
    using kernels::sqrt;
    VIGOR_UNROLL
    for (int i = 0; i < dof; ++i) g[i] = Real(0);
    VIGOR_UNROLL
    for (int a = 0; a < kBodies; ++a) {
      VIGOR_UNROLL
      for (int b = a + 1; b < kBodies; ++b) {
        const Real dx = q[3 * a] - q[3 * b];
        const Real dy = q[3 * a + 1] - q[3 * b + 1];
        const Real dz = q[3 * a + 2] - q[3 * b + 2];
        const Real inv_r = Real(1) / sqrt(dx * dx + dy * dy + dz * dz);
        const Real k = gm[a] * m[b] * inv_r * inv_r * inv_r;
        g[3 * a] += k * dx;
        g[3 * a + 1] += k * dy;
        g[3 * a + 2] += k * dz;
        g[3 * b] -= k * dx;
        g[3 * b + 1] -= k * dy;
        g[3 * b + 2] -= k * dz;
      }
    }
  }

  /// Total linear momentum sum_b p_b (translation invariance).
  VIGOR_HD VIGOR_INLINE kernels::Vec<Real, 3> total_linear_momentum(
      const kernels::Vec<Real, dof>& p) const {
    kernels::Vec<Real, 3> P = kernels::Vec<Real, 3>::filled(Real(0));
    VIGOR_UNROLL
    for (int b = 0; b < kBodies; ++b) {
      VIGOR_UNROLL
      for (int c = 0; c < 3; ++c) P[c] += p[3 * b + c];
    }
    return P;
  }

  /// Total angular momentum sum_b q_b x p_b about the origin (rotation invariance).
  VIGOR_HD VIGOR_INLINE kernels::Vec<Real, 3> total_angular_momentum(
      const kernels::Vec<Real, dof>& q, const kernels::Vec<Real, dof>& p) const {
    kernels::Vec<Real, 3> L = kernels::Vec<Real, 3>::filled(Real(0));
    VIGOR_UNROLL
    for (int b = 0; b < kBodies; ++b) {
      const int i = 3 * b;
      L[0] += q[i + 1] * p[i + 2] - q[i + 2] * p[i + 1];
      L[1] += q[i + 2] * p[i] - q[i] * p[i + 2];
      L[2] += q[i] * p[i + 1] - q[i + 1] * p[i];
    }
    return L;
  }

  /// The HLW initial state (q, then p = m v) for the default masses. Host only.
  static std::array<double, 2 * dof> reference_state() {
    // Heliocentric positions (AU) and velocities (AU/day) from HLW §I.2.4; the Sun at rest at 0.
    constexpr double kPosVel[kBodies][6] = {
        {0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
        {-3.5023653, -3.8169847, -1.5507963, 0.00565429, -0.00412490, -0.00190589},
        {9.0755314, -3.0458353, -1.6483708, 0.00168318, 0.00483525, 0.00192462},
        {8.3101420, -16.2901086, -7.2521278, 0.00354178, 0.00137102, 0.00055029},
        {11.4707666, -25.7294829, -10.8169456, 0.00288930, 0.00114527, 0.00039677},
        {-15.5387357, -25.2225594, -3.1902382, 0.00276725, -0.00170702, -0.00136504},
    };
    std::array<double, 2 * dof> s{};
    for (int b = 0; b < kBodies; ++b) {
      const double mass = kParams[1 + b].default_value;
      for (int c = 0; c < 3; ++c) {
        s[3 * b + c] = kPosVel[b][c];
        s[dof + 3 * b + c] = mass * kPosVel[b][3 + c];
      }
    }
    return s;
  }
};

}  // namespace vigor::models
