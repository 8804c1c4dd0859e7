/// @file survey_suite.hpp
/// @brief vigor-bench's survey table: what a Poincaré-section survey costs at each stage, per
/// backend and precision (survey_suite.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/engine.hpp"

namespace vigor_bench {

struct SurveySuiteOptions {
  std::vector<std::int64_t> sizes{100'000, 1'000'000, 10'000'000};
  std::int64_t steps = 10'000;
  /// Skip a size whose runs, at the pace of the previous size (all four workloads, engine and
  /// end-to-end runs, writing included), would take longer than this.
  double budget_seconds = 120.0;
  /// n points of the Hénon–Heiles E = 1/8 section, SoA (the Verlet table's ensemble).
  std::function<std::vector<double>(std::int64_t)> henon_heiles_ensemble;
  /// The Verlet table's Integration (Hénon–Heiles, h, section q0 = 0 up) in a precision.
  std::function<vigor::host::Integration(vigor::host::Precision)> integration;
  /// Where the end-to-end runs write their results directories (removed after each).
  std::filesystem::path scratch;
};

/// Measure the four survey workloads at every size on every backend in FP64 and FP32; prints a
/// table, returns the rows. A row's note starts with "WARNING" when its end-to-end run recorded
/// other crossings than its engine run (the same ensemble and steps give the same bits).
nlohmann::json run_survey_suite(const std::vector<vigor::host::BackendKind>& backends,
                                const SurveySuiteOptions& options);

}  // namespace vigor_bench
