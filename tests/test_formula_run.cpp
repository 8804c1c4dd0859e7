/// @file test_formula_run.cpp
/// @brief Formula models through the `vigor` executable: a job with model.formula compiles its
/// model into a cached plugin and runs like the built-in model it restates (final states to
/// round-off, the same section crossings); the cache is reused, a damaged entry rebuilt; no
/// compiler, or a failing one, is exit 3 with nothing written; `validate` compiles nothing. In a
/// build with the CUDA backend: the CUDA plugin compiles without a device, and on a GPU the
/// formula model runs like the built-in one there.
///
/// The runs share one cache in the build tree (VIGOR_TEST_FORMULA_CACHE), so a suite run compiles
/// each plugin once, and the tests that ctest runs side by side share it as concurrent runs do.
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "host/backends/registry.hpp"
#include "scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct Outcome {
  int code = -1;
  std::string err;
  std::string out;
};

/// The whole text of file p ("" when it cannot be read).
std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// `vigor ARGS` in `dir` with the extra environment `env` ("NAME=value ..."), stderr captured.
Outcome vigor(const fs::path& dir, const std::string& args, const std::string& env = "") {
  const fs::path err = dir / "stderr.txt";
  const std::string cmd = "cd '" + dir.string() + "' && env VIGOR_CACHE_DIR='" +
                          std::string(VIGOR_TEST_FORMULA_CACHE) + "' " + env + " '" + VIGOR_BIN +
                          "' " + args + " >'" + (dir / "stdout.txt").string() + "' 2>'" +
                          err.string() + "'";
  const int status = std::system(cmd.c_str());
  Outcome r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = text_of(err);
  r.out = text_of(dir / "stdout.txt");
  return r;
}

/// Hénon–Heiles as the example writes it, or the built-in model.
Json henon_heiles_job(bool formula, const std::string& out) {
  Json j;
  if (formula)
    j["model"] = {{"formula",
                   {{"name", "my_henon_heiles"},
                    {"dof", 2},
                    {"potential", "(q0^2 + q1^2)/2 + a*q0^2*q1 + b*q1^3"},
                    {"masses", {1, 1}}}},
                  {"params", {{"a", 1.0}, {"b", -0.3333333333333333}}}};
  else
    j["model"] = {{"name", "henon_heiles"}};
  j["integrator"] = {{"name", "verlet"}, {"dt", 0.01}};
  j["steps"] = 5000;
  // Regular orbits at E = 1/12 and below: no Lyapunov growth of the round-off differences.
  j["ensemble"] = {{"states",
                    {{0.0, 0.1, 0.3, 0.0},
                     {0.0, -0.15, 0.25, 0.05},
                     {0.0, 0.2, 0.2, -0.1},
                     {0.0, 0.0, 0.35, 0.1}}}};
  j["section"] = {{"coordinate", "q0"}, {"value", 0.0}, {"direction", "up"}};
  j["backend"] = "cpu";
  j["output"] = {{"dir", out}};
  return j;
}

