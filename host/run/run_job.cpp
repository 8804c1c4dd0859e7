/// @file run_job.cpp
/// @brief run_job: a job from its engine to its results directory.
///
/// The engine first (a missing device must not leave directories behind), then the output
/// directory and its lock, the spill that receives the hits as they are drained, the checkpoint
/// callback, the segment loop, and the writers into the temporary directory, which is renamed
/// into place at the end. Under MPI every rank builds its own engine; rank 0 alone owns the
/// output directory and the files.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "host/output/output_dir.hpp"
#include "host/output/writers.hpp"
#include "host/run/comm.hpp"
#include "host/run/run.hpp"
#include "host/run/stop.hpp"

namespace vigor::host {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// The shell command that continues an interrupted run of `target`.
std::string resume_command(const fs::path& target) {
  return "vigor run --resume " + target.string();
}

/// Removes the scratch directory of a rank other than 0 (its parked chunks) when the run ends.
struct ScratchDir {
  fs::path path;
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

/// One job run; run() is the whole of it.
class JobRun {
 public:
  JobRun(const Job& job, const RunOptions& options, bool force, const fs::path* adopt,
         const Checkpoint* resume, ResultTables* tables)
      : job_(job),
        options_(options),
        force_(force),
        adopt_(adopt),
        resume_(resume),
        tables_(tables) {}

  nlohmann::ordered_json run() {
    together([&] { engine_ = build_engine(job_, options_); });
    together([&] { open_output(); });
    together([&] { open_spill(); });
    RunResult r = integrate();
    engine_.reset();  // device memory back before the outputs are written
    if (!comm::root()) return {};
    r.wall_seconds = (resume_ ? resume_->cursor.wall_seconds : 0.0) + seconds_since_start();
    const nlohmann::ordered_json summary = write_outputs(r);
    commit();
    return summary;
  }

 private:
  double seconds_since_start() const {
    return std::chrono::duration<double>(Clock::now() - t0_).count();
  }

  /// Rank 0: the output directory (fails before any compute if the target is unusable) and the
  /// lock that keeps a resume away while this run writes.
  void open_output() {
    if (!comm::root()) return;
    if (adopt_) {
      // The lock first: the directory of a run that is still going is not touched.
      lock_ = std::make_unique<DirLock>(*adopt_);
      out_ = std::make_unique<OutputDir>(job_.output_dir, force_, *adopt_);
      return;
    }
    out_ = std::make_unique<OutputDir>(job_.output_dir, force_);
    lock_ = std::make_unique<DirLock>(out_->temp());
    // Runs of this target killed before their first checkpoint left only a spill behind.
    for (const auto& d : remove_dead_runs(out_->target()))
      std::fprintf(stderr,
                   "vigor: note: an interrupted run of %s is kept in %s (continue it with: %s)\n",
                   out_->target().c_str(), d.c_str(), resume_command(out_->target()).c_str());
  }

  /// Rank 0: hits go to disk as they are drained, so memory holds only the per-trajectory counts.
  /// The spill feeds sections.csv, results.h5's /sections and the cloud invariants, all written
  /// at the end; a checkpoint counts its records, so a resumed run cuts off what was spilled
  /// after it.
  void open_spill() {
    const bool cloud = !job_.ensemble.sampling.kind.empty();
    if (!comm::root() || !(job_.csv || cloud || job_.hdf5)) return;
    const fs::path file = out_->temp() / "hits.spill";
    const int dim = engine_->dim();
    const std::int64_t n = job_.ensemble.count;
    spill_ = resume_ ? std::make_unique<HitSpill>(file, dim, n, resume_->spill_records)
                     : std::make_unique<HitSpill>(file, dim, n);
    if (resume_) spill_->keep();  // its checkpoint counts it
  }

  /// Where the loop parks chunks (rank 0: its temporary directory; the other ranks: the system's)
  /// and what it calls when a checkpoint is due.
  Checkpointing checkpointing() {
    Checkpointing cp;
    cp.resume = resume_;
    // (Chunks creates the directory only when the run is chunked.)
    if (comm::root()) {
      cp.scratch = out_->temp();
    } else {
      other_rank_scratch_.path = cp.scratch =
          fs::temp_directory_path() / ("vigor-chunks-" + std::to_string(::getpid()));
    }
    fingerprint_ = ensemble_fingerprint(job_.ensemble);
    char cwd_buf[4096];
    cwd_ = ::getcwd(cwd_buf, sizeof cwd_buf) ? cwd_buf : "";
    cp.save = [this](const RunCursor& cursor, std::vector<StateArray>&& arrays) {
      save_checkpoint(cursor, std::move(arrays));
    };
    return cp;
  }

