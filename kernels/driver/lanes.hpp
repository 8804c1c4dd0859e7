/// @file lanes.hpp
/// @brief The lane type the driver is written over, and its scalar form: one trajectory, as a GPU
/// thread or the CPU's scalar path runs it.
///
/// kernels::advance_lanes (advance.hpp) advances a block of NB = B x W trajectories: B sub-blocks
/// of W lanes, each sub-block one value of type `Real` on which the model and the integrator run.
/// A lane type L says what that value is and how lanes are read, written and selected:
///
///   T, Real, W, B, NB, Bits, kSub     scalar type; per-sub-block value; lanes; lane-mask integer
///   for_each_lane(bits, f)            f(l) for every set bit (lowest first)
///   finite_bits(x)  compare_bits<C>(a, b)  select_bits(bits, a, b)     lane masks and blends
///   load(base, i0, b, valid)          a per-trajectory array's values of sub-block b
///   load_state<Ops>  store_lane<Ops>  lane_vector<Ops>  lane(x, l)      states in and out
///   rare_copy(x)  dual_lane(sd, l)    what the rare paths (a crossing, a retiring lane) read
///   keep_in_memory(m)                 a check's maximum, off the step's registers (CPU blocks)
///   step_times<M>(k0, it, h)          the lanes' times at the start of iteration `it`
///   load_tangent<TOps>  primal<TOps>  Accumulators                     tangent maps
///   Crossings<OpsS>                   how located crossings reach the hit buffer
///   kEventBursts  kQuietBursts  kQuietSegmentsOnly                   which parts the driver has
///
/// ScalarLanes below is W = B = 1 with `Real` = T and a crossing located where it is found. The
/// CPU's SIMD form, PackLanes (kernels/simd/pack_lanes.hpp), holds W trajectories per register and
/// queues crossings to locate W at a time. Everything else — the policy — is the driver's, once.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/core/compare.hpp"
#include "kernels/core/compensated.hpp"
#include "kernels/core/config.hpp"
#include "kernels/core/math.hpp"
#include "kernels/driver/segment.hpp"
#include "kernels/sections.hpp"
#include "kernels/state.hpp"
#include "kernels/tangent.hpp"

namespace vigor::kernels {

template <class F, int... b>
VIGOR_HD VIGOR_INLINE void for_each_sub_of(F& f, std::integer_sequence<int, b...>) {
  (f(std::integral_constant<int, b>{}), ...);
}

/// Calls f(std::integral_constant<int, b>{}) for b = 0 .. B-1: the sub-block index is a constant
/// in each call, so the sub-blocks' values (arrays indexed by b) stay in registers.
template <int B, class F>
VIGOR_HD VIGOR_INLINE void for_each_sub(F&& f) {
  for_each_sub_of(f, std::make_integer_sequence<int, B>{});
}

/// A crossing located as soon as it is found, and written to the hit buffer: the scalar lanes'
/// Crossings. OpsS and MS: the state operations and the model on T; IS: the integrator on T
/// (kernels::locate_crossing_by_step).
template <class OpsS, class T>
struct LocateNow {
  template <class MP, class MS, class IP, class IS, class State>
  VIGOR_HD VIGOR_INLINE void add(const MP&, const MS& ms, const IP&, const IS& is,
                                 const EnsembleArrays<T>& a, const SegmentParams<T>& sp,
                                 const State& x0, const State& x1, int, std::int64_t i, int slot,
                                 T k_before) {
    locate_and_write(ms, is, a, sp, plain_state(x0), plain_state(x1), i, slot, k_before);
  }
  template <class MP, class MS, class IP, class IS>
  VIGOR_HD VIGOR_INLINE void flush(const MP&, const MS&, const IP&, const IS&,
                                   const EnsembleArrays<T>&, const SegmentParams<T>&) {}

 private:
  // Out of line: three steps of the scheme, inlined into the step loop's rare path, would hold
  // registers and code through every step of a GPU thread.
  template <class MS, class IS, class State>
  static VIGOR_HD VIGOR_NOINLINE void locate_and_write(const MS& ms, const IS& is,
                                                       const EnsembleArrays<T>& a,
                                                       const SegmentParams<T>& sp, State x0,
                                                       State x1, std::int64_t i, int slot,
                                                       T k_before) {
    const T h = sp.h;
    Vec<T, OpsS::kDim> x;
    const T th = locate_crossing_by_step<OpsS>(is, ms, x0, x1, k_before * h, sp.section_coord,
                                               sp.section_value, h, x);
    write_hit<OpsS::kDim>(a, sp, i, slot, (k_before + th) * h, x);
  }
};

/// The chaos accumulators of one trajectory, with the step count it started the launch at.
template <class T>
struct ScalarAccumulators {
  TangentAccumulators<T> acc;
  std::int64_t k0 = 0;

