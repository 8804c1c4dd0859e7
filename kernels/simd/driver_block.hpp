/// @file driver_block.hpp
/// @brief The per-trajectory driver for W trajectories side by side in SIMD lanes (CPU backend).
///
/// Same contract as kernels::advance_trajectory (driver.hpp), for the trajectories i0 .. i0+W-1:
/// the model and integrator step run on Pack<T, W> — the same VIGOR_HD code the GPU runs, one
/// lane per trajectory — and the per-trajectory branches of the scalar driver become lane masks:
///   * a lane whose step gives a non-finite energy is frozen at its last finite state;
///   * a lane beyond the escape radius stops;
///   * a lane whose section buffer fills pauses until the host drains it;
///   * a lane that reached end_step stops.
/// A lane that stops writes its state, step count and energy error at once ("retires"); its
/// register lanes keep being computed but `active` masks them out of every later decision, so the
/// common step needs no blend. Each lane's state, counters and hits are the scalar driver's, bit
/// for bit (vigor compiles its C++ with -ffp-contract=off, so no path fuses a multiply-add that
/// another does not). The common step — no crossing, no freeze — is pure vector code; rare events
/// leave it for a per-lane loop, where a crossing is located by the scalar
/// kernels::locate_crossing on the lane's extracted state.
/// A block may be partial (the ensemble's last n mod W trajectories): missing lanes start
/// inactive, so every trajectory takes the same code path wherever it sits in the ensemble.
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

#include "kernels/driver.hpp"
#include "kernels/simd/pack.hpp"

