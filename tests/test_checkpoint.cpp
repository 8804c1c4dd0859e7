// Checkpoints: the file format (round trip, and refusal of damaged files), the engines' state
// export and import, and the run loop continuing from a checkpoint exactly where an uninterrupted
// run would be; and chunked runs (ensembles beyond a memory limit) against unchunked ones. The
// kill-and-resume test of the whole program is tests/resume/test_kill_resume.py.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "host/job/job.hpp"
#include "host/run/checkpoint.hpp"
#include "host/run/run.hpp"
#include "tests/scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace vigor::host;
using Json = nlohmann::ordered_json;

namespace {

struct TempDir : ScratchDir {
  explicit TempDir(const std::string& tag) : ScratchDir("checkpoint-" + tag) {}
};

Checkpoint sample_checkpoint() {
  Checkpoint c;
  c.job = Json::parse(R"({"model": {"name": "pendulum"}, "steps": 10})");
  c.overrides.out = "elsewhere";
  c.cwd = "/tmp";
  c.trajectories = 3;
  c.dim = 2;
  c.ensemble_hash = 0xfedcba9876543210ull;
  c.spill_records = 17;
  c.resumed_at = {4};
  c.cursor.step = 8;
  c.cursor.segments = 2;
  c.cursor.launches = 5;
  c.cursor.hits = 17;
  c.cursor.kernel_seconds = 0.25;
  c.cursor.wall_seconds = 1.5;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.cursor.energy_series.add(0.0, {Stats{0.0, 0.0, 0.0, 3, 0}});
  c.cursor.energy_series.add(0.4, {Stats{nan, nan, nan, 0, 3}});
  StateArray a;
  a.name = "state";
  a.elem_bytes = 8;
  for (int k = 0; k < 6; ++k) {
    const double x = 0.1 * k - 0.2;
    const auto* p = reinterpret_cast<const unsigned char*>(&x);
    a.bytes.insert(a.bytes.end(), p, p + 8);
  }
  StateArray s;
  s.name = "status";
  s.elem_bytes = 4;
  s.bytes.assign(12, 0);
  s.bytes[4] = 2;
  c.arrays = {a, s};
  return c;
}

}  // namespace

TEST(CheckpointFile, RoundTripsEveryFieldBitForBit) {
  TempDir tmp("roundtrip");
  const Checkpoint c = sample_checkpoint();
  write_checkpoint(tmp.path, c);
  EXPECT_TRUE(fs::exists(tmp.path / kCheckpointFile));
  EXPECT_FALSE(fs::exists(tmp.path / "checkpoint.bin.tmp"));
  const Checkpoint r = read_checkpoint(tmp.path);
  EXPECT_EQ(r.job, c.job);
  EXPECT_EQ(r.overrides.out, "elsewhere");
  EXPECT_EQ(r.cwd, "/tmp");
  EXPECT_EQ(r.trajectories, 3);
  EXPECT_EQ(r.dim, 2);
  EXPECT_EQ(r.ensemble_hash, c.ensemble_hash);
  EXPECT_EQ(r.spill_records, 17);
  EXPECT_EQ(r.resumed_at, std::vector<std::int64_t>{4});
  EXPECT_EQ(r.cursor.step, 8);
  EXPECT_EQ(r.cursor.segments, 2);
  EXPECT_EQ(r.cursor.launches, 5);
  EXPECT_EQ(r.cursor.hits, 17);
  EXPECT_EQ(r.cursor.kernel_seconds, 0.25);
  EXPECT_EQ(r.cursor.wall_seconds, 1.5);
  ASSERT_EQ(r.cursor.energy_series.size(), 2u);
  EXPECT_EQ(r.cursor.energy_series.t()[1], 0.4);
  // NaN statistics (no finite entry) survive, which JSON could not carry.
  EXPECT_TRUE(std::isnan(r.cursor.energy_series.rows()[1][0].max));
  EXPECT_EQ(r.cursor.energy_series.rows()[1][0].nan, 3);
  EXPECT_EQ(r.cursor.tangent_series.size(), 0u);
  ASSERT_EQ(r.arrays.size(), 2u);
  EXPECT_EQ(r.arrays[0].name, "state");
  EXPECT_EQ(r.arrays[0].bytes, c.arrays[0].bytes);
  EXPECT_EQ(r.arrays[1].elem_bytes, 4);
  EXPECT_EQ(r.arrays[1].bytes, c.arrays[1].bytes);
}

