/// @file result_tables.cpp
/// @brief The tables of host/output/result_tables.hpp.
#include "host/output/result_tables.hpp"

#include <cstring>
#include <utility>

#include "host/output/invariants.hpp"

namespace vigor::host {

namespace {

/// The columns of sections.csv with `total` rows each.
std::vector<Column> empty_section_columns(const std::vector<std::string>& state_names,
                                          std::size_t total) {
  std::vector<Column> c;
  c.push_back({"trajectory", Column::Kind::kInteger, false, {}, std::vector<std::int64_t>(total)});
  c.push_back({"crossing", Column::Kind::kInteger, false, {}, std::vector<std::int64_t>(total)});
  c.push_back({"t", Column::Kind::kReal, true, std::vector<double>(total), {}});
  for (const auto& name : state_names)
    c.push_back({name, Column::Kind::kReal, true, std::vector<double>(total), {}});
  return c;
}

}  // namespace

std::vector<Column> section_columns(const HitSpill& hits,
                                    const std::vector<std::string>& state_names) {
  std::vector<Column> c = empty_section_columns(state_names, std::size_t(hits.total()));
  if (hits.total() == 0) return c;
  // Row of each trajectory's first record, then a cursor per trajectory.
  const auto& counts = hits.counts();
  std::vector<std::int64_t> next(counts.size());
  std::int64_t row = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    next[i] = row;
    for (std::int64_t k = 0; k < counts[i]; ++k) {
      c[0].integer[std::size_t(row + k)] = std::int64_t(i);
      c[1].integer[std::size_t(row + k)] = k;
    }
    row += counts[i];
  }
  const int w = hits.dim() + 1;  // t and the state
  SpillReader reader(hits);
  reader.for_each(hits.total(), [&](std::int64_t t, const double* v) {
    const std::size_t r = std::size_t(next[std::size_t(t)]++);
    for (int k = 0; k < w; ++k) c[std::size_t(2 + k)].real[r] = v[k];
  });
  return c;
}

std::vector<Column> series_columns(const StatSeries& series) {
  std::vector<Column> c;
  Column segment{"segment", Column::Kind::kInteger, false, {}, {}};
  for (std::size_t i = 0; i < series.size(); ++i) segment.integer.push_back(std::int64_t(i));
  c.push_back(std::move(segment));
  c.push_back({"t", Column::Kind::kReal, false, series.t(), {}});
  const std::vector<std::string> names = series.column_names();
  for (std::size_t k = 0; k < names.size(); ++k)
    c.push_back({names[k], Column::Kind::kReal, false, series.column(k), {}});
  return c;
}

ResultTables result_tables(FinishedRun& run) {
  ResultTables t;
  t.float_precision = run.float_precision();
  // As sections.csv: a cloud ensemble's stroboscopic samples are its section records.
  t.sections = run.hits ? section_columns(*run.hits, run.model.state_names)
                        : empty_section_columns(run.model.state_names, 0);
  t.final = std::move(run.final_table);
  t.energy_series = series_columns(run.result.energy_series);
  if (run.job.integration.tangent) t.tangent_series = series_columns(run.result.tangent_series);
  t.summary = run.summary;
  if (run.hits && !run.job.ensemble.sampling.kind.empty()) {
    InvariantsTable invariants = invariants_table(run.job, *run.hits, run.threads);
    t.invariants = std::move(invariants.columns);
    // As the invariants.csv writer records it (a run without files has no writer).
    if (!t.summary.contains("invariants")) t.summary["invariants"] = std::move(invariants.summary);
  }
  return t;
}

}  // namespace vigor::host
