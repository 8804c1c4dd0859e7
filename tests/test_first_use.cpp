/// @file test_first_use.cpp
/// @brief Built-in pairs compiled on first use (host/backends/first_use.hpp): every pair
/// models/first_use.def lists is a pair of the registry; a build for testing has all of them
/// compiled in; and an engine compiled through the plugin path gives the compiled-in engine's bits
/// (states, energy errors, Newton residuals, tangent-free and with a section's hits), since it is
/// the same template compiled with the same compiler and flags. The plugin is compiled once per
/// suite into the build tree's shared cache (VIGOR_TEST_FORMULA_CACHE). The notice that a run
/// waits for the compiler is printed unless the command line asked for quiet.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "engine_runs.hpp"
#include "host/backends/first_use.hpp"
#include "host/backends/plugin.hpp"
#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/output/hits.hpp"
#include "host/run/run.hpp"

using namespace vigor::host;

namespace {

struct Pair {
  std::string model, integrator;
};

/// The VIGOR_FIRST_USE lines of models/first_use.def, as CMake reads them.
std::vector<Pair> listed_pairs() {
  std::ifstream in(std::string(VIGOR_SOURCE_DIR) + "/models/first_use.def");
  const std::regex line(R"(^VIGOR_FIRST_USE\(([a-z0-9_]+), *([a-z0-9_]+)\) *$)");
  std::vector<Pair> v;
  for (std::string s; std::getline(in, s);) {
    std::smatch m;
    if (std::regex_match(s, m, line)) v.push_back({m[1], m[2]});
  }
  return v;
}

}  // namespace

TEST(FirstUse, EveryListedPairIsAPairOfTheRegistry) {
  const std::vector<Pair> pairs = listed_pairs();
  ASSERT_FALSE(pairs.empty()) << "models/first_use.def lists no pair (or cannot be read)";
  for (const Pair& p : pairs) {
    SCOPED_TRACE(p.model + " / " + p.integrator);
    const ModelInfo* m = find_model(p.model);
    ASSERT_TRUE(m && m->builtin) << "not a built-in model";
    EXPECT_NE(std::find(m->integrators.begin(), m->integrators.end(), p.integrator),
              m->integrators.end())
        << "the integrator does not handle the model";
    // A build for testing compiles every pair ahead of time.
    EXPECT_FALSE(compiled_on_first_use(p.model, p.integrator));
  }
}

TEST(FirstUse, TheSourceNamesTheModelAndIntegratorTemplates) {
  Integration s;
  s.model = "outer_solar_system";
  s.integrator = "midpoint";
  s.precision = Precision::kFloat;
  const PluginSource src = builtin_engine_source(s, BackendKind::kCpu);
  EXPECT_FALSE(src.cuda);
  EXPECT_NE(src.main_text.find("#include \"models/outer_solar_system.hpp\""), std::string::npos);
  EXPECT_NE(src.main_text.find("#include \"kernels/integrators/midpoint.hpp\""), std::string::npos);
  EXPECT_NE(src.main_text.find(
                "VIGOR_PLUGIN_ENGINE(vigor::models::OuterSolarSystem, vigor::kernels::Midpoint, "
                "float)"),
            std::string::npos);
  EXPECT_TRUE(src.announce);
  s.model = "no_such_model";
  EXPECT_THROW(builtin_engine_source(s, BackendKind::kCpu), std::invalid_argument);
  s.model = "kepler";
  EXPECT_THROW(builtin_engine_source(s, BackendKind::kAuto), std::invalid_argument);
}

TEST(FirstUse, ThePluginEngineGivesTheCompiledInBits) {
  // The harmonic oscillator with the implicit midpoint rule (Newton iterations, SIMD lanes):
  // cheap to compile, and the path is the same for every pair. Thirteen trajectories (not a
  // multiple of the lane width) and a section, so hits and the partial block are compared too.
  ::setenv("VIGOR_CACHE_DIR", VIGOR_TEST_FORMULA_CACHE, 1);
  const Job job = parse_job(R"({
    "model": {"name": "harmonic_oscillator"}, "integrator": {"name": "midpoint", "dt": 0.05},
    "steps": 2000, "segment_steps": 700,
    "ensemble": {"random_box": {"lo": [-1, -1], "hi": [1, 1], "count": 13, "seed": 5}},
    "section": {"coordinate": "q0", "direction": "up"}, "output": {"dir": "unused"}})");
  const EngineResources r = engine_resources(RunOptions{});
  auto compiled_in = make_engine(job.integration, r, BackendKind::kCpu);
  auto plugin = make_first_use_engine(job.integration, r, BackendKind::kCpu);
  ASSERT_TRUE(compiled_in && plugin);
  EXPECT_GT(compiled_in->simd_lanes(), 1);
  EXPECT_EQ(compiled_in->simd_lanes(), plugin->simd_lanes());
  const vigor_test::EngineRun a = vigor_test::run_engine(*compiled_in, job);
  const vigor_test::EngineRun b = vigor_test::run_engine(*plugin, job);
  vigor_test::expect_identical(a, b, job.ensemble.count);
  EXPECT_EQ(a.final.newton_residual, b.final.newton_residual);
  EXPECT_GT(a.hits.size(), 0u);
}

namespace {

/// What load_plugin writes to stderr for a source that asks to be announced and fails to compile
/// at once (an #error), in a fresh cache: the notice comes before the compiler runs.
std::string stderr_of_failed_announced_compile(const std::string& cache) {
  PluginSource src;
  src.main_file = "plugin.cpp";
  src.main_text = "#error stops the compiler at once\n";
  src.what = "test source";
  src.announce = true;
  ::setenv("VIGOR_CACHE_DIR", cache.c_str(), 1);
  testing::internal::CaptureStderr();
  EXPECT_THROW(load_plugin(src), std::runtime_error);
  return testing::internal::GetCapturedStderr();
}

}  // namespace

TEST(FirstUse, TheCompileNoticeIsOffWhenQuiet) {
  // `vigor run --quiet` turns the notice off (host/cli/cli.cpp); a cache directory per case so
  // that nothing is found in a cache.
  const std::string base =
      testing::TempDir() + "vigor-compile-notice-" + std::to_string(::getpid());
  const std::string loud = stderr_of_failed_announced_compile(base + "-loud");
  EXPECT_NE(loud.find("vigor: compiling the test source on first use"), std::string::npos) << loud;
  set_compile_notices(false);
  const std::string quiet = stderr_of_failed_announced_compile(base + "-quiet");
  set_compile_notices(true);
  EXPECT_EQ(quiet.find("compiling"), std::string::npos) << quiet;
  std::error_code ec;
  std::filesystem::remove_all(base + "-loud", ec);
  std::filesystem::remove_all(base + "-quiet", ec);
}
