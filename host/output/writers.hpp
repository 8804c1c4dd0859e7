/// @file writers.hpp
/// @brief The output formats of a results directory (DESIGN.md §4, docs/output.md), each behind one
/// small interface: the run hands a FinishedRun to every writer of the job in turn
/// (write_results). A new format is one ResultWriter here and one line in result_writers().
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/registry.hpp"
#include "host/job/job.hpp"
#include "host/output/hits.hpp"
#include "host/output/run_result.hpp"
#include "host/output/tables.hpp"

namespace vigor::host {

/// A finished run as its writers see it: the job, what the run produced, its spilled hits
/// (finished; null when the job records none), the per-trajectory table of final.csv and
/// results.h5, and the summary, which the writers complete with what they wrote. The final data
/// moves from result.final into final_table (result.final is left empty): a 10^6-trajectory run
/// would otherwise copy every per-trajectory array once more.
struct FinishedRun {
  FinishedRun(const Job& job, RunResult& result, const HitSpill* hits);

  const Job& job;
  const ModelInfo& model;
  const RunResult& result;
  const HitSpill* hits;
  std::vector<Column> final_table;
  nlohmann::ordered_json summary;
  /// The run's CPU threads (--threads; 0: OpenMP's default), which the writers keep to as well.
  int threads = 0;
  bool float_precision() const { return job.integration.precision == Precision::kFloat; }
};

/// One output format of a results directory.
class ResultWriter {
 public:
  virtual ~ResultWriter() = default;
  /// Writes this format's files into `dir` and adds what it wrote to run.summary. Throws
  /// std::runtime_error on I/O errors.
  virtual void write(FinishedRun& run, const std::filesystem::path& dir) const = 0;
  /// Whether the writer reads only the finished run's data (never run.summary) and writes only
  /// its own files: then it may run beside the others (write_results).
  virtual bool self_contained() const { return false; }
};

/// The writers of a job's outputs, in the order they run: sections.csv, invariants.csv (cloud
/// ensembles), final.csv, the series, results.h5 (output.hdf5), summary.json — last, because it
/// records what the others wrote.
std::vector<std::unique_ptr<ResultWriter>> result_writers(const Job& job);

/// Every writer of the job into `dir`; returns the completed summary. The self-contained writers
/// (the CSV tables, mostly number formatting) run in turn on a second thread, beside the others
/// here (results.h5, mostly deflate); a run of one thread (--threads 1) runs them all in turn
/// here (docs/performance.md, "Writing the results").
nlohmann::ordered_json write_results(FinishedRun& run, const std::filesystem::path& dir);

}  // namespace vigor::host
