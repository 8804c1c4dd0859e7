/// @file lane_records.hpp
/// @brief What the driver (kernels/driver/advance.hpp) keeps of a block of lanes in memory rather
/// than in registers — the step counts, section counters and status of each lane — and the stores
/// of the rare paths: a retiring lane's tangent map, the round-off terms of a compensated state,
/// the state a failed step froze.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/core/config.hpp"
#include "kernels/driver/segment.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"

namespace vigor::kernels {

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

}  // namespace vigor::kernels
