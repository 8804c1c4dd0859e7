/// @file test_invariants.cpp
/// @brief The cloud tests of phase-space area, the first Poincaré integral invariant and phase
/// volume (host/output/invariants.hpp; the loop and parallelepiped ensembles).
///
/// Quadratures on exact curves; the generated clouds; end-to-end runs in which symplectic schemes
/// keep the loop's invariant to round-off while the controls (explicit Euler, RK4, Newmark with
/// gamma != 1/2) change it by the amounts their one-step Jacobian determinants predict; and every
/// new key's bad input, which exits 2 naming the key.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/output/invariants.hpp"
#include "host/run/run.hpp"
#include "kernels/sections.hpp"
#include "tests/scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace vigor::host;
using Json = nlohmann::ordered_json;

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kEps = std::numeric_limits<double>::epsilon();

struct Curve {
  std::vector<double> x, y;
};

Curve ellipse(std::size_t n, double cx, double cy, double a, double b) {
  Curve c;
  for (std::size_t j = 0; j < n; ++j) {
    const double th = 2 * kPi * double(j) / double(n);
    c.x.push_back(cx + a * std::cos(th));
    c.y.push_back(cy + b * std::sin(th));
  }
  return c;
}

/// x = cos(theta), y = exp(sin(theta)): analytic but not a trigonometric polynomial. Its area
/// ∮ x dy = ∫ cos^2(theta) exp(sin(theta)) dtheta = 2 pi I_1(1) (d^2/dz^2 of 2 pi I_0(z) gives
/// ∫ sin^2 e^{z sin}, and I_0'' = I_0 - I_1 / z).
Curve exp_sin_curve(std::size_t n) {
  Curve c;
  for (std::size_t j = 0; j < n; ++j) {
    const double th = 2 * kPi * double(j) / double(n);
    c.x.push_back(std::cos(th));
    c.y.push_back(std::exp(std::sin(th)));
  }
  return c;
}
const double kExpSinArea = 2 * kPi * std::cyl_bessel_i(1.0, 1.0);

// --- Quadratures on exact curves ----------------------------------------------------------------

TEST(LoopQuadrature, SpectralCircleAndEllipseAreExactToRoundOff) {
  // Circles and ellipses are trigonometric polynomials of degree 1: the spectral rule is exact
  // from N = 3, so what is left is round-off of the transform, a few eps relative to the
  // coordinates' size (center 1.3 against radius 0.3: about 4x), here bounded by 64 eps.
  for (std::size_t n : {16u, 24u, 64u, 1000u, 1024u}) {
    const Curve c = ellipse(n, 1.3, -0.7, 0.3, 0.3);
    const double area = kPi * 0.09;
    EXPECT_NEAR(loop_area(c.x, c.y, true), area, 64 * kEps * area) << n;
    // The Poincaré invariant of a counterclockwise loop in the (q, p) plane is minus its area.
    EXPECT_NEAR(loop_integral_spectral(c.y, c.x), -area, 64 * kEps * area) << n;
    const Curve e = ellipse(n, -2.0, 0.5, 0.4, 0.05);
    EXPECT_NEAR(loop_area(e.x, e.y, true), kPi * 0.4 * 0.05, 64 * kEps * kPi * 0.02) << n;
  }
}

