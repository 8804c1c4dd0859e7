/// @file stop.hpp
/// @brief SIGINT and SIGTERM end a run cleanly between segments: the segment in progress
/// finishes, a checkpoint is written, and vigor exits 3 saying where it stopped and how to resume
/// (instead of dying mid-write).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace vigor::host {

/// Thrown by the run loop at the first segment end after a stop signal.
class Interrupted : public std::runtime_error {
 public:
  /// `next` says what the user can do now; by default, that the run must be started again.
  Interrupted(int signal, std::int64_t step, std::int64_t steps, const std::string& next = "");
  int signal() const { return signal_; }
  std::int64_t step() const { return step_; }
  std::int64_t steps() const { return steps_; }

 private:
  int signal_;
  std::int64_t step_, steps_;
};

/// Route SIGINT and SIGTERM to stop_requested() (the CLI's run command does this).
void install_stop_handlers();
/// The signal received since install_stop_handlers(), or 0.
int stop_requested();

}  // namespace vigor::host
