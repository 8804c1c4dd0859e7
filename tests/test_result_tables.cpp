// A run's results as columns in memory (host/output/result_tables.hpp, run_to_tables): the same
// values as the files of a results directory, for the Python package and any program that wants
// arrays rather than CSV. Also the two hooks the package uses: RunOptions::on_segment and
// Overrides::ensemble.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/job/job.hpp"
#include "host/output/result_tables.hpp"
#include "host/run/run.hpp"
#include "tests/csv_cells.hpp"
#include "tests/scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace vigor::host;
using Json = nlohmann::ordered_json;

namespace {

// Hénon–Heiles at E = 1/8: 63 trajectories, 3 segments (the last one short), section on.
Json henon_heiles_job() {
  return Json::parse(R"({
    "model": {"name": "henon_heiles"},
    "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 2500,
    "segment_steps": 1000,
    "ensemble": {"section_grid": {"energy": 0.125,
                 "axes": {"q1": [-0.3, 0.4, 9], "p1": [-0.3, 0.3, 7]}}},
    "section": {"coordinate": "q0", "value": 0.0, "direction": "up"}
  })");
}

// A loop of 64 pendulum states sampled every 250 steps: invariants.csv.
Json pendulum_loop_job() {
  return Json::parse(R"({
    "model": {"name": "pendulum"},
    "integrator": {"name": "verlet", "dt": 0.02},
    "steps": 1000,
    "ensemble": {"loop": {"center": [0.2, 0.0], "plane": ["q0", "p0"], "shape": "circle",
                          "radius": 0.05, "points": 64, "every": 250}}
  })");
}

RunOptions quiet() {
  RunOptions o;
  o.quiet = true;
  return o;
}

/// Every cell of a CSV equals the column's value: names in order, numbers read back exactly (the
/// CSV prints shortest round-trip text), statuses by name.
void expect_table_is_csv(const std::vector<Column>& table, const fs::path& file) {
  const auto rows = read_csv(file);
  ASSERT_FALSE(rows.empty()) << file;
  ASSERT_EQ(rows[0].size(), table.size()) << file;
  for (std::size_t k = 0; k < table.size(); ++k) {
    EXPECT_EQ(rows[0][k], table[k].name) << file;
    const Column& c = table[k];
    const std::size_t n = c.kind == Column::Kind::kReal ? c.real.size() : c.integer.size();
    ASSERT_EQ(n + 1, rows.size()) << file << " " << c.name;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& cell = rows[i + 1][k];
      if (c.kind == Column::Kind::kReal) {
        const double v = std::strtod(cell.c_str(), nullptr);
        if (std::isnan(c.real[i]))
          EXPECT_TRUE(std::isnan(v)) << c.name << "[" << i << "]";
        else
          EXPECT_EQ(v, c.real[i]) << c.name << "[" << i << "]";
      } else if (c.kind == Column::Kind::kStatus) {
        EXPECT_EQ(cell, status_name(std::int32_t(c.integer[i]))) << c.name << "[" << i << "]";
      } else {
        EXPECT_EQ(std::stoll(cell), c.integer[i]) << c.name << "[" << i << "]";
      }
    }
  }
}

void expect_same_columns(const std::vector<Column>& a, const std::vector<Column>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].name, b[k].name);
    EXPECT_EQ(a[k].integer, b[k].integer) << a[k].name;
    ASSERT_EQ(a[k].real.size(), b[k].real.size()) << a[k].name;
    for (std::size_t i = 0; i < a[k].real.size(); ++i)
      if (!(std::isnan(a[k].real[i]) && std::isnan(b[k].real[i]))) {
        EXPECT_EQ(a[k].real[i], b[k].real[i]) << a[k].name << "[" << i << "]";
      }
  }
}

/// TMPDIR pointed at a directory of the test's own for the scope (run_to_tables' scratch).
struct TmpdirOverride {
  std::string old;
  bool had;
  explicit TmpdirOverride(const fs::path& dir) {
    const char* o = std::getenv("TMPDIR");
    had = o != nullptr;
    if (had) old = o;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpdirOverride() {
    if (had)
      ::setenv("TMPDIR", old.c_str(), 1);
    else
      ::unsetenv("TMPDIR");
  }
};

}  // namespace

TEST(ResultTables, RunJobTablesAreItsCsvFiles) {
  ScratchDir tmp("tables-csv");
  Json j = henon_heiles_job();
  j["output"] = {{"dir", (tmp.path / "out").string()}};
  const Job job = parse_job(j.dump());
  ResultTables t;
  run_job(job, quiet(), false, &t);
  ASSERT_GT(t.sections.at(0).integer.size(), 0u);  // crossings were recorded
  expect_table_is_csv(t.sections, tmp.path / "out" / "sections.csv");
  expect_table_is_csv(t.final, tmp.path / "out" / "final.csv");
  EXPECT_EQ(t.summary["trajectories"], job.ensemble.count);
  ASSERT_EQ(t.energy_series.size(), 5u);             // segment, t, max, median, p99
  EXPECT_EQ(t.energy_series[0].integer.size(), 4u);  // t = 0 and 3 segment ends
  EXPECT_TRUE(t.tangent_series.empty());
  EXPECT_TRUE(t.invariants.empty());
}

