/// @file state.hpp
/// @brief How the drivers see a model's state: load and store it, read one component, its energy,
/// its time derivative (for section interpolation), its momentum maps.
///
/// StateOps<M, Real> is written here once for every (q, p) model (separable or Lagrangian; the
/// state is a Phase, components q0..q(n-1) then p0..p(n-1)). A model whose state is something else
/// (the rigid body on SO(3): a rotation matrix and a body momentum) specialises StateOps in its
/// own header, with the same members:
///
///   using State;  static constexpr int kDim;                 // stored components
///   load(m, base, stride, s)   store(s, base, stride)         // component c at base[c * stride]
///   component(s, i)            as_vector(s)                   // unrolled selection; all of it
///   energy(m, s)               rates(m, s, t, x, xdot)        // H; x and dx/dt, kDim each
///   position_norm2(s)          momentum(m, s)                 // escape test; momentum maps
#pragma once

#include <cstdint>

#include "kernels/core/config.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/core/vec.hpp"

namespace vigor::kernels {

/// Component i of a canonical state (q then p). The index is known only at run time; selecting
/// with a fully unrolled compare keeps every component in a register (indexing would force the
/// state into local memory on the GPU and onto the stack on the CPU).
template <class Real, int N>
VIGOR_HD VIGOR_INLINE Real component(const Phase<Real, N>& s, int i) {
  Real x = Real(0);
  VIGOR_UNROLL
  for (int c = 0; c < N; ++c) {
    if (c == i) x = s.q[c];
    if (N + c == i) x = s.p[c];
  }
  return x;
}

template <class M, class Real>
struct StateOps {
  static constexpr int n = M::dof;
  static constexpr int kDim = 2 * n;
  static constexpr int kMomentumMaps = momentum_map_count<M>;
  using State = Phase<Real, n>;

  VIGOR_HD VIGOR_INLINE static void load(const M& m, const Real* base, std::int64_t stride,
                                         State& s) {
    VIGOR_UNROLL
    for (int c = 0; c < n; ++c) s.q[c] = base[c * stride];
    VIGOR_UNROLL
    for (int c = 0; c < n; ++c) s.p[c] = base[(n + c) * stride];
    // The explicit integrators reuse the force at q (first-same-as-last); others ignore f.
    if constexpr (SeparableModel<M>) {
      refresh_force(m, s);
    } else {
      s.f = Vec<Real, n>::filled(Real(0));
    }
  }

  VIGOR_HD VIGOR_INLINE static void store(const State& s, Real* base, std::int64_t stride) {
    VIGOR_UNROLL
    for (int c = 0; c < n; ++c) base[c * stride] = s.q[c];
    VIGOR_UNROLL
    for (int c = 0; c < n; ++c) base[(n + c) * stride] = s.p[c];
  }

  VIGOR_HD VIGOR_INLINE static Real component(const State& s, int i) {
    return kernels::component(s, i);
  }

  VIGOR_HD VIGOR_INLINE static Vec<Real, kDim> as_vector(const State& s) {
    Vec<Real, kDim> x;
    VIGOR_UNROLL
    for (int c = 0; c < n; ++c) {
      x[c] = s.q[c];
      x[n + c] = s.p[c];
    }
    return x;
  }

  VIGOR_HD VIGOR_INLINE static Real energy(const M& m, const State& s) {
    return mechanical_energy(m, s.q, s.p);
  }

  /// x = (q, p) and dx/dt = (v(q, p), dL/dq + F(t)), computed afresh: implicit integrators do
  /// not keep the cached force, and this runs only on the rare steps that cross a section.
  VIGOR_HD VIGOR_INLINE static void rates(const M& m, const State& s, Real t, Vec<Real, kDim>& x,
                                          Vec<Real, kDim>& xdot) {
    Vec<Real, n> qdot, pdot;
    phase_rates(m, s.q, s.p, t, qdot, pdot);
    VIGOR_UNROLL
    for (int c = 0; c < n; ++c) {
      x[c] = s.q[c];
      x[n + c] = s.p[c];
      xdot[c] = qdot[c];
      xdot[n + c] = pdot[c];
    }
  }

  VIGOR_HD VIGOR_INLINE static Real position_norm2(const State& s) { return norm2(s.q); }

  template <int K = kMomentumMaps>
  VIGOR_HD VIGOR_INLINE static Vec<Real, K> momentum(const M& m, const State& s) {
    return m.template momentum_map<Real>(s.q, s.p);
  }
};

}  // namespace vigor::kernels
