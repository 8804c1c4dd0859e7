/// @file run.hpp
/// @brief The run (DESIGN.md §5): an ensemble through its segments on one engine (run_ensemble),
/// and a job from its engine to its results directory (run_job, resume_job).
///
/// What happens where: the segment loop (segment_loop.cpp) uploads the shard of this rank in
/// chunks, launches and drains every segment, samples the series and takes checkpoints; run_job
/// (run_job.cpp) owns the output directory, the spill of the hits, the checkpoint files and the
/// writers (host/output/writers.hpp); resume_job (resume.cpp) finds an interrupted run and hands
/// its checkpoint to run_job.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "host/backends/engine.hpp"
#include "host/job/job.hpp"
#include "host/output/hits.hpp"
#include "host/output/result_tables.hpp"
#include "host/output/run_result.hpp"
#include "host/run/checkpoint.hpp"
#include "host/run/progress.hpp"
#include "host/run/ranks.hpp"

namespace vigor::host {

struct RunOptions {
  int threads = 0;                 ///< CPU threads (0: OpenMP default)
  bool quiet = false;              ///< no progress report on stderr
  bool progress_terminal = false;  ///< report as a redrawn bar (stderr is a terminal)
  /// Seconds between checkpoints (taken at segment ends); 0: after every segment; < 0: only
  /// when a stop signal arrives. The default keeps at most ten minutes of work at risk.
  double checkpoint_every = 600.0;
  /// Bytes the engine's arrays may take (--memory-limit; 0: no limit but a GPU's free memory).
  /// Larger ensembles run in chunks (host/run/chunks.hpp).
  std::size_t memory_limit = 0;
  /// Called on rank 0 after every segment (a caller's own progress display); whatever it throws
  /// ends the run there, as an error of the run (the Python package stops on Ctrl-C this way).
  std::function<void(const ProgressState&)> on_segment;
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

/// What the run gives an engine: the threads, and the section-buffer budget (EngineResources'
/// default, at most an eighth of the memory limit).
EngineResources engine_resources(const RunOptions& options);

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

/// The engine first (a missing device fails before anything is created on disk), then the
/// output directory, then run_ensemble with the hits spilled to a file in the temporary
/// directory, and all outputs written atomically into job.output_dir.
/// Returns the summary; with `tables`, also every table of the results as columns (read from
/// what the writers wrote from, before the scratch files go). Throws JobError (bad output
/// location) or std::runtime_error.
nlohmann::ordered_json run_job(const Job& job, const RunOptions& options, bool force,
                               ResultTables* tables = nullptr);

/// The job's results as columns in memory and nothing in a results directory (the Python
/// package's vigor.run without out=): the drained hits go to a scratch file in the system's
/// temporary directory, as a run's go to its own, and it is removed at the end. One process
/// (no MPI distribution), no checkpoints. Throws std::runtime_error on a runtime failure.
ResultTables run_to_tables(const Job& job, const RunOptions& options);

/// `vigor run --resume OUT_DIR`: finds the interrupted run of OUT_DIR (its temporary directory
/// beside it, host/run/checkpoint.hpp), re-reads the job it stored, and continues from its last
/// checkpoint; a run that was killed after writing all its results is just moved into place.
/// The results equal an uninterrupted run's. Throws JobError("--resume", …) when there is
/// nothing (or more than one thing) to resume, or the checkpoint does not match its job.
nlohmann::ordered_json resume_job(const std::string& out_dir, const RunOptions& options,
                                  bool force);

namespace run_detail {
/// run_job, and resume_job with the directory and checkpoint of the interrupted run
/// (run_job.cpp).
nlohmann::ordered_json run_job_in(const Job& job, const RunOptions& options, bool force,
                                  const std::filesystem::path* adopt, const Checkpoint* resume,
                                  ResultTables* tables = nullptr);
}  // namespace run_detail

}  // namespace vigor::host
