/// @file output.hpp
/// @brief The output directory contract (DESIGN.md §4): summary.json, sections.csv, final.csv,
/// written under a temporary name beside the target and renamed into place only at the end.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/engine.hpp"
#include "host/registry.hpp"

namespace vigor::host {

/// A results directory being written. Construction checks the target and creates the temporary
/// directory (so an unwritable location fails before any compute); commit() renames it into
/// place; destruction without commit() removes the temporary directory and every parent directory
/// the constructor created, leaving nothing behind.
class OutputDir {
 public:
  /// `target` is normalised lexically ("res/" and "res/." are "res"). Throws
  /// JobError("output.dir", …) when the target is not a directory, holds results and `force` is
  /// false, or when the location cannot be written.
  OutputDir(const std::string& target, bool force);
  /// Adopts `temp`, the temporary directory of an interrupted run of `target` (vigor run
  /// --resume): the target is checked as above, nothing is created.
  OutputDir(const std::string& target, bool force, std::filesystem::path temp);
  /// Files a run keeps in its temporary directory while it goes (the spill, chunk store,
  /// checkpoint and lock): removed from it just before the rename into place.
  static void remove_scratch(const std::filesystem::path& temp) noexcept;
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  const std::filesystem::path& temp() const { return temp_; }
  const std::filesystem::path& target() const { return target_; }
  /// Renames the results into place. Without `force`, a target that appeared (or was filled)
  /// since construction is left untouched and std::runtime_error names it.
  void commit();
  /// Leave the temporary directory in place on destruction (it holds a checkpoint); an adopted
  /// directory always is.
  void keep() { kept_ = true; }

 private:
  void check_target(const std::string& target);
  void discard() noexcept;

  std::filesystem::path target_;
  std::filesystem::path temp_;
  std::vector<std::filesystem::path> created_;  ///< parents created here, deepest first
  bool force_ = false;
  bool target_was_empty_dir_ = false;  ///< without force: the target was an empty directory
  bool committed_ = false;
  bool kept_ = false;
};

/// All recorded hits of a run, kept in memory in drain order (tests and tools that drive an
/// Engine directly; the run loop spills to disk instead, see HitSpill).
struct HitStore {
  int dim = 0;
  std::vector<std::int64_t> trajectory;
  std::vector<double> values;  ///< (1 + dim) per hit
  void append(const HitBlock& b);
  std::size_t size() const { return trajectory.size(); }
};

/// The hits of a run, appended to a binary file as they are drained, so that memory holds only
/// the per-trajectory counts. Records in drain order: trajectory (int64), then t and the state
/// ((1 + dim) doubles), native byte order. The file is removed by remove() or the destructor.
class HitSpill {
 public:
  /// Creates `file`; throws std::runtime_error when it cannot be written.
  HitSpill(std::filesystem::path file, int dim, std::int64_t n);
  /// Reopens the spill of an interrupted run, keeping its first `records` records (those its
  /// checkpoint accounts for) and cutting off the rest. Throws std::runtime_error when the file
  /// holds fewer, or a record names a trajectory outside [0, n).
  HitSpill(std::filesystem::path file, int dim, std::int64_t n, std::int64_t records);
  ~HitSpill();
  HitSpill(const HitSpill&) = delete;
  HitSpill& operator=(const HitSpill&) = delete;

  /// Appends a drained block (throws std::runtime_error on a write error or a trajectory id
  /// outside [0, n)).
  void append(const HitBlock& b);
  /// Writes everything appended so far through to the disk (fsync): a checkpoint may count it.
  void sync();
  /// Flushes and closes the file for reading; append() is not allowed afterwards.
  void finish();
  /// Closes and deletes the file.
  void remove() noexcept;
  /// A checkpoint counts the file: destruction (an error unwinding the run) leaves it on disk.
  void keep() { kept_ = true; }

  int dim() const { return dim_; }
  std::int64_t trajectories() const { return n_; }
  std::int64_t total() const { return total_; }
  const std::vector<std::int64_t>& counts() const { return counts_; }
  const std::filesystem::path& file() const { return file_; }
  std::size_t record_bytes() const { return sizeof(std::int64_t) + std::size_t(dim_ + 1) * 8; }

 private:
  void flush();

  std::filesystem::path file_;
  int dim_ = 0;
  std::int64_t n_ = 0;
  std::int64_t total_ = 0;
  std::vector<std::int64_t> counts_;
  std::FILE* f_ = nullptr;
  std::vector<char> buf_;
  bool kept_ = false;
};

/// Hands the records of a finished spill to f in file (drain) order, as blocks of at most
/// `max_records` hits. Throws std::runtime_error on I/O errors.
void for_each_spill_block(const HitSpill& hits, std::size_t max_records,
                          const std::function<void(const HitBlock&)>& f);

/// Memory the sections.csv writer may use for the records it sorts (beyond the counts).
inline constexpr std::size_t kSectionsSortBudget = std::size_t(1) << 30;

/// sections.csv: trajectory,crossing,t,<state names> ordered by trajectory then crossing (drain
/// order within a trajectory, which is chronological). A counting sort over the finished spill
/// file: in memory when the records fit in `memory_budget` bytes, else in passes over ranges of
/// trajectories, each reading the file once. Throws std::runtime_error on I/O errors.
void write_sections_csv(const std::filesystem::path& file, const HitSpill& hits,
                        const std::vector<std::string>& state_names, bool float_precision,
                        std::size_t memory_budget = kSectionsSortBudget);

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
/// f.tangent_out is not empty, the tangent-map diagnostics (host/tangent_report.hpp
/// kTangentColumns).
std::vector<Column> final_columns(const FinalData& f, double dt,
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
