// The run loop and the CPU engine end to end: determinism across thread counts, pausing on full
// section buffers without losing or reordering hits, precision, statuses, and the output files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "host/job.hpp"
#include "host/registry.hpp"
#include "host/run.hpp"

namespace fs = std::filesystem;
using namespace vigor::host;

namespace {

// Hénon–Heiles at E = 1/8 on the classic section: a mix of regular and chaotic orbits, so every
// trajectory crosses q0 = 0 upward about once per 2π in time.
const char* kHenonHeilesJob = R"({
  "model": {"name": "henon_heiles"},
  "integrator": {"name": "verlet", "dt": 0.01},
  "steps": 6000,
  "segment_steps": 2500,
  "ensemble": {"section_grid": {"energy": 0.125, "axes": {"q1": [-0.3, 0.4, 9], "p1": [-0.3, 0.3, 7]}}},
  "section": {"coordinate": "q0", "value": 0.0, "direction": "up"},
  "output": {"dir": "unused"}
})";

RunResult run_with(const std::string& text, int threads) {
  const Job job = parse_job(text);
  RunOptions opt;
  opt.threads = threads;
  opt.quiet = true;
  return run_ensemble(job, opt);
}

void expect_bitwise_equal(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.final.state.size(), b.final.state.size());
  EXPECT_EQ(0, std::memcmp(a.final.state.data(), b.final.state.data(),
                           a.final.state.size() * sizeof(double)));
  EXPECT_EQ(a.final.energy_error, b.final.energy_error);
  EXPECT_EQ(a.final.crossings, b.final.crossings);
  EXPECT_EQ(a.final.status, b.final.status);
  EXPECT_EQ(a.hits.trajectory, b.hits.trajectory);
  ASSERT_EQ(a.hits.values.size(), b.hits.values.size());
  EXPECT_EQ(0, std::memcmp(a.hits.values.data(), b.hits.values.data(),
                           a.hits.values.size() * sizeof(double)));
}

}  // namespace

TEST(Run, CpuResultsBitwiseIdenticalForOneAndTwoThreads) {
  const RunResult one = run_with(kHenonHeilesJob, 1);
  const RunResult two = run_with(kHenonHeilesJob, 2);
  EXPECT_EQ(one.segments, 3);  // 6000 steps in segments of 2500
  EXPECT_GT(one.hits.size(), 0u);
  expect_bitwise_equal(one, two);
}

TEST(Run, RandomBoxRunsAreReproducible) {
  const std::string job = R"({
    "model": {"name": "kepler"}, "integrator": {"name": "yoshida4", "dt": 0.01}, "steps": 500,
    "ensemble": {"random_box": {"lo": [0.9, -0.1, -0.1, 0.9], "hi": [1.1, 0.1, 0.1, 1.1],
                                "count": 64, "seed": 7}},
    "section": {"coordinate": "q1", "direction": "both"}, "output": {"dir": "unused"}})";
  expect_bitwise_equal(run_with(job, 1), run_with(job, 2));
}

// A full per-trajectory buffer pauses the trajectory; the host drains and relaunches. The hit
// sequence must be exactly that of a run with room to spare: same hits, same order, same bits.
TEST(Run, SmallSectionBuffersLoseNothing) {
  const Job job = parse_job(kHenonHeilesJob);
  auto run_engine = [&](std::size_t budget) {
    EngineRequest r;
    r.model = job.model;
    r.integrator = job.integrator;
    r.params = job.params;
    r.options = job.options;
    r.dt = job.dt;
    r.section = job.section;
    r.hit_buffer_bytes = budget;
    auto e = make_engine(r, BackendKind::kCpu);
    e->upload(job.ensemble.state, job.ensemble.count);
    HitStore store;
    HitBlock block;
    int launches = 0;
    for (;;) {
      e->launch(job.steps);
      ++launches;
      block.clear();
      const auto full = e->drain(block);
      store.append(block);
      if (full == 0) break;
    }
    return std::make_tuple(store, e->download(), launches, e->hit_capacity());
  };
  const auto [big, big_final, big_launches, big_cap] = run_engine(std::size_t(1) << 26);
  const auto [tiny, tiny_final, tiny_launches, tiny_cap] = run_engine(1);  // capacity 1
  EXPECT_EQ(tiny_cap, 1);
  EXPECT_GT(big_cap, 1);
  EXPECT_GT(tiny_launches, 5);  // ~10 crossings per trajectory need ~10 drains
  EXPECT_EQ(tiny_final.crossings, big_final.crossings);
  EXPECT_EQ(0, std::memcmp(tiny_final.state.data(), big_final.state.data(),
                           big_final.state.size() * sizeof(double)));
  // Drain order differs (per launch vs per trajectory); compare per trajectory, in order.
  auto per_traj = [&](const HitStore& s) {
    std::vector<std::vector<double>> v(job.ensemble.count);
    const int w = s.dim + 1;
    for (std::size_t k = 0; k < s.size(); ++k)
      v[s.trajectory[k]].insert(v[s.trajectory[k]].end(), s.values.begin() + k * w,
                                s.values.begin() + (k + 1) * w);
    return v;
  };
  EXPECT_EQ(per_traj(tiny), per_traj(big));
}

