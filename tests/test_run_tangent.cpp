// Tangent-map diagnostics from job files: the "diagnostics" key, the final.csv columns, the
// summary.json statistics and the per-segment series, on every kind of model, on both
// precisions and independent of the thread count. The numerics are pinned in test_tangent_*.cpp;
// here the plumbing is (a column in the wrong slot or a series off by a segment must fail).
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
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
#include "host/output/tangent_report.hpp"
#include "host/run/run.hpp"
#include "kernels/tangent.hpp"

namespace fs = std::filesystem;
using namespace vigor::host;
using Json = nlohmann::ordered_json;

namespace {

RunResult run_json(const Json& j, int threads = 1) {
  RunOptions opt;
  opt.threads = threads;
  opt.quiet = true;
  return run_ensemble(parse_job(j.dump()), opt, nullptr);
}

void expect_job_error(const Json& j, const std::string& path, const std::string& part) {
  SCOPED_TRACE(j.dump());
  try {
    (void)parse_job(j.dump());
    ADD_FAILURE() << "no error; expected " << path << ": ..." << part;
  } catch (const JobError& e) {
    EXPECT_EQ(e.path(), path) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

/// A regular (E = 1/12) and a chaotic (E = 1/6) Hénon–Heiles orbit, x = 0.
Json henon_heiles_job() {
  return Json::parse(R"({
    "model": {"name": "henon_heiles"}, "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 50000, "segment_steps": 10000,
    "ensemble": {"states": [[0, 0.1, 0.3838402445462608, 0.1],
                            [0, -0.1, 0.5591660457025861, 0.1]]},
    "diagnostics": {"tangent": true},
    "output": {"dir": "unused"}})");
}

double out_of(const RunResult& r, int slot, int i) {
  const std::size_t n = r.final.step.size();
  return r.final.tangent_out[std::size_t(slot) * n + std::size_t(i)];
}

TEST(RunTangent, JobKeyIsValidated) {
  Json j = henon_heiles_job();
  j["diagnostics"] = Json::parse(R"({"tangent": 1})");
  expect_job_error(j, "diagnostics.tangent", "true or false");
  j["diagnostics"] = Json::parse(R"({"tangnet": true})");
  expect_job_error(j, "diagnostics.tangnet", "unknown");
  j["diagnostics"] = Json::parse(R"([true])");
  expect_job_error(j, "diagnostics", "object");
  j["diagnostics"] = Json::parse(R"({"tangent": false})");
  EXPECT_FALSE(parse_job(j.dump()).integration.tangent);
  // Pairs whose tangent map is not built are refused by name, with the alternatives.
  Json q = Json::parse(R"({"model": {"name": "double_spherical_pendulum"},
      "integrator": {"name": "midpoint", "dt": 0.01}, "steps": 10,
      "ensemble": {"states": [[0, 0, -1, 0, 0, -2, 0, 0, 0, 0, 0, 0]]},
      "diagnostics": {"tangent": true}})");
  expect_job_error(q, "diagnostics.tangent", "rattle");
  // Systems beyond 12 phase-space dimensions are refused with the limit.
  Json big = Json::parse(R"({"model": {"name": "outer_solar_system"},
      "integrator": {"name": "verlet", "dt": 10}, "steps": 10,
      "ensemble": {"states": [[0]]}, "diagnostics": {"tangent": true}})");
  expect_job_error(big, "diagnostics.tangent", "up to 12 phase-space dimensions");
}

TEST(RunTangent, RegularAndChaoticOrbitsAreToldApart) {
  const RunResult r = run_json(henon_heiles_job());
  ASSERT_EQ(r.final.tangent_out.size(), std::size_t(2 * vigor::kernels::kTangentOutCount));
  using namespace vigor::kernels;
  // Regular orbit: MEGNO near 2 (1.9..2.1 from t = 100 on, test_tangent_map.cpp), SALI O(1).
  EXPECT_NEAR(out_of(r, kOutMegno, 0), 2.0, 0.25);
  EXPECT_GT(out_of(r, kOutSali, 0), 1e-4);
  EXPECT_LT(out_of(r, kOutDefect, 0), 1e-10);
  // Chaotic orbit: MEGNO ~ lambda t / 2 >> 2 at t = 500, SALI at round-off.
  EXPECT_GT(out_of(r, kOutMegno, 1), 10.0);
  EXPECT_LT(out_of(r, kOutSali, 1), 1e-8);
  EXPECT_LT(out_of(r, kOutDefectRel, 1), 1e-13);
  // One series row at t = 0 and one per segment.
  EXPECT_EQ(r.tangent_series.size(), std::size_t(1 + 5));
}

