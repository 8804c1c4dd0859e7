/// @file test_cli.cpp
/// @brief The `vigor` executable against DESIGN.md §4: bad input exits 2 with `error: <key path>:`
/// on stderr and writes nothing; a good job exits 0 and writes summary.json, sections.csv and
/// final.csv; `validate` writes nothing; `list` names every model and integrator.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numbers>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "host/backends/registry.hpp"

namespace vigor::host {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

/// The output directory every job names (relative to the working directory of the run).
constexpr const char* kOutDir = "out";

/// A tiny valid job: harmonic oscillator, Verlet, 100 steps of 0.1, two states, section q0 up.
Json good_job() {
  Json j;
  j["model"] = {{"name", "harmonic_oscillator"}};
  j["integrator"] = {{"name", "verlet"}, {"dt", 0.1}};
  j["steps"] = 100;
  j["ensemble"] = {{"states", {{1.0, 0.0}, {0.5, 0.0}}}};
  j["section"] = {{"coordinate", "q0"}, {"value", 0.0}, {"direction", "up"}};
  j["backend"] = "cpu";
  j["output"] = {{"dir", kOutDir}};
  return j;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

/// Each test runs the binary in its own empty working directory, removed afterwards.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& ch : name)
      if (ch == '/') ch = '_';
    root_ = fs::temp_directory_path() / ("vigor_cli_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(root_);
    fs::create_directories(work());
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path work() const { return root_ / "work"; }

  void write_job(const std::string& text, const std::string& file = "job.json") const {
    std::ofstream(work() / file) << text;
  }

  /// `vigor <args>` in work(); stdout and stderr are captured outside work().
  Result vigor(const std::string& args) const {
    const std::string cmd = "cd '" + work().string() + "' && '" VIGOR_BIN "' " + args + " >'" +
                            (root_ / "stdout").string() + "' 2>'" + (root_ / "stderr").string() +
                            "'";
    const int status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(root_ / "stdout");
    r.err = read_file(root_ / "stderr");
    return r;
  }

  /// Names of the entries in the working directory.
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(work())) names.insert(e.path().filename().string());
    return names;
  }

  fs::path root_;
};

// --- Bad input: exit 2, `error: <path>` on stderr, nothing written ------------------------------

struct BadCase {
  std::string name;
  std::function<void(Json&)> edit;  ///< applied to good_job()
  std::string raw;                  ///< used verbatim instead, when not empty
  std::string args;                 ///< extra command-line arguments
  std::string path;                 ///< must appear in the error message
  std::string command = "run";
  std::string job_file = "job.json";
};

