/// @file sections.hpp
/// @brief Poincaré sections: hyperplane crossings located at the integrator's own order.
///
/// A crossing found between two steps (t0, x0) -> (t0 + h, x1) is located in two stages.
///
/// 1. A first guess from the cubic Hermite polynomial through the end values and end derivatives
///    (the model's vector field at both ends, from StateOps::rates): interpolation error O(h^4)
///    (h^4/384 max|x''''|). The crossing time solves g(theta) = x_c(theta) - value = 0 on it by
///    Newton's method from the linear-interpolation root, a fixed number of iterations, the
///    iterate kept inside [0, 1] (locate_crossing).
/// 2. The scheme's own step of size theta h from x0, theta refined by Newton's method on
///    g(Phi_{theta h}(x0)) with the slope h dx_c/dt at the stepped state (locate_crossing_by_step).
///    The point reported is Phi_{theta h}(x0): a step of the run's own scheme, so it carries the
///    integrator's error and nothing more — O(h^p) globally for an order-p scheme, where the
///    Hermite point alone caps every scheme at O(h^4) (yoshida6 on Hénon–Heiles at h = 0.01: 600x
///    the grid states' error, docs/performance.md). The derivative of a consistent order-p step
///    with respect to its size is the vector field plus O(h^p), so each Newton iteration shrinks
///    the Hermite guess's O(h^4) error in theta by a factor O(h^p): two iterations leave it far
///    below round-off at any step size the schemes are run with. It works for every integrator
///    (explicit, implicit with its fixed Newton count, constrained — the point then lies on the
///    constraint manifold, which the Hermite point does not — and Lie-group), costs three steps
///    per crossing, and crossings are rare (Hénon–Heiles at h = 0.01: one in ~600 steps).
#pragma once

#include "kernels/core/config.hpp"
#include "kernels/core/dual.hpp"
#include "kernels/core/math.hpp"
#include "kernels/core/vec.hpp"
#include "kernels/integrators/protocol.hpp"

