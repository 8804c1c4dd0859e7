/// @file cli.hpp
/// @brief `vigor run | validate | list | plot` (DESIGN.md §4): argument parsing, and the exit codes
/// of host/errors.hpp for what each command throws.
#pragma once

#include "host/errors.hpp"

namespace vigor::host {

int cli_main(int argc, char** argv);

}  // namespace vigor::host