std::vector<std::vector<std::string>> csv(const fs::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream s(line);
    for (std::string c; std::getline(s, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

void write(const fs::path& p, const Json& j) { std::ofstream(p) << j.dump(2); }

/// The plugin directories of the shared cache whose model is named `name` (the generated header
/// holds the name; other tests' plugins, which may be in use by their runs, are left alone).
std::vector<fs::path> plugins_of(const std::string& name) {
  std::vector<fs::path> v;
  const fs::path root = fs::path(VIGOR_TEST_FORMULA_CACHE) / "plugins";
  if (!fs::exists(root)) return v;
  for (const auto& e : fs::directory_iterator(root)) {
    // Complete entries only: a hash as the name (not a build in progress, id.tmp-*, nor one set
    // aside, id.bad-*), and the mark the builder writes last.
    const std::string id = e.path().filename().string();
    if (id.size() != 16 || id.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
    if (!e.is_directory() || !fs::exists(e.path() / "complete")) continue;
    if (text_of(e.path() / "model.hpp").find("kName = \"" + name + "\"") != std::string::npos)
      v.push_back(e.path());
  }
  return v;
}

/// Hénon–Heiles from its formula and the built-in model on `backend`, in both precisions: the
/// same columns, final states to round-off, the same crossings and statuses and sections.
void expect_formula_runs_like_builtin(const std::string& backend, const std::string& scratch) {
  ScratchDir dir(scratch);
  for (const char* precision : {"double", "float"}) {
    Json f = henon_heiles_job(true, "f");
    Json b = henon_heiles_job(false, "b");
    f["backend"] = b["backend"] = backend;
    write(dir.path / "formula.json", f);
    write(dir.path / "builtin.json", b);
    const std::string p = std::string(" --precision ") + precision + " --force";
    const Outcome rf = vigor(dir.path, "run formula.json" + p);
    ASSERT_EQ(rf.code, 0) << rf.err;
    ASSERT_EQ(vigor(dir.path, "run builtin.json" + p).code, 0);
    const auto x = csv(dir.path / "f" / "final.csv");
    const auto y = csv(dir.path / "b" / "final.csv");
    ASSERT_EQ(x.size(), 5u);
    ASSERT_EQ(x.size(), y.size());
    EXPECT_EQ(x[0], y[0]);  // the same columns: trajectory,t,q0,q1,p0,p1,...
    // The formula's force is its gradient written out from the tree, the built-in model's is
    // hand-written with the products grouped otherwise: a few ulps apart per step, adding up
    // linearly on these regular orbits to about N eps |x| after N steps
    // (tests/test_formula_models.cpp). Bound: 4 N eps with |x| <= 0.5. On a GPU nvcc's fused
    // multiply-adds round less, and the bound holds as well.
    const double eps = std::string(precision) == "float" ? 0x1p-23 : 0x1p-52;
    const double bound = 4.0 * 5000 * eps * 0.5;
    for (std::size_t r = 1; r < x.size(); ++r) {
      for (int c = 2; c < 6; ++c)
        EXPECT_NEAR(std::stod(x[r][c]), std::stod(y[r][c]), bound) << precision << " row " << r;
      EXPECT_EQ(x[r].end()[-2], y[r].end()[-2]) << "crossings, row " << r;  // crossings column
      EXPECT_EQ(x[r].back(), y[r].back()) << "status, row " << r;
    }
    EXPECT_EQ(csv(dir.path / "f" / "sections.csv").size(),
              csv(dir.path / "b" / "sections.csv").size());
    std::ifstream summary(dir.path / "f" / "summary.json");
    const Json s = Json::parse(summary);
    EXPECT_EQ(s["job"]["model"]["formula"]["name"], "my_henon_heiles");
    EXPECT_EQ(s["backend"], backend);
  }
}

TEST(FormulaRun, HenonHeilesFromItsFormulaRunsLikeTheBuiltInModel) {
  expect_formula_runs_like_builtin("cpu", "formula-hh");
}

/// Remove the plugins of model `name` (one test's own model) left by earlier runs of the suite
/// in this build tree: built from older sources, they would be counted as this run's.
void forget_plugins_of(const std::string& name) {
  for (const fs::path& p : plugins_of(name)) fs::remove_all(p);
}

TEST(FormulaRun, TheCacheIsReusedAndADamagedEntryRebuilt) {
  // A model of its own name, so that only this test's plugin is damaged below.
  forget_plugins_of("cache_test_model");
  ScratchDir dir("formula-cache");
  Json job = henon_heiles_job(true, "out");
  job["model"]["formula"]["name"] = "cache_test_model";
  write(dir.path / "job.json", job);
  ASSERT_EQ(vigor(dir.path, "run job.json --force").code, 0);
  const auto mine = plugins_of("cache_test_model");
  ASSERT_EQ(mine.size(), 1u);
  const auto built = fs::last_write_time(mine[0] / "plugin.so");
  // A second run compiles nothing: the plugin is loaded as it was. (The cache key holds the
  // compiler, so another VIGOR_CXX would be another plugin, not a test of the cache.)
  const Outcome again = vigor(dir.path, "run job.json --force");
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(fs::last_write_time(mine[0] / "plugin.so"), built);
  EXPECT_EQ(plugins_of("cache_test_model").size(), 1u);
  // Damaged: the next run sets it aside and builds it again.
  fs::resize_file(mine[0] / "plugin.so", 100);
  const Outcome rebuilt = vigor(dir.path, "run job.json --force");
  EXPECT_EQ(rebuilt.code, 0) << rebuilt.err;
  const auto now = plugins_of("cache_test_model");
  ASSERT_EQ(now.size(), 1u);
  EXPECT_GT(fs::file_size(now[0] / "plugin.so"), 100u);
}

TEST(FormulaRun, NoCompilerIsARuntimeErrorAndWritesNothing) {
  ScratchDir dir("formula-nocc");
  // A model no other test compiles (another parameter value would not do: values are not
  // compiled in), so the cache cannot already hold it.
  Json job = henon_heiles_job(true, "out");
  job["model"]["formula"]["potential"] = "(q0^2 + q1^2)/2 + a*q0^2*q1 + b*q1^3 + 0*q0";
  write(dir.path / "job.json", job);
  const Outcome r = vigor(dir.path, "run job.json", "VIGOR_CXX=/nonexistent/c++");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("needs a C++20 compiler: '/nonexistent/c++' could not be run"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path / "out"));
  const Outcome f = vigor(dir.path, "run job.json", "VIGOR_CXX=/bin/false");
  EXPECT_EQ(f.code, 3) << f.err;
  const auto at = f.err.find("its log is kept in ");
  ASSERT_NE(at, std::string::npos) << f.err;
  std::string log = f.err.substr(at + 19);
  log = log.substr(0, log.find_first_of("\n"));
  EXPECT_TRUE(fs::exists(log)) << log;
  EXPECT_FALSE(fs::exists(dir.path / "out"));
  // validate checks the formulas and the initial states without compiling anything.
  EXPECT_EQ(vigor(dir.path, "validate job.json", "VIGOR_CXX=/nonexistent/c++").code, 0);
}

TEST(FormulaRun, ListShowsTheJobsModelAndValidateCompileFillsTheCache) {
  ScratchDir dir("formula-list");
  Json job = henon_heiles_job(true, "out");
  job["model"]["formula"]["name"] = "list_test_model";
  forget_plugins_of("list_test_model");
  job["model"]["formula"]["momentum_maps"] = {{"Lz", "q0*p1 - q1*p0"}};
  write(dir.path / "job.json", job);
  const Outcome l = vigor(dir.path, "list job.json", "VIGOR_CXX=/nonexistent/c++");
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.out.find("list_test_model  (dof 2, separable, from the job's formulas)"),
            std::string::npos)
      << l.out;
  EXPECT_NE(l.out.find("momentum maps: Lz"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("integrators: verlet"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("midpoint"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("tangent maps (diagnostics.tangent): verlet"), std::string::npos) << l.out;
  // validate --compile builds the run's plugin; the run then loads it as it is.
  const Outcome v = vigor(dir.path, "validate job.json --compile");
  ASSERT_EQ(v.code, 0) << v.err;
  const auto mine = plugins_of("list_test_model");
  ASSERT_EQ(mine.size(), 1u);
  const auto built = fs::last_write_time(mine[0] / "plugin.so");
  const Outcome r = vigor(dir.path, "run job.json");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path / "out" / "final.csv"));
  EXPECT_EQ(fs::last_write_time(mine[0] / "plugin.so"), built);
  EXPECT_EQ(plugins_of("list_test_model").size(), 1u);
}

/// The value of column `name` in row `r` of a CSV read by csv().
double cell(const std::vector<std::vector<std::string>>& t, std::size_t r,
            const std::string& name) {
  for (std::size_t c = 0; c < t[0].size(); ++c)
    if (t[0][c] == name) return std::stod(t[r][c]);
  ADD_FAILURE() << "no column " << name;
  return std::numeric_limits<double>::quiet_NaN();
}

TEST(FormulaRun, TangentMapsAreCompiledWhenTheJobAsksForThem) {
  // The regular (E = 1/12) and chaotic (E = 1/6) orbits of tests/test_run_tangent.cpp, to t = 200.
  forget_plugins_of("tangent_test_model");
  ScratchDir dir("formula-tangent");
  Json f = henon_heiles_job(true, "f");
  f["model"]["formula"]["name"] = "tangent_test_model";
  Json b = henon_heiles_job(false, "b");
  for (Json* j : {&f, &b}) {
    (*j)["steps"] = 20000;
    (*j)["ensemble"] = {
        {"states", {{0, 0.1, 0.3838402445462608, 0.1}, {0, -0.1, 0.5591660457025861, 0.1}}}};
    (*j)["diagnostics"] = {{"tangent", true}};
  }
  write(dir.path / "formula.json", f);
  write(dir.path / "builtin.json", b);
  const Outcome rf = vigor(dir.path, "run formula.json --force");
  ASSERT_EQ(rf.code, 0) << rf.err;
  ASSERT_EQ(vigor(dir.path, "run builtin.json --force").code, 0);
  const auto x = csv(dir.path / "f" / "final.csv");
  const auto y = csv(dir.path / "b" / "final.csv");
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x[0], y[0]);  // the same columns, the tangent diagnostics among them
  // Regular orbit: the two force codes differ by ulps, which the tangent map carries along
  // without exponential growth; MEGNO (about 2) agrees far below its own scatter.
  EXPECT_NEAR(cell(x, 1, "megno"), cell(y, 1, "megno"), 1e-6);
  // MEGNO of a regular orbit tends to 2 (1.59 at t = 200 from this start); a chaotic one grows.
  EXPECT_GT(cell(x, 1, "megno"), 1.0);
  EXPECT_LT(cell(x, 1, "megno"), 3.0);
  EXPECT_LT(cell(x, 1, "symplectic_defect"), 1e-10);
  // Chaotic orbit: told apart the same way (round-off differences grow, the verdict does not).
  EXPECT_GT(cell(x, 2, "megno"), 10.0);
  EXPECT_LT(cell(x, 2, "sali"), 1e-8);
  // Its plugin holds the tangent code; a run without tangent maps compiles another without it.
  const auto with = plugins_of("tangent_test_model");
  ASSERT_EQ(with.size(), 1u);
  f["diagnostics"] = {{"tangent", false}};
  write(dir.path / "formula.json", f);
  ASSERT_EQ(vigor(dir.path, "run formula.json --force").code, 0);
  int without = 0;
  for (const fs::path& p : plugins_of("tangent_test_model"))
    without += text_of(p / "model.hpp").find("kTangentMaps = false") != std::string::npos;
  EXPECT_EQ(without, 1);
  EXPECT_EQ(plugins_of("tangent_test_model").size(), 2u);
}

/// The job of examples/formula_<name>.json with its output in `out` and the states `states` (null:
/// the example's own).
Json example_job(const std::string& name, const std::string& out, const Json& states) {
  std::ifstream in(fs::path(VIGOR_SOURCE_DIR) / "examples" / ("formula_" + name + ".json"));
  Json j = Json::parse(in);
  j["output"]["dir"] = out;
  if (!states.is_null()) j["ensemble"] = {{"states", states}};
  return j;
}

TEST(FormulaRun, DiscreteRouthReductionOfTheJ2Satellite) {
  // Theorem 2.3 of the discrete Routh reduction (seeds/002, Jalnapurkar, Leok, Marsden & West):
  // for the same discrete Lagrangian, the reduced trajectory is the shape-space projection of the
  // unreduced one started on the momentum level mu. The J2 satellite in cylindrical coordinates,
  // L = (rho'^2 + rho^2 phi'^2 + z'^2)/2 - V(rho, z), is symmetric under phi -> phi + a; the
  // midpoint rule's discrete Lagrangian L_d = h L(qbar, (q1 - q0)/h) conserves the discrete
  // momentum p_phi = rhobar^2 dphi/h = mu exactly, and eliminating dphi = h mu / rhobar^2 from the
  // discrete Routhian L_d - mu dphi leaves h R(qbar, (q1 - q0)/h) with the amended Routhian
  // R = (rho'^2 + z'^2)/2 - mu^2/(2 rho^2) - V: the midpoint rule on R in shape space (rho, z).
  // The S^1 connection dphi is flat, so there is no magnetic term. Its shape momenta are the
  // unreduced p_rho, p_z (dR_d/drho0 = dL_d/drho0, as dL_d/ddphi = mu). So the two jobs of
  // examples/formula_j2_{cylindrical,reduced}.json compute one map by different arithmetic (a
  // 3-unknown and a 2-unknown Newton solve, residuals <= 4.4e-16 here): per step a few ulps
  // apart, adding up about linearly on these regular orbits, so 4 N eps max|x| bounds the
  // difference after N = 20000 steps (2.7e-11; measured 3.4e-13), and p_phi itself drifts by
  // round-off alone (bound 4 N eps |mu|; measured 8e-16 and 2e-13).
  ScratchDir dir("formula-routh");
  const std::vector<std::vector<double>> orbits = {{1.2, 0.0, 0.3, 0.05, 0.85, 0.1},
                                                   {1.5, 0.7, -0.2, -0.1, 1.1, 0.05}};
  write(dir.path / "cyl.json", example_job("j2_cylindrical", "cyl", orbits));
  const Outcome rc = vigor(dir.path, "run cyl.json --force");
  ASSERT_EQ(rc.code, 0) << rc.err;
  const auto cyl = csv(dir.path / "cyl" / "final.csv");
  ASSERT_EQ(cyl.size(), 3u);
  const double eps = 0x1p-52, steps = 20000;
  for (std::size_t k = 0; k < orbits.size(); ++k) {
    const auto& o = orbits[k];
    const double mu = o[4];
    Json red = example_job("j2_reduced", "red", Json::array({{o[0], o[2], o[3], o[5]}}));
    red["model"]["params"]["mu"] = mu;
    write(dir.path / "red.json", red);
    const Outcome rr = vigor(dir.path, "run red.json --force");
    ASSERT_EQ(rr.code, 0) << rr.err;
    const auto reduced = csv(dir.path / "red" / "final.csv");
    ASSERT_EQ(reduced.size(), 2u);
    const std::size_t row = k + 1;
    EXPECT_NEAR(cell(cyl, row, "p_phi"), mu, 4 * steps * eps * mu) << "orbit " << k;
    for (const char* name : {"rho", "z", "p_rho", "p_z"})
      EXPECT_NEAR(cell(reduced, 1, name), cell(cyl, row, name), 4 * steps * eps * 1.5)
          << name << ", orbit " << k;
    // The projection moved: the orbit precesses and oscillates (not a trivial fixed point).
    EXPECT_GT(std::abs(cell(cyl, row, "z") - o[2]), 1e-3) << "orbit " << k;
    EXPECT_EQ(cell(reduced, 1, "crossings"), cell(cyl, row, "crossings")) << "orbit " << k;
    EXPECT_GT(cell(cyl, row, "crossings"), 10) << "orbit " << k;
  }
}

/// The double spherical pendulum's magnetic potential A = b / I on shape space (x = theta1, theta2,
/// psi): the coefficients of the Routhian's term mu b.x' / I (examples/formula_double_spherical_
/// reduced.json, with its masses and lengths).
std::array<double, 3> dsp_magnetic_potential(const std::array<double, 3>& q) {
  const double m1 = 2.0, m2 = 3.5, l1 = 4.0, l2 = 3.0;
  const double s0 = std::sin(q[0]), c0 = std::cos(q[0]), s1 = std::sin(q[1]), c1 = std::cos(q[1]);
  const double s2 = std::sin(q[2]), c2 = std::cos(q[2]);
  const double I =
      (m1 + m2) * l1 * l1 * s0 * s0 + m2 * l2 * l2 * s1 * s1 + 2 * m2 * l1 * l2 * s0 * s1 * c2;
  return {-m2 * l1 * l2 * s2 * c0 * s1 / I, m2 * l1 * l2 * s2 * s0 * c1 / I,
          m2 * l2 * s1 * (l2 * s1 + l1 * s0 * c2) / I};
}

/// Symplecticity of the reduced map (seeds/002 §4): the discrete Routh map preserves
/// Omega_S - mu dA on T*S. In vigor's state, p = dR/dx' = pi + mu A(x) with pi = (G - b b^T/I) x'
/// the kinematic momentum, and dx^dp = dx^dpi + mu dA: so the map is canonical in (x, p) exactly
/// when it preserves Omega_S - mu dA in (x, pi), and in (x, pi) it does NOT preserve the plain
/// dx^dpi, by the curvature term. The tangent map is taken here by central differences over 200
/// steps (the engines' dual-number tangent is not built for a 3-dof non-separable midpoint step):
/// 13 trajectories of one run, steps 1e-5 in angle and 1e-4 in momentum (|p| ~ 60), so each column
/// is accurate to about eps^2 |third derivative| + 1e-12 / eps ~ 1e-8, and the defects
/// M^T J M - J to ~1e-7. Against the plain form the defect is of the size of mu |dA| |M|^2.
void expect_reduced_map_symplectic_for_the_magnetic_form(const fs::path& dir,
                                                         const std::string& integrator = "midpoint",
                                                         double dt = 0.005) {
  const std::vector<double> x0 = {0.77, 0.84, 0.0, 0.0, 0.0, 57.57697826130952};
  const double eps[6] = {1e-5, 1e-5, 1e-5, 1e-4, 1e-4, 1e-4};
  const double mu = 150.0;
  Json states = Json::array();
  states.push_back(x0);
  for (int k = 0; k < 6; ++k)
    for (const double sign : {1.0, -1.0}) {
      std::vector<double> x = x0;
      x[std::size_t(k)] += sign * eps[k];
      states.push_back(x);
    }
  Json j = example_job("double_spherical_reduced", "fd", states);
  j["integrator"] = {{"name", integrator}, {"dt", dt}};
  j["steps"] = 200;
  j.erase("section");
  write(dir / "fd.json", j);
  const Outcome r = vigor(dir, "run fd.json --force");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto t = csv(dir / "fd" / "final.csv");
  ASSERT_EQ(t.size(), 14u);
  const char* names[6] = {"theta1", "theta2", "psi", "p_theta1", "p_theta2", "p_psi"};
  auto state = [&](std::size_t row) {
    std::array<double, 6> x;
    for (int i = 0; i < 6; ++i) x[std::size_t(i)] = cell(t, row, names[i]);
    return x;
  };
  using M6 = std::array<std::array<double, 6>, 6>;
  M6 M{};
  for (int k = 0; k < 6; ++k) {
    const auto plus = state(std::size_t(2 + 2 * k)), minus = state(std::size_t(3 + 2 * k));
    for (int i = 0; i < 6; ++i) M[i][k] = (plus[i] - minus[i]) / (2 * eps[k]);
  }
  // C(x) = d(x, pi)/d(x, p) = [[E, 0], [-mu DA(x), E]], (DA)_ij = dA_i/dx_j by central
  // differences; sign -1 gives C^{-1}.
  auto chart = [&](const std::array<double, 6>& x, double sign) {
    M6 C{};
    for (int i = 0; i < 6; ++i) C[i][i] = 1;
    for (int jj = 0; jj < 3; ++jj) {
      std::array<double, 3> qp{x[0], x[1], x[2]}, qm = qp;
      qp[jj] += 1e-6;
      qm[jj] -= 1e-6;
      const auto ap = dsp_magnetic_potential(qp), am = dsp_magnetic_potential(qm);
      for (int i = 0; i < 3; ++i) C[3 + i][jj] = -sign * mu * (ap[i] - am[i]) / 2e-6;
    }
    return C;
  };
  auto mul = [](const M6& a, const M6& b) {
    M6 c{};
    for (int i = 0; i < 6; ++i)
      for (int k = 0; k < 6; ++k)
        for (int jj = 0; jj < 6; ++jj) c[i][jj] += a[i][k] * b[k][jj];
    return c;
  };
  auto defect = [](const M6& m) {  // max |M^T J M - J|
    double d = 0;
    for (int a = 0; a < 6; ++a)
      for (int b = 0; b < 6; ++b) {
        double w = 0;
        for (int i = 0; i < 3; ++i) w += m[i][a] * m[3 + i][b] - m[3 + i][a] * m[i][b];
        const double J = a + 3 == b ? 1.0 : b + 3 == a ? -1.0 : 0.0;
        d = std::max(d, std::abs(w - J));
      }
    return d;
  };
  const std::array<double, 6> start{x0[0], x0[1], x0[2], x0[3], x0[4], x0[5]};
  // M in (x, pi): C(x_1) M C(x_0)^{-1}.
  const M6 kinematic = mul(mul(chart(state(1), 1.0), M), chart(start, -1.0));
  const double canonical_defect = defect(M), plain_defect = defect(kinematic);
  std::printf(
      "%s reduced map by central differences, 200 steps of %g: |M^T J M - J| in (x, p) (the "
      "defect against Omega_S - mu dA) %.2e; in (x, pi) against the plain dx^dpi %.2e\n",
      integrator.c_str(), dt, canonical_defect, plain_defect);
  EXPECT_LE(canonical_defect, 1e-6);
  EXPECT_GE(plain_defect, 1e-2);
}

/// Runs the double spherical pendulum's two example jobs (unreduced angles, reduced Routhian) with
/// `integrator` (null: the examples' own midpoint, h = 0.005, 20000 steps) and holds the reduced
/// run to the projection of the unreduced one: 4 N eps |x| with N the midpoint solves (`substeps`
/// per step), x 60 for the momenta, x mu for J_z (the bounds of the test below). Returns the
/// largest difference of the shape angles.
double expect_dsp_reduction_commutes(const fs::path& dir, const Json& integrator, int steps,
                                     int substeps) {
  for (const char* name : {"angles", "reduced"}) {
    Json j = example_job(std::string("double_spherical_") + name, name, nullptr);
    EXPECT_EQ(j["ensemble"]["states"].size(), 2u);
    if (!integrator.is_null()) {
      j["integrator"] = integrator;
      j["steps"] = steps;
    }
    write(dir / (std::string(name) + ".json"), j);
    const Outcome r = vigor(dir, std::string("run ") + name + ".json --force");
    EXPECT_EQ(r.code, 0) << r.err;
  }
  const auto full = csv(dir / "angles" / "final.csv");
  const auto reduced = csv(dir / "reduced" / "final.csv");
  EXPECT_EQ(full.size(), 3u);
  EXPECT_EQ(reduced.size(), 3u);
  if (full.size() != 3u || reduced.size() != 3u) return 1.0;
  const double eps = 0x1p-52, n = double(steps) * substeps, mu = 150, momenta = 60;
  double gap = 0;
  for (std::size_t row = 1; row <= 2; ++row) {
    EXPECT_NEAR(cell(full, row, "p_phi1"), mu, 4 * n * eps * mu) << "orbit " << row;
    for (const char* name : {"theta1", "theta2", "psi"}) {
      gap = std::max(gap, std::abs(cell(reduced, row, name) - cell(full, row, name)));
      EXPECT_NEAR(cell(reduced, row, name), cell(full, row, name), 4 * n * eps)
          << name << ", orbit " << row;
    }
    for (const char* name : {"p_theta1", "p_theta2", "p_psi"})
      EXPECT_NEAR(cell(reduced, row, name), cell(full, row, name), 4 * n * eps * momenta)
          << name << ", orbit " << row;
    EXPECT_EQ(cell(reduced, row, "crossings"), cell(full, row, "crossings")) << "orbit " << row;
    // The shape moved: psi oscillates about the relative equilibrium (not a fixed point).
    EXPECT_GT(cell(full, row, "crossings"), 10) << "orbit " << row;
  }
  return gap;
}

TEST(FormulaRun, DiscreteRouthReductionOfTheDoubleSphericalPendulumWithItsMagneticTerm) {
  // Theorem 2.3 where the reduced space has a magnetic term (seeds/002 §6). In the angles
  // (theta1, theta2, psi = phi2 - phi1, phi1) the pendulum's L is quadratic in the cyclic phi1':
  // L = I(x) phi1'^2 / 2 + phi1' b(x).x' + x'G(x)x'/2 - V(x). Under the midpoint rule the discrete
  // momentum I(xbar) dphi1/h + b(xbar).dx/h = mu is conserved exactly, and eliminating dphi1 from
  // L_d - mu dphi1 leaves h R(xbar, dx/h) with the Routhian
  // R = x'Gx'/2 - (mu - b.x')^2 / (2 I) - V, whose term mu b.x'/I is the magnetic one (curvature
  // d(b/I) != 0): the midpoint rule on R is the discrete Routh reduction, and the reduced shape
  // momenta dR/dx' equal the unreduced dL/dx' (tests/formula/check_double_spherical_routhian.py
  // checks both formulas against the Cartesian Lagrangian). So the two example jobs compute one
  // map by different arithmetic (a 4- and a 3-unknown Newton solve, residuals <= 1e-13 on momenta
  // of size 60): per step a few ulps apart, adding up about linearly near the relative
  // equilibrium the orbits start from, so 4 N eps |x| bounds the difference after N = 20000 steps
  // (positions 1.8e-11, momenta of size 60: 1.1e-9; measured 1.1e-13 and 6.9e-12), and J_z = p_phi1
  // itself moves by round-off alone (4 N eps mu = 2.7e-9; measured 2.9e-12).
  ScratchDir dir("formula-routh-dsp");
  expect_dsp_reduction_commutes(dir.path, nullptr, 20000, 1);
  expect_reduced_map_symplectic_for_the_magnetic_form(dir.path);
}

TEST(FormulaRun, DiscreteRouthReductionOfTheDoubleSphericalPendulumAtOrder4) {
  // The same pair under midpoint4, the triple jump M_{c1 h} M_{c0 h} M_{c1 h} of the midpoint
  // rule: each substep conserves the discrete momentum and reduces exactly as above, so the
  // composition on R (the fourth-order RSPRK of its three-stage tableau) is the projection of the
  // composition on L, step by step. The bounds above with N = 3 x 10000 substeps: 4 N eps =
  // 2.7e-11 in the angles, x 60 in the momenta, x mu for J_z. And its reduced map is symplectic
  // for Omega_S - mu dA, not for the plain form.
  ScratchDir dir("formula-routh-dsp4");
  const double gap =
      expect_dsp_reduction_commutes(dir.path, Json{{"name", "midpoint4"}, {"dt", 0.01}}, 10000, 3);
  std::printf("midpoint4, 10000 steps of 0.01: reduced - unreduced shape angles %.1e\n", gap);
  expect_reduced_map_symplectic_for_the_magnetic_form(dir.path, "midpoint4", 0.01);
}

#if defined(VIGOR_HAVE_CUDA)
/// The plugin directories of `name`'s CUDA engines (their translation unit is plugin.cu).
std::vector<fs::path> cuda_plugins_of(const std::string& name) {
  std::vector<fs::path> v;
  for (const fs::path& p : plugins_of(name))
    if (fs::exists(p / "plugin.cu")) v.push_back(p);
  return v;
}

TEST(FormulaRun, TheCudaPluginCompilesWithoutADevice) {
  // nvcc needs no GPU: validate --compile builds the CUDA engine a run on a GPU would load.
  ScratchDir dir("formula-cuda-compile");
  Json job = henon_heiles_job(true, "out");
  job["model"]["formula"]["name"] = "cuda_compile_test_model";
  forget_plugins_of("cuda_compile_test_model");
  job["backend"] = "cuda";
  write(dir.path / "job.json", job);
  const Outcome none =
      vigor(dir.path, "validate job.json --compile", "VIGOR_NVCC=/nonexistent/nvcc");
  EXPECT_EQ(none.code, 3) << none.err;
  EXPECT_NE(none.err.find("needs the CUDA compiler: '/nonexistent/nvcc' could not be run"),
            std::string::npos)
      << none.err;
  const Outcome v = vigor(dir.path, "validate job.json --compile");
  ASSERT_EQ(v.code, 0) << v.err;
  const auto mine = cuda_plugins_of("cuda_compile_test_model");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_TRUE(fs::exists(mine[0] / "plugin.so"));
  // Only the CUDA engine was asked for: no CPU plugin of this model was compiled.
  EXPECT_EQ(plugins_of("cuda_compile_test_model").size(), 1u);
}

TEST(FormulaRun, HenonHeilesFromItsFormulaRunsLikeTheBuiltInModelOnTheGpu) {
  if (vigor::host::cuda_device_count() == 0) {
    const char* req = std::getenv("VIGOR_REQUIRE_GPU");
    if (req && std::string(req) == "1") FAIL() << "VIGOR_REQUIRE_GPU=1 but no usable CUDA device";
    GTEST_SKIP() << "no usable CUDA device";
  }
  expect_formula_runs_like_builtin("cuda", "formula-hh-gpu");
}
#endif

TEST(FormulaRun, TheExamplesAreValid) {
  // examples/formula_*.json as docs/formula_models.md shows them: valid, checked without compiling.
  ScratchDir dir("formula-examples");
  int seen = 0;
  for (const auto& e : fs::directory_iterator(fs::path(VIGOR_SOURCE_DIR) / "examples")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("formula_", 0) != 0 || e.path().extension() != ".json") continue;
    ++seen;
    const Outcome r =
        vigor(dir.path, "validate '" + e.path().string() + "'", "VIGOR_CXX=/nonexistent/c++");
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
  }
  EXPECT_EQ(seen, 7);
}

}  // namespace