TEST(LoopQuadrature, SpectralConvergesExponentiallyTrapezoidAtSecondOrder) {
  // The spectral rule's error on an analytic loop falls like its Fourier coefficients (here
  // ~ 1 / (2^N N!)): measured 0.14 at N = 4, 1.0e-5 at 8, 7.9e-11 at 12, round-off (< 1e-15)
  // from 16 on. A power law N^-p would need p > 22 for the factor 1e4 from 8 to 12 points.
  // The chord (shoelace) rule is second order: error ratio 4 per doubling (3.91, 3.98, 4.00 ...
  // measured from N = 8 on).
  std::vector<double> spectral, chord;
  for (std::size_t n : {4u, 8u, 12u, 16u, 32u}) {
    const Curve c = exp_sin_curve(n);
    spectral.push_back(std::fabs(loop_area(c.x, c.y, true) - kExpSinArea));
  }
  for (std::size_t n : {8u, 16u, 32u, 64u, 128u}) {
    const Curve c = exp_sin_curve(n);
    chord.push_back(std::fabs(loop_area(c.x, c.y, false) - kExpSinArea));
  }
  EXPECT_GT(spectral[0], 0.1);
  EXPECT_LT(spectral[1], 2e-5);
  EXPECT_LT(spectral[2], 2e-10);
  EXPECT_GT(spectral[0] / spectral[1], 1e4);
  EXPECT_GT(spectral[1] / spectral[2], 1e4);
  // Round-off: a few eps of the area 3.55.
  EXPECT_LT(spectral[3], 1e-14);
  EXPECT_LT(spectral[4], 1e-14);
  for (std::size_t k = 1; k < chord.size(); ++k)
    EXPECT_NEAR(chord[k - 1] / chord[k], 4.0, 0.15) << "chord rule, doubling " << k;
  // The O(N^2) transform (N not a power of two) agrees with the FFT.
  const Curve c24 = exp_sin_curve(24);
  EXPECT_NEAR(loop_area(c24.x, c24.y, true), kExpSinArea, 1e-13);
}

TEST(LoopQuadrature, ShoelaceIsExactOnPolygons) {
  // An irregular pentagon with extra points on its edges: the chord rule is exact for any
  // polygon through the points, so the area and ∮ p dq agree with the vertex shoelace to
  // round-off.
  const std::vector<double> vx{0.0, 2.0, 2.5, 1.0, -0.5}, vy{0.0, -0.2, 1.0, 2.0, 1.1};
  double twice = 0;
  for (std::size_t k = 0; k < 5; ++k) twice += vx[k] * vy[(k + 1) % 5] - vx[(k + 1) % 5] * vy[k];
  std::vector<double> x, y;
  for (std::size_t k = 0; k < 5; ++k)
    for (int m = 0; m < 7; ++m) {
      const double f = m / 7.0;
      x.push_back(vx[k] + f * (vx[(k + 1) % 5] - vx[k]));
      y.push_back(vy[k] + f * (vy[(k + 1) % 5] - vy[k]));
    }
  EXPECT_NEAR(loop_area(x, y, false), 0.5 * twice, 16 * kEps * std::fabs(twice));
  EXPECT_NEAR(loop_integral_trapezoid(y, x), -0.5 * twice, 16 * kEps * std::fabs(twice));
}

TEST(LoopQuadrature, DeterminantWithPivoting) {
  // A zero leading pivot forces a row exchange; det = -(2 * 3 * 4) after sorting out the swap.
  EXPECT_DOUBLE_EQ(determinant({0, 2, 0, 3, 0, 0, 0, 0, 4}, 3), -24.0);
  EXPECT_DOUBLE_EQ(determinant({1, 2, 3, 4}, 2), -2.0);
  EXPECT_EQ(determinant({1, 2, 2, 4}, 2), 0.0);
}

// --- Generated clouds ---------------------------------------------------------------------------

Json loop_job(const std::string& model, const std::string& integrator, double dt,
              std::int64_t steps, const Json& loop) {
  Json j;
  j["model"] = {{"name", model}};
  j["integrator"] = {{"name", integrator}, {"dt", dt}};
  j["steps"] = steps;
  j["ensemble"] = {{"loop", loop}};
  j["backend"] = "cpu";
  j["output"] = {{"dir", "unused"}};
  return j;
}

Json circle(const std::vector<double>& center, double r, int n, int every) {
  return {{"center", center}, {"plane", {"q0", "p0"}}, {"shape", "circle"},
          {"radius", r},      {"points", n},           {"every", every}};
}

