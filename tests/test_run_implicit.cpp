// Implicit, constrained and Lie-group runs end to end through jobs: model-integrator pairing,
// states on the constraint manifold, newton_tolerance and the newton-not-converged status, the
// residual and momentum-map columns of the outputs, SIMD lanes against the scalar path, thread
// determinism, and section_grid for a non-separable Lagrangian.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine_hooks.hpp"
#include "host/backends/engine.hpp"
#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/run/run.hpp"

namespace fs = std::filesystem;
using namespace vigor::host;
using Json = nlohmann::ordered_json;

namespace {

RunResult run_text(const std::string& text, int threads = 1) {
  const Job job = parse_job(text);
  RunOptions opt;
  opt.threads = threads;
  opt.quiet = true;
  return run_ensemble(job, opt, nullptr);
}

/// parse_job must fail with a message starting "<path>: " and containing `part`.
void expect_job_error(const Json& j, const std::string& path, const std::string& part) {
  SCOPED_TRACE(j.dump());
  try {
    (void)parse_job(j.dump());
    ADD_FAILURE() << "no error; expected " << path << ": ..." << part;
  } catch (const JobError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.path(), path) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

Json spherical_job() {
  // On the unit sphere at the bottom, moving tangentially: |q| = 1, q . v = 0.
  return Json::parse(R"({
    "model": {"name": "spherical_pendulum"}, "integrator": {"name": "rattle", "dt": 0.01},
    "steps": 2000,
    "ensemble": {"states": [[0, 0, -1, 0.5, 0.3, 0], [0.6, 0, -0.8, 0, 0.7, 0]]},
    "output": {"dir": "unused"}})");
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

TEST(RunImplicit, PairingIsCheckedAgainstTheModel) {
  Json j = spherical_job();
  j["integrator"]["name"] = "verlet";
  // The message names what the integrator handles and the integrators that fit the model.
  expect_job_error(j, "integrator.name",
                   "model \"spherical_pendulum\" needs one of: shake, rattle");
  j = spherical_job();
  j["model"] = {{"name", "henon_heiles"}};
  j["ensemble"] = {{"states", {{0.0, 0.1, 0.3, 0.0}}}};
  expect_job_error(j, "integrator.name", "handles a separable model with holonomic constraints");
  j["model"] = {{"name", "rigid_body_so3"}};
  j["integrator"]["name"] = "midpoint";
  expect_job_error(j, "integrator.name",
                   "needs one of: rk4, variational_euler_so3, variational_euler_so3_exp");
  j["model"] = {{"name", "kirchhoff_se3"}};
  expect_job_error(j, "integrator.name",
                   "needs one of: rk4, variational_euler_se3, variational_euler_se3_exp");
  j["model"] = {{"name", "double_pendulum"}};
  j["integrator"]["name"] = "yoshida4";
  expect_job_error(j, "integrator.name", "needs one of: rk4, midpoint, midpoint4");
  j["model"] = {{"name", "driven_pendulum"}};
  j["integrator"]["name"] = "verlet";
  expect_job_error(j, "integrator.name", "needs one of: rk4, midpoint, midpoint4");
  j["model"] = {{"name", "double_pendulum"}};
  j["integrator"]["name"] = "gauss";
  expect_job_error(j, "integrator.name", "handles a separable model");
  j["model"] = {{"name", "pendulum_cartesian"}};
  j["integrator"]["name"] = "midpoint4";
  expect_job_error(j, "integrator.name",
                   "handles a Lagrangian or forced (q, p) model without constraints");
}

TEST(RunImplicit, NewtonToleranceIsValidated) {
  Json j = spherical_job();
  j["newton_tolerance"] = -1e-9;
  expect_job_error(j, "newton_tolerance", "must be > 0, got -1e-9");
  j["newton_tolerance"] = "tight";
  expect_job_error(j, "newton_tolerance", "");
  j = Json::parse(R"({"model": {"name": "henon_heiles"}, "integrator": {"name": "verlet",
    "dt": 0.01}, "steps": 10, "ensemble": {"states": [[0, 0.1, 0.3, 0]]}, "newton_tolerance": 1e-9})");
  expect_job_error(j, "newton_tolerance", "is explicit and solves nothing");
}

