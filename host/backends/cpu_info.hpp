/// @file cpu_info.hpp
/// @brief The host as the summary names it, and the memory it has available (defined in
/// host/backends/cpu_info.cpp).
#pragma once

#include <cstddef>
#include <string>

namespace vigor::host {

/// The CPU's model name from /proc/cpuinfo.
std::string cpu_model_name();
/// "<model name> (N threads)".
std::string cpu_device_name(int threads);
/// The host memory available to new allocations (MemAvailable of /proc/meminfo) in bytes; 0 when
/// unknown.
std::size_t host_available_memory();

}  // namespace vigor::host