std::string good_text_with(const std::string& from, const std::string& to) {
  std::string text = good_job().dump(2);
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::vector<BadCase> bad_cases() {
  return {
      {"bad_json", nullptr,
       R"({"model": {"name": "harmonic_oscillator"}, "output": {"dir": "out"})", "",
       "invalid JSON"},
      {"unknown_model", [](Json& j) { j["model"]["name"] = "harmonic_osc"; }, "", "", "model.name"},
      {"unknown_integrator", [](Json& j) { j["integrator"]["name"] = "leapfrog9"; }, "", "",
       "integrator.name"},
      {"unknown_top_level_key", [](Json& j) { j["stepz"] = 100; }, "", "", "stepz"},
      {"unknown_integrator_key", [](Json& j) { j["integrator"]["dtt"] = 0.1; }, "", "",
       "integrator.dtt"},
      {"unknown_model_parameter",
       [](Json& j) {
         j["model"]["params"] = {{"c", 1}};
       },
       "", "", "model.params.c"},
      {"dt_zero", [](Json& j) { j["integrator"]["dt"] = 0; }, "", "", "integrator.dt"},
      {"dt_negative", [](Json& j) { j["integrator"]["dt"] = -0.1; }, "", "", "integrator.dt"},
      {"dt_string", [](Json& j) { j["integrator"]["dt"] = "0.1"; }, "", "", "integrator.dt"},
      {"dt_overflows_to_infinity", nullptr, good_text_with("\"dt\": 0.1", "\"dt\": 1e999"), "",
       "integrator.dt"},
      {"state_wrong_length",
       [](Json& j) {
         j["ensemble"]["states"] = {{1.0, 0.0}, {0.5, 0.0, 0.0}};
       },
       "", "", "ensemble.states[1]"},
      {"state_not_a_number",
       [](Json& j) {
         j["ensemble"]["states"] = {{1.0, "x"}};
       },
       "", "", "ensemble.states[0][1]"},
      {"negative_mass",
       [](Json& j) {
         j["model"] = {{"name", "pendulum"}, {"params", {{"m", -1}}}};
       },
       "", "", "model.params.m"},
      {"steps_zero", [](Json& j) { j["steps"] = 0; }, "", "", "steps"},
      {"steps_not_integer", [](Json& j) { j["steps"] = 10.5; }, "", "", "steps"},
      {"section_unknown_coordinate", [](Json& j) { j["section"]["coordinate"] = "x"; }, "", "",
       "section.coordinate"},
      {"section_bad_direction", [](Json& j) { j["section"]["direction"] = "sideways"; }, "", "",
       "section.direction"},
      {"two_ensemble_kinds",
       [](Json& j) {
         j["ensemble"]["box"] = {{"lo", {0, 0}}, {"hi", {1, 1}}, {"counts", {2, 2}}};
       },
       "", "", "ensemble"},
      {"box_counts_too_large",
       [](Json& j) {
         j["ensemble"] = {{"box", {{"lo", {0, 0}}, {"hi", {1, 1}}, {"counts", {100000, 100000}}}}};
       },
       "", "", "ensemble.box.counts"},
      {"random_box_lo_above_hi",
       [](Json& j) {
         j["ensemble"] = {{"random_box", {{"lo", {1, 0}}, {"hi", {0, 1}}, {"count", 10}}}};
       },
       "", "", "ensemble.random_box.hi"},
      {"section_grid_without_section",
       [](Json& j) {
         j["model"] = {{"name", "henon_heiles"}};
         j.erase("section");
         j["ensemble"] = {
             {"section_grid",
              {{"energy", 0.125}, {"axes", {{"q1", {-0.3, 0.3, 5}}, {"p1", {-0.3, 0.3, 5}}}}}}};
       },
       "", "", "ensemble.section_grid"},
      {"newmark_beta_negative",
       [](Json& j) {
         j["integrator"] = {{"name", "newmark"}, {"dt", 0.1}, {"gamma", 0.5}, {"beta", -0.25}};
       },
       "", "", "integrator.beta"},
      {"precision_unknown", [](Json& j) { j["precision"] = "half"; }, "", "", "precision"},
      {"duplicate_key", nullptr, good_text_with("\"steps\": 100", "\"steps\": 100, \"steps\": 5"),
       "", "steps"},
      {"bad_backend_option", nullptr, "", "--backend gpu", "--backend"},
      {"bad_precision_option", nullptr, "", "--precision half", "--precision"},
      {"missing_job_file", nullptr, "", "", "missing.json", "run", "missing.json"},
      {"validate_bad_job", [](Json& j) { j["integrator"]["dt"] = -1; }, "", "", "integrator.dt",
       "validate"},
      // Used to overflow the stack (exit 139) in nlohmann's recursive dump.
      {"nested_too_deep", nullptr, std::string(100000, '[') + std::string(100000, ']'), "",
       "error: job: nested deeper than 64 levels", "validate"},
      {"nan_literal", nullptr,
       R"({"model": {"name": "harmonic_oscillator"}, "integrator": {"name": "verlet", "dt": 0.1},
           "steps": 10, "ensemble": {"states": [[NaN, 0]]}, "output": {"dir": "out"}})",
       "",
       "error: ensemble.states[0][0]: must be a finite number; NaN and Infinity are not JSON "
       "numbers, got NaN"},
      {"state_with_infinite_energy",
       [](Json& j) {
         j["model"] = {{"name", "kepler"}};
         j["ensemble"] = {{"states", {{1, 0, 0, 1}, {0, 0, 0, 0}}}};
       },
       "", "", "error: ensemble.states[1]: energy is -inf at this state (q0 = 0, q1 = 0"},
      {"mass_overflows_in_float",
       [](Json& j) {
         j["model"] = {{"name", "pendulum"}, {"params", {{"m", 1e-39}}}};
       },
       "", "--precision float", "error: model.params: give inverse mass 1.0000000000000001e39"},
      {"job_is_a_device", nullptr, "", "", "error: job: \"/dev/zero\" is not a regular file",
       "validate", "/dev/zero"},
      {"checkpoint_every_negative", nullptr, "", "--checkpoint-every -5",
       "error: --checkpoint-every: must be a number of seconds >= 0"},
      {"checkpoint_every_not_a_number", nullptr, "", "--checkpoint-every 10min",
       "error: --checkpoint-every: must be a number of seconds >= 0 (0: after every segment), got "
       "\"10min\""},
      {"resume_with_a_job_file", nullptr, "", "--resume out",
       "error: --resume: takes the job from "
       "the checkpoint; drop \"job.json\""},
      {"resume_with_an_override", nullptr, "", "--precision float",
       "error: --resume: continues "
       "with the settings of the interrupted run",
       "run", "--resume out"},
      {"resume_nothing_to_resume", nullptr, "", "",
       "error: --resume: no interrupted run of "
       "\"out\" to resume",
       "run", "--resume out"},
      {"list_takes_at_most_a_job", nullptr, "", "--threads 3",
       "error: command: list takes at most a job file, got \"--threads\"", "list", "foo"},
  };
}

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class CliBadInput : public Cli, public ::testing::WithParamInterface<BadCase> {};

