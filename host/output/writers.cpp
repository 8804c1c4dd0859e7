/// @file writers.cpp
/// @brief The writers of host/output/writers.hpp.
#include "host/output/writers.hpp"

#include <cstddef>
#include <future>
#include <system_error>

#include "host/output/hdf5_results.hpp"
#include "host/output/invariants.hpp"
#include "host/output/summary.hpp"

namespace vigor::host {

namespace fs = std::filesystem;

namespace {

/// sections.csv, sorted by trajectory then crossing (always present with CSV output: header
/// only without a section, so scripts can rely on it).
class SectionsCsv final : public ResultWriter {
 public:
  void write(FinishedRun& run, const fs::path& dir) const override {
    if (run.hits)
      write_sections_csv(dir / "sections.csv", *run.hits, run.model.state_names,
                         run.float_precision(), run.threads);
  }
  bool self_contained() const override { return true; }
};

/// invariants.csv of a loop or parallelepiped ensemble, from its stroboscopic samples.
class InvariantsCsv final : public ResultWriter {
 public:
  void write(FinishedRun& run, const fs::path& dir) const override {
    if (run.hits)
      run.summary["invariants"] =
          write_invariants(dir / "invariants.csv", run.job, *run.hits, run.threads);
  }
};

/// final.csv: one row per trajectory.
class FinalCsv final : public ResultWriter {
 public:
  void write(FinishedRun& run, const fs::path& dir) const override {
    write_csv(dir / "final.csv", run.final_table, run.float_precision());
  }
  bool self_contained() const override { return true; }
};

/// energy_series.csv and, with tangent maps, tangent_series.csv.
class SeriesCsv final : public ResultWriter {
 public:
  void write(FinishedRun& run, const fs::path& dir) const override {
    run.result.energy_series.write_csv(dir / "energy_series.csv");
    if (run.job.integration.tangent)
      run.result.tangent_series.write_csv(dir / "tangent_series.csv");
    run.summary["energy_series"] = "energy_series.csv";
  }
};

/// results.h5: the initial states, the sections in drain order (blocks of at most 32 MiB, so
/// memory stays bounded whatever the number of crossings), the final table, the series and the
/// summary.
class Hdf5File final : public ResultWriter {
 public:
  void write(FinishedRun& run, const fs::path& dir) const override {
    run.summary["hdf5"] = "results.h5";
    const fs::path file = dir / "results.h5";
    std::error_code ec;
    fs::remove(file, ec);  // a partial one of an attempt killed while writing it
    const Job& job = run.job;
    Hdf5Results h5(file, run.model.state_names, job.ensemble.count, run.float_precision(),
                   run.threads);
    h5.write_table("initial",
                   initial_columns(job.ensemble.state, run.model.state_names, job.ensemble.count));
    if (run.hits)
      for_each_spill_block(*run.hits, Hdf5Results::append_records(run.hits->dim()),
                           [&](const HitBlock& b) { h5.append_sections(b); });
    h5.write_table("final", run.final_table);
    h5.write_series("energy_series", run.result.energy_series);
    if (job.integration.tangent) h5.write_series("tangent_series", run.result.tangent_series);
    h5.write_summary(run.summary);
    h5.close();
  }
};

class SummaryJson final : public ResultWriter {
 public:
  void write(FinishedRun& run, const fs::path& dir) const override {
    write_json(dir / "summary.json", run.summary);
  }
};

}  // namespace

FinishedRun::FinishedRun(const Job& j, RunResult& r, const HitSpill* h)
    : job(j), model(*find_model(j.integration.model)), result(r), hits(h) {
  summary = make_summary(j, r);  // before the final data moves into the table
  const bool implicit = !find_integrator(j.integration.integrator)->is_explicit;
  final_table = final_columns(std::move(r.final), j.integration.dt, model.state_names,
                              j.ensemble.count, !model.momentum_names.empty(), implicit);
}

std::vector<std::unique_ptr<ResultWriter>> result_writers(const Job& job) {
  std::vector<std::unique_ptr<ResultWriter>> w;
  if (job.csv) w.push_back(std::make_unique<SectionsCsv>());
  if (!job.ensemble.sampling.kind.empty()) w.push_back(std::make_unique<InvariantsCsv>());
  if (job.csv) w.push_back(std::make_unique<FinalCsv>());
  w.push_back(std::make_unique<SeriesCsv>());
  if (job.hdf5) w.push_back(std::make_unique<Hdf5File>());
  w.push_back(std::make_unique<SummaryJson>());
  return w;
}

nlohmann::ordered_json write_results(FinishedRun& run, const fs::path& dir) {
  const auto writers = result_writers(run.job);
  std::vector<const ResultWriter*> beside, in_turn;
  for (const auto& w : writers) (w->self_contained() ? beside : in_turn).push_back(w.get());
  // A failure on either thread fails the run: the future rethrows it, and if this thread throws
  // first, the future's destructor still waits for the second thread before the run unwinds.
  std::future<void> second;
  if (run.threads == 1)
    in_turn.insert(in_turn.begin(), beside.begin(), beside.end());
  else if (!beside.empty())
    second = std::async(std::launch::async, [&] {
      for (const ResultWriter* w : beside) w->write(run, dir);
    });
  for (const ResultWriter* w : in_turn) w->write(run, dir);
  if (second.valid()) second.get();
  return run.summary;
}

}  // namespace vigor::host
