/// @file compensated.hpp
/// @brief Compensated (Kahan) summation of a phase-space point's updates: the state a step adds
/// its increments to, with or without the round-off terms carried beside q and p.
///
/// A step of a splitting or of a collocation method moves q and p by increments far smaller than
/// q and p themselves; in a plain `q += d` each addition rounds away the part of d below half an
/// ulp of q, and over 10^5–10^7 substeps that is what limits the accuracy of high-order schemes
/// (docs/performance.md, work against precision). Compensated summation keeps the lost part in
/// e and adds it back with the next increment (Kahan 1965; in the form of Hairer, Lubich &
/// Wanner, Geometric Numerical Integration, VIII.5, Algorithm 5.1):
///
///     a = x;   e = e + d;   x = a + e;   e = e + (a - x)
///
/// so x + e carries the exact sum to about ε |d| per addition instead of ε |x|. Nothing here
/// rounds differently from a plain update when the state is a Phase: `add_to_q` and `add_to_p`
/// are `+=` for it and `add_product_to_q` / `add_product_to_p` one fused multiply-add, so the
/// schemes written with them give the plain scheme's bits. The identity needs no reassociation
/// by the compiler (vigor compiles without -ffast-math).
#pragma once

#include "kernels/core/arith.hpp"
#include "kernels/core/config.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/vec.hpp"

namespace vigor::kernels {

/// A Phase with the round-off terms of its positions and momenta (integrator.compensated). The
/// drivers store eq and ep per trajectory (EnsembleArrays::state_lo) so that a run gives the same
/// bits however it is cut into segments, chunks and resumed checkpoints.
template <class Real, int N>
struct CompensatedPhase : Phase<Real, N> {
  Vec<Real, N> eq = Vec<Real, N>::filled(Real(0));
  Vec<Real, N> ep = Vec<Real, N>::filled(Real(0));
};

/// x += d with the round-off carried in e (the file comment).
template <class S>
VIGOR_HD VIGOR_INLINE void compensated_add(S& x, S& e, const S& d) {
  const S a = x;
  e += d;
  x = a + e;
  e += a - x;
}

/// q_c += d and p_c += d: plain on a Phase, compensated on a CompensatedPhase.
template <class S, int N, class D>
VIGOR_HD VIGOR_INLINE void add_to_q(Phase<S, N>& s, int c, const D& d) {
  s.q[c] += d;
}
template <class S, int N, class D>
VIGOR_HD VIGOR_INLINE void add_to_p(Phase<S, N>& s, int c, const D& d) {
  s.p[c] += d;
}
template <class S, int N, class D>
VIGOR_HD VIGOR_INLINE void add_to_q(CompensatedPhase<S, N>& s, int c, const D& d) {
  compensated_add(s.q[c], s.eq[c], S(d));
}
template <class S, int N, class D>
VIGOR_HD VIGOR_INLINE void add_to_p(CompensatedPhase<S, N>& s, int c, const D& d) {
  compensated_add(s.p[c], s.ep[c], S(d));
}

/// q_c += a * b and p_c += a * b, the steps' kicks and drifts: on a Phase one fused multiply-add
/// (one rounding, the same instruction on the CPU lanes and the GPU; kernels/core/arith.hpp); on a
/// CompensatedPhase the rounded product is added with its round-off carried, as add_to_q does.
template <class S, int N, class A>
VIGOR_HD VIGOR_INLINE void add_product_to_q(Phase<S, N>& s, int c, const A& a, const S& b) {
  s.q[c] = fma(a, b, s.q[c]);
}
template <class S, int N, class A>
VIGOR_HD VIGOR_INLINE void add_product_to_p(Phase<S, N>& s, int c, const A& a, const S& b) {
  s.p[c] = fma(a, b, s.p[c]);
}
template <class S, int N, class A>
VIGOR_HD VIGOR_INLINE void add_product_to_q(CompensatedPhase<S, N>& s, int c, const A& a,
                                            const S& b) {
  compensated_add(s.q[c], s.eq[c], S(a * b));
}
template <class S, int N, class A>
VIGOR_HD VIGOR_INLINE void add_product_to_p(CompensatedPhase<S, N>& s, int c, const A& a,
                                            const S& b) {
  compensated_add(s.p[c], s.ep[c], S(a * b));
}

/// The state without its round-off terms: what sections are located from, on every lane type
/// alike (the SIMD lanes queue crossings as plain states), so the scalar and the SIMD paths
/// locate the same point. The terms are below half an ulp of each component.
template <class S>
VIGOR_HD VIGOR_INLINE const S& plain_state(const S& s) {
  return s;
}
template <class S, int N>
VIGOR_HD VIGOR_INLINE const Phase<S, N>& plain_state(const CompensatedPhase<S, N>& s) {
  return s;
}

}  // namespace vigor::kernels
