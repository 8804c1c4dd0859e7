// Tangent maps (kernels/tangent.hpp): the dual-number Jacobian of the computed step, the
// symplecticity defect and volume factor it gives, and the chaos indicators built on it.
//
// Tolerances. A symplectic step's defect |M^T J M - J| is pure round-off: each step adds a few
// ulps of |M|^2 (|M| stays O(1)..O(10) on the orbits used), so 1e-12 after 10^3 steps leaves two
// decades over the measured 1e-15..1e-13. Explicit Euler's defect is O(h) per step (det = 1 + h^2
// for the oscillator), RK4's O(h^5): both stay far above it and grow with the number of steps.
// Finite differences: central, eps = 1e-5, error eps^2 |Phi'''| + ulp/eps ~ 1e-10..1e-9, checked
// at 1e-7 (the "to their accuracy").
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/driver/advance.hpp"
#include "vigor/all_integrators.hpp"
#include "vigor/all_models.hpp"

namespace {

using namespace vigor;
using namespace vigor::kernels;

/// One trajectory through the drivers, plain or with its tangent map.
template <class M, class I>
struct Run1 {
  using TOps = TangentOps<M, double>;
  using ID = rebind_t<I, typename TOps::D>;
  static constexpr int kDim = StateOps<M, double>::kDim;

  M model;
  I integ;
  ID integ_d;
  double h;
  std::vector<double> state, state0, partials, acc, out;
  std::vector<double> e0, ee, j0, je, nr;
  std::vector<std::int64_t> step, crossings, recorded;
  std::vector<std::int32_t> status, hit_count;
  EnsembleArrays<double> a;

  Run1(const std::vector<double>& x, double dt, int newton = 0, std::vector<double> options = {})
      : model(make_model()),
        integ(make_integrator<I>(options, newton)),
        integ_d(make_integrator<ID>(options, newton)),
        h(dt),
        state(x),
        state0(x.size()),
        partials(TOps::kStored * TOps::K),
        acc(kTangentAccCount),
        out(kTangentOutCount),
        e0(1),
        ee(1),
        j0(8),
        je(1),
        nr(1),
        step(1),
        crossings(1),
        recorded(1),
        status(1),
        hit_count(1) {
    a.state = state.data();
    a.energy0 = e0.data();
    a.energy_error = ee.data();
    a.momentum0 = j0.data();
    a.momentum_error = je.data();
    a.newton_residual = nr.data();
    a.step = step.data();
    a.status = status.data();
    a.crossings = crossings.data();
    a.recorded = recorded.data();
    a.hit_count = hit_count.data();
  }

  static M make_model() {
    std::vector<double> p;
    for (const auto& s : M::kParams) p.push_back(s.default_value);
    p.push_back(0.0);
    return M::from_params(p.data());
  }
  template <class J>
  static J make_integrator(std::vector<double> options, int newton) {
    if (options.empty())
      for (const auto& o : I::kOptions) options.push_back(o.default_value);
    options.push_back(0.0);
    J j = J::from_options(options.data());
    set_newton_iterations(j, newton);
    return j;
  }

  SegmentParams<double> params(std::int64_t end) const {
    SegmentParams<double> sp;
    sp.n = 1;
    sp.h = h;
    sp.end_step = end;
    return sp;
  }

