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
#include "kernels/core/math.hpp"
#include "kernels/driver/events.hpp"
#include "kernels/driver/lanes.hpp"
#include "kernels/driver/segment.hpp"
#include "kernels/integrators/compensated.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"

namespace vigor::kernels {

/// Whether the driver may run an integrator's steps as bursts (see the file comment): explicit
/// steps without a tangent map; the segment decides the rest (segment_allows_bursts).
template <class I, bool kTangent = false>
inline constexpr bool kBurstable = !kTangent && !integrator_solves<I>;

/// What the driver keeps per lane besides the values in registers: the step count the lane
/// started the launch at (lane l has taken k0[l] + it steps after iteration `it` while active),
/// its section counters and status, and which lanes still advance (bit l: lane l).
template <class L>
struct LaneRecords {
  using Bits = typename L::Bits;
  std::int64_t k0[L::NB], crossings[L::NB], recorded[L::NB];
  int hits[L::NB];
  std::int32_t status[L::NB];
  Bits active = 0;

  template <class T>
  VIGOR_HD VIGOR_INLINE void load(const EnsembleArrays<T>& a, std::int64_t i0, int valid,
                                  std::int64_t end_step) {
    for (int l = 0; l < valid; ++l) {
      const std::int64_t i = i0 + l;
      a.hit_count[i] = 0;
      k0[l] = a.step[i];
      crossings[l] = a.crossings[i];
      recorded[l] = a.recorded[i];
      hits[l] = 0;
      status[l] = a.status[i];
      if (status[l] == kStatusOk && k0[l] < end_step) active |= Bits(1) << l;
    }
  }
  template <class T>
  VIGOR_HD VIGOR_INLINE void store(const EnsembleArrays<T>& a, std::int64_t i0, int valid) const {
    for (int l = 0; l < valid; ++l) {
      const std::int64_t i = i0 + l;
      a.status[i] = status[l];
      a.crossings[i] = crossings[l];
      a.recorded[i] = recorded[l];
      a.hit_count[i] = hits[l];
    }
  }
  /// Iterations every active lane can still take from iteration `it`: until then none reaches
  /// end_step.
  VIGOR_HD VIGOR_INLINE std::int64_t horizon(std::int64_t end_step, std::int64_t it,
                                             int valid) const {
    std::int64_t h = end_step;
    for (int l = 0; l < valid; ++l)
      if ((active >> l & 1) && end_step - (k0[l] + it) < h) h = end_step - (k0[l] + it);
    return h;
  }
};

/// A retiring lane's tangent map: its partials and accumulators, and the diagnostics of the map
/// (NaN for a lane frozen on a non-finite step, whose tangent map means nothing). sd: the lane's
/// dual state on T; ids: the integrator on T's duals (its symplectic chart enters the form).
template <class TOpsS, class MS, class IDS, class T>
VIGOR_HD inline void retire_tangent(const MS& ms, const IDS& ids, const typename TOpsS::StateD& sd,
                                    const TangentAccumulators<T>& acc, std::int32_t status,
                                    std::int64_t k, T h, const EnsembleArrays<T>& a, std::int64_t n,
                                    std::int64_t i) {
  constexpr int K = TOpsS::K;
  const auto xs = TOpsS::OpsD::as_vector(sd);
  VIGOR_UNROLL
  for (int c = 0; c < TOpsS::kStored; ++c) {
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) a.tangent[(c * K + j) * n + i] = xs[c].d[j];
  }
  acc.store(a.tangent_acc, n, i);
  if (status == kStatusNonFinite) {
    for (int c = 0; c < kTangentOutCount; ++c)
      a.tangent_out[c * n + i] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  typename TOpsS::State x0;
  TOpsS::Ops::load(ms, a.state0 + i, n, x0);
  tangent_diagnostics<TOpsS>(ids, ms, x0, sd, acc, k, h, a.tangent_out, n, i);
}

/// The round-off terms of a compensated state (kernels/core/compensated.hpp), sub-block b's lanes
/// of a.state_lo ([c * n + i], q's terms then p's); nothing for other states.
template <class L, class State>
VIGOR_HD VIGOR_INLINE void load_round_off(const EnsembleArrays<typename L::T>& a, std::int64_t n,
                                          std::int64_t i0, int b, int valid, State& s) {
  if constexpr (requires { s.eq; }) {
    constexpr int d = decltype(s.eq)::size;
    VIGOR_UNROLL
    for (int c = 0; c < d; ++c) {
      s.eq[c] = L::load(a.state_lo + c * n, i0, b, valid);
      s.ep[c] = L::load(a.state_lo + (d + c) * n, i0, b, valid);
    }
  }
}

/// Lane ll's round-off terms into trajectory i's place in a.state_lo; nothing for other states.
template <class L, class State>
VIGOR_HD VIGOR_INLINE void store_round_off(const State& s, int ll,
                                           const EnsembleArrays<typename L::T>& a, std::int64_t n,
                                           std::int64_t i) {
  if constexpr (requires { s.eq; }) {
    constexpr int d = decltype(s.eq)::size;
    for (int c = 0; c < d; ++c) {
      a.state_lo[c * n + i] = L::lane(s.eq[c], ll);
      a.state_lo[(d + c) * n + i] = L::lane(s.ep[c], ll);
    }
  }
}

/// One lane's state where a failed step froze it: out of line, so that the rare store neither
/// issues predicated in the step loop nor keeps its addresses in registers.
template <class L, class Ops, class State, class T>
VIGOR_HD VIGOR_NOINLINE void store_frozen(State x, const EnsembleArrays<T>& a, std::int64_t n,
                                          std::int64_t i) {
  Ops::store(x, a.state + i, n);
  store_round_off<L>(x, 0, a, n, i);
}

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
  using T = typename L::T;
  using P = typename L::Real;
  using Bits = typename L::Bits;
  using Ops = StateOps<MP, P>;
  using OpsS = StateOps<MS, T>;
  // The model's state, with round-off terms when the integrator runs compensated.
  using State = driver_state_t<IP, typename Ops::State>;
  using TOps = TangentOps<MP, P>;
  using TOpsS = TangentOps<MS, T>;
  // Without tangent maps the dual state is a dummy the compiler drops.
  using StateD = std::conditional_t<kTangent, typename TOps::StateD, State>;
  constexpr int W = L::W;
  constexpr int B = L::B;
  constexpr int kMaps = Ops::kMomentumMaps;
  // Explicit steps solve nothing: their residual bookkeeping compiles away.
  constexpr bool kSolves = integrator_solves<IP>;
  static_assert(OpsS::kDim == Ops::kDim, "lane and scalar model must match");
  static_assert(B == 1 || !kTangent, "tangent blocks are one sub-block");
  static_assert(!kTangent || !integrator_compensated<IP>, "tangent maps run the plain step");
  const int valid = L::NB == 1 ? 1 : valid_lanes;
  const std::int64_t n = sp.n;
  const T h = sp.h;
  const std::int64_t end_step = sp.end_step;

