/// @file double_pendulum.hpp
/// @brief Planar double pendulum in its two angles: a non-separable Lagrangian.
///
///     L = 1/2 (m1 + m2) l1^2 w1^2 + 1/2 m2 l2^2 w2^2 + m2 l1 l2 w1 w2 cos(t1 - t2)
///         + (m1 + m2) g l1 cos t1 + m2 g l2 cos t2,
///
/// t1, t2 the rod angles from the downward vertical, w1, w2 their rates. The mass matrix
/// [[(m1+m2) l1^2, m2 l1 l2 cos(t1-t2)], [m2 l1 l2 cos(t1-t2), m2 l2^2]] depends on q (determinant
/// m2 l1^2 l2^2 (m1 + m2 sin^2(t1-t2)) > 0), so the implicit integrators' general path handles it
/// (and rk4 on Hamilton's equations, as a control); every derivative comes from forward AD of
/// lagrangian(). The energy
/// H = p . v - L is conserved; no continuous symmetry, hence no momentum map. Chaotic at moderate
/// energies (e.g. both rods released from 90 degrees).
/// State (q0, q1, p0, p1) = (t1, t2, p1, p2), p = dL/dv. Parameters m1, m2 (bob masses, > 0),
/// l1, l2 (rod lengths, > 0), g (>= 0), all default 1 (SCIENCE.md §3). Source: the standard
/// textbook double pendulum (e.g. Goldstein, Classical Mechanics, §1.6 and §6.4).
#pragma once

#include <array>
#include <type_traits>

#include "kernels/core/math.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/core/vec.hpp"

namespace vigor::models {

template <class Real>
struct DoublePendulum {
  static constexpr const char* kName = "double_pendulum";
  static constexpr const char* kDescription =
      "planar double pendulum in its angles (non-separable L: midpoint, midpoint4; rk4 as a "
      "control)";
  static constexpr int dof = 2;
  /// The CPU runs it in SIMD lanes in FP32 only (kernels::model_on_lanes). There the lanes pay:
  /// each step evaluates cos of nested duals, one sincos per pack instead of one per trajectory
  /// (called, not inlined, in its 9-component second derivatives: kernels::Dual::kTrigCalled).
  /// In FP64 the gain is small and does not pay for the pack instantiations' compile time
  /// (docs/performance.md, "The double pendulum in FP32 lanes").
  static constexpr bool kSimdLanes = std::is_same_v<Real, float>;
  static constexpr std::array<kernels::ParamSpec, 5> kParams{{
      {"m1", 1.0, kernels::Rule::kPositive, "upper bob mass"},
      {"m2", 1.0, kernels::Rule::kPositive, "lower bob mass"},
      {"l1", 1.0, kernels::Rule::kPositive, "upper rod length"},
      {"l2", 1.0, kernels::Rule::kPositive, "lower rod length"},
      {"g", 1.0, kernels::Rule::kNonNegative, "gravitational acceleration"},
  }};

  // Coefficients of L, computed once: L = a/2 w1^2 + b/2 w2^2 + c w1 w2 cos(t1-t2)
  //                                       + d cos t1 + e cos t2.
  Real half_a;  ///< (m1 + m2) l1^2 / 2
  Real half_b;  ///< m2 l2^2 / 2
  Real c;       ///< m2 l1 l2
  Real d;       ///< (m1 + m2) g l1
  Real e;       ///< m2 g l2

  static DoublePendulum from_params(const double* v) {
    const double m1 = v[0], m2 = v[1], l1 = v[2], l2 = v[3], g = v[4];
    return {Real(0.5 * (m1 + m2) * l1 * l1), Real(0.5 * m2 * l2 * l2), Real(m2 * l1 * l2),
            Real((m1 + m2) * g * l1), Real(m2 * g * l2)};
  }

  /// L(q, v) in scalar type T (a dual number when the integrators differentiate it).
  template <class T>
  VIGOR_HD VIGOR_INLINE T lagrangian(const kernels::Vec<T, dof>& q,
                                     const kernels::Vec<T, dof>& v) const {
    using kernels::cos;
    const T& w1 = v[0];
    const T& w2 = v[1];
    return half_a * (w1 * w1) + half_b * (w2 * w2) + c * (w1 * w2) * cos(q[0] - q[1]) +
           d * cos(q[0]) + e * cos(q[1]);
  }
};

}  // namespace vigor::models