namespace {

void expect_unusable(const fs::path& dir, const std::string& words) {
  try {
    read_checkpoint(dir);
    ADD_FAILURE() << "a damaged checkpoint was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find((dir / kCheckpointFile).string()), std::string::npos)
        << e.what();
  }
}

}  // namespace

TEST(CheckpointFile, DamagedFilesAreRefusedWithAReason) {
  TempDir tmp("damaged");
  write_checkpoint(tmp.path, sample_checkpoint());
  const fs::path file = tmp.path / kCheckpointFile;
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto put = [&](const std::string& b) { std::ofstream(file, std::ios::binary) << b; };
  // One flipped bit in the middle of the arrays.
  std::string flipped = bytes;
  flipped[flipped.size() - 20] ^= 0x10;
  put(flipped);
  expect_unusable(tmp.path, "checksum does not match");
  // Cut short, as a kill while writing it would (were it not written under another name).
  for (const std::size_t keep : {std::size_t(5), std::size_t(30), bytes.size() - 4}) {
    put(bytes.substr(0, keep));
    expect_unusable(tmp.path, "truncated");
  }
  put(bytes + "x");
  expect_unusable(tmp.path, "bytes after its end");
  put("NOTVIGOR" + bytes.substr(8));
  expect_unusable(tmp.path, "not a vigor checkpoint");
  std::string later = bytes;
  later[8] = 9;  // the format version
  put(later);
  expect_unusable(tmp.path, "format version 9");
  // Found by fuzz_checkpoint: a float where the header has an integer was converted with
  // undefined behaviour (9e19 into a uint64); the header is read before the checksum is checked.
  for (const char* field : {R"("step": 9.01948e19)", R"("step": -3)", R"("dim": 2.5)"}) {
    std::string header = R"({"job": {}, "overrides": {"out": "", "backend": "", "precision": ""},
      "cwd": "/", "trajectories": 1, "dim": 2, "ensemble_hash": 1, "spill_records": 0,
      "memory_limit": 0, "resumed_at": [], "step": 1, "segments": 1, "launches": 1, "hits": 0})";
    const std::string key = std::string(field).substr(0, std::string(field).find(':') + 1);
    const auto at = header.find(key);
    header.replace(at, header.find_first_of(",}", at) - at, field);
    std::string b = bytes.substr(0, 12);
    const std::uint64_t len = header.size();
    b.append(reinterpret_cast<const char*>(&len), 8);
    put(b + header);
    expect_unusable(tmp.path, "bad header");
  }
  fs::remove(file);
  try {
    read_checkpoint(tmp.path);
    ADD_FAILURE() << "a missing checkpoint was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read checkpoint"), std::string::npos) << e.what();
  }
}

TEST(CheckpointFile, SliceTakesEachSlotsShard) {
  // Two slots of 4 trajectories, 4-byte values: [slot * 4 + i] = 10 slot + i.
  StateArray a;
  a.name = "x";
  a.elem_bytes = 4;
  for (std::int32_t slot = 0; slot < 2; ++slot)
    for (std::int32_t i = 0; i < 4; ++i) {
      const std::int32_t v = 10 * slot + i;
      const auto* p = reinterpret_cast<const unsigned char*>(&v);
      a.bytes.insert(a.bytes.end(), p, p + 4);
    }
  const auto s = slice_arrays({a}, 4, 1, 3);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].bytes.size(), 16u);
  std::int32_t v[4];
  std::memcpy(v, s[0].bytes.data(), 16);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], 2);
  EXPECT_EQ(v[2], 11);
  EXPECT_EQ(v[3], 12);
}