  VIGOR_HD VIGOR_INLINE void load(const T* slots, std::int64_t n, std::int64_t i0, int,
                                  const std::int64_t* k0s) {
    acc.load(slots, n, i0);
    k0 = k0s[0];
  }
  /// After iteration `it` of the launch (step number k0 + it + 1).
  template <class TOps>
  VIGOR_HD VIGOR_INLINE void after_step(typename TOps::StateD& sd, std::int64_t it) {
    acc.template after_step<TOps>(sd, k0 + it + 1);
  }
  VIGOR_HD VIGOR_INLINE TangentAccumulators<T> lane(int) const { return acc; }
};

/// One trajectory: a GPU thread, or one CPU trajectory on the scalar path. Any StateOps state.
template <class T_>
struct ScalarLanes {
  using T = T_;
  using Real = T_;
  using Bits = std::uint32_t;
  static constexpr int W = 1;
  static constexpr int B = 1;
  static constexpr int NB = 1;
  static constexpr Bits kSub = 1;
  /// Whether the driver compiles its event bursts for this lane type (EventBurstLanes), its quiet
  /// bursts (WithoutQuietBursts), and the events of segments that allow no quiet burst
  /// (QuietSegmentLanes).
  static constexpr bool kEventBursts = false;
  static constexpr bool kQuietBursts = true;
  static constexpr bool kQuietSegmentsOnly = false;

  template <class F>
  VIGOR_HD VIGOR_INLINE static void for_each_lane(Bits bits, F&& f) {
    if (bits & 1u) f(0);
  }
  VIGOR_HD VIGOR_INLINE static Bits finite_bits(Real x) { return isfinite(x) ? 1u : 0u; }
  template <Cmp C>
  VIGOR_HD VIGOR_INLINE static Bits compare_bits(Real a, Real b) {
    return compare<C>(a, b) ? 1u : 0u;
  }
  VIGOR_HD VIGOR_INLINE static Real select_bits(Bits bits, Real a, Real b) {
    return (bits & 1u) ? a : b;
  }
  VIGOR_HD VIGOR_INLINE static Real load(const T* base, std::int64_t i0, int, int) {
    return base[i0];
  }
  VIGOR_HD VIGOR_INLINE static T lane(Real x, int) { return x; }

  template <class Ops, class M>
  VIGOR_HD VIGOR_INLINE static void load_state(const M& m, const T* state, std::int64_t n,
                                               std::int64_t i0, int, int, typename Ops::State& s) {
    Ops::load(m, state + i0, n, s);
  }
  template <class Ops>
  VIGOR_HD VIGOR_INLINE static void store_lane(const typename Ops::State& s, int, T* state,
                                               std::int64_t n, std::int64_t i) {
    Ops::store(s, state + i, n);
  }
  template <class Ops>
  VIGOR_HD VIGOR_INLINE static Vec<T, Ops::kDim> lane_vector(const typename Ops::State& s, int) {
    return Ops::as_vector(s);
  }
  template <class S>
  VIGOR_HD VIGOR_INLINE static const S& rare_copy(const S& s) {
    return s;
  }
  /// One lane's maxima stay where the compiler puts them.
  VIGOR_HD VIGOR_INLINE static void keep_in_memory(const T&) {}
  template <class SD>
  VIGOR_HD VIGOR_INLINE static const SD& dual_lane(const SD& sd, int) {
    return sd;
  }
  /// Time t = k h of the step count k = k0 + it, formed as every path forms it.
  template <class M>
  VIGOR_HD VIGOR_INLINE static Real step_times(const std::int64_t* k0, int, std::int64_t it, T h) {
    return T(k0[0] + it) * h;
  }

  template <class TOps, class M>
  VIGOR_HD VIGOR_INLINE static void load_tangent(const M& m, const T* state, const T* partials,
                                                 std::int64_t n, std::int64_t i0, int,
                                                 typename TOps::StateD& sd) {
    kernels::load_tangent<TOps>(m, state + i0, partials + i0, n, sd);
  }
  template <class TOps>
  VIGOR_HD VIGOR_INLINE static void primal(const typename TOps::StateD& sd,
                                           typename TOps::State& s) {
    s = TOps::primal(sd);
  }

  using Accumulators = ScalarAccumulators<T>;
  template <class OpsS>
  using Crossings = LocateNow<OpsS, T>;
};

/// Lane type L with the driver's event bursts compiled in (kernels/driver/advance.hpp). They pay on
/// a GPU thread (DeferredLanes) and nowhere on the CPU, whose SIMD blocks test their events as
/// lane masks already and ran slower with bursts at every length (docs/performance.md, "Events in
/// bursts"); each lane type that has them holds one more copy of the step, which was 18 % of an
/// explicit model's CPU engine compile time. So only the GPU's lane type and the tests that pin
/// the bursts to per-step testing on the CPU's lanes compile them.
template <class L>
struct EventBurstLanes : L {
  static constexpr bool kEventBursts = true;
};

/// Lane type L without the driver's quiet bursts (kernels/driver/advance.hpp), for a CPU block that
/// never runs them: the CPU engine gives the segments that allow them (segment_allows_bursts)
/// blocks of more sub-blocks (QuietSegmentLanes), so its other blocks' burst loop would be a copy
/// of the step per sub-block that never runs (docs/performance.md, "Dead copies of the step").
template <class L>
struct WithoutQuietBursts : L {
  static constexpr bool kQuietBursts = false;
};

/// Lane type L for a CPU block that runs only the segments that allow quiet bursts (no section, no
/// escape radius, checks every K > 1 steps: segment_allows_bursts). The driver compiles no section,
/// escape or event-burst code for it, which such a segment never reaches; the engine that picks
/// the lane type by segment_allows_bursts holds the promise.
template <class L>
struct QuietSegmentLanes : L {
  static constexpr bool kQuietSegmentsOnly = true;
};

/// A Crossings for the lanes that never cross a section (QuietSegmentLanes): nothing to flush.
struct NoCrossings {
  template <class... A>
  VIGOR_HD VIGOR_INLINE void flush(const A&...) {}
};

}  // namespace vigor::kernels
