/// @file test_compensated.cpp
/// @brief integrator.compensated (kernels/core/compensated.hpp,
/// kernels/integrators/compensated.hpp): the compensated sum itself; what it does to the round-off
/// of the schemes that offer it (the energy error of a float run against the same scheme in double,
/// whose own round-off is 2^29 times smaller, so the difference is the float run's round-off
/// alone); and the runs: the job key and its refusals, SIMD lanes against the scalar lanes bit for
/// bit, segments that do not matter (the round-off terms are stored per trajectory), and a whole
/// run's energy error. The engines are compiled on first use into the build tree's shared plugin
/// cache (VIGOR_TEST_FORMULA_CACHE).
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine_hooks.hpp"
#include "engine_runs.hpp"
#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/run/run.hpp"
#include "kernels/integrators/blanes_moan6.hpp"
#include "kernels/integrators/compensated.hpp"
#include "kernels/integrators/gauss.hpp"
#include "kernels/integrators/stormer_verlet.hpp"
#include "models/kepler.hpp"

using namespace vigor;

// --- The sum ---------------------------------------------------------------------------------

TEST(CompensatedSum, KeepsWhatAPlainSumRoundsAway) {
  // 10^6 increments of 1e-17 to 1: each is below half an ulp of 1 (1.1e-16), so the plain sum
  // never moves, while x + e carries the exact 1 + 1e-11 to within a few ulps of e.
  double x = 1.0, plain = 1.0, e = 0.0;
  for (int k = 0; k < 1000000; ++k) {
    kernels::compensated_add(x, e, 1e-17);
    plain += 1e-17;
  }
  EXPECT_EQ(plain, 1.0);
  EXPECT_NEAR((x - 1.0) + e, 1e-11, 1e-24);
}

TEST(CompensatedSum, APhaseAddsAsBefore) {
  // On a plain Phase the schemes' add_to_q and add_to_p are `+=`: the same bits as before the
  // option existed, which the whole suite's bitwise comparisons rely on.
  kernels::Phase<double, 1> s;
  s.q[0] = 1.0;
  s.p[0] = 1.0;
  kernels::add_to_q(s, 0, 1e-17);
  kernels::add_to_p(s, 0, 0.1);
  EXPECT_EQ(s.q[0], 1.0);
  EXPECT_EQ(s.p[0], 1.0 + 0.1);
  kernels::CompensatedPhase<double, 1> c;
  c.q[0] = 1.0;
  kernels::add_to_q(c, 0, 1e-17);
  EXPECT_EQ(c.q[0], 1.0);
  EXPECT_EQ(c.eq[0], 1e-17);
}

TEST(CompensatedSum, APhaseFusesProductsACompensatedOneCarriesTheirRounding) {
  // The kicks and drifts add products through add_product_to_q / add_product_to_p: on a Phase one
  // fused multiply-add (the same instruction on the CPU lanes and the GPU), on a CompensatedPhase
  // the rounded product with its addition's round-off carried. a * b = 1 + 2^-29 + 2^-60 exactly:
  // the fused sum keeps the 2^-60, a separate product drops it.
  const double a = 1.0 + 0x1p-30, b = 1.0 + 0x1p-30;
  kernels::Phase<double, 1> s;
  s.q[0] = -1.0;
  s.p[0] = -1.0;
  kernels::add_product_to_q(s, 0, a, b);
  kernels::add_product_to_p(s, 0, a, b);
  EXPECT_EQ(s.q[0], 0x1p-29 + 0x1p-60);
  EXPECT_EQ(s.p[0], 0x1p-29 + 0x1p-60);
  kernels::CompensatedPhase<double, 1> c;
  c.q[0] = 1.0;
  c.p[0] = 1.0;
  kernels::add_product_to_q(c, 0, 1e-17, 1.0);
  kernels::add_product_to_p(c, 0, a, b);
  EXPECT_EQ(c.q[0], 1.0);
  EXPECT_EQ(c.eq[0], 1e-17);
  EXPECT_EQ(c.p[0], 2.0 + 0x1p-29);  // 1 + (1 + 2^-29): exact, nothing carried
  EXPECT_EQ(c.ep[0], 0.0);
}

// --- The schemes' round-off ------------------------------------------------------------------

