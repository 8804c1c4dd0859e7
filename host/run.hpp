/// @file run.hpp
/// @brief The segmented run loop (DESIGN.md §5) and the results it returns.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "host/checkpoint.hpp"
#include "host/engine.hpp"
#include "host/tangent_report.hpp"
#include "host/job.hpp"
#include "host/output.hpp"

namespace vigor::host {

/// Thrown on the ranks of an MPI run that did not fail themselves when another rank did: the
/// failing rank reports the error, the others exit with its code and say nothing.
class PeerFailure : public std::runtime_error {
 public:
  explicit PeerFailure(int exit_code)
      : std::runtime_error("another rank failed"), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

struct RunOptions {
  int threads = 0;     ///< CPU threads (0: OpenMP default)
  bool quiet = false;  ///< no progress report on stderr
  bool progress_terminal = false;  ///< report as a redrawn bar (stderr is a terminal)
  /// Seconds between checkpoints (taken at segment ends); 0: after every segment; < 0: only
  /// when a stop signal arrives. The default keeps at most ten minutes of work at risk.
  double checkpoint_every = 600.0;
  /// Bytes the engine's arrays may take (--memory-limit; 0: no limit but a GPU's free memory).
  /// Larger ensembles run in chunks (host/chunks.hpp).
  std::size_t memory_limit = 0;
};

/// How run_ensemble checkpoints and resumes (run_job provides both).
struct Checkpointing {
  /// Continue from this checkpoint instead of the initial state (whole-ensemble arrays).
  const Checkpoint* resume = nullptr;
  /// Called on rank 0 when a checkpoint is due, with the loop's cursor and every engine array
  /// of the whole ensemble in trajectory order. Empty: no checkpoints.
  std::function<void(const RunCursor&, std::vector<StateArray>&&)> save;
  /// Where the chunks of a chunked run are parked (the run's temporary directory); empty: memory.
  std::filesystem::path scratch;
};

struct RunResult {
  std::string backend;
  std::string device;
  int simd_lanes = 1;  ///< trajectories per SIMD block on the CPU backend (1 on the GPU)
  std::int64_t segments = 0;
  std::int64_t launches = 0;
  int hit_capacity = 0;
  int chunks = 1;                       ///< turns the (largest) shard took on the engine per segment
  std::int64_t chunk_trajectories = 0;  ///< trajectories per chunk
  double wall_seconds = 0.0;
  double kernel_seconds = 0.0;
  std::int64_t hits = 0;  ///< hits drained (and handed to the sink) over the run
  std::vector<std::int64_t> resumed_at;  ///< steps from which the run was resumed (if ever)
  FinalData final;
  TangentSeries tangent_series;  ///< per-segment tangent statistics (diagnostics.tangent only)
  /// Per-segment statistics of each trajectory's max |H - H0| so far (energy_series.csv).
  StatSeries energy_series{{"energy_error"}};
};

/// Receives each block of hits as it is drained: trajectory order within a block, chronological
/// per trajectory across blocks.
using HitSink = std::function<void(const HitBlock&)>;

/// The engine request a job describes (model, integrator, precision, section, threads …), with
/// the section-buffer budget of `backend` (kCpu: kCpuHitBufferBytes) and of the memory limit.
EngineRequest make_request(const Job& job, const RunOptions& options,
                           BackendKind backend = BackendKind::kAuto);

/// Section-buffer bytes of a CPU engine (EngineRequest's default is sized for GPUs).
inline constexpr std::size_t kCpuHitBufferBytes = std::size_t(32) << 20;

/// Resolve the job's backend and build its engine; nothing is uploaded or written. Throws
/// std::runtime_error on a runtime failure (no device).
std::unique_ptr<Engine> build_engine(const Job& job, const RunOptions& options);

/// Upload the ensemble into an engine built by build_engine() and run every segment, handing
/// each drained block to `sink` (which may be empty). Throws std::runtime_error on a runtime
/// failure (device error, or whatever the sink throws).
RunResult run_ensemble(const Job& job, const RunOptions& options, Engine& engine,
                       const HitSink& sink, const Checkpointing& checkpointing = {});

/// build_engine + run_ensemble; the hits are appended to `hits` when it is given.
RunResult run_ensemble(const Job& job, const RunOptions& options, HitStore* hits = nullptr);

/// summary.json content for a finished run.
nlohmann::ordered_json make_summary(const Job& job, const RunOptions& options,
                                    const RunResult& result);

/// The engine first (a missing device fails before anything is created on disk), then the
/// output directory, then run_ensemble with the hits spilled to a file in the temporary
/// directory, and all outputs written atomically into job.output_dir.
/// Returns the summary. Throws JobError (bad output location) or std::runtime_error.
nlohmann::ordered_json run_job(const Job& job, const RunOptions& options, bool force);

/// `vigor run --resume OUT_DIR`: finds the interrupted run of OUT_DIR (its temporary directory
/// beside it, host/checkpoint.hpp), re-reads the job it stored, and continues from its last
/// checkpoint; a run that was killed after writing all its results is just moved into place.
/// The results equal an uninterrupted run's. Throws JobError("--resume", …) when there is
/// nothing (or more than one thing) to resume, or the checkpoint does not match its job.
nlohmann::ordered_json resume_job(const std::string& out_dir, const RunOptions& options,
                                  bool force);

}  // namespace vigor::host
