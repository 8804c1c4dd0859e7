/// @file advance.hpp
/// @brief The driver: a block of trajectories through one segment of time steps, written once
/// over a lane type (kernels/driver/lanes.hpp) for the GPU thread, the CPU's scalar path and the
/// CPU's SIMD lanes.
///
/// The CUDA kernel (kernels/cuda/segment_kernel.cuh) runs advance_trajectory — advance_lanes on
/// ScalarLanes, one trajectory per thread; the CPU engine runs advance_lanes on PackLanes
/// (kernels/simd/pack_lanes.hpp), B sub-blocks of W lanes per call, or on ScalarLanes where a
/// model or step has no lane form. The state is loaded from structure-of-arrays memory
/// (`x[component * n + trajectory]`) into registers, the steps run until the segment's end step,
/// and a trajectory ("lane") leaves the loop early when
///   * a step failed (kernels::failed_lanes): it is frozen at the state before that step
///     (kStatusNonFinite);
///   * |q| exceeded the escape radius: frozen at the first state outside (kStatusEscaped);
///   * an implicit step's final Newton residual exceeded the job's newton_tolerance: stopped at
///     the state that step produced (kStatusNewtonNotConverged);
///   * its section buffer for this drain is full: it pauses; the host drains the buffer and
///     launches the segment again, and paused trajectories continue exactly where they were, so
///     no crossing is ever lost to a full buffer.
/// A lane that stops writes its state, step count and maxima at once ("retires"); its register
/// lanes keep being computed but `active` masks them out of every later decision, so the common
/// step needs no blend. Every lane computes what a one-lane run computes, bit for bit (vigor
/// compiles its C++ with -ffp-contract=off), wherever it sits in the ensemble.
///
/// Bursts: when nothing is tested between conservation checks (segment_allows_bursts: no section,
/// no escape radius; and an explicit step, no tangent map), the iterations before the next check
/// run back to back with no test at all — the loop a hand-written kernel runs — and the burst is
/// validated once at its end. Explicit steps update q and p additively (x += ...), so a component
/// that once turns inf or NaN stays non-finite: a finite state at the end of a burst means every
/// state in it was finite, which is all the per-step test would have found. A burst that ends
/// non-finite is undone and its steps are taken again one at a time, which freezes the failing
/// lane at its step; bursts resume after it. Same operations in the same order: the results are
/// bit-identical to per-step testing (SegmentParams::bursts = false, the tests' reference).
///
/// Event bursts: where something is tested after every step (a plane section, an escape radius,
/// H at every step; segment_allows_event_bursts), up to sp.event_burst steps run with only
/// branch-free bookkeeping — the checks' maxima folded as the per-step path folds them, and one
/// flag per lane for "something may have happened" (a sign change of the section function, |q|
/// past the radius, a non-finite |H - H0| or state). A burst with no flag stands; a flagged one is
/// undone and taken again step by step, which records the crossing, the escape or the freeze
/// exactly. Crossings come every few hundred steps, so few bursts are retaken; the retaken share
/// grows with the burst length and, on a block or a GPU warp, with the lanes that share it, which
/// is what the length trades against (docs/performance.md, "Events in bursts"). They are compiled
/// only for lane types that run them (L::kEventBursts: the GPU thread, and the CPU's lanes in the
/// tests that pin them; kernels::EventBurstLanes says why).
///
/// With kTangent the lanes also carry the tangent map (kernels/tangent.hpp): the integrator runs
/// on the dual state, the primal state is read off it after every step (so the policy above is
/// unchanged), the chaos accumulators advance with it, and a retiring lane writes its partials
/// and diagnostics.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/core/config.hpp"
#include "kernels/driver/lane_driver.hpp"
#include "kernels/driver/lanes.hpp"
#include "kernels/driver/segment.hpp"

namespace vigor::kernels {

/// Advance the trajectories i0 .. i0 + valid - 1 (valid <= L::NB) to sp.end_step, or until each
/// stops or pauses. mp and ip: the model and the integrator on L::Real (ip on the dual state with
/// kTangent); ms and is: the model and the plain integrator on L::T, which locate crossings one
/// at a time; ids: the integrator of the tangent step on L::T (is itself without kTangent), whose
/// chart enters the tangent diagnostics. On ScalarLanes mp and ms are the same model. Crossings
/// are located with the plain step even with kTangent: its values are the dual step's, bit for
/// bit (kernels/core/dual.hpp), and the plain step is the one the plain runs compile anyway, not
/// a second copy of an implicit scheme's dual step.
///
/// The sub-blocks are stepped one after the other in every iteration: B independent dependency
/// chains for the out-of-order core with only one sub-block's temporaries live at a time. Values
/// per sub-block live in arrays indexed only by constants (for_each_sub); rare paths (a crossing,
/// a retiring lane) read copies made where they start (Snapshot), so the loop's own values never
/// need a memory address and stay in registers.
template <class L, bool kTangent, class MP, class MS, class IP, class IS, class IDS>
VIGOR_HD inline void advance_lanes(const MP& mp, const MS& ms, const IP& ip, const IS& is,
                                   const IDS& ids, const SegmentParams<typename L::T>& sp,
                                   const EnsembleArrays<typename L::T>& a, std::int64_t i0,
                                   int valid_lanes) {
  LaneDriver<L, kTangent, MP, MS, IP, IS, IDS>::advance(mp, ms, ip, is, ids, sp, a, i0,
                                                        valid_lanes);
}

/// Advance trajectory i from its current step to sp.end_step (or until it stops or pauses): one
/// GPU thread, or one trajectory of the CPU's scalar path.
template <class M, class Integrator, class Real>
VIGOR_HD inline void advance_trajectory(const M& m, const Integrator& integrator,
                                        const SegmentParams<Real>& sp,
                                        const EnsembleArrays<Real>& a, std::int64_t i) {
  advance_lanes<ScalarLanes<Real>, false>(m, m, integrator, integrator, integrator, sp, a, i, 1);
}

/// The same with the tangent map: `integrator_d` is tangent_integrator_t<Integrator, M, Real>
/// (kernels/tangent.hpp), `integrator` the plain one (it locates crossings), and a.tangent,
/// a.tangent_acc, a.tangent_out, a.state0 are set.
template <class M, class Integrator, class IntegratorD, class Real>
VIGOR_HD inline void advance_trajectory_tangent(const M& m, const Integrator& integrator,
                                                const IntegratorD& integrator_d,
                                                const SegmentParams<Real>& sp,
                                                const EnsembleArrays<Real>& a, std::int64_t i) {
  advance_lanes<ScalarLanes<Real>, true>(m, m, integrator_d, integrator, integrator_d, sp, a, i, 1);
}

}  // namespace vigor::kernels
