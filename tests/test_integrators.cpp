// Physics tests of the explicit integrators in kernels/integrators/: convergence order from error
// ratios, Newmark(1/2, 0) = Verlet, bounded energy error without drift for the symplectic
// schemes, exact conservation of angular momentum (discrete Noether), the non-symplectic controls
// (explicit Euler gains energy, RK4 slowly loses it), and the float instantiations.
#include <gtest/gtest.h>

#include "tests/test_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "kernels/core/dual.hpp"
#include "kernels/core/hamiltonian.hpp"
#include "kernels/integrators/blanes_moan6.hpp"
#include "kernels/integrators/explicit_euler.hpp"
#include "kernels/integrators/gauss.hpp"
#include "kernels/integrators/kahan_li8.hpp"
#include "kernels/integrators/newmark.hpp"
#include "kernels/integrators/protocol.hpp"
#include "kernels/integrators/rk4.hpp"
#include "kernels/integrators/sofspa10.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "kernels/integrators/symplectic_euler_a.hpp"
#include "kernels/integrators/symplectic_euler_b.hpp"
#include "kernels/integrators/triple_jump.hpp"
#include "kernels/integrators/yoshida4.hpp"
#include "kernels/integrators/yoshida6.hpp"
#include "models/henon_heiles.hpp"
#include "models/kepler.hpp"
#include "models/pendulum.hpp"