TEST(CloudEnsemble, LoopPointsAndItsSection) {
  const Job job = parse_job(
      loop_job("henon_heiles", "verlet", 0.01, 1000, circle({0.0, 0.1, 0.35, 0.0}, 0.02, 16, 100))
          .dump());
  ASSERT_EQ(job.ensemble.count, 16);
  EXPECT_EQ(job.ensemble.sampling.kind, "loop");
  // Point j at theta_j = 2 pi j / 16 in the (q0, p0) plane, the other coordinates the center's.
  for (int j = 0; j < 16; ++j) {
    const double th = 2 * kPi * j / 16;
    EXPECT_NEAR(job.ensemble.state[0 * 16 + j], 0.02 * std::cos(th), 1e-17);
    EXPECT_EQ(job.ensemble.state[1 * 16 + j], 0.1);
    EXPECT_NEAR(job.ensemble.state[2 * 16 + j], 0.35 + 0.02 * std::sin(th), 1e-16);
    EXPECT_EQ(job.ensemble.state[3 * 16 + j], 0.0);
  }
  // The cloud installs a stroboscopic section that records every sample.
  EXPECT_TRUE(job.has_section());
  EXPECT_EQ(job.integration.section.kind, vigor::kernels::kSectionStroboscopic);
  EXPECT_EQ(job.integration.section.every, 100);
  EXPECT_EQ(job.integration.section.max_crossings, 10);
}

TEST(CloudEnsemble, PolygonSpreadsPointsByLengthWithEveryVertex) {
  // Edges of length 3, 1, 3, 1 (perimeter 8) and 16 points: 4 vertices + 12 spread as 4.5, 1.5,
  // 4.5, 1.5 -> largest remainders -> per edge 6 or 5, 2 or 3 ... every vertex among the points.
  Json loop = {{"center", {0.0, 0.0}}, {"plane", {"q0", "p0"}},
               {"shape", "polygon"},   {"vertices", {{0, 0}, {3, 0}, {3, 1}, {0, 1}}},
               {"points", 16},         {"every", 1}};
  const Job job = parse_job(loop_job("harmonic_oscillator", "verlet", 0.1, 10, loop).dump());
  ASSERT_EQ(job.ensemble.count, 16);
  const double* x = job.ensemble.state.data();
  const double* y = x + 16;
  int vertices = 0;
  for (int j = 0; j < 16; ++j) {
    const bool corner = (x[j] == 0 || x[j] == 3) && (y[j] == 0 || y[j] == 1);
    vertices += corner ? 1 : 0;
    // Every point on the rectangle's boundary.
    EXPECT_TRUE(x[j] == 0 || x[j] == 3 || y[j] == 0 || y[j] == 1) << j;
  }
  EXPECT_EQ(vertices, 4);
  EXPECT_EQ(x[0], 0.0);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_DOUBLE_EQ(loop_area({x, 16}, {y, 16}, false), 3.0);
}

TEST(CloudEnsemble, ParallelepipedIsCenterAndItsEdges) {
  Json j = loop_job("henon_heiles", "verlet", 0.01, 100, {});
  j["ensemble"] = {
      {"parallelepiped",
       {{"center", {0.0, 0.1, 0.35, 0.0}}, {"edge", {1e-6, 2e-6, 3e-6, 4e-6}}, {"every", 10}}}};
  const Job job = parse_job(j.dump());
  ASSERT_EQ(job.ensemble.count, 5);
  const std::vector<double> c{0.0, 0.1, 0.35, 0.0};
  for (int comp = 0; comp < 4; ++comp)
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(job.ensemble.state[std::size_t(comp * 5 + i)],
                c[std::size_t(comp)] + (i == comp + 1 ? 1e-6 * (comp + 1) : 0.0));
  EXPECT_EQ(job.integration.section.max_crossings, 10);
}

// --- End to end ---------------------------------------------------------------------------------

struct TempDir : ScratchDir {
  explicit TempDir(const std::string& name) : ScratchDir("invariants-" + name, false) {}
};

struct Series {
  Json summary;                           ///< summary.json's "invariants"
  std::vector<std::vector<double>> rows;  ///< invariants.csv
  std::string header;
};

Series run_cloud(Json j, const std::string& name) {
  const TempDir dir(name);
  j["output"] = {{"dir", (dir.path / "out").string()}};
  const Job job = parse_job(j.dump());
  RunOptions opt;
  opt.quiet = true;
  const Json summary = run_job(job, opt, false);
  Series s;
  s.summary = summary.at("invariants");
  std::ifstream in(dir.path / "out" / "invariants.csv");
  std::getline(in, s.header);
  for (std::string line; std::getline(in, line);) {
    std::vector<double> row;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');)
      row.push_back(cell == "nan" ? std::numeric_limits<double>::quiet_NaN() : std::stod(cell));
    s.rows.push_back(row);
  }
  return s;
}

