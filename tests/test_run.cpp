// The run loop and the CPU engine end to end: determinism across thread counts, pausing on full
// section buffers without losing or reordering hits, precision, statuses, and the output files.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/output/output_dir.hpp"
#include "host/output/tables.hpp"
#include "host/run/run.hpp"
#include "tests/scratch_dir.hpp"

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

// The same section with enough trajectories that every thread of a 2-thread run gets work (the
// CPU engine hands out chunks of 64 trajectories, or 4 SIMD blocks), and few enough steps to stay
// fast: about 700 trajectories x 3000 steps.
const char* kHenonHeilesWideJob = R"({
  "model": {"name": "henon_heiles"},
  "integrator": {"name": "verlet", "dt": 0.01},
  "steps": 3000,
  "segment_steps": 1000,
  "ensemble": {"section_grid": {"energy": 0.125, "axes": {"q1": [-0.3, 0.4, 32], "p1": [-0.3, 0.3, 24]}}},
  "section": {"coordinate": "q0", "value": 0.0, "direction": "up"},
  "output": {"dir": "unused"}
})";

struct Outcome {
  RunResult result;
  HitStore hits;
};

Outcome run_with(const std::string& text, int threads) {
  const Job job = parse_job(text);
  RunOptions opt;
  opt.threads = threads;
  opt.quiet = true;
  Outcome o;
  o.result = run_ensemble(job, opt, &o.hits);
  return o;
}

void expect_bitwise_equal(const Outcome& x, const Outcome& y) {
  const RunResult& a = x.result;
  const RunResult& b = y.result;
  ASSERT_EQ(a.final.state.size(), b.final.state.size());
  EXPECT_EQ(0, std::memcmp(a.final.state.data(), b.final.state.data(),
                           a.final.state.size() * sizeof(double)));
  EXPECT_EQ(a.final.energy_error, b.final.energy_error);
  EXPECT_EQ(a.final.crossings, b.final.crossings);
  EXPECT_EQ(a.final.status, b.final.status);
  EXPECT_EQ(x.hits.trajectory, y.hits.trajectory);
  ASSERT_EQ(x.hits.values.size(), y.hits.values.size());
  EXPECT_EQ(0, std::memcmp(x.hits.values.data(), y.hits.values.data(),
                           x.hits.values.size() * sizeof(double)));
}

/// sections.csv as the contract defines it, computed independently of host/output/tables.cpp: rows
/// stably sorted by trajectory (drain order is chronological per trajectory), shortest
/// round-trip numbers.
std::string reference_sections_csv(const HitStore& hits, const std::vector<std::string>& names,
                                   bool as_float) {
  std::vector<std::size_t> order(hits.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return hits.trajectory[a] < hits.trajectory[b];
  });
  std::string s = "trajectory,crossing,t";
  for (const auto& n : names) {
    s += ',';
    s += n;
  }
  s += '\n';
  const int w = hits.dim + 1;
  char buf[64];
  std::int64_t prev = -1, crossing = 0;
  for (std::size_t k : order) {
    const std::int64_t t = hits.trajectory[k];
    crossing = t == prev ? crossing + 1 : 0;
    prev = t;
    s += std::to_string(t);
    s += ',';
    s += std::to_string(crossing);
    for (int c = 0; c < w; ++c) {
      const double v = hits.values[k * std::size_t(w) + std::size_t(c)];
      const auto r = as_float ? std::to_chars(buf, buf + sizeof buf, float(v))
                              : std::to_chars(buf, buf + sizeof buf, v);
      s += ',';
      s.append(buf, r.ptr);
    }
    s += '\n';
  }
  return s;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh directory under the system's temporary directory, removed by the destructor.
struct TempDir : ScratchDir {
  explicit TempDir(const std::string& name) : ScratchDir("run-" + name) {}
  std::set<std::string> entries(const fs::path& sub = {}) const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(path / sub))
      names.insert(e.path().filename().string());
    return names;
  }
};

}  // namespace

TEST(Run, CpuResultsBitwiseIdenticalForOneAndTwoThreads) {
  const Job job = parse_job(kHenonHeilesWideJob);
  ASSERT_GE(job.ensemble.count, 600);  // several chunks for each of the two threads
  const Outcome one = run_with(kHenonHeilesWideJob, 1);
  const Outcome two = run_with(kHenonHeilesWideJob, 2);
  EXPECT_EQ(one.result.segments, 3);  // 3000 steps in segments of 1000
  // About four crossings each.
  EXPECT_GT(one.hits.size(), std::size_t(job.ensemble.count));
  EXPECT_EQ(one.result.hits, std::int64_t(one.hits.size()));
  expect_bitwise_equal(one, two);
}

