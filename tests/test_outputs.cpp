// The outputs around the run: the per-segment energy series, the progress report, the output
// block of the job file (csv, hdf5) and results.h5 as far as C++ sees it (tests/hdf5/ reads it
// back with h5py and compares it with the CSV files of the same run).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#if defined(VIGOR_HAVE_HDF5)
#include <hdf5.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "host/job/job.hpp"
#include "host/output/hdf5_results.hpp"
#include "host/output/series.hpp"
#include "host/run/checkpoint.hpp"
#include "host/run/progress.hpp"
#include "host/run/run.hpp"
#include "tests/csv_cells.hpp"
#include "tests/scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace vigor::host;
using Json = nlohmann::ordered_json;

namespace {

// Hénon–Heiles at E = 1/8: 63 trajectories, 5 segments of 1000 steps (the last one short).
Json henon_heiles_job(const fs::path& out) {
  return Json::parse(R"({
    "model": {"name": "henon_heiles"},
    "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 4500,
    "segment_steps": 1000,
    "ensemble": {"section_grid": {"energy": 0.125,
                 "axes": {"q1": [-0.3, 0.4, 9], "p1": [-0.3, 0.3, 7]}}},
    "section": {"coordinate": "q0", "value": 0.0, "direction": "up"},
    "output": {"dir": ")" +
                     out.string() + R"("}
  })");
}

struct TempDir : ScratchDir {
  explicit TempDir(const std::string& tag) : ScratchDir("outputs-" + tag) {}
};

void expect_job_error(const Json& j, const std::string& path, const std::string& words) {
  try {
    parse_job(j.dump());
    ADD_FAILURE() << "accepted: " << j.dump();
  } catch (const JobError& e) {
    EXPECT_EQ(e.path(), path) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

}  // namespace

// --- Statistics ---------------------------------------------------------------------------------

TEST(Series, SummarizeUsesNearestRankAndCountsNaN) {
  // 1..100 shuffled with two NaN: median = 50th value, p99 = 99th value (nearest rank).
  std::vector<double> v;
  for (int k = 100; k >= 1; --k) v.push_back(k % 2 ? k : -k);
  v.insert(v.begin() + 10, std::nan(""));
  v.push_back(std::nan(""));
  const Stats m = summarize(v, true);
  EXPECT_EQ(m.max, 100.0);
  EXPECT_EQ(m.median, 50.0);
  EXPECT_EQ(m.p99, 99.0);
  EXPECT_EQ(m.finite, 100);
  EXPECT_EQ(m.nan, 2);
  const Stats signed_values = summarize(v, false);
  EXPECT_EQ(signed_values.max, 99.0);  // the largest odd k; even k are negative
  const Stats none = summarize({std::nan("")});
  EXPECT_TRUE(std::isnan(none.max) && std::isnan(none.median) && std::isnan(none.p99));
}

TEST(Series, CsvHasSegmentZeroAtTheStart) {
  TempDir tmp("series");
  StatSeries s({"energy_error"});
  s.add(0.0, {summarize({0.0, 0.0})});
  s.add(2.5, {summarize({1e-6, 3e-6})});
  s.write_csv(tmp.path / "s.csv");
  const auto rows = read_csv(tmp.path / "s.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"segment", "t", "energy_error_max",
                                               "energy_error_median", "energy_error_p99"}));
  EXPECT_EQ(rows[1][0], "0");
  EXPECT_EQ(rows[2][0], "1");
  EXPECT_EQ(std::stod(rows[2][1]), 2.5);
  EXPECT_EQ(std::stod(rows[2][2]), 3e-6);
  EXPECT_EQ(s.column(2), (std::vector<double>{0.0, 3e-6}));
}

// --- The energy series of a run -----------------------------------------------------------------

