// The same bits in every lane: for every built-in model that the CPU engine runs in SIMD lanes,
// every integrator that handles it, in FP64 and FP32, a job run on the lanes and the same job run
// on the scalar path write byte-identical CSV files (final states, energy errors, statuses,
// section crossings and, where the pair has a tangent map, the chaos indicators). The lanes perform
// the scalar code's operations (no contraction on the host, packed FMAs only where the scalar code
// writes fma, vigor's own sin, cos, exp and log: kernels/core/), so any difference is a bug, not
// round-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine_hooks.hpp"
#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/run/run.hpp"
#include "scratch_dir.hpp"

using namespace vigor::host;
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

// An ensemble per lane-capable model: 21 trajectories (not a multiple of any lane width, so the
// partial block runs too) from a box around ordinary motion, or explicit states on the manifold
// of a constrained model, with a step size its dynamics are well resolved at.
struct ModelCase {
  std::string ensemble;
  double dt;
  std::string section = "q0";  ///< the plane section's coordinate (value 0, upward)
};

// Three copies of a configuration like HLW's outer solar system (I.2.4), Jupiter moved a little.
std::string solar_system_states() {
  std::string rows;
  for (int k = 0; k < 3; ++k) {
    rows += std::string(k ? ", " : "") + "[0,0,0, " + std::to_string(-3.5 - 0.01 * k) +
            ",-3.8,-1.55, 9.07,-3.04,-1.64, 8.31,-16.29,-7.25, 11.47,-25.72,-10.81, "
            "-15.53,-25.22,-3.19, 0,0,0, 5.4e-6,-3.9e-6,-1.8e-6, 4.8e-7,1.38e-6,5.5e-7, "
            "1.55e-7,6e-8,2.4e-8, 1.5e-7,5.9e-8,2.05e-8, 2.1e-11,-1.3e-11,-1e-11]";
  }
  return R"({"states": [)" + rows + "]}";
}