/// max |column| over the rows.
double max_abs(const Series& s, std::size_t column) {
  double m = 0;
  for (const auto& r : s.rows) m = std::max(m, std::fabs(r.at(column)));
  return m;
}

// Pendulum (m = l = g = 1, small-swing frequency 1), a circle of radius 0.05 around the libration
// point (q, p) = (0.2, 0): dt = 0.02, 10^4 steps (T = 200, about 32 periods), 256 points, 20
// samples. The loop shears (the frequency depends on the amplitude) but stays resolved.
constexpr double kPendDt = 0.02;
constexpr std::int64_t kPendSteps = 10000;

Json pendulum_loop(const std::string& integrator) {
  return loop_job("pendulum", integrator, kPendDt, kPendSteps, circle({0.2, 0.0}, 0.05, 256, 500));
}

TEST(CloudRun, SymplecticSchemesKeepThePendulumLoopAreaToRoundOff) {
  // An exactly symplectic map keeps the area of any closed curve; what remains is round-off in
  // the steps, a random walk of about sqrt(10^4) eps ~ 1e-14 in the points, amplified by
  // |x| / r ~ 5 in the area: ~5e-14. Measured max |dA/A|: verlet 2.7e-15, symplectic_euler_a
  // 6.6e-16, yoshida4 3.1e-15, midpoint (3 Newton iterations, residual at round-off) 1.3e-14.
  // Bound 1e-12: margin 80 over the largest.
  for (const char* integrator : {"verlet", "symplectic_euler_a", "yoshida4", "midpoint"}) {
    const Series s = run_cloud(pendulum_loop(integrator), integrator);
    ASSERT_EQ(s.header, "t,area,area_relative_change,poincare_invariant,poincare_relative_change");
    ASSERT_EQ(s.rows.size(), 21u);
    EXPECT_EQ(s.summary["valid_samples"], 21);
    EXPECT_NEAR(s.rows[0][1], kPi * 0.0025, 1e-15);
    EXPECT_LT(max_abs(s, 2), 1e-12) << integrator;
    EXPECT_LT(max_abs(s, 4), 1e-12) << integrator;
    EXPECT_LT(s.summary["area_relative_change_max"].get<double>(), 1e-12) << integrator;
    // One degree of freedom: the Poincaré invariant is minus the (q, p) area.
    EXPECT_NEAR(s.rows.back()[3], -s.rows.back()[1], 1e-16);
  }
}

TEST(CloudRun, ControlsChangeThePendulumLoopAreaAsTheirJacobiansPredict) {
  const double h2 = kPendDt * kPendDt;
  const double n = double(kPendSteps);
  // Explicit Euler: the one-step Jacobian [[1, h], [-h cos q, 1]] has det 1 + h^2 cos q, so for
  // small swings (cos q > 0) the area grows at every sample, and by at most (1 + h^2)^n - 1 =
  // 53.6 (cos q <= 1). Measured: 32.8 after 10^4 steps (the swing grows, <cos q> falls).
  const Series euler = run_cloud(pendulum_loop("explicit_euler"), "euler");
  for (std::size_t k = 1; k < euler.rows.size(); ++k)
    EXPECT_GT(euler.rows[k][1], euler.rows[k - 1][1]) << "sample " << k;
  const double euler_change = euler.rows.back()[2];
  EXPECT_GT(euler_change, 1.0);
  EXPECT_LT(euler_change, std::pow(1 + h2, n) - 1);

  // RK4: det of its one-step map on a linear oscillator of frequency w is
  // 1 - (hw)^6/72 + (hw)^8/576, so n steps lose at most n h^6 / 72 = 8.9e-9 (w^2 = cos q <= 1),
  // and at least half of it for swings below 0.25 rad (cos^3 q > 0.9). Measured 8.6e-9: four
  // orders above the symplectic schemes' round-off, nine below explicit Euler's change.
  const Series rk4 = run_cloud(pendulum_loop("rk4"), "rk4");
  const double rk4_change = rk4.rows.back()[2];
  const double rk4_bound = n * std::pow(kPendDt, 6) / 72;
  EXPECT_LT(rk4_change, -0.5 * rk4_bound);
  EXPECT_GT(rk4_change, -1.01 * rk4_bound);
  EXPECT_LT(std::fabs(rk4_change), 1e-6 * euler_change);

  // Newmark with gamma = 0.6, beta = 0: det = 1 - (gamma - 1/2) h^2 w^2 per step (numerical
  // damping), so the area contracts by 1 - (1 - 0.1 h^2 cos q)^n: between 0.3215 (cos 0.25)
  // and 0.3297 (cos 0). Measured 0.3274; 1 % slack for the O(h^3) terms of the nonlinear step.
  Json j = pendulum_loop("newmark");
  j["integrator"]["gamma"] = 0.6;
  const Series newmark = run_cloud(j, "newmark");
  const double newmark_change = newmark.rows.back()[2];
  EXPECT_LT(newmark_change, -0.99 * (1 - std::pow(1 - 0.1 * h2 * std::cos(0.25), n)));
  EXPECT_GT(newmark_change, -1.01 * (1 - std::pow(1 - 0.1 * h2, n)));
}

