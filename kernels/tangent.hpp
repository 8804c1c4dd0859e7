/// @file tangent.hpp
/// @brief Tangent maps of the step actually computed, and what they tell per trajectory: the
/// symplecticity defect, the phase-volume factor and the chaos indicators (maximal Lyapunov
/// exponent, MEGNO, SALI, GALI2).
///
/// **The tangent map.** The integrator is instantiated on Dual<Real, K> (K tangent directions)
/// and the state carries, besides its value, the partials of every component with respect to the
/// initial state. One step on duals propagates them by the chain rule, so after k steps the
/// partials hold M_k = D Phi^k(x0) of the map the plain step computes — fixed Newton iterations,
/// RATTLE projections and all — exactly to round-off, never to finite-difference accuracy. The
/// value part is the plain step's arithmetic (bit-identical for explicit schemes).
///
/// **Coordinates in which the map is symplectic** (TangentOps, one per kind of state):
///  * (q, p) models: K = 2n, the canonical form J = [[0, I], [-I, 0]]. Constrained models are
///    seeded with P0, the orthogonal projector onto the tangent space at x0 of the constraint
///    manifold {g(q) = 0, G(q) v(q, p) = 0}; the partials are then M P0 and the defect is
///    (M P0)^T J (M P0) - P0 J P0: the canonical form restricted to the manifold (SCIENCE.md §2).
///  * the rigid body on SO(3) (models/rigid_body_so3.hpp): K = 6 left-trivialised directions
///    (xi, nu), dR = R hat(xi), dm = nu, with the canonical form of T*SO(3) in that trivialisation,
///    W(m) = [[-hat m, I], [-I, 0]], at the stored (staggered) momentum m.
///  * Newmark with beta != 0 is symplectic for a non-canonical form (it is Verlet in
///    x = q + beta h^2 M^{-1} grad V(q)); its defect in (q, p) is reported as computed, and is
///    O(h^2)-small but not round-off: docs/tangent_maps.md explains it.
///
/// **Scale.** The partials are renormalised by exact powers of two (2^-E, E = kRescaleExp) when a
/// deviation vector leaves [2^-E, 2^E]: no rounding, and the exponent is kept, so every relative
/// quantity is unchanged and log |M w| is exact. Chaotic orbits would otherwise overflow, and
/// damped (forced) ones underflow.
///
/// **Diagnostics** (tangent_diagnostics, at the end of every launch):
///  * symplectic_defect = max |M^T Omega(x) M - Omega(x0)| (absolute), and relative to
///    max |M|^2 (the size of the products whose round-off it measures);
///  * det_error = det M - 1 (on the manifold: the Liouville volume factor
///    sqrt(det(P0 M^T J M P0 + I - P0) / det(P0 J P0 + I - P0)) - 1);
///  * lyapunov = (ln|M w1| - ln|P0 w1|) / t (Benettin's estimate with renormalisation);
///  * megno = <Y>, the time-averaged MEGNO of the discrete map (Cincotta & Simó 2000; Cincotta,
///    Giordano & Simó 2003): Y_k = (2/k) sum_{j<=k} j ln(|d_j| / |d_{j-1}|), <Y>_k = mean of Y_j,
///    d_j = M_j w1 sampled every step; -> 2 on regular (quasi-periodic) orbits, ~ lambda t / 2
///    on chaotic ones, 0 on stable periodic ones;
///  * sali = min(|u1 + u2|, |u1 - u2|), gali2 = |u1 ^ u2| = |u1 + u2| |u1 - u2| / 2 with
///    u_a = M w_a / |M w_a| (Skokos 2001; Skokos, Bountis & Antonopoulos 2007): -> 0
///    exponentially for chaotic orbits, stay O(1) (GALI2 decays like t^-1 at most) for regular
///    ones.
/// w1 and w2 are fixed generic vectors (deviation_direction), the same for every trajectory.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/core/config.hpp"
#include "kernels/core/dual.hpp"
#include "kernels/core/lu.hpp"
#include "kernels/core/math.hpp"
#include "kernels/core/mechanics.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/state.hpp"

