/// @file protocol.hpp
/// @brief What the drivers ask of an integrator beyond its step: which models it handles, whether
/// it may run in SIMD lanes, its Newton iteration count, and one call that takes a step whatever
/// the step's signature.
///
/// An integrator is a class template on Real with kName, kDescription, kReference, kOrder,
/// kSymplectic, kExplicit, kOptions and from_options (see integrators.def). Its step is one of
///
///     void step(const M&, State&, Real h) const;            // explicit, autonomous
///     Real step(const M&, State&, Real h, Real t) const;    // implicit and/or time-dependent:
///                                                           // returns the final Newton residual
///
/// It may declare `template <class M> static constexpr bool supports()` (default: separable,
/// unconstrained, unforced models — what explicit splitting handles), `kRequires` (a phrase for
/// the error message when a job pairs it with another model), `kLaneSafe` (default true: the
/// step has no data-dependent branch, so it runs on Pack lanes; see kernels/simd/), and, when
/// implicit, `kNewtonIterations` (the documented default) and a member `int newton_iterations`,
/// `kStepOutOfLine` (default false: the CPU lanes inline the step into the driver) and
/// `kLaneSubBlocks` (default false: an implicit step takes a block's registers side by side).
#pragma once

#include <concepts>
#include <type_traits>

#include "kernels/core/config.hpp"
#include "kernels/core/mechanics.hpp"

namespace vigor::kernels {

template <class I, class M>
inline constexpr bool integrator_supports = [] {
  if constexpr (requires {
                  { I::template supports<M>() } -> std::convertible_to<bool>;
                })
    return bool(I::template supports<M>());
  else
    return PlainSeparableModel<M>;
}();

template <class I>
inline constexpr const char* integrator_requires = [] {
  if constexpr (requires { I::kRequires; })
    return I::kRequires;
  else
    return "a separable model without constraints or external forces";
}();

template <class I>
inline constexpr bool integrator_lane_safe = [] {
  if constexpr (requires { I::kLaneSafe; })
    return bool(I::kLaneSafe);
  else
    return true;
}();

/// Whether the engines compile the pair's tangent map (kernels/tangent.hpp). An integrator may
/// declare `template <class M> static constexpr bool tangent_affordable()`: the dual-number
/// Jacobian of a step that itself differentiates a Lagrangian twice by nested duals multiplies
/// the number type's size by 2 dof + 1 once more, and for large dof the instantiation alone takes
/// minutes and the registers spill. Such pairs are refused by the job parser, by name.
template <class I, class M>
inline constexpr bool integrator_tangent_affordable = [] {
  if constexpr (requires {
                  { I::template tangent_affordable<M>() } -> std::convertible_to<bool>;
                })
    return bool(I::template tangent_affordable<M>());
  else
    return true;
}();

/// Default Newton iteration count of an implicit integrator (its kNewtonIterations), 0 for explicit
/// ones. Implicit integrators hold the count in a member `newton_iterations` set by the host.
template <class I>
inline constexpr int default_newton_iterations = [] {
  if constexpr (requires { I::kNewtonIterations; })
    return int(I::kNewtonIterations);
  else
    return 0;
}();

/// Whether an integrator's step solves equations by Newton's method (implicit and constrained
/// steps): its residual is reported and tested, and it runs no bursts.
template <class I>
inline constexpr bool integrator_solves = default_newton_iterations<I> > 0;

/// Whether the CPU lanes call the step as a function of its own rather than inlining it into the
/// segment driver: integrators whose step holds many numbers at once declare
/// `static constexpr bool kStepOutOfLine = true`. Inlined, such a step shares the register
/// allocation of the driver's loop, whose state, counters and event bookkeeping stay live across
/// it, and the compiler kept the step's temporaries on the stack (RATTLE's constraint-Jacobian
/// duals, copied by memcpy calls); in a function of its own they stay in registers, and the call
/// costs little beside a step of Newton iterations. Cheap implicit steps lose by it (Newmark),
/// so it is a choice per integrator (bench/lane_shape; docs/performance.md). GPU threads always
/// inline.
template <class I>
inline constexpr bool integrator_step_out_of_line = [] {
  if constexpr (requires { I::kStepOutOfLine; })
    return bool(I::kStepOutOfLine);
  else
    return false;
}();

/// Whether an implicit step asks the CPU lanes for sub-blocks of one register stepped in turn
/// rather than one pack of the block's registers side by side (kernels::lane_sub_blocks): a step
/// whose Newton system is a dense matrix of plain numbers (the Lie-group bodies' Cayley-chart
/// Jacobians, 3 x 3 and 6 x 6) holds more of them than the registers of one pack keep.
template <class I>
inline constexpr bool integrator_lane_sub_blocks = [] {
  if constexpr (requires { I::kLaneSubBlocks; })
    return bool(I::kLaneSubBlocks);
  else
    return false;
}();

/// Whether the integrator's step adds its increments to the state with add_to_q and add_to_p or
/// their add_product_ forms (kernels/core/compensated.hpp), so that it may run compensated
/// (integrator.compensated): it declares `static constexpr bool kCompensable = true` and takes its
/// state as a template parameter, Phase or CompensatedPhase.
template <class I>
inline constexpr bool integrator_compensable = [] {
  if constexpr (requires { I::kCompensable; })
    return bool(I::kCompensable);
  else
    return false;
}();

/// Whether the integrator runs compensated: kernels::Compensated<I> (compensated.hpp), whose
/// drivers carry the round-off terms per trajectory.
template <class I>
inline constexpr bool integrator_compensated = [] {
  if constexpr (requires { I::kCompensated; })
    return bool(I::kCompensated);
  else
    return false;
}();

/// Set the Newton iteration count (n > 0) of an implicit integrator; explicit ones ignore it.
template <class I>
inline void set_newton_iterations(I& integrator, int n) {
  if constexpr (requires { integrator.newton_iterations = n; })
    if (n > 0) integrator.newton_iterations = n;
}

/// One step of size h from time t; returns the step's final Newton residual (0 for explicit
/// steps).
template <class I, class M, class S, class Real>
VIGOR_HD VIGOR_INLINE Real take_step(const I& integrator, const M& m, S& s, Real h, Real t) {
  if constexpr (requires { integrator.step(m, s, h, t); }) {
    if constexpr (std::is_void_v<decltype(integrator.step(m, s, h, t))>) {
      integrator.step(m, s, h, t);
      return Real(0);
    } else {
      return integrator.step(m, s, h, t);
    }
  } else {
    integrator.step(m, s, h);
    return Real(0);
  }
}

#if !VIGOR_DEVICE_PASS
/// take_step as a function of its own, for the CPU lanes (integrator_step_out_of_line).
template <class I, class M, class S, class Real>
VIGOR_NOINLINE Real take_step_out_of_line(const I& integrator, const M& m, S& s, Real h, Real t) {
  return take_step(integrator, m, s, h, t);
}
#endif

}  // namespace vigor::kernels