TEST(RunTangent, OutputsCarryColumnsStatisticsAndSeries) {
  const fs::path dir =
      fs::temp_directory_path() / ("vigor-test-tangent-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Json j = henon_heiles_job();
  j["output"]["dir"] = dir.string();
  RunOptions opt;
  opt.quiet = true;
  opt.threads = 1;
  const Json summary = run_job(parse_job(j.dump()), opt, false);
  // final.csv: the diagnostics after the contract's columns, in kTangentColumns order.
  std::ifstream f(dir / "final.csv");
  std::string header, row0;
  std::getline(f, header);
  std::getline(f, row0);
  std::string expected = "trajectory,t,q0,q1,p0,p1,energy_error_max,crossings,status";
  for (const char* c : kTangentColumns) expected += std::string(",") + c;
  EXPECT_EQ(header, expected);
  // The MEGNO field of row 0 (column 9 + kOutMegno) is the regular orbit's ~2.
  std::stringstream ss(row0);
  std::string cell;
  std::vector<std::string> cells;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  ASSERT_EQ(cells.size(), std::size_t(9 + kTangentColumns.size()));
  EXPECT_NEAR(std::stod(cells[9 + vigor::kernels::kOutMegno]), 2.0, 0.25);
  // summary.json: statistics per column, and the series file it names.
  ASSERT_TRUE(summary.contains("tangent"));
  EXPECT_GT(summary["tangent"]["megno"]["max"].get<double>(), 10.0);
  EXPECT_EQ(summary["tangent_series"], "tangent_series.csv");
  std::ifstream s(dir / "tangent_series.csv");
  std::string line;
  int rows = -1;
  while (std::getline(s, line)) ++rows;
  EXPECT_EQ(rows, 6);
  fs::remove_all(dir);
}

TEST(RunTangent, ResultsDoNotDependOnThreadCount) {
  Json j = henon_heiles_job();
  j["ensemble"] = Json::parse(
      R"({"random_box": {"lo": [-0.05, -0.05, 0.2, -0.1], "hi": [0.05, 0.05, 0.3, 0.1],
          "count": 37, "seed": 5}})");
  j["steps"] = 3000;
  j["segment_steps"] = 1000;
  const RunResult a = run_json(j, 1), b = run_json(j, 2);
  ASSERT_EQ(a.final.tangent_out.size(), b.final.tangent_out.size());
  for (std::size_t k = 0; k < a.final.tangent_out.size(); ++k) {
    const double x = a.final.tangent_out[k], y = b.final.tangent_out[k];
    EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << k;
  }
  for (std::size_t k = 0; k < a.final.state.size(); ++k)
    EXPECT_EQ(a.final.state[k], b.final.state[k]);
}

TEST(RunTangent, SimdLanesAgreeWithTheScalarTangentDriver) {
  // Verlet's plain step takes the dual state, so the CPU engine runs the tangent map in SIMD
  // lanes. States, partials and indicators are bit-identical to the scalar driver: the same
  // arithmetic, and the indicators' log is vigor's own on both (kernels/core/exp_log.hpp; with
  // libmvec's packed log they differed by a few ulps).
  Json j = henon_heiles_job();
  j["ensemble"] = Json::parse(
      R"({"random_box": {"lo": [-0.05, -0.05, 0.2, -0.1], "hi": [0.05, 0.05, 0.3, 0.1],
          "count": 37, "seed": 9}})");
  j["steps"] = 4000;
  j["segment_steps"] = 1000;
  const Job job = parse_job(j.dump());
  RunOptions opt;
  opt.threads = 1;
  opt.quiet = true;
  auto run = [&](bool simd) {
    const vigor_test::ScopedEngineHooks hooks(/*scalar_lanes=*/!simd, false);
    auto engine = make_engine(job.integration, engine_resources(opt), BackendKind::kCpu);
    EXPECT_EQ(engine->simd_lanes() > 1, simd);
    return run_ensemble(job, opt, *engine, nullptr);
  };
  const RunResult lanes = run(true), scalar = run(false);
  ASSERT_EQ(lanes.final.state, scalar.final.state);
  const std::size_t n = 37;
  for (int slot = 0; slot < vigor::kernels::kTangentOutCount; ++slot)
    for (std::size_t i = 0; i < n; ++i) {
      const double x = lanes.final.tangent_out[std::size_t(slot) * n + i];
      const double y = scalar.final.tangent_out[std::size_t(slot) * n + i];
      EXPECT_TRUE(x == y || (std::isnan(x) && std::isnan(y))) << slot << " " << i;
    }
}

