/// @file blanes_moan6.hpp
/// @brief Sixth-order symplectic Runge–Kutta–Nyström splitting with 11 force evaluations per step
/// (Blanes & Moan 2002, SRKN_11^b).
///
///     Phi_h = K_{b1 h} D_{a1 h} K_{b2 h} ... D_{a5 h} K_{b6 h} D_{a6 h} K_{b6 h} D_{a5 h} ...
///     D_{a1 h} K_{b1 h}, a6 = 1 - 2 (a1 + ... + a5),   b6 = 1/2 - (b1 + ... + b5),
///
/// with the kick K_s: p += s F(q) and the drift D_s: q += s M^-1 p (composition.hpp takes the
/// steps). An RKN method: its order conditions assume a kinetic energy quadratic in p, T =
/// p^T M^-1 p / 2, which is what the explicit integrators' models have (diagonal masses), and
/// for those it is of order 6 with fewer conditions than a general splitting. Blanes and Moan
/// chose these weights, among the solutions with 11 stages, to minimise the leading error terms;
/// Yoshida's sixth-order composition (7 Verlet steps, weights up to 1.3 in magnitude) errs about
/// 2·10^4 times more at the same step on the pendulum of tests/test_integrators.cpp, and some
/// 1600 times more at the same number of force evaluations. Order 6, explicit, symplectic and
/// symmetric (palindromic); momentum maps of symmetries of V conserved to round-off; energy error
/// bounded, O(h^6), without drift. 11 force evaluations per step (first-same-as-last).
/// Reference: S. Blanes & P. C. Moan, J. Comput. Appl. Math. 142 (2002) 313–330, Table 3,
/// SRKN_11^b (the weights as printed there, 15 digits; b6 and a6 follow from consistency).
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/integrators/composition.hpp"

namespace vigor::kernels {

/// b1 ... b5 (kicks) and a1 ... a5 (drifts) of SRKN_11^b, outermost first.
struct BlanesMoan6Weights {
  static constexpr int kHalf = 5;
  VIGOR_HD static constexpr SplittingTable<kHalf> table() {
    return {{0.0414649985182624, 0.198128671918067, -0.0400061921041533, 0.0752539843015807,
             -0.0115113874206879},
            {0.123229775946271, 0.290553797799558, -0.127049212625417, -0.246331761062075,
             0.357208872795928}};
  }
};

template <class Real>
struct BlanesMoan6 {
  static constexpr const char* kName = "blanes_moan6";
  static constexpr const char* kDescription =
      "Blanes-Moan 6th-order RKN splitting (SRKN_11^b, 11 force evaluations)";
  static constexpr const char* kReference =
      "Blanes & Moan 2002, J. Comput. Appl. Math. 142, 313 (Table 3, SRKN_11^b)";
  static constexpr int kOrder = 6;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = true;
  static constexpr bool kCompensable = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  static BlanesMoan6 from_options(const double*) { return {}; }

  template <class M, class PS>
  VIGOR_HD VIGOR_INLINE void step(const M& m, PS& s, Real h) const {
    palindromic_splitting_step<BlanesMoan6Weights>(m, s, h);
  }
};

}  // namespace vigor::kernels
