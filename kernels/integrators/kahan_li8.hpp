/// @file kahan_li8.hpp
/// @brief Eighth-order symplectic composition of Störmer–Verlet with 17 stages (Kahan & Li 1997,
/// s17odr8a).
///
///     Phi_h = V_{g1 h} ∘ ... ∘ V_{g8 h} ∘ V_{g0 h} ∘ V_{g8 h} ∘ ... ∘ V_{g1 h},
///     g0 = 1 - 2 (g1 + ... + g8) = -0.60550853383003451169892108...,
///
/// where V_h is the Störmer–Verlet step (stormer_verlet.hpp) and g1 ... g8 are the weights below
/// (composition.hpp takes the steps). Kahan and Li solved the order-8 conditions for a palindromic
/// composition of a symmetric second-order method with two stages more than the minimum (15) and
/// used the freedom to make the weights, and with them the error constants, small (Yoshida's
/// 15-stage schemes have weights near 2.4 in magnitude, these below 0.61). Order 8, explicit,
/// symplectic and symmetric (palindromic weights); momentum maps of symmetries of V conserved to
/// round-off; energy error bounded, O(h^8), without drift. 17 force evaluations per step (each
/// substep reuses the previous one's cached force).
/// References: W. Kahan & R.-C. Li, Math. Comp. 66 (1997) 1089–1099, method s17odr8a; Hairer,
/// Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §V.3.2 (the weights as printed
/// there, 26 digits). scripts/check_composition_order.py checks the order in 50-digit arithmetic.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/integrators/composition.hpp"

namespace vigor::kernels {

/// g1 ... g8 of s17odr8a, outermost first.
struct KahanLi8Weights {
  static constexpr int kHalf = 8;
  VIGOR_HD static constexpr CompositionTable<kHalf> table() {
    return {{
        0.13020248308889008087881763,
        0.56116298177510838456196441,
        -0.38947496264484728640807860,
        0.15884190655515560089621075,
        -0.39590389413323757733623154,
        0.18453964097831570709183254,
        0.25837438768632204729397911,
        0.29501172360931029887096624,
    }};
  }
};

template <class Real>
struct KahanLi8 {
  static constexpr const char* kName = "kahan_li8";
  static constexpr const char* kDescription =
      "Kahan-Li 8th-order composition of Stormer-Verlet (s17odr8a, 17 substeps)";
  static constexpr const char* kReference = "Kahan & Li 1997, Math. Comp. 66, 1089 (s17odr8a)";
  static constexpr int kOrder = 8;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = true;
  static constexpr bool kCompensable = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  static KahanLi8 from_options(const double*) { return {}; }

  template <class M, class PS>
  VIGOR_HD VIGOR_INLINE void step(const M& m, PS& s, Real h) const {
    palindromic_verlet_step<KahanLi8Weights>(m, s, h);
  }
};

}  // namespace vigor::kernels
