/// @file output.hpp
/// @brief The output directory contract (DESIGN.md §4): summary.json, sections.csv, final.csv,
/// written under a temporary name beside the target and renamed into place only at the end.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/engine.hpp"
#include "host/registry.hpp"

namespace vigor::host {

/// A results directory being written. Construction checks the target and creates the temporary
/// directory (so an unwritable location fails before any compute); commit() renames it into
/// place; destruction without commit() removes the temporary directory, leaving nothing behind.
class OutputDir {
 public:
  /// Throws JobError("output.dir", …) when the target holds results and `force` is false, or when
  /// the location cannot be written.
  OutputDir(const std::string& target, bool force);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::filesystem::path& temp() const { return temp_; }
  const std::filesystem::path& target() const { return target_; }
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  bool force_ = false;
  bool committed_ = false;
};

/// All recorded hits of a run, kept in drain order and sorted by trajectory when written.
struct HitStore {
  int dim = 0;
  std::vector<std::int64_t> trajectory;
  std::vector<double> values;  ///< (1 + dim) per hit
  void append(const HitBlock& b);
  std::size_t size() const { return trajectory.size(); }
};

/// sections.csv: trajectory,crossing,t,<state names> ordered by trajectory then crossing.
void write_sections_csv(const std::filesystem::path& file, const HitStore& hits,
                        const std::vector<std::string>& state_names, std::int64_t n,
                        bool float_precision);

/// final.csv: trajectory,t,<state names>,energy_error_max,crossings,status.
void write_final_csv(const std::filesystem::path& file, const FinalData& f, double dt,
                     const std::vector<std::string>& state_names, std::int64_t n,
                     bool float_precision);

void write_json(const std::filesystem::path& file, const nlohmann::ordered_json& j);

/// "ok", "non-finite", "escaped", "newton-not-converged".
const char* status_name(std::int32_t status);

}  // namespace vigor::host