namespace vigor::kernels {

/// Per-trajectory accumulators (tangent_acc[slot * n + i]).
enum TangentAcc : int {
  kAccScaleExp = 0,   ///< partials are 2^-e times the true M (e an integer, held exactly)
  kAccEll0 = 1,       ///< ln |P0 w1|
  kAccEllPrev = 2,    ///< ln |M w1| after the last step
  kAccMegnoSum = 3,   ///< sum_j j ln(|d_j| / |d_{j-1}|)
  kAccMegnoMean = 4,  ///< sum_j Y_j
  kTangentAccCount = 5
};

/// Per-trajectory results (tangent_out[slot * n + i]), in final.csv's column order.
enum TangentOut : int {
  kOutDefect = 0,
  kOutDefectRel = 1,
  kOutDetError = 2,
  kOutLyapunov = 3,
  kOutMegno = 4,
  kOutSali = 5,
  kOutGali2 = 6,
  kTangentOutCount = 7
};

/// Rescaling exponent: partials stay within 2^+-E, so |M|^2 products cannot overflow (double:
/// 2^512 << 1.8e308; float: 2^64 << 3.4e38).
template <class Real>
inline constexpr int kRescaleExp = sizeof(Real) >= 8 ? 256 : 32;

/// Component j of the fixed deviation vector w_a (a = 1, 2): frac((j + 1) g_a) - 1/2 with g_1
/// the golden ratio and g_2 the plastic number — generic (no symmetry of a model singles them
/// out), independent, and the same on every backend.
VIGOR_HD VIGOR_INLINE constexpr double deviation_direction(int a, int j) {
  const double g = a == 1 ? 0.6180339887498949 : 0.7548776662466927;
  const double x = double(j + 1) * g;
  return x - double(static_cast<long long>(x)) - 0.5;
}

/// How a (q, p) model's dual state is seeded, read and measured (see the file comment).
template <class M, class Real>
struct TangentOps {
  using Ops = StateOps<M, Real>;
  static constexpr int n = M::dof;
  static constexpr int K = 2 * n;            ///< tangent directions
  static constexpr int kStored = Ops::kDim;  ///< components whose partials are kept (2n)
  static constexpr bool kConstrained = ConstrainedModel<M>;
  using D = Dual<Real, K>;
  using OpsD = StateOps<M, D>;
  using State = typename Ops::State;
  using StateD = typename OpsD::State;

  VIGOR_HD VIGOR_INLINE static State primal(const StateD& sd) {
    State s;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      s.q[i] = sd.q[i].v;
      s.p[i] = sd.p[i].v;
      s.f[i] = sd.f[i].v;
    }
    return s;
  }

  /// Stored component c (as_vector's order), in place.
  VIGOR_HD VIGOR_INLINE static const D& stored(const StateD& sd, int c) {
    return c < n ? sd.q[c] : sd.p[c - n];
  }

