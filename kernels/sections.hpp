/// @file sections.hpp
/// @brief Poincaré sections: hyperplane crossings located by cubic Hermite interpolation.
///
/// Between two steps (t0, x0) -> (t0 + h, x1) every state component is interpolated by the cubic
/// Hermite polynomial through the end values and end derivatives (the model's vector field at both
/// ends, from StateOps::rates). Its interpolation error is O(h^4) (h^4/384 max|x''''|), so the
/// crossing time and state are as accurate as the step itself allows at fourth order, unlike linear
/// interpolation (O(h^2)). The crossing time solves g(theta) = x_c(theta) - value = 0 by Newton's
/// method started from the linear-interpolation root, with a fixed number of iterations (no
/// data-dependent trip count) and the iterate kept inside [0, 1].
#pragma once

#include "kernels/core/config.hpp"
#include "kernels/core/math.hpp"
#include "kernels/core/vec.hpp"

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

/// Number of Newton iterations on the Hermite cubic. From the linear guess (error O(h^2) in theta
/// for a transversal crossing) Newton converges quadratically; four iterations reach round-off.
inline constexpr int kSectionNewtonIterations = 4;

/// Locate the crossing of component `coord` through `value` inside the step of size h from s0 (at
/// time t0) to s1. Returns theta in [0, 1] (crossing time t0 + theta h) and the interpolated state
/// in `out` (Ops::kDim components). Ops is the model's StateOps (kernels/state.hpp).
template <class Ops, class M, class State, class Real>
VIGOR_HD inline Real locate_crossing(const M& m, const State& s0, const State& s1, Real t0,
                                     int coord, Real value, Real h, Vec<Real, Ops::kDim>& out) {
  constexpr int dim = Ops::kDim;
  Vec<Real, dim> x0, d0, x1, d1;
  Ops::rates(m, s0, t0, x0, d0);
  Ops::rates(m, s1, t0 + h, x1, d1);
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
  VIGOR_UNROLL
  for (int it = 0; it < kSectionNewtonIterations; ++it) {
    const Real g = hermite(g0, s0c, g1, s1c, th);
    const Real dg = hermite_slope(g0, s0c, g1, s1c, th);
    // A vanishing slope (tangential crossing) keeps the current iterate instead of dividing by 0.
    // (select, not a branch: the same code locates W crossings side by side in a Pack.)
    const Real delta = select(dg != Real(0), g / dg, Real(0));
    th = min_of(Real(1), max_of(Real(0), th - delta));
  }
  VIGOR_UNROLL
  for (int c = 0; c < dim; ++c) out[c] = hermite(x0[c], h * d0[c], x1[c], h * d1[c], th);
  // The located coordinate is on the plane by definition; pin it to remove interpolation noise.
  VIGOR_UNROLL
  for (int c = 0; c < dim; ++c)
    if (c == coord) out[c] = value;
  return th;
}

}  // namespace vigor::kernels
