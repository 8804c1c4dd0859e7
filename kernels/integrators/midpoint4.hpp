/// @file midpoint4.hpp
/// @brief Fourth-order variational integrator for non-separable Lagrangians and forced models:
/// the implicit midpoint rule (midpoint.hpp) composed by the triple jump.
///
///     Phi_h = M_{c1 h} ∘ M_{c0 h} ∘ M_{c1 h},
///     c1 = 1 / (2 - 2^{1/3}) = 1.3512071919596576...,   c0 = 1 - 2 c1 = -1.7024143839193153...
///
/// where M_h is the midpoint step of L_d(q0, q1) = h L((q0 + q1)/2, (q1 - q0)/h) (Newton on the
/// velocity, AD Jacobian: midpoint.hpp's general path), each substep from its own time (t, t + c1
/// h, t + (c1 + c0) h) for forced models. The midpoint rule is symmetric of order 2, so the
/// weights' conditions c0 + 2 c1 = 1 and c0^3 + 2 c1^3 = 0 give order 4 (Yoshida 1990;
/// triple_jump.hpp). The composition is itself a Runge–Kutta method: the three-stage diagonally
/// implicit one with b = (c1, c0, c1), a_ii = b_i / 2, a_ij = b_j for j < i, which satisfies b_i
/// a_ij + b_j a_ji = b_i b_j — a symplectic (partitioned) Runge–Kutta method, and the variational
/// integrator of the composed discrete Lagrangian (Marsden & West 2001, §2.5). Order 4 and
/// symmetric for every model it takes. Without forces (or with forces that derive from a
/// time-dependent potential): symplectic, momentum maps of symmetries of L conserved (discrete
/// Noether, to the Newton residual), energy error bounded, O(h^4), no drift. With damping the
/// substeps are discrete Lagrange–d'Alembert steps, which contract phase volume as the flow does.
///
/// Why it is here: the fourth-order reduced symplectic partitioned Runge–Kutta method (RSPRK) of
/// Jalnapurkar, Leok, Marsden & West (seed 002, eqs. 16a–f) on a Routhian. With the group acting
/// by addition the midpoint rule reduces exactly (docs/formula_models.md): the midpoint step on the
/// Routhian R in the canonical shape momenta is the unreduced midpoint step on the momentum level
/// mu, projected. Each substep keeps the discrete momentum, so every substep reduces the same way
/// and the composition on R is the RSPRK of this tableau: the reduced trajectory is the projection
/// of the unreduced one (their Theorem 2.3), now at order 4. The paper does not name its
/// fourth-order tableau; this one costs three midpoint solves per step.
///
/// For separable models gauss (stages = 2), lobatto3 and yoshida4 are the order-4 schemes; this
/// composition is offered for the models they do not take. Constrained models are left out: the
/// constrained midpoint step's symmetry, on which order 4 rests, is not tested. The middle substep
/// runs backwards in time with |c0 h| = 1.70 h, so Newton meets steps 1.7 times the nominal one:
/// kNewtonIterations = 4 reaches round-off for h <= 0.2 at unit frequencies where the midpoint rule
/// needs 3 (tests/test_implicit.cpp measures it). The returned residual is the largest of the
/// three. References: H. Yoshida, Phys. Lett. A 150 (1990) 262; Hairer, Lubich & Wanner, Geometric
/// Numerical Integration, 2nd ed., §II.4 and §VI.4; Jalnapurkar, Leok, Marsden & West, "Discrete
/// Routh reduction" (seed 002), §3 and §6.
#pragma once

#include <array>

#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/integrators/midpoint.hpp"
#include "kernels/integrators/triple_jump.hpp"

namespace vigor::kernels {

template <class Real>
struct Midpoint4 {
  static constexpr const char* kName = "midpoint4";
  static constexpr const char* kDescription =
      "4th-order triple-jump composition of the implicit midpoint rule (non-separable Lagrangian "
      "or forced models; the reduced RSPRK on a Routhian)";
  static constexpr const char* kReference =
      "Yoshida 1990, sec. 4; Marsden & West 2001, sec. 2.5; Jalnapurkar, Leok, Marsden & West "
      "2006, sec. 3";
  static constexpr int kOrder = 4;
  static constexpr bool kSymplectic = true;
  static constexpr bool kExplicit = false;
  static constexpr bool kLaneSafe = true;
  static constexpr int kNewtonIterations = 4;
  static constexpr const char* kRequires =
      "a Lagrangian or forced (q, p) model without constraints (separable models: gauss, "
      "lobatto3 or yoshida4)";
  static constexpr std::array<ParamSpec, 0> kOptions{};

  int newton_iterations = kNewtonIterations;

  static Midpoint4 from_options(const double*) { return {}; }

  template <class M>
  static constexpr bool supports() {
    return PhaseModel<M> && !PlainSeparableModel<M> && !ConstrainedModel<M>;
  }

  template <class M>
  static constexpr bool tangent_affordable() {
    return Midpoint<Real>::template tangent_affordable<M>();
  }

  /// One step from time t; returns the largest final Newton residual of the three substeps. A
  /// loop, not three calls: the midpoint step (a Newton solve with a nested-dual Jacobian) is then
  /// compiled once per engine rather than three times, which is what a formula model's plugin
  /// compile and the GPU kernel's size pay for (composition.hpp does the same for its substeps).
  template <class M>
  VIGOR_HD VIGOR_INLINE Real step(const M& m, Phase<Real, M::dof>& s, Real h, Real t) const {
    Midpoint<Real> substep{};
    substep.newton_iterations = newton_iterations;
    Real residual = Real(0);
    Real t_sub = t;
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int i = 0; i < 3; ++i) {
      const Real h_sub = (i == 1 ? Real(TripleJump::kInner) : Real(TripleJump::kOuter)) * h;
      // The substep's residual first: max_of(a, b) is a < b ? b : a, so a NaN there is kept.
      residual = max_of(substep.step(m, s, h_sub, t_sub), residual);
      t_sub = t_sub + h_sub;
    }
    return residual;
  }
};

}  // namespace vigor::kernels