namespace {

namespace vk = vigor::kernels;
namespace vm = vigor::models;

template <class Real, int N>
using Phase = vk::Phase<Real, N>;

using vigor_test::start;

/// Take `steps` steps of size h; `each(k, s)` is called after step k (1-based).
template <class I, class M, class Real, class F>
void integrate(const I& integrator, const M& m, Phase<Real, M::dof>& s, Real h, long steps,
               F&& each) {
  for (long k = 1; k <= steps; ++k) {
    vk::take_step(integrator, m, s, h, Real(0));  // autonomous: t unused
    each(k, s);
  }
}
template <class I, class M, class Real>
void integrate(const I& integrator, const M& m, Phase<Real, M::dof>& s, Real h, long steps) {
  integrate(integrator, m, s, h, steps, [](long, const Phase<Real, M::dof>&) {});
}

template <class M, class Real>
double energy_of(const M& m, const Phase<Real, M::dof>& s) {
  return double(vk::energy(m, s.q, s.p));
}

/// max over components of |a - b|, q and p.
template <class Ra, class Rb, int N>
double state_distance(const Phase<Ra, N>& a, const Phase<Rb, N>& b) {
  double d = 0;
  for (int i = 0; i < N; ++i) {
    d = std::max(d, std::abs(double(a.q[i]) - double(b.q[i])));
    d = std::max(d, std::abs(double(a.p[i]) - double(b.p[i])));
  }
  return d;
}

using vigor_test::fitted_slope;

// ---------------------------------------------------------------------------------------------
// Convergence order.
//
// Problem: pendulum m = l = g = 1 released at rest from q = 1 rad (period 6.70, so the motion is
// strongly nonlinear: sin(1) = 0.84), integrated to T = 2 (about 0.3 of a period). Error: max
// over q and p of |x_N - x_ref| at T with N steps of h = T/N. Reference: yoshida6 with
// N = 20000 (h = 1e-4): its truncation error (measured constant 4.5e-3 h^6, so ~5e-27) is far
// below its accumulated round-off, ~1e-14. Every step range below keeps the errors above 1e-11,
// i.e. at least 1000x above that floor (asserted), and starts at a step small enough that the
// errors are asymptotic (measured: each range's pairwise slopes agree with the fitted one to
// within 0.05); a slope off by more than 0.2 from the order fails.
// ---------------------------------------------------------------------------------------------

constexpr double kConvT = 2.0;

const Phase<double, 1>& pendulum_reference() {
  static const Phase<double, 1> ref = [] {
    const vm::Pendulum<double> m{1.0, 1.0};
    auto s = start(m, {1.0}, {0.0});
    const long n = 20000;
    integrate(vk::Yoshida6<double>{}, m, s, kConvT / double(n), n);
    return s;
  }();
  return ref;
}

/// The error at T = kConvT, max over q and p of |x_N - ref|, of a run of N steps for each N.
template <class I>
std::vector<double> errors_against(const I& integrator, const std::vector<long>& steps,
                                   const Phase<double, 1>& ref) {
  const vm::Pendulum<double> m{1.0, 1.0};
  std::vector<double> errs;
  for (long n : steps) {
    auto s = start(m, {1.0}, {0.0});
    integrate(integrator, m, s, kConvT / double(n), n);
    errs.push_back(state_distance(s, ref));
  }
  return errs;
}

/// The fitted order over `steps`; every error must stay above `floor`, the reference's and the
/// runs' round-off with a margin (the argument above; the exact reference below has its own).
template <class I>
double convergence_slope(const I& integrator, const std::vector<long>& steps, const char* label,
                         const Phase<double, 1>& ref = pendulum_reference(), double floor = 1e-11) {
  const std::vector<double> errs = errors_against(integrator, steps, ref);
  std::vector<double> hs;
  for (long n : steps) hs.push_back(kConvT / double(n));
  const double slope = fitted_slope(hs, errs);
  std::printf("  %-22s h = %.4g .. %.4g  err = %.3e .. %.3e  slope = %.3f\n", label, hs.front(),
              hs.back(), errs.front(), errs.back(), slope);
  for (double e : errs) EXPECT_GT(e, floor) << label << ": step range reaches round-off";
  return slope;
}

// Order-1 schemes: h = 0.02 .. 0.0025, measured errors 2e-2 .. 4e-4.
const std::vector<long> kStepsOrder1 = {100, 200, 400, 800};
// Order-2 schemes: h = 0.04 .. 0.005, measured errors 2e-4 .. 3e-6.
const std::vector<long> kStepsOrder2 = {50, 100, 200, 400};
// Order-4 schemes: h = 0.2 .. 0.025, measured errors 1e-4 .. 4e-9 (each further halving divides
// by 16: two more would approach the 1e-11 floor for rk4).
const std::vector<long> kStepsOrder4 = {10, 20, 40, 80};
// Order 6: h = 0.4 .. 0.1, measured errors 2e-5 .. 5e-9; a halving divides by 64, so h = 0.05
// would already be at 7e-11, near the floor.
const std::vector<long> kStepsOrder6 = {5, 8, 12, 20};

TEST(Convergence, SymplecticEulerAIsOrder1) {
  EXPECT_NEAR(convergence_slope(vk::SymplecticEulerA<double>{}, kStepsOrder1, "symplectic_euler_a"),
              1.0, 0.2);
}
TEST(Convergence, SymplecticEulerBIsOrder1) {
  EXPECT_NEAR(convergence_slope(vk::SymplecticEulerB<double>{}, kStepsOrder1, "symplectic_euler_b"),
              1.0, 0.2);
}
TEST(Convergence, ExplicitEulerIsOrder1) {
  EXPECT_NEAR(convergence_slope(vk::ExplicitEuler<double>{}, kStepsOrder1, "explicit_euler"), 1.0,
              0.2);
}
TEST(Convergence, NewmarkGamma07IsOrder1) {
  const vk::Newmark<double> nm{0.7, 0.0};
  EXPECT_NEAR(convergence_slope(nm, kStepsOrder1, "newmark gamma=0.7"), 1.0, 0.2);
}
TEST(Convergence, VerletIsOrder2) {
  EXPECT_NEAR(convergence_slope(vk::StormerVerlet<double>{}, kStepsOrder2, "verlet"), 2.0, 0.2);
}
TEST(Convergence, NewmarkGammaHalfIsOrder2) {
  const vk::Newmark<double> nm{0.5, 0.0};
  EXPECT_NEAR(convergence_slope(nm, kStepsOrder2, "newmark gamma=0.5"), 2.0, 0.2);
}
TEST(Convergence, Yoshida4IsOrder4) {
  EXPECT_NEAR(convergence_slope(vk::Yoshida4<double>{}, kStepsOrder4, "yoshida4"), 4.0, 0.2);
}
TEST(Convergence, RungeKutta4IsOrder4) {
  EXPECT_NEAR(convergence_slope(vk::RungeKutta4<double>{}, kStepsOrder4, "rk4"), 4.0, 0.2);
}
TEST(Convergence, Yoshida6IsOrder6) {
  EXPECT_NEAR(convergence_slope(vk::Yoshida6<double>{}, kStepsOrder6, "yoshida6"), 6.0, 0.2);
}

// Orders 8 and 10 against the exact solution. The yoshida6 reference above is good to ~1e-14:
// too coarse for these schemes, whose errors fall from 1e-8 to 1e-13 within a factor of three in
// h. The same problem's exact solution instead, q(2) and p(2) from mpmath's Taylor-series ODE
// solver at 40 digits (scripts/check_composition_order.py, which also checks both schemes' orders
// in 50-digit arithmetic), rounded to double: it is exact to 1e-16, and the runs' own round-off
// (at most 8 x 35 substeps on O(1) values) is ~1e-15, so errors down to 1e-13 are measured to
// a few per cent.
const Phase<double, 1>& exact_pendulum() {
  static const Phase<double, 1> exact = [] {
    const vm::Pendulum<double> m{1.0, 1.0};
    return start(m, {-0.3062009575885240082882507}, {-0.9090471049978625523605618});
  }();
  return exact;
}

TEST(Convergence, KahanLi8IsOrder8) {
  // h = 0.5 .. 0.25: errors 1.5e-8 .. 5.8e-11 in 50-digit arithmetic, pairwise slopes 7.96 .. 8.00.
  EXPECT_NEAR(
      convergence_slope(vk::KahanLi8<double>{}, {4, 5, 6, 8}, "kahan_li8", exact_pendulum(), 1e-13),
      8.0, 0.2);
}

TEST(Convergence, BlanesMoan6IsOrder6) {
  // Against the exact solution: its error constant is small enough that the yoshida6 reference
  // (~1e-14) would show at the finer steps. Measured: see the printed line.
  EXPECT_NEAR(convergence_slope(vk::BlanesMoan6<double>{}, {6, 8, 10, 12}, "blanes_moan6",
                                exact_pendulum(), 1e-13),
              6.0, 0.2);
}

TEST(Convergence, SofSpa10IsOrder10) {
  // h = 0.5 .. 0.33: errors 9.0e-12 .. 1.3e-13. The pairwise slopes are still falling towards 10
  // there (10.6, then 10.35, in 50-digit arithmetic; 10.1 and 10.03 at h = 1/8 and 1/16 on a
  // shorter run, where double's round-off hides them), so the band is wider than for the other
  // orders: it still tells 10 from 8 and from 12.
  EXPECT_NEAR(
      convergence_slope(vk::SofSpa10<double>{}, {4, 5, 6}, "sofspa10", exact_pendulum(), 1e-13),
      10.0, 0.7);
}

// ---------------------------------------------------------------------------------------------
// Gauss–Legendre collocation (gauss.hpp): the tableau, the orders 2s, the sweep count.
// ---------------------------------------------------------------------------------------------

template <class R>
vk::Gauss<R> gauss(int stages) {
  const double option = stages;
  return vk::Gauss<R>::from_options(&option);
}

TEST(Gauss, TableauSatisfiesTheCollocationConditions) {
  // B(2s): the weights integrate t^(k-1) exactly for k <= 2s (Gauss quadrature); C(s): the
  // stages integrate the interpolant exactly, sum_j a_ij c_j^(k-1) = c_i^k / k for k <= s. Both
  // hold to round-off of the double coefficients (sums of s terms below 1: a few ulps).
  for (int s = 1; s <= vk::GaussTableau::kMaxStages; ++s) {
    const vk::GaussTableau t = vk::GaussTableau::make(s);
    for (int k = 1; k <= 2 * s; ++k) {
      double sum = 0;
      for (int i = 0; i < s; ++i) sum += t.b[i] * std::pow(t.c[i], k - 1);
      EXPECT_NEAR(sum, 1.0 / k, 4e-16) << "B(2s), s = " << s << ", k = " << k;
    }
    for (int i = 0; i < s; ++i) {
      EXPECT_NEAR(t.c[i] + t.c[s - 1 - i], 1.0, 4e-16) << "symmetric nodes, s = " << s;
      EXPECT_NEAR(t.bbar[i], t.b[i] * (1 - t.c[i]), 1e-16);  // long double: within an ulp
      for (int k = 1; k <= s; ++k) {
        double sum = 0;
        for (int j = 0; j < s; ++j) sum += t.a[i][j] * std::pow(t.c[j], k - 1);
        EXPECT_NEAR(sum, std::pow(t.c[i], k) / k, 1e-15) << "C(s), s = " << s << ", k = " << k;
      }
    }
  }
}

TEST(Gauss, ConvergesAtOrderTwiceTheStages) {
  // Against the exact pendulum solution (floor 1e-13, as for the compositions). Measured slopes:
  // 2.00, 4.00, 6.00, 8.0; the step ranges keep every error above the floor.
  EXPECT_NEAR(
      convergence_slope(gauss<double>(1), kStepsOrder2, "gauss s=1", exact_pendulum(), 1e-13), 2.0,
      0.1);
  EXPECT_NEAR(
      convergence_slope(gauss<double>(2), kStepsOrder4, "gauss s=2", exact_pendulum(), 1e-13), 4.0,
      0.1);
  EXPECT_NEAR(
      convergence_slope(gauss<double>(3), {4, 6, 8, 12}, "gauss s=3", exact_pendulum(), 1e-13), 6.0,
      0.2);
  EXPECT_NEAR(
      convergence_slope(gauss<double>(4), {4, 5, 6, 8}, "gauss s=4", exact_pendulum(), 1e-13), 8.0,
      0.3);
  // Orders 12 and 16 reach round-off within a step or two: the error of 2 steps of h = 1 (order
  // 2s, error constant ~ 1/(2s)!^2 small) must already be near it. Measured 2.2e-10 and 5.2e-14.
  EXPECT_LT(errors_against(gauss<double>(6), {2}, exact_pendulum())[0], 1e-9);
  EXPECT_LT(errors_against(gauss<double>(8), {2}, exact_pendulum())[0], 1e-13);
}

TEST(Gauss, DefaultSweepsReachRoundOffWhereStagesAloneDoNot) {
  // The pendulum near its separatrix (q0 = 2.5), h = 0.3 and 0.5, 100 time units: the last
  // sweep's change of the stage positions (the step's residual). The default 12 sweeps leave it at
  // round-off (measured <= 2e-15 for every s at h = 0.5); s sweeps, the fewest that give order
  // 2s, leave 1e-4 (s = 1) to 5e-11 (s = 4) at h = 0.3 — the count matters.
  const vm::Pendulum<double> m{1.0, 1.0};
  for (int s = 1; s <= 8; ++s)
    for (const double h : {0.3, 0.5}) {
      const auto max_residual = [&](int sweeps) {
        auto g = gauss<double>(s);
        if (sweeps > 0) g.newton_iterations = sweeps;
        auto st = start(m, {2.5}, {0.0});
        double r = 0;
        for (int k = 0; k < int(100 / h); ++k) r = std::max(r, vk::take_step(g, m, st, h, 0.0));
        return r;
      };
      EXPECT_LE(max_residual(0), 1e-14) << "s = " << s << ", h = " << h;
      if (s <= 4 && h == 0.3) {
        EXPECT_GT(max_residual(s), 1e-12) << "s = " << s;
      }
    }
}

TEST(Convergence, HigherOrderWinsAtEqualCost) {
  // Errors at about 140 force evaluations over T = 2 (7 per yoshida6 step, 11 per blanes_moan6
  // step, 17 per kahan_li8 step, 35 per sofspa10 step): small error constants and high order
  // together are what the newer schemes are for. Measured: yoshida6 (20 steps) 4.5e-9,
  // blanes_moan6 (13 steps, 143 evaluations) 2.7e-12, kahan_li8 (8 steps) 5.8e-11, sofspa10
  // (4 steps) 9.0e-12. Each of the compositions must beat the one before by at least 5x, and
  // blanes_moan6, of the same order as yoshida6, by at least 100x: its error constants are that
  // much smaller (it even beats the order-8 and order-10 compositions at this cost).
  const double y6 = errors_against(vk::Yoshida6<double>{}, {20}, exact_pendulum())[0];
  const double bm6 = errors_against(vk::BlanesMoan6<double>{}, {13}, exact_pendulum())[0];
  const double kl8 = errors_against(vk::KahanLi8<double>{}, {8}, exact_pendulum())[0];
  const double ss10 = errors_against(vk::SofSpa10<double>{}, {4}, exact_pendulum())[0];
  std::printf(
      "  ~140 force evaluations: yoshida6 %.2e, blanes_moan6 %.2e, kahan_li8 %.2e, sofspa10 "
      "%.2e\n",
      y6, bm6, kl8, ss10);
  EXPECT_GT(y6, 5 * kl8);
  EXPECT_GT(kl8, 5 * ss10);
  EXPECT_GT(y6, 100 * bm6);
}

TEST(Options, DefaultsAndOrder) {
  // from_options takes the values in kOptions order.
  const auto& o = vk::Newmark<double>::kOptions;
  ASSERT_EQ(o.size(), 2u);
  EXPECT_STREQ(o[0].name, "gamma");
  EXPECT_EQ(o[0].default_value, 0.5);
  EXPECT_STREQ(o[1].name, "beta");
  EXPECT_EQ(o[1].default_value, 0.0);
  EXPECT_EQ(o[1].rule, vk::Rule::kNonNegative);
  const double v[2] = {0.7, 0.25};
  const auto nm = vk::Newmark<double>::from_options(v);
  EXPECT_EQ(nm.gamma, 0.7);
  EXPECT_EQ(nm.beta, 0.25);
}

// ---------------------------------------------------------------------------------------------
// Newmark with gamma = 1/2, beta = 0 is Störmer–Verlet.
// ---------------------------------------------------------------------------------------------

TEST(Newmark, GammaHalfEqualsVerletStepByStep) {
  const vm::Kepler<double> m{1.0};
  const double v[2] = {0.5, 0.0};
  const auto nm = vk::Newmark<double>::from_options(v);
  const vk::StormerVerlet<double> verlet{};
  auto a = start(m, {0.4, 0.0}, {0.0, 2.0});
  auto b = a;
  const double h = 0.01;
  const double eps = std::numeric_limits<double>::epsilon();
  double worst_step = 0, worst_run = 0;
  for (int k = 0; k < 2000; ++k) {  // about three orbits, through three pericentres
    auto one = b;                   // both maps applied to the same point
    vk::take_step(nm, m, one, h, 0.0);
    verlet.step(m, b, h);
    vk::take_step(nm, m, a, h, 0.0);
    // One step: the two momentum updates differ only in rounding, a few ulps of the largest
    // term; |p| <= 2.5 on this orbit, so 4 ulp of 4 bounds it.
    worst_step = std::max(worst_step, state_distance(one, b));
    worst_run = std::max(worst_run, state_distance(a, b));
    ASSERT_LE(state_distance(one, b), 16 * eps) << "step " << k;
    ASSERT_EQ(one.f[0], b.f[0]);  // same q => the cached force is the same function value
  }
  // Over the run the ulp-level differences may grow at most linearly along the orbit (Kepler
  // is not chaotic): 2000 steps x 16 eps = 7e-12.
  EXPECT_LE(worst_run, 2000 * 16 * eps);
  std::printf("  newmark(1/2) vs verlet: max one-step difference %.2e, over 2000 steps %.2e\n",
              worst_step, worst_run);
}

TEST(Newmark, OtherGammaIsNotSymplecticControl) {
  // gamma > 1/2 is numerically dissipative: on the pendulum the energy falls steadily (per
  // step about h^2 (gamma - 1/2) |f|^2 / m on average), unlike gamma = 1/2 whose error stays
  // bounded. Measured at h = 0.05 over 1e4 steps: gamma = 0.7 loses 0.456 of the 0.460 above the
  // minimum (the pendulum comes to rest); gamma = 0.5 has max |dH| 2.7e-4. Factor 100 required.
  const vm::Pendulum<double> m{1.0, 1.0};
  const double h = 0.05;
  auto s = start(m, {1.0}, {0.0});
  const double e0 = energy_of(m, s);
  integrate(vk::Newmark<double>{0.7, 0.0}, m, s, h, 10000);
  const double loss = e0 - energy_of(m, s);
  auto r = start(m, {1.0}, {0.0});
  double vmax = 0;
  integrate(vk::Newmark<double>{0.5, 0.0}, m, r, h, 10000, [&](long, const Phase<double, 1>& x) {
    vmax = std::max(vmax, std::abs(energy_of(m, x) - e0));
  });
  std::printf("  newmark gamma=0.7 energy loss %.3e; gamma=0.5 max |dH| %.3e\n", loss, vmax);
  EXPECT_GT(loss, 100 * vmax);
}

// ---------------------------------------------------------------------------------------------
// yoshida4 takes its three substeps as a loop (the model's force compiled once per step copy,
// not three times); it must give the bits of the written-out triple jump it replaced, compared
// after every step (a weight one ulp off, as 1 - 2 c1 would be, differs in the first step's q).
// ---------------------------------------------------------------------------------------------

/// The written-out step as yoshida4.hpp held it before the loop: c1 h computed once.
template <class Real, class M>
void yoshida4_written_out(const M& m, Phase<Real, M::dof>& s, Real h) {
  const vk::StormerVerlet<Real> verlet{};
  const Real h1 = Real(vk::TripleJump::kOuter) * h;
  verlet.step(m, s, h1);
  verlet.step(m, s, Real(vk::TripleJump::kInner) * h);
  verlet.step(m, s, h1);
}

template <class Real>
void expect_loop_gives_written_out_bits() {
  const vm::HenonHeiles<Real> m{};
  // E = 0.1247, below the escape energy 1/6: a bounded orbit through the nonlinear region.
  const auto x0 = start<vm::HenonHeiles<Real>, Real>(m, {0.0, 0.1}, {0.49, 0.0});
  const Real h = Real(0.05);
  auto a = x0, b = x0;
  for (int k = 0; k < 2000; ++k) {
    vk::Yoshida4<Real>{}.step(m, a, h);
    yoshida4_written_out(m, b, h);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(a.q[i], b.q[i]) << "step " << k;
      ASSERT_EQ(a.p[i], b.p[i]) << "step " << k;
    }
  }
  // The orbit moved: the comparison is of states far from the start.
  EXPECT_GT(state_distance(a, x0), 0.1);
}

