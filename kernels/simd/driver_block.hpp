/// @file driver_block.hpp
/// @brief The per-trajectory driver for blocks of trajectories side by side in SIMD lanes (CPU
/// backend).
///
/// Same contract as kernels::advance_trajectory (driver.hpp), for the trajectories i0 .. i0+B*W-1:
/// the model and integrator step run on Pack<T, W> (one vector register) — the same VIGOR_HD code
/// the GPU runs, one lane per trajectory — and the per-trajectory branches of the scalar driver
/// become lane masks:
///   * a lane whose step gives a non-finite energy (or, between conservation checks, a
///     non-finite state: SegmentParams::conservation_every) is frozen at its last finite state;
///   * a lane beyond the escape radius stops;
///   * a lane whose section buffer fills pauses until the host drains it;
///   * a lane that reached end_step stops.
/// The masks are integers, one bit per lane, written by the compare itself (compare_bits: a mask
/// register on AVX-512), so the common step tests them with one scalar branch and no mask ever
/// goes through memory. A block is B sub-blocks of one register each, stepped one after the other
/// in every iteration: B independent dependency chains for the out-of-order core with only one
/// sub-block's temporaries live at a time (see advance_block).
/// A lane that stops writes its state, step count and energy error at once ("retires"); its
/// register lanes keep being computed but `active` masks them out of every later decision, so the
/// common step needs no blend. Each lane's state, counters and hits are the scalar driver's, bit
/// for bit (vigor compiles its C++ with -ffp-contract=off, so no path fuses a multiply-add that
/// another does not). The common step — no crossing, no freeze — is pure vector code; rare events
/// leave it for a per-lane loop. A crossing found there is only counted and queued: the queue
/// (PendingCrossings) locates W crossings at a time with kernels::locate_crossing on a Pack.
/// A block may be partial (the ensemble's last trajectories): missing lanes start inactive, and a
/// sub-block without an active lane is skipped, so every trajectory takes the same code path
/// wherever it sits in the ensemble.
///
/// With kTangent the block also carries the tangent map (kernels/tangent.hpp): the integrator
/// `ip` runs on Dual<Pack<T, W>, K>, the primal Phase is read off it after every step (so all the
/// logic above is unchanged), the chaos accumulators advance lane-wise (renormalisation is a
/// per-lane factor of 1 or an exact power of two: no branch), and a lane that retires writes its
/// partials and diagnostics through the scalar code (`ids`: the integrator on Dual<T, K>, for the
/// form it preserves). Partials are bit-identical to the scalar tangent driver's; the indicators
/// agree to the ulps of libmvec's log.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "kernels/driver.hpp"
#include "kernels/simd/pack.hpp"

// The per-sub-block bodies of the step loop are lambdas; they must be inlined for the packs
// they touch to stay in registers.
#if defined(VIGOR_NO_FORCED_INLINE) || !defined(__GNUC__)
#define VIGOR_LAMBDA_INLINE
#else
#define VIGOR_LAMBDA_INLINE __attribute__((always_inline))
#endif

namespace vigor::kernels {

/// Lane l of a block state. A lane index known only at run time needs the registers in memory:
/// callers pass a copy made on the rare path (see advance_block), never the step loop's own state.
template <class T, int W, int N>
inline Phase<T, N> extract_lane(const Phase<Pack<T, W>, N>& s, int l) {
  Phase<T, N> r;
  for (int c = 0; c < N; ++c) {
    r.q[c] = s.q[c][l];
    r.p[c] = s.p[c][l];
    r.f[c] = s.f[c][l];
  }
  return r;
}
/// q and p of a block state, the force zero: all the rare paths read (a lane's output and the
/// interpolation of a crossing use no force), so the force before the step is not kept live
/// through the step.
template <class T, int W, int N>
VIGOR_INLINE Phase<Pack<T, W>, N> without_force(const Phase<Pack<T, W>, N>& s) {
  Phase<Pack<T, W>, N> r;
  r.q = s.q;
  r.p = s.p;
  r.f = Vec<Pack<T, W>, N>::filled(Pack<T, W>(T(0)));
  return r;
}

/// s = the values of the dual state sd, register by register: `s = TOps::primal(sd)` built a
/// temporary Phase and compiled to a memcpy call per step (768 bytes at 16 lanes, 5 % of a tangent
/// run).
template <class T, int W, int K, int N>
VIGOR_INLINE void primal_lanes(const Phase<Dual<Pack<T, W>, K>, N>& sd, Phase<Pack<T, W>, N>& s) {
  for (int c = 0; c < N; ++c)
    for (int r = 0; r < Pack<T, W>::R; ++r) {
      s.q[c].v[r] = sd.q[c].v.v[r];
      s.p[c].v[r] = sd.p[c].v.v[r];
      s.f[c].v[r] = sd.f[c].v.v[r];
    }
}
/// Load `valid` consecutive values into the first lanes; the others repeat lane 0 (a finite,
/// harmless value for lanes that never become active).
template <class T, int W>
inline Pack<T, W> load_lanes(const T* p, int valid) {
  if (valid == W) return Pack<T, W>::load(p);
  Pack<T, W> r(p[0]);
  for (int l = 0; l < valid; ++l) r.set(l, p[l]);
  return r;
}
/// The chaos accumulators of W lanes (TangentAccumulators, lane-wise).
template <class T, int W>
struct BlockAccumulators {
  using P = Pack<T, W>;
  P scale_exp, ell0, ell_prev, megno_sum, megno_mean;

