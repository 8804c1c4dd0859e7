/// @file segment.hpp
/// @brief What one launch of the driver works on: the segment's parameters (SegmentParams), the
/// ensemble's structure-of-arrays memory (EnsembleArrays), the section-hit buffer and the t = 0
/// initialisation of the per-trajectory diagnostics.
///
/// Both are plain structs of numbers and pointers (kernel arguments on the GPU). The host makes
/// SegmentParams in one place from the run's settings (host/backends/engine_common.hpp).
#pragma once

#include <cstdint>

#include "kernels/core/config.hpp"
#include "kernels/core/math.hpp"
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
  /// Let the driver run the steps between conservation checks as bursts where nothing else is
  /// tested (kernels/driver/advance.hpp); false forces per-step testing, the reference the tests
  /// hold the bursts to (same results, bit for bit).
  bool bursts = true;
  /// Steps per event burst (kernels/driver/advance.hpp): with a plane section, an escape radius
  /// or checks every step, up to this many steps run back to back with their tests folded into
  /// one flag, and a burst whose flag is set is retaken step by step. 0: every step is tested on
  /// its own. Set per backend (host/backends/engine_common.hpp, kGpuEventBurstSteps).
  int event_burst = 0;
};

/// Whether a segment tests nothing between its conservation checks (no section, no escape radius),
/// so that the driver may run those steps as bursts; the integrator (explicit) and the absence of
/// a tangent map decide the rest (kernels::kBurstable). The CPU engine asks it too, to pick its
/// burst blocks (host/backends/cpu_engine.hpp).
template <class Real>
VIGOR_HD VIGOR_INLINE bool segment_allows_bursts(const SegmentParams<Real>& sp) {
  return sp.bursts && sp.conservation_every > 1 && sp.section_kind == kSectionNone &&
         !(sp.escape_radius2 > Real(0));
}

/// Whether a segment that tests something every step (a plane section, an escape radius, or
/// checks at every step) may run its steps as event bursts: not with a stroboscopic section,
/// whose samples are written at fixed steps, and not where quiet bursts apply.
template <class Real>
VIGOR_HD VIGOR_INLINE bool segment_allows_event_bursts(const SegmentParams<Real>& sp) {
  return sp.bursts && sp.event_burst > 1 && sp.section_kind != kSectionStroboscopic &&
         !segment_allows_bursts(sp);
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
  /// [c * n + i], c < StateOps::kDim: the round-off terms of q and p of a compensated integrator
  /// (kernels/core/compensated.hpp); null otherwise.
  Real* state_lo = nullptr;
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

}  // namespace vigor::kernels
