/// @file lane_driver.hpp
/// @brief The parts of the driver, kernels::advance_lanes (kernels/driver/advance.hpp, whose file
/// comment states the policy they carry out): the bursts, one step of every sub-block and its
/// events, the conservation checks, retiring lanes, and the handlers of the rare events.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/core/config.hpp"
#include "kernels/core/math.hpp"
#include "kernels/driver/events.hpp"
#include "kernels/driver/lane_records.hpp"
#include "kernels/driver/lanes.hpp"
#include "kernels/driver/segment.hpp"
#include "kernels/integrators/compensated.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"

namespace vigor::kernels {

/// Whether the driver may run an integrator's steps as bursts (advance.hpp's file comment):
/// explicit steps without a tangent map; the segment decides the rest (segment_allows_bursts).
template <class I, bool kTangent = false>
inline constexpr bool kBurstable = !kTangent && !integrator_solves<I>;

/// The driver of advance_lanes, for one lane type, model and integrator: the types it works on,
/// the values it keeps, and its parts.
///
/// Its parts are functions over references to advance_lanes's own variables, as a lambda that
/// captures by reference would be. Three rules keep the code the compilers make of it that of one
/// function (docs/performance.md, "The driver in short functions"):
///   * the values stay advance_lanes's variables, never members of an object: nvcc keeps an
///     object that holds them, with copies of the kernel's parameters, in local memory, and GCC
///     keeps one that holds a SIMD vector on the stack;
///   * the loop's exits stay in the loop (Loop::run): a part that returns "leave now" merges the
///     exits, and nvcc then carries the state through selects (+22 to +62 registers on the
///     implicit steps);
///   * the part that may stay out of line (Handlers) refers to none of the loop's registers.
/// So there are two sets of parts:
///   * Handlers — the memory side: what an event does to the lanes it selects (record a crossing
///     or a sample, stop a lane, write a retiring lane). They may stay out of line, so they take
///     copies of the values they read;
///   * Loop — the register side: the bursts, one step of every sub-block and its events, the
///     conservation checks, retiring lanes. Every one is forced inline.
template <class L, bool kTangent, class MP, class MS, class IP, class IS, class IDS>
struct LaneDriver {
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
  using Accumulators = typename L::Accumulators;
  // Sections, escapes and event bursts are compiled only into the lane types that may run a
  // segment with them (kernels::QuietSegmentLanes).
  static constexpr bool kSegmentEvents = !L::kQuietSegmentsOnly;
  using Crossings =
      std::conditional_t<kSegmentEvents, typename L::template Crossings<OpsS>, NoCrossings>;
  template <int b>
  using Sub = std::integral_constant<int, b>;
  static constexpr int W = L::W;
  static constexpr int B = L::B;
  static constexpr int kMaps = Ops::kMomentumMaps;
  using MapValues = Vec<P, (kMaps > 0 ? kMaps : 1)>;
  // Explicit steps solve nothing: their residual bookkeeping compiles away.
  static constexpr bool kSolves = integrator_solves<IP>;
  // Bursts are compiled only into the lane types that run them (kernels::WithoutQuietBursts,
  // kernels::EventBurstLanes).
  static constexpr bool kQuietBursts = kBurstable<IP, kTangent> && L::kQuietBursts;
  static constexpr bool kEventBursts =
      kBurstable<IP, kTangent> && L::kEventBursts && kSegmentEvents;
  // A CPU block that runs quiet segments only (QuietSegmentLanes) takes its bursts and its single
  // steps through one loop (Loop::burst_or_one_step), so it holds one copy of the step per
  // sub-block rather than two. One lane keeps the two: on the CPU's one-lane path the one loop
  // ran 3.5-4.7 % slower (docs/performance.md, "One loop on one lane"), and the GPU thread's
  // code is tuned in this form.
  static constexpr bool kOneStepLoop = kQuietBursts && L::kQuietSegmentsOnly;
  // One lane (a GPU thread, a scalar CPU trajectory) leaves the loop when it stops and writes its
  // values after it, as a loop that ends writes its state: stores inside the loop would hold
  // their addresses in registers through every step. The one exception is the state a failed
  // step freezes (store_frozen, out of line for that reason). A block retires its lanes in the
  // loop, from a copy of their values made where the rare path starts (Snapshot).
  static constexpr bool kRetireAtExit = L::NB == 1;
  static_assert(OpsS::kDim == Ops::kDim, "lane and scalar model must match");
  static_assert(B == 1 || !kTangent, "tangent blocks are one sub-block");
  static_assert(!kTangent || !integrator_compensated<IP>, "tangent maps run the plain step");
  static_assert(!kOneStepLoop || !kRetireAtExit, "burst blocks are CPU blocks");

