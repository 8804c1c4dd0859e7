/// @file tables.hpp
/// @brief The CSV and JSON files of a results directory (DESIGN.md §4, docs/output.md): the
/// per-trajectory tables (final.csv, the initial states) as columns, sections.csv from the spill,
/// summary.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/engine.hpp"
#include "host/output/hits.hpp"

namespace vigor::host {

/// Memory the sections.csv writer may use for the records it sorts (beyond the counts).
inline constexpr std::size_t kSectionsSortBudget = std::size_t(1) << 30;

/// sections.csv: trajectory,crossing,t,<state names> ordered by trajectory then crossing (drain
/// order within a trajectory, which is chronological). A counting sort over the finished spill
/// file: in memory when the records fit in `memory_budget` bytes, else in passes over ranges of
/// trajectories, each reading the file once. The rows are formatted on `threads` threads (0:
/// OpenMP's default) and written in order, so the bytes do not depend on the thread count.
/// Throws std::runtime_error on I/O errors.
void write_sections_csv(const std::filesystem::path& file, const HitSpill& hits,
                        const std::vector<std::string>& state_names, bool float_precision,
                        int threads = 0, std::size_t memory_budget = kSectionsSortBudget);

/// One column of a per-trajectory table, as final.csv prints it and results.h5 stores it.
struct Column {
  enum class Kind { kReal, kInteger, kStatus };
  std::string name;
  Kind kind = Kind::kReal;
  /// A computed value kept in the run's precision (FP32 runs: printed and stored as float);
  /// otherwise exact in double (t = step dt, which the host computes).
  bool run_precision = true;
  std::vector<double> real;           ///< kReal
  std::vector<std::int64_t> integer;  ///< kInteger and kStatus (kernels status codes)
};

/// The columns of final.csv: trajectory,t,<state names>,energy_error_max,crossings,status
/// [,momentum_error_max][,newton_residual_max] — the momentum column for models with momentum
/// maps, the residual column for implicit integrators, after the contract's columns; then, when
/// f.tangent_out is not empty, the tangent-map diagnostics (host/output/tangent_report.hpp
/// kTangentColumns). The arrays of f move into the columns where a column is one of them.
std::vector<Column> final_columns(FinalData&& f, double dt,
                                  const std::vector<std::string>& state_names, std::int64_t n,
                                  bool momentum = false, bool newton = false);

/// The initial states as columns named after the state (the ensemble's SoA layout).
std::vector<Column> initial_columns(const std::vector<double>& state_soa,
                                    const std::vector<std::string>& state_names, std::int64_t n);

/// A table of equally long columns as CSV with a header line. Throws std::runtime_error on I/O
/// errors.
void write_csv(const std::filesystem::path& file, const std::vector<Column>& columns,
               bool float_precision);

void write_json(const std::filesystem::path& file, const nlohmann::ordered_json& j);

/// "ok", "non-finite", "escaped", "newton-not-converged".
const char* status_name(std::int32_t status);

}  // namespace vigor::host