TEST(EnergySeries, OneRowPerSegmentEndingAtTheFinalMaxima) {
  TempDir tmp("energy");
  const Job job = parse_job(henon_heiles_job(tmp.path / "out").dump());
  RunOptions opt;
  opt.quiet = true;
  const RunResult r = run_ensemble(job, opt);
  // t = 0 and the end of each of the 5 segments (4500 steps in segments of 1000).
  ASSERT_EQ(r.energy_series.size(), 6u);
  EXPECT_EQ(r.energy_series.t().front(), 0.0);
  EXPECT_DOUBLE_EQ(r.energy_series.t().back(), 45.0);
  const auto max = r.energy_series.column(0), median = r.energy_series.column(1),
             p99 = r.energy_series.column(2);
  EXPECT_EQ(max.front(), 0.0);  // nothing has moved at t = 0
  for (std::size_t k = 1; k < max.size(); ++k) {
    // A running maximum per trajectory: its ensemble statistics never decrease.
    EXPECT_GE(max[k], max[k - 1]);
    EXPECT_GE(median[k], median[k - 1]);
    EXPECT_LE(median[k], p99[k]);
    EXPECT_LE(p99[k], max[k]);
  }
  // The last row is the statistics of final.csv's energy_error_max, exactly.
  EXPECT_EQ(max.back(),
            *std::max_element(r.final.energy_error.begin(), r.final.energy_error.end()));
  // Verlet at h = 0.01, E = 1/8: |dH| = O(h^2), measured ~3e-6; bounded well below 1e-4.
  EXPECT_GT(max.back(), 0.0);
  EXPECT_LT(max.back(), 1e-4);
}

TEST(EnergySeries, RunJobWritesTheCsvAndNamesItInTheSummary) {
  TempDir tmp("energy-csv");
  const Job job = parse_job(henon_heiles_job(tmp.path / "out").dump());
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_job(job, opt, false);
  EXPECT_EQ(summary["energy_series"], "energy_series.csv");
  const auto rows = read_csv(tmp.path / "out" / "energy_series.csv");
  ASSERT_EQ(rows.size(), 7u);  // header + t = 0 + 5 segments
  EXPECT_EQ(rows[0][2], "energy_error_max");
  EXPECT_EQ(std::stod(rows.back()[2]), summary["energy_error_max"].get<double>());
  // Peak resident memory: at least the test binary itself (a few MiB), below the machine's.
  ASSERT_TRUE(summary.contains("peak_host_memory_bytes"));
  EXPECT_GT(summary["peak_host_memory_bytes"].get<std::int64_t>(), std::int64_t(1) << 20);
  EXPECT_LT(summary["peak_host_memory_bytes"].get<std::int64_t>(), std::int64_t(1) << 40);
}

// --- Progress -----------------------------------------------------------------------------------

TEST(Progress, TextSaysSegmentsStepsRateCrossingsAndEta) {
  ProgressState s;
  s.steps_done = 3000;
  s.steps_total = 10000;
  s.segments_done = 3;
  s.segments_total = 10;
  s.trajectories = 1000;
  s.crossings = 4521;
  s.elapsed = 6.0;
  // 3e6 trajectory-steps in 6 s; 7000 steps left at 2 ms per step.
  EXPECT_EQ(progress_text(s),
            "segment 3/10, step 3000/10000 (30%), 5e+05 traj-steps/s, 4521 crossings, ETA 14s");
  EXPECT_EQ(progress_bar(s, 10).substr(0, 13), "[###.......] ");
  s.elapsed = 600.0;
  EXPECT_NE(progress_text(s).find("ETA 23m20s"), std::string::npos);
  s.steps_done = s.steps_total;
  EXPECT_NE(progress_text(s).find("done"), std::string::npos);
}