  /// A sub-block's values where a rare path starts: a retiring lane reads them from here.
  struct Snapshot {
    State x;
    P em, jm, rm;
  };

  /// The settings the events read, from sp once: copies, which the stores of a step cannot alter.
  /// advance() keeps them in a non-const variable and the tolerances as scalars: GCC's scalar
  /// replacement gives up on a const aggregate whose address a Loop holds, and then reads every
  /// flag from the stack at every step (docs/performance.md, "The driver in short functions").
  struct Settings {
    T newton_tol;
    bool newton_check;
    T escape2;
    bool escape_on, plane, strobe;
    int direction;
    // g = x_coord - value, carried from step to step: picking the coordinate out of registers is
    // a chain of compares (coord is known only at run time), done once per step.
    int coord;
    T value;
    bool bursts, event_bursts;

    VIGOR_HD VIGOR_INLINE explicit Settings(const SegmentParams<T>& sp)
        : newton_tol(sp.newton_tolerance),
          newton_check(sp.newton_tolerance > T(0)),
          escape2(sp.escape_radius2),
          escape_on(sp.escape_radius2 > T(0)),
          plane(sp.section_kind == kSectionPlane),
          strobe(sp.section_kind == kSectionStroboscopic),
          direction(sp.section_direction),
          coord(sp.section_coord),
          value(sp.section_value),
          bursts(kQuietBursts && segment_allows_bursts(sp)),
          event_bursts(kEventBursts && segment_allows_event_bursts(sp)) {}
  };

  /// The loop's counters. `it`: iterations so far (lane l has taken r.k0[l] + it steps while
  /// active; on one lane k0 is folded into it, one counter fewer in registers). `horizon_left`:
  /// iterations every active lane can still take before one reaches end_step (on one lane
  /// end_step - it, read where needed rather than carried). `per_step_until`: after an undone
  /// burst, steps are taken one at a time until then.
  struct Counters {
    std::int64_t it, horizon_left, per_step_until;
  };

  /// The memory side: each handler takes the lanes an event selected (bits of the block), the
  /// iteration and copies of the values it reads, and returns the lanes that stop. Not forced
  /// inline: one that stays out of line must not take the address of the loop's registers (the
  /// loop counter included), so none refers to them.
  struct Handlers {
    const MP& mp;
    const MS& ms;
    const IP& ip;
    const IS& is;
    const IDS& ids;
    const SegmentParams<T>& sp;
    const EnsembleArrays<T>& a;
    std::int64_t i0, n;
    T h;
    LaneRecords<L>& r;
    Crossings& crossings;

    /// Lane ll of its sub-block (lane l of the block) with the values of v, after `steps`
    /// iterations; with kTangent, dual and tacc are copies of the lane's dual state and
    /// accumulators.
    VIGOR_HD void write_lane(int l, int ll, std::int64_t steps, const Snapshot& v,
                             [[maybe_unused]] const auto& dual,
                             [[maybe_unused]] const auto& tacc) const {
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
    }