TEST(RunImplicit, InitialStatesMustLieOnTheConstraintManifold) {
  Json j = spherical_job();
  j["ensemble"]["states"][1] = {0.6, 0.0, -0.81, 0.0, 0.7, 0.0};  // |q| = 1.006
  expect_job_error(j, "ensemble.states[1]", "not on the constraint manifold");
  j["ensemble"]["states"][1] = {0.6, 0.0, -0.8, 0.1, 0.7, 0.0};  // q . v = 0.06
  expect_job_error(j, "ensemble.states[1]", "velocity not tangent to the constraint manifold");
  // A generated ensemble names the trajectory.
  j["ensemble"] = {{"box",
                    {{"lo", {0, 0, -1, 0, 0, 0}},
                     {"hi", {0.1, 0, -1, 0, 0, 0}},
                     {"counts", {2, 1, 1, 1, 1, 1}}}}};
  expect_job_error(j, "ensemble.box", "at trajectory 1");
  // A rotation matrix must be orthogonal.
  j = Json::parse(R"({"model": {"name": "rigid_body_so3"},
    "integrator": {"name": "variational_euler_so3", "dt": 0.1}, "steps": 10,
    "ensemble": {"states": [[1, 0, 0, 0, 1, 0, 0, 0, 1, 0.45, 0, 0.89],
                            [1, 0.01, 0, 0, 1, 0, 0, 0, 1, 0.45, 0, 0.89]]}})");
  expect_job_error(j, "ensemble.states[1]", "not a rotation");
  // Typed with 12 significant digits, a state on the sphere passes (tolerance 1e-9 relative).
  j = spherical_job();
  j["ensemble"]["states"][1] = {0.6, 0.0, -0.800000000001, 0.0, 0.7, 0.0};
  EXPECT_NO_THROW((void)parse_job(j.dump()));
}

TEST(RunImplicit, NewtonToleranceStopsTrajectoriesWithNewtonNotConverged) {
  // Midpoint on Hénon–Heiles at h = 0.2 with one Newton iteration leaves a residual near 1e-8
  // (the Verlet predictor is O(h^3) off); a tolerance of 1e-12 stops each trajectory after its
  // first step. Three iterations reach round-off (~1e-16), so the same tolerance passes.
  const std::string base = R"({
    "model": {"name": "henon_heiles"},
    "integrator": {"name": "midpoint", "dt": 0.2, "newton_iterations": ITER},
    "steps": 500, "newton_tolerance": 1e-12,
    "ensemble": {"states": [[0, 0.1, 0.35, 0], [0, -0.2, 0.3, 0.1], [0, 0.3, 0.25, -0.1]]}})";
  std::string one = base;
  one.replace(one.find("ITER"), 4, "1");
  const RunResult r1 = run_text(one);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r1.final.status[i], 3) << "trajectory " << i;  // kStatusNewtonNotConverged
    EXPECT_EQ(r1.final.step[i], 1) << "trajectory " << i;
    EXPECT_GT(r1.final.newton_residual[i], 1e-12);
    EXPECT_LT(r1.final.newton_residual[i], 1e-5);
  }
  std::string three = base;
  three.replace(three.find("ITER"), 4, "3");
  const RunResult r3 = run_text(three);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r3.final.status[i], 0) << "trajectory " << i;
    EXPECT_EQ(r3.final.step[i], 500);
    EXPECT_LT(r3.final.newton_residual[i], 1e-14);  // a few ulps of |q| ~ 0.5
  }
}

