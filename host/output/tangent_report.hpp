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
#include <vector>

#include <nlohmann/json.hpp>

#include "host/output/series.hpp"

namespace vigor::host {

/// final.csv / summary names of the kernels::TangentOut slots, in slot order.
inline constexpr std::array<const char*, 7> kTangentColumns{{"symplectic_defect",
                                                             "symplectic_defect_rel", "det_error",
                                                             "lyapunov", "megno", "sali", "gali2"}};

/// Statistics of slot `slot` of a tangent_out array over n trajectories. Magnitudes for the
/// defects and det_error (their sign carries no meaning), values for the indicators.
Stats tangent_stats(const std::vector<double>& out, std::int64_t n, int slot);

/// {"symplectic_defect": {"max", "median", "p99", "nan"}, ...} for summary.json.
nlohmann::ordered_json tangent_summary(const std::vector<double>& out, std::int64_t n);

/// The per-segment series (tangent_series.csv): statistics of every column at t = 0 and at the
/// end of each segment.
class TangentSeries : public StatSeries {
 public:
  TangentSeries();
  void add(double t, const std::vector<double>& out, std::int64_t n);
};

}  // namespace vigor::host
