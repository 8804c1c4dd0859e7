/// @file hdf5_results.hpp
/// @brief results.h5: the binary container of a run (output.hdf5), with the content of the CSV
/// files and summary.json, for runs too large for text.
///
/// Layout (docs/output.md): groups /sections, /final, /initial, /energy_series and
/// /tangent_series hold one 1-D dataset per CSV column, named as the CSV column; the root's
/// attributes hold the provenance and the summary. The run writes the file when it completes,
/// appending /sections from its spill file in blocks (chunked, shuffled and deflated), so memory
/// stays bounded; its rows are in drain order (segment, then trajectory), which sorted by
/// (trajectory, crossing) is sections.csv. Reals are stored in the run's precision (float32 for
/// FP32 runs) except t in /final and the initial states, which the host computes in double.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/backends/engine.hpp"
#include "host/build_info.hpp"
#include "host/output/series.hpp"
#include "host/output/tables.hpp"

namespace vigor::host {

class Hdf5Results {
 public:
  /// Creates the file and the /sections datasets. Throws std::runtime_error when the build has
  /// no HDF5 or the file cannot be created. `threads` compress the chunks of /sections (0:
  /// OpenMP's default).
  Hdf5Results(const std::filesystem::path& file, const std::vector<std::string>& state_names,
              std::int64_t trajectories, bool float_precision, int threads = 0);
  ~Hdf5Results();
  Hdf5Results(const Hdf5Results&) = delete;
  Hdf5Results& operator=(const Hdf5Results&) = delete;

  /// Appends a drained block to /sections (crossing numbers counted per trajectory). Blocks of
  /// append_records(dim) records, the last one shorter, let every core compress chunks of its own.
  void append_sections(const HitBlock& block);
  /// Records per append for states of `dim` components: whole chunks of /sections, as many as
  /// 32 MiB of values hold, at least one.
  static std::size_t append_records(int dim);
  /// Writes a group of equally long columns (/final, /initial).
  void write_table(const std::string& group, const std::vector<Column>& columns);
  /// Writes a per-segment series as a group: segment, t, then the series' columns.
  void write_series(const std::string& group, const StatSeries& series);
  /// Root attributes: vigor_version, backend, device, precision, trajectories, steps, dt,
  /// wall_seconds, kernel_seconds, trajectory_steps_per_second, job and summary (JSON text).
  void write_summary(const nlohmann::ordered_json& summary);
  /// Flushes and closes the file; throws std::runtime_error on failure.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigor::host
