/// @file make_engine.hpp
/// @brief Compile-time dispatch from an integrator name and a precision to a concrete engine.
///
/// Only the pairs the integrator supports are compiled (the job parser rejects the others first).
/// Instantiated once per model and backend (generated TUs, see CMakeLists.txt), so the build of
/// model x integrator x precision parallelises per model.
#pragma once

#include <memory>

#include "host/engine.hpp"
#include "kernels/integrators/protocol.hpp"
#include "vigor/all_integrators.hpp"

namespace vigor::host {

template <template <class, class, class> class EngineT, template <class> class ModelT>
std::unique_ptr<Engine> make_engine_for(const EngineRequest& r) {
#define VIGOR_INTEGRATOR(name, Type, header)                                              \
  if constexpr (kernels::integrator_supports<kernels::Type<double>, ModelT<double>>) {    \
    if (r.integrator == #name) {                                                          \
      if (r.precision == Precision::kFloat)                                               \
        return std::make_unique<EngineT<ModelT<float>, kernels::Type<float>, float>>(r);  \
      return std::make_unique<EngineT<ModelT<double>, kernels::Type<double>, double>>(r); \
    }                                                                                     \
  }
#include "kernels/integrators/integrators.def"
#undef VIGOR_INTEGRATOR
  return nullptr;
}

}  // namespace vigor::host