TEST(RunTangent, EveryKindOfModelRunsFromAJob) {
  // Constrained (RATTLE on the sphere), Lie group (SO(3)), non-separable Lagrangian (midpoint on
  // the double pendulum), forced (driven pendulum): defects at round-off for the symplectic ones
  // (|M| stays O(10) here, so a few ulps of |M|^2 per step over <= 1000 steps).
  struct Case {
    const char* job;
    double tol;
  };
  const Case cases[] = {
      {R"({"model": {"name": "spherical_pendulum"}, "integrator": {"name": "rattle", "dt": 0.01},
          "steps": 1000, "ensemble": {"states": [[0, 0, -1, 0.5, 0.3, 0]]}})",
       1e-12},
      {R"({"model": {"name": "rigid_body_so3"},
          "integrator": {"name": "variational_euler_so3", "dt": 0.1, "newton_iterations": 5},
          "steps": 300, "ensemble": {"states": [[1, 0, 0, 0, 1, 0, 0, 0, 1,
                                                 0.4535961214255773, 0, 0.8912073600614354]]}})",
       1e-11},
      {R"({"model": {"name": "double_pendulum"}, "integrator": {"name": "midpoint", "dt": 0.02},
          "steps": 500, "ensemble": {"states": [[0.5, -0.3, 0.2, 0.1]]}})",
       1e-11},
  };
  for (const Case& c : cases) {
    Json j = Json::parse(c.job);
    j["diagnostics"] = Json::parse(R"({"tangent": true})");
    j["output"] = Json::parse(R"({"dir": "unused"})");
    SCOPED_TRACE(j.dump());
    const RunResult r = run_json(j);
    ASSERT_EQ(r.final.status[0], 0);
    EXPECT_LT(out_of(r, vigor::kernels::kOutDefect, 0), c.tol);
    EXPECT_TRUE(std::isfinite(out_of(r, vigor::kernels::kOutMegno, 0)));
    // FP32 is refused: its round-off would hide the defects.
    j["precision"] = "float";
    expect_job_error(j, "precision", "needs precision double");
  }
  // The body in fluid on SE(3) with the exponential chart, whose tangent step differentiates a
  // Newton Jacobian itself taken by AD (nested duals), through the engine as shipped: the unit
  // tests of the same map (test_tangent_se3.cpp) are compiled without forced inlining. The
  // orbit is chaotic and |M| grows fast, so the bound is on the defect relative to |M|^2: a few
  // ulps per step, as there.
  {
    Json j = Json::parse(R"({"model": {"name": "kirchhoff_se3"},
        "integrator": {"name": "variational_euler_se3_exp", "dt": 0.025, "newton_iterations": 3},
        "steps": 400, "ensemble": {"states": [[1,0,0, 0,1,0, 0,0,1, 0,0,0, 0.5,0,0.45, 0,2.28,0]]},
        "diagnostics": {"tangent": true}, "output": {"dir": "unused"}})");
    const RunResult r = run_json(j);
    ASSERT_EQ(r.final.status[0], 0);
    EXPECT_LT(out_of(r, vigor::kernels::kOutDefectRel, 0), 1e-14);
    EXPECT_GT(out_of(r, vigor::kernels::kOutDefect, 0), 0.0);
  }
  // Forced and damped: not symplectic. Phase volume contracts at the rate of the flow's
  // divergence, -c: det M = e^{-c t} for the flow; the midpoint rule's factor for linear damping
  // is (1 - c h/2) / (1 + c h/2) per step, and the pendulum's nonlinearity shifts the computed
  // map's determinant by a relative 1e-4 (measured; O(h^2) over t = 10), so 1e-3 relative. 200
  // steps: the chaotic attractor has not yet made M too ill-conditioned for its determinant.
  Json d = Json::parse(R"({"model": {"name": "driven_pendulum"},
      "integrator": {"name": "midpoint", "dt": 0.05}, "steps": 200,
      "ensemble": {"states": [[0.3, 0.1]]}, "diagnostics": {"tangent": true},
      "output": {"dir": "unused"}})");
  const RunResult r = run_json(d);
  const double c = 0.5, h = 0.05;
  const double expected = std::pow((1 - c * h / 2) / (1 + c * h / 2), 200) - 1;
  EXPECT_NEAR(out_of(r, vigor::kernels::kOutDetError, 0), expected, 1e-3 * (1 + expected));
}

}  // namespace