const std::map<std::string, ModelCase>& model_cases() {
  static const std::map<std::string, ModelCase> cases = {
      {"harmonic_oscillator",
       {R"({"random_box": {"lo": [-1, -1], "hi": [1, 1], "count": 21, "seed": 1}})", 0.05}},
      {"pendulum",
       {R"({"random_box": {"lo": [-3, -2.2], "hi": [3, 2.2], "count": 21, "seed": 2}})", 0.05}},
      {"driven_pendulum",
       {R"({"random_box": {"lo": [-3, -2], "hi": [3, 2], "count": 21, "seed": 3}})", 0.05}},
      {"henon_heiles",
       {R"({"random_box": {"lo": [-0.05, -0.3, 0.2, -0.3], "hi": [0.05, 0.4, 0.65, 0.3],
            "count": 21, "seed": 4}})",
        0.02}},
      {"kepler",
       {R"({"random_box": {"lo": [0.6, -0.1, -0.1, 1.2], "hi": [0.8, 0.1, 0.1, 1.5],
            "count": 21, "seed": 5}})",
        0.01}},
      {"j2_satellite",
       {R"({"random_box": {"lo": [1.4, -0.1, -0.1, -0.1, 0.7, 0.3],
            "hi": [1.6, 0.1, 0.1, 0.1, 0.8, 0.4], "count": 21, "seed": 6}})",
        0.02}},
      {"outer_solar_system", {solar_system_states(), 10.0}},
      // Swings and rotations of both rods; the lanes are FP32 only (DoublePendulum::kSimdLanes),
      // so its FP64 runs have nothing to compare (kPlainRunsWithoutLanes).
      {"double_pendulum",
       {R"({"random_box": {"lo": [-2, -2, -1, -1], "hi": [2, 2, 1, 1], "count": 21,
            "seed": 8}})",
        0.02}},
      {"pendulum_cartesian",
       {R"({"states": [[1, 0, 0, 0.5], [0, -1, 1.0, 0], [0.6, -0.8, 0.8,
            0.6]]})",
        0.01}},
      {"spherical_pendulum",
       {R"({"states": [[0, 0, -1, 0.5, 0.3, 0], [0.6, 0, -0.8, 0, 0.7, 0],
            [0, 0.6, -0.8, 0.4, 0.4, 0.3]]})",
        0.01}},
      {"double_spherical_pendulum",  // rods l1 = 4, l2 = 3 (the defaults), horizontal momenta
       {R"({"states": [[0, 0, -4, 0, 0, -7, 0.6, 0, 0, 1.0, 0.4, 0],
            [0, 0, -4, 0, 0, -7, 0, 0.8, 0, 0.35, 0, 0]]})",
        0.01}},
      // Attitudes that are exact rotations (E and quarter and half turns), body momenta about
      // each axis and near the unstable middle one (I = 2, 1, 2/3); Pi1 changes sign as the body
      // tumbles.
      {"rigid_body_so3",
       {R"({"states": [[1,0,0, 0,1,0, 0,0,1, 0.45,0,0.89], [0,-1,0, 1,0,0, 0,0,1, 0.9,0.3,0.1],
            [1,0,0, 0,0,-1, 0,1,0, 0.1,0.95,0.2], [-1,0,0, 0,1,0, 0,0,-1, 0.3,-0.4,0.8],
            [0,0,1, 0,1,0, -1,0,0, -0.6,0.2,0.7], [1,0,0, 0,1,0, 0,0,1, 0.2,0.2,-0.9],
            [0,1,0, 0,0,1, 1,0,0, 1.1,0,0.2], [1,0,0, 0,-1,0, 0,0,-1, 0.05,-0.9,0.4],
            [0,-1,0, 1,0,0, 0,0,1, -0.7,-0.5,-0.3]]})",
        0.1, "Pi1"}},
      // The same attitudes for the ellipsoid in fluid, positions near 0, body momenta near the
      // thesis's level set (|P| ~ 2.3, H ~ 4); Pi1 changes sign as it tumbles.
      {"kirchhoff_se3",
       {R"({"states": [[1,0,0, 0,1,0, 0,0,1, 0,0,0, 0.5,0,0.45, 0,2.28,0],
            [0,-1,0, 1,0,0, 0,0,1, 0.1,0,0, 0.3,0.2,0.4, 0.5,2.1,0.3],
            [1,0,0, 0,0,-1, 0,1,0, 0,-0.2,0.1, -0.4,0.3,0.2, 1.0,-1.9,0.2],
            [-1,0,0, 0,1,0, 0,0,-1, 0,0,0.3, 0.2,-0.3,-0.5, -0.6,0.4,2.0],
            [0,0,1, 0,1,0, -1,0,0, 0.2,0.1,0, 0.45,0.05,-0.2, 2.0,0.5,-0.8]]})",
        0.025, "Pi1"}},
  };
  return cases;
}

// The models whose CPU engines have no SIMD lanes (their steps are not written for packs):
// nothing to compare, and LaneCapableModelsAreAllCovered checks the list.
const char* const kScalarOnlyModels[] = {"rigid_body_quaternion"};

// The plain runs of the models above whose engine has no lanes: the double pendulum in FP64 (its
// lanes are FP32 only). Tangent maps have lanes only where the plain step of a (q, p) model is an
// explicit splitting (CpuEngine::kSimdTangent); elsewhere they run on the scalar lanes. A run
// without lanes would compare the scalar path with itself, so it is skipped; any other plain run
// found without lanes has lost them, and fails.
const char* const kPlainRunsWithoutLanes[] = {"double_pendulum/double"};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The CSV files a run wrote, by name.
std::map<std::string, std::string> csv_files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".csv") files[e.path().filename().string()] = read_file(e.path());
  return files;
}

Json job_of(const std::string& model, const std::string& integrator, const ModelCase& c,
            const std::string& precision, bool tangent, const fs::path& dir) {
  Json j;
  j["model"]["name"] = model;
  j["integrator"]["name"] = integrator;
  j["integrator"]["dt"] = c.dt;
  j["steps"] = 400;
  j["segment_steps"] = 150;
  j["precision"] = precision;
  j["ensemble"] = Json::parse(c.ensemble);
  j["section"] = {{"coordinate", c.section}, {"direction", "up"}};
  if (tangent) j["diagnostics"]["tangent"] = true;
  j["output"]["dir"] = dir.string();
  j["output"]["hdf5"] = false;
  return j;
}

}  // namespace

