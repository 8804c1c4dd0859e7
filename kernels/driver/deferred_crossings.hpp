/// @file deferred_crossings.hpp
/// @brief Crossings located after the step loop rather than inside it: the GPU thread's lane
/// policy (DeferredLanes) and the pass that locates what it stored (locate_stored_crossings).
///
/// Locating a crossing at the integrator's order takes three steps of the scheme and four
/// evaluations of the field (kernels/sections.hpp). On a GPU thread that code, even out of line,
/// sets the segment kernel's register count: ptxas gives a kernel the registers of the deepest
/// function it may call, so the rare locator raised the step loop's count for every trajectory
/// (Hénon–Heiles Verlet FP64 80 -> 111, the J2 satellite's midpoint FP32 80 -> 168, and the double
/// spherical pendulum's midpoint FP32 began to spill; docs/performance.md, "Section points at the
/// integrator's order"). So the GPU thread only stores what a crossing needs — the state before
/// the crossing step and that step's count — in the very hit slot the crossing claimed, and a
/// second kernel, launched right after the segment kernel, locates them all
/// (kernels/cuda/segment_kernel.cuh). Counters, slots, pauses and stops are decided in the step
/// loop exactly as with LocateNow; only the located time and state are written later.
///
/// The state after the crossing step is not stored: the locating pass takes that step again from
/// the stored state, with the same scheme, step size and time. Where both passes compile to the
/// same operations (the CPU: -ffp-contract=off) the hit equals LocateNow's bit for bit
/// (tests/test_sections.cpp); on a GPU, nvcc may contract the two copies of the step differently,
/// which moves a located point by round-off only.
#pragma once

#include <cstdint>

#include "kernels/core/config.hpp"
#include "kernels/driver/lanes.hpp"
#include "kernels/driver/segment.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/sections.hpp"

namespace vigor::kernels {

/// Crossings stored for a later pass: the hit slot gets the step count before the crossing step
/// (as T, in the time's place) and the state before it (in the state's place).
template <class OpsS, class T>
struct StoreForLocating {
  template <class MP, class MS, class IP, class IS, class State>
  VIGOR_HD VIGOR_INLINE void add(const MP&, const MS&, const IP&, const IS&,
                                 const EnsembleArrays<T>& a, const SegmentParams<T>& sp,
                                 const State& x0, const State&, int, std::int64_t i, int slot,
                                 T k_before) {
    const std::int64_t n = sp.n;
    const std::int64_t cap = sp.hit_capacity;
    a.hits[slot * n + i] = k_before;
    OpsS::store(x0, a.hits + (cap + slot) * n + i, cap * n);
  }
  template <class MP, class MS, class IP, class IS>
  VIGOR_HD VIGOR_INLINE void flush(const MP&, const MS&, const IP&, const IS&,
                                   const EnsembleArrays<T>&, const SegmentParams<T>&) {}
};

/// One trajectory whose crossings are located by locate_stored_crossings: the GPU thread.
template <class T_>
struct DeferredLanes : EventBurstLanes<ScalarLanes<T_>> {
  template <class OpsS>
  using Crossings = StoreForLocating<OpsS, T_>;
};

/// Locate the crossings trajectory i stored in this launch (hit slots 0 .. hit_count[i] - 1) and
/// overwrite each slot with its located time and state, as LocateNow writes them. `integrator`
/// is the plain scheme of the run (in tangent runs too, as the driver locates with it).
template <class M, class I, class Real>
VIGOR_HD inline void locate_stored_crossings(const M& m, const I& integrator,
                                             const SegmentParams<Real>& sp,
                                             const EnsembleArrays<Real>& a, std::int64_t i) {
  using Ops = StateOps<M, Real>;
  const std::int64_t n = sp.n;
  const std::int64_t cap = sp.hit_capacity;
  const Real h = sp.h;
  const int count = a.hit_count[i];
  for (int slot = 0; slot < count; ++slot) {
    const Real k_before = a.hits[slot * n + i];
    typename Ops::State x0;
    Ops::load(m, a.hits + (cap + slot) * n + i, cap * n, x0);
    typename Ops::State x1 = x0;
    take_step(integrator, m, x1, h, k_before * h);
    Vec<Real, Ops::kDim> x;
    const Real th = locate_crossing_by_step<Ops>(integrator, m, x0, x1, k_before * h,
                                                 sp.section_coord, sp.section_value, h, x);
    write_hit<Ops::kDim>(a, sp, i, slot, (k_before + th) * h, x);
  }
}

}  // namespace vigor::kernels