namespace {

/// H at q + eq, p + ep (in double) for a compensated state, at q, p for a plain one.
template <class P>
double kepler_energy(const P& s) {
  double q[2], p[2];
  for (int c = 0; c < 2; ++c) {
    q[c] = double(s.q[c]);
    p[c] = double(s.p[c]);
    if constexpr (requires { s.eq; }) {
      q[c] += double(s.eq[c]);
      p[c] += double(s.ep[c]);
    }
  }
  return 0.5 * (p[0] * p[0] + p[1] * p[1]) - 1.0 / std::sqrt(q[0] * q[0] + q[1] * q[1]);
}

struct RoundOff {
  std::vector<long> steps;
  std::vector<double> plain, compensated;  ///< RMS over the orbits of H(float run) - H(double run)
};

/// Kepler orbits of eccentricity 0.5 at random phases, in float, plain and compensated, against
/// the same scheme in double from the same (float) states and step; sampled at steps 4^k from
/// `first` up to `steps`.
template <template <class> class IntegratorT>
RoundOff kepler_round_off(double dt, long steps, long first, int orbits, double option = 0) {
  const double mu = 1.0;
  const auto mf = models::Kepler<float>::from_params(&mu);
  const auto md = models::Kepler<double>::from_params(&mu);
  const auto step_f = IntegratorT<float>::from_options(&option);
  const auto step_c = kernels::Compensated<IntegratorT<float>>::from_options(&option);
  const auto step_d = IntegratorT<double>::from_options(&option);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> phase(0, 6.283185307179586);
  const auto count = static_cast<std::size_t>(orbits);
  std::vector<kernels::Phase<float, 2>> a(count);
  std::vector<kernels::CompensatedPhase<float, 2>> b(count);
  std::vector<kernels::Phase<double, 2>> ref(count);
  const double e = 0.5, r = 1 - e, v = std::sqrt((1 + e) / (1 - e));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double th = phase(rng);
    const float x[4] = {float(r * std::cos(th)), float(r * std::sin(th)), float(-v * std::sin(th)),
                        float(v * std::cos(th))};
    for (int c = 0; c < 2; ++c) {
      a[i].q[c] = b[i].q[c] = x[c];
      a[i].p[c] = b[i].p[c] = x[2 + c];
      ref[i].q[c] = x[c];
      ref[i].p[c] = x[2 + c];
    }
    kernels::refresh_force(mf, a[i]);
    kernels::refresh_force(mf, b[i]);
    kernels::refresh_force(md, ref[i]);
  }
  const float hf = float(dt);
  RoundOff out;
  for (long n = 1, next = first; n <= steps; ++n) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      kernels::take_step(step_f, mf, a[i], hf, 0.0f);
      kernels::take_step(step_c, mf, b[i], hf, 0.0f);
      kernels::take_step(step_d, md, ref[i], double(hf), 0.0);
    }
    if (n != next) continue;
    double sa = 0, sb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double h0 = kepler_energy(ref[i]);
      sa += std::pow(kepler_energy(a[i]) - h0, 2);
      sb += std::pow(kepler_energy(b[i]) - h0, 2);
    }
    out.steps.push_back(n);
    out.plain.push_back(std::sqrt(sa / double(orbits)));
    out.compensated.push_back(std::sqrt(sb / double(orbits)));
    next *= 4;
  }
  return out;
}

/// The growth exponent of err between the first and the last sample: err ~ n^exponent.
double growth(const std::vector<long>& n, const std::vector<double>& err) {
  return std::log(err.back() / err.front()) / std::log(double(n.back()) / double(n.front()));
}

void report(const char* name, const RoundOff& r) {
  for (std::size_t k = 0; k < r.steps.size(); ++k)
    std::printf("%s: %8ld steps  plain %.3e  compensated %.3e\n", name, r.steps[k], r.plain[k],
                r.compensated[k]);
  std::printf("%s: growth exponents plain %.2f, compensated %.2f\n", name, growth(r.steps, r.plain),
              growth(r.steps, r.compensated));
}

/// Both sums without drift, the compensated one at least 50x below the plain one (the bounds of
/// the tests below, with the measurements they come from).
void expect_brouwer_with_a_smaller_constant(const RoundOff& r) {
  EXPECT_LT(r.compensated.back() * 50, r.plain.back());
  EXPECT_GT(growth(r.steps, r.plain), 0.35);
  EXPECT_LT(growth(r.steps, r.plain), 0.7);
  EXPECT_LT(growth(r.steps, r.compensated), 0.6);
}

}  // namespace