TEST(Composition, Yoshida4LoopGivesTheWrittenOutStepsBits) {
  expect_loop_gives_written_out_bits<double>();
  expect_loop_gives_written_out_bits<float>();
}

// ---------------------------------------------------------------------------------------------
// Hénon–Heiles: Störmer–Verlet keeps the energy error bounded without drift.
// ---------------------------------------------------------------------------------------------

TEST(EnergyBehaviour, VerletHenonHeilesBoundedNoDrift) {
  const vm::HenonHeiles<double> m{1.0, -1.0 / 3.0};
  // E = 1/8 with x = 0, y = 0.1, p_y = 0.1, p_x > 0 from H = E: a bounded, regular
  // (quasi-periodic) orbit; its first- and last-tenth statistics agree to 1e-9 (output).
  const double E = 0.125, y = 0.1, py = 0.1;
  const double px = std::sqrt(2.0 * (E - 0.5 * py * py - 0.5 * y * y - m.b * y * y * y));
  auto s = start(m, {0.0, y}, {px, py});
  ASSERT_NEAR(energy_of(m, s), E, 1e-15);
  const long n = 1000000;
  const double h = 0.01;
  const long tenth = n / 10;
  double first_max = 0, last_max = 0, first_sum = 0, last_sum = 0, all_max = 0, r2max = 0;
  integrate(vk::StormerVerlet<double>{}, m, s, h, n, [&](long k, const Phase<double, 2>& x) {
    const double de = energy_of(m, x) - E;
    all_max = std::max(all_max, std::abs(de));
    r2max = std::max(r2max, vk::norm2(x.q));
    if (k <= tenth) {
      first_max = std::max(first_max, std::abs(de));
      first_sum += de;
    } else if (k > n - tenth) {
      last_max = std::max(last_max, std::abs(de));
      last_sum += de;
    }
  });
  const double first_mean = first_sum / double(tenth), last_mean = last_sum / double(tenth);
  std::printf(
      "  HH E=1/8 verlet h=0.01, 1e6 steps: max|dH| %.3e (first tenth %.3e, last %.3e), "
      "mean dH first %.3e last %.3e, max |q| %.3f\n",
      all_max, first_max, last_max, first_mean, last_mean, std::sqrt(r2max));
  // Bounded orbit: at E < 1/6 the orbit stays inside the triangle of saddles (|q| < 1).
  EXPECT_LT(r2max, 1.0);
  // Verlet conserves a modified energy H~ = H + h^2 H_2 + O(h^4) exactly (backward error
  // analysis), so |H - E| <= h^2 max|H_2(orbit) - H_2(start)|; H_2 is a cubic form in p, grad V,
  // Hessian V (here all O(0.5)), so the bound is ~ h^2 / 10 = 1e-5. Measured max 3.7e-6; 2e-5
  // leaves a margin of 5 and fails for an O(h) scheme (~1e-3) or a drift of 2e-11 per step.
  EXPECT_LE(all_max, 2e-5);
  // No drift: the oscillation in the last tenth is no larger than in the first (factor 2 for
  // the chaotic orbit's different excursions) and its mean is inside the first tenth's band.
  EXPECT_LE(last_max, 2.0 * first_max);
  EXPECT_LE(std::abs(last_mean), first_max);
  EXPECT_LE(std::abs(last_mean - first_mean), first_max);
}