TEST(CloudRun, LinearOscillatorMatchesTheClosedFormAreaFactors) {
  // On the harmonic oscillator (w = 1) every scheme is a fixed linear map: the ellipse stays an
  // ellipse (so the spectral rule is exact) and its area is multiplied by det^n exactly, det =
  // 1 + h^2 (explicit Euler), 1 - h^6/72 + h^8/576 (RK4), 1 - (gamma - 1/2) h^2 (Newmark,
  // beta = 0). Measured agreement: 4e-13 (Euler, relative), 4e-16 (RK4, absolute), 1e-13
  // (Newmark, relative); bounds 1e-10 relative and 1e-13 absolute.
  const double h = 0.02, n = 10000;
  Json loop = {{"center", {0.7, -0.2}}, {"plane", {"q0", "p0"}}, {"shape", "ellipse"},
               {"radii", {0.3, 0.1}},   {"points", 64},          {"every", 1000}};
  struct Case {
    const char* integrator;
    double gamma;
    double det;
  };
  for (const Case& c : {Case{"explicit_euler", 0, 1 + h * h},
                        Case{"rk4", 0, 1 - std::pow(h, 6) / 72 + std::pow(h, 8) / 576},
                        Case{"newmark", 0.6, 1 - 0.1 * h * h}, Case{"verlet", 0, 1.0}}) {
    Json j = loop_job("harmonic_oscillator", c.integrator, h, std::int64_t(n), loop);
    if (c.gamma > 0) j["integrator"]["gamma"] = c.gamma;
    const Series s = run_cloud(j, std::string("ho-") + c.integrator);
    const double predicted = std::pow(c.det, n) - 1;
    const double got = s.rows.back()[2];
    EXPECT_NEAR(got, predicted, 1e-10 * std::fabs(predicted) + 1e-13) << c.integrator;
  }
}

TEST(CloudRun, PolygonLoopOnTheLinearOscillator) {
  // A linear map keeps a polygon's edges straight, so the chord rule stays exact: Verlet keeps
  // the triangle's area to round-off (measured < 1e-14), explicit Euler multiplies it by
  // (1 + h^2)^n.
  Json loop = {{"center", {0.0, 0.0}}, {"plane", {"q0", "p0"}},
               {"shape", "polygon"},   {"vertices", {{0.5, 0.0}, {1.0, 0.2}, {0.6, 0.7}}},
               {"points", 30},         {"every", 500}};
  const Series verlet =
      run_cloud(loop_job("harmonic_oscillator", "verlet", 0.05, 2000, loop), "poly-verlet");
  EXPECT_EQ(verlet.summary["quadrature"], "trapezoid");
  // Shoelace of the vertices: (0.1 + 0.7 - 0.12 - 0.35) / 2.
  EXPECT_NEAR(verlet.rows[0][1], 0.165, 1e-15);
  EXPECT_LT(max_abs(verlet, 2), 1e-12);
  const Series euler =
      run_cloud(loop_job("harmonic_oscillator", "explicit_euler", 0.05, 2000, loop), "poly-euler");
  const double predicted = std::pow(1 + 0.0025, 2000) - 1;
  EXPECT_NEAR(euler.rows.back()[2], predicted, 1e-10 * predicted);
}

