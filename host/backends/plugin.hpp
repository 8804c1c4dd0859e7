/// @file plugin.hpp
/// @brief Engines compiled at run time: a model's source (generated from a job's formulas,
/// host/job/formula/) compiled with the compiler and flags this vigor was built with (the C++
/// compiler for CPU engines, nvcc for CUDA engines) into a shared library, cached on disk, loaded
/// with dlopen, and asked for its engine factory.
///
/// The cache: one directory per plugin under plugin_cache_dir(), named by a hash of everything
/// that determines the binary (the sources, the compiler and its flags — the GPU architectures
/// among them —, vigor's version, the plugin ABI, and the size and time of every header of vigor
/// it may include). A plugin is built in a directory of its own and renamed into place when
/// complete, so concurrent runs (two processes, MPI ranks) never see half a plugin: the first
/// rename wins and the others load the winner's. An entry that does not load (a damaged file, an
/// ABI from another build) is removed and built again, never used.
#pragma once

#include <string>

#include "host/backends/engine.hpp"
#include "host/backends/test_hooks.hpp"

namespace vigor::host {

/// Bumped whenever what crosses the plugin boundary changes (PluginHost, the entry's signature).
inline constexpr int kPluginAbi = 3;

/// What the host lends a plugin: the out-of-line functions its engine calls.
struct PluginHost {
  int abi = kPluginAbi;
  EngineTestHooks& (*test_hooks)() = nullptr;
  std::string (*cpu_device_name)(int threads) = nullptr;
  /// The GPU of a process (host/backends/cuda_engine.cuh); nullptr in a build without CUDA.
  int (*cuda_device_for_process)(int node_rank) = nullptr;
};

/// The entry a plugin exports (extern "C", host/backends/plugin_entry.hpp): checks the ABI and
/// returns its engine factory, or nullptr.
using PluginEntry = EngineFactory (*)(const PluginHost& host);
inline constexpr const char* kPluginEntryName = "vigor_plugin_entry";

/// A plugin's sources: files written side by side, the first compiled (it includes the others).
struct PluginSource {
  bool cuda = false;      ///< compiled by nvcc (a CUDA engine), else by the C++ compiler
  std::string main_file;  ///< e.g. plugin.cpp or plugin.cu
  std::string main_text;
  std::string header_file;  ///< e.g. model.hpp; none when empty
  std::string header_text;
  std::string what;  ///< for messages: "formula model 'name' (verlet, double)"
  /// Say on stderr, before compiling, that a run waits for the compiler (and where the result is
  /// cached); loading from the cache says nothing.
  bool announce = false;
};

/// Whether load_plugin prints the notices its sources ask for (`announce`): on by default, off
/// for `vigor run --quiet`. A process-wide verbosity, like a log level: the command line sets it
/// once, before any engine is made, wherever the engines are made from.
void set_compile_notices(bool on);

/// $VIGOR_CACHE_DIR, else $XDG_CACHE_HOME/vigor, else $HOME/.cache/vigor.
std::string plugin_cache_dir();

/// The compiler this build records for CPU plugins ($VIGOR_CXX replaces it).
std::string plugin_compiler();

/// The CUDA compiler this build records for CUDA plugins ($VIGOR_NVCC replaces it); empty in a
/// build without the CUDA backend.
std::string plugin_cuda_compiler();

/// Where a plugin is, built if needed. Throws std::runtime_error (exit 3) when no compiler runs or
/// the compilation fails, naming the compiler to install or the log kept.
struct LoadedPlugin {
  EngineFactory factory = nullptr;
  std::string path;    ///< the shared library
  bool built = false;  ///< compiled by this call (false: found in the cache)
};
LoadedPlugin load_plugin(const PluginSource& src);

}  // namespace vigor::host
