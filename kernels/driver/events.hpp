/// @file events.hpp
/// @brief What the driver tests after a step, one function per event: each returns the lanes of
/// a sub-block it selects (bit l: lane l; on a scalar lane type, bit 0), for any lane type L
/// (kernels/driver/lanes.hpp). The driver (advance.hpp) handles the lanes each one selects.
///
///   failed_lanes      non-finite |H - H0| at a conservation check, a non-finite state between
///                     checks, or a non-finite Newton residual: the lane freezes
///   crossing_lanes    a sign change of g = x_coord - value in the section's direction
///   strobe_lanes      the step count reached a multiple of the stroboscopic period
///   escaped_lanes     |q|^2 beyond the escape radius squared
///   unconverged_lanes the final Newton residual above the job's tolerance
///   CheckSchedule     which iterations have a conservation check, and which lanes are due
///
/// An event is added by writing its test here and its handling in the driver's step.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/core/config.hpp"
#include "kernels/driver/lanes.hpp"
#include "kernels/driver/segment.hpp"
#include "kernels/sections.hpp"

namespace vigor::kernels {

/// Lanes whose step failed. Lanes `due` for a conservation check are judged by |H - H0| (`de`,
/// evaluated when `check`), the others by their state (a component turned non-finite); implicit
/// steps (kSolves) also by their residual. A failure shows in the state as soon as the next force
/// or update uses it; only a finite state whose H alone is infinite (a singular point hit exactly)
/// waits for the next check.
///
/// One lane (a GPU thread) is either due or not, so its test is a plain select. It must stay one:
/// the block form below, compiled for one lane by ptxas (CUDA 13.0, sm_90, -O1 and above) inside
/// the segment kernel, judged every lane failed at its first step between checks, so every GPU
/// run with conservation_every > 1 and per-step tests (a section or an escape radius on) froze
/// all trajectories at step 0 (docs/performance.md, GPU section; CudaBackend tests
/// HenonHeilesBurstsBetweenChecksMatchCpu and SectionWithChecksEveryKStepsMatchesCpu).
template <class L, class Ops, bool kSolves>
VIGOR_HD VIGOR_INLINE typename L::Bits failed_lanes(const typename Ops::State& x,
                                                    const typename L::Real& de,
                                                    const typename L::Real& residual, bool check,
                                                    typename L::Bits due) {
  typename L::Bits finite;
  if constexpr (L::NB == 1) {
    finite = check ? L::finite_bits(de) : L::finite_bits(state_nan_probe<Ops>(x));
  } else {
    finite = 0;
    if (check) finite = L::finite_bits(de) & due;
    if (due != L::kSub) finite |= L::finite_bits(state_nan_probe<Ops>(x)) & ~due;
  }
  if constexpr (kSolves) finite &= L::finite_bits(residual);
  return ~finite & L::kSub;
}

/// Lanes where g went from g_prev to g through zero in `direction` (kernels::is_crossing).
template <class L>
VIGOR_HD VIGOR_INLINE typename L::Bits crossing_lanes(const typename L::Real& g_prev,
                                                      const typename L::Real& g, int direction) {
  using P = typename L::Real;
  const P zero(typename L::T(0));
  // No lambdas here: one the compiler leaves out of line takes g_prev and g by reference, which
  // sends them through memory at every step.
  typename L::Bits lanes = 0;
  if (direction != kDirDown)
    lanes |= L::template compare_bits<Cmp::kLt>(g_prev, zero) &
             L::template compare_bits<Cmp::kGe>(g, zero);
  if (direction != kDirUp)
    lanes |= L::template compare_bits<Cmp::kGt>(g_prev, zero) &
             L::template compare_bits<Cmp::kLe>(g, zero);
  return lanes;
}

/// Lanes among `live` whose step count after this iteration, k0[l] + it + 1, is a multiple of
/// `every` (k0: the sub-block's lanes' step counts at the launch's start).
template <class L>
VIGOR_HD VIGOR_INLINE typename L::Bits strobe_lanes(const std::int64_t* k0, std::int64_t it,
                                                    std::int64_t every, typename L::Bits live) {
  typename L::Bits due = 0;
  L::for_each_lane(live, [&](int l) VIGOR_LAMBDA_INLINE {
    if ((k0[l] + it + 1) % every == 0) due |= typename L::Bits(1) << l;
  });
  return due;
}

/// Lanes whose position left the ball of radius^2 escape2.
template <class L, class Ops>
VIGOR_HD VIGOR_INLINE typename L::Bits escaped_lanes(const typename Ops::State& x,
                                                     const typename L::Real& escape2) {
  return L::template compare_bits<Cmp::kGt>(Ops::position_norm2(x), escape2);
}

/// Lanes whose final Newton residual exceeds the tolerance.
template <class L>
VIGOR_HD VIGOR_INLINE typename L::Bits unconverged_lanes(const typename L::Real& residual,
                                                         const typename L::Real& tolerance) {
  return L::template compare_bits<Cmp::kGt>(residual, tolerance);
}

/// Conservation checks (SegmentParams::conservation_every) fall on each lane's own multiples of
/// the step count (steps_to_check). With every > 1, lane l's next check is after iteration at[l];
/// `next` is the earliest over the active lanes. Active lanes whose step counts agree modulo
/// `every` (the usual case, and always with one lane) keep one schedule, all due together once
/// every `every` iterations: scanning the lanes at every check cost more than the steps between
/// checks when they are few. Stopped lanes do not count: nothing reads their values again.
template <class L>
struct CheckSchedule {
  using Bits = typename L::Bits;
  std::int64_t next = 0;  ///< the iteration of the next check (every > 1)
  bool one = true;        ///< every active lane shares the schedule
  std::int64_t at[L::NB];

