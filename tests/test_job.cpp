/// @file test_job.cpp
/// @brief Job files: defaults, ensembles (grid order, counter-based RNG, energy-shell grids) and
/// the error messages of bad input (DESIGN.md §4: every error names its key path and value).
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "kernels/sections.hpp"

namespace vigor::host {
namespace {

using Json = nlohmann::ordered_json;

/// A small valid job on `model` to be patched by each test.
Json base_job(const std::string& model = "henon_heiles") {
  Json j;
  j["model"] = {{"name", model}};
  j["integrator"] = {{"name", "verlet"}, {"dt", 0.01}};
  j["steps"] = 1000;
  if (model == "henon_heiles" || model == "kepler")
    j["ensemble"] = {{"states", {{0.4, 0.0, 0.0, 2.0}}}};
  else
    j["ensemble"] = {{"states", {{0.1, 0.0}}}};
  return j;
}

/// Component c of trajectory i.
double at(const Ensemble& e, int c, std::int64_t i) {
  return e.state[std::size_t(c) * e.count + i];
}

/// Expects parse_job to fail on exactly `path`, with a message containing `fragment`.
void expect_text_error(const std::string& text, const std::string& path,
                       const std::string& fragment, const Overrides& overrides = {}) {
  SCOPED_TRACE(text);
  try {
    parse_job(text, overrides);
    ADD_FAILURE() << "no error; expected one on " << path;
  } catch (const JobError& e) {
    EXPECT_EQ(e.path(), path) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << fragment;
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
  }
}
void expect_error(const Json& job, const std::string& path, const std::string& fragment,
                  const Overrides& overrides = {}) {
  expect_text_error(job.dump(), path, fragment, overrides);
}

/// Expects the whole message to be `message` (for the messages DESIGN.md and the brief spell out).
void expect_message(const Json& job, const std::string& message) {
  SCOPED_TRACE(job.dump());
  try {
    parse_job(job.dump());
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const JobError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

// --- Good jobs --------------------------------------------------------------------------------

TEST(Job, MinimalJobGetsEveryDefault) {
  const Json src = base_job();
  const Job job = parse_job(src.dump());
  EXPECT_EQ(job.source, src);
  EXPECT_EQ(job.integration.model, "henon_heiles");
  ASSERT_EQ(job.integration.params.size(), 2u);
  EXPECT_EQ(job.integration.params[0], 1.0);
  EXPECT_EQ(job.integration.params[1], -1.0 / 3.0);
  EXPECT_EQ(job.integration.integrator, "verlet");
  EXPECT_EQ(job.integration.dt, 0.01);
  EXPECT_TRUE(job.integration.options.empty());
  EXPECT_EQ(job.integration.newton_iterations, 0);
  EXPECT_EQ(job.steps, 1000);
  EXPECT_EQ(job.segment_steps, 1000);  // min(steps, 10000)
  EXPECT_FALSE(job.has_section());
  EXPECT_EQ(job.integration.section.kind, 0);
  EXPECT_EQ(job.integration.escape_radius, 0.0);
  EXPECT_EQ(job.backend, BackendKind::kAuto);
  EXPECT_EQ(job.integration.precision, Precision::kDouble);
  EXPECT_EQ(job.output_dir, "results/henon_heiles");
  EXPECT_EQ(job.ensemble.kind, "states");
  EXPECT_EQ(job.ensemble.count, 1);
  EXPECT_EQ(job.ensemble.skipped, 0);
  EXPECT_EQ(job.ensemble.state, (std::vector<double>{0.4, 0.0, 0.0, 2.0}));
}

TEST(Job, LongRunsDefaultToTenThousandStepSegments) {
  Json j = base_job();
  j["steps"] = 200000;
  EXPECT_EQ(parse_job(j.dump()).segment_steps, 10000);
  j["segment_steps"] = 500;
  EXPECT_EQ(parse_job(j.dump()).segment_steps, 500);
  j["steps"] = 2e5;  // an integral number in exponent notation is an integer
  EXPECT_EQ(parse_job(j.dump()).steps, 200000);
}

TEST(Job, EverySettingIsRead) {
  Json j = base_job("pendulum");
  j["model"]["params"] = {{"g", 9.81}, {"m", 2}};
  j["integrator"] = {{"name", "verlet"}, {"dt", 0.05}, {"newton_iterations", 7}};
  j["steps"] = 30;
  j["segment_steps"] = 10;
  j["section"] = {
      {"coordinate", "p0"}, {"value", -0.5}, {"direction", "down"}, {"max_crossings", 0}};
  j["escape_radius"] = 100;
  j["backend"] = "cpu";
  j["precision"] = "float";
  j["output"] = {{"dir", "somewhere/else"}};
  const Job job = parse_job(j.dump());
  EXPECT_EQ(job.integration.params,
            (std::vector<double>{2.0, 1.0, 9.81}));  // kParams order: m, l, g
  EXPECT_EQ(job.integration.dt, 0.05);
  EXPECT_EQ(job.integration.newton_iterations, 7);
  EXPECT_EQ(job.segment_steps, 10);
  ASSERT_TRUE(job.has_section());
  EXPECT_EQ(job.integration.section.kind, kernels::kSectionPlane);
  EXPECT_EQ(job.integration.section.coordinate, 1);
  EXPECT_EQ(job.integration.section.value, -0.5);
  EXPECT_EQ(job.integration.section.direction, kernels::kDirDown);
  EXPECT_EQ(job.integration.section.max_crossings, 0);
  EXPECT_EQ(job.integration.escape_radius, 100.0);
  EXPECT_EQ(job.backend, BackendKind::kCpu);
  EXPECT_EQ(job.integration.precision, Precision::kFloat);
  EXPECT_EQ(job.output_dir, "somewhere/else");
}

TEST(Job, SectionDefaultsAndStroboscopic) {
  Json j = base_job();
  j["section"] = {{"coordinate", "q1"}};
  Job job = parse_job(j.dump());
  EXPECT_EQ(job.integration.section.kind, kernels::kSectionPlane);
  EXPECT_EQ(job.integration.section.coordinate, 1);
  EXPECT_EQ(job.integration.section.value, 0.0);
  EXPECT_EQ(job.integration.section.direction, kernels::kDirBoth);
  EXPECT_EQ(job.integration.section.max_crossings, 1000);
  j["section"] = {{"coordinate", "q0"}, {"direction", "up"}};
  EXPECT_EQ(parse_job(j.dump()).integration.section.direction, kernels::kDirUp);

  j["section"] = {{"stroboscopic", {{"every", 25}}}, {"max_crossings", 40}};
  job = parse_job(j.dump());
  ASSERT_TRUE(job.has_section());
  EXPECT_EQ(job.integration.section.kind, kernels::kSectionStroboscopic);
  EXPECT_EQ(job.integration.section.every, 25);
  EXPECT_EQ(job.integration.section.max_crossings, 40);
}

TEST(Job, IntegratorOptionsInDeclarationOrderWithDefaults) {
  const IntegratorInfo* newmark = find_integrator("newmark");
  if (!newmark) GTEST_SKIP() << "newmark is not in this build's integrator registry";
  Json j = base_job();
  j["integrator"] = {{"name", "newmark"}, {"dt", 0.01}, {"beta", 0}, {"gamma", 0.6}};
  const Job job = parse_job(j.dump());
  ASSERT_EQ(job.integration.options.size(), newmark->options.size());
  for (std::size_t i = 0; i < newmark->options.size(); ++i) {
    const std::string name = newmark->options[i].name;
    EXPECT_EQ(job.integration.options[i], name == "gamma" ? 0.6 : 0.0) << name;
  }
  j["integrator"] = {{"name", "newmark"}, {"dt", 0.01}};
  const Job defaults = parse_job(j.dump());
  for (std::size_t i = 0; i < newmark->options.size(); ++i)
    EXPECT_EQ(defaults.integration.options[i], newmark->options[i].default_value);
}

TEST(Job, OverridesReplaceTheFileSettings) {
  Json j = base_job();
  j["backend"] = "cuda";
  j["output"] = {{"dir", "from_file"}};
  const Job job = parse_job(j.dump(), Overrides{"from_cli", "cpu", "float"});
  EXPECT_EQ(job.output_dir, "from_cli");
  EXPECT_EQ(job.backend, BackendKind::kCpu);
  EXPECT_EQ(job.integration.precision, Precision::kFloat);
  expect_error(j, "--backend", "got \"gpu\"", Overrides{"", "gpu", ""});
  expect_error(j, "--precision", "got \"half\"", Overrides{"", "", "half"});
  // The file must be valid as written even when the command line overrides the value.
  j["backend"] = "gpu";
  expect_error(j, "backend", "got \"gpu\"", Overrides{"", "cpu", ""});
}

TEST(Job, LoadJobReadsFilesAndNamesMissingOnes) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("vigor_test_job_" + std::to_string(::getpid()) + ".json");
  { std::ofstream(path) << base_job().dump(2); }
  EXPECT_EQ(load_job(path.string()).integration.model, "henon_heiles");
  std::filesystem::remove(path);
  try {
    load_job(path.string());
    ADD_FAILURE() << "missing file accepted";
  } catch (const JobError& e) {
    EXPECT_EQ(e.path(), "job");
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

// Only regular files of at most 64 MiB are read: a device or a pipe would be read without end.
TEST(Job, LoadJobReadsOnlyRegularFilesOfAtMost64MiB) {
  auto expect_load_error = [](const std::string& path, const std::string& message) {
    try {
      load_job(path);
      ADD_FAILURE() << path << " accepted";
    } catch (const JobError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  expect_load_error("/dev/zero", "job: \"/dev/zero\" is not a regular file");
  const auto big = std::filesystem::temp_directory_path() /
                   ("vigor_test_job_big_" + std::to_string(::getpid()) + ".json");
  { std::ofstream(big) << base_job().dump(2); }
  std::filesystem::resize_file(big, (std::uintmax_t(64) << 20) + 1);  // sparse: no disk used
  expect_load_error(big.string(), "job: \"" + big.string() +
                                      "\" is larger than 64 MiB (67108865 bytes); generate "
                                      "large ensembles with box or random_box");
  std::filesystem::remove(big);
}

// --- Ensembles --------------------------------------------------------------------------------

TEST(Ensemble, StatesAreStoredStructureOfArrays) {
  Json j = base_job();
  j["ensemble"] = {{"states", {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}}};
  const Ensemble e = parse_job(j.dump()).ensemble;
  ASSERT_EQ(e.count, 3);
  EXPECT_EQ(e.state, (std::vector<double>{1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12}));
}

TEST(Ensemble, BoxIsAnInclusiveGridWithTheFirstCoordinateSlowest) {
  Json j = base_job("harmonic_oscillator");
  j["ensemble"] = {{"box", {{"lo", {0, 10}}, {"hi", {1, 20}}, {"counts", {3, 2}}}}};
  const Ensemble e = parse_job(j.dump()).ensemble;
  EXPECT_EQ(e.kind, "box");
  ASSERT_EQ(e.count, 6);
  const double q[] = {0, 0, 0.5, 0.5, 1, 1};
  const double p[] = {10, 20, 10, 20, 10, 20};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(at(e, 0, i), q[i]) << i;
    EXPECT_EQ(at(e, 1, i), p[i]) << i;
  }
}

TEST(Ensemble, BoxInFourDimensionsAndSinglePointAxes) {
  Json j = base_job();
  // A count of 1 takes lo (and ignores hi); the last point of an axis is exactly hi.
  j["ensemble"] = {
      {"box", {{"lo", {-1, 0.1, 2, 0}}, {"hi", {1, 0.7, 5, 0.3}}, {"counts", {2, 4, 1, 3}}}}};
  const Ensemble e = parse_job(j.dump()).ensemble;
  ASSERT_EQ(e.count, 24);
  std::int64_t i = 0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 4; ++b)
      for (int d = 0; d < 3; ++d, ++i) {
        EXPECT_EQ(at(e, 0, i), a == 0 ? -1.0 : 1.0);
        EXPECT_NEAR(at(e, 1, i), 0.1 + 0.2 * b, 1e-15);
        EXPECT_EQ(at(e, 2, i), 2.0);
        EXPECT_NEAR(at(e, 3, i), 0.15 * d, 1e-15);
      }
  EXPECT_EQ(at(e, 1, 23), 0.7);
  EXPECT_EQ(at(e, 3, 23), 0.3);
}

/// The documented generator: SplitMix64 (Steele, Lea & Flood 2014) seeded with `seed`, output n
/// for component c of trajectory i with n = i * dim + c, top 53 bits as a double in [0, 1).
double reference_uniform(std::uint64_t seed, std::uint64_t n) {
  std::uint64_t z = seed + (n + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53;
}

TEST(Ensemble, RandomBoxIsTheDocumentedCounterBasedStream) {
  Json j = base_job();
  const std::vector<double> lo{-1, 0, 2, -0.5}, hi{1, 0.25, 2, 0.5};
  j["ensemble"] = {{"random_box", {{"lo", lo}, {"hi", hi}, {"count", 2000}, {"seed", 42}}}};
  const Ensemble e = parse_job(j.dump()).ensemble;
  EXPECT_EQ(e.kind, "random_box");
  ASSERT_EQ(e.count, 2000);
  std::vector<double> mean(4, 0.0);
  for (std::int64_t i = 0; i < e.count; ++i)
    for (int c = 0; c < 4; ++c) {
      const double x = at(e, c, i);
      EXPECT_GE(x, lo[c]);
      EXPECT_LE(x, hi[c]);
      EXPECT_EQ(x, lo[c] + (hi[c] - lo[c]) * reference_uniform(42, std::uint64_t(i) * 4 + c));
      mean[c] += x / double(e.count);
    }
  // Uniform: the sample mean is within 5 standard errors (sd (hi-lo)/sqrt(12), n = 2000).
  for (int c = 0; c < 4; ++c)
    EXPECT_NEAR(mean[c], 0.5 * (lo[c] + hi[c]),
                5 * (hi[c] - lo[c]) / std::sqrt(12.0 * 2000) + 1e-12);

  // Reproducible, and trajectory i does not depend on how many trajectories are drawn.
  EXPECT_EQ(parse_job(j.dump()).ensemble.state, e.state);
  j["ensemble"]["random_box"]["count"] = 10;
  const Ensemble prefix = parse_job(j.dump()).ensemble;
  for (std::int64_t i = 0; i < 10; ++i)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(at(prefix, c, i), at(e, c, i));

  // Another seed gives other numbers; no seed means seed 0.
  j["ensemble"]["random_box"]["seed"] = 43;
  const Ensemble other = parse_job(j.dump()).ensemble;
  int same = 0;
  for (std::int64_t i = 0; i < 10; ++i) same += at(other, 0, i) == at(prefix, 0, i);
  EXPECT_EQ(same, 0);
  j["ensemble"]["random_box"].erase("seed");
  const Ensemble unseeded = parse_job(j.dump()).ensemble;
  j["ensemble"]["random_box"]["seed"] = 0;
  EXPECT_EQ(parse_job(j.dump()).ensemble.state, unseeded.state);
}

/// Hénon–Heiles with the classic parameters, written out independently of the model header.
double henon_heiles_energy(double x, double y, double px, double py) {
  return 0.5 * (px * px + py * py) + 0.5 * (x * x + y * y) + x * x * y - y * y * y / 3.0;
}

TEST(Ensemble, SectionGridLiesOnTheEnergyShell) {
  const double energy = 1.0 / 8.0;
  const int n_y = 41, n_py = 31;
  Json j = base_job();
  j["section"] = {{"coordinate", "q0"}, {"value", 0.0}, {"direction", "up"}};
  // The grid extends beyond the allowed region (|p_y| <= 1/2, -0.4 < y < 0.6 at x = 0).
  j["ensemble"] = {
      {"section_grid",
       {{"energy", energy}, {"axes", {{"q1", {-0.6, 0.8, n_y}}, {"p1", {-0.6, 0.6, n_py}}}}}}};
  const Ensemble e = parse_job(j.dump()).ensemble;
  EXPECT_EQ(e.kind, "section_grid");

  std::int64_t expected_skipped = 0;
  for (int a = 0; a < n_y; ++a)
    for (int b = 0; b < n_py; ++b) {
      const double y = -0.6 + 1.4 * a / (n_y - 1), py = -0.6 + 1.2 * b / (n_py - 1);
      expected_skipped += henon_heiles_energy(0, y, 0, py) > energy + 1e-12;
    }
  EXPECT_GT(expected_skipped, 0);
  EXPECT_EQ(e.skipped, expected_skipped);
  EXPECT_EQ(e.count + e.skipped, n_y * n_py);

  for (std::int64_t i = 0; i < e.count; ++i) {
    EXPECT_EQ(at(e, 0, i), 0.0);
    EXPECT_GT(at(e, 2, i), 0.0) << "direction up needs p0 > 0 at trajectory " << i;
    EXPECT_NEAR(henon_heiles_energy(at(e, 0, i), at(e, 1, i), at(e, 2, i), at(e, 3, i)), energy,
                1e-14);
    if (i > 0) {
      // First axis (q1) slowest, second (p1) increasing within it.
      ASSERT_GE(at(e, 1, i), at(e, 1, i - 1));
      if (at(e, 1, i) == at(e, 1, i - 1)) {
        EXPECT_GT(at(e, 3, i), at(e, 3, i - 1));
      }
    }
  }

  // Direction down solves for the negative root; the axis order follows the file.
  j["section"]["direction"] = "down";
  j["ensemble"]["section_grid"]["axes"] = {{"p1", {-0.6, 0.6, n_py}}, {"q1", {-0.6, 0.8, n_y}}};
  const Ensemble down = parse_job(j.dump()).ensemble;
  EXPECT_EQ(down.count, e.count);
  for (std::int64_t i = 0; i < down.count; ++i) EXPECT_LT(at(down, 2, i), 0.0);
  for (std::int64_t i = 1; i < down.count; ++i) ASSERT_GE(at(down, 3, i), at(down, 3, i - 1));
}

TEST(Ensemble, SectionGridUsesTheSectionValueAndTheMass) {
  // Kepler, section q1 = 0.5 (position), momentum p1 solved; unit mass: p1 = sqrt(2 (E - H_rest)).
  Json j = base_job("kepler");
  j["model"]["params"] = {{"mu", 2.0}};
  j["section"] = {{"coordinate", "q1"}, {"value", 0.5}};
  j["ensemble"] = {{"section_grid",
                    {{"energy", -0.5}, {"axes", {{"q0", {0.5, 1.5, 5}}, {"p0", {-0.5, 0.5, 3}}}}}}};
  const Job job = parse_job(j.dump());
  const Ensemble& e = job.ensemble;
  ASSERT_GT(e.count, 0);
  const ModelInfo* kepler = find_model("kepler");
  for (std::int64_t i = 0; i < e.count; ++i) {
    const double s[4] = {at(e, 0, i), at(e, 1, i), at(e, 2, i), at(e, 3, i)};
    EXPECT_EQ(s[1], 0.5);
    EXPECT_GT(s[3], 0.0);  // direction both solves for the positive root
    EXPECT_NEAR(kepler->energy(job.integration.params.data(), s), -0.5, 1e-14);
  }
}

TEST(Ensemble, SectionGridPlacesFixedCoordinatesAndZeroesTheRest) {
  const ModelInfo* model = find_model("j2_satellite");
  if (!model) GTEST_SKIP() << "j2_satellite is not in this build's model registry";
  // Equatorial section z = 0 of the 3-dof satellite: axes x and p_y, p_x fixed, y left at 0, p_z
  // solved. Fast, wide orbits (x = 2, p_y = 0.9) have H > -0.3 and are skipped.
  Json j = base_job("j2_satellite");
  j["section"] = {{"coordinate", "q2"}, {"direction", "both"}};
  j["ensemble"] = {{"section_grid",
                    {{"energy", -0.3},
                     {"axes", {{"q0", {1.0, 2.0, 3}}, {"p1", {0.5, 0.9, 3}}}},
                     {"fixed", {{"p0", 0.05}}}}}};
  const Job job = parse_job(j.dump());
  const Ensemble& e = job.ensemble;
  EXPECT_GT(e.count, 0);
  EXPECT_GT(e.skipped, 0);
  EXPECT_EQ(e.count + e.skipped, 9);
  for (std::int64_t i = 0; i < e.count; ++i) {
    double s[6];
    for (int c = 0; c < 6; ++c) s[c] = at(e, c, i);
    EXPECT_EQ(s[1], 0.0);   // not named: 0
    EXPECT_EQ(s[2], 0.0);   // the section value
    EXPECT_EQ(s[3], 0.05);  // fixed
    EXPECT_GT(s[5], 0.0);
    EXPECT_NEAR(model->energy(job.integration.params.data(), s), -0.3, 1e-14);
  }
}

// --- Bad jobs: each error names its key path and shows the value -------------------------------

TEST(JobErrors, MessagesSpelledOutInTheContract) {
  Json j = base_job();
  j["integrator"]["dt"] = -0.1;
  expect_message(j, "integrator.dt: must be > 0, got -0.1");

  j = base_job();
  j["model"]["params"] = {{"c", 1}};
  expect_message(j, "model.params.c: unknown parameter of model henon_heiles (known: a, b)");

  j = base_job();
  j["steps"] = "abc";
  expect_message(j, "steps: must be an integer, got \"abc\"");

  j = base_job();
  j["section"] = {{"coordinate", "x"}};
  expect_message(j,
                 "section.coordinate: unknown state coordinate \"x\" of model henon_heiles "
                 "(known: q0, q1, p0, p1)");

  j = base_job();
  j["ensemble"] = {{"states", {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 2, 3}}}};
  expect_message(j, "ensemble.states[3]: expected 4 values (q0, q1, p0, p1), got 3");

  j = base_job();
  j["ensemble"] = {{"states", {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, "x", 0, 0}}}};
  expect_message(j, "ensemble.states[2][1]: must be a finite number, got \"x\"");

  j = base_job("harmonic_oscillator");
  j["ensemble"] = {{"box", {{"lo", {0, 0}}, {"hi", {1, 1}}, {"counts", {1000000, 1000000}}}}};
  expect_message(j, "ensemble.box.counts: 1e12 trajectories is more than the 1000000000 allowed");

  const std::string known_models = [] {
    std::string s;
    for (const auto& m : model_infos()) s += (s.empty() ? "" : ", ") + m.name;
    return s;
  }();
  j = base_job();
  j["model"]["name"] = "foo";
  expect_message(j, "model.name: unknown model \"foo\" (known: " + known_models + ")");
}

TEST(JobErrors, SyntaxAndStructure) {
  expect_text_error("{\"model\": ", "job", "invalid JSON: ");
  expect_text_error("", "job", "invalid JSON: ");
  expect_text_error("[1, 2]", "job", "must be a JSON object, got [1,2]");
  Json j = base_job();
  j["stepz"] = 10;
  expect_error(j, "stepz", "unknown key (known: model, integrator, steps");
  expect_text_error(R"({"model": {"name": "pendulum", "name": "kepler"}})", "model.name",
                    "duplicate key");
  // A literal beyond the double range is refused while parsing; the message still names the key.
  std::string text = base_job().dump();
  text.replace(text.find("0.01"), 4, "1e999");
  expect_text_error(text, "integrator.dt", "1e999");
  expect_text_error(R"({"ensemble": {"states": [[1, 2, 3, -1e400]]}})", "ensemble.states[0][3]",
                    "-1e400");
  j = base_job();
  j.erase("ensemble");
  expect_error(j, "ensemble", "is required");
  j = base_job();
  j.erase("model");
  expect_error(j, "model", "is required");
  j["model"] = "henon_heiles";
  expect_error(j, "model", "must be an object");
}

// Nesting is limited while parsing, before anything recursive (dump, copy) touches the value: a
// file of 10^5 nested brackets used to overflow the stack.
TEST(JobErrors, NestingDeeperThan64LevelsIsRefusedWhileParsing) {
  auto nested = [](int levels) {
    return "{\"model\": " + std::string(std::size_t(levels - 1), '[') +
           std::string(std::size_t(levels - 1), ']') + "}";
  };
  // 64 levels (the object and 63 arrays) parse; the model is then simply not an object.
  expect_text_error(nested(64), "model", "must be an object");
  expect_text_error(nested(65), "job", "nested deeper than 64 levels");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  expect_text_error(deep, "job", "nested deeper than 64 levels");
  std::string objects;
  for (int k = 0; k < 100000; ++k) objects += "{\"a\": ";
  expect_text_error(objects, "job", "nested deeper than 64 levels");
}

// NaN and Infinity are not JSON: the message names the key being read, not a parser position.
TEST(JobErrors, NanAndInfinityLiteralsNameTheirKey) {
  std::string text = base_job().dump();
  const std::string states = "[[0.4,0.0,0.0,2.0]]";
  ASSERT_NE(text.find(states), std::string::npos);
  for (const std::string literal : {"NaN", "nan", "Infinity", "-Infinity", "inf", "+Inf"}) {
    std::string t = text;
    t.replace(t.find(states), states.size(), "[[0.4, 0.0], [0.1, 0.2, " + literal + ", 1]]");
    expect_text_error(
        t, "ensemble.states[1][2]",
        "must be a finite number; NaN and Infinity are not JSON numbers, got " + literal);
    t = text;
    t.replace(t.find("0.01"), 4, literal);
    expect_text_error(t, "integrator.dt", "NaN and Infinity are not JSON numbers, got " + literal);
  }
  // Other invalid literals keep the parser's message.
  std::string t = text;
  t.replace(t.find("0.01"), 4, "Nope");
  expect_text_error(t, "job", "invalid JSON");
}

// A state the model cannot evaluate is bad input naming the row, for every explicit or generated
// ensemble (section_grid rows lie on the energy shell by construction).
TEST(JobErrors, InitialStatesWithANonFiniteEnergy) {
  Json j = base_job("kepler");
  j["ensemble"] = {{"states", {{0, 0, 0, 0}}}};
  expect_message(j,
                 "ensemble.states[0]: energy is -inf at this state (q0 = 0, q1 = 0, p0 = 0, "
                 "p1 = 0)");
  j["ensemble"] = {{"states", {{1, 0, 0, 1}, {1, 0, 0, 1}, {0, 0, 0.5, 0}}}};
  expect_message(j,
                 "ensemble.states[2]: energy is -inf at this state (q0 = 0, q1 = 0, "
                 "p0 = 0.5, p1 = 0)");
  // The origin is the middle point of a 3 x 3 grid in (q0, q1).
  j["ensemble"] = {
      {"box", {{"lo", {-1, -1, 0, 1}}, {"hi", {1, 1, 0, 1}}, {"counts", {3, 3, 1, 1}}}}};
  expect_message(j,
                 "ensemble.box: energy is -inf at trajectory 4 (q0 = 0, q1 = 0, p0 = 0, "
                 "p1 = 1)");
  Json p = base_job("pendulum");
  p["ensemble"] = {{"states", {{1e308, 1e308}}}};
  expect_message(p, "ensemble.states[0]: energy is inf at this state (q0 = 1e308, p0 = 1e308)");
  p["ensemble"] = {{"random_box", {{"lo", {0, 1e300}}, {"hi", {1, 1e305}}, {"count", 100}}}};
  expect_error(p, "ensemble.random_box", "energy is inf at trajectory 0 (q0 = ");
  // Finite energies pass, however large.
  p["ensemble"] = {{"states", {{1e308, 1e150}}}};
  EXPECT_EQ(parse_job(p.dump()).ensemble.count, 1);
}

// After --precision, everything the kernels compute from must be usable in the run's precision.
TEST(JobErrors, ValuesThatDoNotSurviveFloatPrecision) {
  const Overrides as_float{"", "", "float"};
  Json p = base_job("pendulum");
  p["model"]["params"] = {{"m", 1e-39}};  // a float, but 1 / (m l^2) overflows one
  EXPECT_NO_THROW(parse_job(p.dump()));
  expect_error(p, "model.params",
               "give inverse mass 1.0000000000000001e39 for q0, beyond the range", as_float);
  p["precision"] = "float";
  expect_error(p, "model.params", "beyond the range of a float");
  p["model"]["params"] = {{"m", 1e-50}};
  expect_message(p, "model.params.m: 1e-50 is 0 in float precision");
  p["model"]["params"] = {{"g", 1e39}};
  expect_message(p,
                 "model.params.g: 1e39 is beyond the range of a float (3.4e38) in float "
                 "precision");
  p["model"].erase("params");
  p["integrator"]["dt"] = 1e-50;
  expect_message(p, "integrator.dt: 1e-50 is 0 in float precision");
  p["precision"] = "double";
  EXPECT_NO_THROW(parse_job(p.dump()));
  expect_error(p, "integrator.dt", "1e-50 is 0 in float precision", as_float);
  p["integrator"]["dt"] = 0.01;
  p["ensemble"] = {{"states", {{0.1, 0.0}, {1e39, 0.0}}}};
  EXPECT_NO_THROW(parse_job(p.dump()));
  expect_error(p, "ensemble.states[1]",
               "q0 = 1e39 at this state is beyond the range of a float (3.4e38) in this "
               "float-precision run",
               as_float);
  p["ensemble"] = {{"box", {{"lo", {0, 0}}, {"hi", {0, 1e20}}, {"counts", {1, 2}}}}};
  EXPECT_NO_THROW(parse_job(p.dump()));
  expect_error(p, "ensemble.box",
               "energy is 5e39 at trajectory 1 (q0 = 0, p0 = 1e20), beyond the range of a float",
               as_float);
  p["ensemble"] = {{"states", {{0.1, 0.0}}}};
  p["section"] = {{"coordinate", "q0"}, {"value", 1e39}};
  EXPECT_NO_THROW(parse_job(p.dump()));
  expect_error(p, "section.value", "1e39 is beyond the range of a float", as_float);
  p.erase("section");

  // The squared escape radius is what the kernels compare with: it must be finite and > 0.
  p["escape_radius"] = 1e20;
  EXPECT_NO_THROW(parse_job(p.dump()));
  expect_error(p, "escape_radius", "1e20 squared is inf in float precision", as_float);
  p["escape_radius"] = 1e-30;
  expect_error(p, "escape_radius", "1e-30 squared is 0 in float precision", as_float);
  p["escape_radius"] = 1e200;
  expect_message(p,
                 "escape_radius: 1e200 squared is inf in double precision; use a radius "
                 "whose square is finite and > 0");
  p["escape_radius"] = 1e-200;
  expect_error(p, "escape_radius", "1e-200 squared is 0 in double precision");
}

TEST(JobErrors, ModelAndParameters) {
  Json j = base_job("pendulum");
  j["model"]["params"] = {{"m", -1}};
  expect_error(j, "model.params.m", "must be > 0, got -1");
  j["model"]["params"] = {{"m", 0}};
  expect_error(j, "model.params.m", "must be > 0, got 0");
  j["model"]["params"] = {{"g", -9.81}};
  expect_error(j, "model.params.g", "must be >= 0, got -9.81");
  j["model"]["params"] = {{"l", "long"}};
  expect_error(j, "model.params.l", "must be a finite number, got \"long\"");
  j["model"]["params"] = {{"l", true}};
  expect_error(j, "model.params.l", "must be a finite number, got true");
  j["model"]["params"] = {{"m", 1e-320}};  // positive, but 1/(m l^2) overflows
  expect_error(j, "model.params", "inverse mass");
  j["model"]["params"] = {1, 2};
  expect_error(j, "model.params", "must be an object");
  j = base_job();
  j["model"]["nam"] = "x";
  expect_error(j, "model.nam", "unknown key");
  j["model"] = {{"params", {{"a", 1}}}};
  expect_error(j, "model.name", "is required");
  j["model"] = {{"name", 3}};
  expect_error(j, "model.name", "must be a string, got 3");
}

TEST(JobErrors, Integrator) {
  Json j = base_job();
  j["integrator"]["dt"] = 0;
  expect_error(j, "integrator.dt", "must be > 0, got 0");
  j["integrator"]["dt"] = "0.1";
  expect_error(j, "integrator.dt", "must be a finite number, got \"0.1\"");
  j["integrator"].erase("dt");
  expect_error(j, "integrator.dt", "is required");
  j = base_job();
  j["integrator"]["name"] = "leapfrog";
  expect_error(j, "integrator.name", "unknown integrator \"leapfrog\" (known: verlet");
  j = base_job();
  j["integrator"]["gamma"] = 0.5;
  expect_error(j, "integrator.gamma",
               "unknown key of integrator verlet (known: name, dt, "
               "newton_iterations, compensated)");
  for (const Json& bad : {Json(0), Json(101), Json(2.5), Json("3")}) {
    j = base_job();
    j["integrator"]["newton_iterations"] = bad;
    expect_error(j, "integrator.newton_iterations", "got " + bad.dump());
  }
  if (find_integrator("newmark")) {
    j = base_job();
    j["integrator"] = {{"name", "newmark"}, {"dt", 0.01}, {"beta", -1}};
    expect_error(j, "integrator.beta", "must be >= 0, got -1");
    j["integrator"]["beta"] = 0;
    j["integrator"]["gamma"] = "half";
    expect_error(j, "integrator.gamma", "got \"half\"");
  }
}

TEST(JobErrors, StepsAndTopLevelSettings) {
  Json j = base_job();
  j["steps"] = 0;
  expect_error(j, "steps", "must be >= 1, got 0");
  j["steps"] = 10.5;
  expect_error(j, "steps", "must be an integer, got 10.5");
  j["steps"] = 1e16;
  expect_error(j, "steps", "must be <= 1e15, got 1e16");
  j["steps"] = 18446744073709551615ull;
  expect_error(j, "steps", "must be <= 1e15, got 18446744073709551615");
  j["steps"] = -5;
  expect_error(j, "steps", "must be >= 1, got -5");
  j.erase("steps");
  expect_error(j, "steps", "is required");
  j = base_job();
  j["segment_steps"] = 0;
  expect_error(j, "segment_steps", "must be >= 1, got 0");
  j = base_job();
  j["escape_radius"] = 0;
  expect_error(j, "escape_radius", "must be > 0, got 0");
  j = base_job();
  j["backend"] = "gpu";
  expect_error(j, "backend", "must be \"auto\", \"cpu\" or \"cuda\", got \"gpu\"");
  j = base_job();
  j["precision"] = "half";
  expect_error(j, "precision", "must be \"double\" or \"float\", got \"half\"");
  j = base_job();
  j["output"] = {{"dir", ""}};
  expect_error(j, "output.dir", "non-empty");
  j["output"] = {{"dir", 5}};
  expect_error(j, "output.dir", "must be a string, got 5");
  j["output"] = {{"directory", "x"}};
  expect_error(j, "output.directory", "unknown key (known: dir, hdf5, csv)");
}

TEST(JobErrors, Section) {
  Json j = base_job();
  j["section"] = {{"coordinate", "q0"}, {"direction", "sideways"}};
  expect_error(j, "section.direction", "must be \"up\", \"down\" or \"both\", got \"sideways\"");
  j["section"] = {{"coordinate", "q0"}, {"value", "zero"}};
  expect_error(j, "section.value", "got \"zero\"");
  j["section"] = {{"coordinate", "q0"}, {"max_crossings", -1}};
  expect_error(j, "section.max_crossings", "must be >= 0, got -1");
  j["section"] = {{"coordinate", "q0"}, {"stroboscopic", {{"every", 10}}}};
  expect_error(j, "section", "use one of them");
  j["section"] = {{"value", 0}};
  expect_error(j, "section", "needs \"coordinate\"");
  j["section"] = {{"stroboscopic", {{"every", 0}}}};
  expect_error(j, "section.stroboscopic.every", "must be >= 1, got 0");
  j["section"] = {{"stroboscopic", {{"period", 3}}}};
  expect_error(j, "section.stroboscopic.period", "unknown key (known: every)");
  j["section"] = {{"stroboscopic", {{"every", 3}}}, {"direction", "up"}};
  expect_error(j, "section.direction", "plane section");
  j["section"] = {{"coordinate", "q0"}, {"plane", 1}};
  expect_error(j, "section.plane", "unknown key");
}

TEST(JobErrors, Ensembles) {
  Json j = base_job();
  j["ensemble"] = Json::object();
  expect_error(j, "ensemble", "got none");
  j["ensemble"] = {{"states", {{0, 0, 0, 0}}}, {"box", Json::object()}};
  expect_error(j, "ensemble", "must hold exactly one of states, box, random_box, section_grid");
  j["ensemble"] = {{"grid", 1}};
  expect_error(j, "ensemble.grid", "unknown key");
  j["ensemble"] = {{"states", Json::array()}};
  expect_error(j, "ensemble.states", "at least one");
  j["ensemble"] = {{"states", {1, 2, 3, 4}}};
  expect_error(j, "ensemble.states[0]", "expected 4 values");

  j["ensemble"] = {
      {"box", {{"lo", {0, 0, 0, 0}}, {"hi", {1, -1, 1, 1}}, {"counts", {1, 1, 1, 1}}}}};
  expect_error(j, "ensemble.box.hi[1]", "must be >= lo[1] = 0, got -1");
  j["ensemble"]["box"]["hi"] = {1, 1, 1, 1};
  j["ensemble"]["box"]["counts"] = {1, 0, 1, 1};
  expect_error(j, "ensemble.box.counts[1]", "must be >= 1, got 0");
  j["ensemble"]["box"]["counts"] = {1, 1, 1};
  expect_error(j, "ensemble.box.counts", "expected 4 integers");
  j["ensemble"]["box"]["counts"] = {1000, 1000, 1000, 2};
  expect_error(j, "ensemble.box.counts", "2e9 trajectories is more than");
  j["ensemble"]["box"].erase("lo");
  expect_error(j, "ensemble.box.lo", "is required");

  j["ensemble"] = {{"random_box", {{"lo", {1, 0, 0, 0}}, {"hi", {0, 1, 1, 1}}, {"count", 5}}}};
  expect_error(j, "ensemble.random_box.hi[0]", "must be >= lo[0] = 1, got 0");
  j["ensemble"]["random_box"]["hi"] = {1, 1, 1, 1};
  j["ensemble"]["random_box"]["count"] = 0;
  expect_error(j, "ensemble.random_box.count", "must be >= 1, got 0");
  j["ensemble"]["random_box"]["count"] = 5e9;
  expect_error(j, "ensemble.random_box.count", "5e9 trajectories is more than");
  j["ensemble"]["random_box"]["count"] = 5;
  j["ensemble"]["random_box"]["seed"] = -1;
  expect_error(j, "ensemble.random_box.seed", "must be >= 0, got -1");
  j["ensemble"]["random_box"]["seed"] = 1.5;
  expect_error(j, "ensemble.random_box.seed", "must be an integer, got 1.5");
  j["ensemble"]["random_box"]["seed"] = 18446744073709551615ull;  // the full 64-bit range is fine
  EXPECT_EQ(parse_job(j.dump()).ensemble.count, 5);
}

TEST(JobErrors, SectionGrid) {
  Json j = base_job();
  const Json grid = {{"energy", 0.125}, {"axes", {{"q1", {-0.5, 0.5, 5}}, {"p1", {-0.5, 0.5, 5}}}}};
  j["ensemble"] = {{"section_grid", grid}};
  expect_error(j, "ensemble.section_grid", "needs a plane section on a position coordinate");
  j["section"] = {{"coordinate", "p0"}};
  expect_error(j, "ensemble.section_grid", "needs a plane section on a position coordinate");
  j["section"] = {{"stroboscopic", {{"every", 2}}}};
  expect_error(j, "ensemble.section_grid", "needs a plane section on a position coordinate");

  j["section"] = {{"coordinate", "q0"}, {"direction", "up"}};
  EXPECT_GT(parse_job(j.dump()).ensemble.count, 0);
  j["ensemble"]["section_grid"]["energy"] = -1;
  expect_error(j, "ensemble.section_grid.energy", "no point of the grid is energetically allowed");
  j["ensemble"]["section_grid"]["energy"] = "high";
  expect_error(j, "ensemble.section_grid.energy", "got \"high\"");
  j["ensemble"]["section_grid"] = grid;
  j["ensemble"]["section_grid"]["axes"] = {{"q1", {-0.5, 0.5, 5}}};
  expect_error(j, "ensemble.section_grid.axes", "exactly two coordinates");
  j["ensemble"]["section_grid"]["axes"] = {{"q0", {-0.5, 0.5, 5}}, {"p1", {-0.5, 0.5, 5}}};
  expect_error(j, "ensemble.section_grid.axes.q0", "is the section coordinate");
  j["ensemble"]["section_grid"]["axes"] = {{"q1", {-0.5, 0.5, 5}}, {"p0", {-0.5, 0.5, 5}}};
  expect_error(j, "ensemble.section_grid.axes.p0", "is solved from H = E");
  j["ensemble"]["section_grid"]["axes"] = {{"q1", {-0.5, 0.5, 5}}, {"z", {-0.5, 0.5, 5}}};
  expect_error(j, "ensemble.section_grid.axes.z", "unknown state coordinate \"z\"");
  j["ensemble"]["section_grid"]["axes"] = {{"q1", {0.5, -0.5, 5}}, {"p1", {-0.5, 0.5, 5}}};
  expect_error(j, "ensemble.section_grid.axes.q1[1]", "must be >= lo = 0.5, got -0.5");
  j["ensemble"]["section_grid"]["axes"] = {{"q1", {-0.5, 0.5}}, {"p1", {-0.5, 0.5, 5}}};
  expect_error(j, "ensemble.section_grid.axes.q1", "expected [lo, hi, count]");
  j["ensemble"]["section_grid"]["axes"] = {{"q1", {-0.5, 0.5, 100000}},
                                           {"p1", {-0.5, 0.5, 100000}}};
  expect_error(j, "ensemble.section_grid.axes", "1e10 trajectories is more than");
  j["ensemble"]["section_grid"] = grid;
  j["ensemble"]["section_grid"]["fixed"] = {{"q1", 0.1}};
  expect_error(j, "ensemble.section_grid.fixed.q1", "is already an axis");
  j["ensemble"]["section_grid"]["fixed"] = {{"p0", 0.1}};
  expect_error(j, "ensemble.section_grid.fixed.p0", "is solved from H = E");
  j["ensemble"]["section_grid"].erase("fixed");
  j["ensemble"]["section_grid"].erase("energy");
  expect_error(j, "ensemble.section_grid.energy", "is required");

  // One degree of freedom leaves nothing to span a grid.
  Json p = base_job("pendulum");
  p["section"] = {{"coordinate", "q0"}};
  p["ensemble"] = {{"section_grid", {{"energy", 0}, {"axes", Json::object()}}}};
  expect_error(p, "ensemble.section_grid", "has no two coordinates");
}

// --- Ensembles from files (.npy, .csv) ---------------------------------------------------------

/// A file in the temporary directory, removed with the object.
struct TempFile {
  std::filesystem::path path;
  TempFile(const std::string& name, const std::string& bytes)
      : path(std::filesystem::temp_directory_path() /
             ("vigor-test-job-" + std::to_string(::getpid()) + "-" + name)) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

/// The bytes of a version-1.0 .npy file of `rows` x `cols` values (row-major in `v`), stored as
/// descr ('<f8' or '<f4'), in C or Fortran order — what numpy.save writes.
std::string npy_bytes(const std::vector<double>& v, int rows, int cols, const std::string& descr,
                      bool fortran = false, std::string shape = "") {
  if (shape.empty()) shape = "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + '\x01' + '\x00';
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  for (int k = 0; k < rows * cols; ++k) {
    const int r = fortran ? k % rows : k / cols, c = fortran ? k / rows : k % cols;
    const double x = v[std::size_t(r * cols + c)];
    if (descr == "<f4") {
      const float f = float(x);
      out.append(reinterpret_cast<const char*>(&f), 4);
    } else {
      out.append(reinterpret_cast<const char*>(&x), 8);
    }
  }
  return out;
}

Json file_job(const std::string& file) {
  Json j = base_job();
  j["ensemble"] = {{"file", {{"path", file}}}};
  return j;
}

TEST(EnsembleFile, NpyInEveryLayoutGivesTheStatesExactly) {
  const std::vector<double> rows{0.0, 0.1, 0.35, 0.0, 0.0, -0.2, 0.4, 0.05, 0.0, 0.3, 0.25, -0.1};
  for (const bool fortran : {false, true}) {
    SCOPED_TRACE(fortran ? "Fortran order" : "C order");
    const TempFile f("a.npy", npy_bytes(rows, 3, 4, "<f8", fortran));
    const Job job = parse_job(file_job(f.path.string()).dump());
    ASSERT_EQ(job.ensemble.count, 3);
    EXPECT_EQ(job.ensemble.kind, "file");
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 4; ++c) EXPECT_EQ(at(job.ensemble, c, i), rows[std::size_t(4 * i + c)]);
  }
  // float32 data are widened exactly.
  const TempFile f("b.npy", npy_bytes(rows, 3, 4, "<f4"));
  const Job job = parse_job(file_job(f.path.string()).dump());
  EXPECT_EQ(at(job.ensemble, 2, 1), double(0.4f));
}

TEST(EnsembleFile, CsvColumnsAreFoundByNameSoAFinalCsvContinuesARun) {
  // A header picks the state columns in any order and ignores the others (final.csv's layout).
  const TempFile f("final.csv",
                   "trajectory,t,q0,q1,p0,p1,energy_error_max,crossings,status\n"
                   "0,10,0.01,0.1,0.35,-0.02,1e-9,1,ok\n"
                   "\n# a comment line\n"
                   "1,10,-0.03,0.2,0.3,0.04,2e-9,0,ok\n");
  const Job job = parse_job(file_job(f.path.string()).dump());
  ASSERT_EQ(job.ensemble.count, 2);
  EXPECT_EQ(at(job.ensemble, 0, 1), -0.03);
  EXPECT_EQ(at(job.ensemble, 3, 0), -0.02);
  // Text before the state columns: the numbers after it are read all the same.
  const TempFile labels("labels.csv", "label,q0,q1,p0,p1\norbit a,0.01,0.1,0.35,-0.02\n");
  const Job labelled = parse_job(file_job(labels.path.string()).dump());
  ASSERT_EQ(labelled.ensemble.count, 1);
  for (int c = 0; c < 4; ++c)
    EXPECT_EQ(at(labelled.ensemble, c, 0), (std::vector<double>{0.01, 0.1, 0.35, -0.02}[c])) << c;
  // Without a header the row is the state.
  const TempFile g("plain.csv", "0, 0.1, 0.35, 0\n0,-0.1,0.3,0.01\r\n");
  const Job plain = parse_job(file_job(g.path.string()).dump());
  ASSERT_EQ(plain.ensemble.count, 2);
  EXPECT_EQ(at(plain.ensemble, 3, 1), 0.01);
}

TEST(EnsembleFile, BadFilesNameTheKeyTheFileAndWhatIsWrong) {
  const std::string key = "ensemble.file.path";
  expect_error(file_job("/nonexistent/dir/states.npy"), key, "cannot open");
  expect_error(file_job(""), key, "expected the name of a .npy or .csv file");
  {
    Json j = base_job();
    j["ensemble"] = {{"file", {{"path", "x.npy"}, {"format", "npy"}}}};
    expect_error(j, "ensemble.file.format", "unknown key");
  }
  const std::vector<double> one{0.0, 0.1, 0.35, 0.0};
  const TempFile txt("states.txt", "0,0.1,0.35,0\n");
  expect_error(file_job(txt.path.string()), key, "expected a .npy or .csv file");
  const TempFile ints("ints.npy", npy_bytes(one, 1, 4, "<i8"));
  expect_error(file_job(ints.path.string()), key, "'<i8'");
  const TempFile flat("flat.npy", npy_bytes(one, 1, 4, "<f8", false, "(4,)"));
  expect_error(file_job(flat.path.string()), key, "expected a 2-D array");
  std::string cut = npy_bytes(one, 1, 4, "<f8");
  cut.resize(cut.size() - 3);
  const TempFile trunc("cut.npy", cut);
  expect_error(file_job(trunc.path.string()), key, "the file holds 29");
  const TempFile garbage("garbage.npy", "not numpy at all");
  expect_error(file_job(garbage.path.string()), key, "not a NumPy .npy file");
  const TempFile three("three.npy", npy_bytes({0.0, 0.1, 0.35}, 1, 3, "<f8"));
  expect_error(file_job(three.path.string()), key, "has 3 columns, expected 4 (q0, q1, p0, p1)");
  const TempFile nan("nan.npy",
                     npy_bytes({0.0, 0.1, 0.35, 0.0, 0.0, std::nan(""), 0.3, 0.0}, 2, 4, "<f8"));
  expect_error(file_job(nan.path.string()), key, "row 1, q1: must be finite, got nan");
  const TempFile nocol("nocol.csv", "q0,q1,p0\n0,0.1,0.35\n");
  expect_error(file_job(nocol.path.string()), key, "has no column 'p1'");
  const TempFile ragged("ragged.csv", "0,0.1,0.35,0\n0,0.1\n");
  expect_error(file_job(ragged.path.string()), key, "line 2 has 2 fields, expected 4");
  const TempFile word("word.csv", "q0,q1,p0,p1\n0,0.1,abc,0\n");
  expect_error(file_job(word.path.string()), key, "row 0 (line 2), p0: not a number: 'abc'");
  const TempFile bare("bare.csv", "0,0.1,0.3,0\n0,0.1,abc,0\n");
  expect_error(file_job(bare.path.string()), key, "line 2, field 3: not a number: 'abc'");
  const TempFile inf("inf.csv", "q0,q1,p0,p1\n0,0.1,0.3,0\n\n0,inf,0.3,0\n");
  expect_error(file_job(inf.path.string()), key, "row 1 (line 4), q1: must be finite, got inf");
  const TempFile empty("empty.csv", "q0,q1,p0,p1\n");
  expect_error(file_job(empty.path.string()), key, "holds no states");
}

// --- Inputs found by the fuzzer (fuzz/fuzz_job.cpp): each must be refused naming its key ---------

// An empty key used to give an error with an empty path (": unknown key ..."); it is written "".
TEST(FuzzFindings, EmptyKeysAreNamed) {
  Json j = base_job();
  j[""] = 1;
  expect_error(j, "\"\"", "unknown key (known: model, integrator");
  expect_text_error(R"({"model": {"": 1, "": 2}})", "model.\"\"", "duplicate key");
  j = base_job();
  j["model"]["params"] = {{"", 1}};
  expect_error(j, "model.params.\"\"", "unknown parameter of model henon_heiles");
}

// A section_grid axis of 10^15 points used to be materialised before the product of the counts
// was checked: std::bad_alloc (exit 3, no key) instead of the refusal naming the axes.
TEST(FuzzFindings, HugeSectionGridAxisIsRefusedBeforeAnyAllocation) {
  Json j = base_job();
  j["section"] = {{"coordinate", "q0"}};
  j["ensemble"] = {
      {"section_grid", {{"energy", 0.1}, {"axes", {{"q1", {0, 1, 1e15}}, {"p1", {0, 1, 2}}}}}}};
  expect_error(j, "ensemble.section_grid.axes", "2e15 trajectories is more than");
}

}  // namespace
}  // namespace vigor::host
