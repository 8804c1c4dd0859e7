/// @file formula_math.hpp
/// @brief abs, min and max as the models generated from formulas call them
/// (host/job/formula/codegen.cpp), for every scalar type a model meets: float and double, dual
/// numbers (nested for Hessians), and on the CPU the SIMD packs and duals of packs.
///
/// The duals' own abs and the plain min_of / max_of branch on a comparison (`a < b ? b : a`),
/// which a pack cannot do: its comparison is a mask, one answer per lane. Here the comparison
/// looks at the values only (lane_value: the plain number or pack under any nesting of duals) and
/// the choice is made lane by lane (lane_select), so each lane takes the branch its own
/// trajectory takes — what the one-trajectory path computes. On plain numbers they are
/// kernels::abs, min_of and max_of exactly.
#pragma once

#include "kernels/core/config.hpp"
#include "kernels/core/dual.hpp"
#include "kernels/core/math.hpp"
#if !defined(__CUDACC__)
#include "kernels/simd/pack.hpp"  // GCC vector extensions: host code only
#endif

namespace vigor::kernels {

/// The plain number or pack under a (nested) dual: what comparisons of duals compare.
template <class T>
VIGOR_HD VIGOR_INLINE T lane_value(const T& x) {
  return x;
}
template <class Real, int N>
VIGOR_HD VIGOR_INLINE auto lane_value(const Dual<Real, N>& x) {
  return lane_value(x.v);
}

/// a where m, else b; m is a bool, or a pack's mask choosing lane by lane.
template <class M, class T>
VIGOR_HD VIGOR_INLINE T lane_select(const M& m, const T& a, const T& b) {
  return m ? a : b;
}
template <class M, class Real, int N>
VIGOR_HD VIGOR_INLINE Dual<Real, N> lane_select(const M& m, const Dual<Real, N>& a,
                                                const Dual<Real, N>& b) {
  Dual<Real, N> r;
  r.v = lane_select(m, a.v, b.v);
  VIGOR_UNROLL
  for (int i = 0; i < N; ++i) r.d[i] = lane_select(m, a.d[i], b.d[i]);
  return r;
}
#if !defined(__CUDACC__)
template <class T, int W>
inline Pack<T, W> lane_select(const Mask<T, W>& m, const Pack<T, W>& a, const Pack<T, W>& b) {
  return select(m, a, b);
}
#endif

/// |x|: the plain and pack functions, and on duals -x or x as the value's sign says.
template <class T>
VIGOR_HD VIGOR_INLINE T formula_abs(const T& x) {
  return abs(x);
}
template <class Real, int N>
VIGOR_HD VIGOR_INLINE Dual<Real, N> formula_abs(const Dual<Real, N>& x) {
  using V = decltype(lane_value(x));
  return lane_select(lane_value(x) < V(0), -x, x);
}

/// min(a, b) = b < a ? b : a and max(a, b) = a < b ? b : a, as min_of and max_of.
template <class T>
VIGOR_HD VIGOR_INLINE T formula_min(const T& a, const T& b) {
  return lane_select(lane_value(b) < lane_value(a), b, a);
}
template <class T>
VIGOR_HD VIGOR_INLINE T formula_max(const T& a, const T& b) {
  return lane_select(lane_value(a) < lane_value(b), b, a);
}

}  // namespace vigor::kernels