TEST_P(CliBadInput, ExitsTwoNamesTheKeyAndWritesNothing) {
  const BadCase& c = GetParam();
  std::set<std::string> before;
  if (c.job_file == "job.json") {
    Json j = good_job();
    if (c.edit) c.edit(j);
    write_job(c.raw.empty() ? j.dump(2) : c.raw);
    before.insert("job.json");
  }
  const Result r = vigor(c.command + " " + c.job_file + (c.args.empty() ? "" : " " + c.args));
  EXPECT_EQ(r.code, 2) << "stderr: " << r.err;
  EXPECT_NE(r.err.find("error:"), std::string::npos) << "stderr: " << r.err;
  EXPECT_NE(r.err.find(c.path), std::string::npos)
      << "stderr does not name " << c.path << ": " << r.err;
  EXPECT_FALSE(fs::exists(work() / kOutDir));
  // Nothing at all: no output directory under a temporary name either.
  EXPECT_EQ(entries(), before);
}

INSTANTIATE_TEST_SUITE_P(Cases, CliBadInput, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& p) { return p.param.name; });

TEST(CliBadInputCount, AtLeastTwentyDistinctMalformedInputs) { EXPECT_GE(bad_cases().size(), 20u); }

// --- Good input -------------------------------------------------------------------------------

TEST_F(Cli, GoodJobRunsAndWritesTheThreeOutputs) {
  write_job(good_job().dump(2));
  const Result r = vigor("run job.json --quiet");
  ASSERT_EQ(r.code, 0) << "stderr: " << r.err;
  const fs::path out = work() / kOutDir;
  ASSERT_TRUE(fs::is_directory(out));
  // Written under a temporary name and renamed: only the job and the output directory remain.
  EXPECT_EQ(entries(), (std::set<std::string>{"job.json", kOutDir}));

  const Json summary = Json::parse(read_file(out / "summary.json"));  // throws if not JSON
  EXPECT_TRUE(summary.is_object());

  // sections.csv: q0 crosses 0 upwards once in t in [0, 10]: q = A cos t gives t = 3 pi / 2 (Verlet
  // shifts the phase by O(dt^2)), on the plane, moving up (p0 > 0).
  const std::vector<std::string> sections = split(read_file(out / "sections.csv"), '\n');
  ASSERT_GE(sections.size(), 3u);
  EXPECT_EQ(sections[0], "trajectory,crossing,t,q0,p0");
  for (std::size_t k = 1; k < sections.size(); ++k) {
    const auto f = split(sections[k], ',');
    ASSERT_EQ(f.size(), 5u) << sections[k];
    EXPECT_EQ(std::stoll(f[0]), std::int64_t(k - 1));
    EXPECT_EQ(std::stoll(f[1]), 0);
    EXPECT_NEAR(std::stod(f[2]), 1.5 * std::numbers::pi, 1e-2);
    EXPECT_NEAR(std::stod(f[3]), 0.0, 1e-12);
    EXPECT_GT(std::stod(f[4]), 0.0);
  }

  const std::vector<std::string> final_rows = split(read_file(out / "final.csv"), '\n');
  ASSERT_EQ(final_rows.size(), 3u);
  EXPECT_EQ(final_rows[0], "trajectory,t,q0,p0,energy_error_max,crossings,status");
  for (int i = 0; i < 2; ++i) {
    const auto f = split(final_rows[i + 1], ',');
    ASSERT_EQ(f.size(), 7u) << final_rows[i + 1];
    EXPECT_EQ(std::stoll(f[0]), i);
    EXPECT_NEAR(std::stod(f[1]), 10.0, 1e-9);
    EXPECT_EQ(std::stoll(f[5]), 1);
    EXPECT_EQ(f[6], "ok");
  }
}

