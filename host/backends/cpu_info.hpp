/// @file cpu_info.hpp
/// @brief The CPU as the summary names it (defined in host/backends/cpu_info.cpp).
#pragma once

#include <string>

namespace vigor::host {

/// The CPU's model name from /proc/cpuinfo.
std::string cpu_model_name();
/// "<model name> (N threads)".
std::string cpu_device_name(int threads);

}  // namespace vigor::host
