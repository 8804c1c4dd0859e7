/// @file driver.hpp
/// @brief The per-trajectory driver: one trajectory through one segment of time steps.
///
/// Called by one CUDA thread per trajectory (kernels/cuda/segment_kernel.cuh) and by the CPU
/// backend's OpenMP loop, with the same arguments. It loads the state from structure-of-arrays
/// memory (`x[component * n + trajectory]`) into registers, takes steps until the segment's end
/// step, watches the energy error, the momentum maps, the Newton residual, the status and the
/// section, and stores everything back. The model's state is seen through StateOps (state.hpp).
///
/// A trajectory stops early inside a segment when
///   * a step produced a non-finite energy (at a conservation check: every step by default,
///     every SegmentParams::conservation_every steps if asked) or, between checks, a non-finite
///     state component: it is frozen at the state before that step (kStatusNonFinite);
///   * |q| exceeded the escape radius: frozen at the first state outside (kStatusEscaped);
///   * an implicit step's final Newton residual exceeded the job's newton_tolerance: stopped at
///     the state that step produced (kStatusNewtonNotConverged);
///   * its section buffer for this drain is full: it pauses; the host drains the buffer and
///     launches the segment again, and paused trajectories continue exactly where they were, so
///     no crossing is ever lost to a full buffer.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/core/config.hpp"
#include "kernels/core/math.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/sections.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"