TEST(Run, RandomBoxRunsAreReproducible) {
  const std::string job = R"({
    "model": {"name": "kepler"}, "integrator": {"name": "yoshida4", "dt": 0.01}, "steps": 500,
    "ensemble": {"random_box": {"lo": [0.9, -0.1, -0.1, 0.9], "hi": [1.1, 0.1, 0.1, 1.1],
                                "count": 640, "seed": 7}},
    "section": {"coordinate": "q1", "direction": "both"}, "output": {"dir": "unused"}})";
  expect_bitwise_equal(run_with(job, 1), run_with(job, 2));
}

// A GPU's section buffers follow its memory (host::hit_budget_from_memory): a sixteenth of the
// device's free memory, at most an eighth of the host's available memory, never below the 256 MiB
// that were fixed before. What that buys: 10^6 Henon-Heiles trajectories in FP64 (five values per
// slot) get 6 slots from 256 MiB, about three launches per segment at a crossing per 600 steps and
// 10^4-step segments, and the 64 slots at most from an 80 GB device.
TEST(Run, GpuSectionBuffersFollowMemory) {
  constexpr std::size_t GiB = std::size_t(1) << 30;
  EXPECT_EQ(hit_budget_from_memory(80 * GiB, 0), 5 * GiB);
  EXPECT_EQ(hit_budget_from_memory(80 * GiB, 16 * GiB), 2 * GiB);
  EXPECT_EQ(hit_budget_from_memory(GiB, 512 * GiB), kDefaultHitBudget);
  EXPECT_EQ(hit_budget_from_memory(80 * GiB, GiB), kDefaultHitBudget);
  EXPECT_EQ(hit_budget_from_memory(0, 0), kDefaultHitBudget);
  SectionConfig s;
  s.kind = 1;
  s.max_crossings = 1000;
  EXPECT_EQ(choose_hit_capacity(s, 1000000, 4, 8, kDefaultHitBudget), 6);
  EXPECT_EQ(choose_hit_capacity(s, 1000000, 4, 8, hit_budget_from_memory(80 * GiB, 0)), 64);
  // A run without --memory-limit lets a GPU engine draw its budget; one with a limit keeps an
  // eighth of it. A CPU engine keeps hit_buffer_bytes either way.
  RunOptions options;
  EngineResources r = engine_resources(options);
  EXPECT_TRUE(r.hit_budget_from_memory);
  EXPECT_EQ(r.hit_buffer_bytes, kDefaultHitBudget);
  EXPECT_GT(r.host_available, 0u);  // /proc/meminfo on Linux
  EXPECT_EQ(make_engine(parse_job(kHenonHeilesJob).integration, r, BackendKind::kCpu)->hit_budget(),
            kDefaultHitBudget);
  options.memory_limit = GiB;
  r = engine_resources(options);
  EXPECT_FALSE(r.hit_budget_from_memory);
  EXPECT_EQ(r.hit_buffer_bytes, GiB / 8);
}