  /// Multiply every partial by c (an exact power of two).
  VIGOR_HD VIGOR_INLINE static void scale(StateD& sd, Real c) {
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < K; ++j) {
        sd.q[i].d[j] *= c;
        sd.p[i].d[j] *= c;
        sd.f[i].d[j] *= c;
      }
    }
  }

  /// The partials in the coordinates of the symplectic form: here the stored (q, p) themselves.
  VIGOR_HD VIGOR_INLINE static Mat<Real, K> tangent_matrix(const StateD& sd) {
    Mat<Real, K> T;
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < K; ++j) {
        T[i][j] = sd.q[i].d[j];
        T[n + i][j] = sd.p[i].d[j];
      }
    }
    return T;
  }

  /// The canonical form J (independent of the point).
  VIGOR_HD VIGOR_INLINE static Mat<Real, K> form(const M&, const State&) {
    Mat<Real, K> J;
    VIGOR_UNROLL
    for (int i = 0; i < K; ++i) {
      VIGOR_UNROLL
      for (int j = 0; j < K; ++j) J[i][j] = Real(0);
    }
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      J[i][n + i] = Real(1);
      J[n + i][i] = Real(-1);
    }
    return J;
  }

  /// P0: the orthogonal projector onto the tangent space at x of {g(q) = 0, G(q) v(q, p) = 0},
  /// P0 = I - C^T (C C^T)^{-1} C with C the 2k x 2n Jacobian of (g, G v) by forward AD (C C^T is
  /// symmetric positive definite for independent constraints: no pivoting). Identity without
  /// constraints.
  VIGOR_HD VIGOR_INLINE static Mat<Real, K> projector(const M& m, const State& x) {
    Mat<Real, K> P = Mat<Real, K>::identity();
    if constexpr (kConstrained) {
      constexpr int k = constraint_count<M>;
      constexpr int r = 2 * k;
      Vec<D, n> q, p;
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) {
        q[i] = D::variable(x.q[i], i);
        p[i] = D::variable(x.p[i], n + i);
      }
      const Vec<D, k> g = m.template constraints<D>(q);
      // The hidden constraint is the derivative of g along v(q, p): one more forward direction.
      const Vec<D, n> v = velocity_of(m, q, p);
      using F = Dual<D, 1>;
      Vec<F, n> qf;
      VIGOR_UNROLL
      for (int i = 0; i < n; ++i) {
        qf[i] = F(q[i]);
        qf[i].d[0] = v[i];
      }
      const Vec<F, k> gf = m.template constraints<F>(qf);
      Real C[r][K];
      VIGOR_UNROLL
      for (int a = 0; a < k; ++a) {
        VIGOR_UNROLL
        for (int j = 0; j < K; ++j) {
          C[a][j] = g[a].d[j];
          C[k + a][j] = gf[a].d[0].d[j];
        }
      }
      Mat<Real, r> A;
      VIGOR_UNROLL
      for (int a = 0; a < r; ++a) {
        VIGOR_UNROLL
        for (int b = 0; b < r; ++b) {
          Real s = C[a][0] * C[b][0];
          VIGOR_UNROLL
          for (int j = 1; j < K; ++j) s += C[a][j] * C[b][j];
          A[a][b] = s;
        }
      }
      VIGOR_UNROLL
      for (int j = 0; j < K; ++j) {
        Vec<Real, r> c;
        VIGOR_UNROLL
        for (int a = 0; a < r; ++a) c[a] = C[a][j];
        const Vec<Real, r> y = solve_nopivot(A, c);  // (C C^T)^{-1} C e_j
        VIGOR_UNROLL
        for (int i = 0; i < K; ++i) {
          Real s = C[0][i] * y[0];
          VIGOR_UNROLL
          for (int a = 1; a < r; ++a) s += C[a][i] * y[a];
          P[i][j] -= s;
        }
      }
    }
    return P;
  }

  /// Value x with partials P0 (the projector; the identity without constraints).
  VIGOR_HD VIGOR_INLINE static void seed(const M& m, const State& x, StateD& sd) {
    const Mat<Real, K> P = projector(m, x);
    D buf[kStored];
    VIGOR_UNROLL
    for (int i = 0; i < n; ++i) {
      buf[i] = D(x.q[i]);
      buf[n + i] = D(x.p[i]);
      VIGOR_UNROLL
      for (int j = 0; j < K; ++j) {
        buf[i].d[j] = P[i][j];
        buf[n + i].d[j] = P[n + i][j];
      }
    }
    OpsD::load(m, buf, 1, sd);
  }
};

/// Largest number of tangent directions the engines build: K + 1 numbers per state component and
/// K^2 partials per trajectory, fully unrolled, make larger systems (the 15-dof outer solar
/// system: K = 30) take tens of minutes to compile per backend and spill every register.
inline constexpr int kTangentMaxDirections = 12;

/// Whether a model wants its tangent maps compiled: unless it says `kTangentMaps = false`. A
/// formula model's plugin says so when its job does not ask for them (diagnostics.tangent off),
/// so that the run compiles only what it uses (host/job/formula/formula_model.cpp).
template <class M>
inline constexpr bool model_wants_tangent = [] {
  if constexpr (requires { M::kTangentMaps; })
    return bool(M::kTangentMaps);
  else
    return true;
}();