  void save_checkpoint(const RunCursor& cursor, std::vector<StateArray>&& arrays) {
    Checkpoint c;
    c.job = job_.source;
    c.overrides = job_.overrides;
    // The backend `auto` chose, and the memory limit: a resume continues with the same ones.
    c.overrides.backend = engine_->backend_name();
    c.memory_limit = options_.memory_limit;
    c.cwd = cwd_;
    c.trajectories = job_.ensemble.count;
    c.dim = engine_->dim();
    c.ensemble_hash = fingerprint_;
    if (spill_) {
      spill_->sync();  // on disk before the checkpoint that counts it
      c.spill_records = spill_->total();
    }
    if (resume_) c.resumed_at = resume_->resumed_at;
    if (resume_) c.resumed_at.push_back(resume_->cursor.step);
    c.cursor = cursor;
    c.arrays = std::move(arrays);
    write_checkpoint(out_->temp(), c);
    checkpointed_ = true;
    // From now on nothing that fails may remove what the checkpoint needs.
    out_->keep();
    if (spill_) spill_->keep();
  }

  /// What a failure message adds once a checkpoint exists: where it is and how to continue.
  std::string kept_note() const {
    return checkpointed_ ? " (the last checkpoint is kept in " + out_->temp().string() +
                               "; continue with: " + resume_command(out_->target()) + ")"
                         : "";
  }

  /// The segment loop. An interruption names the checkpoint to continue from; a failure under
  /// MPI ends every rank (the others wait in a collective call), rank 0's temporary directory
  /// staying beside the target (never the target itself).
  RunResult integrate() {
    checkpointed_ = resume_ != nullptr;
    const Checkpointing cp = checkpointing();
    try {
      return run_ensemble(
          job_, options_, *engine_,
          [&](const HitBlock& b) {
            if (spill_) spill_->append(b);
          },
          cp);
    } catch (const Interrupted& e) {
      // Every rank stops at the same segment end, after the checkpoint: nobody is left waiting.
      if (!comm::root() || !checkpointed_) throw;
      throw Interrupted(e.signal(), e.step(), e.steps(),
                        "checkpoint written; continue with: " + resume_command(out_->target()));
    } catch (const std::exception& e) {
      const std::string kept = comm::root() ? kept_note() : "";
      if (!comm::distributed()) {
        if (kept.empty()) throw;
        throw std::runtime_error(e.what() + kept);
      }
      std::fprintf(stderr, "error: rank %d of %d: run failed: %s%s\n", comm::rank(), comm::size(),
                   e.what(), kept.c_str());
      comm::abort_all(kExitRuntime);
    }
  }

  /// Rank 0: every writer into the temporary directory. A write that fails here (a full disk)
  /// keeps the last checkpoint, when one was written (there is none at the end of the run):
  /// --resume integrates again from it and writes the results.
  nlohmann::ordered_json write_outputs(RunResult& r) {
    try {
      if (spill_) spill_->finish();
      FinishedRun finished(job_, r, spill_.get());
      finished.threads = options_.threads;
      finished.summary["output_dir"] = out_->target().string();
      nlohmann::ordered_json summary = write_results(finished, out_->temp());
      if (tables_) *tables_ = result_tables(finished);
      return summary;
    } catch (const std::exception& e) {
      const std::string kept = kept_note();
      if (kept.empty()) throw;
      throw std::runtime_error(e.what() + kept);
    }
  }

  /// The results are complete: the checkpoint first (a kill from here on leaves finished
  /// results, which --resume just moves into place), then the spill and the other scratch files.
  void commit() {
    std::error_code ec;
    fs::remove(out_->temp() / kCheckpointFile, ec);
    if (spill_) spill_->remove();
    OutputDir::remove_scratch(out_->temp());
    out_->commit();
  }

  const Job& job_;
  const RunOptions& options_;
  const bool force_;
  const fs::path* adopt_;
  const Checkpoint* resume_;
  ResultTables* tables_;
  const Clock::time_point t0_ = Clock::now();
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<OutputDir> out_;
  std::unique_ptr<DirLock> lock_;
  std::unique_ptr<HitSpill> spill_;
  ScratchDir other_rank_scratch_;
  std::uint64_t fingerprint_ = 0;
  std::string cwd_;
  bool checkpointed_ = false;
};

}  // namespace

namespace run_detail {

nlohmann::ordered_json run_job_in(const Job& job, const RunOptions& options, bool force,
                                  const fs::path* adopt, const Checkpoint* resume,
                                  ResultTables* tables) {
  return JobRun(job, options, force, adopt, resume, tables).run();
}

}  // namespace run_detail

nlohmann::ordered_json run_job(const Job& job, const RunOptions& options, bool force,
                               ResultTables* tables) {
  return run_detail::run_job_in(job, options, force, nullptr, nullptr, tables);
}

}  // namespace vigor::host
