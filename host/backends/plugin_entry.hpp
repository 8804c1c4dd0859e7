/// @file plugin_entry.hpp
/// @brief The one translation unit of a plugin (host/backends/plugin.hpp) includes this header and
/// names its engine with VIGOR_PLUGIN_ENGINE(Model, Integrator, Real): the engine of one model,
/// one integrator and one precision, the same engine template the built-in models instantiate —
/// the CPU engine when the C++ compiler compiles it (plugin.cpp), the CUDA engine when nvcc does
/// (plugin.cu).
///
/// The engine's code calls functions that live in the vigor program (the test hooks, the CPU's
/// name, the GPU of this process); they are defined here to call the program's own through the
/// PluginHost it passes, so a plugin needs no symbol of the program and loads into any program
/// built from this vigor (the command line, the tests, the Python module). Everything else in the
/// plugin is hidden (-fvisibility=hidden): only the entry is exported.
#pragma once

#if defined(__CUDACC__)
#include "host/backends/cuda_engine.cuh"
#else
#include "host/backends/cpu_engine.hpp"
#endif
#include "host/backends/cpu_info.hpp"
#include "host/backends/plugin.hpp"
#include "host/backends/test_hooks.hpp"

namespace vigor::host {

namespace plugin_detail {
inline const PluginHost* g_host = nullptr;
}  // namespace plugin_detail

EngineTestHooks& engine_test_hooks() { return plugin_detail::g_host->test_hooks(); }
std::string cpu_device_name(int threads) { return plugin_detail::g_host->cpu_device_name(threads); }
#if defined(__CUDACC__)
int cuda_device_for_process(int node_rank) {
  return plugin_detail::g_host->cuda_device_for_process(node_rank);
}
#endif

namespace plugin_detail {

#if defined(__CUDACC__)
template <class M, class I, class Real>
using PluginEngine = CudaEngine<M, I, Real>;
inline bool host_serves(const PluginHost& host) { return host.cuda_device_for_process != nullptr; }
#else
template <class M, class I, class Real>
using PluginEngine = CpuEngine<M, I, Real>;
inline bool host_serves(const PluginHost&) { return true; }
#endif

template <class M, class I, class Real>
std::unique_ptr<Engine> make_engine(const Integration& s, const EngineResources& r) {
  if (s.integrator != I::kName) return nullptr;
  if (s.compensated != kernels::integrator_compensated<I>) return nullptr;
  if ((s.precision == Precision::kFloat) != std::is_same_v<Real, float>) return nullptr;
  return std::make_unique<PluginEngine<M, I, Real>>(s, r);
}

template <class M, class I, class Real>
EngineFactory entry(const PluginHost& host) {
  if (host.abi != kPluginAbi || !host.test_hooks || !host.cpu_device_name || !host_serves(host))
    return nullptr;
  g_host = &host;
  return &make_engine<M, I, Real>;
}

}  // namespace plugin_detail

}  // namespace vigor::host

/// The plugin's entry, for model template ModelT, integrator template IntegratorT and precision
/// RealT (float or double).
#define VIGOR_PLUGIN_ENGINE(ModelT, IntegratorT, RealT)                                            \
  extern "C" __attribute__((visibility("default"))) vigor::host::EngineFactory vigor_plugin_entry( \
      const vigor::host::PluginHost& host) {                                                       \
    return vigor::host::plugin_detail::entry<ModelT<RealT>, IntegratorT<RealT>, RealT>(host);      \
  }