  LaneRecords<L> r;
  r.load(a, i0, valid, end_step);
  if (r.active == 0) return;
  // Iterations of the loop so far: lane l has taken r.k0[l] + it steps while active. On one lane
  // the counter is the lane's own step count (k0 folded into it): one counter fewer in registers.
  std::int64_t it = 0;
  if constexpr (L::NB == 1) {
    it = r.k0[0];
    r.k0[0] = 0;
  }

  // ---- Registers: the sub-blocks' states, energies, maxima and section distances.
  State s[B];
  [[maybe_unused]] StateD sd{};
  [[maybe_unused]] typename L::Accumulators acc{};
  if constexpr (kTangent) {
    L::template load_tangent<TOps>(mp, a.state, a.tangent, n, i0, valid, sd);
    L::template primal<TOps>(sd, s[0]);
    acc.load(a.tangent_acc, n, i0, valid, r.k0);
  }
  P e0[B], emax[B], jmax[B], rmax[B];
  Vec<P, (kMaps > 0 ? kMaps : 1)> j0[B];
  // g = x_coord - value, carried from step to step: picking the coordinate out of registers is a
  // chain of compares (coord is known only at run time), done once per step.
  P gp[B];
  const int coord = sp.section_coord;
  const T value = sp.section_value;
  for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
    constexpr int b = decltype(bc)::value;
    if constexpr (!kTangent) {
      L::template load_state<Ops>(mp, a.state, n, i0, b, valid, s[b]);
      load_round_off<L>(a, n, i0, b, valid, s[b]);
    }
    e0[b] = L::load(a.energy0, i0, b, valid);
    emax[b] = L::load(a.energy_error, i0, b, valid);
    // Maxima no step can change (no momentum maps, no Newton solve) stay in memory as they are.
    jmax[b] = kMaps > 0 ? L::load(a.momentum_error, i0, b, valid) : P(T(0));
    rmax[b] = kSolves ? L::load(a.newton_residual, i0, b, valid) : P(T(0));
    if constexpr (kMaps > 0) {
      VIGOR_UNROLL
      for (int c = 0; c < kMaps; ++c) j0[b][c] = L::load(a.momentum0 + c * n, i0, b, valid);
    }
    gp[b] = Ops::component(s[b], coord) - P(value);
  });
  const P newton_tol(sp.newton_tolerance);
  const bool newton_check = sp.newton_tolerance > T(0);
  const P escape2(sp.escape_radius2);
  const bool escape_on = sp.escape_radius2 > T(0);
  const bool plane = sp.section_kind == kSectionPlane;
  const bool strobe = sp.section_kind == kSectionStroboscopic;
  const int direction = sp.section_direction;
  const P hp(h);

  // ---- Retiring a lane: its values from a copy made where the rare path starts. One lane (a GPU
  // thread, a scalar CPU trajectory) instead leaves the loop when it stops and writes its values
  // after it, as a loop that ends writes its state: stores inside the loop would hold their
  // addresses in registers through every step. The one exception is the state a failed step
  // freezes (store_frozen, out of line for that reason).
  constexpr bool kRetireAtExit = L::NB == 1;
  struct Snapshot {
    State x;
    P em, jm, rm;
  };
  const auto snapshot = [&](auto bc, const State& x) VIGOR_LAMBDA_INLINE {
    constexpr int b = decltype(bc)::value;
    return Snapshot{L::rare_copy(x), emax[b], jmax[b], rmax[b]};
  };
  // Lane ll of sub-block b (lane l of the block) with the values of v, after `steps` iterations;
  // with kTangent, dual and tacc are copies of the lane's dual state and accumulators. Nothing of
  // the loop's own values is captured: not inlined, this lambda must not take their address.
  const auto write_lane = [&](int l, int ll, std::int64_t steps, const Snapshot& v,
                              [[maybe_unused]] const auto& dual,
                              [[maybe_unused]] const auto& tacc) {
    const std::int64_t i = i0 + l;
    // One lane frozen on a failed step wrote its state where it failed (see the failure test).
    if (!kRetireAtExit || r.status[l] != kStatusNonFinite) {
      L::template store_lane<Ops>(v.x, ll, a.state, n, i);
      store_round_off<L>(v.x, ll, a, n, i);
    }
    a.step[i] = r.k0[l] + steps;
    a.energy_error[i] = L::lane(v.em, ll);
    if constexpr (kMaps > 0) a.momentum_error[i] = L::lane(v.jm, ll);
    if constexpr (kSolves) a.newton_residual[i] = L::lane(v.rm, ll);
    if constexpr (kTangent)
      retire_tangent<TOpsS>(ms, ids, dual, tacc, r.status[l], r.k0[l] + steps, h, a, n, i);
  };
  const auto retire_lane = [&](auto bc, int l, [[maybe_unused]] std::int64_t steps,
                               [[maybe_unused]] const Snapshot& v) VIGOR_LAMBDA_INLINE {
    if constexpr (!kRetireAtExit) {
      const int ll = l - decltype(bc)::value * W;
      if constexpr (kTangent)
        write_lane(l, ll, steps, v, L::dual_lane(sd, ll), acc.lane(ll));
      else
        write_lane(l, ll, steps, v, 0, 0);
    }
    r.active &= ~(Bits(1) << l);
  };
  // Retire the lanes of `lanes` in the state they have now (end of the segment, or stopped).
  const auto retire_now = [&](Bits lanes) VIGOR_LAMBDA_INLINE {
    for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
      constexpr int b = decltype(bc)::value;
      const Bits sub = lanes & (L::kSub << b * W);
      if (sub == 0) return;
      const Snapshot v = snapshot(bc, s[b]);
      const std::int64_t steps = it;
      L::for_each_lane(sub, [&](int l) VIGOR_LAMBDA_INLINE { retire_lane(bc, l, steps, v); });
    });
  };

  // ---- What a selected lane does, one handler per event (the tests are in events.hpp). Each
  // takes the lanes (bits of the block), the iteration and copies of the values it reads: a
  // handler that is not inlined must not take the address of the loop's registers (the loop
  // counter included). Each returns the lanes that stop.
  auto crossings = typename L::template Crossings<OpsS>{};
  // Crossings are counted and their slots claimed here (a crossing past the run's or the buffer's
  // limit is counted, not located); a full buffer pauses the lane until the host drains it.
  const auto record_crossings = [&](Bits lanes, int sh, std::int64_t iter, const State x0,
                                    const State x1) {
    Bits full = 0;
    L::for_each_lane(lanes, [&](int l) {
      const int slot = claim_hit(sp, r.crossings[l], r.recorded[l], r.hits[l]);
      if (slot < 0) return;
      crossings.add(mp, ms, ip, is, a, sp, x0, x1, l - sh, i0 + l, slot, T(r.k0[l] + iter));
      if (r.hits[l] == sp.hit_capacity) full |= Bits(1) << l;
    });
    return full;
  };
  const auto record_samples = [&](Bits lanes, int sh, std::int64_t iter, const State x1) {
    Bits full = 0;
    L::for_each_lane(lanes, [&](int l) {
      const int slot = claim_hit(sp, r.crossings[l], r.recorded[l], r.hits[l]);
      if (slot < 0) return;
      write_hit<Ops::kDim>(a, sp, i0 + l, slot, T(r.k0[l] + iter + 1) * h,
                           L::template lane_vector<Ops>(x1, l - sh));
      if (r.hits[l] == sp.hit_capacity) full |= Bits(1) << l;
    });
    return full;
  };
  // Escaped and unconverged lanes stop with their status (an escape on the same step wins).
  const auto stop_with = [&](Bits lanes, std::int32_t status) {
    Bits stopped = 0;
    L::for_each_lane(lanes, [&](int l) {
      if (r.status[l] != kStatusOk) return;
      r.status[l] = status;
      stopped |= Bits(1) << l;
    });
    return stopped;
  };

  // A conservation check's maxima: |H - H0| (de) and the momentum maps' errors of the lanes due.
  // Lanes not due keep their maxima (their H was not a check's); stopped lanes' values are never
  // read again.
  const auto fold_check = [&](auto bc, const State& x, const P& de,
                              Bits due_sub) VIGOR_LAMBDA_INLINE {
    constexpr int b = decltype(bc)::value;
    const auto fold = [&](const P& m, const P& v) VIGOR_LAMBDA_INLINE {
      return due_sub == L::kSub ? max_of(m, v) : L::select_bits(due_sub, max_of(m, v), m);
    };
    emax[b] = fold(emax[b], de);
    if constexpr (kMaps > 0) {
      const auto J = Ops::momentum(mp, x);
      VIGOR_UNROLL
      for (int c = 0; c < kMaps; ++c) jmax[b] = fold(jmax[b], abs(J[c] - j0[b][c]));
    }
  };

  // The lanes whose state has a non-finite component: the test that ends a burst.
  const auto nonfinite_lanes = [&]() VIGOR_LAMBDA_INLINE {
    Bits bad = 0;
    for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
      constexpr int b = decltype(bc)::value;
      bad |= (~L::finite_bits(state_nan_probe<Ops>(s[b])) & L::kSub) << (b * W);
    });
    return bad;
  };

  CheckSchedule<L> checks;
  checks.init(sp.conservation_every, r.k0, it, r.active, valid);
  [[maybe_unused]] const bool bursts = kBurstable<IP, kTangent> && segment_allows_bursts(sp);
  // Event bursts are compiled only into the lane types that run them (kernels::EventBurstLanes).
  constexpr bool kEventBursts = kBurstable<IP, kTangent> && L::kEventBursts;
  [[maybe_unused]] const bool event_bursts = kEventBursts && segment_allows_event_bursts(sp);
  [[maybe_unused]] std::int64_t per_step_until = 0;  // after an undone burst: one at a time
  // Iterations every active lane can still take before one reaches end_step. On one lane it is
  // end_step - it, read where needed rather than carried through the loop (a register fewer).
  std::int64_t horizon_left = L::NB == 1 ? 0 : r.horizon(end_step, it, valid);
  const auto horizon = [&]() VIGOR_LAMBDA_INLINE {
    return L::NB == 1 ? sp.end_step - it : horizon_left;
  };

  // One lane enters the loop with steps to take (r.load) and tests its end where an iteration
  // ends, as a do-while loop: a test at the loop's head would be taken before its first
  // iteration, per thread, and a GPU thread would then hold the loop's constants in ordinary
  // registers instead of uniform ones (docs/performance.md). It never clears r.active in the
  // loop, so the event tests' lane masks fold away.
  for (;;) {
    if (L::NB > 1 && horizon() == 0) {
      // A block retires the lanes at end_step and goes on with the others.
      Bits done = 0;
      for (int l = 0; l < valid; ++l)
        if ((r.active >> l & 1) && r.k0[l] + it >= end_step) done |= Bits(1) << l;
      retire_now(done);
      if (r.active == 0) break;
      horizon_left = r.horizon(end_step, it, valid);
    }
    if constexpr (kBurstable<IP, kTangent>) {
      // Iterations before the check iteration and before any active lane reaches end_step. With
      // bursts off (a section, an escape radius) the loop pays one branch here.
      if (bursts && it >= per_step_until) {
        const std::int64_t len = min_of(checks.next - it, horizon());
        if (len > 0) {
          State start[B];
          for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
            constexpr int b = decltype(bc)::value;
            start[b] = s[b];
          });
          for (std::int64_t j = 0; j < len; ++j) {
            for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
              constexpr int b = decltype(bc)::value;
              constexpr int sh = b * W;
              if (B > 1 && (r.active & (L::kSub << sh)) == 0) return;  // a stopped sub-block
              take_step(ip, mp, s[b], hp,
                        L::template step_times<MP>(r.k0 + sh, valid - sh, it + j, h));
            });
          }
          if ((r.active & nonfinite_lanes()) == 0) {
            it += len;
            horizon_left -= len;
            if (L::NB == 1 && horizon() == 0) break;
            continue;
          }
          for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
            constexpr int b = decltype(bc)::value;
            s[b] = start[b];
          });
          per_step_until = it + len;
        }
      }
      // Event bursts: the segment tests something after every step. Up to sp.event_burst steps
      // run with those tests folded into one flag per lane — a crossing of the plane, |q| past
      // the escape radius, a non-finite |H - H0| at a check — and the checks' maxima folded as
      // the per-step path folds them. A burst with no flag stands as it is: the per-step path
      // would have found nothing in it either. A flagged burst is undone (the states, the
      // section distances, the maxima and the check schedule as they were at its start) and
      // taken again step by step, which handles the event at its step.
      if constexpr (kEventBursts) {
        if (event_bursts && it >= per_step_until) {
          const std::int64_t len = min_of(std::int64_t(sp.event_burst), horizon());
          if (len > 0) {
            State start[B];
            P g_start[B], emax_start[B], jmax_start[B];
            const CheckSchedule<L> checks_start = checks;
            for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
              constexpr int b = decltype(bc)::value;
              start[b] = s[b];
              g_start[b] = gp[b];
              emax_start[b] = emax[b];
              jmax_start[b] = jmax[b];
            });
            Bits flag = 0;
            for (std::int64_t j = 0; j < len; ++j) {
              Bits due;
              const bool check =
                  checks.advance(it + j, sp.conservation_every, r.active, valid, due);
              for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
                constexpr int b = decltype(bc)::value;
                constexpr int sh = b * W;
                if (B > 1 && (r.active & (L::kSub << sh)) == 0) return;  // a stopped sub-block
                State& x = s[b];
                take_step(ip, mp, x, hp,
                          L::template step_times<MP>(r.k0 + sh, valid - sh, it + j, h));
                if (check) {
                  const Bits due_sub = (due >> sh) & L::kSub;
                  const P de = abs(Ops::energy(mp, x) - e0[b]);
                  fold_check(bc, x, de, due_sub);
                  flag |= (~L::finite_bits(de) & due_sub) << sh;
                }
                if (plane) {
                  const P g = Ops::component(x, coord) - P(value);
                  flag |= crossing_lanes<L>(gp[b], g, direction) << sh;
                  gp[b] = g;
                }
                if (escape_on) flag |= escaped_lanes<L, Ops>(x, escape2) << sh;
              });
            }
            if ((r.active & (flag | nonfinite_lanes())) == 0) {
              it += len;
              horizon_left -= len;
              if (L::NB == 1 && horizon() == 0) break;
              continue;
            }
            for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
              constexpr int b = decltype(bc)::value;
              s[b] = start[b];
              gp[b] = g_start[b];
              emax[b] = emax_start[b];
              jmax[b] = jmax_start[b];
            });
            checks = checks_start;
            per_step_until = it + len;
          }
        }
      }
    }

    // ---- One step of every sub-block, and the events it may have caused.
    Bits stop = 0;  // lanes that stop after this step (full buffer, escape, Newton)
    Bits due;
    const bool check = checks.advance(it, sp.conservation_every, r.active, valid, due);
    const auto step_sub = [&](auto bc) VIGOR_LAMBDA_INLINE {
      constexpr int b = decltype(bc)::value;
      constexpr int sh = b * W;
      if (B > 1 && (r.active & (L::kSub << sh)) == 0) return;  // every lane of it has stopped
      State& x = s[b];
      // The state before the step, for the rare events (a crossing, a freeze). Nothing refers to
      // x or before outside this loop (the rare paths copy them, see Snapshot), so both stay in
      // registers and this copy costs nothing.
      const State before = x;
      P residual;
      if constexpr (kTangent) {
        residual =
            take_tangent_step<TOps>(ip, mp, sd, hp, L::template step_times<MP>(r.k0, valid, it, h));
        L::template primal<TOps>(sd, x);
      } else {
        const P t_step = L::template step_times<MP>(r.k0 + sh, valid - sh, it, h);
#if !VIGOR_DEVICE_PASS
        if constexpr (integrator_step_out_of_line<IP> && !std::is_same_v<P, T>)
          residual = take_step_out_of_line(ip, mp, x, hp, t_step);
        else
#endif
          residual = take_step(ip, mp, x, hp, t_step);
      }
      const Bits due_sub = (due >> sh) & L::kSub;
      P de(T(0));
      if (check) de = abs(Ops::energy(mp, x) - e0[b]);
      const Bits bad =
          (failed_lanes<L, Ops, kSolves>(x, de, residual, check, due_sub) << sh) & r.active;
      if (bad != 0) {
        if constexpr (kRetireAtExit) {
          // Frozen at the last finite state, written here: kept in x to the loop's exit, the
          // state before the step would join the loop's own there, and a GPU thread would copy
          // its state at every step (docs/performance.md).
          r.status[0] = kStatusNonFinite;
          store_frozen<L, Ops>(before, a, n, i0);
          return;
        } else {
          const Snapshot v = snapshot(bc, before);
          const std::int64_t steps = it;
          L::for_each_lane(bad, [&](int l) VIGOR_LAMBDA_INLINE {
            r.status[l] = kStatusNonFinite;
            retire_lane(bc, l, steps, v);  // frozen at the last finite state
          });
          // A burst retaken step by step has found its failing lane: the other lanes' states are
          // finite here, so bursts may resume after this step (a later failure rewinds again).
          per_step_until = 0;
        }
      }
      if constexpr (kTangent) acc.template after_step<TOps>(sd, it);
      if (check) fold_check(bc, x, de, due_sub);
      if constexpr (kSolves) rmax[b] = max_of(rmax[b], residual);
      const Bits live = r.active & (L::kSub << sh);  // without the lanes frozen above

      if (plane) {
        const P g = Ops::component(x, coord) - P(value);
        const Bits crossed = (crossing_lanes<L>(gp[b], g, direction) << sh) & live;
        gp[b] = g;
        if (crossed != 0) [[unlikely]]
          stop |= record_crossings(crossed, sh, it, L::rare_copy(before), L::rare_copy(x));
      } else if (strobe) {
        const Bits sampled = strobe_lanes<L>(r.k0 + sh, it, sp.stroboscopic_every, live >> sh)
                             << sh;
        if (sampled != 0) stop |= record_samples(sampled, sh, it, L::rare_copy(x));
      }
      // After the section test, so a crossing on the escaping step is still recorded. One lane
      // leaves the step as soon as it stops (an escape wins over the Newton test, as stop_with
      // does for blocks): kept to the end of the step, the stop's flag and the values it writes
      // cost a GPU thread registers through the whole loop (docs/performance.md).
      if (escape_on) {
        const Bits out = (escaped_lanes<L, Ops>(x, escape2) << sh) & live;
        if (out != 0) {
          stop |= stop_with(out, kStatusEscaped);
          if constexpr (kRetireAtExit) return;
        }
      }
      if (kSolves && newton_check) {
        const Bits unconverged = (unconverged_lanes<L>(residual, newton_tol) << sh) & live;
        if (unconverged != 0) {
          stop |= stop_with(unconverged, kStatusNewtonNotConverged);
          if constexpr (kRetireAtExit) return;
        }
      }
    };
    if constexpr (kRetireAtExit) {
      // One lane leaves the loop as soon as it stops (a failed step is not counted).
      step_sub(std::integral_constant<int, 0>{});
      if (r.status[0] == kStatusNonFinite) break;
      ++it;
      if (stop != 0 || horizon() == 0) break;
    } else {
      for_each_sub<B>(step_sub);
      ++it;
      --horizon_left;
      if (stop != 0) retire_now(stop);
      if (r.active == 0) break;
    }
  }
  crossings.flush(mp, ms, ip, is, a, sp);
  // One lane: `it` counts the steps it kept (a failed step is not counted).
  if constexpr (kRetireAtExit) {
    const std::int64_t steps = it;
    const Snapshot v{s[0], emax[0], jmax[0], rmax[0]};
    if constexpr (kTangent)
      write_lane(0, 0, steps, v, L::dual_lane(sd, 0), acc.lane(0));
    else
      write_lane(0, 0, steps, v, 0, 0);
  }
  r.store(a, i0, valid);
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