TEST(Progress, PlainLinesArePeriodicAndShortRunsStaySilent) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  Progress p(true, f, false, /*first_after=*/2.0, /*line_every=*/10.0);
  ProgressState s;
  s.steps_total = 100;
  s.trajectories = 1;
  for (int k = 1; k <= 100; ++k) {
    s.steps_done = k;
    s.elapsed = 0.5 * k;  // 50 s in all
    p.update(s);
  }
  p.finish(s);
  // Reports at 2, 12, 22, 32, 42 s, then the final line.
  EXPECT_EQ(p.reports(), 6);
  std::rewind(f);
  char line[512];
  int lines = 0;
  while (std::fgets(line, sizeof line, f)) {
    EXPECT_EQ(std::string(line).rfind("vigor: segment", 0), 0u) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 6);
  std::fclose(f);

  Progress quiet_run(true, stderr, false);
  s.elapsed = 1.0;  // a one-second run says nothing
  quiet_run.update(s);
  quiet_run.finish(s);
  EXPECT_EQ(quiet_run.reports(), 0);
  Progress off(false, stderr, true);
  s.elapsed = 100.0;
  off.update(s);
  EXPECT_EQ(off.reports(), 0);
}

TEST(Progress, TerminalBarRedrawsInPlace) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  Progress p(true, f, true, 0.0);
  ProgressState s;
  s.steps_total = 4;
  s.trajectories = 1;
  for (int k = 1; k <= 4; ++k) {
    s.steps_done = k;
    s.elapsed = double(k);
    p.update(s);
  }
  p.finish(s);
  std::rewind(f);
  std::string all;
  for (int c; (c = std::fgetc(f)) != EOF;) all += char(c);
  std::fclose(f);
  EXPECT_EQ(std::count(all.begin(), all.end(), '\r'), 5);  // 4 updates and the final redraw
  EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 1);  // one line in the end
  EXPECT_NE(all.find("[########################]"), std::string::npos);
}

// --- The output block of the job file -----------------------------------------------------------

TEST(OutputKeys, FlagsMustBeBooleansAndCsvOffNeedsHdf5) {
  Json j = henon_heiles_job("unused");
  j["output"]["hdf5"] = "yes";
  expect_job_error(j, "output.hdf5", "true or false");
  j = henon_heiles_job("unused");
  j["output"]["csv"] = 0;
  expect_job_error(j, "output.csv", "true or false");
  j = henon_heiles_job("unused");
  j["output"]["csv"] = false;
  expect_job_error(j, "output.csv", "needs \"hdf5\": true");
  j = henon_heiles_job("unused");
  j["output"]["hdf"] = true;
  expect_job_error(j, "output.hdf", "unknown");
}

TEST(OutputKeys, Hdf5RequestedWithoutHdf5IsBadInput) {
  if (hdf5_available()) GTEST_SKIP() << "this build has HDF5";
  Json j = henon_heiles_job("unused");
  j["output"]["hdf5"] = true;
  expect_job_error(j, "output.hdf5", "built without HDF5");
}

TEST(Hdf5, CsvOffWritesOnlyTheContainerAndTheSmallFiles) {
  if (!hdf5_available()) GTEST_SKIP() << "built without HDF5";
  TempDir tmp("h5");
  Json j = henon_heiles_job(tmp.path / "out");
  j["output"]["hdf5"] = true;
  j["output"]["csv"] = false;
  const Job job = parse_job(j.dump());
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_job(job, opt, false);
  const fs::path out = tmp.path / "out";
  EXPECT_EQ(summary["hdf5"], "results.h5");
  EXPECT_TRUE(fs::exists(out / "results.h5"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  EXPECT_TRUE(fs::exists(out / "energy_series.csv"));
  EXPECT_FALSE(fs::exists(out / "sections.csv"));
  EXPECT_FALSE(fs::exists(out / "final.csv"));
  EXPECT_FALSE(fs::exists(out / "hits.spill"));
  // HDF5's signature opens the file.
  std::ifstream in(out / "results.h5", std::ios::binary);
  char sig[8];
  in.read(sig, 8);
  EXPECT_EQ(std::string(sig, 8), std::string("\x89HDF\r\n\x1a\n", 8));
}

TEST(Hdf5, UnwritableFileIsARuntimeErrorNamingIt) {
  if (!hdf5_available()) GTEST_SKIP() << "built without HDF5";
  const fs::path bad = fs::temp_directory_path() / "vigor-no-such-dir" / "x" / "results.h5";
  try {
    Hdf5Results h(bad, {"q0", "p0"}, 3, false);
    ADD_FAILURE() << "created " << bad;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
  }
}

#if defined(VIGOR_HAVE_HDF5)
/// Dataset `name` of an HDF5 file read back whole through HDF5's own filter pipeline, as `type`.
template <class T>
std::vector<T> read_h5_column(const fs::path& file, const std::string& name, hid_t type) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
  const hid_t space = H5Dget_space(d);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  std::vector<T> v(n);
  const herr_t read = n ? H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) : 0;
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  EXPECT_GE(f, 0);
  EXPECT_GE(read, 0) << name;
  return v;
}

