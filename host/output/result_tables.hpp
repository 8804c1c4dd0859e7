/// @file result_tables.hpp
/// @brief A finished run as columns in memory — the tables of its results directory (sections.csv,
/// final.csv, the series, invariants.csv) and its summary — for callers that want the values
/// rather than files (the Python package, tests).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "host/output/hits.hpp"
#include "host/output/series.hpp"
#include "host/output/tables.hpp"
#include "host/output/writers.hpp"

namespace vigor::host {

/// Every table is empty when the run has no such output (no section: no sections rows but the
/// columns; no tangent maps: no tangent_series; no cloud ensemble: no invariants).
struct ResultTables {
  std::vector<Column> sections;  ///< trajectory, crossing, t, <state names>: sections.csv
  std::vector<Column> final;     ///< final.csv's columns
  std::vector<Column> energy_series;
  std::vector<Column> tangent_series;
  std::vector<Column> invariants;
  nlohmann::ordered_json summary;
  /// FP32 run: Column::run_precision values (and the sections' t and states) are floats.
  bool float_precision = false;
};

/// sections.csv as columns: the records of a finished spill ordered by trajectory then crossing
/// (a counting sort from the per-trajectory counts; each trajectory keeps its drain order, which
/// is chronological). `t` and the states are run-precision values.
std::vector<Column> section_columns(const HitSpill& hits,
                                    const std::vector<std::string>& state_names);

/// segment, t, <name>_max, <name>_median, <name>_p99 … as in energy_series.csv.
std::vector<Column> series_columns(const StatSeries& series);

/// The tables of a finished run, whose final table is moved out (the writers are done with it);
/// `run.summary` is taken as it stands (the writers may have completed it).
ResultTables result_tables(FinishedRun& run);

}  // namespace vigor::host