// ---------------------------------------------------------------------------------------------
// Kepler, e = 0.6: discrete Noether for Verlet, drift for RK4, energy growth for explicit Euler.
// ---------------------------------------------------------------------------------------------

TEST(Momentum, KeplerAngularMomentum) {
  const vm::Kepler<double> m{1.0};
  const long n = 100000;  // 1000 time units, 159 orbits
  const double h = 0.01;
  const double L0 = 0.4 * 2.0;

  auto v = start(m, {0.4, 0.0}, {0.0, 2.0});
  double verlet_dl = 0;
  integrate(vk::StormerVerlet<double>{}, m, v, h, n, [&](long, const Phase<double, 2>& x) {
    verlet_dl = std::max(verlet_dl, std::abs(m.angular_momentum(x.q, x.p) - L0));
  });

  auto r = start(m, {0.4, 0.0}, {0.0, 2.0});
  integrate(vk::RungeKutta4<double>{}, m, r, h, n);
  const double rk4_dl = std::abs(m.angular_momentum(r.q, r.p) - L0);

  auto e = start(m, {0.4, 0.0}, {0.0, 2.0});
  const double H0 = energy_of(m, e);  // -0.5
  const long n_euler = 2000;          // about three orbits: enough to show the growth
  integrate(vk::ExplicitEuler<double>{}, m, e, h, n_euler);
  const double euler_dh = energy_of(m, e) - H0;

  std::printf(
      "  Kepler e=0.6 h=0.01, 1e5 steps: verlet max|dL|/L %.2e, rk4 |dL|/L %.2e, "
      "explicit Euler (2000 steps) dH %+.3e\n",
      verlet_dl / L0, rk4_dl / L0, euler_dh);
  // Verlet conserves L = q x p exactly in exact arithmetic (rotation invariance of V, discrete
  // Noether); what remains is round-off accumulated over 1e5 steps, ~ sqrt(1e5) ulp ~ 1e-14.
  EXPECT_LE(verlet_dl / L0, 1e-12);
  // RK4 is not symplectic: L drifts (measured 3.9e-7 relative, against 3.4e-14 for Verlet's
  // round-off; worst-case round-off accumulation is 1e5 ulp ~ 1e-11); asserting > 1e-9 leaves a
  // factor ~400 below the measurement and 100 above round-off.
  EXPECT_GT(rk4_dl / L0, 1e-9);
  EXPECT_GT(rk4_dl / L0, 1000 * verlet_dl / L0);
  // Explicit Euler gains energy at every pericentre passage (measured +0.25 in 3 orbits, H0 =
  // -0.5; a symplectic scheme's bounded O(h) oscillation at this step is ~1e-2).
  EXPECT_GT(euler_dh, 0.05);
}