  /// Lane l has taken k0[l] + it steps at iteration `it`.
  VIGOR_HD VIGOR_INLINE void init(std::int64_t every, const std::int64_t* k0, std::int64_t it,
                                  Bits active, int valid) {
    if (every <= 1) return;
    std::int64_t first = -1;
    for (int l = 0; l < valid; ++l) {
      at[l] = it + steps_to_check(k0[l] + it, every) - 1;
      if (!(active >> l & 1)) continue;
      if (first < 0) first = at[l];
      one = one && at[l] == first;
    }
    if constexpr (L::NB == 1) one = true;
    next = earliest(active, valid);
  }

  /// Whether iteration `it` checks any lane; `due` gets the lanes it checks (every lane past
  /// `valid` is marked due as well: never active, they spare a partial block the per-lane fold).
  /// `every` is the segment's (SegmentParams::conservation_every), passed rather than kept: on a
  /// GPU thread it is then a kernel parameter, not a register carried through the loop.
  VIGOR_HD VIGOR_INLINE bool advance(std::int64_t it, std::int64_t every, Bits active, int valid,
                                     Bits& due) {
    due = ~Bits(0);
    if (every <= 1) return true;
    if (it != next) {
      due = 0;
      return false;
    }
    if (L::NB == 1 || one) {
      next += every;
      return true;
    }
    due = valid >= int(8 * sizeof(Bits)) ? Bits(0) : ~Bits(0) << valid;
    for (int l = 0; l < valid; ++l)
      if (at[l] == it) {
        due |= Bits(1) << l;
        at[l] += every;
      }
    next = earliest(active, valid);
    return true;
  }

 private:
  VIGOR_HD VIGOR_INLINE std::int64_t earliest(Bits active, int valid) const {
    std::int64_t e = std::numeric_limits<std::int64_t>::max();
    for (int l = 0; l < valid; ++l)
      if ((active >> l & 1) && at[l] < e) e = at[l];
    return e;
  }
};

}  // namespace vigor::kernels