  /// Plain steps to `end` (no tangent map).
  void plain(std::int64_t end) {
    if (step[0] == 0) initial_energy(model, a, 1, 0);
    advance_trajectory(model, integ, params(end), a, 0);
  }
  /// Steps with the tangent map to `end`.
  void tangent(std::int64_t end) {
    if (step[0] == 0 && a.tangent == nullptr) {
      a.tangent = partials.data();
      a.tangent_acc = acc.data();
      a.tangent_out = out.data();
      a.state0 = state0.data();
      initial_energy_tangent(model, integ_d, h, a, 1, 0);
    }
    advance_trajectory_tangent(model, integ, integ_d, params(end), a, 0);
  }
  double partial(int c, int j) const { return partials[std::size_t(c * TOps::K + j)]; }
  double defect() const { return out[kOutDefect]; }
  double det_error() const { return out[kOutDetError]; }
};

std::vector<double> henon_heiles_regular() { return {0.0, 0.1, 0.35, 0.0}; }
/// x = 0 and H = E with y, p_y given: p_x from the energy (classic Hénon–Heiles sections).
std::vector<double> henon_heiles_at(double E, double y, double py) {
  const double V = 0.5 * y * y - y * y * y / 3.0;
  return {0.0, y, std::sqrt(2.0 * (E - V) - py * py), py};
}
std::vector<double> kepler_orbit() { return {1.0, 0.0, 0.0, 1.2}; }  // e = 0.44
template <class M>
std::vector<double> reference_of() {
  const auto r = M::reference_state();
  return std::vector<double>(r.begin(), r.end());
}

using HH = models::HenonHeiles<double>;
using KP = models::Kepler<double>;
using DSP = models::DoubleSphericalPendulum<double>;
using RB = models::RigidBodySO3<double>;
using KS = models::KirchhoffSE3<double>;

// --- the defect of symplectic schemes is round-off; of the others, not ------------------------

template <class M, class I>
double defect_after(const std::vector<double>& x, double h, std::int64_t steps, int newton = 0) {
  Run1<M, I> r(x, h, newton);
  r.tangent(steps);
  EXPECT_EQ(r.status[0], kStatusOk);
  EXPECT_EQ(r.step[0], steps);
  return r.defect();
}

TEST(TangentDefect, SymplecticSchemesAreAtRoundOffPerThousandSteps) {
  const double tol = 1e-12;
  EXPECT_LT((defect_after<HH, StormerVerlet<double>>(henon_heiles_regular(), 0.05, 1000)), tol);
  EXPECT_LT((defect_after<HH, Yoshida4<double>>(henon_heiles_regular(), 0.05, 1000)), tol);
  EXPECT_LT((defect_after<HH, Yoshida6<double>>(henon_heiles_regular(), 0.05, 1000)), tol);
  EXPECT_LT((defect_after<HH, BlanesMoan6<double>>(henon_heiles_regular(), 0.05, 1000)), tol);
  EXPECT_LT((defect_after<HH, KahanLi8<double>>(henon_heiles_regular(), 0.05, 1000)), tol);
  EXPECT_LT((defect_after<HH, SofSpa10<double>>(henon_heiles_regular(), 0.05, 1000)), tol);
  EXPECT_LT((defect_after<HH, Midpoint<double>>(henon_heiles_regular(), 0.05, 1000, 4)), tol);
  EXPECT_LT((defect_after<HH, Gauss<double>>(henon_heiles_regular(), 0.05, 1000)), tol);
  EXPECT_LT((defect_after<KP, StormerVerlet<double>>(kepler_orbit(), 0.01, 1000)), tol);
  EXPECT_LT((defect_after<KP, Yoshida4<double>>(kepler_orbit(), 0.01, 1000)), tol);
  EXPECT_LT((defect_after<KP, Yoshida6<double>>(kepler_orbit(), 0.01, 1000)), tol);
  // Kepler's tangent map shears (its norm grows like t) and the defect's round-off with it:
  // measured at 1000 steps verlet 7.1e-13, yoshida6 1.1e-13, blanes_moan6 2.7e-12, kahan_li8
  // 3.4e-13, and 2e-12 to 9e-12 for all four at 2000. blanes_moan6 is checked at 500 steps
  // (1.4e-13), where a non-symplectic scheme's O(h^7) defect per step would still show.
  EXPECT_LT((defect_after<KP, BlanesMoan6<double>>(kepler_orbit(), 0.01, 500)), tol);
  EXPECT_LT((defect_after<KP, KahanLi8<double>>(kepler_orbit(), 0.01, 1000)), tol);
  EXPECT_LT((defect_after<KP, Midpoint<double>>(kepler_orbit(), 0.01, 1000, 4)), tol);
  EXPECT_LT((defect_after<KP, LobattoIIIAB3<double>>(kepler_orbit(), 0.01, 1000, 3)), tol);
  EXPECT_LT((defect_after<KP, Gauss<double>>(kepler_orbit(), 0.01, 1000)), tol);
  // Constrained: the defect on the manifold (seeded with the tangent projector).
  EXPECT_LT((defect_after<DSP, Rattle<double>>(reference_of<DSP>(), 0.01, 1000, 6)), tol);
  EXPECT_LT((defect_after<DSP, Midpoint<double>>(reference_of<DSP>(), 0.01, 1000, 4)), tol);
}

TEST(TangentDefect, LieGroupVariationalEulerPreservesTheFormOfTStarSO3) {
  // W(m) at the staggered momentum. |M| grows linearly on the free body's tori (|M|^2 ~ 1e4 at
  // t = 100), so the bound is on the defect relative to |M|^2: a few ulps (measured 1e-16).
  Run1<RB, VariationalEulerSO3<double>> r(reference_of<RB>(), 0.1, 5);
  r.tangent(1000);
  EXPECT_LT(r.out[kOutDefectRel], 1e-14);
  EXPECT_LT(std::abs(r.det_error()), 1e-12);
  // With one Newton iteration the map is off by the residual, far above round-off.
  Run1<RB, VariationalEulerSO3<double>> one(reference_of<RB>(), 0.1, 1);
  one.tangent(1000);
  EXPECT_GT(one.out[kOutDefectRel], 1e-10);
}

TEST(TangentDefect, LieGroupVariationalEulerPreservesTheFormOfTStarSE3) {
  // W(mu) = [[A(mu), E], [-E, 0]] with A(mu) = [[-hat Pi, -hat P], [-hat P, 0]] at the staggered
  // momenta (models/kirchhoff_se3.hpp). The reference orbit is chaotic and x drifts, so |M|
  // grows fast: the bound is on the defect relative to |M|^2, a few ulps per step.
  Run1<KS, VariationalEulerSE3<double>> r(reference_of<KS>(), 0.025, 3);
  r.tangent(400);
  EXPECT_LT(r.out[kOutDefectRel], 1e-14);
  EXPECT_LT(std::abs(r.det_error()), 1e-10);
  // With one Newton iteration the map is off by the residual (~1e-5 here), far above round-off.
  Run1<KS, VariationalEulerSE3<double>> one(reference_of<KS>(), 0.025, 1);
  one.tangent(400);
  EXPECT_GT(one.out[kOutDefectRel], 1e-10);
}

TEST(TangentDefect, ExponentialChartsPreserveTheSameForms) {
  // The same forms as the Cayley charts' (any chart with tau(-x) = tau(x)^-1 gives a discrete
  // Hamiltonian map); the Newton Jacobian is taken by AD, so the tangent map differentiates
  // through a nested dual.
  Run1<RB, VariationalEulerSO3Exp<double>> so3(reference_of<RB>(), 0.1, 5);
  so3.tangent(1000);
  EXPECT_LT(so3.out[kOutDefectRel], 1e-14);
  EXPECT_LT(std::abs(so3.det_error()), 1e-12);
  Run1<KS, VariationalEulerSE3Exp<double>> se3(reference_of<KS>(), 0.025, 3);
  se3.tangent(400);
  EXPECT_LT(se3.out[kOutDefectRel], 1e-14);
  EXPECT_LT(std::abs(se3.det_error()), 1e-10);
}

TEST(TangentDefect, NewmarkIsSymplecticInItsShiftedChartOnlyForGammaOneHalf) {
  // gamma = 1/2, beta = 1/4 (trapezoidal rule): implicit, symplectic for C^T J C.
  Run1<HH, Newmark<double>> trap(henon_heiles_regular(), 0.05, 4, {0.5, 0.25});
  trap.tangent(1000);
  EXPECT_LT(trap.defect(), 1e-12);
  EXPECT_LT(std::abs(trap.det_error()), 1e-12);
  // gamma = 0.6 dissipates: det M < 1 and the defect is O(1), whatever the chart.
  Run1<HH, Newmark<double>> damped(henon_heiles_regular(), 0.05, 4, {0.6, 0.25});
  damped.tangent(1000);
  EXPECT_GT(damped.defect(), 1e-2);
  EXPECT_LT(damped.det_error(), -0.1);
}

TEST(TangentDefect, ExplicitEulerAndRk4AreAboveRoundOffAndGrow) {
  // h = 0.01: Euler's energy grows like (1 + h^2)^(k/2) and stays bounded over these steps.
  Run1<HH, ExplicitEuler<double>> eu(henon_heiles_regular(), 0.01, 0);
  eu.tangent(1000);
  const double eu1 = eu.defect(), eu_det1 = eu.det_error();
  eu.tangent(4000);
  // Euler expands phase volume: det = prod (1 + h^2 w^2) > 1, growing with the steps.
  EXPECT_GT(eu1, 1e-3);
  EXPECT_GT(eu.defect(), 2.0 * eu1);
  EXPECT_GT(eu_det1, 0.0);
  EXPECT_GT(eu.det_error(), 2.0 * eu_det1);

  Run1<HH, RungeKutta4<double>> rk(henon_heiles_regular(), 0.05, 0);
  rk.tangent(1000);
  const double rk1 = rk.defect();
  rk.tangent(4000);
  // O(h^5) per step: ~1e-7 here, five decades above round-off, and growing.
  EXPECT_GT(rk1, 1e-9);
  EXPECT_GT(rk.defect(), 2.0 * rk1);
}

TEST(TangentDefect, MidpointDefectFallsWithNewtonIterationsToRoundOff) {
  // Fixed-iteration Newton: the computed map is symplectic only to the Newton residual.
  // h = 0.2 makes the first iterations' error visible (SCIENCE.md §1: 1 iteration ~ 1e-8 on
  // the pendulum at h = 0.1).
  std::vector<double> d;
  for (int it = 1; it <= 4; ++it) {
    d.push_back(defect_after<HH, Midpoint<double>>(henon_heiles_regular(), 0.2, 1000, it));
  }
  for (int it = 0; it < 3; ++it) {
    // Each iteration helps until round-off is reached (quadratic convergence).
    if (d[std::size_t(it)] > 1e-12) {
      EXPECT_LT(d[std::size_t(it) + 1], 0.1 * d[std::size_t(it)]);
    }
  }
  EXPECT_GT(d[0], 1e-9) << "one iteration is not converged at h = 0.2";
  EXPECT_LT(d[3], 1e-12) << "four iterations reach round-off";
}

// --- the dual Jacobian is the Jacobian of the computed map ------------------------------------

/// max over (c, j) of |dual partial - central difference| after `steps` steps, perturbing the
/// initial state along the seed's columns (the tangent projector's for constrained models).
template <class M, class I>
double dual_vs_fd(const std::vector<double>& x, double h, int steps, int newton = 0) {
  using TOps = TangentOps<M, double>;
  Run1<M, I> dual(x, h, newton);
  dual.tangent(steps);
  const M m = dual.model;
  typename TOps::State x0;
  StateOps<M, double>::load(m, x.data(), 1, x0);
  typename TOps::StateD seed;
  TOps::seed(m, x0, seed);
  const auto sv = TOps::OpsD::as_vector(seed);
  const double eps = 1e-5;
  double worst = 0.0;
  for (int j = 0; j < TOps::K; ++j) {
    std::vector<double> xp(x), xm(x);
    for (int c = 0; c < TOps::kStored; ++c) {
      xp[std::size_t(c)] += eps * sv[c].d[j];
      xm[std::size_t(c)] -= eps * sv[c].d[j];
    }
    Run1<M, I> rp(xp, h, newton), rm(xm, h, newton);
    rp.plain(steps);
    rm.plain(steps);
    for (int c = 0; c < TOps::kStored; ++c) {
      const double fd = (rp.state[std::size_t(c)] - rm.state[std::size_t(c)]) / (2 * eps);
      worst = std::max(worst, std::abs(fd - dual.partial(c, j)));
    }
  }
  return worst;
}

TEST(TangentMap, DualJacobianEqualsCentralDifferencesForEveryIntegrator) {
  const double tol = 1e-7;
  const auto hh = henon_heiles_regular();
  EXPECT_LT((dual_vs_fd<HH, StormerVerlet<double>>(hh, 0.05, 20)), tol);
  EXPECT_LT((dual_vs_fd<HH, SymplecticEulerA<double>>(hh, 0.05, 20)), tol);
  EXPECT_LT((dual_vs_fd<HH, SymplecticEulerB<double>>(hh, 0.05, 20)), tol);
  EXPECT_LT((dual_vs_fd<HH, Newmark<double>>(hh, 0.05, 20)), tol);
  EXPECT_LT((dual_vs_fd<HH, Yoshida4<double>>(hh, 0.05, 20)), tol);
  EXPECT_LT((dual_vs_fd<HH, Yoshida6<double>>(hh, 0.05, 20)), tol);
  EXPECT_LT((dual_vs_fd<HH, ExplicitEuler<double>>(hh, 0.05, 20)), tol);
  EXPECT_LT((dual_vs_fd<HH, RungeKutta4<double>>(hh, 0.05, 20)), tol);
  // One Newton iteration: the map differentiated is the unconverged one, and FD sees the same.
  EXPECT_LT((dual_vs_fd<HH, Midpoint<double>>(hh, 0.1, 20, 1)), tol);
  EXPECT_LT((dual_vs_fd<HH, LobattoIIIAB3<double>>(hh, 0.1, 20, 2)), tol);
  EXPECT_LT((dual_vs_fd<KP, StormerVerlet<double>>(kepler_orbit(), 0.01, 20)), tol);
  const auto dsp = reference_of<DSP>();
  EXPECT_LT((dual_vs_fd<DSP, Rattle<double>>(dsp, 0.01, 20, 4)), tol);
  EXPECT_LT((dual_vs_fd<DSP, Shake<double>>(dsp, 0.01, 20, 4)), tol);
  using DP = models::DoublePendulum<double>;
  EXPECT_LT((dual_vs_fd<DP, Midpoint<double>>({0.5, -0.3, 0.2, 0.1}, 0.02, 20, 3)), tol);
  using FP = models::DrivenPendulum<double>;
  EXPECT_LT((dual_vs_fd<FP, Midpoint<double>>({0.3, 0.1}, 0.05, 20, 3)), tol);
}

TEST(TangentMap, SO3PartialsMatchDifferencesAlongLeftTranslations) {
  // Direction j < 3 moves R along R hat(e_j): perturb by R cay(+-eps e_j) (cay = exp to second
  // order, so the central difference still has O(eps^2) error); direction 3 + a moves m.
  using TOps = TangentOps<RB, double>;
  using I = VariationalEulerSO3<double>;
  const auto x = reference_of<RB>();
  Run1<RB, I> dual(x, 0.1, 5);
  dual.tangent(20);
  const double eps = 1e-5;
  double worst = 0.0;
  for (int j = 0; j < TOps::K; ++j) {
    auto moved = [&](double s) {
      std::vector<double> y(x);
      if (j < 3) {
        Vec<double, 3> v = Vec<double, 3>::filled(0.0);
        v[j] = s * eps;
        const Mat<double, 3> C = so3::cayley(v);
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) {
            double r = 0;
            for (int c = 0; c < 3; ++c) r += x[std::size_t(3 * a + c)] * C[c][b];
            y[std::size_t(3 * a + b)] = r;
          }
      } else {
        y[std::size_t(9 + j - 3)] += s * eps;
      }
      return y;
    };
    Run1<RB, I> rp(moved(+1), 0.1, 5), rm(moved(-1), 0.1, 5);
    rp.plain(20);
    rm.plain(20);
    for (int c = 0; c < TOps::kStored; ++c)
      worst = std::max(worst,
                       std::abs((rp.state[std::size_t(c)] - rm.state[std::size_t(c)]) / (2 * eps) -
                                dual.partial(c, j)));
  }
  EXPECT_LT(worst, 1e-7);
}