// ---------------------------------------------------------------------------------------------
// Pendulum, 1e5 steps: symplectic schemes bounded, RK4 slowly loses energy, Euler gains it.
//
// h = 0.1 (amplitude 1 rad, period 6.7: 67 steps per period). This step, larger than Stern &
// Desbrun's 0.01, makes RK4's dissipation visible: on the linearised pendulum its amplification
// factor is |R(i h w)|^2 = 1 - (h w)^6/72 + ..., a loss of ~1e-8 of the energy per step, so ~1e-3
// over 1e5 steps (measured 4.5e-4), while its O(h^4) oscillation is ~1e-6.
// ---------------------------------------------------------------------------------------------

constexpr double kPendH = 0.1;
constexpr long kPendSteps = 100000;
constexpr long kBlocks = 50;  // block means of H: 2000 steps, ~30 periods, each

struct EnergyTrace {
  double max_abs = 0, first_max = 0, last_max = 0;
  std::vector<double> block_mean;
};

template <class I>
EnergyTrace pendulum_energy_trace(const I& integrator, double h = kPendH) {
  const vm::Pendulum<double> m{1.0, 1.0};
  auto s = start(m, {1.0}, {0.0});
  const double e0 = energy_of(m, s);
  EnergyTrace t;
  const long block = kPendSteps / kBlocks, tenth = kPendSteps / 10;
  double sum = 0;
  integrate(integrator, m, s, h, kPendSteps, [&](long k, const Phase<double, 1>& x) {
    const double de = energy_of(m, x) - e0;
    t.max_abs = std::max(t.max_abs, std::abs(de));
    if (k <= tenth) t.first_max = std::max(t.first_max, std::abs(de));
    if (k > kPendSteps - tenth) t.last_max = std::max(t.last_max, std::abs(de));
    sum += de;
    if (k % block == 0) {
      t.block_mean.push_back(sum / double(block));
      sum = 0;
    }
  });
  return t;
}