// /sections appended in blocks of one whole chunk (64 Ki rows), of several chunks ending inside
// one (both compressed by vigor on every core and written chunk by chunk), then from inside that
// chunk (HDF5's own pipeline merges them): read back through HDF5, every value is the one
// appended, exactly, and the crossings are numbered per trajectory, in both precisions.
TEST(Hdf5, SectionsAppendedAcrossChunksReadBackExactly) {
  constexpr std::size_t kChunk = std::size_t(1) << 16;
  for (const bool as_float : {false, true}) {
    TempDir tmp("h5chunks");
    const fs::path file = tmp.path / "results.h5";
    constexpr std::int64_t kTrajectories = 1000;
    std::vector<std::int64_t> trajectory, crossing, count(kTrajectories, 0);
    std::vector<double> t, q, p;
    {
      // FP64 compresses on OpenMP's default threads, FP32 on one (--threads 1).
      Hdf5Results h5(file, {"q0", "p0"}, kTrajectories, as_float, as_float ? 1 : 0);
      for (const std::size_t records : {kChunk, 2 * kChunk + 123, std::size_t(4567), kChunk + 5}) {
        HitBlock b;
        b.dim = 2;
        for (std::size_t r = 0; r < records; ++r) {
          const auto k = std::int64_t(trajectory.size());
          const std::int64_t i = (k * 7919) % kTrajectories;
          const double tk = 1.0 / 3.0 + 1e-3 * double(k);
          const double v[3] = {tk, std::sin(tk), -1e-7 * std::cos(tk)};
          b.trajectory.push_back(i);
          b.values.insert(b.values.end(), v, v + 3);
          trajectory.push_back(i);
          crossing.push_back(count[std::size_t(i)]++);
          for (auto [col, x] : {std::pair{&t, v[0]}, {&q, v[1]}, {&p, v[2]}})
            col->push_back(as_float ? double(float(x)) : x);
        }
        h5.append_sections(b);
      }
      h5.close();
    }
    EXPECT_EQ(read_h5_column<std::int64_t>(file, "/sections/trajectory", H5T_NATIVE_INT64),
              trajectory);
    EXPECT_EQ(read_h5_column<std::int64_t>(file, "/sections/crossing", H5T_NATIVE_INT64), crossing);
    // Read as double: HDF5 widens float32 data exactly.
    EXPECT_EQ(read_h5_column<double>(file, "/sections/t", H5T_NATIVE_DOUBLE), t) << as_float;
    EXPECT_EQ(read_h5_column<double>(file, "/sections/q0", H5T_NATIVE_DOUBLE), q) << as_float;
    EXPECT_EQ(read_h5_column<double>(file, "/sections/p0", H5T_NATIVE_DOUBLE), p) << as_float;
  }
}

