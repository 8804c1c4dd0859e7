/// @file summary.hpp
/// @brief summary.json of a finished run: the job echo, version, backend and device, precision,
/// sizes, timings and rates, crossing counts, conservation maxima and status counts
/// (DESIGN.md §4, docs/output.md). The writers add what they wrote (writers.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include "host/job/job.hpp"
#include "host/output/run_result.hpp"

namespace vigor::host {

/// The summary of a finished run of `job`.
nlohmann::ordered_json make_summary(const Job& job, const RunResult& result);

}  // namespace vigor::host
