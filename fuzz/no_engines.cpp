/// @file no_engines.cpp
/// @brief The fuzz build's stand-ins for the per-model CPU engine factories and the plugin loader.
///
/// host/backends/registry.cpp describes every model and refers to make_cpu_engine_<name>, which the
/// main build generates from models/models.def (one heavy engine TU per model). The fuzz targets
/// only parse job files and never build an engine, so these definitions keep the engines out of the
/// fuzz build; calling one is a bug in the harness.
#include <memory>
#include <stdexcept>

#include "host/backends/engine.hpp"
#include "host/backends/plugin.hpp"

namespace vigor::host {

#define VIGOR_MODEL(name, Type, header)                                                        \
  std::unique_ptr<Engine> make_cpu_engine_##name(const Integration&, const EngineResources&) { \
    throw std::logic_error("the fuzz build has no engines (make_cpu_engine_" #name ")");       \
  }
#include "models/models.def"
#undef VIGOR_MODEL

// A formula model's engine is compiled on first use (host/backends/plugin.cpp): never here.
LoadedPlugin load_plugin(const PluginSource& src) {
  throw std::logic_error("the fuzz build compiles no plugins (" + src.what + ")");
}

}  // namespace vigor::host