template <class I>
void expect_bounded(const I& integrator, int order, double bound, const char* label,
                    double h = kPendH) {
  const EnergyTrace t = pendulum_energy_trace(integrator, h);
  std::printf("  pendulum h=%.2g %-20s max|dH| %.3e (first tenth %.3e, last %.3e)\n", h, label,
              t.max_abs, t.first_max, t.last_max);
  EXPECT_LE(t.max_abs, bound) << label << " (order " << order << ")";
  EXPECT_LE(t.last_max, 1.5 * t.first_max) << label << ": energy error drifts";
}

TEST(EnergyBehaviour, PendulumSymplecticBounded) {
  // Bounds: the modified-energy argument gives |dH| <= C h^p; measured max |dH| at h = 0.1:
  // symplectic Euler 2.3e-2, Verlet/Newmark 1.06e-3, yoshida4 3.9e-6, yoshida6 2.7e-9. Each bound
  // is about 3x the measurement, so an error of one order lower (10x larger at h = 0.1) fails.
  // Drift check: the last tenth's max within 1.5x of the first tenth's (the pendulum is
  // integrable, so the bounded oscillation repeats).
  expect_bounded(vk::SymplecticEulerA<double>{}, 1, 7e-2, "symplectic_euler_a");
  expect_bounded(vk::SymplecticEulerB<double>{}, 1, 7e-2, "symplectic_euler_b");
  expect_bounded(vk::StormerVerlet<double>{}, 2, 3e-3, "verlet");
  expect_bounded(vk::Newmark<double>{0.5, 0.0}, 2, 3e-3, "newmark gamma=0.5");
  expect_bounded(vk::Yoshida4<double>{}, 4, 1.2e-5, "yoshida4");
  expect_bounded(vk::Yoshida6<double>{}, 6, 1e-8, "yoshida6");
}

