/// @file yoshida4.hpp
/// @brief Fourth-order symplectic composition of Störmer–Verlet (Yoshida / Forest–Ruth triple
/// jump).
///
///     Phi_h = V_{c1 h} ∘ V_{c0 h} ∘ V_{c1 h},
///     c1 = 1 / (2 - 2^{1/3}) = 1.3512071919596576...,   c0 = 1 - 2 c1 = -1.7024143839193153...
///
/// where V_h is the Störmer–Verlet step (stormer_verlet.hpp). A symmetric second-order method
/// composed with weights satisfying c0 + 2 c1 = 1 and c0^3 + 2 c1^3 = 0 is of order 4 (the odd
/// error terms vanish by symmetry). The middle substep runs backwards in time (c0 < 0).
/// Order 4, explicit, symplectic and symmetric (a composition of symplectic symmetric maps with a
/// palindromic weight sequence); momentum maps of symmetries of V conserved to round-off; energy
/// error bounded, O(h^4), without drift. Three force evaluations per step (each Verlet substep
/// reuses the previous substep's cached force).
/// References: H. Yoshida, Phys. Lett. A 150 (1990) 262–268, §4 (S_4 = S_2(x1 t) S_2(x0 t) S_2(x1
/// t), x1 = 1/(2 - 2^{1/3}), x0 = -2^{1/3}/(2 - 2^{1/3})); E. Forest & R. D. Ruth, Physica D 43
/// (1990) 105; Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., §II.4 (triple
/// jump).
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/integrators/triple_jump.hpp"

namespace vigor::kernels {

template <class Real>
struct Yoshida4 {
  static constexpr const char* kName = "yoshida4";
  static constexpr const char* kDescription =
      "Yoshida 4th-order triple-jump composition of Stormer-Verlet";
  static constexpr const char* kReference = "Yoshida 1990, Phys. Lett. A 150, 262, sec. 4";
  static constexpr int kOrder = 4;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = true;
  static constexpr bool kCompensable = true;
  static constexpr std::array<ParamSpec, 0> kOptions{};

  static Yoshida4 from_options(const double*) { return {}; }

  /// PS is a Phase of Real or of a dual number over it (a tangent-map step, kernels/tangent.hpp;
  /// h and the coefficients stay plain, so no arithmetic is spent on their zero partials), or a
  /// CompensatedPhase (integrator.compensated).
  /// A loop, not three written-out substeps: the model's force (with the pendulum, a whole pack
  /// sincos) is then compiled once per step copy, not three times. The substeps' products
  /// c h are the written-out ones, so are the bits (tests/test_integrators.cpp). The GPU unrolls
  /// the loop as the written-out code was.
  template <class M, class PS>
  VIGOR_HD VIGOR_INLINE void step(const M& m, PS& s, Real h) const {
    const StormerVerlet<Real> verlet{};
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < 3; ++i)
      verlet.step(m, s, (i == 1 ? Real(TripleJump::kInner) : Real(TripleJump::kOuter)) * h);
  }
};

}  // namespace vigor::kernels