// A full per-trajectory buffer pauses the trajectory; the host drains and relaunches. The hit
// sequence must be exactly that of a run with room to spare: same hits, same order, same bits.
TEST(Run, SmallSectionBuffersLoseNothing) {
  const Job job = parse_job(kHenonHeilesJob);
  auto run_engine = [&](std::size_t budget) {
    EngineResources r = engine_resources(RunOptions{});
    r.hit_buffer_bytes = budget;
    auto e = make_engine(job.integration, r, BackendKind::kCpu);
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
  const RunResult d = with("double").result;
  const RunResult f = with("float").result;
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
  const RunResult r = run_with(job, 1).result;
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

// sections.csv is written from the spill file; its bytes must be exactly the contract's ordering
// of the hits the run drained (the same run kept in memory is the reference).
TEST(Run, SectionsCsvIsTheSortedHitsByteForByte) {
  const TempDir dir("sections");
  std::string text = kHenonHeilesJob;
  text.replace(text.find("\"unused\""), 8, "\"" + (dir.path / "out").string() + "\"");
  const Job job = parse_job(text);
  RunOptions opt;
  opt.quiet = true;
  HitStore hits;
  const RunResult r = run_ensemble(job, opt, &hits);
  ASSERT_GT(hits.size(), std::size_t(2 * job.ensemble.count));
  run_job(job, opt, false);
  const std::vector<std::string> names = find_model(job.integration.model)->state_names;
  EXPECT_EQ(read_text(dir.path / "out" / "sections.csv"),
            reference_sections_csv(hits, names, false));
  // The spill file is gone: the results directory holds the outputs and nothing else.
  EXPECT_EQ(dir.entries("out"), (std::set<std::string>{"energy_series.csv", "final.csv",
                                                       "sections.csv", "summary.json"}));
  EXPECT_EQ(r.hits, std::int64_t(hits.size()));
}

// The spill file sorted in passes over trajectory ranges (a small memory budget) gives the same
// bytes as the in-memory sort, including ranges of one trajectory larger than the budget; and
// rows formatted in pieces on three threads (a piece per few records here) the same as on one.
TEST(Run, SectionsCsvInPassesEqualsInMemory) {
  const TempDir dir("passes");
  const Job job = parse_job(kHenonHeilesJob);
  const Outcome o = run_with(kHenonHeilesJob, 0);
  const HitStore& hits = o.hits;
  const std::int64_t n = job.ensemble.count;
  const std::vector<std::string> names = find_model(job.integration.model)->state_names;
  const std::size_t record = std::size_t(hits.dim + 1) * sizeof(double);
  std::vector<std::int64_t> counts(std::size_t(n), 0);
  for (auto t : hits.trajectory) ++counts[std::size_t(t)];
  ASSERT_GT(*std::max_element(counts.begin(), counts.end()), 5);
  {
    HitSpill spill(dir.path / "hits.spill", hits.dim, n);
    // Appended in blocks of 37 hits, as drains would.
    for (std::size_t k0 = 0; k0 < hits.size(); k0 += 37) {
      const std::size_t k1 = std::min(hits.size(), k0 + 37);
      HitBlock b;
      b.dim = hits.dim;
      b.trajectory.assign(hits.trajectory.begin() + std::ptrdiff_t(k0),
                          hits.trajectory.begin() + std::ptrdiff_t(k1));
      b.values.assign(hits.values.begin() + std::ptrdiff_t(k0 * (hits.dim + 1)),
                      hits.values.begin() + std::ptrdiff_t(k1 * (hits.dim + 1)));
      spill.append(b);
    }
    spill.finish();
    EXPECT_EQ(spill.total(), std::int64_t(hits.size()));
    EXPECT_EQ(spill.counts(), counts);
    EXPECT_EQ(fs::file_size(spill.file()),
              hits.size() * (sizeof(std::int64_t) + record));  // the documented record layout
    for (const bool as_float : {false, true}) {
      const std::string want = reference_sections_csv(hits, names, as_float);
      for (const std::size_t budget :
           {kSectionsSortBudget, 25 * record, 12 * record, 5 * record, std::size_t(1)})
        for (const int threads : {1, 3}) {
          SCOPED_TRACE("budget " + std::to_string(budget) + (as_float ? " float" : " double") +
                       ", " + std::to_string(threads) + " threads");
          write_sections_csv(dir.path / "sections.csv", spill, names, as_float, threads, budget);
          EXPECT_EQ(read_text(dir.path / "sections.csv"), want);
        }
    }
  }
  // The destructor removes the spill file.
  EXPECT_EQ(dir.entries(), std::set<std::string>{"sections.csv"});
}

TEST(Run, HitSpillRejectsTrajectoriesOutsideTheRun) {
  const TempDir dir("spill-range");
  HitSpill spill(dir.path / "hits.spill", 2, 3);
  HitBlock b;
  b.dim = 2;
  b.trajectory = {3};
  b.values = {0.0, 1.0, 2.0};
  EXPECT_THROW(spill.append(b), std::runtime_error);
  spill.remove();
  EXPECT_TRUE(dir.entries().empty());
}

// A run that fails leaves no directory behind, the parents the output directory created included.
TEST(Run, OutputDirRemovesTheParentsItCreated) {
  const TempDir dir("parents");
  {
    OutputDir out((dir.path / "lvl1" / "lvl2" / "res").string(), false);
    EXPECT_TRUE(fs::is_directory(out.temp()));
    EXPECT_TRUE(fs::is_directory(dir.path / "lvl1" / "lvl2"));
  }
  EXPECT_TRUE(dir.entries().empty());
  {
    OutputDir out((dir.path / "lvl1" / "lvl2" / "res").string(), false);
    std::ofstream(dir.path / "lvl1" / "keep.txt") << "not ours";
  }
  // What someone else put there stays, and so does the directory holding it.
  EXPECT_EQ(dir.entries(), std::set<std::string>{"lvl1"});
  EXPECT_EQ(dir.entries("lvl1"), std::set<std::string>{"keep.txt"});
  // After a commit the parents are kept.
  {
    OutputDir out((dir.path / "a" / "b" / "res").string(), false);
    out.commit();
  }
  EXPECT_TRUE(fs::is_directory(dir.path / "a" / "b" / "res"));
}

TEST(Run, OutputDirIgnoresATrailingSeparator) {
  const TempDir dir("trailing");
  for (const std::string suffix : {"/", "//", "/."}) {
    SCOPED_TRACE(suffix);
    fs::remove_all(dir.path / "res");
    OutputDir out((dir.path / "new" / "res").string() + suffix, false);
    EXPECT_EQ(out.target(), dir.path / "new" / "res");
    std::ofstream(out.temp() / "summary.json") << "{}";
    out.commit();
    EXPECT_TRUE(fs::is_regular_file(dir.path / "new" / "res" / "summary.json"));
    fs::remove_all(dir.path / "new");
  }
}

TEST(Run, OutputDirThatIsAFileIsNotADirectory) {
  const TempDir dir("file");
  std::ofstream(dir.path / "res") << "a file";
  for (const bool force : {false, true}) {
    try {
      OutputDir out((dir.path / "res").string(), force);
      ADD_FAILURE() << "no error";
    } catch (const JobError& e) {
      EXPECT_EQ(e.path(), "output.dir");
      EXPECT_NE(std::string(e.what()).find("exists and is not a directory"), std::string::npos)
          << e.what();
    }
  }
}

// Without --force, commit() never replaces a target that appeared during the run.
TEST(Run, CommitWithoutForceLeavesATargetThatAppeared) {
  const TempDir dir("appeared");
  const fs::path target = dir.path / "res";
  for (const bool with_file : {true, false}) {
    SCOPED_TRACE(with_file ? "directory with a file" : "empty directory");
    {
      OutputDir out(target.string(), false);
      std::ofstream(out.temp() / "summary.json") << "{\"ours\": true}";
      fs::create_directory(target);
      if (with_file) std::ofstream(target / "theirs.txt") << "theirs";
      try {
        out.commit();
        ADD_FAILURE() << "commit replaced a target that appeared during the run";
      } catch (const JobError& e) {
        ADD_FAILURE() << "a runtime failure, not bad input: " << e.what();
      } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
      }
    }
    // Theirs untouched, ours (the temporary directory) removed.
    EXPECT_EQ(dir.entries(), std::set<std::string>{"res"});
    EXPECT_EQ(dir.entries("res"),
              with_file ? std::set<std::string>{"theirs.txt"} : std::set<std::string>{});
    fs::remove_all(target);
  }
  // An empty directory that was there from the start is still replaced, and --force replaces.
  fs::create_directory(target);
  {
    OutputDir out(target.string(), false);
    std::ofstream(out.temp() / "summary.json") << "{}";
    out.commit();
  }
  EXPECT_EQ(dir.entries("res"), std::set<std::string>{"summary.json"});
  {
    OutputDir out(target.string(), true);
    std::ofstream(out.temp() / "final.csv") << "";
    std::ofstream(target / "late.txt") << "late";
    out.commit();
  }
  EXPECT_EQ(dir.entries("res"), std::set<std::string>{"final.csv"});
  EXPECT_EQ(dir.entries(), std::set<std::string>{"res"});
}

// A run continued from the previous run's final.csv (ensemble.file) ends where one run of the
// summed length ends, bit for bit: final.csv holds shortest round-trip numbers and the model is
// autonomous, so nothing but the restart itself differs (Verlet recomputes the cached force from
// the same q).
TEST(Run, ContinuingFromFinalCsvEqualsOneLongRun) {
  const TempDir dir("continue");
  std::string first = kHenonHeilesJob;
  first.replace(first.find("\"unused\""), 8, "\"" + (dir.path / "first").string() + "\"");
  first.replace(first.find("\"steps\": 6000"), 13, "\"steps\": 2600");
  RunOptions opt;
  opt.quiet = true;
  run_job(parse_job(first), opt, false);
  std::string second = kHenonHeilesJob;
  second.replace(second.find("\"steps\": 6000"), 13, "\"steps\": 3400");
  const std::string grid = second.substr(second.find("{\"section_grid\""));
  second.replace(second.find("{\"section_grid\""), grid.find("}}}") + 3,
                 "{\"file\": {\"path\": \"" + (dir.path / "first" / "final.csv").string() + "\"}}");
  const RunResult resumed = run_with(second, 2).result;
  const RunResult whole = run_with(kHenonHeilesJob, 2).result;
  ASSERT_EQ(resumed.final.state.size(), whole.final.state.size());
  EXPECT_EQ(0, std::memcmp(resumed.final.state.data(), whole.final.state.data(),
                           whole.final.state.size() * sizeof(double)));
}

// The engine is built before anything is created on disk: no device, no directories.
TEST(Run, MissingDeviceCreatesNothing) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  const TempDir dir("nodevice");
  std::string text = kHenonHeilesJob;
  text.replace(text.find("\"unused\""), 8,
               "\"" + (dir.path / "lvl1" / "lvl2" / "res").string() + "\"");
  Overrides o;
  o.backend = "cuda";
  const Job job = parse_job(text, o);
  RunOptions opt;
  opt.quiet = true;
  try {
    run_job(job, opt, false);
    ADD_FAILURE() << "ran without a device";
  } catch (const JobError& e) {
    ADD_FAILURE() << "a runtime failure, not bad input: " << e.what();
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(dir.entries().empty());
}