TEST(EnergyBehaviour, PendulumHighOrderBounded) {
  // At h = 0.1 these schemes' energy errors (~1e-12 and below) would be buried in the round-off of
  // 1e5 steps of 17 or 35 substeps, which grows like sqrt(t) and would fail the drift check; at
  // h = 0.5 (13 steps per period) the bounded O(h^p) oscillation is well above it. Measured max
  // |dH|: blanes_moan6 3.9e-10 (at h = 0.1 it is already round-off, 5.6e-14, where yoshida6 has
  // 2.7e-9), kahan_li8 9.6e-9, sofspa10 1.25e-11; bounds about 3x, drift check as above.
  expect_bounded(vk::BlanesMoan6<double>{}, 6, 1.2e-9, "blanes_moan6", 0.5);
  expect_bounded(vk::KahanLi8<double>{}, 8, 3e-8, "kahan_li8", 0.5);
  expect_bounded(vk::SofSpa10<double>{}, 10, 4e-11, "sofspa10", 0.5);
  expect_bounded(gauss<double>(2), 4, 1e-3, "gauss s=2", 0.5);
  expect_bounded(gauss<double>(4), 8, 1e-3, "gauss s=4", 0.5);
}

TEST(EnergyBehaviour, PendulumRk4LosesEnergyMonotonically) {
  const EnergyTrace t = pendulum_energy_trace(vk::RungeKutta4<double>{});
  int rises = 0;
  for (std::size_t b = 1; b < t.block_mean.size(); ++b)
    if (t.block_mean[b] >= t.block_mean[b - 1]) ++rises;
  const double total = t.block_mean.back() - t.block_mean.front();
  std::printf("  pendulum h=0.1 rk4: block-mean dH %.3e -> %.3e, %d rises in %zu blocks\n",
              t.block_mean.front(), t.block_mean.back(), rises, t.block_mean.size());
  // Every one of the 50 block means (each over ~30 periods, which averages the bounded
  // oscillation) lies below the previous one: a slow, steady loss.
  EXPECT_EQ(rises, 0);
  EXPECT_LT(total, 0.0);
  // The loss is far beyond the scheme's O(h^4) oscillation (first block's |mean|).
  EXPECT_GT(-total, 10 * std::abs(t.block_mean.front()));
}

TEST(EnergyBehaviour, PendulumExplicitEulerGainsEnergy) {
  const EnergyTrace t = pendulum_energy_trace(vk::ExplicitEuler<double>{});
  int falls = 0;
  for (std::size_t b = 1; b < t.block_mean.size(); ++b)
    if (t.block_mean[b] <= t.block_mean[b - 1]) ++falls;
  std::printf("  pendulum h=0.1 explicit_euler: block-mean dH %.3e -> %.3e, %d falls\n",
              t.block_mean.front(), t.block_mean.back(), falls);
  // Per step explicit Euler multiplies the linearised energy by 1 + h^2 w^2 > 1: it only grows.
  EXPECT_EQ(falls, 0);
  EXPECT_GT(t.block_mean.back(), t.block_mean.front());
}

// ---------------------------------------------------------------------------------------------
// float instantiations compile and track double.
// ---------------------------------------------------------------------------------------------

template <template <class> class I>
double float_vs_double(const I<float>& fi, const I<double>& di) {
  const vm::Pendulum<float> mf{1.0f, 1.0f};
  const vm::Pendulum<double> md{1.0, 1.0};
  auto sf = start<vm::Pendulum<float>, float>(mf, {1.0}, {0.0});
  auto sd = start(md, {1.0}, {0.0});
  integrate(fi, mf, sf, 0.01f, 100);
  integrate(di, md, sd, 0.01, 100);
  return state_distance(sf, sd);
}

TEST(Precision, FloatTracksDouble) {
  // 100 steps of rounding at float epsilon 6e-8 on O(1) values: a random walk gives ~1e-6, a
  // systematic worst case 100 x 6e-8 x (a few operations) ~ 1e-5. Also covers h = 0.01f itself
  // not being 0.01 (relative 1e-8 -> 1e-8 in the state).
  const double tol = 1e-5;
  double d;
  double worst = 0;
  d = float_vs_double<vk::StormerVerlet>({}, {});
  EXPECT_LE(d, tol) << "verlet";
  worst = std::max(worst, d);
  d = float_vs_double<vk::SymplecticEulerA>({}, {});
  EXPECT_LE(d, tol) << "symplectic_euler_a";
  worst = std::max(worst, d);
  d = float_vs_double<vk::SymplecticEulerB>({}, {});
  EXPECT_LE(d, tol) << "symplectic_euler_b";
  worst = std::max(worst, d);
  d = float_vs_double<vk::Newmark>({0.7f, 0.0f}, {0.7, 0.0});
  EXPECT_LE(d, tol) << "newmark";
  worst = std::max(worst, d);
  d = float_vs_double<vk::Yoshida4>({}, {});
  EXPECT_LE(d, tol) << "yoshida4";
  worst = std::max(worst, d);
  d = float_vs_double<vk::Yoshida6>({}, {});
  EXPECT_LE(d, tol) << "yoshida6";
  worst = std::max(worst, d);
  d = float_vs_double<vk::BlanesMoan6>({}, {});
  EXPECT_LE(d, tol) << "blanes_moan6";
  worst = std::max(worst, d);
  d = float_vs_double<vk::KahanLi8>({}, {});
  EXPECT_LE(d, tol) << "kahan_li8";
  worst = std::max(worst, d);
  d = float_vs_double<vk::SofSpa10>({}, {});
  EXPECT_LE(d, tol) << "sofspa10";
  worst = std::max(worst, d);
  d = float_vs_double<vk::ExplicitEuler>({}, {});
  EXPECT_LE(d, tol) << "explicit_euler";
  worst = std::max(worst, d);
  d = float_vs_double<vk::RungeKutta4>({}, {});
  EXPECT_LE(d, tol) << "rk4";
  worst = std::max(worst, d);
  std::printf("  float vs double, pendulum, 100 steps of 0.01: worst max-component gap %.2e\n",
              worst);
}