  void load(const T* acc, std::int64_t n, std::int64_t i0, int valid) {
    scale_exp = load_lanes<T, W>(acc + kAccScaleExp * n + i0, valid);
    ell0 = load_lanes<T, W>(acc + kAccEll0 * n + i0, valid);
    ell_prev = load_lanes<T, W>(acc + kAccEllPrev * n + i0, valid);
    megno_sum = load_lanes<T, W>(acc + kAccMegnoSum * n + i0, valid);
    megno_mean = load_lanes<T, W>(acc + kAccMegnoMean * n + i0, valid);
  }
  TangentAccumulators<T> lane(int l) const {
    return {scale_exp[l], ell0[l], ell_prev[l], megno_sum[l], megno_mean[l]};
  }

  /// TangentAccumulators::after_step on every lane; kk: each lane's step number, inv = 1 / kk.
  template <class TOps>
  void after_step(typename TOps::StateD& sd, const P& kk, const P& inv) {
    constexpr int E = kRescaleExp<T>;
    P nrm2 = deviation_norm2<TOps, P>(sd, 1);
    const auto hi = nrm2 > P(ldexp(T(1), 2 * E));
    const auto lo = nrm2 < P(ldexp(T(1), -2 * E));
    if ((hi | lo).any()) {  // rare: a factor per lane, 1 where nothing is rescaled
      const P one(T(1));
      TOps::scale(sd, select(hi, P(ldexp(T(1), -E)), select(lo, P(ldexp(T(1), E)), one)));
      scale_exp += select(hi, P(T(E)), select(lo, P(T(-E)), P(T(0))));
      nrm2 *= select(hi, P(ldexp(T(1), -2 * E)), select(lo, P(ldexp(T(1), 2 * E)), one));
    }
    const P ell = T(0.5) * log(nrm2) + scale_exp * T(0.6931471805599453);
    megno_sum += kk * (ell - ell_prev);
    megno_mean += T(2) * megno_sum * inv;
    ell_prev = ell;
  }
};

/// Lane l of a dual block state, as the scalar tangent driver holds it.
template <class T, int W, int K, int N>
inline Phase<Dual<T, K>, N> extract_dual_lane(const Phase<Dual<Pack<T, W>, K>, N>& s, int l) {
  Phase<Dual<T, K>, N> r;
  for (int c = 0; c < N; ++c) {
    r.q[c].v = s.q[c].v[l];
    r.p[c].v = s.p[c].v[l];
    r.f[c].v = s.f[c].v[l];
    for (int j = 0; j < K; ++j) {
      r.q[c].d[j] = s.q[c].d[j][l];
      r.p[c].d[j] = s.p[c].d[j][l];
      r.f[c].d[j] = s.f[c].d[j][l];
    }
  }
  return r;
}

/// Calls f(std::integral_constant<int, b>{}) for b = 0 .. B-1: the sub-block index is a constant
/// in each call, so the sub-blocks' packs (arrays indexed by b) stay in registers.
template <int B, class F>
VIGOR_INLINE void for_each_sub(F&& f) {
  [&]<int... b>(std::integer_sequence<int, b...>) VIGOR_LAMBDA_INLINE {
    (f(std::integral_constant<int, b>{}), ...);
  }(std::make_integer_sequence<int, B>{});
}

/// Section crossings the step loop found and has not located yet, up to W of them (any lanes, any
/// steps), located side by side in one Pack. Locating one crossing is a chain of divides and
/// Hermite evaluations hundreds of cycles long; done per lane inside the step loop it stalled the
/// loop at every crossing, while W crossings in the lanes of one register cost about what one does.
/// The slot of each hit is claimed when the crossing is found (kernels::claim_hit), so counters,
/// pauses and stops happen at the step they do in the scalar driver; only the located time and
/// state are written later, and all before advance_block returns. Each lane runs the scalar
/// driver's arithmetic (kernels::locate_crossing on Pack), so the hits are the same bit for bit
/// where the model's Pack arithmetic is (everywhere but libmvec's transcendental functions).
/// Constrained and non-separable models locate their queued crossings one at a time on T.
template <class T, int W, int d>
struct PendingCrossings {
  using P = Pack<T, W>;
  alignas(64) T q0[d][W], p0[d][W], q1[d][W], p1[d][W];
  alignas(64) T k_before[W];  ///< the step count before the crossing step, as T
  std::int64_t traj[W];
  int slot[W];
  int n = 0;

