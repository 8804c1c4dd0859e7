/// @file run.hpp
/// @brief The segmented run loop (DESIGN.md §5) and the results it returns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "host/engine.hpp"
#include "host/job.hpp"
#include "host/output.hpp"

namespace vigor::host {

struct RunOptions {
  int threads = 0;     ///< CPU threads (0: OpenMP default)
  bool quiet = false;  ///< no progress lines on stderr
};

struct RunResult {
  std::string backend;
  std::string device;
  std::int64_t segments = 0;
  std::int64_t launches = 0;
  int hit_capacity = 0;
  double wall_seconds = 0.0;
  double kernel_seconds = 0.0;
  FinalData final;
  HitStore hits;
};

/// Build the engine for the job and run every segment. Throws std::runtime_error on a runtime
/// failure (no device, device error).
RunResult run_ensemble(const Job& job, const RunOptions& options);

/// summary.json content for a finished run.
nlohmann::ordered_json make_summary(const Job& job, const RunOptions& options,
                                    const RunResult& result);

/// run_ensemble + all outputs written atomically into job.output_dir.
/// Returns the summary. Throws JobError (bad output location) or std::runtime_error.
nlohmann::ordered_json run_job(const Job& job, const RunOptions& options, bool force);

}  // namespace vigor::host