TEST(LaneIdentity, LaneCapableModelsAreAllCovered) {
  // Every built-in model either has an ensemble above or runs without lanes, so a model given
  // lanes later cannot escape the sweep.
  for (const ModelInfo& m : model_infos()) {
    if (!m.builtin || m.formula) continue;
    if (model_cases().count(m.name)) continue;
    bool listed = false;
    for (const char* s : kScalarOnlyModels) listed |= m.name == s;
    EXPECT_TRUE(listed) << m.name << ": give it an ensemble in model_cases()";
    for (const std::string& in : m.integrators) {
      Integration s;
      s.model = m.name;
      s.integrator = in;
      for (const auto& p : m.params) s.params.push_back(p.default_value);
      const IntegratorInfo* info = find_integrator(in);
      ASSERT_NE(info, nullptr);
      for (const auto& o : info->options) s.options.push_back(o.default_value);
      s.dt = 0.01;
      const auto e = make_engine(s, EngineResources{}, BackendKind::kCpu);
      EXPECT_EQ(e->simd_lanes(), 1) << m.name << " / " << in << " has lanes: add it to the sweep";
    }
  }
}

TEST(LaneIdentity, EveryModelIntegratorAndPrecisionWritesTheSameBytes) {
  const ScratchDir scratch("lane-identity");
  RunOptions opt;
  opt.quiet = true;
  opt.threads = 1;
  int compared = 0, tangents_compared = 0;
  // One job on the scalar path and on the lanes: the same CSV bytes. Returns whether the job has
  // lanes to compare.
  const auto compare = [&](const std::string& model, const std::string& integrator,
                           const ModelCase& c, const std::string& precision, bool tangent) {
    SCOPED_TRACE(model + " / " + integrator + " / " + precision + (tangent ? " / tangent" : ""));
    const Job probe =
        parse_job(job_of(model, integrator, c, precision, tangent, scratch.path / "probe").dump());
    if (make_engine(probe.integration, EngineResources{}, BackendKind::kCpu)->simd_lanes() == 1) {
      const std::string run = model + "/" + precision;
      const auto* const end = std::end(kPlainRunsWithoutLanes);
      EXPECT_TRUE(tangent || std::find(std::begin(kPlainRunsWithoutLanes), end, run) != end)
          << run << " runs without lanes: it has lost them, or belongs in kPlainRunsWithoutLanes";
      return false;
    }
    std::map<std::string, std::string> files[2];
    for (int simd = 0; simd < 2; ++simd) {
      const fs::path dir =
          scratch.path / (std::to_string(compared) + (simd ? "-lanes" : "-scalar"));
      const vigor_test::ScopedEngineHooks hooks(/*scalar_lanes=*/simd == 0, false);
      const Job job = parse_job(job_of(model, integrator, c, precision, tangent, dir).dump());
      run_job(job, opt, false);
      files[simd] = csv_files(dir);
    }
    ++compared;
    tangents_compared += tangent;
    EXPECT_TRUE(files[0].count("final.csv"));
    EXPECT_EQ(files[0].size(), files[1].size());
    for (const auto& [name, bytes] : files[0]) {
      EXPECT_TRUE(files[1].count(name)) << name;
      EXPECT_TRUE(files[1].count(name) && bytes == files[1].at(name))
          << name << " differs between lanes and scalar";
    }
    return true;
  };
  for (const auto& [model, c] : model_cases()) {
    const ModelInfo* m = find_model(model);
    ASSERT_NE(m, nullptr) << model;
    for (const std::string& integrator : m->integrators) {
      // Tangent maps are FP64; where the pair has one on lanes, the indicators are compared too.
      // Where it has none, or its tangent map has no lanes, the plain FP64 run is compared.
      const bool has_tangent =
          std::find(m->tangent_integrators.begin(), m->tangent_integrators.end(), integrator) !=
          m->tangent_integrators.end();
      if (!has_tangent || !compare(model, integrator, c, "double", true))
        compare(model, integrator, c, "double", false);
      compare(model, integrator, c, "float", false);
    }
  }
  // 13 models, 2 to 14 integrators each, two precisions: 207 runs on lanes (2026-12-02), 40 of
  // them with tangent maps. A pair that loses its lanes lowers the counts; one that gains them
  // raises them, and the bounds may follow.
  EXPECT_GE(compared, 207);
  EXPECT_GE(tangents_compared, 40);
}