/// Whether the engines compile the tangent map of integrator I on model M (the job parser refuses
/// the other pairs by name). Not for a compensated integrator: the tangent map is the plain
/// step's, and the job parser refuses diagnostics.tangent with integrator.compensated.
template <class I, class M>
inline constexpr bool tangent_built =
    model_wants_tangent<M> && !integrator_compensated<I> &&
    (TangentOps<M, double>::K <= kTangentMaxDirections) && integrator_tangent_affordable<I, M>;

/// The integrator a tangent-map step runs: the plain one when its step accepts a dual state (h
/// and the coefficients stay plain numbers, so no arithmetic is spent on their zero partials),
/// else the same template on the dual type (implicit steps, whose Newton unknowns are duals).
template <class I, class M, class Real>
concept StepsDualState = requires(const I& i, const M& m, typename TangentOps<M, Real>::StateD& s,
                                  Real h) {
  i.step(m, s, h);
};
template <class I, class M, class Real>
using tangent_integrator_t =
    std::conditional_t<StepsDualState<I, M, Real>, I, rebind_t<I, typename TangentOps<M, Real>::D>>;

/// One step of the dual state with either kind of tangent integrator; returns the residual.
template <class TOps, class I, class M, class Real>
VIGOR_HD VIGOR_INLINE Real take_tangent_step(const I& integrator, const M& m,
                                             typename TOps::StateD& sd, Real h, Real t) {
  using D = typename TOps::D;
  if constexpr (is_dual_v<real_t<I>>) {
    return take_step(integrator, m, sd, D(h), D(t)).v;
  } else {
    return take_step(integrator, m, sd, h, t);
  }
}

/// Load trajectory i's dual state: values from `state`, partials from `partials`
/// ([(c * K + j) * stride]).
template <class TOps, class M, class Real>
VIGOR_HD VIGOR_INLINE void load_tangent(const M& m, const Real* state, const Real* partials,
                                        std::int64_t stride, typename TOps::StateD& sd) {
  using D = typename TOps::D;
  constexpr int K = TOps::K;
  D buf[TOps::kStored];
  VIGOR_UNROLL
  for (int c = 0; c < TOps::kStored; ++c) {
    buf[c] = D(state[c * stride]);
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) buf[c].d[j] = partials[(c * K + j) * stride];
  }
  TOps::OpsD::load(m, buf, 1, sd);
}

/// Store the values of the dual state into `state` and its partials into `partials`.
template <class TOps, class Real>
VIGOR_HD VIGOR_INLINE void store_tangent(const typename TOps::StateD& sd, Real* state,
                                         Real* partials, std::int64_t stride) {
  constexpr int K = TOps::K;
  const auto x = TOps::OpsD::as_vector(sd);
  VIGOR_UNROLL
  for (int c = 0; c < TOps::kStored; ++c) {
    state[c * stride] = x[c].v;
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) partials[(c * K + j) * stride] = x[c].d[j];
  }
}

/// |M w_a|^2 in the stored (ambient) components. Reads the components in place (TOps::stored):
/// it runs every step, and a copy of the dual state (as_vector) compiled to a memcpy call.
template <class TOps, class Real>
VIGOR_HD VIGOR_INLINE Real deviation_norm2(const typename TOps::StateD& sd, int a) {
  Real s = Real(0);
  VIGOR_UNROLL
  for (int c = 0; c < TOps::kStored; ++c) {
    const auto& x = TOps::stored(sd, c);
    Real dc = x.d[0] * Real(deviation_direction(a, 0));
    VIGOR_UNROLL
    for (int j = 1; j < TOps::K; ++j) dc += x.d[j] * Real(deviation_direction(a, j));
    s += dc * dc;
  }
  return s;
}

