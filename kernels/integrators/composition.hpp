/// @file composition.hpp
/// @brief Palindromic compositions of Störmer–Verlet and palindromic kick–drift splittings with
/// many stages, taken as loops.
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

#include "kernels/core/compensated.hpp"
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

/// The sum of a weight table (what the centre weights make up to consistency).
template <int N>
VIGOR_HD constexpr double weight_sum(const double (&w)[N]) {
  double sum = 0;
  for (int j = 0; j < N; ++j) sum += w[j];
  return sum;
}

template <class Weights>
VIGOR_HD constexpr double composition_centre() {
  return 1.0 - 2.0 * weight_sum(Weights::table().half);
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

/// One step of the composition with the weights of Weights. PS is a Phase of Real or of a dual
/// number over it (a tangent-map step; h and the weights stay plain), or a CompensatedPhase.
template <class Weights, class Real, class M, class PS>
VIGOR_HD VIGOR_INLINE void palindromic_verlet_step(const M& m, PS& s, Real h) {
  const StormerVerlet<Real> verlet{};
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int i = 0; i < 2 * Weights::kHalf + 1; ++i)
    verlet.step(m, s, Real(composition_weight<Weights>(i)) * h);
}

}  // namespace vigor::kernels

namespace vigor::kernels {

/// A palindromic kick–drift splitting of H = T(p) + V(q), taken as a loop (the form of the
/// Runge–Kutta–Nyström splittings of Blanes & Moan):
///
///     Phi_h = K_{b1 h} D_{a1 h} ... K_{bn h} D_{an h} K_{c h} D_{a0 h} K_{c h} D_{an h} K_{bn h}
///     ... D_{a1 h} K_{b1 h}, a0 = 1 - 2 (a1 + ... + an),   c = 1/2 - (b1 + ... + bn),
///
/// with the kick K_s: p += s F(q) and the drift D_s: q += s M^-1 p. Unlike a composition of
/// Verlet steps, kicks and drifts have weights of their own, which is what an RKN method of a
/// given order needs fewer stages for. The force at the end of each drift is kept for the next
/// kick, and the last kick's force is the next step's first (first-same-as-last): 2n + 1 force
/// evaluations per step.
template <int N>
struct SplittingTable {
  double kick[N];   ///< b1 ... bn, outermost first
  double drift[N];  ///< a1 ... an, outermost first
};

/// Weights: `static constexpr int kHalf` (n) and
/// `VIGOR_HD static constexpr SplittingTable<kHalf> table()`.
template <class Weights>
VIGOR_HD constexpr double splitting_centre_kick() {
  return 0.5 - weight_sum(Weights::table().kick);
}
template <class Weights>
VIGOR_HD constexpr double splitting_centre_drift() {
  return 1.0 - 2.0 * weight_sum(Weights::table().drift);
}

/// Kick weight i of the 2n + 2 kicks and drift weight i of the 2n + 1 drifts, mirrored about the
/// centre (the function-local table: see the file comment).
template <class Weights>
VIGOR_HD VIGOR_INLINE double splitting_kick(int i) {
  static constexpr SplittingTable<Weights::kHalf> kTable = Weights::table();
  constexpr int n = Weights::kHalf;
  const int j = i <= n ? i : 2 * n + 1 - i;
  return j == n ? splitting_centre_kick<Weights>() : kTable.kick[j];
}
template <class Weights>
VIGOR_HD VIGOR_INLINE double splitting_drift(int i) {
  static constexpr SplittingTable<Weights::kHalf> kTable = Weights::table();
  constexpr int n = Weights::kHalf;
  if (i == n) return splitting_centre_drift<Weights>();
  return kTable.drift[i < n ? i : 2 * n - i];
}

/// One step of the splitting with the weights of Weights. PS is a Phase of Real or of a dual
/// number over it (a tangent-map step; h and the weights stay plain), or a CompensatedPhase.
template <class Weights, class Real, class M, class PS>
VIGOR_HD VIGOR_INLINE void palindromic_splitting_step(const M& m, PS& s, Real h) {
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int i = 0; i < 2 * Weights::kHalf + 1; ++i) {
    const Real kick = Real(splitting_kick<Weights>(i)) * h;
    VIGOR_UNROLL
    for (int c = 0; c < M::dof; ++c) add_product_to_p(s, c, kick, s.f[c]);
    const Real drift = Real(splitting_drift<Weights>(i)) * h;
    VIGOR_UNROLL
    for (int c = 0; c < M::dof; ++c) add_product_to_q(s, c, drift * m.inv_mass(c), s.p[c]);
    s.f = force(m, s.q);
  }
  const Real kick = Real(splitting_kick<Weights>(2 * Weights::kHalf + 1)) * h;
  VIGOR_UNROLL
  for (int c = 0; c < M::dof; ++c) add_product_to_p(s, c, kick, s.f[c]);
}

}  // namespace vigor::kernels