// ---------------------------------------------------------------------------------------------
// Area preservation: the Jacobian of 100 steps, by forward-mode AD through the steps themselves
// (Real = Dual), has determinant 1 for the symplectic schemes (sufficient in one degree of
// freedom) and not for the controls. Pendulum, q = 1, p = 0, h = 0.1.
// ---------------------------------------------------------------------------------------------

template <template <class> class I>
double det_minus_one(const I<vk::Dual<double, 2>>& integrator) {
  using D = vk::Dual<double, 2>;
  // The model on the integrator's Real, as the engines instantiate them (Newmark's implicit
  // branch differentiates the potential twice more, which needs the constants in D).
  const vm::Pendulum<D> m{D(1.0), D(1.0)};
  Phase<D, 1> s;
  s.q[0] = D::variable(1.0, 0);
  s.p[0] = D::variable(0.0, 1);
  vk::refresh_force(m, s);
  integrate(integrator, m, s, D(0.1), 100);
  return s.q[0].d[0] * s.p[0].d[1] - s.q[0].d[1] * s.p[0].d[0] - 1.0;
}

TEST(Symplecticity, OneDofJacobianDeterminant) {
  using D = vk::Dual<double, 2>;
  // Symplectic: exact in exact arithmetic; the derivative recurrences round at ~eps per step on
  // O(1) entries, so 100 steps (700 substeps for yoshida6, 3500 for sofspa10) stay below ~1e-13
  // (measured <= 4e-15).
  const double tol = 1e-13;
  EXPECT_LE(std::abs(det_minus_one<vk::StormerVerlet>({})), tol);
  EXPECT_LE(std::abs(det_minus_one<vk::SymplecticEulerA>({})), tol);
  EXPECT_LE(std::abs(det_minus_one<vk::SymplecticEulerB>({})), tol);
  EXPECT_LE(std::abs(det_minus_one<vk::Newmark>({D(0.5), D(0.0)})), tol);
  EXPECT_LE(std::abs(det_minus_one<vk::Yoshida4>({})), tol);
  EXPECT_LE(std::abs(det_minus_one<vk::Yoshida6>({})), tol);
  EXPECT_LE(std::abs(det_minus_one<vk::BlanesMoan6>({})), tol);
  EXPECT_LE(std::abs(det_minus_one<vk::KahanLi8>({})), tol);
  EXPECT_LE(std::abs(det_minus_one<vk::SofSpa10>({})), tol);
  for (int stages : {1, 2, 4, 8})
    EXPECT_LE(std::abs(det_minus_one<vk::Gauss>(gauss<vk::Dual<double, 2>>(stages))), tol)
        << "gauss s = " << stages;
  // Controls (measured): explicit Euler +0.91, Newmark gamma = 0.7 -0.14, RK4 -8.0e-7 (its
  // per-step defect is O(h^5)); 1e-8 is 80x below the smallest and 1e5x above round-off.
  const double ee = det_minus_one<vk::ExplicitEuler>({});
  const double nm = det_minus_one<vk::Newmark>({D(0.7), D(0.0)});
  const double rk = det_minus_one<vk::RungeKutta4>({});
  std::printf("  det - 1 after 100 steps: explicit_euler %+.2e, newmark 0.7 %+.2e, rk4 %+.2e\n", ee,
              nm, rk);
  EXPECT_GT(ee, 1e-8);   // area expands
  EXPECT_LT(nm, -1e-8);  // area contracts (numerical damping)
  EXPECT_GT(std::abs(rk), 1e-8);
}

// ---------------------------------------------------------------------------------------------
// The cached-force invariant: after every step s.f == force(m, s.q) exactly.
// ---------------------------------------------------------------------------------------------

template <class I>
void expect_force_cached(const I& integrator, const char* label) {
  const vm::HenonHeiles<double> m{1.0, -1.0 / 3.0};
  auto s = start(m, {0.0, 0.1}, {0.45, 0.1});
  for (int k = 0; k < 50; ++k) {
    vk::take_step(integrator, m, s, 0.05, 0.0);
    const auto f = vk::force(m, s.q);
    ASSERT_EQ(s.f[0], f[0]) << label;
    ASSERT_EQ(s.f[1], f[1]) << label;
  }
}

TEST(Invariant, ForceCachedAfterEveryStep) {
  expect_force_cached(vk::StormerVerlet<double>{}, "verlet");
  expect_force_cached(vk::SymplecticEulerA<double>{}, "symplectic_euler_a");
  expect_force_cached(vk::SymplecticEulerB<double>{}, "symplectic_euler_b");
  expect_force_cached(vk::Newmark<double>{0.7, 0.0}, "newmark");
  expect_force_cached(vk::Yoshida4<double>{}, "yoshida4");
  expect_force_cached(vk::Yoshida6<double>{}, "yoshida6");
  expect_force_cached(vk::BlanesMoan6<double>{}, "blanes_moan6");
  expect_force_cached(vk::KahanLi8<double>{}, "kahan_li8");
  expect_force_cached(vk::SofSpa10<double>{}, "sofspa10");
  expect_force_cached(gauss<double>(4), "gauss");
  expect_force_cached(vk::ExplicitEuler<double>{}, "explicit_euler");
  expect_force_cached(vk::RungeKutta4<double>{}, "rk4");
}

}  // namespace
