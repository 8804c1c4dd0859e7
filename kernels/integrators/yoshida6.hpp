/// @file yoshida6.hpp
/// @brief Sixth-order symplectic composition of Störmer–Verlet (Yoshida 1990, solution A).
///
///     Phi_h = V_{w3 h} ∘ V_{w2 h} ∘ V_{w1 h} ∘ V_{w0 h} ∘ V_{w1 h} ∘ V_{w2 h} ∘ V_{w3 h},
///     w1 = -1.17767998417887,  w2 = 0.235573213359357,  w3 = 0.784513610477560,
///     w0 = 1 - 2 (w1 + w2 + w3) = 1.315186320683906,
///
/// where V_h is the Störmer–Verlet step (stormer_verlet.hpp). The weights solve Yoshida's order
/// conditions for a symmetric 7-stage composition of a symmetric second-order method (sum w = 1,
/// sum w^3 = 0, sum w^5 = 0 and the remaining sixth-order condition); printed to 15 digits they
/// satisfy them to ~1e-14, far below any truncation error this step reaches in double.
/// Order 6, explicit, symplectic and symmetric (palindromic weights); momentum maps of symmetries
/// of V conserved to round-off; energy error bounded, O(h^6), without drift. Seven force
/// evaluations per step (each Verlet substep reuses the previous substep's cached force).
/// References: H. Yoshida, Phys. Lett. A 150 (1990) 262–268, §5, Table 1 (m = 3, solution A);
/// Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §V.3.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/integrators/stormer_verlet.hpp"

namespace vigor::kernels {

template <class Real>
struct Yoshida6 {
  static constexpr const char* kName = "yoshida6";
  static constexpr const char* kDescription =
      "Yoshida 6th-order composition of Stormer-Verlet (solution A, 7 substeps)";
  static constexpr const char* kReference = "Yoshida 1990, Phys. Lett. A 150, 262, Table 1 (A)";
  static constexpr int kOrder = 6;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = true;
  static constexpr bool kCompensable = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  static constexpr double kW1 = -1.17767998417887;
  static constexpr double kW2 = 0.235573213359357;
  static constexpr double kW3 = 0.784513610477560;
  static constexpr double kW0 = 1.0 - 2.0 * (kW1 + kW2 + kW3);

  static Yoshida6 from_options(const double*) { return {}; }

  /// PS is a Phase of Real or of a dual number over it (a tangent-map step, kernels/tangent.hpp;
  /// h and the coefficients stay plain, so no arithmetic is spent on their zero partials), or a
  /// CompensatedPhase (integrator.compensated).
  template <class M, class PS>
  VIGOR_HD VIGOR_INLINE void step(const M& m, PS& s, Real h) const {
    const StormerVerlet<Real> verlet{};
    const Real h1 = Real(kW1) * h;
    const Real h2 = Real(kW2) * h;
    const Real h3 = Real(kW3) * h;
    verlet.step(m, s, h3);
    verlet.step(m, s, h2);
    verlet.step(m, s, h1);
    verlet.step(m, s, Real(kW0) * h);
    verlet.step(m, s, h1);
    verlet.step(m, s, h2);
    verlet.step(m, s, h3);
  }
};

}  // namespace vigor::kernels