TEST(CheckpointFile, DeadRunsAreRemovedResumableAndLiveOnesKept) {
  TempDir tmp("dead");
  const fs::path target = tmp.path / "res";
  const fs::path dead = tmp.path / ".res.partial-11";
  const fs::path resumable = tmp.path / ".res.partial-12";
  const fs::path finished = tmp.path / ".res.partial-13";
  const fs::path live = tmp.path / ".res.partial-14";
  const fs::path other = tmp.path / ".resx.partial-15";
  for (const auto& d : {dead, resumable, finished, live, other}) fs::create_directories(d);
  std::ofstream(dead / "hits.spill") << "x";
  write_checkpoint(resumable, sample_checkpoint());
  std::ofstream(finished / "summary.json") << "{}";
  const DirLock held(live);  // a run still going
  EXPECT_EQ(find_interrupted_runs(target), (std::vector<fs::path>{resumable, finished}));
  EXPECT_EQ(remove_dead_runs(target), (std::vector<fs::path>{resumable, finished}));
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_THROW(DirLock again(live), std::runtime_error);
}

// --- The run loop from a checkpoint
// ---------------------------------------------------------------

namespace {

struct Captured {
  std::vector<std::pair<RunCursor, std::vector<StateArray>>> checkpoints;
};

/// Runs the job, checkpointing after every segment into `captured` (when given), or resuming
/// from `resume`; the hits go to `hits`.
RunResult run_with(const Job& job, Captured* captured, const Checkpoint* resume, HitStore& hits,
                   std::size_t memory_limit = 0) {
  RunOptions opt;
  opt.quiet = true;
  opt.threads = 2;
  opt.checkpoint_every = 0;
  opt.memory_limit = memory_limit;
  auto engine = build_engine(job, opt);
  hits.dim = engine->dim();
  Checkpointing cp;
  cp.resume = resume;
  if (captured)
    cp.save = [captured](const RunCursor& c, std::vector<StateArray>&& a) {
      captured->checkpoints.emplace_back(c, std::move(a));
    };
  return run_ensemble(
      job, opt, *engine, [&](const HitBlock& b) { hits.append(b); }, cp);
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// A run resumed from every one of its checkpoints ends exactly where the uninterrupted run does:
/// final data, series and the hits drained after the checkpoint, bit for bit.
/// With limits, the checkpointed run and the resumed ones run in chunks under them.
void expect_resume_exact(const std::string& text, std::size_t limit_before = 0,
                         std::size_t limit_after = 0) {
  const Job job = parse_job(text);
  HitStore ref_hits;
  Captured captured;
  const RunResult ref = run_with(job, &captured, nullptr, ref_hits, limit_before);
  const std::int64_t segments = ref.segments;
  ASSERT_EQ(std::int64_t(captured.checkpoints.size()), segments - 1)
      << "a checkpoint after every segment but the last";
  for (const auto& [cursor, arrays] : captured.checkpoints) {
    SCOPED_TRACE("resumed at step " + std::to_string(cursor.step));
    Checkpoint c;
    c.trajectories = job.ensemble.count;
    c.cursor = cursor;
    c.arrays = arrays;
    HitStore hits;
    const RunResult r = run_with(job, nullptr, &c, hits, limit_after);
    EXPECT_EQ(r.segments, ref.segments);
    if (limit_before == limit_after) {
      EXPECT_EQ(r.launches, ref.launches);
    }
    EXPECT_EQ(r.hits, ref.hits);
    EXPECT_EQ(r.resumed_at, std::vector<std::int64_t>{cursor.step});
    EXPECT_TRUE(same_bits(r.final.state, ref.final.state));
    EXPECT_TRUE(same_bits(r.final.energy0, ref.final.energy0));
    EXPECT_TRUE(same_bits(r.final.energy_error, ref.final.energy_error));
    EXPECT_TRUE(same_bits(r.final.momentum_error, ref.final.momentum_error));
    EXPECT_TRUE(same_bits(r.final.newton_residual, ref.final.newton_residual));
    EXPECT_EQ(r.final.step, ref.final.step);
    EXPECT_EQ(r.final.crossings, ref.final.crossings);
    EXPECT_EQ(r.final.recorded, ref.final.recorded);
    EXPECT_EQ(r.final.status, ref.final.status);
    EXPECT_TRUE(same_bits(r.final.tangent_out, ref.final.tangent_out));
    // The hits after the checkpoint are the tail of the uninterrupted run's (in the same drain
    // order when the chunks are the same).
    const auto skip = std::size_t(cursor.hits);
    ASSERT_EQ(hits.size() + skip, ref_hits.size());
    if (limit_before != limit_after) continue;
    EXPECT_TRUE(std::equal(hits.trajectory.begin(), hits.trajectory.end(),
                           ref_hits.trajectory.begin() + std::ptrdiff_t(skip)));
    const std::size_t w = std::size_t(hits.dim) + 1;
    const std::vector<double> tail(ref_hits.values.begin() + std::ptrdiff_t(skip * w),
                                   ref_hits.values.end());
    EXPECT_TRUE(same_bits(hits.values, tail));
    ASSERT_EQ(r.energy_series.size(), ref.energy_series.size());
    const auto same_series = [](const StatSeries& a, const StatSeries& b) {
      if (a.size() != b.size() || a.t() != b.t()) return false;
      for (std::size_t k = 0; k < a.column_names().size(); ++k)
        if (!same_bits(a.column(k), b.column(k))) return false;
      return true;
    };
    EXPECT_TRUE(same_series(r.energy_series, ref.energy_series));
    EXPECT_TRUE(same_series(r.tangent_series, ref.tangent_series));
  }
}

}  // namespace

// SIMD lanes on the CPU, with a section, escapes and a partial last segment.
TEST(Resume, VerletSurveyContinuesBitForBit) {
  expect_resume_exact(R"({
    "model": {"name": "henon_heiles"},
    "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 3500, "segment_steps": 1000,
    "ensemble": {"section_grid": {"energy": 0.16, "axes": {"q1": [-0.4, 0.6, 9], "p1": [-0.4, 0.4, 7]}}},
    "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 20},
    "escape_radius": 0.9,
    "output": {"dir": "unused"}
  })");
}