  /// Queue lane `lane` of the sub-block states x0 (before the step) and x1 (after it).
  void push(const Phase<P, d>& x0, const Phase<P, d>& x1, int lane, std::int64_t i, int s,
            T k0) {
    for (int c = 0; c < d; ++c) {
      q0[c][n] = x0.q[c][lane];
      p0[c][n] = x0.p[c][lane];
      q1[c][n] = x1.q[c][lane];
      p1[c][n] = x1.p[c][lane];
    }
    k_before[n] = k0;
    traj[n] = i;
    slot[n] = s;
    ++n;
  }

  /// Locate the queued crossings and write their hits; MP and MS are the model on P and on T.
  template <class MP, class MS>
  VIGOR_NOINLINE void locate(const MP& mp, const MS& ms, const EnsembleArrays<T>& a,
                             const SegmentParams<T>& sp) {
    if (n == 0) return;
    const T h = sp.h;
    if constexpr (ConstrainedModel<MS> || !SeparableModel<MS>) {
      // One crossing at a time, still out of the step loop: the field of a constrained (or
      // non-separable) model goes through nested dual numbers, which on a Pack made a single
      // model's translation unit compile for over half an hour.
      for (int j = 0; j < n; ++j) {
        Phase<T, d> s0, s1;
        for (int c = 0; c < d; ++c) {
          s0.q[c] = q0[c][j];
          s0.p[c] = p0[c][j];
          s1.q[c] = q1[c][j];
          s1.p[c] = p1[c][j];
        }
        s0.f = s1.f = Vec<T, d>::filled(T(0));  // not read: rates evaluates the field afresh
        Vec<T, 2 * d> xj;
        const T th = locate_crossing<StateOps<MS, T>>(ms, s0, s1, k_before[j] * h,
                                                      sp.section_coord, sp.section_value, h, xj);
        write_hit<2 * d>(a, sp, traj[j], slot[j], (k_before[j] + th) * h, xj);
      }
    } else {
      // Lanes past n repeat the first crossing: finite values, computed and never written.
      for (int j = n; j < W; ++j) {
        for (int c = 0; c < d; ++c) {
          q0[c][j] = q0[c][0];
          p0[c][j] = p0[c][0];
          q1[c][j] = q1[c][0];
          p1[c][j] = p1[c][0];
        }
        k_before[j] = k_before[0];
      }
      Phase<P, d> s0, s1;
      for (int c = 0; c < d; ++c) {
        s0.q[c] = P::load(q0[c]);
        s0.p[c] = P::load(p0[c]);
        s1.q[c] = P::load(q1[c]);
        s1.p[c] = P::load(p1[c]);
      }
      s0.f = s1.f = Vec<P, d>::filled(P(T(0)));  // not read: rates evaluates the field afresh
      const P hp(h);
      Vec<P, 2 * d> x;
      const P th = locate_crossing<StateOps<MP, P>>(mp, s0, s1, P::load(k_before) * hp,
                                                    sp.section_coord, P(sp.section_value), hp, x);
      for (int j = 0; j < n; ++j) {
        Vec<T, 2 * d> xj;
        for (int c = 0; c < 2 * d; ++c) xj[c] = x[c][j];
        write_hit<2 * d>(a, sp, traj[j], slot[j], (k_before[j] + th[j]) * h, xj);
      }
    }
    n = 0;
  }
};

/// Advance trajectories i0 .. i0+valid-1 (valid <= B * W) to sp.end_step, or until each stops
/// or pauses. The block is B sub-blocks of W lanes (one register each): MP/IP are the model and
/// integrator on Pack<T, W> (IP on Dual<Pack<T, W>, K> with kTangent, where B is 1); MS: the same
/// model on T (crossings of constrained models, tangent diagnostics); IDS: the integrator on
/// Dual<T, K> (kTangent only).
///
/// Why sub-blocks: one register of trajectories leaves the core waiting on the latency of its own
/// chain of multiply-adds, so a block carries B independent chains. As one Pack<T, B * W> they
/// were advanced operation by operation side by side, which keeps B states, the B states before
/// the step and all temporaries live at once: more than AVX-512's 32 registers, so the state went
/// to the stack and back every step. Stepping the sub-blocks one after the other in the same
/// iteration gives the out-of-order core the same independent chains with half the live values.
template <class MP, class MS, class IP, class T, int W, int B = 1, bool kTangent = false,
          class IDS = int>
inline void advance_block(const MP& mp, const MS& ms, const IP& ip, const SegmentParams<T>& sp,
                          const EnsembleArrays<T>& a, std::int64_t i0, int valid,
                          const IDS& ids = IDS{}) {
  using P = Pack<T, W>;
  constexpr int d = MP::dof;
  constexpr int NB = B * W;  // lanes of the block
  static_assert(MS::dof == d, "scalar and pack model must match");
  static_assert(NB <= 64, "a block has at most 64 lanes (one bit each in a lane mask)");
  static_assert(B == 1 || !kTangent, "tangent blocks are one sub-block");
  const std::int64_t n = sp.n;
  const T h = sp.h;
  const std::int64_t end_step = sp.end_step;
  const int coord = sp.section_coord;
  const T value = sp.section_value;
  using OpsP = StateOps<MP, P>;
  constexpr int kMaps = OpsP::kMomentumMaps;
  constexpr bool kSolves = default_newton_iterations < IP >> 0;
  constexpr std::uint64_t kSub = W == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << W) - 1;