TEST(TangentMap, PrimalStateIsBitIdenticalToThePlainStepForExplicitSchemes) {
  Run1<HH, StormerVerlet<double>> a(henon_heiles_regular(), 0.05), b(henon_heiles_regular(), 0.05);
  a.plain(3000);
  b.tangent(3000);
  for (std::size_t c = 0; c < a.state.size(); ++c) EXPECT_EQ(a.state[c], b.state[c]) << c;
  EXPECT_EQ(a.ee[0], b.ee[0]);
}

TEST(TangentMap, SegmentsResumeExactly) {
  // A run cut into launches gives the same partials, accumulators and indicators as one launch.
  Run1<HH, StormerVerlet<double>> one(henon_heiles_at(1.0 / 6, -0.1, 0.1), 0.01);
  Run1<HH, StormerVerlet<double>> many(henon_heiles_at(1.0 / 6, -0.1, 0.1), 0.01);
  one.tangent(20000);
  for (int k = 1; k <= 20; ++k) many.tangent(1000 * k);
  for (std::size_t c = 0; c < one.partials.size(); ++c)
    EXPECT_EQ(one.partials[c], many.partials[c]);
  for (int s = 0; s < kTangentOutCount; ++s) {
    const double x = one.out[std::size_t(s)], y = many.out[std::size_t(s)];
    EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << s << ": " << x << " vs " << y;
  }
}

