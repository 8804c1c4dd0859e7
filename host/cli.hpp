/// @file cli.hpp
/// @brief `vigor run | validate | list` (DESIGN.md §4): argument parsing and exit codes.
#pragma once

namespace vigor::host {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRuntime = 3;

int cli_main(int argc, char** argv);

}  // namespace vigor::host