TEST(CloudRun, HenonHeilesPoincareInvariantNotTheProjectedArea) {
  // Two degrees of freedom: only I = ∮ p0 dq0 + ∮ p1 dq1 is invariant; the loop's area projected
  // on (q0, p0) is not (energy flows into the other degree of freedom). Circle of radius 0.02 in
  // (q0, p0) about (0, 0.1, 0.35, 0) (E = 0.071), dt = 0.01, 10^4 steps, 256 points.
  // Measured (Verlet): |dI|/|I| max 3.4e-14 while the projected area changes by 2.2 (219 %).
  // Explicit Euler: |dI|/|I| = 1.9.
  const Json loop = circle({0.0, 0.1, 0.35, 0.0}, 0.02, 256, 1000);
  const Series verlet = run_cloud(loop_job("henon_heiles", "verlet", 0.01, 10000, loop), "hh");
  EXPECT_LT(verlet.summary["poincare_relative_change_max"].get<double>(), 1e-12);
  EXPECT_GT(verlet.summary["area_relative_change_max"].get<double>(), 0.5);
  const Series euler =
      run_cloud(loop_job("henon_heiles", "explicit_euler", 0.01, 10000, loop), "hh-euler");
  EXPECT_GT(euler.summary["poincare_relative_change_max"].get<double>(), 0.5);
}

Json parallelepiped_job(const std::string& model, const std::vector<double>& center,
                        const std::string& integrator, double dt, double eps) {
  Json j = loop_job(model, integrator, dt, 10000, {});
  j["ensemble"] = {{"parallelepiped", {{"center", center}, {"edge", eps}, {"every", 1000}}}};
  return j;
}

TEST(CloudRun, ParallelepipedVolume) {
  // Linear oscillator: the edges map exactly by the one-step matrix, so Verlet's ratio is 1 up to
  // round-off in the edge vectors, ~ eps_mach |x| / eps per step, a random walk over 10^4 steps:
  // 1.1e-16 * 0.73 / 1e-4 * 100 = 8e-11 (measured 7.8e-11); bound 1e-9.
  const std::vector<double> ho{0.7, -0.2};
  const Series ho_verlet =
      run_cloud(parallelepiped_job("harmonic_oscillator", ho, "verlet", 0.02, 1e-4), "ho-ppd");
  EXPECT_EQ(ho_verlet.header, "t,volume_ratio,volume_relative_change");
  EXPECT_LT(ho_verlet.summary["volume_relative_change_max"].get<double>(), 1e-9);
  const Series ho_euler = run_cloud(
      parallelepiped_job("harmonic_oscillator", ho, "explicit_euler", 0.02, 1e-4), "ho-ppd-e");
  const double predicted = std::pow(1 + 0.0004, 10000) - 1;
  EXPECT_NEAR(ho_euler.rows.back()[2], predicted, 1e-9 * predicted);

  // Hénon–Heiles (nonlinear, 4-D): x_c - x_0 = J eps e_c + O(eps^2), so the ratio of finite
  // edges differs from det J = 1 by O(eps) even for an exactly symplectic map. Measured (Verlet,
  // T = 100): 9.76e-4 at eps = 1e-5 and 9.78e-5 at 1e-6, i.e. 97.6 eps: first order in eps (a
  // defect of the map would not scale with eps). Bound 200 eps, and a ratio of 10 +- 1 between
  // the two edges. Explicit Euler: 5.0 and 5.5, not scaling with eps.
  const std::vector<double> hh{0.0, 0.1, 0.35, 0.0};
  const double a = run_cloud(parallelepiped_job("henon_heiles", hh, "verlet", 0.01, 1e-5), "p5")
                       .summary["volume_relative_change_max"];
  const double b = run_cloud(parallelepiped_job("henon_heiles", hh, "verlet", 0.01, 1e-6), "p6")
                       .summary["volume_relative_change_max"];
  EXPECT_LT(b, 200 * 1e-6);
  EXPECT_NEAR(a / b, 10.0, 1.0);
  const double e =
      run_cloud(parallelepiped_job("henon_heiles", hh, "explicit_euler", 0.01, 1e-6), "pe")
          .summary["volume_relative_change_max"];
  EXPECT_GT(e, 1.0);
}

