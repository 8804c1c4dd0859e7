/// @file sofspa10.hpp
/// @brief Tenth-order symplectic composition of Störmer–Verlet with 35 stages (Sofroniou &
/// Spaletta 2005).
///
///     Phi_h = V_{g1 h} ∘ ... ∘ V_{g17 h} ∘ V_{g0 h} ∘ V_{g17 h} ∘ ... ∘ V_{g1 h},
///     g0 = 1 - 2 (g1 + ... + g17),
///
/// where V_h is the Störmer–Verlet step (stormer_verlet.hpp) and g1 ... g17 are the weights below
/// (composition.hpp takes the steps). Sofroniou and Spaletta searched the solutions of the order-10
/// conditions of a palindromic 35-stage composition of a symmetric second-order method for small
/// weights and small leading error terms; this is their best method of order 10. Order 10,
/// explicit, symplectic and symmetric (palindromic weights); momentum maps of symmetries of V
/// conserved to round-off; energy error bounded, O(h^10), without drift. 35 force evaluations per
/// step (each substep reuses the previous one's cached force). For accuracies near double
/// round-off: in FP32 a smaller scheme reaches the same accuracy for less.
/// References: M. Sofroniou & G. Spaletta, Optim. Methods Softw. 20 (2005) 597–613 (order 10,
/// 35 stages); Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §V.3.2.
/// scripts/check_composition_order.py checks the order in 50-digit arithmetic.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/integrators/composition.hpp"

namespace vigor::kernels {

/// g1 ... g17, outermost first.
struct SofSpa10Weights {
  static constexpr int kHalf = 17;
  VIGOR_HD static constexpr CompositionTable<kHalf> table() {
    return {{
        0.078795722521686419263907679337684,
        0.31309610341510852776481247192647,
        0.027918383235078066109520273275299,
        -0.22959284159390709415121339679655,
        0.13096206107716486317465685927961,
        -0.26973340565451071434460973222411,
        0.074973343155891435666137105641410,
        0.11199342399981020488957508073640,
        0.36613344954622675119314812353150,
        -0.39910563013603589787862981058340,
        0.10308739852747107731580277001372,
        0.41143087395589023782070411897608,
        -0.0048663605831352617621956593099771,
        -0.39203335370863990644808193642610,
        0.051942502962449647037182904015976,
        0.050665090759924496335874344156866,
        0.049674370639729879054568800279461,
    }};
  }
};

template <class Real>
struct SofSpa10 {
  static constexpr const char* kName = "sofspa10";
  static constexpr const char* kDescription =
      "Sofroniou-Spaletta 10th-order composition of Stormer-Verlet (35 substeps)";
  static constexpr const char* kReference =
      "Sofroniou & Spaletta 2005, Optim. Methods Softw. 20, 597";
  static constexpr int kOrder = 10;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = true;
  static constexpr bool kCompensable = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  static SofSpa10 from_options(const double*) { return {}; }

  template <class M, class PS>
  VIGOR_HD VIGOR_INLINE void step(const M& m, PS& s, Real h) const {
    palindromic_verlet_step<SofSpa10Weights>(m, s, h);
  }
};

}  // namespace vigor::kernels