// --- chaos indicators --------------------------------------------------------------------------

TEST(ChaosIndicators, MegnoTendsToTwoOnARegularOrbitAndGrowsOnAChaoticOne) {
  // Hénon–Heiles, h = 0.01. E = 1/12 (y, p_y) = (0.1, 0.1): a quasi-periodic torus; measured
  // <Y> = 1.994 at t = 1000 (its approach to 2 is O(log t / t)). E = 1/6, (y, p_y) =
  // (-0.1, 0.1): in the chaotic sea; measured <Y> = 10.9 at t = 100 and 60 at t = 1000
  // (~ lambda t / 2 with lambda ~ 0.11).
  Run1<HH, StormerVerlet<double>> reg(henon_heiles_at(1.0 / 12, 0.1, 0.1), 0.01);
  reg.tangent(100000);
  EXPECT_NEAR(reg.out[kOutMegno], 2.0, 0.1);
  EXPECT_GT(reg.out[kOutSali], 1e-4);
  EXPECT_LT(reg.out[kOutLyapunov], 0.01);

  Run1<HH, StormerVerlet<double>> cha(henon_heiles_at(1.0 / 6, -0.1, 0.1), 0.01);
  cha.tangent(10000);
  const double y1 = cha.out[kOutMegno];
  cha.tangent(100000);
  const double y2 = cha.out[kOutMegno];
  EXPECT_GT(y1, 4.0);
  EXPECT_GT(y2, 3.0 * y1);
  EXPECT_LT(cha.out[kOutSali], 1e-8);
  EXPECT_LT(cha.out[kOutGali2], 1e-8);
  EXPECT_GT(cha.out[kOutLyapunov], 0.05);
  // The relative defect stays at round-off however large M grows (renormalised, not overflowed).
  EXPECT_LT(cha.out[kOutDefectRel], 1e-13);
  EXPECT_TRUE(std::isnan(cha.out[kOutDetError])) << "det of an ill-conditioned M is not reported";
}