namespace vigor::kernels {

enum SectionKind : int { kSectionNone = 0, kSectionPlane = 1, kSectionStroboscopic = 2 };
enum SectionDirection : int { kDirBoth = 0, kDirUp = 1, kDirDown = -1 };

/// Which sign changes of g = x_c - value count as crossings.
///   up:   g0 < 0 <= g1     down: g0 > 0 >= g1     both: either.
/// The half-open convention counts a step that lands exactly on the plane once, not twice.
template <class Real>
VIGOR_HD VIGOR_INLINE bool is_crossing(Real g0, Real g1, int direction) {
  const bool up = g0 < Real(0) && g1 >= Real(0);
  const bool down = g0 > Real(0) && g1 <= Real(0);
  return direction == kDirUp ? up : (direction == kDirDown ? down : (up || down));
}

/// Cubic Hermite interpolation on the unit interval: value and d/dtheta.
/// x0, x1 end values; d0, d1 end derivatives already multiplied by the step h.
template <class Real>
VIGOR_HD VIGOR_INLINE Real hermite(Real x0, Real d0, Real x1, Real d1, Real th) {
  const Real th2 = th * th;
  const Real th3 = th2 * th;
  const Real h00 = Real(2) * th3 - Real(3) * th2 + Real(1);
  const Real h10 = th3 - Real(2) * th2 + th;
  const Real h01 = Real(3) * th2 - Real(2) * th3;
  const Real h11 = th3 - th2;
  return h00 * x0 + h10 * d0 + h01 * x1 + h11 * d1;
}
template <class Real>
VIGOR_HD VIGOR_INLINE Real hermite_slope(Real x0, Real d0, Real x1, Real d1, Real th) {
  const Real th2 = th * th;
  return (Real(6) * th2 - Real(6) * th) * (x0 - x1) +
         (Real(3) * th2 - Real(4) * th + Real(1)) * d0 + (Real(3) * th2 - Real(2) * th) * d1;
}

/// One Newton iteration on theta for a root of g between lo and hi, kept inside that bracket: the
/// bracket first shrinks to the side of theta where g changes sign (g0: g's value at theta = 0),
/// and an iterate that would leave it (or a vanishing slope) is replaced by the bracket's midpoint.
/// Where g bends inside the step — a crossing close to a turning point of the section coordinate —
/// plain Newton from the linear guess can leave [0, 1]; clamped to 0 it once returned the state
/// "at theta = 0", a step of size 0, which the midpoint rule on a Lagrangian turns into 0/0.
/// Where Newton stays inside the bracket, the iterate is Newton's. (select, not a branch: the same
/// code locates W crossings side by side in a Pack.)
template <class Real>
VIGOR_HD VIGOR_INLINE Real safeguarded_newton(const Real& g0, const Real& g, const Real& dg,
                                              const Real& th, Real& lo, Real& hi) {
  const auto root_above = g * g0 > Real(0);  // g still has g(0)'s sign at th
  lo = select(root_above, th, lo);
  hi = select(root_above, hi, th);
  const Real next = th - select(dg != Real(0), g / dg, Real(0));
  // Closed bracket (a converged iterate may round onto its end), but never theta = 0.
  const auto inside = (next >= lo) & (next <= hi) & (next > Real(0));
  return select(inside, next, Real(0.5) * (lo + hi));
}

/// Number of Newton iterations on the Hermite cubic. From the linear guess (error O(h^2) in theta
/// for a transversal crossing) Newton converges quadratically; four iterations reach round-off.
inline constexpr int kSectionNewtonIterations = 4;

/// The state and its rates (StateOps::rates), out of line: the locator evaluates them at four
/// points, and for a constrained or Lagrangian model the field is a Legendre solve and a multiplier
/// solve on nested dual numbers, too large to inline four times (compile times in
/// docs/performance.md, "Section points at the integrator's order").
template <class Ops, class M, class State, class Real>
VIGOR_HD VIGOR_NOINLINE void rates_out_of_line(const M& m, const State& s, Real t,
                                               Vec<Real, Ops::kDim>& x,
                                               Vec<Real, Ops::kDim>& xdot) {
  Ops::rates(m, s, t, x, xdot);
}

/// Locate the crossing of component `coord` through `value` inside the step of size h from s0 (at
/// time t0) to s1. Returns theta in [0, 1] (crossing time t0 + theta h) and the interpolated state
/// in `out` (Ops::kDim components). Ops is the model's StateOps (kernels/state.hpp).
template <class Ops, class M, class State, class Real>
VIGOR_HD inline Real locate_crossing(const M& m, const State& s0, const State& s1, Real t0,
                                     int coord, Real value, Real h, Vec<Real, Ops::kDim>& out) {
  constexpr int dim = Ops::kDim;
  Vec<Real, dim> x0, d0, x1, d1;
  rates_out_of_line<Ops>(m, s0, t0, x0, d0);
  rates_out_of_line<Ops>(m, s1, t0 + h, x1, d1);
  // Pick the section coordinate by unrolled compares (no run-time indexing of registers).
  Real g0 = Real(0), g1 = Real(0), s0c = Real(0), s1c = Real(0);
  VIGOR_UNROLL
  for (int c = 0; c < dim; ++c) {
    if (c == coord) {
      g0 = x0[c] - value;
      g1 = x1[c] - value;
      s0c = h * d0[c];
      s1c = h * d1[c];
    }
  }
  Real th = g0 / (g0 - g1);
  Real lo(0), hi(1);
  VIGOR_UNROLL
  for (int it = 0; it < kSectionNewtonIterations; ++it) {
    const Real g = hermite(g0, s0c, g1, s1c, th);
    const Real dg = hermite_slope(g0, s0c, g1, s1c, th);
    th = safeguarded_newton(g0, g, dg, th, lo, hi);
  }
  VIGOR_UNROLL
  for (int c = 0; c < dim; ++c) out[c] = hermite(x0[c], h * d0[c], x1[c], h * d1[c], th);
  // The located coordinate is on the plane by definition; pin it to remove interpolation noise.
  VIGOR_UNROLL
  for (int c = 0; c < dim; ++c)
    if (c == coord) out[c] = value;
  return th;
}

/// Newton iterations on the step size theta h (stage 2 above), from the Hermite guess.
inline constexpr int kSectionStepIterations = 2;

/// One step of size h from s at time t, out of line. The locator calls it three times: inlined,
/// the step would be compiled three more times into every engine; inlined once into a rolled
/// loop, nvcc's optimiser ran for over 15 CPU-minutes on the quaternion rigid body's kernels
/// (docs/performance.md, "Section points at the integrator's order").
template <class I, class M, class State, class Real>
VIGOR_HD VIGOR_NOINLINE State step_out_of_line(const I& integrator, const M& m, State s, Real h,
                                               Real t) {
  take_step(integrator, m, s, h, t);
  return s;
}

/// Locate the crossing as locate_crossing does, then at the integrator's order: the state is
/// Phi_{theta h}(s0), one step of the plain `integrator` (not one rebound to dual numbers: the
/// driver passes the plain one in tangent runs too) of size theta h from s0 at time t0. Returns
/// theta; `out` is that state with the section coordinate pinned to `value`.
template <class Ops, class I, class M, class State, class Real>
VIGOR_HD inline Real locate_crossing_by_step(const I& integrator, const M& m, const State& s0,
                                             const State& s1, Real t0, int coord, Real value,
                                             Real h, Vec<Real, Ops::kDim>& out) {
  static_assert(!is_dual_v<real_t<I>>, "crossings are located with the plain integrator");
  constexpr int dim = Ops::kDim;
  Real th = locate_crossing<Ops>(m, s0, s1, t0, coord, value, h, out);
  // g at theta = 0 and the bracket of the root: theta stays in (0, 1], never a step of size 0.
  const Real g0 = Ops::component(s0, coord) - value;
  Real lo(0), hi(1);
  State x = s0;
  VIGOR_UNROLL
  for (int it = 0; it <= kSectionStepIterations; ++it) {
    x = step_out_of_line(integrator, m, s0, th * h, t0);
    if (it == kSectionStepIterations) break;  // the state at the final theta
    Vec<Real, dim> xv, dv;
    rates_out_of_line<Ops>(m, x, t0 + th * h, xv, dv);
    Real g = Real(0), dg = Real(0);
    VIGOR_UNROLL
    for (int c = 0; c < dim; ++c) {
      if (c == coord) {
        g = xv[c] - value;
        dg = h * dv[c];
      }
    }
    th = safeguarded_newton(g0, g, dg, th, lo, hi);
  }
  out = Ops::as_vector(x);
  VIGOR_UNROLL
  for (int c = 0; c < dim; ++c)
    if (c == coord) out[c] = value;
  return th;
}

}  // namespace vigor::kernels