// The plain sum rounds each increment d at eps |q|, the compensated one at about eps |d|; what
// is left is the round-off of the force evaluations (eps |F| h per kick, the same with or
// without compensation). Both kinds of rounding error are unbiased here, so both sums obey
// Brouwer's law, error ~ sqrt(n), and compensation divides the constant. Measured on this test's
// orbits (float, Kepler e = 0.5, 32 orbits, g++ 12 -O3, 2026-11-27): Störmer–Verlet at h = 1e-3
// after 2^20 steps, 5.4e-5 plain against 1.4e-7 compensated (380x); growth exponents from step
// 4096 on 0.51 plain and 0.14 compensated (the force errors' first effect is a smooth, bounded
// perturbation; their random walk shows later). A drift would show as an exponent near 1. The
// bounds: a factor of 50, the plain exponent within 0.35–0.7, the compensated one below 0.6.
TEST(CompensatedSteps, VerletsRoundOffShrinksAndDoesNotDrift) {
  const RoundOff r = kepler_round_off<kernels::StormerVerlet>(1e-3, 1L << 20, 4096, 32);
  report("verlet", r);
  expect_brouwer_with_a_smaller_constant(r);
}

// Blanes–Moan's 12 kicks and 11 drifts per step: 23 rounded sums per step in the plain form.
// Measured: 3.8e-5 plain against 1.7e-7 compensated after 2^16 steps at h = 0.01 (230x);
// exponents 0.52 and 0.22.
TEST(CompensatedSteps, BlanesMoanRoundOffShrinksAndDoesNotDrift) {
  const RoundOff r = kepler_round_off<kernels::BlanesMoan6>(1e-2, 1L << 16, 1024, 32);
  report("blanes_moan6", r);
  expect_brouwer_with_a_smaller_constant(r);
}

// Gauss collocation adds q1 - q0 and p1 - p0 once per step; its stages are formed from q0 and
// increments either way. Measured with 2 stages at h = 0.01: after 4096 steps 2.4e-6 plain
// against 8.3e-8 compensated (29x; the rest is the stages' and forces' round-off).
TEST(CompensatedSteps, GaussRoundOffShrinks) {
  const RoundOff r = kepler_round_off<kernels::Gauss>(1e-2, 4096, 1024, 16, 2.0);
  report("gauss s=2", r);
  EXPECT_LT(r.compensated.back() * 5, r.plain.back());
}

// --- Runs ------------------------------------------------------------------------------------

namespace {

std::string job_error(const std::string& text) {
  try {
    host::parse_job(text);
  } catch (const host::JobError& e) {
    return e.what();
  }
  return "(accepted)";
}

const char* kHenonHeilesJob = R"({
  "model": {"name": "henon_heiles"},
  "integrator": {"name": "blanes_moan6", "dt": 0.05, "compensated": true},
  "steps": 3000, "segment_steps": SEGMENT,
  "ensemble": {"random_box": {"lo": [-0.3, -0.3, -0.3, -0.3], "hi": [0.3, 0.3, 0.3, 0.3],
                              "count": 13, "seed": 3}},
  "section": {"coordinate": "q0", "direction": "up"}, "output": {"dir": "unused"}})";

host::Job henon_heiles_job(int segment_steps) {
  std::string text = kHenonHeilesJob;
  text.replace(text.find("SEGMENT"), 7, std::to_string(segment_steps));
  return host::parse_job(text);
}

}  // namespace