/// Inverted oscillator V = -q^2 / 2: Verlet's map is linear, M = [[1 + h^2/2, h], [h (1 + h^2/4),
/// 1 + h^2/2]], with eigenvalues mu^{+-1}, mu = 1 + h^2/2 + sqrt((1 + h^2/2)^2 - 1).
template <class Real>
struct InvertedOscillator {
  static constexpr const char* kName = "inverted_oscillator";
  static constexpr int dof = 1;
  static constexpr std::array<ParamSpec, 0> kParams{};
  static InvertedOscillator from_params(const double*) { return {}; }
  VIGOR_HD Real inv_mass(int) const { return Real(1); }
  template <class T>
  VIGOR_HD T potential(const Vec<T, 1>& q) const {
    return Real(-0.5) * q[0] * q[0];
  }
};

TEST(ChaosIndicators, LyapunovExponentOfALinearMapIsExact) {
  using IO = InvertedOscillator<double>;
  const double h = 0.5;
  const int steps = 2000;  // ln|M^N w| ~ 990: the partials are renormalised three times
  // At the fixed point x = 0 the state stays 0 while the tangent map grows like mu^k.
  Run1<IO, StormerVerlet<double>> r({0.0, 0.0}, h);
  r.tangent(steps);
  ASSERT_EQ(r.status[0], kStatusOk);
  EXPECT_GT(r.acc[kAccScaleExp], 0.0) << "the test must cross a renormalisation";
  // Reference: |M^N w| / |w| in long double with its own renormalisation.
  const long double a = 1.0L + 0.5L * h * h, b = h, c = h * (1.0L + 0.25L * h * h);
  long double v0 = deviation_direction(1, 0), v1 = deviation_direction(1, 1);
  const long double ell0 = 0.5L * std::log(v0 * v0 + v1 * v1);
  long double ell = 0;
  for (int k = 0; k < steps; ++k) {
    const long double w0 = a * v0 + b * v1, w1 = c * v0 + a * v1;
    const long double s = std::sqrt(w0 * w0 + w1 * w1);
    ell += std::log(s);
    v0 = w0 / s;
    v1 = w1 / s;
  }
  const double expected = double((ell - ell0) / (steps * h));
  EXPECT_NEAR(r.out[kOutLyapunov], expected, 1e-10 * expected);
  // And the estimate's increments give the exponent itself, ln(mu) / h, to round-off.
  const double mu = double(a + std::sqrt(a * a - 1.0L));
  const double lam1 = r.out[kOutLyapunov];
  r.tangent(2 * steps);
  const double lam2 = r.out[kOutLyapunov];
  EXPECT_NEAR((lam2 * 2 * steps - lam1 * steps) / steps, std::log(mu) / h, 1e-10);
}

TEST(ChaosIndicators, DampedMotionContractsWithoutUnderflow) {
  // The Baker–Gollub driven pendulum is damped: every direction contracts, det M = e^{-gamma t}
  // -> 0. The partials are scaled up by exact powers of two instead of underflowing.
  using FP = models::DrivenPendulum<double>;
  Run1<FP, Midpoint<double>> r({0.3, 0.1}, 0.05, 3);
  r.tangent(60000);
  ASSERT_EQ(r.status[0], kStatusOk);
  EXPECT_TRUE(std::isfinite(r.out[kOutLyapunov]));
  EXPECT_TRUE(std::isfinite(r.out[kOutMegno]));
}

}  // namespace