TEST(Run, FloatPrecisionTracksDouble) {
  const std::string job = R"({
    "model": {"name": "pendulum"}, "integrator": {"name": "verlet", "dt": 0.01}, "steps": 1000,
    "ensemble": {"states": [[0.5, 0.0], [1.0, 0.2], [2.0, 0.0]]},
    "precision": "PREC", "output": {"dir": "unused"}})";
  auto with = [&](const char* p) {
    std::string s = job;
    s.replace(s.find("PREC"), 4, p);
    return run_with(s, 1);
  };
  const RunResult d = with("double");
  const RunResult f = with("float");
  ASSERT_EQ(d.final.state.size(), f.final.state.size());
  // 1000 steps of float round-off (2^-24 ≈ 6e-8) on O(1) values, amplified by the linear
  // growth of phase errors over ~1.6 periods: 1e-4 leaves a wide margin, while a float build that
  // silently computed in double would agree to 1e-7 and one that broke would miss by O(1).
  for (std::size_t k = 0; k < d.final.state.size(); ++k)
    EXPECT_NEAR(d.final.state[k], f.final.state[k], 1e-4) << k;
  bool any_different = false;
  for (std::size_t k = 0; k < d.final.state.size(); ++k)
    any_different |= d.final.state[k] != f.final.state[k];
  EXPECT_TRUE(any_different) << "float run produced bit-identical doubles: not run in float?";
}

TEST(Run, EscapedAndOkStatusesAreCountedPerTrajectory) {
  // Above the escape energy 1/6 a Hénon–Heiles orbit leaves through a saddle; below it stays.
  const std::string job = R"({
    "model": {"name": "henon_heiles"}, "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 20000, "escape_radius": 5.0,
    "ensemble": {"states": [[0.0, 0.1, 0.3, 0.0], [0.0, -0.2, 0.75, 0.0]]},
    "output": {"dir": "unused"}})";
  const RunResult r = run_with(job, 1);
  EXPECT_EQ(r.final.status[0], 0);
  EXPECT_EQ(r.final.status[1], 2);
  EXPECT_LT(r.final.step[1], 20000);
  EXPECT_EQ(r.final.step[0], 20000);
}

TEST(Run, WritesTheOutputContractAtomically) {
  const fs::path dir = fs::temp_directory_path() / ("vigor-test-run-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string text = kHenonHeilesJob;
  text.replace(text.find("\"unused\""), 8, "\"" + (dir / "out").string() + "\"");
  const Job job = parse_job(text);
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_job(job, opt, false);
  ASSERT_TRUE(fs::exists(dir / "out" / "summary.json"));
  ASSERT_TRUE(fs::exists(dir / "out" / "sections.csv"));
  ASSERT_TRUE(fs::exists(dir / "out" / "final.csv"));
  // Nothing but the results directory is left beside it (no temporary directory).
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);

  // sections.csv: header, then rows ordered by trajectory then crossing, with q0 on the plane
  // and p0 > 0 (direction up), times increasing within a trajectory.
  std::ifstream in(dir / "out" / "sections.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "trajectory,crossing,t,q0,q1,p0,p1");
  long prev_traj = -1, prev_cross = -1, rows = 0;
  double prev_t = -1;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::vector<double> v;
    while (std::getline(ss, cell, ',')) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 7u);
    const long traj = long(v[0]), cross = long(v[1]);
    if (traj == prev_traj) {
      EXPECT_EQ(cross, prev_cross + 1);
      EXPECT_GT(v[2], prev_t);
    } else {
      EXPECT_GT(traj, prev_traj);
      EXPECT_EQ(cross, 0);
    }
    EXPECT_EQ(v[3], 0.0);
    EXPECT_GT(v[5], 0.0);
    prev_traj = traj;
    prev_cross = cross;
    prev_t = v[2];
    ++rows;
  }
  EXPECT_EQ(rows, summary["crossings_recorded"].get<long>());
  EXPECT_EQ(summary["crossings_dropped"].get<long>(), 0);
  EXPECT_EQ(summary["trajectories"].get<long>(), job.ensemble.count);
  // Verlet at h = 0.01 on E = 1/8: |ΔH| = O(h^2) ≈ 1e-5 at most (measured ~3e-6).
  EXPECT_LT(summary["energy_error_max"].get<double>(), 1e-4);
  EXPECT_GT(summary["energy_error_max"].get<double>(), 0.0);

  // A second run into the same directory is refused without --force and leaves it untouched.
  const auto before = fs::last_write_time(dir / "out" / "summary.json");
  EXPECT_THROW(run_job(job, opt, false), JobError);
  EXPECT_EQ(before, fs::last_write_time(dir / "out" / "summary.json"));
  EXPECT_NO_THROW(run_job(job, opt, true));
  fs::remove_all(dir);
}