  // Every active lane advances in every iteration, so lane l has taken k0[l] + it steps while
  // active; it records its own count when it stops. Lane l is lane l % W of sub-block l / W.
  std::int64_t k0[NB], crossings[NB], recorded[NB];
  int hits[NB];
  std::int32_t status[NB];
  // Lane masks of decisions are integers (bit l: lane l); vector masks exist only between a
  // compare and its bits.
  std::uint64_t active = 0;
  for (int l = 0; l < valid; ++l) {
    const std::int64_t i = i0 + l;
    a.hit_count[i] = 0;
    k0[l] = a.step[i];
    crossings[l] = a.crossings[i];
    recorded[l] = a.recorded[i];
    hits[l] = 0;
    status[l] = a.status[i];
    if (status[l] == kStatusOk && k0[l] < end_step) active |= std::uint64_t(1) << l;
  }
  if (active == 0) return;

  // Sub-block b's lanes of a per-trajectory array; a sub-block beyond the ensemble's end repeats
  // the block's first value (finite, and its lanes are never active).
  const auto load_sub = [&](const T* base, int b) VIGOR_LAMBDA_INLINE {
    const int vb = valid - b * W;
    return vb > 0 ? load_lanes<T, W>(base + i0 + b * W, vb < W ? vb : W)
                  : load_lanes<T, W>(base + i0, 1);
  };

