/// @file pack_lanes.hpp
/// @brief PackLanes: the driver's lane type for the CPU's SIMD path — B sub-blocks of W
/// trajectories, each sub-block one Pack<T, W> (a vector register), on which the same model and
/// integrator code runs as on a GPU thread (kernels/driver/advance.hpp, kernels/driver/lanes.hpp).
///
/// What is here is about registers only: loading a block's lanes from structure-of-arrays memory,
/// reading one lane out of a register on the rare paths, lane masks as integer bits written by the
/// compare itself (a mask register on AVX-512, so a step tests them with one scalar branch and no
/// mask goes through memory), the chaos accumulators lane by lane, and a queue that locates
/// section crossings W at a time. Each lane computes what the scalar lanes compute, bit for bit
/// (the packs' sin, cos, exp and log are vigor's own, the rarer functions the scalar ones lane by
/// lane). Models with a separable Hamiltonian and the Lie-group bodies take this path
/// (kernels::model_on_lanes, host/backends/cpu_engine.hpp).
///
/// A block may be partial (the ensemble's last trajectories): missing lanes repeat the block's
/// first values (finite, harmless) and start inactive, and a sub-block without an active lane is
/// skipped, so every trajectory takes the same code path wherever it sits in the ensemble.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/core/compensated.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/driver/lanes.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/simd/pack.hpp"

namespace vigor::kernels {

/// State operations on a (q, p) Phase, whose components the lanes read as q and p; the
/// Lie-group bodies' states (R, Pi) and (B, x, Pi, P) go through their StateOps' load and
/// as_vector instead.
template <class Ops>
concept PhaseStateOps = requires {
  Ops::n;
};

/// The degrees of freedom of a Phase state (1 for others: PendingCrossings is not used for them).
template <class Ops>
inline constexpr int phase_dof = [] {
  if constexpr (PhaseStateOps<Ops>)
    return int(Ops::n);
  else
    return 1;
}();

/// Lane l of a block state. A lane index known only at run time needs the registers in memory:
/// callers pass a copy made on the rare path (PackLanes::rare_copy), never the step loop's state.
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

/// The same for a compensated state: its round-off terms kept.
template <class T, int W, int N>
VIGOR_INLINE CompensatedPhase<Pack<T, W>, N> without_force(
    const CompensatedPhase<Pack<T, W>, N>& s) {
  CompensatedPhase<Pack<T, W>, N> r;
  static_cast<Phase<Pack<T, W>, N>&>(r) =
      without_force(static_cast<const Phase<Pack<T, W>, N>&>(s));
  r.eq = s.eq;
  r.ep = s.ep;
  return r;
}

/// s = the values of the dual state sd, register by register (a temporary Phase compiled to a
/// memcpy call per step; docs/performance.md, tangent section).
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

/// Lane l of a dual block state, as the scalar lanes hold it.
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

/// The chaos accumulators of W lanes (TangentAccumulators, lane-wise), with each lane's step
/// number kept as T (exact below 2^53) for MEGNO's weights.
template <class T, int W>
struct PackAccumulators {
  using P = Pack<T, W>;
  P scale_exp, ell0, ell_prev, megno_sum, megno_mean;
  P kk{T(1)};             ///< each lane's step number after the current step
  bool uniform_k = true;  ///< every lane started the launch at the same step count
  std::int64_t k_first = 0;

  void load(const T* acc, std::int64_t n, std::int64_t i0, int valid, const std::int64_t* k0) {
    scale_exp = load_lanes<T, W>(acc + kAccScaleExp * n + i0, valid);
    ell0 = load_lanes<T, W>(acc + kAccEll0 * n + i0, valid);
    ell_prev = load_lanes<T, W>(acc + kAccEllPrev * n + i0, valid);
    megno_sum = load_lanes<T, W>(acc + kAccMegnoSum * n + i0, valid);
    megno_mean = load_lanes<T, W>(acc + kAccMegnoMean * n + i0, valid);
    k_first = k0[0];
    for (int l = 0; l < valid; ++l) {
      kk.set(l, T(k0[l]));
      uniform_k = uniform_k && k0[l] == k0[0];
    }
  }
  TangentAccumulators<T> lane(int l) const {
    return {scale_exp[l], ell0[l], ell_prev[l], megno_sum[l], megno_mean[l]};
  }

