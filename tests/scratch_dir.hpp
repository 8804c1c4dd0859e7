/// @file scratch_dir.hpp
/// @brief A scratch directory for tests that write files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

/// $TMPDIR/vigor-test-TAG-PID, emptied on construction (created unless `create` is false: for a
/// run's output directory, which must not exist yet) and removed with its contents at scope exit.
/// The process id keeps test binaries that ctest runs side by side apart.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& tag, bool create = true)
      : path(std::filesystem::temp_directory_path() /
             ("vigor-test-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    if (create) std::filesystem::create_directories(path);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