    /// Crossings are counted and their slots claimed here (a crossing past the run's or the
    /// buffer's limit is counted, not located); a full buffer pauses the lane until the host
    /// drains it.
    VIGOR_HD Bits record_crossings(Bits lanes, int sh, std::int64_t iter, const State x0,
                                   const State x1) const {
      Bits full = 0;
      L::for_each_lane(lanes, [&](int l) {
        const int slot = claim_hit(sp, r.crossings[l], r.recorded[l], r.hits[l]);
        if (slot < 0) return;
        crossings.add(mp, ms, ip, is, a, sp, x0, x1, l - sh, i0 + l, slot, T(r.k0[l] + iter));
        if (r.hits[l] == sp.hit_capacity) full |= Bits(1) << l;
      });
      return full;
    }

    /// Stroboscopic samples: the state after the step, at its time.
    VIGOR_HD Bits record_samples(Bits lanes, int sh, std::int64_t iter, const State x1) const {
      Bits full = 0;
      L::for_each_lane(lanes, [&](int l) {
        const int slot = claim_hit(sp, r.crossings[l], r.recorded[l], r.hits[l]);
        if (slot < 0) return;
        write_hit<Ops::kDim>(a, sp, i0 + l, slot, T(r.k0[l] + iter + 1) * h,
                             L::template lane_vector<Ops>(x1, l - sh));
        if (r.hits[l] == sp.hit_capacity) full |= Bits(1) << l;
      });
      return full;
    }

    /// Escaped and unconverged lanes stop with their status (an escape on the same step wins).
    VIGOR_HD Bits stop_with(Bits lanes, std::int32_t status) const {
      Bits stopped = 0;
      L::for_each_lane(lanes, [&](int l) {
        if (r.status[l] != kStatusOk) return;
        r.status[l] = status;
        stopped |= Bits(1) << l;
      });
      return stopped;
    }
  };

  /// The register side: references to advance_lanes's variables — the sub-blocks' values (per
  /// sub-block b, arrays indexed only by constants), the records, the counters and the check
  /// schedule — and the parts of its loop, each forced inline.
  struct Loop {
    const Handlers& on;
    const MP& mp;
    const IP& ip;
    const SegmentParams<T>& sp;
    const EnsembleArrays<T>& a;
    const Settings& set;
    std::int64_t i0, n, end_step;
    int valid_lanes;
    T h;
    const P& hp;  // a reference: a vector member would keep the object on the CPU's stack
    LaneRecords<L>& r;
    Counters& c;
    CheckSchedule<L>& checks;
    // Per sub-block: the state, H0 and the maxima of |H - H0|, the momentum maps' errors and
    // the Newton residual, the maps' initial values, and g = x_coord - value.
    State (&s)[B];
    P (&e0)[B];
    P (&emax)[B];
    P (&jmax)[B];
    P (&rmax)[B];
    MapValues (&j0)[B];
    P (&gp)[B];
    StateD& sd;
    Accumulators& acc;

    /// The lanes in use: a constant on one lane.
    VIGOR_HD VIGOR_INLINE int valid() const { return L::NB == 1 ? 1 : valid_lanes; }
    VIGOR_HD VIGOR_INLINE std::int64_t horizon() const {
      return L::NB == 1 ? sp.end_step - c.it : c.horizon_left;
    }

    /// The sub-blocks' values from memory, where the launch starts.
    VIGOR_HD VIGOR_INLINE void load_values() const {
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        if constexpr (!kTangent) {
          L::template load_state<Ops>(mp, a.state, n, i0, b, valid(), s[b]);
          load_round_off<L>(a, n, i0, b, valid(), s[b]);
        }
        e0[b] = L::load(a.energy0, i0, b, valid());
        emax[b] = L::load(a.energy_error, i0, b, valid());
        // Maxima no step can change (no momentum maps, no Newton solve) stay in memory as they are.
        jmax[b] = kMaps > 0 ? L::load(a.momentum_error, i0, b, valid()) : P(T(0));
        rmax[b] = kSolves ? L::load(a.newton_residual, i0, b, valid()) : P(T(0));
        if constexpr (kMaps > 0) {
          VIGOR_UNROLL
          for (int k = 0; k < kMaps; ++k) j0[b][k] = L::load(a.momentum0 + k * n, i0, b, valid());
        }
        gp[b] = Ops::component(s[b], set.coord) - P(set.value);
      });
    }