  /// TangentAccumulators::after_step on every lane after iteration `it`. 1/k once per step when
  /// the lanes share their step count (the usual case), else per lane: the same correctly rounded
  /// reciprocal either way. Renormalisation is a per-lane factor of 1 or an exact power of two.
  /// Forced inline, as the scalar one is: it runs after every step, and in an engine unit with
  /// only the explicit steps GCC kept it out of line, which cost the tangent map's Verlet on
  /// Hénon–Heiles 7 % (docs/performance.md, "Engine units per family").
  template <class TOps>
  VIGOR_INLINE void after_step(typename TOps::StateD& sd, std::int64_t it) {
    constexpr int E = kRescaleExp<T>;
    kk += P(T(1));
    const P inv = uniform_k ? P(T(1) / T(k_first + it + 1)) : P(T(1)) / kk;
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

/// Section crossings the step loop found and has not located yet, up to W of them (any lanes, any
/// steps), located side by side in one Pack. Locating one crossing is a chain of divides, Hermite
/// evaluations and three steps of the scheme (kernels::locate_crossing_by_step); done per lane
/// inside the step loop it stalled the loop at every crossing, while W crossings in the lanes of
/// one register cost about what one does. The driver claims each hit's slot when the crossing is
/// found (kernels::claim_hit), so counters, pauses and stops happen at the step they do on the
/// scalar lanes; only the located time and state are written later, and all before the driver
/// returns. Constrained and non-separable models locate their queued crossings one at a time on T.
/// The driver hands over the states without their force (PackLanes::rare_copy); the force the
/// explicit steps reuse is computed again from q, as the step that made the state computed it, so
/// the located point is the one the scalar lanes compute, bit for bit.
template <class T, int W, int d>
struct PendingCrossings {
  using P = Pack<T, W>;
  alignas(64) T q0[d][W], p0[d][W], q1[d][W], p1[d][W];
  alignas(64) T k_before[W];  ///< the step count before the crossing step, as T
  std::int64_t traj[W];
  int slot[W];
  int n = 0;

  /// Queue lane `lane` of the sub-block states x0 (before the step) and x1 (after it); locate the
  /// queue once it holds W crossings.
  template <class MP, class MS, class IP, class IS>
  void add(const MP& mp, const MS& ms, const IP& ip, const IS& is, const EnsembleArrays<T>& a,
           const SegmentParams<T>& sp, const Phase<P, d>& x0, const Phase<P, d>& x1, int lane,
           std::int64_t i, int s, T k0) {
    for (int c = 0; c < d; ++c) {
      q0[c][n] = x0.q[c][lane];
      p0[c][n] = x0.p[c][lane];
      q1[c][n] = x1.q[c][lane];
      p1[c][n] = x1.p[c][lane];
    }
    k_before[n] = k0;
    traj[n] = i;
    slot[n] = s;
    if (++n == W) flush(mp, ms, ip, is, a, sp);
  }

  /// Locate the queued crossings and write their hits; mp, ip and ms, is are the model and the
  /// integrator on P and on T.
  template <class MP, class MS, class IP, class IS>
  VIGOR_NOINLINE void flush(const MP& mp, const MS& ms, const IP& ip, const IS& is,
                            const EnsembleArrays<T>& a, const SegmentParams<T>& sp) {
    if (n == 0) return;
    if constexpr (ConstrainedModel<MS> || !SeparableModel<MS>)
      locate_one_by_one(ms, is, a, sp);
    else
      locate_side_by_side(mp, ip, a, sp);
    n = 0;
  }

 private:
  /// The force at s.q, which the explicit steps take from the state (first-same-as-last), as
  /// StateOps::load sets it; other models' steps do not read it.
  template <class M, class S>
  static void with_force(const M& m, Phase<S, d>& s) {
    if constexpr (SeparableModel<M>)
      refresh_force(m, s);
    else
      s.f = Vec<S, d>::filled(S(T(0)));
  }

  // The field of a constrained (or non-separable) model goes through nested dual numbers, which
  // on a Pack made a single model's translation unit compile for over half an hour. VIGOR_NOIPA:
  // GCC 12.2 at -O2 dropped the call to this function from flush for constrained models in FP32
  // (the hits were never written; docs/building.md). tests/test_simd.cpp holds it.
  template <class MS, class IS>
  VIGOR_NOIPA void locate_one_by_one(const MS& ms, const IS& is, const EnsembleArrays<T>& a,
                                     const SegmentParams<T>& sp) {
    const T h = sp.h;
    for (int j = 0; j < n; ++j) {
      Phase<T, d> s0, s1;
      for (int c = 0; c < d; ++c) {
        s0.q[c] = q0[c][j];
        s0.p[c] = p0[c][j];
        s1.q[c] = q1[c][j];
        s1.p[c] = p1[c][j];
      }
      s1.f = Vec<T, d>::filled(T(0));  // not read: rates evaluates the field afresh
      with_force(ms, s0);
      Vec<T, 2 * d> xj;
      const T th = locate_crossing_by_step<StateOps<MS, T>>(
          is, ms, s0, s1, k_before[j] * h, sp.section_coord, sp.section_value, h, xj);
      write_hit<2 * d>(a, sp, traj[j], slot[j], (k_before[j] + th) * h, xj);
    }
  }

  template <class MP, class IP>
  void locate_side_by_side(const MP& mp, const IP& ip, const EnsembleArrays<T>& a,
                           const SegmentParams<T>& sp) {
    const T h = sp.h;
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
    s1.f = Vec<P, d>::filled(P(T(0)));  // not read: rates evaluates the field afresh
    with_force(mp, s0);
    const P hp(h);
    Vec<P, 2 * d> x;
    const P th = locate_crossing_by_step<StateOps<MP, P>>(
        ip, mp, s0, s1, P::load(k_before) * hp, sp.section_coord, P(sp.section_value), hp, x);
    for (int j = 0; j < n; ++j) {
      Vec<T, 2 * d> xj;
      for (int c = 0; c < 2 * d; ++c) xj[c] = x[c][j];
      write_hit<2 * d>(a, sp, traj[j], slot[j], (k_before[j] + th[j]) * h, xj);
    }
  }
};

/// The crossings of a state that is not a Phase (the Lie-group bodies), located one lane at a
/// time where the step loop finds them, as the scalar lanes locate them (LocateNow): the lane's
/// states before and after the step, assembled on T by OpsS::load from their components.
template <class OpsS, class T, int W>
struct LocateLaneNow {
  template <class MP, class MS, class IP, class IS, class State>
  void add(const MP&, const MS& ms, const IP&, const IS& is, const EnsembleArrays<T>& a,
           const SegmentParams<T>& sp, const State& x0, const State& x1, int lane, std::int64_t i,
           int slot, T k_before) {
    using OpsP = StateOps<MP, Pack<T, W>>;
    typename OpsS::State s0, s1;
    lane_state<OpsP>(ms, x0, lane, s0);
    lane_state<OpsP>(ms, x1, lane, s1);
    LocateNow<OpsS, T>().add(ms, ms, is, is, a, sp, s0, s1, 0, i, slot, k_before);
  }
  template <class MP, class MS, class IP, class IS>
  void flush(const MP&, const MS&, const IP&, const IS&, const EnsembleArrays<T>&,
             const SegmentParams<T>&) {}

 private:
  template <class OpsP, class MS, class State>
  static void lane_state(const MS& ms, const State& x, int lane, typename OpsS::State& s) {
    const Vec<Pack<T, W>, OpsP::kDim> v = OpsP::as_vector(x);
    Vec<T, OpsS::kDim> w;
    for (int c = 0; c < OpsS::kDim; ++c) w[c] = v[c][lane];
    OpsS::load(ms, &w[0], 1, s);
  }
};

/// B sub-blocks of W lanes of T, one Pack<T, W> each (see the file comment). NB = B W <= 64: a
/// lane mask is one bit per lane of a 64-bit integer.
template <class T_, int W_, int B_>
struct PackLanes {
  using T = T_;
  using Real = Pack<T_, W_>;
  using Bits = std::uint64_t;
  static constexpr int W = W_;
  static constexpr int B = B_;
  static constexpr int NB = W_ * B_;
  static_assert(NB <= 64, "a block has at most 64 lanes (one bit each in a lane mask)");
  static constexpr Bits kSub = W == 64 ? ~Bits(0) : (Bits(1) << W) - 1;
  static constexpr bool kEventBursts = false;        ///< see kernels::EventBurstLanes
  static constexpr bool kQuietBursts = true;         ///< see kernels::WithoutQuietBursts
  static constexpr bool kQuietSegmentsOnly = false;  ///< see kernels::QuietSegmentLanes

  template <class F>
  static VIGOR_INLINE void for_each_lane(Bits bits, F&& f) {
    kernels::for_each_lane(bits, f);
  }
  static VIGOR_INLINE Bits finite_bits(const Real& x) { return kernels::finite_bits(x); }
  template <Cmp C>
  static VIGOR_INLINE Bits compare_bits(const Real& a, const Real& b) {
    return kernels::compare_bits<C>(a, b);
  }
  static VIGOR_INLINE Real select_bits(Bits bits, const Real& a, const Real& b) {
    return kernels::select_bits(bits, a, b);
  }
  /// Sub-block b's lanes of a per-trajectory array; a sub-block beyond the ensemble's end repeats
  /// the block's first value (finite, and its lanes are never active).
  static VIGOR_INLINE Real load(const T* base, std::int64_t i0, int b, int valid) {
    const int vb = valid - b * W;
    return vb > 0 ? load_lanes<T, W>(base + i0 + b * W, vb < W ? vb : W)
                  : load_lanes<T, W>(base + i0, 1);
  }
  static VIGOR_INLINE T lane(const Real& x, int l) { return x[l]; }

  template <class Ops, class M>
  static VIGOR_INLINE void load_state(const M& m, const T* state, std::int64_t n, std::int64_t i0,
                                      int b, int valid, typename Ops::State& s) {
    if constexpr (PhaseStateOps<Ops>) {
      constexpr int d = Ops::n;
      VIGOR_UNROLL
      for (int c = 0; c < d; ++c) {
        s.q[c] = load(state + c * n, i0, b, valid);
        s.p[c] = load(state + (d + c) * n, i0, b, valid);
      }
      if constexpr (SeparableModel<M>) {
        refresh_force(m, s);
      } else {
        s.f = Vec<Real, d>::filled(Real(T(0)));
      }
    } else {  // a Lie-group state: its components in registers, assembled by its own load
      Vec<Real, Ops::kDim> v;
      VIGOR_UNROLL
      for (int c = 0; c < Ops::kDim; ++c) v[c] = load(state + c * n, i0, b, valid);
      Ops::load(m, &v[0], 1, s);
    }
  }
  template <class Ops>
  static void store_lane(const typename Ops::State& s, int l, T* state, std::int64_t n,
                         std::int64_t i) {
    const Vec<T, Ops::kDim> v = lane_vector<Ops>(s, l);
    for (int c = 0; c < Ops::kDim; ++c) state[c * n + i] = v[c];
  }
  template <class Ops>
  static Vec<T, Ops::kDim> lane_vector(const typename Ops::State& s, int l) {
    Vec<T, Ops::kDim> v;
    if constexpr (PhaseStateOps<Ops>) {
      constexpr int d = Ops::n;
      const Phase<T, d> x = extract_lane(s, l);
      for (int c = 0; c < d; ++c) {
        v[c] = x.q[c];
        v[d + c] = x.p[c];
      }
    } else {
      const Vec<Real, Ops::kDim> x = Ops::as_vector(s);
      for (int c = 0; c < Ops::kDim; ++c) v[c] = x[c][l];
    }
    return v;
  }
  template <class S>
  static VIGOR_INLINE S rare_copy(const S& s) {
    if constexpr (requires { s.f; })
      return without_force(s);
    else
      return s;
  }
  /// A conservation check's maximum (|H - H0|, a momentum map's error) goes back to memory after
  /// each fold. It is read only at checks, off the step's dependency chain; left to itself, GCC
  /// holds a block's maxima in vector registers and spills the force the next step reuses
  /// instead, whose store and reload then lie on that chain (Hénon–Heiles FP64 with H every step:
  /// 0.97 of the old driver's rate without this, 0.99 with it; docs/performance.md).
  static VIGOR_INLINE void keep_in_memory(Real& m) { asm volatile("" : "+m"(m)); }
  template <class SD>
  static auto dual_lane(const SD& sd, int l) {
    return extract_dual_lane(sd, l);
  }
  /// The lanes' times T(k0[l] + it) h (k0: the sub-block's lanes, `valid` of them; the others
  /// repeat lane 0). Time only matters to forced models; it is formed as the scalar lanes form
  /// it, so lanes stay bit-identical to them at any step count.
  template <class M>
  static VIGOR_INLINE Real step_times(const std::int64_t* k0, int valid, std::int64_t it, T h) {
    Real t(T(0));
    if constexpr (ForcedModel<M>) {
      for (int l = 0; l < W; ++l) t.set(l, T(k0[l < valid ? l : 0] + it) * h);
    }
    return t;
  }

  template <class TOps, class M>
  static void load_tangent(const M& m, const T* state, const T* partials, std::int64_t n,
                           std::int64_t i0, int valid, typename TOps::StateD& sd) {
    using D = typename TOps::D;
    constexpr int d = M::dof;
    constexpr int K = TOps::K;
    for (int c = 0; c < d; ++c) {
      sd.q[c] = D(load_lanes<T, W>(state + c * n + i0, valid));
      sd.p[c] = D(load_lanes<T, W>(state + (d + c) * n + i0, valid));
      for (int j = 0; j < K; ++j) {
        sd.q[c].d[j] = load_lanes<T, W>(partials + (c * K + j) * n + i0, valid);
        sd.p[c].d[j] = load_lanes<T, W>(partials + ((d + c) * K + j) * n + i0, valid);
      }
    }
    refresh_force(m, sd);
  }
  template <class TOps>
  static VIGOR_INLINE void primal(const typename TOps::StateD& sd, typename TOps::State& s) {
    primal_lanes(sd, s);
  }

  using Accumulators = PackAccumulators<T, W>;
  template <class OpsS>
  using Crossings = std::conditional_t<PhaseStateOps<OpsS>, PendingCrossings<T, W, phase_dof<OpsS>>,
                                       LocateLaneNow<OpsS, T, W>>;
};

/// Whether the CPU engine runs model M in SIMD lanes: a separable (q, p) model, or one whose
/// state and steps are written for packs and that says so with kSimdLanes (the rigid body on
/// SO(3): its StateOps load and as_vector carry the state in and out of the registers; the double
/// pendulum in FP32).
template <class M>
inline constexpr bool model_on_lanes = SeparableModel<M> || requires {
  requires bool(M::kSimdLanes);
};

/// Whether an implicit step on model M (on Real) builds the potential's Hessian by nested-dual AD
/// (kernels/core/hamiltonian.hpp) whose numbers, Dual<Dual<P, n>, n> = (n + 1)^2 packs, fill the
/// vector registers when P is one pack of a whole block: then every Newton iteration goes through
/// memory, and a block is faster as sub-blocks of one register.
template <class M, class Real>
inline constexpr bool nested_hessian_fills_registers = [] {
  if constexpr (SeparableModel<M>) {
    constexpr int n = M::dof;
    if constexpr (!HasHandHessian<M, Real> && n <= kNestedHessianMaxDof)
      return (n + 1) * (n + 1) * (block_lanes<Real>() / native_lanes<Real>()) >= vector_registers();
  }
  return false;
}();

/// Whether the CPU takes a block of pair (I, M) as sub-blocks of one register rather than one pack
/// of the block's registers side by side: explicit steps, and implicit steps inlined into the
/// driver whose nested-dual Hessian would not fit. Other implicit steps keep one pack: a step of
/// Newton iterations outlasts the core's out-of-order window, so sub-blocks taken in turn would
/// no longer overlap. bench/lane_shape, AVX-512, one pack against
/// sub-blocks (docs/performance.md): the J2 satellite (3 dof, 16 packs per Hessian number) ran
/// midpoint 1.5x (FP32) and 3.5x (FP64) faster on sub-blocks, Lobatto IIIA-IIIB 3.3-3.4x, Newmark
/// 1.8x; Kepler and the pendulum (9 and 4 packs) and Hénon–Heiles (its own Hessian) ran 0.7-0.9x,
/// so they keep one pack. A step called out of line (RATTLE, SHAKE) has the registers to itself
/// and keeps one pack: 1.2-1.4x faster than sub-blocks on AVX-512 and AVX2. The Lie-group bodies
/// have no potential; their integrators say which they take (integrator_lane_sub_blocks).
template <class I, class M, class Real>
inline constexpr bool lane_sub_blocks =
    !integrator_solves<I> || integrator_lane_sub_blocks<I> ||
    (!integrator_step_out_of_line<I> && nested_hessian_fills_registers<M, Real>);

}  // namespace vigor::kernels
