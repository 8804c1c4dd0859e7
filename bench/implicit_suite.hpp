/// @file implicit_suite.hpp
/// @brief vigor-bench's second table: implicit and constrained integrators next to Verlet on the
/// same backend and precision (implicit_suite.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/engine.hpp"

namespace vigor_bench {

struct ImplicitSuiteOptions {
  bool quick = false;
  double target_seconds = 0.5;  ///< per measurement
  /// Timed runs per case; the fastest is reported. On a shared machine the slow outliers are
  /// other tenants' work, and the ratios to Verlet are only as steady as both of their rates.
  int repeats = 3;
  /// n points of the Hénon–Heiles E = 1/8 section, SoA (the Verlet table's ensemble).
  std::function<std::vector<double>(std::int64_t)> henon_heiles_ensemble;
};

/// Measure every case on every backend in FP64 and FP32; prints a table, returns the rows.
nlohmann::json run_implicit_suite(const std::vector<vigor::host::BackendKind>& backends,
                                  const ImplicitSuiteOptions& options);

}  // namespace vigor_bench