TEST(Resume, FloatRunContinuesBitForBit) {
  expect_resume_exact(R"({
    "model": {"name": "kepler"},
    "integrator": {"name": "yoshida4", "dt": 0.01},
    "steps": 2000, "segment_steps": 700,
    "ensemble": {"states": [[1, 0, 0, 1], [1, 0, 0, 1.2], [0.5, 0, 0, 1.1]]},
    "section": {"coordinate": "q1", "value": 0.0, "direction": "up"},
    "precision": "float",
    "output": {"dir": "unused"}
  })");
}

// The Newton residuals, the tangent map and its accumulators (Lyapunov, MEGNO) carry over.
TEST(Resume, ImplicitMidpointWithTangentMapsContinuesBitForBit) {
  expect_resume_exact(R"({
    "model": {"name": "pendulum"},
    "integrator": {"name": "midpoint", "dt": 0.05},
    "steps": 1200, "segment_steps": 400,
    "ensemble": {"box": {"counts": [5, 3], "lo": [-2.5, -1.0], "hi": [2.5, 1.0]}},
    "diagnostics": {"tangent": true},
    "output": {"dir": "unused"}
  })");
}

// RATTLE on a constrained model, and the Lie-group rigid body with its momentum maps.
TEST(Resume, ConstrainedAndLieGroupRunsContinueBitForBit) {
  expect_resume_exact(R"({
    "model": {"name": "pendulum_cartesian"},
    "integrator": {"name": "rattle", "dt": 0.01},
    "steps": 900, "segment_steps": 300,
    "ensemble": {"states": [[1, 0, 0, 0.5], [0, -1, 1.0, 0]]},
    "output": {"dir": "unused"}
  })");
  expect_resume_exact(R"({
    "model": {"name": "rigid_body_so3"},
    "integrator": {"name": "variational_euler_so3", "dt": 0.1},
    "steps": 1000, "segment_steps": 300,
    "ensemble": {"states": [[1, 0, 0, 0, 1, 0, 0, 0, 1, 0.4535961214255773, 0, 0.8912073600614354]]},
    "output": {"dir": "unused"}
  })");
}

