/// @file shake.hpp
/// @brief SHAKE in position–momentum form: the variational integrator of the trapezoidal discrete
/// Lagrangian with holonomic constraints added by multipliers.
///
///     p_{1/2} = p_0 + (h/2) (f(q_0) - G(q_0)^T lambda)
///     q_1     = q_0 + h M^{-1} p_{1/2},          g(q_1) = 0        (k multipliers lambda)
///     p_1     = p_{1/2} + (h/2) f(q_1)   ( = M (q_1 - q_0)/h + (h/2) f(q_1) = D2 L_d(q_0, q_1) )
///
/// with L_d = h [1/2 ((q1-q0)/h)^T M ((q1-q0)/h) - (V(q0) + V(q1))/2] and p_0 = -D1 L_d(q_0, q_1)
/// + (h/2) G(q_0)^T lambda (Marsden & Wendlandt 1997; SCIENCE.md §1). p_1 is computed as
/// p_{1/2} + (h/2) f(q_1), not from M (q_1 - q_0)/h, whose difference would cost digits.
/// The position step and its Newton solve are RATTLE's (constrained_step.hpp).
///
/// What it satisfies: g(q_k) = 0 to the Newton residual at every step; the positions are RATTLE's
/// exactly (in exact arithmetic), since p_1 differs from RATTLE's by (h/2) G(q_1)^T mu and the next
/// step's multiplier absorbs any G(q_1)^T component; hence order 2 in q, symmetric, and momentum
/// maps of symmetries conserved as by RATTLE. What it does NOT satisfy: the hidden constraint.
/// p_1 = D2 L_d is not tangent: G(q_1) M^{-1} p_1 = (h/2) G M^{-1} G^T mu = O(h) (the half step of
/// constraint force it omits); only the central velocity (q_{k+1} - q_{k-1})/(2h) is tangent to
/// O(h^2). The energy H(q_k, p_k) is still O(h^2) accurate (the normal part of p enters H at second
/// order: p_R^T M^{-1} G^T = 0 for the tangent p_R) and bounded. It is not a map of T*N; followed
/// by the projection of p onto T*N it is RATTLE, which is symplectic there. Use RATTLE when momenta
/// must lie on the manifold (the driver's energy and a job's section see p as it is).
///
/// Returns max_a |g_a(q_1)| at the final iterate, in the units of the model's constraints.
/// newton_iterations: as RATTLE (4, rattle.hpp).
/// References: J.-P. Ryckaert, G. Ciccotti and H. J. C. Berendsen, J. Comput. Phys. 23 (1977)
/// 327–341; Marsden & Wendlandt 1997; Hairer, Lubich & Wanner, §VII.1.4.
#pragma once

#include <array>

#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/specs.hpp"
#include "kernels/integrators/constrained_step.hpp"

namespace vigor::kernels {

template <class Real>
struct Shake : ConstrainedSplittingTraits {
  static constexpr const char* kName = "shake";
  static constexpr const char* kDescription =
      "SHAKE, variational (p = D2 L_d): Verlet with holonomic constraints, positions on the "
      "manifold, momenta not projected";
  static constexpr const char* kReference =
      "Ryckaert, Ciccotti & Berendsen 1977; Marsden & Wendlandt 1997";

  int newton_iterations = kNewtonIterations;

  static Shake from_options(const double*) { return {}; }

  template <class M>
  VIGOR_HD VIGOR_INLINE Real step(const M& m, Phase<Real, M::dof>& s, Real h, Real) const {
    constrained_kick_drift(m, s, h, newton_iterations);
    const Vec<Real, constraint_count<M>> g = m.template constraints<Real>(s.q);
    constrained_end_kick(m, s, h);
    return max_abs(g);
  }
};

}  // namespace vigor::kernels
