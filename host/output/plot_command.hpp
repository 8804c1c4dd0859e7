/// @file plot_command.hpp
/// @brief `vigor plot OUT_DIR [options]`: runs scripts/vigor_plot.py (installed as
/// share/vigor/vigor_plot.py) with a Python 3 that has matplotlib.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vigor::host {

/// The plot script: $VIGOR_PLOT_SCRIPT, else share/vigor/vigor_plot.py beside the executable's
/// bin/ (an installed vigor), else the source tree's scripts/vigor_plot.py (a build tree).
/// Empty when none exists.
std::string find_plot_script();

/// The first of $VIGOR_PYTHON, python3 on PATH, /usr/bin/python3 that imports matplotlib, numpy
/// and h5py, else the first that imports matplotlib and numpy.
std::optional<std::string> find_plot_python();

/// Runs the script on `args` (OUT_DIR and options, passed through unchanged) and returns its
/// exit code; exit 3 with a message naming what to install when the script or Python with
/// matplotlib is missing.
int plot_command(const std::vector<std::string>& args);

}  // namespace vigor::host