// A model from formulas, compiled into a plugin on first use, continues the same way: its
// section, momentum map and tangent map included (the resumed run loads the cached plugin).
TEST(Resume, FormulaModelContinuesBitForBit) {
  ::setenv("VIGOR_CACHE_DIR", VIGOR_TEST_FORMULA_CACHE, 1);
  expect_resume_exact(R"json({
    "model": {"formula": {"name": "resume_test_kepler", "dof": 2,
                          "potential": "-mu/sqrt(q0^2 + q1^2)",
                          "momentum_maps": {"L": "q0*p1 - q1*p0"}},
              "params": {"mu": 1.0}},
    "integrator": {"name": "verlet", "dt": 0.01},
    "steps": 2000, "segment_steps": 700,
    "ensemble": {"states": [[1, 0, 0, 1], [1, 0, 0, 1.2], [0.5, 0, 0, 1.1]]},
    "section": {"coordinate": "q1", "value": 0.0, "direction": "up"},
    "diagnostics": {"tangent": true},
    "output": {"dir": "unused"}
  })json");
}

// integrator.compensated: the round-off terms are in the checkpoint (state_lo), so a resumed run
// carries on with them; without them it would part from the uninterrupted run in the last bits.
TEST(Resume, CompensatedRunContinuesBitForBit) {
  ::setenv("VIGOR_CACHE_DIR", VIGOR_TEST_FORMULA_CACHE, 1);
  expect_resume_exact(R"({
    "model": {"name": "henon_heiles"},
    "integrator": {"name": "verlet", "dt": 0.01, "compensated": true},
    "steps": 3500, "segment_steps": 1000,
    "ensemble": {"section_grid": {"energy": 0.12, "axes": {"q1": [-0.3, 0.5, 5], "p1": [-0.3, 0.3, 5]}}},
    "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 20},
    "output": {"dir": "unused"}
  })");
}

TEST(Resume, ArraysOfAnotherEnsembleSizeAreRefused) {
  const Job job = parse_job(R"({
    "model": {"name": "pendulum"},
    "integrator": {"name": "verlet", "dt": 0.05},
    "steps": 100,
    "ensemble": {"states": [[0.1, 0], [0.2, 0]]},
    "output": {"dir": "unused"}
  })");
  RunOptions opt;
  auto engine = build_engine(job, opt);
  engine->upload(job.ensemble.state, 2);
  auto arrays = engine->save_state();
  auto other = build_engine(job, opt);
  other->upload(std::vector<double>{0.1, 0.2, 0.3, 0, 0, 0}, 3);
  try {
    other->restore_state(arrays);
    ADD_FAILURE() << "restored the arrays of 2 trajectories into 3";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint array state holds 32 bytes"),
              std::string::npos)
        << e.what();
  }
  engine->restore_state(engine->save_state());  // its own arrays: fine
  // One missing: refused, unless it is one this run leaves empty (a checkpoint written before
  // the array existed, such as state_lo, the round-off terms of integrator.compensated).
  auto without = [&](const std::string& name) {
    auto v = engine->save_state();
    v.erase(std::remove_if(v.begin(), v.end(), [&](const StateArray& a) { return a.name == name; }),
            v.end());
    return v;
  };
  EXPECT_THROW(engine->restore_state(without("energy_error")), std::runtime_error);
  EXPECT_NO_THROW(engine->restore_state(without("state_lo")));
}

// A resumed run reopens its spill and cuts off what was spilled after the checkpoint.
TEST(Resume, SpillReopenKeepsTheCheckpointedRecordsOnly) {
  TempDir tmp("spill");
  const fs::path file = tmp.path / "hits.spill";
  HitBlock b;
  b.dim = 2;
  for (std::int64_t k = 0; k < 5; ++k) {
    b.trajectory.push_back(k % 3);
    b.values.insert(b.values.end(), {0.5 * double(k), double(k), -double(k)});
  }
  {
    HitSpill spill(file, 2, 3);
    spill.append(b);
    spill.sync();
    EXPECT_EQ(fs::file_size(file), 5 * spill.record_bytes());
  }
  // remove() on destruction: write it again and leave it as a killed run would.
  {
    HitSpill spill(file, 2, 3);
    spill.append(b);
    spill.sync();
    fs::copy_file(file, tmp.path / "kept");
  }
  fs::rename(tmp.path / "kept", file);
  HitSpill reopened(file, 2, 3, 3);
  EXPECT_EQ(reopened.total(), 3);
  EXPECT_EQ(reopened.counts(), (std::vector<std::int64_t>{1, 1, 1}));
  reopened.append(b);
  reopened.finish();
  EXPECT_EQ(reopened.total(), 8);
  EXPECT_EQ(reopened.counts(), (std::vector<std::int64_t>{3, 3, 2}));
  std::vector<std::int64_t> order;
  for_each_spill_block(reopened, 2, [&](const HitBlock& blk) {
    EXPECT_LE(blk.trajectory.size(), 2u);
    order.insert(order.end(), blk.trajectory.begin(), blk.trajectory.end());
  });
  EXPECT_EQ(order, (std::vector<std::int64_t>{0, 1, 2, 0, 1, 2, 0, 1}));
  EXPECT_THROW(HitSpill(file, 2, 3, 9), std::runtime_error);  // fewer records than counted
}