TEST(CloudRun, StoppedTrajectoriesMakeLaterSamplesNaN) {
  // Explicit Euler on the oscillator grows |q| by (1 + h^2)^(n/2) = e^10 over 2000 steps of 0.1:
  // every point passes the escape radius 10 (around step 450); samples after the first escape
  // are NaN, the earlier ones valid.
  Json j = loop_job("harmonic_oscillator", "explicit_euler", 0.1, 2000,
                    circle({1.0, 0.0}, 0.5, 32, 100));
  j["escape_radius"] = 10.0;
  const Series s = run_cloud(j, "escape");
  ASSERT_EQ(s.rows.size(), 21u);
  const int valid = s.summary["valid_samples"];
  EXPECT_GT(valid, 1);
  EXPECT_LT(valid, 21);
  EXPECT_EQ(s.summary["stopped_trajectories"], 32);
  EXPECT_TRUE(s.summary.contains("note"));
  for (int k = 0; k < 21; ++k) EXPECT_EQ(std::isnan(s.rows[std::size_t(k)][1]), k >= valid) << k;
}

// --- Bad input: exit 2 naming the key --------------------------------------------------------

struct Bad {
  std::string name;
  Json job;
  std::string path;  ///< must follow "error: " on stderr
};

Json good_loop_job() {
  return loop_job("pendulum", "verlet", 0.1, 100, circle({0.2, 0.0}, 0.05, 16, 10));
}

