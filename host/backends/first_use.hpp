/// @file first_use.hpp
/// @brief Engines of the built-in models compiled on first use. A program-only build (CMake's
/// VIGOR_TESTING_ENGINES=OFF, what `make demo` configures) leaves the pairs of
/// models/first_use.def out of the program; the first run that asks for one compiles its engine
/// through the plugin path (host/backends/plugin.hpp): the same engine template, compiler and
/// flags as the compiled-in engines, so the same bits, cached on disk, so only the first run of a
/// pair waits for the compiler. A build for testing has no such pairs.
///
/// Compensated engines (integrator.compensated, kernels::Compensated) take the same path in every
/// build: they double the explicit schemes' engines for an option few runs set, so no build
/// compiles them ahead of time.
#pragma once

#include <memory>
#include <string>

#include "host/backends/engine.hpp"
#include "host/backends/plugin.hpp"

namespace vigor::host {

/// Where a class template of the registries is: its job name, its type (in vigor::kernels or
/// vigor::models) and its header (under kernels/integrators/ or models/), as the .def files say.
struct TemplateSource {
  const char* name;
  const char* type;
  const char* header;
};

/// The integrator of a job name (kernels/integrators/integrators.def), or nullptr.
const TemplateSource* find_integrator_source(const std::string& name);

/// The built-in model of a job name (models/models.def), or nullptr.
const TemplateSource* find_builtin_model_source(const std::string& name);

/// A plugin whose engine is the model `model_type` (declared in `model_include`) with the
/// integration's integrator, in its precision, on a resolved backend (kCpu or kCuda): the main
/// file (plugin.cpp or plugin.cu) holding the plugin entry, the two headers and the
/// VIGOR_PLUGIN_ENGINE line, its first comment naming `description`; with in.compensated the
/// integrator is kernels::Compensated of it. The caller adds a header file
/// of its own, `what` and `announce`. Throws std::invalid_argument for an unknown integrator or an
/// unresolved backend. Formula models and first-use pairs both write their plugins with it.
PluginSource engine_plugin_source(const Integration& in, BackendKind backend,
                                  const std::string& model_include, const std::string& model_type,
                                  const std::string& description);

/// Whether this build compiles the pair on first use (never in a build for testing).
bool compiled_on_first_use(const std::string& model, const std::string& integrator);

/// Whether a built-in model's integration runs on an engine compiled on first use: a pair of
/// models/first_use.def in a program-only build, or any compensated integration.
bool compiled_on_first_use(const Integration& in);

/// The plugin source of a built-in model's engine for an integration, on a resolved backend
/// (kCpu or kCuda). Throws std::invalid_argument for a model or integrator it does not know.
PluginSource builtin_engine_source(const Integration& in, BackendKind backend);

/// The engine of a built-in model's integration compiled as a plugin (loaded from the cache, or
/// compiled into it first), whether or not the program has the pair compiled in.
std::unique_ptr<Engine> make_first_use_engine(const Integration& in, const EngineResources& r,
                                              BackendKind backend);

}  // namespace vigor::host