TEST(CompensatedRuns, TheJobKeyIsCheckedAndRefusedWhereItCannotRun) {
  EXPECT_TRUE(host::find_integrator("verlet")->compensable);
  EXPECT_TRUE(host::find_integrator("gauss")->compensable);
  EXPECT_FALSE(host::find_integrator("midpoint")->compensable);
  const std::string base = R"({"model": {"name": "kepler"}, "steps": 10,
      "ensemble": {"states": [[0.5, 0, 0, 1.7]]}, "output": {"dir": "unused"}, )";
  EXPECT_EQ(
      job_error(base + R"("integrator": {"name": "verlet", "dt": 0.01, "compensated": true}})"),
      "(accepted)");
  const std::string not_bool =
      job_error(base + R"("integrator": {"name": "verlet", "dt": 0.01, "compensated": 1}})");
  EXPECT_NE(not_bool.find("integrator.compensated"), std::string::npos) << not_bool;
  EXPECT_NE(not_bool.find("true or false"), std::string::npos) << not_bool;
  const std::string midpoint =
      job_error(base + R"("integrator": {"name": "midpoint", "dt": 0.01, "compensated": true}})");
  EXPECT_NE(midpoint.find("integrator.compensated"), std::string::npos) << midpoint;
  EXPECT_NE(midpoint.find("midpoint has no compensated form"), std::string::npos) << midpoint;
  EXPECT_NE(midpoint.find("blanes_moan6"), std::string::npos) << midpoint;
  const std::string tangent =
      job_error(base + R"("integrator": {"name": "verlet", "dt": 0.01, "compensated": true},
                          "diagnostics": {"tangent": true}})");
  EXPECT_NE(tangent.find("diagnostics.tangent"), std::string::npos) << tangent;
  EXPECT_NE(tangent.find("compensated"), std::string::npos) << tangent;
}

TEST(CompensatedRuns, LanesSegmentsAndTheScalarPathGiveTheSameBits) {
  ::setenv("VIGOR_CACHE_DIR", VIGOR_TEST_FORMULA_CACHE, 1);
  const host::Job one = henon_heiles_job(3000);
  const host::Job cut = henon_heiles_job(700);
  ASSERT_TRUE(one.integration.compensated);
  const host::EngineResources r = host::engine_resources(host::RunOptions{});
  auto lanes = host::make_engine(one.integration, r, host::BackendKind::kCpu);
  ASSERT_TRUE(lanes);
  EXPECT_GT(lanes->simd_lanes(), 1);
  const vigor_test::EngineRun a = vigor_test::run_engine(*lanes, one);
  EXPECT_GT(a.hits.size(), 0u);
  {
    // The round-off terms go to memory at every segment's end and come back at the next start.
    auto segmented = host::make_engine(cut.integration, r, host::BackendKind::kCpu);
    vigor_test::expect_identical(a, vigor_test::run_engine(*segmented, cut), one.ensemble.count);
  }
  {
    vigor_test::ScopedEngineHooks scalar(/*scalar_lanes=*/true, /*per_step=*/true);
    auto one_at_a_time = host::make_engine(cut.integration, r, host::BackendKind::kCpu);
    EXPECT_EQ(one_at_a_time->simd_lanes(), 1);
    vigor_test::expect_identical(a, vigor_test::run_engine(*one_at_a_time, cut),
                                 one.ensemble.count);
  }
}

TEST(CompensatedRuns, AFloatRunsEnergyErrorShrinks) {
  // Kepler at e = 0.5 in float with blanes_moan6 at h = 0.01: its truncation error (~1e-11 in H)
  // is far below float round-off, so energy_error_max is round-off. The compensated run's is that
  // of its rounded output states (eps |q| |grad H| ~ 1e-7) and of the force evaluations.
  ::setenv("VIGOR_CACHE_DIR", VIGOR_TEST_FORMULA_CACHE, 1);
  const std::string text = R"({
    "model": {"name": "kepler"}, "precision": "float", "steps": 20000,
    "integrator": {"name": "blanes_moan6", "dt": 0.01, "compensated": COMP},
    "ensemble": {"states": [[0.5, 0, 0, 1.7320508], [0, 0.5, -1.7320508, 0]]},
    "output": {"dir": "unused"}})";
  double emax[2] = {0, 0};
  for (int c = 0; c < 2; ++c) {
    std::string t = text;
    t.replace(t.find("COMP"), 4, c ? "true" : "false");
    const host::Job job = host::parse_job(t);
    const host::EngineResources r = host::engine_resources(host::RunOptions{});
    auto e = host::make_engine(job.integration, r, host::BackendKind::kCpu);
    const vigor_test::EngineRun run = vigor_test::run_engine(*e, job);
    for (double x : run.final.energy_error) emax[c] = std::max(emax[c], x);
  }
  std::printf("kepler float blanes_moan6: energy_error_max plain %.3e, compensated %.3e\n", emax[0],
              emax[1]);
  EXPECT_LT(emax[1] * 5, emax[0]);
}