TEST(RunImplicit, OutputsCarryResidualAndMomentumColumns) {
  const fs::path dir =
      fs::temp_directory_path() / ("vigor-test-implicit-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Json j = spherical_job();
  j["output"]["dir"] = (dir / "sph").string();
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_job(parse_job(j.dump()), opt, false);
  EXPECT_EQ(first_line(dir / "sph" / "final.csv"),
            "trajectory,t,q0,q1,q2,p0,p1,p2,energy_error_max,crossings,status,momentum_error_max,"
            "newton_residual_max");
  EXPECT_EQ(summary["momentum_maps"], Json::array({"Jz"}));
  EXPECT_EQ(summary["newton_iterations"].get<int>(), find_integrator("rattle")->newton_iterations);
  // RATTLE conserves J_z to the Newton residual; |J_z| <= |q| |p| ~ 0.7 here, 2000 steps of
  // round-off (~1e-16 each) stay far below 1e-12.
  EXPECT_LT(summary["momentum_error_max"].get<double>(), 1e-12);
  EXPECT_LT(summary["newton_residual_max"].get<double>(), 1e-14);
  EXPECT_GT(summary["energy_error_max"].get<double>(), 0.0);

  // An explicit integrator on a model without momentum maps keeps the plain columns.
  Json e = Json::parse(R"({"model": {"name": "henon_heiles"}, "integrator": {"name": "verlet",
    "dt": 0.01}, "steps": 10, "ensemble": {"states": [[0, 0.1, 0.3, 0]]}})");
  e["output"]["dir"] = (dir / "hh").string();
  const auto s2 = run_job(parse_job(e.dump()), opt, false);
  EXPECT_EQ(first_line(dir / "hh" / "final.csv"),
            "trajectory,t,q0,q1,p0,p1,energy_error_max,crossings,status");
  EXPECT_FALSE(s2.contains("newton_residual_max"));
  EXPECT_FALSE(s2.contains("momentum_error_max"));

  // The rigid body on SO(3) names its state and its momentum maps.
  Json r = Json::parse(R"({"model": {"name": "rigid_body_so3"},
    "integrator": {"name": "variational_euler_so3", "dt": 0.1}, "steps": 1000,
    "ensemble": {"states": [[1, 0, 0, 0, 1, 0, 0, 0, 1, 0.4535961214255773, 0, 0.8912073600614354]]}})");
  r["output"]["dir"] = (dir / "so3").string();
  const auto s3 = run_job(parse_job(r.dump()), opt, false);
  EXPECT_EQ(first_line(dir / "so3" / "final.csv"),
            "trajectory,t,R00,R01,R02,R10,R11,R12,R20,R21,R22,Pi0,Pi1,Pi2,energy_error_max,"
            "crossings,status,momentum_error_max,newton_residual_max");
  EXPECT_EQ(s3["momentum_maps"], Json::array({"L_x", "L_y", "L_z"}));
  // Discrete Noether: R Pi conserved to the Newton residual, 1000 steps of ~1e-16.
  EXPECT_LT(s3["momentum_error_max"].get<double>(), 1e-12);
  fs::remove_all(dir);
}

TEST(RunImplicit, SimdLanesMatchTheScalarPathBitForBit) {
  // The CPU engine runs separable models' implicit steps on SIMD packs; every lane must compute
  // exactly what the scalar driver computes (no pivoting, no data-dependent branch, no FMA that
  // the scalar code does not have). Angle models too: sin and cos are vigor's own on both
  // (kernels/core/trig.hpp).
  struct Case {
    std::string model, integrator;
    double dt;
    std::vector<std::vector<double>> rows;
  };
  const std::vector<Case> cases = {
      {"henon_heiles",
       "midpoint",
       0.05,
       {{0, 0.1, 0.35, 0}, {0, -0.2, 0.3, 0.1}, {0, 0.3, 0.2, 0}}},
      {"henon_heiles", "lobatto3", 0.05, {{0, 0.1, 0.35, 0}, {0, -0.2, 0.3, 0.1}}},
      {"henon_heiles", "newmark", 0.05, {{0, 0.1, 0.35, 0}, {0, -0.2, 0.3, 0.1}}},
      {"henon_heiles", "gauss", 0.2, {{0, 0.1, 0.35, 0}, {0, -0.2, 0.3, 0.1}}},
      {"pendulum", "lobatto3", 0.05, {{0.5, 0.2}, {3.1, 2.5}}},
      {"spherical_pendulum", "rattle", 0.01, {{0, 0, -1, 0.5, 0.3, 0}, {0.6, 0, -0.8, 0, 0.7, 0}}},
      {"spherical_pendulum", "shake", 0.01, {{0, 0, -1, 0.5, 0.3, 0}, {0.6, 0, -0.8, 0, 0.7, 0}}},
      // The J2 satellite's Hessian by nested duals: its blocks are sub-blocks of one register.
      {"j2_satellite",
       "midpoint",
       0.02,
       {{1.5, 0, 0, 0, 0.7, 0.4}, {1.2, 0.3, 0.1, -0.2, 0.8, 0.3}}},
      {"j2_satellite",
       "lobatto3",
       0.02,
       {{1.5, 0, 0, 0, 0.7, 0.4}, {1.2, 0.3, 0.1, -0.2, 0.8, 0.3}}},
      {"j2_satellite",
       "newmark",
       0.02,
       {{1.5, 0, 0, 0, 0.7, 0.4}, {1.2, 0.3, 0.1, -0.2, 0.8, 0.3}}},
  };
  // FP32 too. Implicit steps on the J2 satellite take sub-blocks of one register
  // (kernels::lane_sub_blocks), the other steps one pack of the block's registers; RATTLE and
  // SHAKE call their step out of line (kernels::integrator_step_out_of_line).
  for (const Precision precision : {Precision::kDouble, Precision::kFloat})
    for (const Case& c : cases) {
      SCOPED_TRACE(c.model + " / " + c.integrator +
                   (precision == Precision::kFloat ? " / fp32" : " / fp64"));
      const ModelInfo* m = find_model(c.model);
      const IntegratorInfo* in = find_integrator(c.integrator);
      ASSERT_TRUE(m && in);
      Integration s;
      s.model = c.model;
      s.integrator = c.integrator;
      for (const auto& p : m->params) s.params.push_back(p.default_value);
      for (const auto& o : in->options)
        s.options.push_back(std::string(o.name) == "beta" ? 0.25 : o.default_value);
      s.dt = c.dt;
      s.precision = precision;
      const std::int64_t n = std::int64_t(c.rows.size());
      std::vector<double> soa(std::size_t(m->dim) * std::size_t(n));
      for (std::int64_t i = 0; i < n; ++i)
        for (int k = 0; k < m->dim; ++k)
          soa[std::size_t(k * n + i)] = c.rows[std::size_t(i)][std::size_t(k)];
      FinalData f[2];
      for (int simd = 0; simd < 2; ++simd) {
        const vigor_test::ScopedEngineHooks hooks(/*scalar_lanes=*/simd == 0, false);
        auto e = make_engine(s, EngineResources{}, BackendKind::kCpu);
        if (simd == 1) {
          EXPECT_GT(e->simd_lanes(), 1);
        }
        e->upload(soa, n);
        e->launch(400);
        f[simd] = e->download();
      }
      EXPECT_EQ(0, std::memcmp(f[0].state.data(), f[1].state.data(), f[0].state.size() * 8));
      EXPECT_EQ(f[0].energy_error, f[1].energy_error);
      EXPECT_EQ(f[0].newton_residual, f[1].newton_residual);
      EXPECT_EQ(f[0].momentum_error, f[1].momentum_error);
    }
}

