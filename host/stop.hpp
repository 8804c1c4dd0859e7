/// @file stop.hpp
/// @brief SIGINT and SIGTERM end a run cleanly between segments: the segment in progress
/// finishes, the temporary results directory is removed, and vigor exits 3 saying where it
/// stopped (instead of dying mid-write and leaving the temporary directory behind).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace vigor::host {

/// Thrown by the run loop at the first segment end after a stop signal.
class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signal, std::int64_t step, std::int64_t steps);
  int signal() const { return signal_; }

 private:
  int signal_;
};

/// Route SIGINT and SIGTERM to stop_requested() (the CLI's run command does this).
void install_stop_handlers();
/// The signal received since install_stop_handlers(), or 0.
int stop_requested();

}  // namespace vigor::host
