/// @file cpu_info.hpp
/// @brief The host as the summary names it, the threads a run uses, and the memory it has
/// available (defined in host/backends/cpu_info.cpp but for thread_count).
#pragma once

#include <omp.h>

#include <cstddef>
#include <string>

namespace vigor::host {

/// The CPU's model name from /proc/cpuinfo.
std::string cpu_model_name();
/// "<model name> (N threads)".
std::string cpu_device_name(int threads);
/// The threads a run asked for with --threads: `requested`, or OpenMP's default when it is 0.
/// Inline: the CPU engines call it, and a formula plugin's engine reaches the host only through
/// its PluginHost table (host/backends/plugin.hpp).
inline int thread_count(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }
/// The host memory available to new allocations (MemAvailable of /proc/meminfo) in bytes; 0 when
/// unknown.
std::size_t host_available_memory();

}  // namespace vigor::host