    /// The loop: bursts where they may run, one step of every sub-block otherwise. Its exits are
    /// all here, each where its test is (see LaneDriver). One lane enters it with steps to take
    /// (r.load) and tests its end where an iteration ends, as a do-while loop: a test at the
    /// loop's head would be taken before its first iteration, per thread, and a GPU thread would
    /// then hold the loop's constants in ordinary registers instead of uniform ones
    /// (docs/performance.md). It never clears r.active in the loop, so the event tests' lane masks
    /// fold away.
    VIGOR_HD VIGOR_INLINE void run() const {
      for (;;) {
        if (L::NB > 1 && horizon() == 0 && !retire_at_end()) break;
        if constexpr (kOneStepLoop) {
          burst_or_one_step();
          if (r.active == 0) break;
        } else {
          if constexpr (kQuietBursts) {
            if (plain_burst_stood()) {
              if (L::NB == 1 && horizon() == 0) break;
              continue;
            }
          }
          if constexpr (kEventBursts) {
            if (event_burst_stood()) {
              if (L::NB == 1 && horizon() == 0) break;
              continue;
            }
          }
          Bits stop = 0;  // lanes that stop after this step (full buffer, escape, Newton)
          step_every_sub(stop);
          if constexpr (kRetireAtExit) {
            // One lane leaves the loop as soon as it stops (a failed step is not counted).
            if (r.status[0] == kStatusNonFinite) break;
            ++c.it;
            if (stop != 0 || horizon() == 0) break;
          } else {
            ++c.it;
            --c.horizon_left;
            if (stop != 0) retire_now(stop);
            if (r.active == 0) break;
          }
        }
      }
    }

    /// A block retires the lanes at end_step and goes on with the others; false when none is left.
    VIGOR_HD VIGOR_INLINE bool retire_at_end() const {
      Bits done = 0;
      for (int l = 0; l < valid(); ++l)
        if ((r.active >> l & 1) && r.k0[l] + c.it >= end_step) done |= Bits(1) << l;
      retire_now(done);
      if (r.active == 0) return false;
      c.horizon_left = r.horizon(end_step, c.it, valid());
      return true;
    }