/// What a driver keeps per trajectory between steps (loaded from / stored to tangent_acc).
template <class Real>
struct TangentAccumulators {
  Real scale_exp, ell0, ell_prev, megno_sum, megno_mean;

  VIGOR_HD VIGOR_INLINE void load(const Real* acc, std::int64_t n, std::int64_t i) {
    scale_exp = acc[kAccScaleExp * n + i];
    ell0 = acc[kAccEll0 * n + i];
    ell_prev = acc[kAccEllPrev * n + i];
    megno_sum = acc[kAccMegnoSum * n + i];
    megno_mean = acc[kAccMegnoMean * n + i];
  }
  VIGOR_HD VIGOR_INLINE void store(Real* acc, std::int64_t n, std::int64_t i) const {
    acc[kAccScaleExp * n + i] = scale_exp;
    acc[kAccEll0 * n + i] = ell0;
    acc[kAccEllPrev * n + i] = ell_prev;
    acc[kAccMegnoSum * n + i] = megno_sum;
    acc[kAccMegnoMean * n + i] = megno_mean;
  }

  /// After step number k (1-based): renormalise if |M w1| left [2^-E, 2^E], then advance MEGNO.
  template <class TOps>
  VIGOR_HD VIGOR_INLINE void after_step(typename TOps::StateD& sd, std::int64_t k) {
    constexpr int E = kRescaleExp<Real>;
    Real nrm2 = deviation_norm2<TOps, Real>(sd, 1);
    // Rare (every ~E ln 2 / lambda time units on a chaotic orbit); a branch, not a blend.
    if (nrm2 > ldexp(Real(1), 2 * E)) {
      TOps::scale(sd, ldexp(Real(1), -E));
      scale_exp += Real(E);
      nrm2 = ldexp(nrm2, -2 * E);
    } else if (nrm2 < ldexp(Real(1), -2 * E)) {
      TOps::scale(sd, ldexp(Real(1), E));
      scale_exp -= Real(E);
      nrm2 = ldexp(nrm2, 2 * E);
    }
    const Real ell = Real(0.5) * log(nrm2) + scale_exp * Real(0.6931471805599453);
    const Real kk = Real(k);
    megno_sum += kk * (ell - ell_prev);
    // Times the reciprocal (not divided): the SIMD driver computes 1/k once for all lanes.
    megno_mean += Real(2) * megno_sum * (Real(1) / kk);
    ell_prev = ell;
  }
};

/// Integrators with a symplectic chart (Newmark with beta != 0): see preserved_form.
template <class I, class M, class State, class Real, int K>
concept HasSymplecticChart = requires(const I& i, const M& m, const State& x, Real h,
                                      Mat<Real, K>& C) {
  i.symplectic_chart(m, x, h, C);
};

/// The form the integrator preserves at x: the model's (TangentOps::form), pulled back through the
/// integrator's symplectic chart when it has one (Newmark with beta != 0: C^T J C).
template <class TOps, class I, class M, class Real>
VIGOR_HD VIGOR_INLINE Mat<Real, TOps::K> preserved_form(const I& integrator, const M& m,
                                                        const typename TOps::State& x, Real h) {
  constexpr int K = TOps::K;
  Mat<Real, K> W = TOps::form(m, x);
  if constexpr (HasSymplecticChart<I, M, typename TOps::State, Real, K>) {
    Mat<Real, K> C;
    integrator.symplectic_chart(m, x, h, C);
    W = matmul_tn(C, matmul(W, C));
  }
  return W;
}

