/// @file series.hpp
/// @brief Ensemble statistics (max, median, 99th percentile) and their per-segment time series:
/// energy_series.csv, tangent_series.csv and the matching HDF5 groups.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace vigor::host {

/// Max, median and 99th percentile (nearest rank) over the finite entries; NaN entries counted.
/// All three are NaN when no entry is finite.
struct Stats {
  double max = 0.0, median = 0.0, p99 = 0.0;
  std::int64_t finite = 0, nan = 0;
};

/// Statistics of `values` (taken by value: reordered by the quantile search), of |x| when
/// `magnitude` is set.
Stats summarize(std::vector<double> values, bool magnitude = false);

/// One row of statistics per sample time: t = 0 (segment 0, the initial state), then the end of
/// every segment. Columns are <name>_max, <name>_median, <name>_p99 per quantity.
class StatSeries {
 public:
  explicit StatSeries(std::vector<std::string> names) : names_(std::move(names)) {}
  /// `row` holds one Stats per quantity, in the order of the names.
  void add(double t, std::vector<Stats> row);
  /// segment,t,<name>_max,<name>_median,<name>_p99 … ; throws std::runtime_error on I/O errors.
  void write_csv(const std::filesystem::path& file) const;
  std::size_t size() const { return t_.size(); }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<double>& t() const { return t_; }
  /// One Stats per quantity per row (checkpoints store them bit for bit).
  const std::vector<std::vector<Stats>>& rows() const { return rows_; }
  /// The CSV's column names after segment and t, and each column's values, in CSV order.
  std::vector<std::string> column_names() const;
  std::vector<double> column(std::size_t index) const;

 private:
  std::vector<std::string> names_;
  std::vector<double> t_;
  std::vector<std::vector<Stats>> rows_;
};

}  // namespace vigor::host