TEST(ResultTables, InMemoryRunEqualsTheDirectoryRunAndLeavesNothing) {
  ScratchDir tmp("tables-memory");
  Json j = henon_heiles_job();
  j["output"] = {{"dir", (tmp.path / "out").string()}};
  const Job job = parse_job(j.dump());
  ResultTables on_disk;
  run_job(job, quiet(), false, &on_disk);
  const fs::path scratch = tmp.path / "tmpdir";
  fs::create_directories(scratch);
  ResultTables in_memory;
  {
    TmpdirOverride tmpdir(scratch);
    in_memory = run_to_tables(job, quiet());
  }
  expect_same_columns(in_memory.sections, on_disk.sections);
  expect_same_columns(in_memory.final, on_disk.final);
  expect_same_columns(in_memory.energy_series, on_disk.energy_series);
  EXPECT_TRUE(fs::is_empty(scratch));  // the spill's scratch directory went with the run
  EXPECT_FALSE(in_memory.summary.contains("output_dir"));
}

TEST(ResultTables, InvariantsTableIsTheCsv) {
  ScratchDir tmp("tables-invariants");
  Json j = pendulum_loop_job();
  j["output"] = {{"dir", (tmp.path / "out").string()}};
  const Job job = parse_job(j.dump());
  ResultTables t;
  run_job(job, quiet(), false, &t);
  ASSERT_EQ(t.invariants.size(), 5u);
  EXPECT_EQ(t.invariants[0].real.size(), 1000u / 250u + 1u);
  expect_table_is_csv(t.invariants, tmp.path / "out" / "invariants.csv");
  // The samples are the cloud's section records, as sections.csv holds them.
  expect_table_is_csv(t.sections, tmp.path / "out" / "sections.csv");
  const ResultTables m = run_to_tables(job, quiet());
  expect_same_columns(m.invariants, t.invariants);
  EXPECT_EQ(m.summary["invariants"]["kind"], "loop");
}

TEST(ResultTables, FloatRunKeepsRunPrecisionMarks) {
  Json j = henon_heiles_job();
  j["precision"] = "float";
  const ResultTables t = run_to_tables(parse_job(j.dump()), quiet());
  EXPECT_TRUE(t.float_precision);
  for (const Column& c : t.sections) {
    if (c.name == "q1") {
      EXPECT_TRUE(c.run_precision);
    }
  }
  // Values of a float run are floats: converting them to float changes nothing.
  for (const Column& c : t.final) {
    if (!c.run_precision) continue;
    for (double v : c.real) {
      EXPECT_EQ(double(float(v)), v) << c.name;
    }
  }
}

TEST(RunOptions, OnSegmentSeesEverySegmentEndAndMayStopTheRun) {
  const Job job = parse_job(henon_heiles_job().dump());
  RunOptions o = quiet();
  std::vector<std::int64_t> seen;
  o.on_segment = [&](const ProgressState& s) {
    seen.push_back(s.steps_done);
    EXPECT_EQ(s.steps_total, 2500);
  };
  run_to_tables(job, o);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1000, 2000, 2500}));
  ScratchDir scratch("tables-stop");
  o.on_segment = [](const ProgressState& s) {
    if (s.steps_done >= 1000) throw std::runtime_error("stop here");
  };
  TmpdirOverride tmpdir(scratch.path);
  EXPECT_THROW(run_to_tables(job, o), std::runtime_error);
  EXPECT_TRUE(fs::is_empty(scratch.path));  // nothing left behind by the stopped run
}

TEST(Overrides, EnsembleReplacesTheJobsAndIsCheckedAsExplicitRows) {
  Json j = henon_heiles_job();
  j.erase("ensemble");
  auto states = std::make_shared<Ensemble>();
  states->count = 2;
  // SoA: q0 q0 | q1 q1 | p0 p0 | p1 p1
  const std::vector<double> soa = {0.0, 0.0, 0.1, -0.2, 0.35, 0.3, 0.0, 0.1};
  states->state = soa;
  Overrides o;
  o.ensemble = states;
  const Job job = parse_job(j.dump(), o);
  EXPECT_EQ(job.ensemble.count, 2);
  EXPECT_EQ(job.ensemble.kind, "states");
  EXPECT_EQ(job.ensemble.state, soa);
  EXPECT_TRUE(states->state.empty());  // taken over, not copied
  // The same rows given in the job give the same run.
  Json rows = henon_heiles_job();
  rows["ensemble"] = Json::parse(R"({"states": [[0.0, 0.1, 0.35, 0.0], [0.0, -0.2, 0.3, 0.1]]})");
  const ResultTables a = run_to_tables(job, quiet());
  const ResultTables b = run_to_tables(parse_job(rows.dump()), quiet());
  expect_same_columns(a.final, b.final);
  expect_same_columns(a.sections, b.sections);

  states->state = soa;
  states->state.pop_back();  // 7 values for 2 rows of 4
  try {
    parse_job(j.dump(), o);
    ADD_FAILURE() << "accepted a ragged state array";
  } catch (const JobError& e) {
    EXPECT_EQ(e.path(), "states") << e.what();
  }
  states->state = {0.0, 0.0, 0.1, -0.2, std::nan(""), 0.3, 0.0, 0.1};
  try {
    parse_job(j.dump(), o);
    ADD_FAILURE() << "accepted a non-finite state";
  } catch (const JobError& e) {
    EXPECT_EQ(e.path().rfind("ensemble.states[0]", 0), 0u) << e.what();
  }
}
