/// @file composition.hpp
/// @brief A palindromic composition of Störmer–Verlet with many stages, taken as a loop.
///
///     Phi_h = V_{g1 h} ∘ ... ∘ V_{gn h} ∘ V_{g0 h} ∘ V_{gn h} ∘ ... ∘ V_{g1 h},
///     g0 = 1 - 2 (g1 + ... + gn),
///
/// where V_h is the Störmer–Verlet step (stormer_verlet.hpp). A palindromic composition of a
/// symmetric method is symmetric, so only odd-order error terms need cancelling; the weights of
/// the schemes that use this helper (kahan_li8.hpp, sofspa10.hpp) solve those conditions.
///
/// yoshida4 and yoshida6 write their three and seven substeps out. With 17 or 35 substeps the
/// model's force would be inlined as many times into every engine (both precisions, the SIMD lanes,
/// the tangent map, the GPU kernel): the loop keeps one copy. The weights are read per substep
/// from a function-local constant table, which host and device code can both index at run time
/// (a GPU thread reads it through the read-only cache, every thread of a warp the same entry); a
/// class's static array would be host memory, and a `switch` of literals became a chain of
/// compares and selects in the GPU kernel.
#pragma once

#include "kernels/core/config.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/integrators/stormer_verlet.hpp"

namespace vigor::kernels {

/// Weights: `static constexpr int kHalf` (n, the weights on one side of the centre) and
/// `VIGOR_HD static constexpr CompositionTable<kHalf> table()`: g_1 ... g_n, outermost first.
template <int N>
struct CompositionTable {
  double half[N];
};

template <class Weights>
VIGOR_HD constexpr double composition_centre() {
  constexpr CompositionTable<Weights::kHalf> t = Weights::table();
  double sum = 0;
  for (int j = 0; j < Weights::kHalf; ++j) sum += t.half[j];
  return 1.0 - 2.0 * sum;
}

/// Weight i of the 2n + 1 substeps: the table mirrored about the centre.
template <class Weights>
VIGOR_HD VIGOR_INLINE double composition_weight(int i) {
  static constexpr CompositionTable<Weights::kHalf> kTable = Weights::table();
  constexpr int n = Weights::kHalf;
  constexpr double centre = composition_centre<Weights>();
  if (i == n) return centre;
  return kTable.half[i < n ? i : 2 * n - i];
}

/// One step of the composition with the weights of Weights. S is Real or a dual number over it (a
/// tangent-map step); h and the weights stay plain.
template <class Weights, class Real, class M, class S>
VIGOR_HD VIGOR_INLINE void palindromic_verlet_step(const M& m, Phase<S, M::dof>& s, Real h) {
  const StormerVerlet<Real> verlet{};
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int i = 0; i < 2 * Weights::kHalf + 1; ++i)
    verlet.step(m, s, Real(composition_weight<Weights>(i)) * h);
}

}  // namespace vigor::kernels
