/// @file formula_model.hpp
/// @brief A formula model as the rest of vigor sees it: a ModelInfo (host/backends/registry.hpp)
/// made from the checked spec without compiling anything — energies and state checks by the
/// interpreter, the integrators that handle it from its kind — whose CPU engine (and CUDA engine,
/// in a build with the CUDA backend) is compiled into a cached plugin (host/backends/plugin.hpp)
/// the first time a run asks for it.
#pragma once

#include <memory>
#include <string>

#include "host/backends/engine.hpp"
#include "host/backends/plugin.hpp"
#include "host/backends/registry.hpp"
#include "host/job/formula/model_spec.hpp"

namespace vigor::host::formula {

/// The ModelInfo of `spec` (not yet in the registry).
ModelInfo describe(std::shared_ptr<const ModelSpec> spec);

/// The sources of the plugin holding the engine of `spec` for `backend` (kCpu or kCuda) with the
/// run's integrator (a name of kernels/integrators/integrators.def that handles the model), in its
/// precision, with tangent-map code only when the run asks for tangent maps: the model header
/// (codegen.hpp) and one translation unit instantiating the engine (plugin_entry.hpp; plugin.cpp
/// for the C++ compiler, plugin.cu for nvcc).
PluginSource plugin_source(const ModelSpec& spec, const Integration& in, BackendKind backend);

}  // namespace vigor::host::formula