namespace vigor::kernels {

/// Everything a launch needs besides the arrays. Trivially copyable (a kernel argument).
template <class Real>
struct SegmentParams {
  std::int64_t n = 0;         ///< number of trajectories
  Real h = Real(0);           ///< time step
  std::int64_t end_step = 0;  ///< advance every trajectory up to this step index
  int section_kind = kSectionNone;
  int section_coord = 0;
  int section_direction = kDirBoth;
  Real section_value = Real(0);
  std::int64_t stroboscopic_every = 1;
  int hit_capacity = 0;              ///< hits per trajectory per drain
  std::int64_t max_recorded = 0;     ///< hits recorded per trajectory over the whole run
  Real escape_radius2 = Real(-1);    ///< <= 0: no escape test
  Real newton_tolerance = Real(-1);  ///< <= 0: residuals are reported, never acted on
  /// |H - H0| and the momentum maps are evaluated after the steps whose count k is a multiple of
  /// this (1: every step); the steps between test the state for non-finite values instead.
  std::int64_t conservation_every = 1;
  /// Let the drivers run the steps between conservation checks as bursts where nothing else is
  /// tested (advance_impl, advance_block); false forces per-step testing, the reference the tests
  /// hold the bursts to (same results, bit for bit).
  bool bursts = true;
};

/// Whether a segment tests nothing between its conservation checks (no section, no escape radius),
/// so that a driver may run those steps as bursts; the integrator (explicit) and the absence of a
/// tangent map decide the rest (advance_impl below, advance_block in kernels/simd/). The CPU
/// engine asks it too, to pick its burst blocks (host/backends/cpu_engine.hpp).
template <class Real>
VIGOR_HD VIGOR_INLINE bool segment_allows_bursts(const SegmentParams<Real>& sp) {
  return sp.bursts && sp.conservation_every > 1 && sp.section_kind == kSectionNone &&
         !(sp.escape_radius2 > Real(0));
}

/// Structure-of-arrays ensemble storage (device or host pointers).
template <class Real>
struct EnsembleArrays {
  Real* state = nullptr;            ///< [c * n + i], c < StateOps::kDim
  Real* energy0 = nullptr;          ///< H at t = 0
  Real* energy_error = nullptr;     ///< max |H - H0| so far
  Real* momentum0 = nullptr;        ///< [c * n + i]: momentum maps at t = 0 (if the model has any)
  Real* momentum_error = nullptr;   ///< max_c max_t |J_c - J_c(0)| so far
  Real* newton_residual = nullptr;  ///< max final Newton residual over the steps so far
  std::int64_t* step = nullptr;     ///< steps taken
  std::int32_t* status = nullptr;   ///< kernels::Status
  std::int64_t* crossings = nullptr;  ///< crossings detected (recorded or not)
  std::int64_t* recorded = nullptr;   ///< crossings recorded so far
  std::int32_t* hit_count = nullptr;  ///< hits in the buffer since the last drain
  Real* hits = nullptr;               ///< [(c * capacity + slot) * n + i], c = 0: t, then state
  // Tangent-map diagnostics (kernels/tangent.hpp); all null when the job does not ask for them.
  Real* tangent = nullptr;      ///< [(c * K + j) * n + i]: partials of stored component c
  Real* tangent_acc = nullptr;  ///< [slot * n + i], TangentAcc slots
  Real* tangent_out = nullptr;  ///< [slot * n + i], TangentOut slots (updated at every launch end)
  Real* state0 = nullptr;       ///< [c * n + i]: the initial state
};

/// Write one hit (time and full state) into the trajectory's slot.
template <int Dim, class Real>
VIGOR_HD VIGOR_INLINE void write_hit(const EnsembleArrays<Real>& a, const SegmentParams<Real>& sp,
                                     std::int64_t i, int slot, Real t, const Vec<Real, Dim>& x) {
  const std::int64_t n = sp.n;
  const std::int64_t cap = sp.hit_capacity;
  a.hits[(0 * cap + slot) * n + i] = t;
  VIGOR_UNROLL
  for (int c = 0; c < Dim; ++c) a.hits[((c + 1) * cap + slot) * n + i] = x[c];
}

/// Count a crossing and claim the buffer slot its hit goes to; -1 where the run's or the buffer's
/// limit leaves it unrecorded. The buffer is full (the trajectory pauses until drained) when
/// `hits` reaches the capacity.
template <class Real>
VIGOR_HD VIGOR_INLINE int claim_hit(const SegmentParams<Real>& sp, std::int64_t& crossings,
                                    std::int64_t& recorded, int& hits) {
  ++crossings;
  if (recorded >= sp.max_recorded || hits >= sp.hit_capacity) return -1;
  ++recorded;
  return hits++;
}

/// Count a crossing and record it while the run's and the buffer's limits allow.
/// Returns true when the buffer just became full (the trajectory pauses until drained).
template <int Dim, class Real>
VIGOR_HD inline bool record_hit(const EnsembleArrays<Real>& a, const SegmentParams<Real>& sp,
                                std::int64_t i, Real t, const Vec<Real, Dim>& x,
                                std::int64_t& crossings, std::int64_t& recorded, int& hits) {
  const int slot = claim_hit(sp, crossings, recorded, hits);
  if (slot < 0) return false;
  write_hit<Dim>(a, sp, i, slot, t, x);
  return hits == sp.hit_capacity;
}

/// 0 where every component of the state is finite, NaN otherwise (x - x is 0 for a finite x and
/// NaN for an infinite or NaN one; a plain sum could overflow). The non-finite test of the steps
/// between conservation checks: a few adds against the energy's dozen operations, on a scalar
/// and on a Pack alike.
template <class Ops, class S>
VIGOR_HD VIGOR_INLINE auto state_nan_probe(const S& s) {
  const auto x = Ops::as_vector(s);
  auto z = x[0] - x[0];
  VIGOR_UNROLL
  for (int c = 1; c < Ops::kDim; ++c) z += x[c] - x[c];
  return z;
}

/// The first step count >= k + 1 that is a multiple of `every`, minus k: the steps until the next
/// conservation check. Checks fall on multiples of the global step count, so a run gives the same
/// results however it is cut into segments, chunks and resumed checkpoints.
VIGOR_HD VIGOR_INLINE std::int64_t steps_to_check(std::int64_t k, std::int64_t every) {
  return every - k % every;
}

/// max_c |J_c(s) - J_c(0)| for trajectory i (0 for models without momentum maps).
template <class M, class Real>
VIGOR_HD VIGOR_INLINE Real momentum_drift(const M& m, const typename StateOps<M, Real>::State& s,
                                          const EnsembleArrays<Real>& a, std::int64_t n,
                                          std::int64_t i) {
  using Ops = StateOps<M, Real>;
  Real e = Real(0);
  if constexpr (Ops::kMomentumMaps > 0) {
    const auto J = Ops::momentum(m, s);
    VIGOR_UNROLL
    for (int c = 0; c < Ops::kMomentumMaps; ++c) e = max_of(e, abs(J[c] - a.momentum0[c * n + i]));
  }
  return e;
}

/// Energy and momentum maps at t = 0 for trajectory i (the host runs it before the first segment).
template <class M, class Real>
VIGOR_HD VIGOR_INLINE void initial_energy(const M& m, const EnsembleArrays<Real>& a, std::int64_t n,
                                          std::int64_t i) {
  using Ops = StateOps<M, Real>;
  typename Ops::State s;
  Ops::load(m, a.state + i, n, s);
  a.energy0[i] = Ops::energy(m, s);
  a.energy_error[i] = Real(0);
  a.newton_residual[i] = Real(0);
  a.momentum_error[i] = Real(0);
  if constexpr (Ops::kMomentumMaps > 0) {
    const auto J = Ops::momentum(m, s);
    VIGOR_UNROLL
    for (int c = 0; c < Ops::kMomentumMaps; ++c) a.momentum0[c * n + i] = J[c];
  }
}

/// Initial energy plus the tangent map's seed, accumulators and t = 0 diagnostics; `integrator`
/// is the job's integrator on TangentOps<M, Real>::D (its symplectic chart, if any, enters the
/// form).
template <class M, class IntegratorD, class Real>
VIGOR_HD VIGOR_INLINE void initial_energy_tangent(const M& m, const IntegratorD& integrator, Real h,
                                                  const EnsembleArrays<Real>& a, std::int64_t n,
                                                  std::int64_t i) {
  initial_energy(m, a, n, i);
  initial_tangent(integrator, m, h, a.state, a.state0, a.tangent, a.tangent_acc, a.tangent_out, n,
                  i);
}

/// The driver body. kTangent: Integrator runs on TangentOps<M, Real>::D and the state carries
/// its partials (the tangent map), with the chaos accumulators advanced after every step.
template <bool kTangent, class M, class Integrator, class Real>
VIGOR_HD inline void advance_impl(const M& m, const Integrator& integrator,
                                  const SegmentParams<Real>& sp, const EnsembleArrays<Real>& a,
                                  std::int64_t i) {
  using Ops = StateOps<M, Real>;
  using State = typename Ops::State;
  using TOps = TangentOps<M, Real>;
  // Without tangent maps the dual state is a dummy the compiler drops.
  using StateD = std::conditional_t<kTangent, typename TOps::StateD, State>;
  constexpr int dim = Ops::kDim;
  // Explicit steps solve nothing: their residual bookkeeping compiles away.
  constexpr bool kSolves = default_newton_iterations < Integrator >> 0;
  const std::int64_t n = sp.n;
  a.hit_count[i] = 0;
  std::int64_t k = a.step[i];
  if (a.status[i] != kStatusOk || k >= sp.end_step) return;

  State s;
  [[maybe_unused]] StateD sd{};
  [[maybe_unused]] TangentAccumulators<Real> acc{};
  if constexpr (kTangent) {
    load_tangent<TOps>(m, a.state + i, a.tangent + i, n, sd);
    s = TOps::primal(sd);
    acc.load(a.tangent_acc, n, i);
  } else {
    Ops::load(m, a.state + i, n, s);
  }
  // Launch constants in locals: hit writes go through a Real pointer that, as far as the
  // compiler knows, could alias `sp`, which would otherwise force reloads in the step loop.
  const Real h = sp.h;
  const std::int64_t end_step = sp.end_step;
  const int section_kind = sp.section_kind;
  const int coord = sp.section_coord;
  const int direction = sp.section_direction;
  const Real value = sp.section_value;
  const Real escape2 = sp.escape_radius2;
  const Real newton_tol = sp.newton_tolerance;
  const Real e0 = a.energy0[i];
  Real emax = a.energy_error[i];
  Real jmax = a.momentum_error[i];
  Real rmax = a.newton_residual[i];
  std::int64_t crossings = a.crossings[i];
  std::int64_t recorded = a.recorded[i];
  int hits = 0;
  std::int32_t status = kStatusOk;
  // Signed distance to the section plane, carried from step to step (one selection per step).
  Real g_prev = Ops::component(s, coord) - value;
  const std::int64_t every = sp.conservation_every;
  std::int64_t until_check = steps_to_check(k, every);
  // Bursts: when nothing is tested between conservation checks (no section, no escape radius, an
  // explicit step, no tangent map), the steps up to the next check run back to back with no test
  // at all — the loop a hand-written kernel runs — and the burst is validated once at its end.
  // Explicit steps update q and p additively (x += ...), so a component that once turns inf or
  // NaN stays non-finite: a finite state at the end of a burst means every state in it was
  // finite, which is all the per-step test would have found. A burst that ends non-finite (or at
  // a check with a non-finite H) is undone and its steps are taken again one at a time by the
  // per-step path below, which freezes the trajectory at the failing step. Same operations in
  // the same order: the results are bit-identical to per-step testing.
  constexpr bool kBurstable = !kTangent && !kSolves;
  const bool bursts = kBurstable && segment_allows_bursts(sp);
  std::int64_t per_step_until = k;  // after an undone burst: its steps go one at a time
  // A conservation check passed with |H - H0| = de: fold it and the momentum maps' drift.
  const auto fold_check = [&](Real de) {
    emax = max_of(emax, de);
    if constexpr (Ops::kMomentumMaps > 0) jmax = max_of(jmax, momentum_drift(m, s, a, n, i));
  };

  while (k < end_step) {
    if constexpr (kBurstable) {
      if (bursts && k >= per_step_until) {
        const std::int64_t len = min_of(until_check, end_step - k);
        const State start = s;
        for (std::int64_t j = 0; j < len; ++j) take_step(integrator, m, s, h, Real(k + j) * h);
        const bool at_check = len == until_check;
        const Real de = at_check ? abs(Ops::energy(m, s) - e0) : Real(0);
        if (isfinite(state_nan_probe<Ops>(s)) && isfinite(de)) {
          k += len;
          if (at_check) {
            until_check = every;
            fold_check(de);
          } else {
            until_check -= len;
          }
          continue;
        }
        s = start;
        per_step_until = k + len;
      }
    }
    const State prev = s;
    [[maybe_unused]] const StateD prev_d = sd;
    const Real t0 = Real(k) * h;
    Real residual;
    if constexpr (kTangent) {
      residual = take_tangent_step<TOps>(integrator, m, sd, h, t0);
      s = TOps::primal(sd);
    } else {
      residual = take_step(integrator, m, s, h, t0);
    }
    // A conservation check evaluates H (non-finite H: the step failed); the steps between test
    // the state itself. A failure shows in the state too as soon as the next force or update
    // uses it; only a finite state whose H alone is infinite (a singular point hit exactly)
    // waits for the next check.
    const bool check = --until_check == 0;
    Real de = Real(0);
    bool finite;
    if (check) {
      until_check = every;
      de = abs(Ops::energy(m, s) - e0);
      finite = isfinite(de);
    } else {
      finite = isfinite(state_nan_probe<Ops>(s));
    }
    if (!finite || (kSolves && !isfinite(residual))) {
      s = prev;  // freeze at the last finite state
      if constexpr (kTangent) sd = prev_d;
      status = kStatusNonFinite;
      break;
    }
    if constexpr (kTangent) acc.template after_step<TOps>(sd, k + 1);
    if (check) fold_check(de);
    if constexpr (kSolves) rmax = max_of(rmax, residual);
    ++k;
    bool pause = false;
    if (section_kind == kSectionPlane) {
      const Real g = Ops::component(s, coord) - value;
      if (is_crossing(g_prev, g, direction)) [[unlikely]] {
        // A crossing past the run's or the buffer's limit is counted, not located.
        const int slot = claim_hit(sp, crossings, recorded, hits);
        if (slot >= 0) {
          Vec<Real, dim> x_hit;
          const Real th = locate_crossing<Ops>(m, prev, s, t0, coord, value, h, x_hit);
          write_hit<dim>(a, sp, i, slot, (Real(k - 1) + th) * h, x_hit);
          pause = hits == sp.hit_capacity;
        }
      }
      g_prev = g;
    } else if (section_kind == kSectionStroboscopic && k % sp.stroboscopic_every == 0) {
      pause = record_hit(a, sp, i, Real(k) * h, Ops::as_vector(s), crossings, recorded, hits);
    }
    // After the section test, so a crossing on the escaping step is still recorded.
    if (escape2 > Real(0) && Ops::position_norm2(s) > escape2) {
      status = kStatusEscaped;
      break;
    }
    if (kSolves && newton_tol > Real(0) && residual > newton_tol) {
      status = kStatusNewtonNotConverged;
      break;
    }
    if (pause) break;
  }

  if constexpr (kTangent) {
    store_tangent<TOps>(sd, a.state + i, a.tangent + i, n);
    acc.store(a.tangent_acc, n, i);
    State x0;
    Ops::load(m, a.state0 + i, n, x0);
    tangent_diagnostics<TOps>(integrator, m, x0, sd, acc, k, h, a.tangent_out, n, i);
    // A trajectory frozen on a non-finite step has no meaningful tangent map.
    if (status == kStatusNonFinite)
      for (int c = 0; c < kTangentOutCount; ++c)
        a.tangent_out[c * n + i] = std::numeric_limits<Real>::quiet_NaN();
  } else {
    Ops::store(s, a.state + i, n);
  }
  a.step[i] = k;
  a.status[i] = status;
  a.energy_error[i] = emax;
  a.momentum_error[i] = jmax;
  a.newton_residual[i] = rmax;
  a.crossings[i] = crossings;
  a.recorded[i] = recorded;
  a.hit_count[i] = hits;
}

/// Advance trajectory i from its current step to sp.end_step (or until it stops or pauses).
template <class M, class Integrator, class Real>
VIGOR_HD inline void advance_trajectory(const M& m, const Integrator& integrator,
                                        const SegmentParams<Real>& sp,
                                        const EnsembleArrays<Real>& a, std::int64_t i) {
  advance_impl<false>(m, integrator, sp, a, i);
}

/// The same with the tangent map: `integrator` is tangent_integrator_t<I, M, Real>
/// (kernels/tangent.hpp), and a.tangent, a.tangent_acc, a.tangent_out, a.state0 are set.
template <class M, class IntegratorD, class Real>
VIGOR_HD inline void advance_trajectory_tangent(const M& m, const IntegratorD& integrator,
                                                const SegmentParams<Real>& sp,
                                                const EnsembleArrays<Real>& a, std::int64_t i) {
  advance_impl<true>(m, integrator, sp, a, i);
}

}  // namespace vigor::kernels