/// det_w M - 1, the map's volume error (see the file comment), from T = 2^-e M P0, S = T^T W T,
/// the forms W at x and W0 at x0 (projected for a constrained model), P0 and tmax = max |T_ab|.
/// NaN once the round-off bound of the cumulative determinant after k steps is not small.
template <class TOps, class M, class Real>
VIGOR_HD VIGOR_INLINE Real volume_error(const Mat<Real, TOps::K>& T, const Mat<Real, TOps::K>& S,
                                        const Mat<Real, TOps::K>& W, const Mat<Real, TOps::K>& W0,
                                        const Mat<Real, TOps::K>& P0, int e, Real tmax,
                                        std::int64_t k) {
  constexpr int K = TOps::K;
  Real det;
  if constexpr (TOps::kConstrained) {
    // det_w^2 = det(U^T M^T J M U) / det(U^T J U) with U an orthonormal basis of range P0; each
    // determinant is that of the matrix completed by the identity on the complement.
    Mat<Real, K> A = S, B = W0;
    VIGOR_UNROLL
    for (int a = 0; a < K; ++a) {
      VIGOR_UNROLL
      for (int b = 0; b < K; ++b) {
        const Real c = (a == b ? Real(1) : Real(0)) - P0[a][b];
        A[a][b] += c;
        B[a][b] += c;
      }
    }
    constexpr int dim = K - 2 * constraint_count<M>;
    det = ldexp(sqrt(abs(LU<Real, K>(A).determinant() / LU<Real, K>(B).determinant())), e * dim);
  } else {
    // det_w M = det M sqrt(det W(x) / det W(x0)) (the ratio is 1 unless the form varies).
    det = ldexp(LU<Real, K>(T).determinant(), e * K) *
          sqrt(abs(LU<Real, K>(W).determinant() / LU<Real, K>(W0).determinant()));
  }
  // The cumulative determinant carries a relative round-off of up to ~k eps |M|^2: each of the k
  // steps perturbs M by ~eps |M|, and det of a volume-preserving M is |M| |M^-1| ~ |M|^2 times
  // more sensitive than M. Once that bound is not small the number means nothing: NaN. (Measured
  // on a Hénon–Heiles chaos map: without the factor k, det - 1 of 0.19 was reported for Verlet.)
  const Real unit = Real(sizeof(Real) >= 8 ? 2.220446049250313e-16 : 1.1920929e-07);
  const Real bound = ldexp(tmax * tmax, 2 * e) * unit * Real(k > 1 ? k : 1);
  if (!(bound < Real(1e-3))) det = std::numeric_limits<Real>::quiet_NaN();
  return det - Real(1);
}

/// SALI and GALI2 from the two normalised deviation vectors (ambient components) of the dual
/// state sd, written to out's slots for trajectory i.
template <class TOps, class Real>
VIGOR_HD VIGOR_INLINE void write_alignment_indices(const typename TOps::StateD& sd, Real* out,
                                                   std::int64_t n, std::int64_t i) {
  constexpr int K = TOps::K;
  const auto xs = TOps::OpsD::as_vector(sd);
  Real u1[TOps::kStored], u2[TOps::kStored];
  Real n1 = Real(0), n2 = Real(0);
  VIGOR_UNROLL
  for (int c = 0; c < TOps::kStored; ++c) {
    Real d1 = Real(0), d2 = Real(0);
    VIGOR_UNROLL
    for (int j = 0; j < K; ++j) {
      d1 += xs[c].d[j] * Real(deviation_direction(1, j));
      d2 += xs[c].d[j] * Real(deviation_direction(2, j));
    }
    u1[c] = d1;
    u2[c] = d2;
    n1 += d1 * d1;
    n2 += d2 * d2;
  }
  const Real i1 = Real(1) / sqrt(n1), i2 = Real(1) / sqrt(n2);
  Real sp = Real(0), sm = Real(0);
  VIGOR_UNROLL
  for (int c = 0; c < TOps::kStored; ++c) {
    const Real a = u1[c] * i1, b = u2[c] * i2;
    sp += (a + b) * (a + b);
    sm += (a - b) * (a - b);
  }
  sp = sqrt(sp);
  sm = sqrt(sm);
  out[kOutSali * n + i] = min_of(sp, sm);
  out[kOutGali2 * n + i] = Real(0.5) * sp * sm;
}

