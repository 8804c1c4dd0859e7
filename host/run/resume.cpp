/// @file resume.cpp
/// @brief `vigor run --resume OUT_DIR`: find an interrupted run of OUT_DIR, check its checkpoint
/// against its job, and continue it (run_job.cpp); a run killed after writing all its results is
/// just moved into place.
#include <filesystem>
#include <fstream>
#include <string>

#include "host/output/output_dir.hpp"
#include "host/run/comm.hpp"
#include "host/run/run.hpp"

namespace vigor::host {

namespace {

namespace fs = std::filesystem;

/// Absolute and without a trailing separator, as OutputDir names it ("res/" is "res").
fs::path absolute_target(const std::string& p) {
  fs::path a = fs::absolute(fs::path(p)).lexically_normal();
  return a.has_filename() ? a : a.parent_path();
}

/// The one temporary directory of an interrupted run of `target` (JobError for none or several).
fs::path find_the_run(const fs::path& target, const std::string& out_dir) {
  const auto found = find_interrupted_runs(target);
  if (found.empty())
    throw JobError("--resume", "no interrupted run of \"" + out_dir +
                                   "\" to resume (no temporary directory with a checkpoint "
                                   "beside it)");
  if (found.size() > 1) {
    std::string list;
    for (const auto& d : found) list += "\n  " + d.string();
    throw JobError("--resume", "several interrupted runs of \"" + out_dir +
                                   "\"; remove all but the one to resume:" + list);
  }
  return found.front();
}

/// The checkpoint of `dir` and its job, parsed again in the run's working directory (relative
/// paths in the job, ensemble.file and output.dir, meant what they meant at the start), checked
/// to belong together: the same target, the same initial states, a step inside the job.
Job read_checked(const fs::path& dir, const fs::path& target, Checkpoint& c) {
  try {
    c = read_checkpoint(dir);
  } catch (const std::runtime_error& e) {
    throw JobError("--resume", e.what());
  }
  std::error_code ec;
  fs::current_path(c.cwd, ec);
  if (ec)
    throw JobError("--resume", "cannot return to the run's working directory \"" + c.cwd +
                                   "\": " + ec.message());
  Job job = parse_job(c.job.dump(), c.overrides);
  if (absolute_target(job.output_dir) != target)
    throw JobError("--resume", "the checkpoint in " + dir.string() + " belongs to a run writing " +
                                   job.output_dir);
  if (job.ensemble.count != c.trajectories || ensemble_fingerprint(job.ensemble) != c.ensemble_hash)
    throw JobError("--resume",
                   "the job's initial states differ from those the checkpoint was taken from "
                   "(was ensemble.file changed?)");
  if (c.cursor.step <= 0 || c.cursor.step > job.steps)
    throw JobError("--resume", "the checkpoint is at step " + std::to_string(c.cursor.step) +
                                   ", outside the job's " + std::to_string(job.steps) + " steps");
  return job;
}

/// A run killed after its results were complete (only the final rename was missing): moved into
/// place, its summary returned.
nlohmann::ordered_json finish_complete_run(const fs::path& dir, const fs::path& target,
                                           bool force) {
  DirLock lock(dir);
  OutputDir out(target.string(), force, dir);
  nlohmann::ordered_json summary;
  {
    std::ifstream in(dir / "summary.json");
    summary = nlohmann::ordered_json::parse(in, nullptr, false);
  }
  if (summary.is_discarded())
    throw std::runtime_error("summary.json of " + dir.string() + " is unreadable");
  OutputDir::remove_scratch(dir);
  out.commit();
  return summary;
}

}  // namespace

nlohmann::ordered_json resume_job(const std::string& out_dir, const RunOptions& options,
                                  bool force) {
  if (out_dir.empty()) throw JobError("--resume", "needs the results directory of the run");
  const fs::path target = absolute_target(out_dir);
  // Every rank finds and checks the checkpoint itself (a shared file system, like the job's); a
  // rank that cannot fails them all instead of leaving the others waiting.
  fs::path dir;
  Checkpoint c;
  Job job;
  bool finished = false;
  together([&] {
    dir = find_the_run(target, out_dir);
    finished = !fs::exists(dir / kCheckpointFile);
    if (!finished) job = read_checked(dir, target, c);
  });
  if (finished) return comm::root() ? finish_complete_run(dir, target, force) : nullptr;
  // The memory limit of the interrupted run unless another is given now.
  RunOptions opt = options;
  if (opt.memory_limit == 0) opt.memory_limit = std::size_t(c.memory_limit);
  return run_detail::run_job_in(job, opt, force, &dir, &c);
}

}  // namespace vigor::host