TEST(RunImplicit, ResultsDoNotDependOnTheThreadCount) {
  // The scalar path (general Lagrangian, nested-dual Jacobians) across threads: bitwise equal.
  const std::string job = R"({
    "model": {"name": "double_pendulum"}, "integrator": {"name": "midpoint", "dt": 0.01},
    "steps": 300,
    "ensemble": {"box": {"lo": [0.1, -0.5, 0, 0], "hi": [1.5, 0.5, 0, 0], "counts": [13, 11, 1, 1]}}})";
  const RunResult a = run_text(job, 1);
  const RunResult b = run_text(job, 2);
  EXPECT_EQ(0, std::memcmp(a.final.state.data(), b.final.state.data(), a.final.state.size() * 8));
  EXPECT_EQ(a.final.newton_residual, b.final.newton_residual);
}

TEST(RunImplicit, SectionGridSolvesTheMomentumOfANonSeparableLagrangian) {
  // Double pendulum, section theta1 = 0 upwards: p_theta1 solves H = E from the quadratic H(p);
  // every row must have H = E to round-off and d(theta1)/dt > 0.
  const Json j = Json::parse(R"({
    "model": {"name": "double_pendulum"}, "integrator": {"name": "midpoint", "dt": 0.01},
    "steps": 1,
    "ensemble": {"section_grid": {"energy": -2.2, "axes": {"q1": [-1.5, 1.5, 13], "p1": [-1, 1, 9]}}},
    "section": {"coordinate": "q0", "value": 0.0, "direction": "up"}})");
  const Job job = parse_job(j.dump());
  const ModelInfo* m = find_model("double_pendulum");
  ASSERT_GT(job.ensemble.count, 20);
  EXPECT_GT(job.ensemble.skipped, 0);  // the grid edges |q1| > 1.37 lie above E = -2.2
  const std::int64_t n = job.ensemble.count;
  for (std::int64_t i = 0; i < n; ++i) {
    double s[4];
    for (int c = 0; c < 4; ++c) s[c] = job.ensemble.state[std::size_t(c * n + i)];
    EXPECT_EQ(s[0], 0.0);
    // |H| ~ 3 (m g l terms), a few operations: 1e-14 is tens of ulps.
    EXPECT_NEAR(m->energy(job.integration.params.data(), s), -2.2, 1e-14) << "trajectory " << i;
    // dtheta1/dt = dH/dp1 > 0 for "up": by a central difference of H in p1.
    double sp[4] = {s[0], s[1], s[2] + 1e-6, s[3]}, sm[4] = {s[0], s[1], s[2] - 1e-6, s[3]};
    EXPECT_GT(
        m->energy(job.integration.params.data(), sp) - m->energy(job.integration.params.data(), sm),
        0.0);
  }
}