// A table (/final, /initial, the series) is compressed on every core as /sections is, in chunks of
// min(64 Ki, rows) rows and batches of 32 MiB of values (20 chunks of these columns in FP64, 24 in
// FP32): a table of two batches ending in a partial chunk, one of two chunks and a partial one, and
// one smaller than a chunk, read back exactly in every column kind (run-precision reals as float32
// in FP32 runs, exact reals, integers, status codes as the enumeration's int8 values).
TEST(Hdf5, TablesAcrossChunksReadBackExactly) {
  for (const bool as_float : {false, true})
    for (const std::size_t rows :
         {(std::size_t(25) << 16) + 77, (std::size_t(2) << 16) + 77, std::size_t(1000)}) {
      TempDir tmp("h5table");
      const fs::path file = tmp.path / "results.h5";
      Column x{"x", Column::Kind::kReal, true, {}, {}};
      Column t{"t", Column::Kind::kReal, false, {}, {}};
      Column k{"k", Column::Kind::kInteger, false, {}, {}};
      Column s{"status", Column::Kind::kStatus, false, {}, {}};
      for (std::size_t r = 0; r < rows; ++r) {
        x.real.push_back(std::sin(0.1 + double(r)) * (1 + 1e-9 * double(r)));
        t.real.push_back(1.0 / 3.0 + double(r));
        k.integer.push_back(std::int64_t(r) * 1'000'003 - 7);
        s.integer.push_back(std::int64_t(r % 4));
      }
      {
        Hdf5Results h5(file, {"q0"}, 1, as_float, 0);
        h5.write_table("final", {x, t, k, s});
        h5.close();
      }
      std::vector<double> x_stored = x.real;
      if (as_float)
        for (double& v : x_stored) v = double(float(v));
      EXPECT_EQ(read_h5_column<double>(file, "/final/x", H5T_NATIVE_DOUBLE), x_stored) << rows;
      EXPECT_EQ(read_h5_column<double>(file, "/final/t", H5T_NATIVE_DOUBLE), t.real) << rows;
      EXPECT_EQ(read_h5_column<std::int64_t>(file, "/final/k", H5T_NATIVE_INT64), k.integer);
      const std::vector<std::int8_t> codes =
          read_h5_column<std::int8_t>(file, "/final/status", H5T_NATIVE_INT8);
      EXPECT_EQ(std::vector<std::int64_t>(codes.begin(), codes.end()), s.integer) << rows;
    }
}
#endif

// --- Stop signals -----------------------------------------------------------------------------

// SIGTERM (and SIGINT) mid-run: the segment in progress finishes, a checkpoint is written into the
// temporary directory beside the target (nothing else is left: no target), and vigor exits 3 saying
// where it stopped and how to continue. tests/resume/ resumes such runs and compares the results.
TEST(StopSignal, SigtermEndsTheRunBetweenSegmentsWithACheckpoint) {
  TempDir tmp("signal");
  Json j = henon_heiles_job(tmp.path / "out");
  j["steps"] = 100000000;  // hours: only the signal ends it
  j["segment_steps"] = 2000;
  const fs::path job = tmp.path / "job.json";
  std::ofstream(job) << j.dump();
  const fs::path err = tmp.path / "stderr";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::execl(VIGOR_BIN, VIGOR_BIN, "run", job.c_str(), "--threads", "1", (char*)nullptr);
    ::_exit(127);
  }
  // Wait until the run is under way (its temporary directory exists), then stop it.
  bool started = false;
  for (int k = 0; k < 200 && !started; ++k) {
    ::usleep(50000);
    for (const auto& e : fs::directory_iterator(tmp.path))
      if (e.path().filename().string().find("out") != std::string::npos) started = true;
  }
  EXPECT_TRUE(started);
  ::usleep(300000);
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by the signal instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 3);
  std::ifstream in(err);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("interrupted by SIGTERM at step "), std::string::npos) << text;
  EXPECT_NE(text.find("checkpoint written; continue with: vigor run --resume " +
                      (tmp.path / "out").string()),
            std::string::npos)
      << text;
  // The job, the captured stderr and the interrupted run's directory with its checkpoint.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp.path)) left.push_back(e.path().filename());
  std::sort(left.begin(), left.end());
  const std::string partial = ".out.partial-" + std::to_string(pid);
  EXPECT_EQ(left, (std::vector<std::string>{partial, "job.json", "stderr"}));
  EXPECT_TRUE(fs::exists(tmp.path / partial / "checkpoint.bin"));
  const Checkpoint c = read_checkpoint(tmp.path / partial);
  EXPECT_EQ(c.cursor.step % 2000, 0);
  EXPECT_GT(c.cursor.step, 0);
}