TEST_F(Cli, OutWithATrailingSlashNamesTheDirectory) {
  write_job(good_job().dump(2));
  const Result r = vigor("run job.json --out newdir/ --quiet");
  ASSERT_EQ(r.code, 0) << "stderr: " << r.err;
  EXPECT_EQ(entries(), (std::set<std::string>{"job.json", "newdir"}));
  EXPECT_TRUE(fs::is_regular_file(work() / "newdir" / "sections.csv"));
  EXPECT_TRUE(fs::is_regular_file(work() / "newdir" / "final.csv"));
  EXPECT_EQ(Json::parse(read_file(work() / "newdir" / "summary.json"))["output_dir"], "newdir");
}

TEST_F(Cli, OutputDirThatIsAFileIsNotADirectory) {
  write_job(good_job().dump(2));
  std::ofstream(work() / kOutDir) << "a file";
  for (const char* force : {"", " --force"}) {
    const Result r = vigor(std::string("run job.json --quiet") + force);
    EXPECT_EQ(r.code, 2) << "stderr: " << r.err;
    EXPECT_NE(r.err.find("error: output.dir: \"out\" exists and is not a directory"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(read_file(work() / kOutDir), "a file");
    EXPECT_EQ(entries(), (std::set<std::string>{"job.json", kOutDir}));
  }
}

// A run that fails for want of a device exits 3 and creates nothing, parent directories included.
TEST_F(Cli, MissingDeviceExitsThreeAndCreatesNothing) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  write_job(good_job().dump(2));
  const Result r = vigor("run job.json --out lvl1/lvl2/res --backend cuda --quiet");
  EXPECT_EQ(r.code, 3) << "stderr: " << r.err;
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_EQ(entries(), std::set<std::string>{"job.json"});
}

TEST_F(Cli, ValidateAcceptsAGoodJobAndWritesNothing) {
  write_job(good_job().dump(2));
  const Result r = vigor("validate job.json");
  EXPECT_EQ(r.code, 0) << "stderr: " << r.err;
  EXPECT_EQ(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_EQ(entries(), std::set<std::string>{"job.json"});
}

TEST_F(Cli, ListNamesEveryModelAndIntegrator) {
  const Result r = vigor("list");
  ASSERT_EQ(r.code, 0) << "stderr: " << r.err;
  for (const auto& m : model_infos()) {
    EXPECT_NE(r.out.find(m.name), std::string::npos) << m.name;
    for (const auto& p : m.params) EXPECT_NE(r.out.find(p.name), std::string::npos) << p.name;
  }
  for (const auto& i : integrator_infos()) {
    EXPECT_NE(r.out.find(i.name), std::string::npos) << i.name;
    for (const auto& o : i.options) EXPECT_NE(r.out.find(o.name), std::string::npos) << o.name;
  }
  EXPECT_EQ(entries(), std::set<std::string>{});
}

}  // namespace
}  // namespace vigor::host
