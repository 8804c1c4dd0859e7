/// @file errors.hpp
/// @brief What vigor reports and how it exits (DESIGN.md §4): bad input is a JobError naming the
/// key path and the value, exit code 2; a runtime failure (no device, a device error, I/O) is a
/// std::runtime_error, exit code 3. Every room of host/ may include this header; it includes
/// nothing of host/.
#pragma once

#include <stdexcept>
#include <string>

namespace vigor::host {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRuntime = 3;

/// Bad input: the message starts with the key path ("integrator.dt: must be > 0, got -0.1").
class JobError : public std::runtime_error {
 public:
  JobError(const std::string& path, const std::string& what)
      : std::runtime_error(path + ": " + what), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace vigor::host
