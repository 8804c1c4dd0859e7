/// @file run_tables.cpp
/// @brief run_to_tables: a job's results as columns in memory, with no results directory (the
/// Python package's vigor.run without out=).
///
/// The same engine, segment loop, spill and tables as run_job; only the destination differs. The
/// spill lives in a private scratch directory under the system's temporary directory (created
/// with mkdtemp, removed however the run ends), so memory holds only what the tables hold.
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "host/output/writers.hpp"
#include "host/run/run.hpp"

namespace vigor::host {

namespace {

namespace fs = std::filesystem;

/// A fresh directory of this process alone, removed with everything in it at the end of scope.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "vigor-run-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a scratch directory in " +
                               fs::temp_directory_path().string() + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

ResultTables run_to_tables(const Job& job, const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  // The engine first: a missing device fails before anything is created.
  std::unique_ptr<Engine> engine = build_engine(job, options);
  const ScratchDir scratch;
  std::unique_ptr<HitSpill> spill;
  if (job.has_section() || !job.ensemble.sampling.kind.empty())
    spill = std::make_unique<HitSpill>(scratch.path() / "hits.spill", engine->dim(),
                                       job.ensemble.count);
  Checkpointing parking;
  parking.scratch = scratch.path();  // where a chunked run parks its chunks
  RunResult result = run_ensemble(
      job, options, *engine,
      [&](const HitBlock& b) {
        if (spill) spill->append(b);
      },
      parking);
  engine.reset();
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (spill) spill->finish();
  FinishedRun finished(job, result, spill.get());
  return result_tables(finished);
}

}  // namespace vigor::host
