/// @file output_dir.hpp
/// @brief The results directory (DESIGN.md §4): written under a temporary name beside the target
/// and renamed into place only at the end, so a failed run leaves no half-written output.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

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

}  // namespace vigor::host