/// The diagnostics given the preserved form at x (W) and at x0 (W0). Not templated on the
/// integrator and not inlined: one copy per model serves every integrator's driver and kernel
/// (it runs once per launch, so the call costs nothing, and the K^3 code is compiled once).
template <class TOps, class M, class Real>
VIGOR_HD VIGOR_NOINLINE void tangent_report(const M& m, const typename TOps::State& x0,
                                            const typename TOps::StateD& sd,
                                            const Mat<Real, TOps::K>& W, Mat<Real, TOps::K> W0,
                                            const TangentAccumulators<Real>& acc, std::int64_t k,
                                            Real h, Real* out, std::int64_t n, std::int64_t i) {
  constexpr int K = TOps::K;
  const Mat<Real, K> T = TOps::tangent_matrix(sd);  // 2^-e M P0
  const Mat<Real, K> P0 = TOps::projector(m, x0);
  const int e = int(acc.scale_exp);
  // Omega0 = P0 Omega(x0) P0, scaled by 2^-2e like T^T W T.
  if constexpr (TOps::kConstrained) W0 = matmul_tn(P0, matmul(W0, P0));
  const Mat<Real, K> S = matmul_tn(T, matmul(W, T));
  Real dmax = Real(0), tmax = Real(0);
  VIGOR_UNROLL
  for (int a = 0; a < K; ++a) {
    VIGOR_UNROLL
    for (int b = 0; b < K; ++b) {
      dmax = max_of(dmax, abs(S[a][b] - ldexp(W0[a][b], -2 * e)));
      tmax = max_of(tmax, abs(T[a][b]));
    }
  }
  out[kOutDefect * n + i] = ldexp(dmax, 2 * e);
  out[kOutDefectRel * n + i] = dmax / (tmax * tmax);
  out[kOutDetError * n + i] = volume_error<TOps, M>(T, S, W, W0, P0, e, tmax, k);
  const Real t = Real(k) * h;
  out[kOutLyapunov * n + i] = k > 0 ? (acc.ell_prev - acc.ell0) / t : Real(0);
  out[kOutMegno * n + i] = k > 0 ? acc.megno_mean / Real(k) : Real(0);
  write_alignment_indices<TOps>(sd, out, n, i);
}

/// The diagnostics of the map so far (see the file comment), written to out[slot * n + i].
/// x0: the initial state; sd: the current dual state; k: steps taken; h: the step.
template <class TOps, class I, class M, class Real>
VIGOR_HD VIGOR_INLINE void tangent_diagnostics(const I& integrator, const M& m,
                                               const typename TOps::State& x0,
                                               const typename TOps::StateD& sd,
                                               const TangentAccumulators<Real>& acc, std::int64_t k,
                                               Real h, Real* out, std::int64_t n, std::int64_t i) {
  const typename TOps::State x = TOps::primal(sd);
  tangent_report<TOps>(m, x0, sd, preserved_form<TOps>(integrator, m, x, h),
                       preserved_form<TOps>(integrator, m, x0, h), acc, k, h, out, n, i);
}

/// Trajectory i's partials, accumulators and diagnostics at t = 0 (the host calls it with the
/// initial energy); state0 keeps x0, against which the form is compared.
template <class I, class M, class Real>
VIGOR_HD VIGOR_INLINE void initial_tangent(const I& integrator, const M& m, Real h, Real* state,
                                           Real* state0, Real* partials, Real* acc, Real* out,
                                           std::int64_t n, std::int64_t i) {
  using TOps = TangentOps<M, Real>;
  typename TOps::State x;
  TOps::Ops::load(m, state + i, n, x);
  TOps::Ops::store(x, state0 + i, n);
  typename TOps::StateD sd;
  TOps::seed(m, x, sd);
  store_tangent<TOps, Real>(sd, state + i, partials + i, n);
  TangentAccumulators<Real> a;
  a.scale_exp = Real(0);
  a.ell0 = Real(0.5) * log(deviation_norm2<TOps, Real>(sd, 1));
  a.ell_prev = a.ell0;
  a.megno_sum = Real(0);
  a.megno_mean = Real(0);
  a.store(acc, n, i);
  tangent_diagnostics<TOps>(integrator, m, x, sd, a, 0, h, out, n, i);
}

}  // namespace vigor::kernels