  using TOpsP = TangentOps<MP, P>;
  using TOpsS = TangentOps<MS, T>;
  constexpr int K = TOpsP::K;
  // Without tangent maps the dual state is a dummy the compiler drops.
  using StateDP = std::conditional_t<kTangent, typename TOpsP::StateD, Phase<P, d>>;
  Phase<P, d> s[B];
  [[maybe_unused]] StateDP sd{};
  [[maybe_unused]] BlockAccumulators<T, W> acc{};
  [[maybe_unused]] P kk(T(1));
  [[maybe_unused]] bool uniform_k = true;
  if constexpr (kTangent) {
    for (int c = 0; c < d; ++c) {
      sd.q[c] = typename TOpsP::D(load_lanes<T, W>(a.state + c * n + i0, valid));
      sd.p[c] = typename TOpsP::D(load_lanes<T, W>(a.state + (d + c) * n + i0, valid));
      for (int j = 0; j < K; ++j) {
        sd.q[c].d[j] = load_lanes<T, W>(a.tangent + (c * K + j) * n + i0, valid);
        sd.p[c].d[j] = load_lanes<T, W>(a.tangent + ((d + c) * K + j) * n + i0, valid);
      }
    }
    refresh_force(mp, sd);
    primal_lanes(sd, s[0]);
    acc.load(a.tangent_acc, n, i0, valid);
    for (int l = 0; l < valid; ++l) {
      kk.set(l, T(k0[l]));
      uniform_k = uniform_k && k0[l] == k0[0];
    }
  }
  // The per-sub-block arrays are indexed only by constants (for_each_sub), never by a loop
  // variable: an index known at run time would put the whole array in memory.
  P e0[B], emax[B], jmax[B], rmax[B];
  Vec<P, (kMaps > 0 ? kMaps : 1)> j0[B];
  for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
    constexpr int b = decltype(bc)::value;
    if constexpr (!kTangent) {
      VIGOR_UNROLL
      for (int c = 0; c < d; ++c) {
        s[b].q[c] = load_sub(a.state + c * n, b);
        s[b].p[c] = load_sub(a.state + (d + c) * n, b);
      }
      if constexpr (SeparableModel<MP>) {
        refresh_force(mp, s[b]);
      } else {
        s[b].f = Vec<P, d>::filled(P(T(0)));
      }
    }
    e0[b] = load_sub(a.energy0, b);
    emax[b] = load_sub(a.energy_error, b);
    jmax[b] = load_sub(a.momentum_error, b);
    rmax[b] = load_sub(a.newton_residual, b);
    if constexpr (kMaps > 0) {
      VIGOR_UNROLL
      for (int c = 0; c < kMaps; ++c) j0[b][c] = load_sub(a.momentum0 + c * n, b);
    }
  });
  // g = x_coord - value of every sub-block's state, carried from step to step as in the scalar
  // driver: picking the coordinate out of registers is a chain of compares and jumps (coord is
  // known only at run time), and doing it for the state before the step too cost 3-4 % of a
  // Henon-Heiles run.
  P gp[B];
  for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
    constexpr int b = decltype(bc)::value;
    gp[b] = component(s[b], coord) - P(value);
  });
  const P newton_tol(sp.newton_tolerance);
  const bool newton_check = sp.newton_tolerance > T(0);
  const P escape2(sp.escape_radius2);
  const bool escape_on = sp.escape_radius2 > T(0);
  const bool plane = sp.section_kind == kSectionPlane;
  const bool strobe = sp.section_kind == kSectionStroboscopic;
  const P hp(h);
  std::int64_t it = 0;

  // A lane that stops writes its state, step count and errors right away; from then on its
  // register lanes may hold anything (they keep being computed, and `active` masks them out of
  // every decision), so the common step needs no blend at all. Everything it writes comes in by
  // value, extracted where it is called: a lambda that held the block's packs by reference would
  // pin them to the stack for the whole step loop.
  auto retire = [&](int l, std::int64_t steps, const Phase<T, d>& x, T em, T jm, T rm,
                    const auto& dual_lane, const TangentAccumulators<T>& al) {
    const std::int64_t i = i0 + l;
    for (int c = 0; c < d; ++c) {
      a.state[c * n + i] = x.q[c];
      a.state[(d + c) * n + i] = x.p[c];
    }
    a.step[i] = k0[l] + steps;
    a.energy_error[i] = em;
    a.momentum_error[i] = jm;
    a.newton_residual[i] = rm;
    if constexpr (kTangent) {
      // Partials, accumulators and diagnostics through the scalar code; a lane frozen on a
      // non-finite step has no meaningful tangent map: its diagnostics are NaN.
      const auto xs = TOpsS::OpsD::as_vector(dual_lane);
      for (int c = 0; c < TOpsS::kStored; ++c)
        for (int j = 0; j < K; ++j) a.tangent[(c * K + j) * n + i] = xs[c].d[j];
      al.store(a.tangent_acc, n, i);
      if (status[l] == kStatusNonFinite) {
        for (int c = 0; c < kTangentOutCount; ++c)
          a.tangent_out[c * n + i] = std::numeric_limits<T>::quiet_NaN();
      } else {
        typename TOpsS::State x0;
        TOpsS::Ops::load(ms, a.state0 + i, n, x0);
        tangent_diagnostics<TOpsS>(ids, ms, x0, dual_lane, al, k0[l] + steps, h, a.tangent_out,
                                   n, i);
      }
    }
  };
  // The rare paths read lanes at indices known only at run time, which needs the values in
  // memory. They read a copy of the sub-block made where the rare path starts: had they (or a
  // lambda that is not inlined) referred to the loop's own state, the state, the state before
  // the step and the error maxima would all live on the stack, stored and reloaded every step.
  struct Snapshot {
    Phase<P, d> x;
    P em, jm, rm;
  };
  const auto snapshot = [&](auto bc, const Phase<P, d>& x) VIGOR_LAMBDA_INLINE {
    constexpr int b = decltype(bc)::value;
    return Snapshot{without_force(x), emax[b], jmax[b], rmax[b]};
  };
  // Retire lane l (of sub-block b) in the state of the snapshot: the lane's values, then its bit.
  const auto retire_lane = [&](auto bc, int l, std::int64_t steps, const Snapshot& v) {
    constexpr int b = decltype(bc)::value;
    const int ll = l - b * W;
    if constexpr (kTangent)
      retire(l, steps, extract_lane(v.x, ll), v.em[ll], v.jm[ll], v.rm[ll],
             extract_dual_lane<T, W, K, d>(sd, ll), acc.lane(ll));
    else
      retire(l, steps, extract_lane(v.x, ll), v.em[ll], v.jm[ll], v.rm[ll], 0,
             TangentAccumulators<T>{});
    active &= ~(std::uint64_t(1) << l);
  };
  // Iterations every active lane can still take: until then no lane reaches end_step.
  auto horizon_of = [&]() {
    std::int64_t hmin = end_step;
    for (int l = 0; l < valid; ++l)
      if ((active >> l & 1) && end_step - (k0[l] + it) < hmin) hmin = end_step - (k0[l] + it);
    return hmin;
  };
  std::int64_t horizon = horizon_of();
  PendingCrossings<T, W, d> pending;
  // Conservation checks (SegmentParams::conservation_every) fall on each lane's own multiples of
  // the step count. With every > 1, lane l's next check is after iteration check_at[l], check_it
  // is the earliest of them over the active lanes, and in that iteration `due` holds the lanes
  // whose check it is (plus the lanes past `valid`, which are never active: marking them due
  // spares a partial block the per-lane fold). Lanes that share their step count (the usual
  // case) are all due together, once every `every` iterations.
  const std::int64_t every = sp.conservation_every;
  std::int64_t check_at[NB];
  std::int64_t check_it = 0;
  const std::uint64_t beyond = valid >= 64 ? 0 : ~std::uint64_t(0) << valid;
  const auto earliest_check = [&] {
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    for (int l = 0; l < valid; ++l)
      if ((active >> l & 1) && check_at[l] < next) next = check_at[l];
    return next;
  };
  // Active lanes whose step counts agree modulo `every` (the usual case) keep one schedule: all
  // lanes are due every `every` iterations. Scanning the lanes at every check cost more than the
  // steps between checks when they are few (every = 2: 2.6x slower than checking every step).
  // Stopped lanes do not count: nothing reads their values again.
  bool one_schedule = true;
  if (every > 1) {
    std::int64_t first = -1;
    for (int l = 0; l < valid; ++l) {
      check_at[l] = steps_to_check(k0[l], every) - 1;
      if (!(active >> l & 1)) continue;
      if (first < 0) first = check_at[l];
      one_schedule = one_schedule && check_at[l] == first;
    }
    check_it = earliest_check();
  }
  // Bursts, as in the scalar driver (kernels/driver.hpp, advance_impl): when nothing is tested
  // between conservation checks (no section, no escape radius, an explicit step, no tangent
  // map), the iterations before the next check run with no test and no bookkeeping, and the
  // sub-blocks' states are tested once at the burst's end. Explicit steps update q and p
  // additively, so a lane that turned non-finite in the burst is still non-finite at its end; the
  // block is then rewound to the burst's start and the loop below takes those iterations one at
  // a time, freezing the lane at its failing step: bit-identical to per-step testing. Lanes that
  // stopped earlier keep being computed in their registers and are left out of the test.
  [[maybe_unused]] const bool bursts = !kTangent && !kSolves && segment_allows_bursts(sp);
  [[maybe_unused]] std::int64_t per_step_until = 0;
  // The lanes' times at the start of iteration `iter` of sub-block lanes [sh, sh + W). Time only
  // matters to forced models; it is formed as the scalar driver forms it, T(k) * h per lane, so
  // lanes stay bit-identical to the scalar path at any step count.
  const auto step_times = [&](int sh, std::int64_t iter) VIGOR_LAMBDA_INLINE {
    P t0(T(0));
    if constexpr (ForcedModel<MP>) {
      for (int l = 0; l < W; ++l) t0.set(l, T(k0[sh + l < valid ? sh + l : 0] + iter) * h);
    }
    return t0;
  };

  for (;;) {
    if (horizon == 0) {
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        const std::uint64_t sub = active & (kSub << b * W);
        if (sub == 0) return;
        const Snapshot v = snapshot(bc, s[b]);
        for_each_lane(sub, [&](int l) {
          if (k0[l] + it >= end_step) retire_lane(bc, l, it, v);
        });
      });
      if (active == 0) break;
      horizon = horizon_of();
    }
    if constexpr (!kTangent && !kSolves) {
      // Iterations before the check iteration and before any active lane reaches end_step.
      const std::int64_t len =
          bursts && it >= per_step_until ? std::min(check_it - it, horizon) : std::int64_t(0);
      if (len > 0) {
        Phase<P, d> start[B];
        for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
          constexpr int b = decltype(bc)::value;
          start[b] = s[b];
        });
        for (std::int64_t j = 0; j < len; ++j) {
          for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
            constexpr int b = decltype(bc)::value;
            constexpr int sh = b * W;
            if ((active & (kSub << sh)) == 0) return;
            take_step(ip, mp, s[b], hp, step_times(sh, it + j));
          });
        }
        std::uint64_t finite = 0;
        for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
          constexpr int b = decltype(bc)::value;
          finite |= (finite_bits(state_nan_probe<OpsP>(s[b])) & kSub) << (b * W);
        });
        if ((active & ~finite) == 0) {
          it += len;
          horizon -= len;
          continue;
        }
        for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
          constexpr int b = decltype(bc)::value;
          s[b] = start[b];
        });
        per_step_until = it + len;
      }
    }
    std::uint64_t stop = 0;  // lanes that stop after this step (full buffer, escape, Newton)
    bool check = true;
    std::uint64_t due = ~std::uint64_t(0);
    if (every > 1) {
      check = it == check_it;
      due = 0;
      if (check && one_schedule) {
        due = ~std::uint64_t(0);  // stopped lanes too, see above
        check_it += every;
      } else if (check) {
        due = beyond;
        for (int l = 0; l < valid; ++l)
          if (check_at[l] == it) {
            due |= std::uint64_t(1) << l;
            check_at[l] += every;
          }
        check_it = earliest_check();
      }
    }
    for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
      constexpr int b = decltype(bc)::value;
      constexpr int sh = b * W;
      if ((active & (kSub << sh)) == 0) return;  // every lane of the sub-block has stopped
      Phase<P, d>& x = s[b];
      // The state before the step, for the rare events (a crossing, a freeze). Nothing refers to
      // x or before outside this loop (the rare paths copy them, see Snapshot), so both stay in
      // registers and this copy costs nothing.
      const Phase<P, d> before = x;
      const P t0 = step_times(sh, it);
      P residual;
      if constexpr (kTangent) {
        residual = take_tangent_step<TOpsP>(ip, mp, sd, hp, t0);
        primal_lanes(sd, x);
      } else {
        residual = take_step(ip, mp, x, hp, t0);
      }
      // As in the scalar driver: H is evaluated on the lanes due for a conservation check, the
      // other lanes' states are tested for non-finite values.
      const std::uint64_t due_sub = (due >> sh) & kSub;
      P de(T(0));
      std::uint64_t finite = 0;
      if (check) {
        de = abs(OpsP::energy(mp, x) - e0[b]);
        finite = finite_bits(de) & due_sub;
      }
      if (due_sub != kSub) finite |= finite_bits(state_nan_probe<OpsP>(x)) & ~due_sub;
      if constexpr (kSolves) finite &= finite_bits(residual);
      const std::uint64_t bad = active & ~(finite << sh) & (kSub << sh);
      if (bad != 0) {
        const Snapshot v = snapshot(bc, before);
        for_each_lane(bad, [&](int l) {
          status[l] = kStatusNonFinite;
          retire_lane(bc, l, it, v);  // frozen at the last finite state
        });
        // A burst retaken step by step has found its failing lane: the other lanes' states are
        // finite here, so bursts may resume after this step (a later failure rewinds again).
        per_step_until = 0;
      }
      if constexpr (kTangent) {
        kk += P(T(1));
        // 1/k once per step when the lanes share their step count (the usual case), else per
        // lane: the same correctly rounded reciprocal either way.
        const P inv = uniform_k ? P(T(1) / T(k0[0] + it + 1)) : P(T(1)) / kk;
        acc.template after_step<TOpsP>(sd, kk, inv);
      }
      if (check) {
        // Lanes not due keep their maxima (their H was not a check's); stopped lanes' values are
        // never read again.
        const auto fold = [&](const P& m, const P& v) VIGOR_LAMBDA_INLINE {
          return due_sub == kSub ? max_of(m, v) : select_bits(due_sub, max_of(m, v), m);
        };
        emax[b] = fold(emax[b], de);
        if constexpr (kMaps > 0) {
          const auto J = OpsP::momentum(mp, x);
          for (int c = 0; c < kMaps; ++c) jmax[b] = fold(jmax[b], abs(J[c] - j0[b][c]));
        }
      }
      if constexpr (kSolves) rmax[b] = max_of(rmax[b], residual);
      const std::uint64_t live = active & (kSub << sh);  // without the lanes frozen above

      if (plane) {
        const P g_prev = gp[b];
        const P g = component(x, coord) - P(value);
        gp[b] = g;
        const P zero(T(0));
        const int dir = sp.section_direction;
        const auto up = [&] {
          return compare_bits<Cmp::kLt>(g_prev, zero) & compare_bits<Cmp::kGe>(g, zero);
        };
        const auto down = [&] {
          return compare_bits<Cmp::kGt>(g_prev, zero) & compare_bits<Cmp::kLe>(g, zero);
        };
        const std::uint64_t crossed =
            ((dir == kDirUp ? up() : (dir == kDirDown ? down() : up() | down())) << sh) & live;
        if (crossed != 0) {
          const Phase<P, d> x0 = without_force(before), x1 = without_force(x);  // see Snapshot
          for_each_lane(crossed, [&](int l) {
            const int slot = claim_hit(sp, crossings[l], recorded[l], hits[l]);
            if (slot < 0) return;  // counted, not recorded: nothing to locate
            pending.push(x0, x1, l - sh, i0 + l, slot, T(k0[l] + it));
            if (pending.n == W) pending.locate(mp, ms, a, sp);
            if (hits[l] == sp.hit_capacity) stop |= std::uint64_t(1) << l;  // pause until drained
          });
        }
      } else if (strobe) {
        const Phase<P, d> x1 = without_force(x);  // a copy (see Snapshot)
        for_each_lane(live, [&](int l) {
          const std::int64_t k = k0[l] + it + 1;
          if (k % sp.stroboscopic_every != 0) return;
          const Phase<T, d> xl = extract_lane(x1, l - sh);
          Vec<T, 2 * d> x_hit;
          for (int c = 0; c < d; ++c) {
            x_hit[c] = xl.q[c];
            x_hit[d + c] = xl.p[c];
          }
          if (record_hit(a, sp, i0 + l, T(k) * h, x_hit, crossings[l], recorded[l], hits[l]))
            stop |= std::uint64_t(1) << l;
        });
      }
      if (escape_on) {
        const std::uint64_t out = (compare_bits<Cmp::kGt>(norm2(x.q), escape2) << sh) & live;
        for_each_lane(out, [&](int l) {
          status[l] = kStatusEscaped;
          stop |= std::uint64_t(1) << l;
        });
      }
      if (kSolves && newton_check) {
        const std::uint64_t unconverged =
            (compare_bits<Cmp::kGt>(residual, newton_tol) << sh) & live;
        for_each_lane(unconverged, [&](int l) {
          if (status[l] == kStatusOk) {
            status[l] = kStatusNewtonNotConverged;
            stop |= std::uint64_t(1) << l;
          }
        });
      }
    });
    ++it;
    --horizon;
    if (stop != 0) {
      for_each_sub<B>([&](auto bc) VIGOR_LAMBDA_INLINE {
        constexpr int b = decltype(bc)::value;
        const std::uint64_t sub = stop & (kSub << b * W);
        if (sub == 0) return;
        const Snapshot v = snapshot(bc, s[b]);
        for_each_lane(sub, [&](int l) { retire_lane(bc, l, it, v); });
      });
    }
    if (active == 0) break;
  }
  pending.locate(mp, ms, a, sp);

  for (int l = 0; l < valid; ++l) {
    const std::int64_t i = i0 + l;
    a.status[i] = status[l];
    a.crossings[i] = crossings[l];
    a.recorded[i] = recorded[l];
    a.hit_count[i] = hits[l];
  }
}

}  // namespace vigor::kernels