    /// Bursts (advance.hpp's file comment): the iterations before the check iteration and before
    /// any active lane reaches end_step, back to back with no test. The burst stands if every
    /// active lane is finite at its end; otherwise it is undone, and its steps are taken one at a
    /// time. True when a burst stood. With bursts off (a section, an escape radius) the loop pays
    /// one branch here.
    VIGOR_HD VIGOR_INLINE bool plain_burst_stood() const {
      if (!set.bursts || c.it < c.per_step_until) return false;
      const std::int64_t len = min_of(checks.next - c.it, horizon());
      if (len <= 0) return false;
      State start[B];
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        start[b] = s[b];
      });
      steps_of_every_sub(len);
      return burst_stood(len, start);
    }

    /// `len` steps of every sub-block back to back, with no test: a burst's loop.
    VIGOR_HD VIGOR_INLINE void steps_of_every_sub(std::int64_t len) const {
      for (std::int64_t j = 0; j < len; ++j) {
        for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
          constexpr int b = decltype(bc)::value;
          constexpr int sh = b * W;
          if (B > 1 && (r.active & (L::kSub << sh)) == 0) return;  // a stopped sub-block
          take_step(ip, mp, s[b], hp,
                    L::template step_times<MP>(r.k0 + sh, valid() - sh, c.it + j, h));
        });
      }
    }

    /// A burst of `len` steps from `start` stands if every active lane is finite at its end (true);
    /// otherwise it is undone, and its steps are to be taken one at a time.
    VIGOR_HD VIGOR_INLINE bool burst_stood(std::int64_t len, const State (&start)[B]) const {
      if ((r.active & nonfinite_lanes()) == 0) {
        c.it += len;
        c.horizon_left -= len;
        return true;
      }
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        s[b] = start[b];
      });
      c.per_step_until = c.it + len;
      return false;
    }

    /// An iteration of a burst block (kOneStepLoop): a burst where one may run, else one step and
    /// what follows it (a check iteration, the steps of an undone burst). Both take their steps
    /// in steps_of_every_sub, so the block compiles the step once per sub-block where
    /// plain_burst_stood and step_every_sub compile it twice. The single step is a burst of one
    /// whose start is the state before it: the same operations as step_every_sub's, the same bits.
    /// A quiet segment's explicit step stops no lane (no section, escape or Newton test); a failed
    /// one freezes its lanes in after_step. The burst's length and the copy of its start repeat
    /// plain_burst_stood's lines: written once in helpers for both, they changed nvcc's code for
    /// the GPU thread, which runs plain_burst_stood (docs/performance.md, "One loop on one lane").
    VIGOR_HD VIGOR_INLINE void burst_or_one_step() const {
      std::int64_t len = 0;
      if (set.bursts && c.it >= c.per_step_until) len = min_of(checks.next - c.it, horizon());
      const bool burst = len > 0;
      State start[B];
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        start[b] = s[b];
      });
      steps_of_every_sub(burst ? len : 1);
      if (burst) {
        burst_stood(len, start);
        return;
      }
      Bits due;
      const bool check = checks.advance(c.it, sp.conservation_every, r.active, valid(), due);
      Bits stop = 0;
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        if (B > 1 && (r.active & (L::kSub << (b * W))) == 0) return;  // a stopped sub-block
        after_step(bc, start[b], P(T(0)), check, due, stop);
      });
      ++c.it;
      --c.horizon_left;
      if (stop != 0) retire_now(stop);  // none today: the quiet segments' steps stop no lane
    }

    /// Event bursts: the segment tests something after every step. Up to sp.event_burst steps
    /// run with those tests folded into one flag per lane — a crossing of the plane, |q| past the
    /// escape radius, a non-finite |H - H0| at a check — and the checks' maxima folded as the
    /// per-step path folds them. A burst with no flag stands as it is (true): the per-step path
    /// would have found nothing in it either. A flagged burst is undone (the states, the section
    /// distances, the maxima and the check schedule as they were at its start) and taken again
    /// step by step, which handles the event at its step.
    VIGOR_HD VIGOR_INLINE bool event_burst_stood() const {
      if constexpr (!kEventBursts) {
        return false;
      } else {
        if (!set.event_bursts || c.it < c.per_step_until) return false;
        const std::int64_t len = min_of(std::int64_t(sp.event_burst), horizon());
        if (len <= 0) return false;
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
        for (std::int64_t j = 0; j < len; ++j) flag_step(c.it + j, flag);
        if ((r.active & (flag | nonfinite_lanes())) == 0) {
          c.it += len;
          c.horizon_left -= len;
          return true;
        }
        for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
          constexpr int b = decltype(bc)::value;
          s[b] = start[b];
          gp[b] = g_start[b];
          emax[b] = emax_start[b];
          jmax[b] = jmax_start[b];
        });
        checks = checks_start;
        c.per_step_until = c.it + len;
        return false;
      }
    }

    /// One step of an event burst, iteration `iter`: the lanes whose events it may have caused
    /// join `flag`.
    VIGOR_HD VIGOR_INLINE void flag_step(std::int64_t iter, Bits& flag) const {
      Bits due;
      const bool check = checks.advance(iter, sp.conservation_every, r.active, valid(), due);
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        constexpr int sh = b * W;
        if (B > 1 && (r.active & (L::kSub << sh)) == 0) return;  // a stopped sub-block
        State& x = s[b];
        take_step(ip, mp, x, hp, L::template step_times<MP>(r.k0 + sh, valid() - sh, iter, h));
        if (check) {
          const Bits due_sub = (due >> sh) & L::kSub;
          const P de = abs(Ops::energy(mp, x) - e0[b]);
          fold_check(bc, x, de, due_sub);
          flag |= (~L::finite_bits(de) & due_sub) << sh;
        }
        if (set.plane) {
          const P g = Ops::component(x, set.coord) - P(set.value);
          flag |= crossing_lanes<L>(gp[b], g, set.direction) << sh;
          gp[b] = g;
        }
        if (set.escape_on) flag |= escaped_lanes<L, Ops>(x, P(set.escape2)) << sh;
      });
    }

    /// One step of every sub-block and the events it may have caused: the lanes that stop after
    /// it join `stop`.
    VIGOR_HD VIGOR_INLINE void step_every_sub(Bits& stop) const {
      Bits due;
      const bool check = checks.advance(c.it, sp.conservation_every, r.active, valid(), due);
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE { step_sub(bc, check, due, stop); });
    }

    /// One step of sub-block b, then what follows it (after_step).
    template <int b>
    VIGOR_HD VIGOR_INLINE void step_sub(Sub<b> bc, bool check, Bits due, Bits& stop) const {
      constexpr int sh = b * W;
      if (B > 1 && (r.active & (L::kSub << sh)) == 0) return;  // every lane of it has stopped
      State& x = s[b];
      // The state before the step, for the rare events (a crossing, a freeze). Nothing refers to
      // x or before outside this step (the rare paths copy them, see Snapshot), so both stay in
      // registers and this copy costs nothing.
      const State before = x;
      const P residual = take_lane_step(bc, x);
      after_step(bc, before, residual, check, due, stop);
    }

    /// What follows a step of sub-block b from `before` to s[b], in turn: a failed step, the
    /// conservation check, the section, an escape, an unconverged Newton solve.
    template <int b>
    VIGOR_HD VIGOR_INLINE void after_step(Sub<b> bc, const State& before, const P& residual,
                                          bool check, Bits due, Bits& stop) const {
      constexpr int sh = b * W;
      State& x = s[b];
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
          freeze(bc, bad, before);
        }
      }
      if constexpr (kTangent) acc.template after_step<TOps>(sd, c.it);
      if (check) fold_check(bc, x, de, due_sub);
      if constexpr (kSolves) rmax[b] = max_of(rmax[b], residual);
      const Bits live = r.active & (L::kSub << sh);  // without the lanes frozen above
      record_section(bc, before, x, live, stop);
      stop_lanes(bc, x, residual, live, stop);
    }

    /// The step itself (the dual step with kTangent, whose primal state is read off after it);
    /// its final Newton residual, for the steps that solve.
    template <int b>
    VIGOR_HD VIGOR_INLINE P take_lane_step(Sub<b>, State& x) const {
      constexpr int sh = b * W;
      P residual;
      if constexpr (kTangent) {
        residual = take_tangent_step<TOps>(ip, mp, sd, hp,
                                           L::template step_times<MP>(r.k0, valid(), c.it, h));
        L::template primal<TOps>(sd, x);
      } else {
        const P t_step = L::template step_times<MP>(r.k0 + sh, valid() - sh, c.it, h);
#if !VIGOR_DEVICE_PASS
        if constexpr (integrator_step_out_of_line<IP> && !std::is_same_v<P, T>)
          residual = take_step_out_of_line(ip, mp, x, hp, t_step);
        else
#endif
          residual = take_step(ip, mp, x, hp, t_step);
      }
      return residual;
    }

    /// The lanes `bad` of sub-block b, whose step failed, retire frozen at the last finite state.
    template <int b>
    VIGOR_HD VIGOR_INLINE void freeze(Sub<b> bc, Bits bad, const State& before) const {
      const Snapshot v = snapshot(bc, before);
      const std::int64_t steps = c.it;
      L::for_each_lane(bad, [&](int l) VIGOR_LAMBDA_INLINE {
        r.status[l] = kStatusNonFinite;
        retire_lane(bc, l, steps, v);
      });
      // A burst retaken step by step has found its failing lane: the other lanes' states are
      // finite here, so bursts may resume after this step (a later failure rewinds again).
      c.per_step_until = 0;
    }

    /// The section after a step of sub-block b: a crossing of the plane between `before` and x,
    /// or a stroboscopic sample of x. Lanes whose buffer fills join `stop`.
    template <int b>
    VIGOR_HD VIGOR_INLINE void record_section(Sub<b>, const State& before, const State& x,
                                              Bits live, Bits& stop) const {
      constexpr int sh = b * W;
      if constexpr (kSegmentEvents) {
        if (set.plane) {
          const P g = Ops::component(x, set.coord) - P(set.value);
          const Bits crossed = (crossing_lanes<L>(gp[b], g, set.direction) << sh) & live;
          gp[b] = g;
          if (crossed != 0) [[unlikely]]
            stop |= on.record_crossings(crossed, sh, c.it, L::rare_copy(before), L::rare_copy(x));
        } else if (set.strobe) {
          const Bits sampled = strobe_lanes<L>(r.k0 + sh, c.it, sp.stroboscopic_every, live >> sh)
                               << sh;
          if (sampled != 0) stop |= on.record_samples(sampled, sh, c.it, L::rare_copy(x));
        }
      }
    }

    /// Escaped and unconverged lanes of sub-block b join `stop`. After the section test, so a
    /// crossing on the escaping step is still recorded. One lane leaves the step as soon as it
    /// stops (an escape wins over the Newton test, as stop_with does for blocks): kept to the end
    /// of the step, the stop's flag and the values it writes cost a GPU thread registers through
    /// the whole loop (docs/performance.md).
    template <int b>
    VIGOR_HD VIGOR_INLINE void stop_lanes(Sub<b>, const State& x, const P& residual, Bits live,
                                          Bits& stop) const {
      constexpr int sh = b * W;
      if (kSegmentEvents && set.escape_on) {
        const Bits out = (escaped_lanes<L, Ops>(x, P(set.escape2)) << sh) & live;
        if (out != 0) {
          stop |= on.stop_with(out, kStatusEscaped);
          if constexpr (kRetireAtExit) return;
        }
      }
      if (kSolves && set.newton_check) {
        const Bits unconverged = (unconverged_lanes<L>(residual, P(set.newton_tol)) << sh) & live;
        if (unconverged != 0) {
          stop |= on.stop_with(unconverged, kStatusNewtonNotConverged);
          if constexpr (kRetireAtExit) return;
        }
      }
    }

    /// A conservation check's maxima: |H - H0| (de) and the momentum maps' errors of the lanes
    /// due. Lanes not due keep their maxima (their H was not a check's); stopped lanes' values are
    /// never read again.
    template <int b>
    VIGOR_HD VIGOR_INLINE void fold_check(Sub<b>, const State& x, const P& de, Bits due_sub) const {
      const auto fold = [&](const P& m, const P& v) VIGOR_LAMBDA_INLINE {
        return due_sub == L::kSub ? max_of(m, v) : L::select_bits(due_sub, max_of(m, v), m);
      };
      // An explicit step's loop lives in registers: its maxima go back to memory, off the step's
      // chain (PackLanes::keep_in_memory). A solving step's loop does not, and there the store
      // only adds traffic (Lobatto IIIA-B 0.95 of the rate with it, docs/performance.md).
      emax[b] = fold(emax[b], de);
      if constexpr (!kSolves) L::keep_in_memory(emax[b]);
      if constexpr (kMaps > 0) {
        const auto J = Ops::momentum(mp, x);
        VIGOR_UNROLL
        for (int k = 0; k < kMaps; ++k) jmax[b] = fold(jmax[b], abs(J[k] - j0[b][k]));
        if constexpr (!kSolves) L::keep_in_memory(jmax[b]);
      }
    }

    /// The lanes whose state has a non-finite component: the test that ends a burst.
    VIGOR_HD VIGOR_INLINE Bits nonfinite_lanes() const {
      Bits bad = 0;
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        bad |= (~L::finite_bits(state_nan_probe<Ops>(s[b])) & L::kSub) << (b * W);
      });
      return bad;
    }

    template <int b>
    VIGOR_HD VIGOR_INLINE Snapshot snapshot(Sub<b>, const State& x) const {
      return Snapshot{L::rare_copy(x), emax[b], jmax[b], rmax[b]};
    }

    /// Lane l (of sub-block b) leaves the block after `steps` iterations with the values of v,
    /// which a block writes here and one lane where the loop ends (write_at_exit).
    template <int b>
    VIGOR_HD VIGOR_INLINE void retire_lane(Sub<b>, int l, [[maybe_unused]] std::int64_t steps,
                                           [[maybe_unused]] const Snapshot& v) const {
      if constexpr (!kRetireAtExit) {
        const int ll = l - b * W;
        if constexpr (kTangent)
          on.write_lane(l, ll, steps, v, L::dual_lane(sd, ll), acc.lane(ll));
        else
          on.write_lane(l, ll, steps, v, 0, 0);
      }
      r.active &= ~(Bits(1) << l);
    }

    /// Retire the lanes of `lanes` in the state they have now (end of the segment, or stopped).
    VIGOR_HD VIGOR_INLINE void retire_now(Bits lanes) const {
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        const Bits sub = lanes & (L::kSub << b * W);
        if (sub == 0) return;
        const Snapshot v = snapshot(bc, s[b]);
        const std::int64_t steps = c.it;
        L::for_each_lane(sub, [&](int l) VIGOR_LAMBDA_INLINE { retire_lane(bc, l, steps, v); });
      });
    }

    /// One lane's values where the loop ends (kRetireAtExit): `it` counts the steps it kept (a
    /// failed step is not counted).
    VIGOR_HD VIGOR_INLINE void write_at_exit() const {
      const std::int64_t steps = c.it;
      const Snapshot v{s[0], emax[0], jmax[0], rmax[0]};
      if constexpr (kTangent)
        on.write_lane(0, 0, steps, v, L::dual_lane(sd, 0), acc.lane(0));
      else
        on.write_lane(0, 0, steps, v, 0, 0);
    }
  };

  /// advance_lanes: its variables, then the loop over them (Loop::run).
  VIGOR_HD VIGOR_INLINE static void advance(const MP& mp, const MS& ms, const IP& ip, const IS& is,
                                            const IDS& ids, const SegmentParams<T>& sp,
                                            const EnsembleArrays<T>& a, std::int64_t i0,
                                            int valid_lanes) {
    const int valid = L::NB == 1 ? 1 : valid_lanes;
    const std::int64_t n = sp.n;
    const T h = sp.h;
    const std::int64_t end_step = sp.end_step;
    LaneRecords<L> r;
    r.load(a, i0, valid, end_step);
    if (r.active == 0) return;
    Counters c{0, 0, 0};
    if constexpr (L::NB == 1) {
      c.it = r.k0[0];
      r.k0[0] = 0;
    }
    // Registers: the sub-blocks' states, energies, maxima and section distances.
    State s[B];
    [[maybe_unused]] StateD sd{};
    [[maybe_unused]] Accumulators acc{};
    if constexpr (kTangent) {
      L::template load_tangent<TOps>(mp, a.state, a.tangent, n, i0, valid, sd);
      L::template primal<TOps>(sd, s[0]);
      acc.load(a.tangent_acc, n, i0, valid, r.k0);
    }
    P e0[B], emax[B], jmax[B], rmax[B];
    MapValues j0[B];
    P gp[B];
    Settings set(sp);  // not const: see Settings
    Crossings crossings{};
    const Handlers on{mp, ms, ip, is, ids, sp, a, i0, n, h, r, crossings};
    CheckSchedule<L> checks;
    const P hp(h);
    const Loop loop{on, mp, ip,     sp, a,  set,  i0,   n,    end_step, valid_lanes, h,  hp,
                    r,  c,  checks, s,  e0, emax, jmax, rmax, j0,       gp,          sd, acc};
    loop.load_values();
    checks.init(sp.conservation_every, r.k0, c.it, r.active, valid);
    c.horizon_left = L::NB == 1 ? 0 : r.horizon(end_step, c.it, valid);
    loop.run();
    crossings.flush(mp, ms, ip, is, a, sp);
    if constexpr (kRetireAtExit) loop.write_at_exit();
    r.store(a, i0, valid);
  }
};

}  // namespace vigor::kernels