std::vector<Bad> bad_cases() {
  std::vector<Bad> v;
  auto edit = [&](const std::string& name, const std::string& path, auto f) {
    Json j = good_loop_job();
    f(j["ensemble"]["loop"]);
    v.push_back({name, j, path});
  };
  const std::string L = "ensemble.loop";
  edit("center_type", L + ".center", [](Json& l) { l["center"] = "x"; });
  edit("center_length", L + ".center", [](Json& l) { l["center"] = {0.1}; });
  edit("center_missing", L + ".center", [](Json& l) { l.erase("center"); });
  edit("plane_type", L + ".plane", [](Json& l) { l["plane"] = "q0"; });
  edit("plane_one", L + ".plane", [](Json& l) { l["plane"] = {"q0"}; });
  edit("plane_name", L + ".plane[1]", [](Json& l) { l["plane"] = {"q0", "p7"}; });
  edit("plane_number", L + ".plane[0]", [](Json& l) { l["plane"] = {1, "p0"}; });
  edit("plane_same", L + ".plane", [](Json& l) { l["plane"] = {"q0", "q0"}; });
  edit("shape_unknown", L + ".shape", [](Json& l) { l["shape"] = "square"; });
  edit("shape_type", L + ".shape", [](Json& l) { l["shape"] = 3; });
  edit("radius_zero", L + ".radius", [](Json& l) { l["radius"] = 0; });
  edit("radius_type", L + ".radius", [](Json& l) { l["radius"] = "big"; });
  edit("radius_missing", L + ".radius", [](Json& l) { l.erase("radius"); });
  edit("radius_tiny", L + ".radius", [](Json& l) { l["radius"] = 1e-300; });
  edit("radii_for_circle", L + ".radii", [](Json& l) { l["radii"] = {1, 2}; });
  edit("radii_bad", L + ".radii[1]", [](Json& l) {
    l["shape"] = "ellipse";
    l.erase("radius");
    l["radii"] = {0.1, -1};
  });
  edit("radii_length", L + ".radii", [](Json& l) {
    l["shape"] = "ellipse";
    l.erase("radius");
    l["radii"] = {0.1};
  });
  auto polygon = [](Json& l, const Json& vertices) {
    l["shape"] = "polygon";
    l.erase("radius");
    l["vertices"] = vertices;
  };
  edit("vertices_two", L + ".vertices", [&](Json& l) {
    polygon(l, Json::array({{0, 0}, {1, 0}}));
  });
  edit("vertices_point", L + ".vertices[1]", [&](Json& l) {
    polygon(l, Json::array({{0, 0}, {1}, {1, 1}}));
  });
  edit("vertices_value", L + ".vertices[2][0]", [&](Json& l) {
    polygon(l, Json::array({{0, 0}, {1, 0}, {"a", 1}}));
  });
  edit("vertices_repeated", L + ".vertices[1]", [&](Json& l) {
    polygon(l, Json::array({{0, 0}, {0, 0}, {1, 1}}));
  });
  edit("vertices_collinear", L + ".vertices", [&](Json& l) {
    polygon(l, Json::array({{0, 0}, {1, 1}, {2, 2}}));
  });
  edit("points_small", L + ".points", [](Json& l) { l["points"] = 8; });
  edit("points_float", L + ".points", [](Json& l) { l["points"] = 16.5; });
  edit("points_odd_large", L + ".points", [](Json& l) { l["points"] = 10000; });
  edit("every_zero", L + ".every", [](Json& l) { l["every"] = 0; });
  edit("every_beyond_steps", L + ".every", [](Json& l) { l["every"] = 101; });
  edit("every_missing", L + ".every", [](Json& l) { l.erase("every"); });
  edit("unknown_key", L + ".radiuss", [](Json& l) { l["radiuss"] = 1; });
  {
    Json j = good_loop_job();
    j["section"] = {{"stroboscopic", {{"every", 10}}}};
    v.push_back({"with_section", j, "section"});
  }
  {
    Json j = good_loop_job();
    j["ensemble"]["loop"] = "circle";
    v.push_back({"loop_type", j, L});
  }
  // Models whose ambient (q, p) area is not the invariant.
  {
    Json j = loop_job("pendulum_cartesian", "rattle", 0.01, 100,
                      circle({1.0, 0.0, 0.0, 0.0}, 0.1, 16, 10));
    v.push_back({"constrained_model", j, L});
  }
  {
    Json j = loop_job("rigid_body_so3", "variational_euler_so3", 0.01, 100,
                      circle({1, 0, 0, 0, 1, 0, 0, 0, 1, 0.1, 0.2, 0.3}, 0.1, 16, 10));
    v.push_back({"lie_group_model", j, L});
  }
  // Parallelepiped.
  const std::string P = "ensemble.parallelepiped";
  auto ppd = [&](const std::string& name, const std::string& path, const Json& body) {
    Json j = good_loop_job();
    j["ensemble"] = {{"parallelepiped", body}};
    v.push_back({name, j, path});
  };
  ppd("edge_zero", P + ".edge", {{"center", {0.1, 0}}, {"edge", 0}, {"every", 10}});
  ppd("edge_type", P + ".edge", {{"center", {0.1, 0}}, {"edge", "small"}, {"every", 10}});
  ppd("edge_length", P + ".edge", {{"center", {0.1, 0}}, {"edge", {1e-6}}, {"every", 10}});
  ppd("edge_negative", P + ".edge[1]",
      {{"center", {0.1, 0}}, {"edge", {1e-6, -1e-6}}, {"every", 10}});
  ppd("edge_below_resolution", P + ".edge", {{"center", {1e6, 0}}, {"edge", 1e-12}, {"every", 10}});
  ppd("ppd_center", P + ".center", {{"center", {0.1}}, {"edge", 1e-6}, {"every", 10}});
  ppd("ppd_every", P + ".every", {{"center", {0.1, 0}}, {"edge", 1e-6}, {"every", -1}});
  ppd("ppd_unknown", P + ".points",
      {{"center", {0.1, 0}}, {"edge", 1e-6}, {"every", 10}, {"points", 3}});
  {
    Json j = loop_job("spherical_pendulum", "rattle", 0.01, 100, {});
    j["ensemble"] = {
        {"parallelepiped", {{"center", {0, 0, -1, 0, 0, 0}}, {"edge", 1e-6}, {"every", 10}}}};
    v.push_back({"ppd_constrained", j, P});
  }
  return v;
}

TEST(CloudBadInput, EveryKeyExitsTwoNamingIt) {
  const TempDir dir("bad");
  fs::create_directories(dir.path);
  for (const Bad& b : bad_cases()) {
    const fs::path job = dir.path / (b.name + ".json");
    std::ofstream(job) << b.job.dump(2);
    const fs::path err = dir.path / (b.name + ".err");
    const std::string cmd = "cd '" + dir.path.string() + "' && '" VIGOR_BIN "' validate '" +
                            job.string() + "' >/dev/null 2>'" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << b.name;
    EXPECT_EQ(WEXITSTATUS(status), 2) << b.name;
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str().rfind("error: " + b.path + ":", 0), 0u) << b.name << ": " << text.str();
  }
}

}  // namespace