namespace vigor::kernels {

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

template <class T, int W, int N>
inline Phase<Pack<T, W>, N> select_phase(Mask<T, W> m, const Phase<Pack<T, W>, N>& a,
                                         const Phase<Pack<T, W>, N>& b) {
  Phase<Pack<T, W>, N> r;
  for (int c = 0; c < N; ++c) {
    r.q[c] = select(m, a.q[c], b.q[c]);
    r.p[c] = select(m, a.p[c], b.p[c]);
    r.f[c] = select(m, a.f[c], b.f[c]);
  }
  return r;
}

/// Copy a block state into / out of a plain array of registers.
template <class T, int W, int N>
inline void save_phase(const Phase<Pack<T, W>, N>& s,
                       typename Pack<T, W>::V (*buf)[Pack<T, W>::R]) {
  for (int c = 0; c < N; ++c)
    for (int r = 0; r < Pack<T, W>::R; ++r) {
      buf[c][r] = s.q[c].v[r];
      buf[N + c][r] = s.p[c].v[r];
      buf[2 * N + c][r] = s.f[c].v[r];
    }
}
/// s = the values of the dual state sd, register by register: `s = TOps::primal(sd)` built a
/// temporary Phase and compiled to a memcpy call per step (768 bytes at 16 lanes, 5 % of a tangent
/// run).
template <class T, int W, int K, int N>
inline void primal_lanes(const Phase<Dual<Pack<T, W>, K>, N>& sd, Phase<Pack<T, W>, N>& s) {
  for (int c = 0; c < N; ++c)
    for (int r = 0; r < Pack<T, W>::R; ++r) {
      s.q[c].v[r] = sd.q[c].v.v[r];
      s.p[c].v[r] = sd.p[c].v.v[r];
      s.f[c].v[r] = sd.f[c].v.v[r];
    }
}
template <class T, int W, int N>
inline Phase<Pack<T, W>, N> restore_phase(const typename Pack<T, W>::V (*buf)[Pack<T, W>::R]) {
  Phase<Pack<T, W>, N> s;
  for (int c = 0; c < N; ++c)
    for (int r = 0; r < Pack<T, W>::R; ++r) {
      s.q[c].v[r] = buf[c][r];
      s.p[c].v[r] = buf[N + c][r];
      s.f[c].v[r] = buf[2 * N + c][r];
    }
  return s;
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
template <class T, int W>
inline void store_lanes(const Pack<T, W>& x, T* p, int valid) {
  if (valid == W) return x.store(p);
  for (int l = 0; l < valid; ++l) p[l] = x[l];
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

/// Advance trajectories i0 .. i0+valid-1 (valid <= W) to sp.end_step, or until each stops or
/// pauses. MP/IP: model and integrator on Pack<T, W> (IP on Dual<Pack<T, W>, K> with kTangent);
/// MS: the same model on T (for crossings); IDS: the integrator on Dual<T, K> (kTangent only).
template <class MP, class MS, class IP, class T, int W, bool kTangent = false, class IDS = int>
inline void advance_block(const MP& mp, const MS& ms, const IP& ip, const SegmentParams<T>& sp,
                          const EnsembleArrays<T>& a, std::int64_t i0, int valid,
                          const IDS& ids = IDS{}) {
  using P = Pack<T, W>;
  using Msk = Mask<T, W>;
  constexpr int d = MP::dof;
  static_assert(MS::dof == d, "scalar and pack model must match");
  const std::int64_t n = sp.n;
  const T h = sp.h;
  const std::int64_t end_step = sp.end_step;
  const int coord = sp.section_coord;
  const T value = sp.section_value;
  using OpsP = StateOps<MP, P>;
  using OpsS = StateOps<MS, T>;
  constexpr int kMaps = OpsP::kMomentumMaps;
  constexpr bool kSolves = default_newton_iterations < IP >> 0;

  // Every active lane advances in every iteration, so lane l has taken k0[l] + it steps while
  // active; it records its own count when it stops.
  std::int64_t k0[W], crossings[W], recorded[W];
  int hits[W];
  std::int32_t status[W];
  Msk active = Msk::all(false);
  for (int l = 0; l < valid; ++l) {
    const std::int64_t i = i0 + l;
    a.hit_count[i] = 0;
    k0[l] = a.step[i];
    crossings[l] = a.crossings[i];
    recorded[l] = a.recorded[i];
    hits[l] = 0;
    status[l] = a.status[i];
    active.set(l, status[l] == kStatusOk && k0[l] < end_step);
  }
  if (!active.any()) {
    for (int l = 0; l < valid; ++l) a.hit_count[i0 + l] = 0;
    return;
  }

  using TOpsP = TangentOps<MP, P>;
  using TOpsS = TangentOps<MS, T>;
  constexpr int K = TOpsP::K;
  // Without tangent maps the dual state is a dummy the compiler drops.
  using StateDP = std::conditional_t<kTangent, typename TOpsP::StateD, Phase<P, d>>;
  Phase<P, d> s;
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
    primal_lanes(sd, s);
    acc.load(a.tangent_acc, n, i0, valid);
    for (int l = 0; l < valid; ++l) {
      kk.set(l, T(k0[l]));
      uniform_k = uniform_k && k0[l] == k0[0];
    }
  } else {
    for (int c = 0; c < d; ++c) {
      s.q[c] = load_lanes<T, W>(a.state + c * n + i0, valid);
      s.p[c] = load_lanes<T, W>(a.state + (d + c) * n + i0, valid);
    }
    if constexpr (SeparableModel<MP>) {
      refresh_force(mp, s);
    } else {
      s.f = Vec<P, d>::filled(P(T(0)));
    }
  }
  const P e0 = load_lanes<T, W>(a.energy0 + i0, valid);
  P emax = load_lanes<T, W>(a.energy_error + i0, valid);
  P jmax = load_lanes<T, W>(a.momentum_error + i0, valid);
  P rmax = load_lanes<T, W>(a.newton_residual + i0, valid);
  Vec<P, (kMaps > 0 ? kMaps : 1)> j0;
  if constexpr (kMaps > 0)
    for (int c = 0; c < kMaps; ++c) j0[c] = load_lanes<T, W>(a.momentum0 + c * n + i0, valid);
  const P newton_tol(sp.newton_tolerance);
  const bool newton_check = sp.newton_tolerance > T(0);
  P g_prev = component(s, coord) - P(value);
  const P escape2(sp.escape_radius2);
  const bool escape_on = sp.escape_radius2 > T(0);
  const bool plane = sp.section_kind == kSectionPlane;
  const bool strobe = sp.section_kind == kSectionStroboscopic;
  std::int64_t it = 0;
  typename P::V saved[3 * d][P::R];

  // A lane that stops writes its state, step count and energy error right away; from then on its
  // register lanes may hold anything (they keep being computed, and `active` masks them out of
  // every decision), so the common step needs no blend at all.
  auto retire = [&](const Phase<P, d>& x, int l, std::int64_t steps) {
    const std::int64_t i = i0 + l;
    for (int c = 0; c < d; ++c) {
      a.state[c * n + i] = x.q[c][l];
      a.state[(d + c) * n + i] = x.p[c][l];
    }
    a.step[i] = k0[l] + steps;
    a.energy_error[i] = emax[l];
    a.momentum_error[i] = jmax[l];
    a.newton_residual[i] = rmax[l];
    if constexpr (kTangent) {
      // Partials, accumulators and diagnostics through the scalar code; a lane frozen on a
      // non-finite step has no meaningful tangent map: its diagnostics are NaN.
      const auto sdl = extract_dual_lane<T, W, K, d>(sd, l);
      const auto xs = TOpsS::OpsD::as_vector(sdl);
      for (int c = 0; c < TOpsS::kStored; ++c)
        for (int j = 0; j < K; ++j) a.tangent[(c * K + j) * n + i] = xs[c].d[j];
      const TangentAccumulators<T> al = acc.lane(l);
      al.store(a.tangent_acc, n, i);
      if (status[l] == kStatusNonFinite) {
        for (int c = 0; c < kTangentOutCount; ++c)
          a.tangent_out[c * n + i] = std::numeric_limits<T>::quiet_NaN();
      } else {
        typename TOpsS::State x0;
        TOpsS::Ops::load(ms, a.state0 + i, n, x0);
        tangent_diagnostics<TOpsS>(ids, ms, x0, sdl, al, k0[l] + steps, h, a.tangent_out, n, i);
      }
    }
    active.set(l, false);
  };
  // Iterations every active lane can still take: until then no lane reaches end_step.
  auto horizon_of = [&]() {
    std::int64_t hmin = end_step;
    for (int l = 0; l < valid; ++l)
      if (active[l] && end_step - (k0[l] + it) < hmin) hmin = end_step - (k0[l] + it);
    return hmin;
  };
  std::int64_t horizon = horizon_of();

  for (;;) {
    if (horizon == 0) {
      for (int l = 0; l < valid; ++l)
        if (active[l] && k0[l] + it >= end_step) retire(s, l, it);
      if (!active.any()) break;
      horizon = horizon_of();
    }
    // The state before the step is needed only on rare events (a crossing, a freeze): keep it
    // in a stack buffer written register by register (a whole-Phase copy compiled to a memcpy
    // call per step at two registers per block).
    save_phase(s, saved);
    // Time only matters to forced models; form it as the scalar driver does, T(k) * h per lane,
    // so lanes stay bit-identical to the scalar path at any step count.
    P t0(T(0));
    if constexpr (ForcedModel<MP>) {
      for (int l = 0; l < W; ++l) t0.set(l, T(k0[l < valid ? l : 0] + it) * h);
    }
    P residual;
    if constexpr (kTangent) {
      residual = take_tangent_step<TOpsP>(ip, mp, sd, P(h), t0);
      primal_lanes(sd, s);
    } else {
      residual = take_step(ip, mp, s, P(h), t0);
    }
    const P de = abs(OpsP::energy(mp, s) - e0);
    Msk finite = finite_lanes(de);
    if constexpr (kSolves) finite = finite & finite_lanes(residual);
    const Msk bad = active & !finite;
    if (bad.any()) {
      for (int l = 0; l < valid; ++l)
        if (bad[l]) {
          status[l] = kStatusNonFinite;
          retire(restore_phase<T, W, d>(saved), l, it);  // frozen at the last finite state
        }
      if (!active.any()) break;
    }
    if constexpr (kTangent) {
      kk += P(T(1));
      // 1/k once per step when the lanes share their step count (the usual case), else per lane:
      // the same correctly rounded reciprocal either way.
      const P inv = uniform_k ? P(T(1) / T(k0[0] + it + 1)) : P(T(1)) / kk;
      acc.template after_step<TOpsP>(sd, kk, inv);
    }
    emax = max_of(emax, de);  // stopped lanes' values are never read again
    if constexpr (kSolves) rmax = max_of(rmax, residual);
    if constexpr (kMaps > 0) {
      const auto J = OpsP::momentum(mp, s);
      for (int c = 0; c < kMaps; ++c) jmax = max_of(jmax, abs(J[c] - j0[c]));
    }
    Msk stop = Msk::all(false);  // lanes that stop after this step (full buffer, escape)

    if (plane) {
      const P g = component(s, coord) - P(value);
      const P zero(T(0));
      const int dir = sp.section_direction;
      const Msk crossed =
          (dir == kDirUp ? (g_prev < zero) & (g >= zero)
                         : (dir == kDirDown ? (g_prev > zero) & (g <= zero)
                                            : ((g_prev < zero) & (g >= zero)) |
                                                  ((g_prev > zero) & (g <= zero)))) &
          active;
      g_prev = g;
      if (crossed.any()) {
        for (int l = 0; l < valid; ++l) {
          if (!crossed[l]) continue;
          const Phase<T, d> p0 = extract_lane(restore_phase<T, W, d>(saved), l);
          const Phase<T, d> p1 = extract_lane(s, l);
          Vec<T, 2 * d> x_hit;
          const std::int64_t k = k0[l] + it + 1;
          const T th = locate_crossing<OpsS>(ms, p0, p1, T(k - 1) * h, coord, value, h, x_hit);
          if (record_hit(a, sp, i0 + l, (T(k - 1) + th) * h, x_hit, crossings[l], recorded[l],
                         hits[l]))
            stop.set(l, true);  // buffer full: pause until drained
        }
      }
    } else if (strobe) {
      for (int l = 0; l < valid; ++l) {
        const std::int64_t k = k0[l] + it + 1;
        if (!active[l] || k % sp.stroboscopic_every != 0) continue;
        Vec<T, 2 * d> x_hit;
        for (int c = 0; c < d; ++c) {
          x_hit[c] = s.q[c][l];
          x_hit[d + c] = s.p[c][l];
        }
        if (record_hit(a, sp, i0 + l, T(k) * h, x_hit, crossings[l], recorded[l], hits[l]))
          stop.set(l, true);
      }
    }
    if (escape_on) {
      const Msk out = active & (norm2(s.q) > escape2);
      if (out.any())
        for (int l = 0; l < valid; ++l)
          if (out[l]) {
            status[l] = kStatusEscaped;
            stop.set(l, true);
          }
    }
    if (kSolves && newton_check) {
      const Msk unconverged = active & (residual > newton_tol);
      if (unconverged.any())
        for (int l = 0; l < valid; ++l)
          if (unconverged[l] && status[l] == kStatusOk) {
            status[l] = kStatusNewtonNotConverged;
            stop.set(l, true);
          }
    }
    ++it;
    --horizon;
    if (stop.any()) {
      for (int l = 0; l < valid; ++l)
        if (stop[l]) retire(s, l, it);
      if (!active.any()) break;
    }
  }

  for (int l = 0; l < valid; ++l) {
    const std::int64_t i = i0 + l;
    a.status[i] = status[l];
    a.crossings[i] = crossings[l];
    a.recorded[i] = recorded[l];
    a.hit_count[i] = hits[l];
  }
}

}  // namespace vigor::kernels
