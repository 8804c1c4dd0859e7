/// @file tangent_report.hpp
/// @brief The tangent-map diagnostics as users read them: final.csv column names, ensemble
/// statistics for summary.json, and the per-segment series (tangent_series.csv).
///
/// The per-trajectory numbers come from kernels/tangent.hpp ([slot * n + i], kernels::TangentOut
/// slots). Statistics skip NaN entries (a det_error past its round-off limit, a trajectory that
/// stopped before its first step) and count them.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace vigor::host {

/// final.csv / summary names of the kernels::TangentOut slots, in slot order.
inline constexpr std::array<const char*, 7> kTangentColumns{{"symplectic_defect",
                                                             "symplectic_defect_rel", "det_error",
                                                             "lyapunov", "megno", "sali", "gali2"}};

/// Max, median and 99th percentile of |x| (det_error, lyapunov: of x itself for the median and
/// percentile of signed quantities is less useful than of magnitudes) over the finite entries.
struct Stats {
  double max = 0.0, median = 0.0, p99 = 0.0;
  std::int64_t finite = 0, nan = 0;
};

/// Statistics of slot `slot` of a tangent_out array over n trajectories. Magnitudes for the
/// defects and det_error (their sign carries no meaning), values for the indicators.
Stats tangent_stats(const std::vector<double>& out, std::int64_t n, int slot);

/// {"symplectic_defect": {"max", "median", "p99", "nan"}, ...} for summary.json.
nlohmann::ordered_json tangent_summary(const std::vector<double>& out, std::int64_t n);

/// The per-segment series: one row of statistics per segment end.
class TangentSeries {
 public:
  void add(double t, const std::vector<double>& out, std::int64_t n);
  /// segment,t then <column>_max,<column>_median,<column>_p99 per column.
  void write_csv(const std::filesystem::path& file) const;
  std::size_t size() const { return t_.size(); }

 private:
  std::vector<double> t_;
  std::vector<std::array<Stats, kTangentColumns.size()>> rows_;
};

}  // namespace vigor::host
