/// @file checkpoint.hpp
/// @brief Checkpoints of a run: everything needed to continue it after a kill, written atomically
/// into the run's temporary results directory, and `vigor run --resume` finding it again.
///
/// A checkpoint is taken between segments, after the section buffers were drained, so it holds:
/// the job as given (and the command-line overrides and working directory it was parsed with),
/// the step reached, the run loop's counters, the energy and tangent series so far, how many
/// section records the spill file held (later records are cut off on resume), a fingerprint of
/// the initial states, and every per-trajectory array of the engine (Engine::save_state) for the
/// whole ensemble in trajectory order. The trajectories' update is deterministic (no random
/// numbers are drawn after the ensemble is generated), so a resumed run computes exactly what an
/// uninterrupted one computes, bit for bit, with any number of ranks or threads.
///
/// File format (checkpoint.bin, native byte order, x86-64 / aarch64 little-endian):
///   "VIGORCKP" | u32 version | u64 length + JSON header | series | arrays | u64 FNV-1a of all
///   bytes before it. A file that is short, altered or of another version is refused with a
///   message. Written as checkpoint.bin.tmp, fsync'ed and renamed over checkpoint.bin, then the
///   directory is fsync'ed: a kill at any moment leaves the previous checkpoint or the new one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/engine.hpp"
#include "host/job/job.hpp"
#include "host/output/series.hpp"
#include "host/output/tangent_report.hpp"

namespace vigor::host {

/// Name of the checkpoint file inside the run's temporary directory.
inline constexpr const char* kCheckpointFile = "checkpoint.bin";

/// What the run loop has done up to a segment end.
struct RunCursor {
  std::int64_t step = 0;      ///< steps done (a segment end)
  std::int64_t segments = 0;  ///< segments done
  std::int64_t launches = 0;
  std::int64_t hits = 0;      ///< hits drained and handed to the sink
  double kernel_seconds = 0;  ///< compute time so far (summed over the attempts)
  double wall_seconds = 0;    ///< wall time of the attempts up to their last checkpoint
  StatSeries energy_series{{"energy_error"}};
  TangentSeries tangent_series;
};

struct Checkpoint {
  nlohmann::ordered_json job;  ///< the job as given (Job::source)
  Overrides overrides;         ///< --out, --backend, --precision of the first attempt
  std::string cwd;             ///< working directory relative paths in the job refer to
  std::int64_t trajectories = 0;
  int dim = 0;
  std::uint64_t ensemble_hash = 0;       ///< ensemble_fingerprint() of the initial states
  std::int64_t spill_records = 0;        ///< section records kept in the spill file
  std::uint64_t memory_limit = 0;        ///< --memory-limit of the run (0: none)
  std::vector<std::int64_t> resumed_at;  ///< steps at which earlier attempts were resumed
  RunCursor cursor;
  std::vector<StateArray> arrays;  ///< the whole ensemble, [slot * trajectories + i]
};

/// FNV-1a over the bytes of the initial states and their count: a resumed run must start from
/// the ensemble the checkpoint was taken from (an ensemble.file may have changed since).
std::uint64_t ensemble_fingerprint(const Ensemble& e);

/// Writes `dir`/checkpoint.bin atomically (see the file comment). Throws std::runtime_error on
/// I/O errors (a full disk), leaving any previous checkpoint in place.
void write_checkpoint(const std::filesystem::path& dir, const Checkpoint& c);

/// Reads `dir`/checkpoint.bin. Throws std::runtime_error naming the file when it is missing,
/// truncated, corrupted or of another format version.
Checkpoint read_checkpoint(const std::filesystem::path& dir);

/// The slice [begin, end) of each array of a whole-ensemble checkpoint of n trajectories: the
/// arrays of one MPI rank's shard.
std::vector<StateArray> slice_arrays(const std::vector<StateArray>& all, std::int64_t n,
                                     std::int64_t begin, std::int64_t end);

/// The temporary directories (".<name>.partial-<pid>") of unfinished runs of `target` that hold
/// a checkpoint or finished results, sorted by name.
std::vector<std::filesystem::path> find_interrupted_runs(const std::filesystem::path& target);

/// Removes the temporary directories of `target`'s runs that died before their first checkpoint
/// (no checkpoint, no results, no process holding their lock): nothing in them can be resumed.
/// Returns those that can be resumed, for a warning.
std::vector<std::filesystem::path> remove_dead_runs(const std::filesystem::path& target);

/// An exclusive lock on a run's temporary directory (flock on its ".lock" file), held while a
/// run writes there, so `--resume` cannot adopt the directory of a run that is still alive. The
/// system releases it when the process ends, however it ends.
class DirLock {
 public:
  /// Throws std::runtime_error when another process holds the lock.
  explicit DirLock(const std::filesystem::path& dir);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace vigor::host
