// Tangent maps (kernels/tangent.hpp): the dual Jacobian is the Jacobian of the computed map
// (central differences), the primal state is the plain step's, and segments resume exactly.
// Tolerances: tests/tangent_run.hpp.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstddef>

#include "tests/tangent_run.hpp"

namespace {

using namespace tangent_test;

// --- the dual Jacobian is the Jacobian of the computed map ------------------------------------

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