// --- Chunked runs -----------------------------------------------------------------------------

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Hénon–Heiles near escape, with a section, tangent maps and escapes: the allowed points of a
// 9 x 7 grid.
const char* kChunkJob = R"({
  "model": {"name": "henon_heiles"},
  "integrator": {"name": "verlet", "dt": 0.02},
  "steps": 3000, "segment_steps": 1000,
  "ensemble": {"section_grid": {"energy": 0.16, "axes": {"q1": [-0.4, 0.6, 9], "p1": [-0.4, 0.4, 7]}}},
  "section": {"coordinate": "q0", "value": 0.0, "direction": "up", "max_crossings": 30},
  "escape_radius": 0.9,
  "diagnostics": {"tangent": true},
  "output": {"dir": "OUT"}
})";

}  // namespace

// Under a memory limit the ensemble runs in chunks that take turns on the engine; every output
// equals the unchunked run's (sections.csv is sorted by trajectory), and summary.json says how it
// was split.
TEST(Chunks, ChunkedRunWritesTheUnchunkedRunsResults) {
  TempDir tmp("chunks");
  std::string text = kChunkJob;
  const auto with_out = [&](const fs::path& out) {
    std::string t = text;
    t.replace(t.find("OUT"), 3, out.string());
    return parse_job(t);
  };
  RunOptions opt;
  opt.quiet = true;
  const auto plain = run_job(with_out(tmp.path / "plain"), opt, false);
  EXPECT_FALSE(plain.contains("chunks"));
  for (const std::size_t limit : {std::size_t(12000), std::size_t(20000)}) {
    SCOPED_TRACE("memory limit " + std::to_string(limit));
    opt.memory_limit = limit;
    const fs::path out = tmp.path / ("chunked-" + std::to_string(limit));
    const auto chunked = run_job(with_out(out), opt, false);
    ASSERT_TRUE(chunked.contains("chunks"));
    EXPECT_GT(chunked["chunks"].get<int>(), 1);
    EXPECT_EQ(chunked["memory_limit_bytes"], limit);
    const auto per = chunked["chunk_trajectories"].get<std::int64_t>();
    const auto n = chunked["trajectories"].get<std::int64_t>();
    EXPECT_EQ(chunked["chunks"].get<std::int64_t>(), (n + per - 1) / per);
    for (const char* f : {"final.csv", "sections.csv", "energy_series.csv", "tangent_series.csv"})
      EXPECT_EQ(read_text(out / f), read_text(tmp.path / "plain" / f)) << f;
    for (const char* k : {"crossings_total", "crossings_recorded", "energy_error_max",
                          "status_counts", "tangent", "trajectory_steps"})
      EXPECT_EQ(chunked[k], plain[k]) << k;
    // Nothing of the chunk store is left in the results.
    EXPECT_FALSE(fs::exists(out / "chunks.bin"));
  }
  // A limit that does not hold one trajectory is a runtime error naming the sizes.
  opt.memory_limit = 100;
  try {
    run_job(with_out(tmp.path / "tiny"), opt, false);
    ADD_FAILURE() << "ran under a 100-byte limit";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not hold one trajectory"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp.path / "tiny"));
}

// A checkpoint of a chunked run holds the whole ensemble: a run without the limit (or with
// another) resumes it, and the reverse.
TEST(Chunks, CheckpointsMoveBetweenChunkedAndUnchunkedRuns) {
  std::string text = kChunkJob;
  text.replace(text.find("OUT"), 3, "unused");
  expect_resume_exact(text, 20000, 0);
  expect_resume_exact(text, 0, 30000);
  expect_resume_exact(text, 20000, 20000);
}
